"""Content-defined chunking: size cap, determinism, and stability under one added/removed instance."""

from __future__ import annotations

import random

import pytest

from generators.chunking import chunk_names, is_natural_boundary

NAMES = sorted(
    {f"grouped_conv_fwd_fp16_nhwgc_2d_{random.Random(i).getrandbits(48):012x}" for i in range(3000)}
)


def _units(names: list[str]) -> set[tuple[str, tuple[str, ...]]]:
    return {(u.id, u.names) for u in chunk_names(names)}


def test_cap_cover_and_determinism():
    units = chunk_names(NAMES)
    assert all(1 <= len(u.names) <= 25 for u in units)
    assert [n for u in units for n in u.names] == NAMES
    assert chunk_names(NAMES) == units
    assert len({u.id for u in units}) == len(units)
    assert all(len(u.names) <= 7 for u in chunk_names(NAMES, chunk=7))


def _natural_run(names: list[str], position: int) -> tuple[int, int]:
    """[begin, end) of the run between natural boundaries that holds ``position``."""
    begin = position
    while begin > 0 and not is_natural_boundary(names[begin]):
        begin -= 1
    end = position + 1
    while end < len(names) and not is_natural_boundary(names[end]):
        end += 1
    return begin, end


@pytest.mark.parametrize("seed", range(3))
def test_one_change_touches_only_its_neighbourhood(seed):
    rng = random.Random(seed)
    before = _units(NAMES)
    changed_counts = []
    for _ in range(100):
        i = rng.randrange(len(NAMES))
        for after_names in (NAMES[:i] + NAMES[i + 1 :], sorted([*NAMES, NAMES[i] + "_new"])):
            changed = before - _units(after_names)
            changed_counts.append(len(changed))
            # Positional chunking would change every unit after position i; here only units inside the
            # natural run holding i (or the run before it, when the changed name was a boundary) change.
            begin, _ = _natural_run(NAMES, max(i - 1, 0))
            _, end = _natural_run(NAMES, min(i + 1, len(NAMES) - 1))
            window = set(NAMES[begin:end])
            assert all(set(names) <= window for _, names in changed), (i, changed)
    # The unit that held the name, plus at most one neighbour, in the overwhelming majority of cases.
    assert sum(c <= 2 for c in changed_counts) / len(changed_counts) >= 0.97
    assert max(changed_counts) <= 5


def test_positional_chunking_would_fail_this_test():
    """Guard that the property test can fail: positional units of 25 change every later unit."""

    def positional(names):
        return {tuple(names[k : k + 25]) for k in range(0, len(names), 25)}

    assert len(positional(NAMES) - positional(NAMES[1:])) == len(positional(NAMES))


def test_bad_input():
    with pytest.raises(ValueError, match="sorted, unique"):
        chunk_names(["b", "a"])
    with pytest.raises(ValueError, match="chunk 0"):
        chunk_names(["a"], chunk=0)
