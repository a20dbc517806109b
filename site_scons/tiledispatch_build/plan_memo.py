"""The generate step's memo, ``build/<variant>/plan_<direction>.json``: a cache that can never break a build.

It remembers, under the digest of the generate node's inputs, the plan (the relative paths the generator
writes) and, once the generate action has finished, the size, mtime and SHA-256 of every file it wrote. It
is only ever a shortcut: a memo that is missing, truncated, corrupt, of another schema or of other inputs
reads as absent, and the plan is computed again. The recorded file states let the next build notice a
generated file that was deleted, truncated or edited behind SCons's back (SCons does not check a target's
own bytes), so that the generate step reruns and restores it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from generators.atomic_files import write_atomic

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class FileState(BaseModel):
    """One generated file as the generate action left it."""

    model_config = _FROZEN

    size: int
    mtime_ns: int
    sha256: str


class PlanMemo(BaseModel):
    """``key``: digest of the inputs; ``plan``: sorted relative paths; ``outputs``: their states after the
    last finished generate action (``None`` until one finished for this key)."""

    model_config = _FROZEN

    key: str
    plan: tuple[str, ...]
    outputs: Mapping[str, FileState] | None = None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def file_state(path: Path) -> FileState:
    status = path.stat()
    return FileState(size=status.st_size, mtime_ns=status.st_mtime_ns, sha256=_sha256(path))


def load_memo(path: Path) -> PlanMemo | None:
    """The memo at ``path``, or ``None`` when it is missing or unreadable in any way."""
    try:
        return PlanMemo.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, ValidationError):
        return None


def save_memo(path: Path, memo: PlanMemo) -> None:
    write_atomic(path, memo.model_dump_json() + "\n")


def record_outputs(out_dir: Path, relative_paths: Iterable[str]) -> dict[str, FileState]:
    return {relative: file_state(out_dir / relative) for relative in relative_paths}


def outputs_intact(memo: PlanMemo, out_dir: Path) -> bool:
    """Whether every planned file is as the last generate action left it (size and mtime first; the bytes
    only when those differ, so a no-op build reads almost nothing)."""
    if memo.outputs is None or set(memo.outputs) != set(memo.plan):
        return False
    for relative, recorded in memo.outputs.items():
        path = out_dir / relative
        try:
            status = path.stat()
            if status.st_size != recorded.size:
                return False
            if status.st_mtime_ns != recorded.mtime_ns and _sha256(path) != recorded.sha256:
                return False
        except OSError:
            return False
    return True
