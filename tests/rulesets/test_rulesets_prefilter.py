"""The rule sets' pre-filters are the validity rules, not copies of them (issue 14).

Where an enumeration leaves a candidate out before validation (``rulesets.space.PIPELINES``,
``rulesets.full.specializations_for``, the feature families, ``rulesets.default``'s two-stage), it asks the
predicates of ``generators.validity``. Each test below builds every candidate of one axis on a configuration
that is otherwise valid and checks: the enumeration keeps it exactly when ``validate`` accepts it.
"""

from __future__ import annotations

from typing import Any

import pytest

from generators.config import KernelConfig
from generators.enums import DataType, Direction, Pipeline, Scheduler, Specialization
from generators.validity import validate
from rulesets import WarpTileKConvention, space
from rulesets.default import default_configs
from rulesets.full import rule_configs, specializations_for

SMALL_TILE = (64, 64, 32)


def _config(direction: Direction, dtype: DataType = DataType.FP16, **changes: Any) -> KernelConfig:
    """64x64x32 on 2x2x1 waves with 16x16x16 warp tiles and scalar-safe vectors: valid in every direction
    and dtype on sm_90a, so only the field under test can make it invalid."""
    fields: dict[str, Any] = dict(
        direction=direction,
        dtype=dtype,
        ndim_spatial=2,
        tile_m=64,
        tile_n=64,
        tile_k=32,
        wave_m=2,
        wave_n=2,
        wave_k=1,
        warp_tile_m=16,
        warp_tile_n=16,
        warp_tile_k=16 if dtype is not DataType.FP32 else 8,
        vector_size_a=4,
        vector_size_b=4,
        vector_size_c=4,
    )
    fields.update(changes)
    return KernelConfig(**fields)


@pytest.mark.parametrize("direction", list(Direction), ids=lambda d: d.value)
def test_base_configuration_is_valid(direction: Direction) -> None:
    for dtype in DataType:
        verdict = validate(_config(direction, dtype))
        assert verdict.ok, verdict


@pytest.mark.parametrize("direction", list(Direction), ids=lambda d: d.value)
def test_pipeline_choices_are_what_validity_accepts(direction: Direction) -> None:
    kept = set(space.PIPELINES[direction])
    for pipeline in space.FULL_PIPELINES:
        for scheduler in Scheduler:
            choice = space.PipelineChoice(pipeline, scheduler)
            dsb = choice.double_smem_buffer
            config = _config(direction, pipeline=pipeline, scheduler=scheduler, double_smem_buffer=dsb)
            assert (choice in kept) == validate(config).ok, (direction, pipeline, scheduler, validate(config))
    # The filter is not vacuous: each direction loses the interwave pairs, the backward ones compv5 too.
    assert len(kept) < len(space.FULL_PIPELINES) * len(Scheduler)


def test_double_smem_buffer_follows_validity() -> None:
    for pipeline in Pipeline:
        choice = space.PipelineChoice(pipeline)
        without = validate(_config(Direction.FWD, pipeline=pipeline, double_smem_buffer=False))
        # A pipeline that needs the buffer gets it; one that does not is enumerated without it.
        assert choice.double_smem_buffer == (without.rule == "compv4_double_smem_buffer"), pipeline


@pytest.mark.parametrize("direction", list(Direction), ids=lambda d: d.value)
def test_specializations_are_what_validity_accepts(direction: Direction) -> None:
    # On a small tile with tile_k != 8 the space varies every specialisation the direction has.
    kept = specializations_for(direction, SMALL_TILE)
    assert kept[0] is Specialization.DEFAULT
    for spec in Specialization:
        verdict = validate(_config(direction, specialization=spec))
        assert (spec in kept) == verdict.ok, (direction, spec, verdict)


@pytest.mark.parametrize("dtype", list(DataType), ids=lambda t: t.value)
def test_streamk_family_pipelines_are_what_validity_accepts(dtype: DataType) -> None:
    (family,) = (f for f in space.FAMILIES if f.name == "streamk")
    enumerated = {
        c.pipeline
        for c in rule_configs(Direction.BWD_WEIGHT, dtype, 2, WarpTileKConvention.CURRENT)
        if isinstance(c, KernelConfig) and c.streamk_enabled
    }
    for choice in family.pipelines:
        config = _config(Direction.BWD_WEIGHT, dtype, pipeline=choice.pipeline, streamk_enabled=True)
        assert (choice.pipeline in enumerated) == validate(config).ok, (dtype, choice, validate(config))
    if dtype is DataType.FP32:
        assert Pipeline.BASIC_ASYNC_V1 not in enumerated


@pytest.mark.parametrize("direction", list(Direction), ids=lambda d: d.value)
def test_default_two_stage_is_where_validity_accepts_it(direction: Direction) -> None:
    configs = list(default_configs(direction, DataType.FP16, 2, WarpTileKConvention.CURRENT))
    has_two_stage = any(c.two_stage for c in configs if isinstance(c, KernelConfig))
    assert has_two_stage == validate(_config(direction, two_stage=True)).ok
