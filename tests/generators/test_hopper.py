"""The Hopper path's plan (generators/hopper.py), in particular transposed bwd_weight: tile_m below 64
computed as the tile's transpose. Source: ``Sm90Config::kTransposed`` and ``not_buildable()``
(instances/include/tiledispatch/kernels/sm90/config.hpp); tests/kernels/test_resource_model.py compares both
halves on the rule sets' configurations."""

from __future__ import annotations

import pytest

from generators.arch import get_arch
from generators.hopper import HopperPlan, hopper_plan, is_transposed
from generators.validity import validate
from tests.generators.gen_factories import make_config

SM90 = get_arch("sm_90a")
M_NOT_64 = "a warpgroup tile M that is not a multiple of 64"


def bwd_weight(**changes: object):
    fields: dict[str, object] = dict(
        direction="bwd_weight", wave_m=1, wave_n=2, warp_tile_m=16, warp_tile_n=32
    )
    fields.update(changes)
    return make_config(**fields)


def plan_of(config) -> HopperPlan:
    assert validate(config, "sm_90a").ok, validate(config, "sm_90a").message
    plan = hopper_plan(config, SM90)
    assert isinstance(plan, HopperPlan), plan
    return plan


@pytest.mark.parametrize(
    ("tile_m", "tile_n"), [(16, 64), (32, 64), (16, 128), (32, 128), (48, 128), (32, 256)]
)
def test_bwd_weight_below_64_rows_is_computed_transposed(tile_m: int, tile_n: int) -> None:
    config = bwd_weight(tile_m=tile_m, tile_n=tile_n, warp_tile_m=16)
    plan = plan_of(config)
    assert plan.transposed and is_transposed(config)
    # one warpgroup: wgmma's M is the whole of tile_n, its N the whole of tile_m
    assert (plan.warpgroup_tile_m, plan.warpgroup_tile_n) == (tile_n, tile_m)
    # the tile keeps its meaning: the same stages and accumulators as the untransposed tile would have
    assert plan.accumulators_per_thread == tile_m * tile_n // 128
    assert plan.smem_bytes == 1024 + plan.stages * (tile_m + tile_n) * 32 * 2 + 2 * 8 * 8


def test_two_consumer_warpgroups_stack_along_wgmma_m_where_tile_n_allows() -> None:
    along_m = plan_of(bwd_weight(tile_m=32, tile_n=128, wave_n=4, warp_tile_m=32))
    assert along_m.consumer_warpgroups == 2 and along_m.warpgroups_along_m
    assert (along_m.warpgroup_tile_m, along_m.warpgroup_tile_n) == (64, 32)
    # 64 of tile_n feed one m64 only: the two warpgroups split tile_m (wgmma's N) instead
    along_n = plan_of(bwd_weight(tile_m=32, tile_n=64, wave_m=2, wave_n=2))
    assert along_n.transposed and not along_n.warpgroups_along_m
    assert (along_n.warpgroup_tile_m, along_n.warpgroup_tile_n) == (64, 16)


@pytest.mark.parametrize("direction", ["fwd", "bwd_data"])
def test_only_bwd_weight_is_transposed(direction: str) -> None:
    config = bwd_weight(direction=direction, tile_m=32, tile_n=128)
    assert validate(config, "sm_90a").ok
    assert not is_transposed(config)
    assert hopper_plan(config, SM90) == M_NOT_64


@pytest.mark.parametrize(("tile_m", "tile_n"), [(32, 32), (32, 96), (16, 16)])
def test_no_transpose_where_tile_n_is_no_multiple_of_64_either(tile_m: int, tile_n: int) -> None:
    config = bwd_weight(tile_m=tile_m, tile_n=tile_n, wave_n=1, warp_tile_n=16)
    assert validate(config, "sm_90a").ok, validate(config, "sm_90a").message
    assert not is_transposed(config)
    assert hopper_plan(config, SM90) == M_NOT_64  # the first generation runs it


def test_64_row_tiles_keep_the_untransposed_mapping() -> None:
    plan = plan_of(bwd_weight(tile_m=64, tile_n=128, warp_tile_m=32))
    assert not plan.transposed
    assert (plan.warpgroup_tile_m, plan.warpgroup_tile_n) == (64, 128)


def test_transposed_ping_pong_is_valid_where_the_hopper_path_builds_it() -> None:
    ping_pong = bwd_weight(tile_m=32, tile_n=128, wave_n=4, warp_tile_m=32, num_wave_groups=2)
    plan = plan_of(ping_pong)
    assert plan.ping_pong and plan.transposed
    # each warpgroup owns a whole tile: wgmma m128 (two m64) x n32
    assert (plan.warpgroup_tile_m, plan.warpgroup_tile_n) == (128, 32)
    assert validate(ping_pong, "sm_80").rule == "num_wave_groups"
    # a ping-pong tile that neither mapping builds stays invalid everywhere
    neither = bwd_weight(tile_m=32, tile_n=32, wave_n=4, warp_tile_m=32, warp_tile_n=8, num_wave_groups=2)
    broken = validate(neither, "sm_90a")
    assert broken.rule == "num_wave_groups" and M_NOT_64 in broken.message, broken.message
