"""Kernel names (generated header stems): the grammar and its parser, ck_conventions §2.

A configuration builds its own name (``KernelConfig.name``, ``DepthwiseConfig.name`` in
``generators.config``); this module parses one back. A name is total and reversible: every field that
distinguishes two configurations appears in it, so ``parse_kernel_name(c.name) == c`` for every configuration
that passes ``generators.validity`` (upstream's parser drops dsb/2stage/explicit_gemm/wg and collides; DESIGN
decision 4). Optional fragments follow the upstream grammar and order; one fragment is ours: ``_bpc{n}`` when
``block_per_cu != 1`` (last).
Fields a valid configuration fixes are not spelled out: ``layout`` follows ``ndim_spatial``, and
``streamk_reduction``/``streamk_persistent`` are only meaningful (and only named) with stream-K enabled.
"""

from __future__ import annotations

import re
from functools import lru_cache

from generators.config import DEFAULT_VECTORS, DepthwiseConfig, KernelConfig
from generators.enums import (
    DataType,
    Direction,
    Epilogue,
    Layout,
    Pipeline,
    Scheduler,
    Specialization,
    StreamKReduction,
)


class KernelNameError(ValueError):
    """A kernel name that does not follow the grammar; the message names the offending part."""


def _alternation(fragments: list[str]) -> str:
    # Longest first so that a fragment which prefixes another never wins by accident.
    return "|".join(re.escape(f) for f in sorted(fragments, key=len, reverse=True))


_INT = r"([1-9][0-9]*)"
_NNINT = r"(0|[1-9][0-9]*)"


@lru_cache(maxsize=1)
def _kernel_pattern() -> re.Pattern[str]:
    pipelines = [p.fragment for p in Pipeline] + ["basic_v1", "basic_v2"]
    specs = [s.fragment for s in Specialization if s is not Specialization.DEFAULT]
    return re.compile(
        rf"grouped_conv_(?P<direction>{_alternation([d.fragment for d in Direction])})"
        rf"_(?P<dtype>{_alternation([t.fragment for t in DataType])})"
        rf"_(?P<layout>{_alternation([Layout.NHWGC.fragment, Layout.NDHWGC.fragment])})"
        rf"_(?P<ndim>[23])d"
        rf"_(?P<pipeline>{_alternation(pipelines)})"
        rf"_(?P<epilogue>{_alternation([e.fragment for e in Epilogue])})"
        rf"_(?P<scheduler>{_alternation([s.fragment for s in Scheduler])})"
        rf"_{_INT}x{_INT}x{_INT}_{_INT}x{_INT}x{_INT}_{_INT}x{_INT}x{_INT}"
        rf"(?:_vec{_INT}_{_INT}_{_INT})?"
        rf"(?:_wg{_INT})?"
        rf"(?:_gm{_INT})?"
        r"(?P<dsb>_dsb)?"
        r"(?P<two_stage>_2stage)?"
        rf"(?:_(?P<spec>{_alternation(specs)}))?"
        r"(?P<explicit_gemm>_explicit_gemm)?"
        rf"(?:_streamk_(?P<reduction>{_alternation([r.fragment for r in StreamKReduction])})"
        r"(?P<persistent>_persistent)?)?"
        r"(?P<large_tensor>_large_tensor)?"
        rf"(?:_bpc{_INT})?"
    )


@lru_cache(maxsize=1)
def _depthwise_pattern() -> re.Pattern[str]:
    return re.compile(
        rf"grouped_conv_(?P<direction>{_alternation([d.fragment for d in Direction])})_depthwise"
        rf"_(?P<dtype>{_alternation([t.fragment for t in DataType])})"
        rf"_{Layout.NGCHW.fragment}_(?P<ndim>[23])d_{_INT}x{_INT}_f{_INT}_s{_INT}x{_INT}_p{_NNINT}x{_NNINT}"
        rf"_nb{_INT}_sub{_INT}x{_INT}_vec{_INT}_{_INT}"
    )


