"""Atomic file writes: the one helper every writer of the project uses (generator, build tools, CLIs, bench).

``write_atomic(path, data)`` writes a temporary file beside ``path`` and renames it over ``path``
(``os.replace``), so a reader never sees a partial file and a crash leaves either the old file or the new
one. The temporary is created with mode 0666 and the process umask applies, as for any ``open(path, "w")``
(``tempfile.mkstemp`` would make it 0600). Its name carries the writer's process id,
``.<name>.<pid>.<random>.tdtmp``, so ``remove_stale_temporaries(folder)`` can delete what a killed writer
left behind without touching the temporary of a writer that is still running.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
from pathlib import Path

TEMPORARY_SUFFIX = ".tdtmp"
_TEMPORARY_NAME = re.compile(r"^\..+\.(?P<pid>\d+)\.[0-9a-f]{8}" + re.escape(TEMPORARY_SUFFIX) + "$")


def temporary_path(path: Path) -> Path:
    """A fresh temporary name beside ``path`` that ``remove_stale_temporaries`` recognises."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMPORARY_SUFFIX}")


def write_atomic(path: Path, data: bytes | str, *, make_parents: bool = True) -> None:
    """Write ``data`` (str is UTF-8 encoded, newlines untouched) to ``path`` atomically, with the umask's
    permissions. The temporary is removed if anything fails, KeyboardInterrupt included."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if make_parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_path(path)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(payload)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_if_changed(path: Path, data: bytes | str) -> bool:
    """``write_atomic`` unless ``path`` already holds exactly ``data`` (its mtime then stays put).
    Returns whether it wrote."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if path.is_file() and path.read_bytes() == payload:
            return False
    except OSError:
        pass  # unreadable: rewrite it
    write_atomic(path, payload)
    return True


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except OSError as error:
        return error.errno == errno.EPERM
    return True


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Delete the temporaries under ``folder`` (recursively) whose writer process is gone; returns them."""
    if not folder.is_dir():
        return []
    removed = []
    for candidate in sorted(folder.rglob(f".*{TEMPORARY_SUFFIX}")):
        match = _TEMPORARY_NAME.match(candidate.name)
        if match is None or _process_alive(int(match["pid"])):
            continue
        candidate.unlink(missing_ok=True)
        removed.append(candidate)
    return removed
