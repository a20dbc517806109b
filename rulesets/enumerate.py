"""``enumerate_ruleset``: one rule set for one direction, dtype and ndim, filtered by the arch's validity.

Every rule set costs at most what it selects from: ``full`` validates the rule-derived and legacy candidates
of the request once; ``full-tests`` selects from that; ``tiny``, defined per direction, validates each of the
direction's six (dtype, ndim) siblings once per call, and that per-direction work is cached on immutable
arguments (``direction_tiny``) so that the build's six requests of a direction share it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from generators.arch import ArchSpec, get_arch
from generators.config import AnyConfig
from generators.enums import DataType, Direction
from generators.validity import validate
from rulesets.default import default_configs
from rulesets.errors import RulesetError
from rulesets.full import rule_configs
from rulesets.legacy import convert_legacy_text
from rulesets.legacy_files import discover, parse_file_name, read_conf_text
from rulesets.request import NDIMS, RejectedConfig, RulesetName, RulesetRequest, RulesetResult, SkippedLine
from rulesets.selection import full_tests, tiny
from rulesets.warp_tile import WarpTileKConvention

FULL_LEGACY_SUBSETS = ("profiler", "tests")
SIBLINGS = tuple((dtype, ndim) for dtype in DataType for ndim in NDIMS)
"""A direction's (dtype, ndim) requests, the domain of ``tiny``."""


@dataclass(frozen=True)
class LegacySource:
    """The text of a direction's legacy files of some subsets, read once per call: immutable and hashable,
    so a cache keyed on it can never serve a result computed from other file contents."""

    root: Path
    files: tuple[tuple[Path, str], ...]


@dataclass(frozen=True)
class Filtered:
    """Candidates after the arch's validity: accepted (sorted by name, unique), rejected, skipped lines."""

    configs: tuple[AnyConfig, ...]
    rejected: tuple[RejectedConfig, ...]
    skipped: tuple[SkippedLine, ...]


def _arch(name: str) -> ArchSpec:
    try:
        return get_arch(name)
    except ValueError as error:
        raise RulesetError(str(error)) from None


def legacy_source(request: RulesetRequest, subsets: tuple[str, ...]) -> LegacySource:
    """The legacy files of ``subsets`` for the request's direction (every dtype and ndim), read."""
    root = request.legacy_dir
    if not root.is_dir():
        raise RulesetError(
            f"legacy directory {root} does not exist; accepted: a CK Builder configs directory"
        )
    files = tuple(
        (path, read_conf_text(path))
        for path in discover(root)
        if (name := parse_file_name(root, path)).subset in subsets and name.direction is request.direction
    )
    return LegacySource(root=root, files=files)


def _legacy(
    source: LegacySource, dtype: DataType, ndim: int, convention: WarpTileKConvention
) -> tuple[list[AnyConfig], list[SkippedLine]]:
    configs: list[AnyConfig] = []
    skipped: list[SkippedLine] = []
    for path, text in source.files:
        name = parse_file_name(source.root, path)
        if name.ndim != ndim or dtype not in name.dtypes:
            continue
        result = convert_legacy_text(source.root, path, text, convention)
        configs.extend(c for c in result.configs if c.dtype is dtype)
        skipped.extend(
            SkippedLine(file=name.relative_path, line_number=o.line_number, reason=o.reason)
            for o in result.outcomes
            if o.status == "skipped"
        )
    return configs, skipped


def _filter(arch: ArchSpec, candidates: Iterable[AnyConfig], skipped: Iterable[SkippedLine] = ()) -> Filtered:
    unique: dict[str, AnyConfig] = {}
    for config in candidates:
        unique.setdefault(config.name, config)
    accepted: list[AnyConfig] = []
    rejected: list[RejectedConfig] = []
    for name in sorted(unique):
        config = unique[name]
        verdict = validate(config, arch)
        if verdict.ok:
            accepted.append(config)
        else:
            rejected.append(RejectedConfig(config=config, rule=verdict.rule, message=verdict.message))
    return Filtered(configs=tuple(accepted), rejected=tuple(rejected), skipped=tuple(skipped))


def _full(
    direction: Direction,
    dtype: DataType,
    ndim: int,
    arch: ArchSpec,
    convention: WarpTileKConvention,
    source: LegacySource,
) -> Filtered:
    legacy, skipped = _legacy(source, dtype, ndim, convention)
    return _filter(arch, [*rule_configs(direction, dtype, ndim, convention), *legacy], skipped)


def _full_tests(full: Filtered) -> Filtered:
    return Filtered(configs=full_tests(full.configs), rejected=full.rejected, skipped=full.skipped)


# Cached because the build and the tests ask for a direction's six tiny requests in a row, each needing all
# six siblings; the function is pure (immutable, hashable arguments, file texts included; the arch table is
# static), so a cached result is the one a fresh call computes. maxsize bounds memory to a few directions.
@lru_cache(maxsize=6)
def direction_tiny(
    direction: Direction, arch: str, convention: WarpTileKConvention, source: LegacySource
) -> tuple[Filtered, ...]:
    """``tiny`` of each of the direction's ``SIBLINGS``, in that order: each sibling's ``full-tests`` is
    enumerated once and the direction's selection made once; rejected and skipped lines are the sibling's."""
    spec = _arch(arch)
    siblings = {
        (dtype, ndim): _full_tests(_full(direction, dtype, ndim, spec, convention, source))
        for dtype, ndim in SIBLINGS
    }
    chosen = tiny(lambda dtype, ndim: siblings[(dtype, ndim)].configs)
    return tuple(
        Filtered(
            configs=tuple(c for c in chosen if c.dtype is dtype and c.ndim_spatial == ndim),
            rejected=siblings[(dtype, ndim)].rejected,
            skipped=siblings[(dtype, ndim)].skipped,
        )
        for dtype, ndim in SIBLINGS
    )


def _tiny(request: RulesetRequest) -> Filtered:
    source = legacy_source(request, FULL_LEGACY_SUBSETS)
    per_sibling = direction_tiny(request.direction, request.arch, request.warp_tile_k_convention, source)
    return per_sibling[SIBLINGS.index((request.dtype, request.ndim))]


def _enumerate(request: RulesetRequest, arch: ArchSpec) -> Filtered:
    ruleset, convention = request.ruleset, request.warp_tile_k_convention
    if ruleset in (RulesetName.PROFILER, RulesetName.TESTS):
        configs, skipped = _legacy(
            legacy_source(request, (ruleset.value,)), request.dtype, request.ndim, convention
        )
        return _filter(arch, configs, skipped)
    if ruleset is RulesetName.TINY:
        return _tiny(request)
    if ruleset is RulesetName.DEFAULT:
        return _filter(arch, default_configs(request.direction, request.dtype, request.ndim, convention))
    source = legacy_source(request, FULL_LEGACY_SUBSETS)
    full = _full(request.direction, request.dtype, request.ndim, arch, convention, source)
    return full if ruleset is RulesetName.FULL else _full_tests(full)


def enumerate_ruleset(request: RulesetRequest) -> RulesetResult:
    """The configurations of ``request.ruleset`` (sorted by name, unique), arch rejections, skipped lines.

    Raises ``RulesetError`` (one line) for an unknown arch, a missing legacy directory or a legacy line no
    format explains (``LegacyFormatError``, naming ``file:line``).
    """
    filtered = _enumerate(request, _arch(request.arch))
    return RulesetResult(
        request=request, configs=filtered.configs, rejected=filtered.rejected, skipped=filtered.skipped
    )
