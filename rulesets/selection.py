"""``full-tests`` and ``tiny``: deterministic selections from validated ``full`` (ck_conventions §5).

``full-tests``: per category (and, since a request is per dtype, per dtype) every 5th configuration in name
order (``(i + 1) % 5 == 0``), at least one per category, plus the first configuration of every (pipeline,
scheduler) pair present that the picks miss.
``tiny``: defined per direction over all dtypes and ndims: one configuration of ``full-tests`` per
(category, ndim), then round-robin over (category, ndim, dtype) groups until there are at least ``TINY_MIN``.
The dtype of each (category, ndim) pick rotates fp16, bf16, fp32 over the pairs in (category, ndim) order
(the next dtype present when a pair lacks it), and every (dtype, ndim) that the picks miss gets the first
configuration of its first category; so every direction's ``tiny`` holds all three dtypes in both ndims
(each of the build's six requests compiles something) and every category of the direction. Depthwise has
both ndims since 3D depthwise exists, so each direction's tiny holds a 2D and a 3D depthwise configuration.
Counts on sm_90a: fwd 10, bwd_data 10, bwd_weight 12.

Arch rejections of ``full-tests`` on sm_90a: none of its own; it selects from arch-filtered ``full``, so
its configurations all run, and its ``rejected`` are ``full``'s (listed in ``rulesets.full``).

Arch rejections of ``tiny`` on sm_90a: none of its own; it selects from arch-filtered ``full-tests``, and
its ``rejected`` are ``full``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from generators.config import AnyConfig, KernelConfig
from generators.enums import Category, DataType

EVERY = 5
TINY_MIN = 10


def full_tests(full: Sequence[AnyConfig]) -> tuple[AnyConfig, ...]:
    """Select from ``full`` (one direction, dtype and ndim, sorted by name)."""
    by_category: dict[Category, list[AnyConfig]] = {}
    for config in full:
        by_category.setdefault(config.category, []).append(config)
    picked: dict[str, AnyConfig] = {}
    for category in Category:
        members = by_category.get(category, [])
        chosen = [c for i, c in enumerate(members) if (i + 1) % EVERY == 0] or members[:1]
        picked.update((c.name, c) for c in chosen)
    pairs = {(c.pipeline, c.scheduler) for c in picked.values() if isinstance(c, KernelConfig)}
    for config in full:
        if isinstance(config, KernelConfig) and (config.pipeline, config.scheduler) not in pairs:
            pairs.add((config.pipeline, config.scheduler))
            picked[config.name] = config
    return tuple(sorted(picked.values(), key=lambda c: c.name))


def tiny(full_tests_of: Callable[[DataType, int], Sequence[AnyConfig]]) -> tuple[AnyConfig, ...]:
    """Select a direction's ``tiny`` from its ``full-tests`` per (dtype, ndim)."""
    dtypes = tuple(DataType)
    groups: dict[tuple[int, int, int], list[AnyConfig]] = {}
    category_order = {c: i for i, c in enumerate(Category)}
    for d, dtype in enumerate(dtypes):
        for ndim in (2, 3):
            for config in full_tests_of(dtype, ndim):
                groups.setdefault((category_order[config.category], ndim, d), []).append(config)
    ordered = sorted(groups)
    picked: dict[str, AnyConfig] = {}

    def take(key: tuple[int, int, int]) -> None:
        first = groups[key][0]
        picked[first.name] = first

    pairs = sorted({key[:2] for key in ordered})
    for i, pair in enumerate(pairs):
        rotation = [(i + shift) % len(dtypes) for shift in range(len(dtypes))]
        take(next((*pair, d) for d in rotation if (*pair, d) in groups))
    covered = {(c.ndim_spatial, c.dtype) for c in picked.values()}
    for ndim in (2, 3):
        for d, dtype in enumerate(dtypes):
            present = [key for key in ordered if key[1:] == (ndim, d)]
            if (ndim, dtype) not in covered and present:
                take(present[0])
    cursor = {key: 0 for key in ordered}
    while len(picked) < TINY_MIN and any(cursor[k] < len(groups[k]) for k in ordered):
        for key in ordered:
            members = groups[key]
            while cursor[key] < len(members) and members[cursor[key]].name in picked:
                cursor[key] += 1
            if cursor[key] < len(members):
                picked[members[cursor[key]].name] = members[cursor[key]]
                cursor[key] += 1
            if len(picked) >= TINY_MIN:
                break
    return tuple(sorted(picked.values(), key=lambda c: c.name))
