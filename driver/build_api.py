"""The Python API SCons calls in-process (docs/architecture.md §2): ``plan`` and ``generate`` per direction,
``generate_arch_header`` once per build (``ARCH_HEADER_PATH``, the same for every direction).

Configurations come from the rule sets (``rulesets.enumerate_ruleset``), files from the generators
(``generators.emit``): the driver layer is the one place that joins the two. Bad input (unknown rule set,
dtype, arch, a missing legacy directory) raises ``ValueError`` with one line naming the bad value and the
accepted ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, PositiveInt, ValidationError, field_validator

from generators.arch import ARCH_NAMES, DEFAULT_ARCH
from generators.arch_header import ARCH_HEADER_PATH as ARCH_HEADER_PATH  # the SCons tool's target
from generators.arch_header import arch_header_files
from generators.chunking import DEFAULT_CHUNK
from generators.config import DepthwiseConfig, KernelConfig
from generators.emit import plan_direction, prune_stale, render_direction, sorted_by_name, write_files
from generators.enums import DataType, Direction
from generators.name_filter import NameFilter, select_by_name
from rulesets import DEFAULT_LEGACY_DIR, RulesetRequest, enumerate_ruleset


class GenerateRequest(BaseModel):
    """What to generate for one direction: rule set x arch x dtypes x ndims (empty dtypes: empty file set)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ruleset: str
    arch: str = DEFAULT_ARCH
    direction: Direction
    dtypes: tuple[DataType, ...] = (DataType.FP16, DataType.BF16, DataType.FP32)
    ndims: tuple[Literal[2, 3], ...] = (2, 3)
    legacy_dir: Path = DEFAULT_LEGACY_DIR
    chunk: PositiveInt = DEFAULT_CHUNK
    name_filter: NameFilter = NameFilter()
    """Only the instances whose names it keeps (``generators.name_filter``; empty: all)."""

    @field_validator("arch")
    @classmethod
    def _arch(cls, value: str) -> str:
        if value not in ARCH_NAMES:
            raise ValueError(f"unknown arch {value!r}; accepted: {', '.join(ARCH_NAMES)}")
        return value

    @classmethod
    def build(cls, **fields: Any) -> GenerateRequest:
        """Construct, turning a validation failure into one ValueError line naming the bad value."""
        try:
            return cls(**fields)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            message = str(first.get("ctx", {}).get("error", first["msg"]))
            raise ValueError(f"{where}: {message}") from None


def collect_configs(request: GenerateRequest) -> list[KernelConfig | DepthwiseConfig]:
    """Every configuration of the request that its name filter keeps, sorted by name (``DuplicateNameError``
    on a repeated name)."""
    configs: list[KernelConfig | DepthwiseConfig] = []
    for dtype in request.dtypes:
        for ndim in request.ndims:
            ruleset_request = RulesetRequest.build(
                ruleset=request.ruleset,
                direction=request.direction,
                dtype=dtype,
                ndim=ndim,
                arch=request.arch,
                legacy_dir=request.legacy_dir,
            )
            configs.extend(select_by_name(enumerate_ruleset(ruleset_request).configs, request.name_filter))
    return sorted_by_name(configs)


def plan(request: GenerateRequest) -> list[str]:
    """Relative paths of every file ``generate`` writes, sorted; nothing is written or rendered."""
    return plan_configs(request, collect_configs(request))


def plan_configs(request: GenerateRequest, configs: Sequence[KernelConfig | DepthwiseConfig]) -> list[str]:
    """``plan(request)`` from the request's configurations (``collect_configs(request)``) already in hand."""
    return plan_direction([c.name for c in configs], request.direction, request.chunk)


def generate(
    request: GenerateRequest,
    out_dir: str | Path,
    configs: Sequence[KernelConfig | DepthwiseConfig] | None = None,
) -> list[str]:
    """Write the files of ``plan(request)`` under ``out_dir``; files whose bytes would not change are left
    untouched, and the direction's headers and units that the plan no longer lists are removed. Returns the
    relative paths, sorted.

    ``configs``: ``collect_configs(request)`` when the caller has it already (the build enumerates once for
    plan and generate); the caller vouches that it was computed from the same inputs.
    """
    chosen = collect_configs(request) if configs is None else configs
    files = render_direction(chosen, request.direction, request.arch, request.chunk)
    written = write_files(Path(out_dir), files)
    prune_stale(Path(out_dir), request.direction, written)
    return written


def generate_arch_header(out_dir: str | Path) -> list[str]:
    """Write the arch header (``ARCH_HEADER_PATH``, every arch) under ``out_dir``, unless its bytes would not
    change; returns its relative path in a list, as ``generate`` does."""
    return write_files(Path(out_dir), arch_header_files())
