"""Shared by the fuzz-style suites (issue 11): run a command line under a time bound and judge how it ended.

Every probe must end in a correct result or in one clear line naming the bad value and exit status 2 (130 for
Ctrl-C): never a traceback, a signal, a hang (the time bound), a silent acceptance or a partial file. Random
cases come from ``random.Random(SEED)`` so a failure reproduces; each case's id carries its number.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

SEED = 20261123
TIMEOUT_S = 60
TRACEBACK_MARKERS = ("Traceback (most recent call last)", "ValidationError", "validation error for")


@dataclass(frozen=True)
class Ended:
    """How a command ended."""

    command: tuple[str, ...]
    status: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        command = " ".join(self.command)
        return f"{command!r} -> {self.status}\nstdout:\n{self.stdout[-2000:]}\nstderr:\n{self.stderr[-2000:]}"


def run_bounded(
    command: Sequence[str | Path],
    *,
    cwd: Path | None = None,
    timeout: float = TIMEOUT_S,
    env: dict[str, str] | None = None,
) -> Ended:
    """Run ``command`` with no stdin; a run past ``timeout`` is a hang and fails the test."""
    words = tuple(str(word) for word in command)
    try:
        run = subprocess.run(
            words,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"hang: {' '.join(words)!r} ran past {timeout} s")
    return Ended(words, run.returncode, run.stdout, run.stderr)


def assert_no_crash(ended: Ended) -> None:
    assert ended.status >= 0, f"killed by signal {-ended.status}: {ended.describe()}"
    for marker in TRACEBACK_MARKERS:
        assert marker not in ended.stdout + ended.stderr, f"{marker!r} printed: {ended.describe()}"


def error_lines(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if prefix in line]


def assert_one_line_error(ended: Ended, *names: str, prefix: str = "error", status: int = 2) -> str:
    """Exit ``status`` with exactly one line containing ``prefix`` that names every one of ``names``;
    returns that line."""
    assert_no_crash(ended)
    assert ended.status == status, f"expected status {status}: {ended.describe()}"
    lines = error_lines(ended.stderr, prefix)
    assert len(lines) == 1, f"expected one {prefix!r} line: {ended.describe()}"
    for name in names:
        assert name in lines[0], f"{name!r} not named in {lines[0]!r}"
    return lines[0]


def assert_result_or_one_line_error(ended: Ended, prefix: str = "error") -> None:
    """A generated probe: a correct result (status 0) or one clear error line with status 2."""
    assert_no_crash(ended)
    if ended.status == 0:
        assert not error_lines(ended.stderr, prefix), ended.describe()
        return
    assert_one_line_error(ended, prefix=prefix)
