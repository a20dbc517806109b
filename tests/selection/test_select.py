"""heuristics.select.rank and LearnedSelector: the order a model gives, ties, per-kernel split-K candidates,
and the errors."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from heuristics.features import FEATURE_NAMES
from heuristics.select import LearnedSelector, rank
from heuristics.tree_model import Tree, TreeModel, TreeModelError
from tests.selection.conftest import problems_small, ruleset_names
from tiledispatch import KernelInfo, Launch, SplitK


def tile_model(direction: str) -> TreeModel:
    """Score 2 for tile_m > 64, else 1; plus 0.5 when split_k > 1."""
    tile_m, split_k = FEATURE_NAMES.index("tile_m"), FEATURE_NAMES.index("split_k")
    trees = (
        Tree(split_feature=(tile_m,), threshold=(64.0,), left=(-1,), right=(-2,), leaf_value=(1.0, 2.0)),
        Tree(split_feature=(split_k,), threshold=(1.0,), left=(-1,), right=(-2,), leaf_value=(0.0, 0.5)),
    )
    return TreeModel(direction=direction, feature_names=FEATURE_NAMES, trees=trees)


@pytest.fixture
def model_dir(tmp_path):
    for direction in ("fwd", "bwd_weight"):
        (tmp_path / f"{direction}.trees").write_text(tile_model(direction).to_text())
    return tmp_path


def fwd_kernels() -> list[str]:
    return [n for n in ruleset_names("default") if n.startswith("grouped_conv_fwd_fp16_nhwgc_2d_")]


def test_rank_orders_by_score_and_keeps_input_order_on_ties(model_dir):
    kernels = fwd_kernels()
    ranked = rank(problems_small()[0], kernels, model_dir=model_dir)
    big = [k for k in kernels if int(k.split("_intrawave_")[1].split("x")[0]) > 64]
    assert big and len(big) < len(kernels)
    assert [r.kernel for r in ranked] == big + [k for k in kernels if k not in big]
    assert {r.score for r in ranked[: len(big)]} == {2.0}


def test_rank_pairs_split_k_for_bwd_weight_only(model_dir):
    name = next(
        n for n in ruleset_names("default") if n.startswith("grouped_conv_bwd_weight_fp16_nhwgc_2d_compv3")
    )
    ranked = rank(problems_small()[0], [name], split_ks=(1, 4), model_dir=model_dir)
    assert [(r.split_k, r.score) for r in ranked] == [(4, ranked[0].score), (1, ranked[0].score - 0.5)]
    assert [r.split_k for r in rank(problems_small()[0], fwd_kernels()[:1], (1, 4), model_dir)] == [1]


def test_rank_errors(model_dir):
    p = problems_small()[0]
    assert rank(p, [], model_dir=model_dir) == []
    bwd = next(n for n in ruleset_names("default") if n.startswith("grouped_conv_bwd_data_"))
    with pytest.raises(ValueError, match="several directions"):
        rank(p, [fwd_kernels()[0], bwd], model_dir=model_dir)
    with pytest.raises(TreeModelError, match="cannot read"):
        rank(p, [bwd], model_dir=model_dir)
    (model_dir / "bwd_data.trees").write_text(
        TreeModel(direction="bwd_data", feature_names=("x",), trees=()).to_text()
    )
    with pytest.raises(TreeModelError, match="feature list differs"):
        rank(p, [bwd], model_dir=model_dir)


class Kernel(BaseModel):
    """Stands in for the runtime's KernelInfo: the selector reads only the name."""

    name: str


def test_learned_selector_returns_the_top_ranked_candidate(model_dir):
    small = [k for k in fwd_kernels() if int(k.split("_intrawave_")[1].split("x")[0]) <= 64]
    big = next(k for k in fwd_kernels() if int(k.split("_intrawave_")[1].split("x")[0]) > 64)
    candidates = [Kernel(name=n) for n in [*small[:3], big, *small[3:5]]]
    chosen = LearnedSelector(model_dir).select(problems_small()[1], candidates)
    assert chosen is candidates[3]
    # Among equals the first candidate wins, as rank() keeps the input order.
    assert LearnedSelector(model_dir).select(problems_small()[1], candidates[:3]) is candidates[0]
    with pytest.raises(ValueError, match="no candidate"):
        LearnedSelector(model_dir).select(problems_small()[1], [])


def test_a_missing_model_names_the_committed_folder(tmp_path):
    name = fwd_kernels()[0]
    with pytest.raises(TreeModelError, match=r"cannot read: no such model file .*heuristics/models"):
        rank(problems_small()[0], [name], model_dir=tmp_path)


def kernel_info(name: str) -> KernelInfo:
    return KernelInfo(
        name=name,
        instance_string="-",
        direction="bwd_weight",
        dtype="fp16",
        ndim_spatial=2,
        family="implicit_gemm",
    )


def test_learned_selector_ranks_each_kernels_own_split_k_candidates(model_dir):
    """The tile model scores a big tile 2 and a split 0.5 more: a small tile's split can beat a small tile
    that offers none, but not a big tile."""
    names = [
        n for n in ruleset_names("default") if n.startswith("grouped_conv_bwd_weight_fp16_nhwgc_2d_compv3")
    ]
    small = [n for n in names if int(n.split("_intrawave_")[1].split("x")[0]) <= 64]
    big = next(n for n in names if int(n.split("_intrawave_")[1].split("x")[0]) > 64)
    problem = problems_small()[0]
    unsplit = SplitK(kernel=kernel_info(small[0]), sms=132, candidates=(1,), preferred=1)
    split = SplitK(kernel=kernel_info(small[1]), sms=132, candidates=(1, 3, 7), preferred=7)
    launch = LearnedSelector(model_dir).select_launch(problem, [unsplit, split])
    assert launch == Launch(kernel=split.kernel, split_k=3)  # ties among 3 and 7 keep the first
    whole = SplitK(kernel=kernel_info(big), sms=132, candidates=(1,), preferred=1)
    assert LearnedSelector(model_dir).select_launch(problem, [split, whole]) == Launch(
        kernel=whole.kernel, split_k=1
    )
    with pytest.raises(ValueError, match="no candidate"):
        LearnedSelector(model_dir).select_launch(problem, [])


def test_learned_selector_keeps_to_depthwise_kernels_where_one_is_supported(model_dir):
    """rank() puts the big implicit-GEMM tile first (the tile model scores it no lower than the depthwise
    kernels, and ties keep the input order), but a supported depthwise kernel is specialised for G = C = K:
    the selector ranks among the depthwise ones."""
    names = ruleset_names("default")
    depthwise = [n for n in names if n.startswith("grouped_conv_bwd_weight_depthwise_fp16_")][:2]
    big = next(
        n
        for n in names
        if n.startswith("grouped_conv_bwd_weight_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128")
    )
    problem = problems_small()[0]
    assert rank(problem, [big, *depthwise], model_dir=model_dir)[0].kernel == big
    candidates = [Kernel(name=n) for n in (big, *depthwise)]
    assert LearnedSelector(model_dir).select(problem, candidates) is candidates[1]
    options = [
        SplitK(kernel=kernel_info(n), sms=132, candidates=(1,), preferred=1) for n in (big, *depthwise)
    ]
    assert LearnedSelector(model_dir).select_launch(problem, options).kernel.name == depthwise[0]
    only_gemm = [Kernel(name=big)]
    assert LearnedSelector(model_dir).select(problem, only_gemm) is only_gemm[0]
