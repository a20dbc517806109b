"""Fixtures of the heuristics tests: kernel names of real rule sets, a fake profiler, synthetic sweep data."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from generators.enums import DataType, Direction
from generators.problem import ConvProblem
from heuristics.sweep_schema import SweepRow
from rulesets import RulesetRequest, enumerate_ruleset
from tests.selection import synthetic

REPO_ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


@cache
def ruleset_names(ruleset: str) -> tuple[str, ...]:
    """Every kernel name of a rule set, all directions, dtypes and ndims."""
    names = []
    for direction in Direction:
        for dtype in DataType:
            for ndim in (2, 3):
                request = RulesetRequest(ruleset=ruleset, direction=direction, dtype=dtype, ndim=ndim)
                names += [c.name for c in enumerate_ruleset(request).configs]
    return tuple(names)


def problems_small() -> list[ConvProblem]:
    """Twelve shapes spanning 1x1/3x3, strides, groups, depthwise and 3D."""
    p = ConvProblem
    return [
        p(name="a", N=8, C=256, K=256, Hi=56, Wi=56, Y=3, X=3, pad_h=1, pad_w=1),
        p(name="b", N=32, C=512, K=128, Hi=28, Wi=28, Y=1, X=1),
        p(name="c", N=1, C=64, K=64, Hi=8, Wi=8, Y=3, X=3, pad_h=1, pad_w=1),
        p(name="d", N=16, C=128, K=256, G=32, Hi=28, Wi=28, Y=3, X=3, pad_h=1, pad_w=1),
        p(name="e", N=4, C=256, K=512, Hi=14, Wi=14, Y=1, X=1, stride_h=2, stride_w=2),
        p(name="f", N=2, C=32, K=32, G=32, Hi=112, Wi=112, Y=3, X=3, pad_h=1, pad_w=1),
        p(name="g", N=4, C=64, K=128, Di=8, Hi=16, Wi=16, Z=3, Y=3, X=3, pad_d=1, pad_h=1, pad_w=1),
        p(name="h", N=64, C=128, K=128, Hi=28, Wi=28, Y=3, X=3, pad_h=1, pad_w=1),
        p(name="i", N=1, C=1024, K=1024, Hi=16, Wi=16, Y=1, X=1),
        p(name="j", N=8, C=96, K=200, Hi=30, Wi=30, Y=5, X=5, pad_h=2, pad_w=2, dilation_h=2, dilation_w=2),
        p(name="k", N=16, C=64, K=64, G=4, Hi=56, Wi=56, Y=7, X=7, pad_h=3, pad_w=3, stride_h=2, stride_w=2),
        p(name="l", N=2, C=256, K=64, Di=4, Hi=28, Wi=28, Z=1, Y=1, X=1),
    ]


def synthetic_rows(
    problems: list[ConvProblem],
    directions: tuple[str, ...],
    dtypes: tuple[str, ...],
    split_ks: tuple[int, ...] = (1,),
) -> list[SweepRow]:
    """What a sweep of ``default`` over ``problems`` reports under the synthetic timing model."""
    rows = []
    names = ruleset_names("default")
    for direction in directions:
        for dtype in dtypes:
            for index, p in enumerate(problems):
                prefix = (
                    f"grouped_conv_{direction}_{dtype}_{'ndhwgc_3d' if p.ndim_spatial == 3 else 'nhwgc_2d'}_"
                )
                for kernel in (n for n in names if n.startswith(prefix)):
                    ok = synthetic.supported(p, direction, kernel)
                    for split_k in split_ks if direction == "bwd_weight" and ok else (1,):
                        values = p.model_dump(exclude={"name"})
                        rows.append(
                            SweepRow(
                                kernel=kernel,
                                problem_idx=index,
                                direction=direction,
                                dtype=dtype,
                                split_k=split_k,
                                status="valid" if ok else "not_supported",
                                tflops=synthetic.tflops(p, direction, dtype, kernel, split_k) if ok else None,
                                latency_ms=synthetic.latency_ms(p, direction, dtype, kernel, split_k)
                                if ok
                                else None,
                                non_zero=ok,
                                **values,
                            )
                        )
    return rows


@pytest.fixture(scope="session")
def kernels_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("kernels") / "kernels.txt"
    path.write_text("\n".join(ruleset_names("default")) + "\n")
    return path


@pytest.fixture(scope="session")
def fake_profiler(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An executable that runs tests/selection/fake_profiler.py with this interpreter."""
    path = tmp_path_factory.mktemp("bin") / "tiledispatch_profiler"
    path.write_text(f'#!/bin/sh\nexec {sys.executable} {HERE / "fake_profiler.py"} "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def fake_env(kernels_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """Sets the fake profiler's environment; returns the call log it appends to (emptied)."""

    def apply(**behaviour: str) -> Path:
        log = tmp_path / "calls.log"
        log.unlink(missing_ok=True)
        state = tmp_path / "state"
        state.mkdir(exist_ok=True)
        monkeypatch.setenv("FAKE_KERNELS", str(kernels_file))
        monkeypatch.setenv("FAKE_LOG", str(log))
        monkeypatch.setenv("FAKE_STATE", str(state))
        for key in ("FAKE_CRASH_ONCE", "FAKE_CRASH", "FAKE_HANG"):
            monkeypatch.delenv(key, raising=False)
        for key, value in behaviour.items():
            monkeypatch.setenv(f"FAKE_{key.upper()}", value)
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
        return log

    return apply
