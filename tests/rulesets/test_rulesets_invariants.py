"""Rule-set invariants (ck_conventions §5): full ⊇ profiler, full ⊇ tests, full-tests ⊆ full,
tiny ⊆ full-tests, >= 10 tiny configurations per direction, unique names, deterministic order and
byte-identical exports."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

import rulesets.default
import rulesets.full
import rulesets.legacy
import rulesets.selection
from generators.enums import Category, DataType, Direction
from rulesets import (
    RULESET_NAMES,
    RulesetError,
    RulesetRequest,
    RulesetResult,
    WarpTileKConvention,
    enumerate_ruleset,
)
from rulesets.full import rule_configs
from tests.conftest import REPO_ROOT

COMBOS = [(d.value, t.value, n) for d in Direction for t in DataType for n in (2, 3)]


@cache
def result(ruleset: str, direction: str, dtype: str, ndim: int) -> RulesetResult:
    return enumerate_ruleset(
        RulesetRequest.build(ruleset=ruleset, direction=direction, dtype=dtype, ndim=ndim)
    )


def names(ruleset: str, *combo: object) -> set[str]:
    return {c.name for c in result(ruleset, *combo).configs}


@pytest.mark.parametrize("combo", COMBOS, ids=lambda c: "-".join(map(str, c)))
def test_subset_invariants(combo: tuple[str, str, int]) -> None:
    full = names("full", *combo)
    assert names("profiler", *combo) <= full
    assert names("tests", *combo) <= full
    assert names("full-tests", *combo) <= full
    assert names("tiny", *combo) <= names("full-tests", *combo)


def test_full_takes_legacy_configs_the_rules_do_not_derive() -> None:
    """The §5 axes alone do not produce every legacy configuration (their waves/vectors differ): full must
    take the legacy-derived ones for full ⊇ profiler/tests to hold."""
    combo = (Direction.BWD_DATA, DataType.FP16, 2)
    derived = {c.name for c in rule_configs(*combo, WarpTileKConvention.CURRENT)}
    legacy = names("profiler", "bwd_data", "fp16", 2) | names("tests", "bwd_data", "fp16", 2)
    not_derived = legacy - derived
    assert not_derived and not_derived <= names("full", "bwd_data", "fp16", 2)


@pytest.mark.parametrize("direction", [d.value for d in Direction])
def test_tiny_per_direction(direction: str) -> None:
    tiny = [c for t in DataType for n in (2, 3) for c in result("tiny", direction, t.value, n).configs]
    assert 10 <= len(tiny) <= 12
    categories = {c.category for c in tiny}
    if direction == "fwd":
        assert Category.DEPTHWISE in categories
    if direction == "bwd_weight":
        assert Category.STREAMK in categories


@pytest.mark.parametrize("direction", [d.value for d in Direction])
def test_tiny_covers_every_dtype_ndim_and_category(direction: str) -> None:
    """Each of a direction's six (dtype, ndim) requests compiles something, and every category of the
    direction's full-tests (over all dtypes and ndims) is in its tiny."""
    siblings = [(t.value, n) for t in DataType for n in (2, 3)]
    tiny = {s: result("tiny", direction, *s).configs for s in siblings}
    assert {s for s, configs in tiny.items() if configs} == set(siblings)
    for (dtype, ndim), configs in tiny.items():
        assert all(c.dtype.value == dtype and c.ndim_spatial == ndim for c in configs)
    wanted = {c.category for s in siblings for c in result("full-tests", direction, *s).configs}
    assert {c.category for configs in tiny.values() for c in configs} == wanted


@pytest.mark.parametrize("ruleset", RULESET_NAMES)
def test_names_unique_and_sorted(ruleset: str) -> None:
    for combo in COMBOS[::5]:
        configs = result(ruleset, *combo).configs
        listed = [c.name for c in configs]
        assert listed == sorted(set(listed))


