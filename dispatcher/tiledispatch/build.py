"""Runs the SCons build of a rule set's shared library, streaming its progress lines, and returns the
library's path. The build runs in a child process (SCons, nvcc), so nothing here touches CUDA."""

from __future__ import annotations

import collections
import contextlib
import fcntl
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .errors import BuildError

REPO_ROOT = Path(__file__).resolve().parents[2]
_DIRECTIONS = ("fwd", "bwd_data", "bwd_weight")
_DTYPES = ("fp16", "bf16", "fp32")


class BuildRequest(BaseModel):
    """What to build. ``toolchain`` ``auto`` takes the pinned CUDA wheels when this Python has them, else the
    system CUDA at ``cuda_root``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ruleset: Literal["tiny", "default", "tests", "profiler", "full", "full-tests"] = "tiny"
    arch: Literal["sm_90a", "sm_80"] = "sm_90a"
    directions: tuple[Literal["fwd", "bwd_data", "bwd_weight"], ...] = _DIRECTIONS
    dtypes: tuple[Literal["fp16", "bf16", "fp32"], ...] = _DTYPES
    ndims: tuple[Literal[2, 3], ...] = (2, 3)
    max_workers: int | None = Field(default=None, ge=1)
    toolchain: Literal["auto", "pinned", "system"] = "auto"
    cuda_root: Path = Path("/usr/local/cuda")
    repo_root: Path = REPO_ROOT

    @field_validator("directions", "dtypes", "ndims", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        if isinstance(value, str | int):
            return (value,)
        return value

    def resolved_toolchain(self) -> Literal["pinned", "system"]:
        if self.toolchain != "auto":
            return self.toolchain
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        pinned = Path(sys.prefix) / "lib" / version / "site-packages" / "nvidia" / "cu13" / "bin" / "nvcc"
        return "pinned" if pinned.is_file() else "system"

    def scons_command(self) -> list[str]:
        command = [
            sys.executable,
            "-m",
            "SCons",
            f"ruleset={self.ruleset}",
            f"arch={self.arch}",
            f"directions={','.join(self.directions)}",
            f"dtypes={','.join(self.dtypes)}",
            f"ndims={','.join(str(n) for n in self.ndims)}",
        ]
        if self.max_workers is not None:
            command.append(f"jobs={self.max_workers}")
        if self.resolved_toolchain() == "system":
            command += ["toolchain=system", f"cuda_root={self.cuda_root}"]
        return [*command, "lib"]

    @property
    def library_path(self) -> Path:
        return (
            self.repo_root
            / "build"
            / f"{self.ruleset}-{self.arch}"
            / "lib"
            / f"libtiledispatch_{self.ruleset}.so"
        )

    @property
    def lock_path(self) -> Path:
        return self.repo_root / "build" / f"{self.ruleset}-{self.arch}.lock"


@contextlib.contextmanager
def _one_build_at_a_time(lock: Path, emit: Callable[[str], None]) -> Iterator[None]:
    """Holds an exclusive lock on ``lock`` while the build runs: two builds of one variant at once (two
    processes, pytest-xdist workers) rebuild the same objects, and SCons deletes a target before it rebuilds
    it, so one build's archive step finds the other's objects gone."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            emit(f"waiting for another build of {lock.stem} to finish (lock {lock})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_build(request: BuildRequest, progress: Callable[[str], None] | None = None) -> Path:
    """Builds ``request`` (an up-to-date build compiles nothing) and returns the shared library's path.
    ``progress`` receives every output line (default: printed to stderr). Builds of one variant run one at a
    time (a lock file beside its build directory); a second waits, then finds the first's outputs up to
    date."""
    if not (request.repo_root / "SConstruct").is_file():
        raise BuildError(f"no SConstruct in {request.repo_root}; pass repo_root= the tiledispatch checkout")
    emit = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    with _one_build_at_a_time(request.lock_path, emit):
        return _run_scons(request, emit)


def _run_scons(request: BuildRequest, emit: Callable[[str], None]) -> Path:
    tail: collections.deque[str] = collections.deque(maxlen=40)
    command = request.scons_command()
    try:
        process = subprocess.Popen(
            command,
            cwd=request.repo_root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
    except OSError as error:
        raise BuildError(f"cannot start {' '.join(command)}: {error}") from None
    assert process.stdout is not None
    for line in process.stdout:
        line = line.rstrip("\n")
        tail.append(line)
        emit(line)
    status = process.wait()
    if status != 0:
        raise BuildError(f"scons failed (status {status}): {' '.join(command[3:])}\n" + "\n".join(tail))
    if not request.library_path.is_file():
        raise BuildError(f"scons succeeded but {request.library_path} is missing")
    return request.library_path
