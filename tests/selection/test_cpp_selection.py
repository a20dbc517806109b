"""The C++ selection headers agree with the Python side: kernel traits, features and scores, same inputs.

tests/selection/selection_check.cpp is compiled host-only with g++ (or $CXX) against instances/include.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from generators.problem import ConvProblem
from heuristics.features import FEATURE_NAMES, feature_vector
from heuristics.kernel_traits import kernel_traits
from heuristics.tree_model import Tree, TreeModel
from tests.selection.conftest import REPO_ROOT, problems_small, ruleset_names

HERE = Path(__file__).resolve().parent
PROBLEM_FIELDS = (
    "N",
    "C",
    "K",
    "G",
    "Di",
    "Hi",
    "Wi",
    "Z",
    "Y",
    "X",
    "stride_d",
    "stride_h",
    "stride_w",
    "pad_d",
    "pad_h",
    "pad_w",
    "dilation_d",
    "dilation_h",
    "dilation_w",
)


@pytest.fixture(scope="module")
def selection_check(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = os.environ.get("CXX") or shutil.which("g++") or shutil.which("clang++")
    if compiler is None:
        pytest.skip("no host C++ compiler (g++, clang++ or $CXX)")
    exe = tmp_path_factory.mktemp("cpp") / "selection_check"
    cmd = [
        compiler,
        "-std=c++17",
        "-O1",
        "-Wall",
        "-Wextra",
        "-Werror",
        f"-I{REPO_ROOT / 'instances' / 'include'}",
        str(HERE / "selection_check.cpp"),
        "-o",
        str(exe),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return exe


def cases() -> list[tuple[str, str, str, int, ConvProblem]]:
    """Every kernel of tiny (every feature family) and default, on problems of its ndim."""
    names = sorted({*ruleset_names("tiny"), *ruleset_names("default")})
    out = []
    for i, name in enumerate(names):
        t = kernel_traits(name)
        direction = (
            name.removeprefix("grouped_conv_").split("_fp")[0].split("_bf")[0].removesuffix("_depthwise")
        )
        dtype = next(d for d in ("fp16", "bf16", "fp32") if f"_{d}_" in name)
        ndim = 3 if "_3d_" in name else 2
        problems = [p for p in problems_small() if p.ndim_spatial == ndim]
        for j, p in enumerate(problems[i % 3 :: 3]):
            split_k = 1 + (i + j) % 3 if direction == "bwd_weight" else 1
            out.append((direction, dtype, name, split_k, p))
        assert t is not None
    return out


def random_model(rows: np.ndarray, trees: int, seed: int) -> TreeModel:
    """Trees whose thresholds are midpoints of observed values, so every branch is taken by some row."""
    rng = np.random.default_rng(seed)
    built = []
    for _ in range(trees):
        internal = 7
        features = rng.integers(0, rows.shape[1], size=internal)
        thresholds = []
        for f in features:
            values = np.unique(rows[:, f])
            k = rng.integers(0, max(1, len(values) - 1))
            thresholds.append(float((values[k] + values[min(k + 1, len(values) - 1)]) / 2))
        # A complete tree of depth 3: node i has children 2i+1, 2i+2; leaves are ~0 .. ~7.
        left = [2 * i + 1 if 2 * i + 1 < internal else ~(2 * i + 1 - internal) for i in range(internal)]
        right = [2 * i + 2 if 2 * i + 2 < internal else ~(2 * i + 2 - internal) for i in range(internal)]
        built.append(
            Tree(
                split_feature=tuple(int(f) for f in features),
                threshold=tuple(thresholds),
                left=tuple(left),
                right=tuple(right),
                leaf_value=tuple(rng.normal(size=8).tolist()),
            )
        )
    return TreeModel(direction="", feature_names=FEATURE_NAMES, trees=tuple(built))


def run_check(exe: Path, model_dir: Path, lines: list[str]) -> list[str]:
    done = subprocess.run(
        [str(exe), str(model_dir)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout.splitlines()


def input_line(direction: str, dtype: str, name: str, split_k: int, p: ConvProblem) -> str:
    return " ".join([direction, dtype, name, str(split_k), *(str(getattr(p, f)) for f in PROBLEM_FIELDS)])


def test_cpp_features_and_scores_equal_python(selection_check, tmp_path):
    all_cases = cases()
    rows = np.array([feature_vector(p, d, t, kernel_traits(n), s) for d, t, n, s, p in all_cases])
    model = random_model(rows, trees=40, seed=7)
    for direction in ("fwd", "bwd_data", "bwd_weight"):
        text = model.model_copy(update={"direction": direction}).to_text()
        (tmp_path / f"{direction}.trees").write_text(text)
    out = run_check(selection_check, tmp_path, [input_line(*c) for c in all_cases])
    assert len(out) == len(all_cases)
    expected = model.predict(rows)
    assert len(set(np.round(expected, 9))) > 20  # the model really separates the inputs
    for line, case, want_features, want_score in zip(out, all_cases, rows, expected, strict=True):
        assert line.startswith("ok "), (case[2], line)
        values = [float(v) for v in line.split()[1:]]
        assert values[1:] == want_features.tolist(), case[2]
        assert values[0] == pytest.approx(want_score, rel=1e-12, abs=1e-12), case[2]


def test_cpp_refuses_what_python_refuses(selection_check, tmp_path):
    p = problems_small()[0]
    bad = [
        "grouped_conv_fwd_fp16",
        "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_2x2x1",
        "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x16_bogus",
    ]
    out = run_check(selection_check, tmp_path, [input_line("fwd", "fp16", n, 1, p) for n in bad])
    assert all(line.startswith("bad") for line in out), out


def test_cpp_reports_a_missing_or_mismatched_model(selection_check, tmp_path):
    p = problems_small()[0]
    name = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x16"
    line = input_line("fwd", "fp16", name, 1, p)
    assert "cannot open" in run_check(selection_check, tmp_path, [line])[0]
    other = TreeModel(direction="fwd", feature_names=("a", "b"), trees=())
    (tmp_path / "fwd.trees").write_text(other.to_text())
    assert "feature list differs" in run_check(selection_check, tmp_path, [line])[0]


def test_cpp_scores_equal_python_with_the_committed_models(selection_check):
    """The models in heuristics/models, as the profiler's --select loads them: same score in both languages
    for every default fp16 2D kernel of each direction on the 2D problems (bwd_weight at two split-K)."""
    from heuristics.select import MODEL_DIR, load_checked_model

    lines, expected = [], []
    for direction in ("fwd", "bwd_data", "bwd_weight"):
        model = load_checked_model(MODEL_DIR / f"{direction}.trees")
        prefix = f"grouped_conv_{direction}_fp16_nhwgc_2d_"
        for name in (n for n in ruleset_names("default") if n.startswith(prefix)):
            for p in (p for p in problems_small() if p.ndim_spatial == 2):
                for split_k in (1, 8) if direction == "bwd_weight" else (1,):
                    lines.append(input_line(direction, "fp16", name, split_k, p))
                    row = feature_vector(p, direction, "fp16", kernel_traits(name), split_k)
                    expected.append(float(model.predict(np.asarray([row]))[0]))
    out = run_check(selection_check, MODEL_DIR, lines)
    assert len(out) == len(lines) > 500
    assert len(set(np.round(expected, 9))) > 100  # trained trees that separate the candidates
    for line, want in zip(out, expected, strict=True):
        assert line.startswith("ok "), line
        assert float(line.split()[1]) == pytest.approx(want, rel=1e-12, abs=1e-12)
