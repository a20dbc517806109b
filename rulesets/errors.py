"""Errors for bad input: each carries one line that names the bad value and what is accepted.

The CLI prints ``str(error)`` and exits 2; no traceback reaches a user.
"""

from __future__ import annotations

from pathlib import Path


class RulesetError(ValueError):
    """A request that cannot be served: unknown rule set, direction, dtype, ndim, arch or legacy directory."""


class LegacyFormatError(RulesetError):
    """A legacy ``.conf`` line (or file name) that no known format explains.

    The message is ``<file>:<line>: <what is wrong>; expected <what would be understood>``.
    """

    def __init__(self, path: Path | str, line_number: int, problem: str, expected: str) -> None:
        self.path = Path(path)
        self.line_number = line_number
        self.problem = problem
        self.expected = expected
        super().__init__(f"{self.path}:{line_number}: {problem}; expected {expected}")