def parse_kernel_name(name: str) -> KernelConfig | DepthwiseConfig:
    """The one configuration a name denotes; ``KernelNameError`` if it is not a canonical name.

    Pipeline aliases (``basic_v1``, ``basic_v2``) are accepted; every other part must be spelled exactly as
    ``KernelConfig.name`` spells it (no ``_vec4_8_8``, no ``_gm1``), so that one configuration has one name.
    """
    if any(name.startswith(f"grouped_conv_{d.fragment}_depthwise_") for d in Direction):
        return _parse_depthwise(name)
    match = _kernel_pattern().fullmatch(name)
    if match is None:
        raise KernelNameError(f"{name!r} is not a kernel name ({_kernel_grammar()})")
    g = match.groups()
    ints = [int(v) if v is not None else None for v in g[7:19]]
    vec = tuple(ints[9:12]) if ints[9] is not None else DEFAULT_VECTORS
    wg, gm = (int(v) if v is not None else 1 for v in (g[19], g[20]))
    bpc = int(g[-1]) if g[-1] is not None else 1
    try:
        config = KernelConfig(
            direction=Direction(match["direction"]),
            dtype=DataType(match["dtype"]),
            ndim_spatial=int(match["ndim"]),
            layout=Layout(match["layout"]),
            pipeline=Pipeline(match["pipeline"]),
            epilogue=Epilogue(match["epilogue"]),
            scheduler=Scheduler(match["scheduler"]),
            tile_m=ints[0],
            tile_n=ints[1],
            tile_k=ints[2],
            wave_m=ints[3],
            wave_n=ints[4],
            wave_k=ints[5],
            warp_tile_m=ints[6],
            warp_tile_n=ints[7],
            warp_tile_k=ints[8],
            vector_size_a=vec[0],
            vector_size_b=vec[1],
            vector_size_c=vec[2],
            num_wave_groups=wg,
            num_groups_to_merge=gm,
            double_smem_buffer=match["dsb"] is not None,
            two_stage=match["two_stage"] is not None,
            specialization=Specialization(match["spec"] or Specialization.DEFAULT.value),
            explicit_gemm=match["explicit_gemm"] is not None,
            streamk_enabled=match["reduction"] is not None,
            streamk_reduction=StreamKReduction(match["reduction"] or StreamKReduction.TREE.value),
            streamk_persistent=match["persistent"] is not None,
            split_image=match["large_tensor"] is not None,
            block_per_cu=bpc,
        )
    except ValueError as error:
        raise KernelNameError(f"{name!r} does not denote a configuration: {_first_error(error)}") from None
    canonical = config.name
    as_written = name[: match.start("pipeline")] + config.pipeline.fragment + name[match.end("pipeline") :]
    if canonical != as_written:
        raise KernelNameError(f"{name!r} is not canonical; the configuration's name is {canonical!r}")
    return config


def _parse_depthwise(name: str) -> DepthwiseConfig:
    match = _depthwise_pattern().fullmatch(name)
    if match is None:
        raise KernelNameError(
            f"{name!r} is not a depthwise kernel name (grouped_conv_{{fwd|bwd_data|bwd_weight}}_depthwise"
            "_{dtype}_ngchw_{2|3}d_{th}x{tw}_f{filter}_s{sh}x{sw}_p{ph}x{pw}_nb{nbatch}_sub{sh}x{sw}_vec{in}_{out})"
        )
    v = [int(x) for x in match.groups()[3:]]
    return DepthwiseConfig(
        direction=Direction(match["direction"]),
        dtype=DataType(match["dtype"]),
        ndim_spatial=int(match["ndim"]),
        tile_h=v[0],
        tile_w=v[1],
        filter=v[2],
        stride_h=v[3],
        stride_w=v[4],
        pad_h=v[5],
        pad_w=v[6],
        nbatch=v[7],
        sub_h=v[8],
        sub_w=v[9],
        in_vec=v[10],
        out_vec=v[11],
    )


def _kernel_grammar() -> str:
    return (
        "grouped_conv_{direction}_{dtype}_{layout}_{N}d_{pipeline}_{epilogue}_{scheduler}_{tile}_{waves}_{warp_tile}"
        "[_vec{a}_{b}_{c}][_wg{n}][_gm{n}][_dsb][_2stage][_{specialization}][_explicit_gemm]"
        "[_streamk_{tree|linear}[_persistent]][_large_tensor][_bpc{n}]"
    )


def _first_error(error: ValueError) -> str:
    errors = getattr(error, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{where}: {first['msg']}" if where else str(first["msg"])
    return str(error)