def export(ruleset: str, combo: tuple[str, str, int]) -> bytes:
    fresh = enumerate_ruleset(
        RulesetRequest.build(ruleset=ruleset, direction=combo[0], dtype=combo[1], ndim=combo[2])
    )
    items = [
        {"name": c.name, "instance_string": c.instance_string, **c.model_dump(mode="json")}
        for c in fresh.configs
    ]
    return json.dumps({"instances": items}, sort_keys=True).encode()


_EXPORT_DIGEST = """
import hashlib, sys
from tests.rulesets.test_rulesets_invariants import export
print(hashlib.sha256(export(sys.argv[1], ("bwd_weight", "fp16", 2))).hexdigest())
"""


@pytest.mark.parametrize("ruleset", ["full", "profiler", "default"])
def test_exports_byte_identical_across_runs(ruleset: str) -> None:
    """Two interpreters with different hash seeds (set and dict orders that depend on hashing would show)
    export the same bytes, and the same as this process."""
    digests = set()
    for seed in ("1", "2"):
        run = subprocess.run(
            [sys.executable, "-c", _EXPORT_DIGEST, ruleset],
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        digests.add(run.stdout.strip())
    here = hashlib.sha256(export(ruleset, ("bwd_weight", "fp16", 2))).hexdigest()
    assert digests == {here}


def test_every_full_rejection_names_a_rule() -> None:
    rejected = result("full", "fwd", "fp16", 2).rejected
    assert rejected and all(r.rule and r.message for r in rejected)
    assert "register_budget" in {r.rule for r in rejected}


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        (
            "ruleset",
            "huge",
            "unknown rule set 'huge'; accepted: tiny, default, tests, profiler, full, full-tests",
        ),
        ("direction", "bwd", "unknown direction 'bwd'; accepted: fwd, bwd_data, bwd_weight"),
        ("dtype", "fp64", "unknown dtype 'fp64'; accepted: fp16, bf16, fp32"),
        ("ndim", 1, "unknown ndim 1; accepted: 2, 3"),
        ("arch", "sm_70", "unknown arch 'sm_70'"),
    ],
)
def test_bad_request_is_one_line(field: str, value: object, expected: str) -> None:
    fields = {"ruleset": "tiny", "direction": "fwd", "dtype": "fp16", "ndim": 2, field: value}
    with pytest.raises(RulesetError) as caught:
        enumerate_ruleset(RulesetRequest.build(**fields))
    assert str(caught.value).startswith(expected) and "\n" not in str(caught.value)


def test_missing_legacy_dir_is_one_line(tmp_path: Path) -> None:
    request = RulesetRequest.build(
        ruleset="full", direction="fwd", dtype="fp16", ndim=2, legacy_dir=tmp_path / "x"
    )
    with pytest.raises(RulesetError, match="does not exist"):
        enumerate_ruleset(request)


DOC_MODULES = {
    "full": rulesets.full,
    "full-tests": rulesets.selection,
    "tiny": rulesets.selection,
    "default": rulesets.default,
    "profiler": rulesets.legacy,
    "tests": rulesets.legacy,
}


def documented_rejections(ruleset: str) -> dict[str, int]:
    """``rule`` -> count from the docstring paragraph "Arch rejections of ``<ruleset>`` on sm_90a ..."."""
    doc = DOC_MODULES[ruleset].__doc__ or ""
    start = doc.index(f"Arch rejections of ``{ruleset}`` on sm_90a")
    paragraph = doc[start:].split("\n\n")[0]
    return {rule: int(count) for rule, count in re.findall(r"``(\w+)`` (\d+)", paragraph)}


@pytest.mark.parametrize("ruleset", RULESET_NAMES)
def test_docstring_lists_the_rules_that_fire(ruleset: str) -> None:
    documented = documented_rejections(ruleset)
    if ruleset in ("full-tests", "tiny"):
        # They select from arch-filtered full: nothing of their own, and they report full's rejections.
        assert documented == {}
        for combo in COMBOS:
            assert result(ruleset, *combo).rejected == result("full", *combo).rejected
        return
    fired = Counter(r.rule for combo in COMBOS for r in result(ruleset, *combo).rejected)
    assert documented == dict(fired)
