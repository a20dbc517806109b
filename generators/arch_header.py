"""The arch header: ``generators.arch`` rendered as C++ (``tiledispatch/generated/arch_traits.hpp``).

The kernels read every arch-dependent quantity (shared-memory and thread limits, the accumulator budget,
access and vector bytes, whether wgmma exists, the pipeline -> strategy table) from ``ArchTraits<Arch>`` in
this header, and the validity rules read the same ``ArchSpec``s: one definition, two readers, as CK renders
its C++ arch tables from ``arch_specs.json``. The build writes the header into its generated directory
(``site_scons/site_tools/td_generate.py``); it holds every arch, so it depends on no build option.

``render_arch_header`` is pure and checks its input completely before it renders a line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from generators.arch import ARCH_NAMES, ArchSpec, PipelineStrategy, get_arch
from generators.emit import banner, template_environment
from generators.enums import Pipeline

ARCH_HEADER_PATH = "tiledispatch/generated/arch_traits.hpp"
"""Where the header lies under the generated directory (an include root of every compile)."""
ARCH_TEMPLATE = "arch_traits.hpp.j2"
_CPP_TYPES = {int: "int", bool: "bool"}
_ENUMERATOR = re.compile(r"^Arch::(k[A-Za-z0-9]+)$")


class _StrategyField(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    cpp_type: str
    comment: str


class _StrategyRow(BaseModel):
    """One case of ``pipeline_strategy``: the strategy without and with double_smem_buffer."""

    model_config = ConfigDict(frozen=True)

    cpp: str
    single: str
    double: str


def _strategy_fields() -> list[_StrategyField]:
    fields = []
    for name, info in PipelineStrategy.model_fields.items():
        if info.annotation not in _CPP_TYPES or not info.description:
            raise ValueError(f"PipelineStrategy.{name}: needs an int or bool type and a docstring for C++")
        cpp_type = _CPP_TYPES[info.annotation]
        fields.append(_StrategyField(name=name, cpp_type=cpp_type, comment=info.description.rstrip(".")))
    return fields


def _initializer(strategy: PipelineStrategy) -> str:
    values = [str(v).lower() if isinstance(v, bool) else str(v) for v in strategy.model_dump().values()]
    return f"PipelineStrategy{{{', '.join(values)}}}"


def _rows(arch: ArchSpec) -> list[_StrategyRow]:
    missing = [p.value for p in Pipeline if p not in arch.pipelines]
    if missing:
        raise ValueError(f"arch {arch.name}: no pipeline strategy for {', '.join(missing)}")
    return [
        _StrategyRow(
            cpp=str(pipeline.cpp),
            single=_initializer(arch.pipeline_strategy(pipeline, double_smem_buffer=False)),
            double=_initializer(arch.pipeline_strategy(pipeline, double_smem_buffer=True)),
        )
        for pipeline in Pipeline
    ]


def _enumerators(arches: Sequence[ArchSpec]) -> list[str]:
    if not arches:
        raise ValueError("no arch to render; accepted: one or more of " + ", ".join(ARCH_NAMES))
    names = [a.name for a in arches]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"arch {', '.join(repeated)} given twice")
    enumerators = []
    for arch in arches:
        match = _ENUMERATOR.match(arch.cpp)
        if match is None:
            raise ValueError(f"arch {arch.name!r} has no C++ enumerator (got {arch.cpp!r})")
        enumerators.append(match.group(1))
    return enumerators


def render_arch_header(arches: Sequence[ArchSpec]) -> str:
    """The C++ header declaring ``Arch``, ``PipelineStrategy`` and ``ArchTraits<Arch>`` for ``arches``, in
    their order; ValueError (nothing rendered) for no arch, an arch given twice, a name without a C++
    enumerator or a pipeline without a strategy."""
    enumerators = _enumerators(arches)
    strategies = {arch.name: _rows(arch) for arch in arches}
    fields = _strategy_fields()
    return (
        template_environment()
        .get_template(ARCH_TEMPLATE)
        .render(
            banner=banner(ARCH_TEMPLATE),
            arches=arches,
            enumerators=enumerators,
            strategy_fields=fields,
            strategies=strategies,
        )
    )


def arch_header_files() -> dict[str, str]:
    """{``ARCH_HEADER_PATH``: the header for every arch of ``ARCH_NAMES``}."""
    return {ARCH_HEADER_PATH: render_arch_header([get_arch(name) for name in ARCH_NAMES])}
