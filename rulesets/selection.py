"""``full-tests`` and ``tiny``: deterministic selections from validated ``full`` (ck_conventions §5).

``full-tests``: per category (and, since a request is per dtype, per dtype) every 5th configuration in name
order (``(i + 1) % 5 == 0``), at least one per category, plus the first configuration of every (pipeline,
scheduler) pair present that the picks miss.
``tiny``: defined per direction over all dtypes and ndims: one configuration of ``full-tests`` per
(category, ndim), then round-robin over (category, ndim, dtype) groups until there are at least ``TINY_MIN``.

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
    groups: dict[tuple[int, int, int], list[AnyConfig]] = {}
    category_order = {c: i for i, c in enumerate(Category)}
    dtype_order = {d: i for i, d in enumerate(DataType)}
    for dtype in DataType:
        for ndim in (2, 3):
            for config in full_tests_of(dtype, ndim):
                key = (category_order[config.category], ndim, dtype_order[dtype])
                groups.setdefault(key, []).append(config)
    ordered = sorted(groups)
    picked: dict[str, AnyConfig] = {}
    seen_category_ndim: set[tuple[int, int]] = set()
    for key in ordered:
        if key[:2] not in seen_category_ndim:
            seen_category_ndim.add(key[:2])
            first = groups[key][0]
            picked[first.name] = first
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
