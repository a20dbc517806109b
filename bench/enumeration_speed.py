"""Enumeration speed: each rule set for every direction, dtype and ndim (18 requests), names included.

Usage: ``.venv/bin/python bench/enumeration_speed.py [--repeats 5] [--ruleset full ...]`` (default: every rule
set). Per rule set, prints the median wall time of ``--repeats`` runs of the 18 requests, each run fresh
(the per-direction ``tiny`` cache is cleared first, so a run pays for everything it uses), and the count.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generators.enums import DataType, Direction
from rulesets import RULESET_NAMES, RulesetError, RulesetRequest, enumerate_ruleset
from rulesets.enumerate import direction_tiny


def one_run(ruleset: str) -> tuple[float, int]:
    direction_tiny.cache_clear()
    start = time.perf_counter()
    count = 0
    for direction in Direction:
        for dtype in DataType:
            for ndim in (2, 3):
                request = RulesetRequest.build(ruleset=ruleset, direction=direction, dtype=dtype, ndim=ndim)
                count += sum(len(c.name) > 0 for c in enumerate_ruleset(request).configs)
    return time.perf_counter() - start, count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ruleset", nargs="+", default=list(RULESET_NAMES), choices=RULESET_NAMES)
    args = parser.parse_args()
    for ruleset in args.ruleset:
        try:
            runs = [one_run(ruleset) for _ in range(args.repeats)]
        except RulesetError as error:
            print(error, file=sys.stderr)
            return 2
        times = [t for t, _ in runs]
        print(
            f"{ruleset}: {runs[0][1]} instances over 3 directions x 3 dtypes x 2 ndims; "
            f"median {statistics.median(times):.3f} s "
            f"(min {min(times):.3f}, max {max(times):.3f}, {args.repeats} runs)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
