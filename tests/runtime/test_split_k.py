"""auto_split_k (runtime/split_k.hpp), the split-K factors a bwd_weight run tries when none is given, and
one_wave_split_k, the one a run takes when the caller leaves it to the library: compiled on the host and asked
about a grid of output-tile counts, GEMM K lengths and SM counts. CPU only."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from tests.nvcc_cache import compile_cached, find_nvcc

REPO_ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().parent / "fixtures" / "split_k_driver.cpp"
HEADER = REPO_ROOT / "instances" / "include" / "tiledispatch" / "runtime" / "split_k.hpp"
SM_COUNTS = (132, 114, 78)  # H100 SXM, H100 PCIe, a smaller part
LONG_K = 1 << 22
MIN_SPLIT_K = 256
MAX_SPLIT_K = 64


@pytest.fixture(scope="module")
def split_k_answers():
    """The compiled driver: for each (tiles, gemm_k, sms) query, (auto_split_k's factors, the preferred)."""
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("no nvcc found (pinned wheel, $TD_NVCC, /usr/local/cuda)")
    flags = ["-std=c++17", "-O1", "-cudart=none", "-I", str(REPO_ROOT / "instances" / "include")]
    content = DRIVER.read_bytes() + HEADER.read_bytes() + " ".join(flags).encode()
    out_dir = REPO_ROOT / "build" / "test-runtime" / f"split_k-{hashlib.sha256(content).hexdigest()[:16]}"
    exe = compile_cached(nvcc, [DRIVER], flags, out_dir, "split_k")

    def ask(
        queries: list[tuple[int, int, int]], min_per_split: int = MIN_SPLIT_K
    ) -> list[tuple[list[int], int]]:
        stdin = "".join(f"{t} {k} {s} {min_per_split}\n" for t, k, s in queries)
        out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout
        answers = [line.split("|") for line in out.splitlines()]
        return [([int(x) for x in factors.split()], int(preferred)) for factors, preferred in answers]

    return ask


@pytest.fixture(scope="module")
def split_k_factors(split_k_answers):
    return lambda queries, min_per_split=MIN_SPLIT_K: [f for f, _ in split_k_answers(queries, min_per_split)]


def fill(units: int, sms: int) -> float:
    """The fraction of the SMs' rounds that does work, for a persistent grid of `units` equal work units."""
    rounds = -(-units // sms)
    return units / (rounds * sms)


def test_factors_start_at_one_increase_and_respect_the_limits(split_k_factors) -> None:
    queries = [(t, k, s) for t in (1, 3, 9, 36, 97, 400) for k in (300, 5_000, LONG_K) for s in SM_COUNTS]
    for (tiles, gemm_k, sms), factors in zip(queries, split_k_factors(queries), strict=True):
        assert factors[0] == 1, (tiles, gemm_k, sms, factors)
        assert factors == sorted(set(factors)), factors
        split = factors[1:]
        assert all(k <= MAX_SPLIT_K and gemm_k // k >= MIN_SPLIT_K for k in split), (tiles, gemm_k, factors)


def test_short_reductions_are_not_split(split_k_factors) -> None:
    assert split_k_factors([(9, 2 * MIN_SPLIT_K - 1, 132)]) == [[1]]


def test_some_factor_fills_the_sms(split_k_factors) -> None:
    """Where at most half the SMs would hold a tile (and the largest factor can fill them), one of the
    factors keeps 85 % of the rounds busy: powers of two alone leave 9 tiles at 55 % (16 x 9 = 144 units,
    two rounds on 132 SMs) or 73 % (32)."""
    queries = [(t, LONG_K, s) for s in SM_COUNTS for t in range(-(-s // MAX_SPLIT_K), s // 2 + 1)]
    for (tiles, _, sms), factors in zip(queries, split_k_factors(queries), strict=True):
        best = max(fill(tiles * k, sms) for k in factors)
        assert best >= 0.85, (tiles, sms, factors, best)


def test_doublings_below_two_waves_are_still_tried(split_k_factors) -> None:
    (factors,) = split_k_factors([(9, LONG_K, 132)])
    assert {2, 4, 8, 16, 32} <= set(factors), factors


def test_coarse_units_set_their_own_minimum(split_k_factors) -> None:
    """The direct merged-group kernel counts its GEMM K in steps (whole pixel tiles) and asks for two a split:
    32 steps (a 7x7 layer at N = 32) split up to 16 ways, where 32 x 49 pixels counted against 256 would stop
    at 6."""
    (factors,) = split_k_factors([(32, 32, 132)], min_per_split=2)
    assert max(factors) == 16 and {2, 4, 8, 16} <= set(factors), factors
    (pixels,) = split_k_factors([(32, 32 * 49, 132)])
    assert max(pixels) <= 6, pixels


def test_the_preferred_factor_is_the_largest_candidate_that_fits_one_round(split_k_answers) -> None:
    queries = [
        (t, k, s)
        for t in (1, 2, 3, 9, 36, 97, 131, 132, 400)
        for k in (300, 5_000, LONG_K)
        for s in SM_COUNTS
    ]
    for (tiles, gemm_k, sms), (factors, preferred) in zip(queries, split_k_answers(queries), strict=True):
        assert preferred in factors, (tiles, gemm_k, sms, factors, preferred)
        assert preferred == 1 or tiles * preferred <= sms, (tiles, sms, preferred)
        assert all(tiles * k > sms for k in factors if k > preferred), (tiles, sms, factors, preferred)


def test_the_preferred_factor_by_hand(split_k_answers) -> None:
    """9 tiles on 132 SMs: 14 splits make 126 units in one round (16 would need two); 400 tiles already fill
    three rounds: no split; a 512-element reduction on 9 tiles: at most 2 splits of 256."""
    answers = split_k_answers([(9, LONG_K, 132), (400, LONG_K, 132), (9, 512, 132), (1, LONG_K, 132)])
    assert [preferred for _, preferred in answers] == [14, 1, 2, MAX_SPLIT_K]
