"""Work bounds, counted rather than timed: each rule set enumerates the rule-derived space (``rule_configs``)
only as often as its definition needs, and the per-direction cache of ``tiny`` is keyed on file contents."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import rulesets.enumerate as enumerate_module
from generators.enums import DataType, Direction
from rulesets import RulesetRequest, enumerate_ruleset
from rulesets.enumerate import direction_tiny
from rulesets.full import rule_configs


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[object, ...]]]:
    """Every call of ``rule_configs`` made by ``enumerate_ruleset``, on an empty tiny cache."""
    seen: list[tuple[object, ...]] = []

    def counting(*args: object) -> object:
        seen.append(args)
        return rule_configs(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(enumerate_module, "rule_configs", counting)
    direction_tiny.cache_clear()
    yield seen
    direction_tiny.cache_clear()


def request(ruleset: str, direction: str, dtype: str, ndim: int, **extra: object) -> RulesetRequest:
    return RulesetRequest.build(ruleset=ruleset, direction=direction, dtype=dtype, ndim=ndim, **extra)


@pytest.mark.parametrize(
    ("ruleset", "expected"), [("full", 1), ("full-tests", 1), ("tiny", 6), ("default", 0)]
)
def test_one_request_enumerates_what_it_selects_from_once(
    calls: list[tuple[object, ...]], ruleset: str, expected: int
) -> None:
    enumerate_ruleset(request(ruleset, "bwd_data", "bf16", 3))
    assert len(calls) == expected
    if ruleset == "tiny":  # each (dtype, ndim) sibling of the direction exactly once
        siblings = sorted((t.value, n) for t in DataType for n in (2, 3))
        assert sorted((c[1].value, c[2]) for c in calls) == siblings


def test_all_tiny_requests_enumerate_each_sibling_once(calls: list[tuple[object, ...]]) -> None:
    for direction in Direction:
        for dtype in DataType:
            for ndim in (2, 3):
                enumerate_ruleset(request("tiny", direction.value, dtype.value, ndim))
    assert len(calls) == len(set(calls)) == 18


def test_tiny_cache_follows_legacy_file_contents(
    calls: list[tuple[object, ...]], legacy_dir: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "configs"
    shutil.copytree(legacy_dir, copy)
    tiny = request("tiny", "bwd_data", "fp16", 2, legacy_dir=copy)
    before = enumerate_ruleset(tiny)
    enumerate_ruleset(tiny)
    assert len(calls) == 6  # second call served from the cache
    conf = copy / "backward_data" / "tests" / "nhwgc_fp16.conf"
    conf.write_text(conf.read_text().splitlines()[0] + "\n")
    after = enumerate_ruleset(tiny)
    assert len(calls) == 12  # changed text: a new key, enumerated afresh
    assert len(after.skipped) < len(before.skipped)
