"""Typed legacy lines -> configurations, with upstream's derivations and skip rules (ck_conventions §4).

Derivations: ``wave_m = MPerBlock // (MPerXdl * MXdlPerWave)`` (likewise n),
``wave_k = block // (64 * wave_m * wave_n)`` (integer division, as upstream), warp tile = (MPerXdl, NPerXdl,
``rulesets.warp_tile``), pipeline versions V1 compv1, V2 mem, V3 compv3, V4 compv4 + dsb, V5 compv6,
direct-load V1 basic_async_v1, direct-load V4 mem (+ dsb: upstream derives dsb from the written version).

Skip rules are upstream's converter behaviour (not arch validity, which is ``generators.validity``'s) and
apply to backward XDL lines only: odd vector widths other than 1; a tile dimension wider than one 64-lane
wave covers with its vector (``tile_m > 64*vec_a`` -- bwd_data reads A along tile_k -- or
``tile_n > 64*vec_b``); bwd_data vectors wider than a thread's share of the tile; native stream-K with fp32
and an async pipeline (asked of ``generators.validity.streamk_runs_pipeline``, the one statement of that
rule: skipped here, as upstream's converter does, rather than rejected); bwd_weight basic_v2. Every skip
carries its reason.

Native lines are taken as they are, with two upstream behaviours made explicit as notes: the file name
decides ndim, layout and dtype (``generate_instances.py`` never reads a native line's NDim, layout or type
tokens), and a non-stream-K bwd_weight line with ``VecC == 1`` in fp16/bf16 is two-stage (upstream
``parse_native_instance``). The 32-field ``...,PassThrough,0`` form is the stream-K flag written off; the
canonical string has 31 fields.
"""

from __future__ import annotations

from types import MappingProxyType

from pydantic import BaseModel, ConfigDict

from generators.config import AnyConfig, DepthwiseConfig, KernelConfig
from generators.enums import (
    DataType,
    Direction,
    Layout,
    Pipeline,
    Scheduler,
    Specialization,
)
from generators.validity import streamk_runs_pipeline
from rulesets.conf_lines import DepthwiseLine, LegacyFormat, LegacyLine, LineFormatError, NativeLine, XdlLine
from rulesets.legacy_files import LegacyFileName
from rulesets.warp_tile import WarpTileKConvention, k_mfma, warp_tile_k

WAVE_LANES = 64

_SPECIALIZATIONS = MappingProxyType(
    {
        "Default": Specialization.DEFAULT,
        "OddC": Specialization.DEFAULT,
        "Filter1x1Pad0": Specialization.FILTER1X1_PAD0,
        "Filter1x1Stride1Pad0": Specialization.FILTER1X1_STRIDE1_PAD0,
        "Filter3x3": Specialization.FILTER3X3,
    }
)
_VERSION_PIPELINES = MappingProxyType(
    {
        "v1": Pipeline.BASIC_V1,
        "v2": Pipeline.MEM,
        "v3": Pipeline.COMPV3,
        "v4": Pipeline.COMPV4,
        # Old CK's V5 is CK Tile's V6.
        "v5": Pipeline.COMPV6,
    }
)
_DIRECT_LOAD_PIPELINES = MappingProxyType({"v1": Pipeline.BASIC_ASYNC_V1, "v4": Pipeline.MEM})


