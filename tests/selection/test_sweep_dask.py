"""The sweep on a Dask cluster (a local one, in-process workers, each holding one GPU resource)."""

from __future__ import annotations

import pytest

from heuristics.sweep import run_sweep
from heuristics.sweep_schema import read_sweep
from tests.selection.conftest import problems_small
from tests.selection.test_sweep import calls, config

distributed = pytest.importorskip(
    "distributed", reason="dask distributed is not installed (requirements.txt)"
)


def test_dask_sweep_matches_the_local_sweep(fake_profiler, fake_env, tmp_path):
    fake_env()
    local = tmp_path / "local.csv"
    run_sweep(config(fake_profiler, local), report=lambda _: None)

    log = fake_env(crash_once="e")
    remote = tmp_path / "dask.csv"
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, resources={"GPU": 1}, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        summary = run_sweep(config(fake_profiler, remote), client=client, report=lambda _: None)
    assert summary.backend == "dask" and summary.failed_batches == 0
    # Every batch ran in its own profiler process; the crashed one ran twice.
    assert len(calls(log)) == 5 + 1
    assert sorted(r.model_dump_json() for r in read_sweep([remote])) == sorted(
        r.model_dump_json() for r in read_sweep([local])
    )


def test_dask_sweep_resumes_a_partial_file(fake_profiler, fake_env, tmp_path):
    fake_env()
    out = tmp_path / "dask.csv"
    half = config(fake_profiler, out, problems={"fwd": tuple(problems_small()[:2])})
    run_sweep(half, report=lambda _: None)
    log = fake_env()
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, resources={"GPU": 1}, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        run_sweep(
            config(fake_profiler, out, problems={"fwd": tuple(problems_small()[:4])}),
            client=client,
            report=lambda _: None,
        )
    assert [c[3:] for c in calls(log)] == [["c", "d"]]
    assert {r.problem_idx for r in read_sweep([out])} == {0, 1, 2, 3}
