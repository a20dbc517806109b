"""List the instances of a GPU-check log that no battery problem could run, with their reasons.

Usage: python3 bench/gpu_check/never_ran.py gpu_check.txt (a log of `gpu_check --verbose`).
Every configuration must either run or be listed with the reason it cannot on sm_90a: this is that list.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path


def never_ran(lines: list[str]) -> dict[str, set[str]]:
    ran: set[str] = set()
    reasons: dict[str, set[str]] = defaultdict(set)
    for line in lines:
        if line.startswith(("[Passed] ", "FAILED ")):
            ran.add(line.split(" ", 2)[1])
        elif line.startswith("[Not supported] "):
            name, _problem, reason = (part.strip() for part in line[len("[Not supported] ") :].split("|", 2))
            reasons[name].add(reason)
    return {name: why for name, why in sorted(reasons.items()) if name not in ran}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: never_ran.py GPU_CHECK_LOG", file=sys.stderr)
        return 2
    path = Path(argv[1])
    try:
        lines = path.read_text().splitlines()
    except OSError as error:
        print(f"never_ran.py: cannot read {path}: {error.strerror}", file=sys.stderr)
        return 2
    result = never_ran(lines)
    print(f"{len(result)} instances ran on no battery problem")
    for name, why in result.items():
        print(f"{name}: {'; '.join(sorted(why))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