class Conversion(BaseModel):
    """What one line becomes: configurations (several for a depthwise line), or a skip with its reason.

    ``notes`` record every documented normalisation; ``canonical_text`` is the native line after them (what
    the instance string of its configuration must equal byte for byte), None for non-native lines.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    configs: tuple[AnyConfig, ...] = ()
    skip_reason: str | None = None
    notes: tuple[str, ...] = ()
    canonical_text: str | None = None


def _skip(reason: str) -> Conversion:
    return Conversion(skip_reason=reason)


def _check_direction(line: LegacyLine, file: LegacyFileName) -> None:
    if Direction(line.format.direction) is not file.direction:
        raise LineFormatError(
            f"{line.format.value} is a {line.format.direction} op in a {file.direction.value} file",
            f"a {file.direction.value} device op",
        )


def _backward_skip_reason(line: XdlLine, direction: Direction, waves: tuple[int, int, int]) -> str | None:
    vectors = (line.vector_a, line.vector_b, line.vector_c)
    if any(v != 1 and v % 2 for v in vectors):
        return f"odd vector size in vec {line.vector_a},{line.vector_b},{line.vector_c} (upstream skips)"
    a_dim, a_name = (line.tile_k, "tile_k") if direction is Direction.BWD_DATA else (line.tile_m, "tile_m")
    if a_dim > WAVE_LANES * line.vector_a or line.tile_n > WAVE_LANES * line.vector_b:
        return (
            f"multi-wave per contiguous tile dim ({a_name} {a_dim} > 64*vec_a {line.vector_a} or "
            f"tile_n {line.tile_n} > 64*vec_b {line.vector_b}; upstream skips)"
        )
    if direction is Direction.BWD_DATA:
        block = WAVE_LANES * waves[0] * waves[1] * waves[2]
        per_thread_a = line.tile_m * line.tile_k // block
        per_thread_b = line.tile_n * line.tile_k // block
        if line.vector_a > per_thread_a or line.vector_b > per_thread_b:
            return (
                f"bwd_data vector wider than a thread's share (vec {line.vector_a},{line.vector_b} > "
                f"{per_thread_a},{per_thread_b} elements; upstream skips)"
            )
    return None


def _convert_xdl(
    line: XdlLine, file: LegacyFileName, dtype: DataType, convention: WarpTileKConvention
) -> Conversion:
    direction = file.direction
    if line.bk1 is not None and line.bk1 != line.k1:
        return _skip(f"AK1 {line.k1} != BK1 {line.bk1} (upstream does not support it)")
    m_step = line.m_per_xdl * line.m_xdl_per_wave
    n_step = line.n_per_xdl * line.n_xdl_per_wave
    if m_step == 0 or n_step == 0:
        raise LineFormatError("zero XDL size or XDLs per wave", "positive MPerXdl, NPerXdl, M/NXdlPerWave")
    wave_m, wave_n = line.tile_m // m_step, line.tile_n // n_step
    wave_k = line.block_size // (WAVE_LANES * wave_m * wave_n) if wave_m and wave_n else 0
    if not (wave_m and wave_n and wave_k):
        return _skip(f"derived waves {wave_m}x{wave_n}x{wave_k} include 0 (block {line.block_size})")
    kmfma = k_mfma(dtype, line.m_per_xdl, line.n_per_xdl, convention)
    if kmfma is None:
        return _skip(f"no k_mfma for a {line.m_per_xdl}x{line.n_per_xdl} warp tile (upstream rejects it)")
    if direction is not Direction.FWD:
        reason = _backward_skip_reason(line, direction, (wave_m, wave_n, wave_k))
        if reason is not None:
            return _skip(reason)
    if line.direct_load:
        pipeline = _DIRECT_LOAD_PIPELINES.get(line.pipeline_version)
        if pipeline is None:
            raise LineFormatError(
                f"direct load with pipeline {line.pipeline_version}", "direct load with v1 or v4"
            )
    else:
        pipeline = _VERSION_PIPELINES[line.pipeline_version]
    two_stage = line.two_stage or (
        line.explicit_gemm and dtype is not DataType.FP32 and line.vector_c % 2 == 1
    )
    config = KernelConfig(
        direction=direction,
        dtype=dtype,
        ndim_spatial=file.ndim,
        tile_m=line.tile_m,
        tile_n=line.tile_n,
        tile_k=line.tile_k,
        wave_m=wave_m,
        wave_n=wave_n,
        wave_k=wave_k,
        warp_tile_m=line.m_per_xdl,
        warp_tile_n=line.n_per_xdl,
        warp_tile_k=warp_tile_k(line.k1, kmfma, line.tile_k),
        vector_size_a=line.vector_a,
        vector_size_b=line.vector_b,
        vector_size_c=line.vector_c,
        pipeline=pipeline,
        scheduler=Scheduler(line.scheduler.lower()),
        double_smem_buffer=line.pipeline_version == "v4",
        num_groups_to_merge=line.num_groups_to_merge,
        specialization=_SPECIALIZATIONS[line.spec],
        split_image=line.split_image,
        explicit_gemm=line.explicit_gemm,
        two_stage=two_stage,
    )
    return Conversion(configs=(config,))


def _canonical_native(line: NativeLine, file: LegacyFileName, dtype: DataType) -> tuple[str, tuple[str, ...]]:
    """The line with the file's ndim, layout and dtype, without a trailing stream-K-off field; plus notes."""
    f = line.fields
    notes: list[str] = []
    layout_tokens = tuple(Layout.for_ndim(file.ndim).token.split(","))
    written = (f.in_layout, f.wei_layout, f.ds_layout, f.out_layout)
    if f.ndim_spatial != file.ndim or written != layout_tokens:
        notes.append(
            f"NDim {f.ndim_spatial} / layout {','.join(written)} taken as the file's "
            f"{file.ndim}D {','.join(layout_tokens)} (upstream reads ndim and layout from the file name)"
        )
    types = (f.a_type, f.b_type, f.e_type)
    if types != (dtype,) * 3:
        notes.append(
            f"types {','.join(t.token for t in types)} taken as the file's {dtype.value} "
            "(upstream reads the file name)"
        )
    # The 34-field form with IsStreamK 0 carries a ReductionStrategy that means nothing.
    streamk_off = f.trailing_streamk_flag or (not f.streamk_enabled and f.streamk_reduction is not None)
    if f.trailing_streamk_flag:
        notes.append("trailing ',0' is IsStreamK=0; the canonical non-stream-K string has 31 fields")
    elif streamk_off:
        notes.append("IsStreamK=0: ReductionStrategy and PersistentDP fields ignored")
    head, _, _ = line.text.partition("<")
    fields = line.text[len(head) + 1 : -1].split(",")
    fields[0] = str(file.ndim)
    fields[2:6] = layout_tokens
    type_at = (21, 22, 28) if f.explicit_gemm is not None else (20, 21, 27)
    for index in type_at:
        fields[index] = dtype.token
    if streamk_off:
        fields = fields[:31]
    return f"{head}<{','.join(fields)}>", tuple(notes)


