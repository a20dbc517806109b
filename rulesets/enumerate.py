"""``enumerate_ruleset``: one rule set for one direction, dtype and ndim, filtered by the arch's validity."""

from __future__ import annotations

from collections.abc import Iterable

from generators.arch import ArchSpec, get_arch
from generators.config import AnyConfig
from generators.validity import validate
from rulesets.default import default_configs
from rulesets.errors import RulesetError
from rulesets.full import rule_configs
from rulesets.legacy import LegacyFileResult, read_legacy_file
from rulesets.legacy_files import discover, parse_file_name
from rulesets.request import RejectedConfig, RulesetName, RulesetRequest, RulesetResult, SkippedLine
from rulesets.selection import full_tests, tiny


def _arch(name: str) -> ArchSpec:
    try:
        return get_arch(name)
    except ValueError as error:
        raise RulesetError(str(error)) from None


def legacy_files_for(request: RulesetRequest, subsets: tuple[str, ...]) -> tuple[LegacyFileResult, ...]:
    """The legacy files of ``subsets`` holding the request's direction, dtype and ndim, read and converted."""
    root = request.legacy_dir
    if not root.is_dir():
        raise RulesetError(
            f"legacy directory {root} does not exist; accepted: a CK Builder configs directory"
        )
    results = []
    for path in discover(root):
        name = parse_file_name(root, path)
        if (
            name.subset in subsets
            and name.direction is request.direction
            and name.ndim == request.ndim
            and request.dtype in name.dtypes
        ):
            results.append(read_legacy_file(root, path, request.warp_tile_k_convention))
    return tuple(results)


def _legacy(request: RulesetRequest, subsets: tuple[str, ...]) -> tuple[list[AnyConfig], list[SkippedLine]]:
    configs: list[AnyConfig] = []
    skipped: list[SkippedLine] = []
    for result in legacy_files_for(request, subsets):
        configs.extend(c for c in result.configs if c.dtype is request.dtype)
        skipped.extend(
            SkippedLine(file=result.file.relative_path, line_number=o.line_number, reason=o.reason)
            for o in result.outcomes
            if o.status == "skipped"
        )
    return configs, skipped


def _filter(
    request: RulesetRequest,
    arch: ArchSpec,
    candidates: Iterable[AnyConfig],
    skipped: Iterable[SkippedLine] = (),
) -> RulesetResult:
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
    return RulesetResult(
        request=request, configs=tuple(accepted), rejected=tuple(rejected), skipped=tuple(skipped)
    )


def _full(request: RulesetRequest, arch: ArchSpec) -> RulesetResult:
    legacy, skipped = _legacy(request, ("profiler", "tests"))
    rules = rule_configs(request.direction, request.dtype, request.ndim, request.warp_tile_k_convention)
    return _filter(request, arch, [*rules, *legacy], skipped)


def _full_tests(request: RulesetRequest, arch: ArchSpec) -> RulesetResult:
    full = _full(request, arch)
    return full.model_copy(update={"configs": full_tests(full.configs)})


def _tiny(request: RulesetRequest, arch: ArchSpec) -> RulesetResult:
    def full_tests_of(dtype: object, ndim: int) -> tuple[AnyConfig, ...]:
        sibling = request.model_copy(update={"dtype": dtype, "ndim": ndim, "ruleset": RulesetName.FULL_TESTS})
        return _full_tests(sibling, arch).configs

    own = _full_tests(request, arch)
    chosen = tuple(
        c for c in tiny(full_tests_of) if c.dtype is request.dtype and c.ndim_spatial == request.ndim
    )
    return own.model_copy(update={"configs": chosen})


def enumerate_ruleset(request: RulesetRequest) -> RulesetResult:
    """The configurations of ``request.ruleset`` (sorted by name, unique), arch rejections, skipped lines.

    Raises ``RulesetError`` (one line) for an unknown arch, a missing legacy directory or a legacy line no
    format explains (``LegacyFormatError``, naming ``file:line``).
    """
    arch = _arch(request.arch)
    ruleset = request.ruleset
    if ruleset in (RulesetName.PROFILER, RulesetName.TESTS):
        configs, skipped = _legacy(request, (ruleset.value,))
        return _filter(request, arch, configs, skipped)
    if ruleset is RulesetName.FULL:
        return _full(request, arch)
    if ruleset is RulesetName.FULL_TESTS:
        return _full_tests(request, arch)
    if ruleset is RulesetName.TINY:
        return _tiny(request, arch)
    configs = default_configs(request.direction, request.dtype, request.ndim, request.warp_tile_k_convention)
    return _filter(request, arch, configs)