def _convert_native(line: NativeLine, file: LegacyFileName, dtype: DataType) -> Conversion:
    f = line.fields
    direction = file.direction
    if f.streamk_enabled and not streamk_runs_pipeline(dtype, f.pipeline):
        return _skip(
            f"stream-K with fp32 and async pipeline {f.pipeline.value} (upstream: not supported yet)"
        )
    if direction is Direction.BWD_WEIGHT and f.pipeline is Pipeline.BASIC_V2:
        return _skip("bwd_weight with basic_v2 (upstream has no such backward-weight pipeline)")
    canonical, notes = _canonical_native(line, file, dtype)
    two_stage = (
        direction is Direction.BWD_WEIGHT
        and not f.streamk_enabled
        and dtype is not DataType.FP32
        and f.vector_size_c == 1
    )
    if two_stage:
        notes = (*notes, "VecC 1 in fp16/bf16 without stream-K: two-stage (upstream parse_native_instance)")
    config = KernelConfig(
        direction=direction,
        dtype=dtype,
        ndim_spatial=file.ndim,
        two_stage=two_stage,
        streamk_persistent=f.streamk_enabled and f.streamk_persistent,
        **f.config_fields(),
    )
    return Conversion(configs=(config,), notes=notes, canonical_text=canonical)


def _convert_depthwise(line: DepthwiseLine, file: LegacyFileName) -> Conversion:
    fields = line.model_dump(exclude={"format"})
    return Conversion(configs=tuple(DepthwiseConfig(dtype=dtype, **fields) for dtype in file.dtypes))


def convert_line(line: LegacyLine, file: LegacyFileName, convention: WarpTileKConvention) -> Conversion:
    """The configurations a parsed line stands for; LineFormatError when the file cannot hold such a line."""
    if isinstance(line, DepthwiseLine):
        if not file.depthwise:
            raise LineFormatError("depthwise line in an implicit-GEMM file", "implicit-GEMM device ops")
        return _convert_depthwise(line, file)
    if file.depthwise:
        raise LineFormatError(
            f"{line.format.value} in a depthwise file", f"{LegacyFormat.DEPTHWISE.value}<...>"
        )
    _check_direction(line, file)
    (dtype,) = file.dtypes
    if isinstance(line, NativeLine):
        return _convert_native(line, file, dtype)
    return _convert_xdl(line, file, dtype, convention)
