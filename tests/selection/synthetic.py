"""A deterministic, learnable stand-in for GPU timings (what the fake profiler reports, the tests learn).

TFLOP/s = peak(dtype) x tile utilisation (M/N/K padding) x wave quantisation x occupancy x a tile-size and a
pipeline factor x (1 +- 4 % noise hashed from the key). Unsupported: the A/C vector does not divide its
channels. It only has to be structured (so a model can learn it) and reproducible (so tests can assert on
it)."""

from __future__ import annotations

import hashlib
import math

from generators.problem import ConvProblem
from heuristics.kernel_traits import kernel_traits

PEAK = {"fp16": 700.0, "bf16": 680.0, "fp32": 280.0}
SMS = 132


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _noise(*key: object) -> float:
    digest = hashlib.sha256(repr(key).encode()).digest()
    return int.from_bytes(digest[:4], "little") / 2**32


def supported(problem: ConvProblem, direction: str, kernel: str) -> bool:
    t = kernel_traits(kernel)
    cg, kg = problem.C // problem.G, problem.K // problem.G
    a_dim, c_dim = (cg, kg) if direction == "fwd" else (kg, cg)
    return a_dim % t.vector_a == 0 and c_dim % t.vector_c == 0


def tflops(problem: ConvProblem, direction: str, dtype: str, kernel: str, split_k: int = 1) -> float:
    t = kernel_traits(kernel)
    m, n, k = problem.gemm(direction)
    tiles_m, tiles_n, k_iter = _ceil_div(m, t.tile_m), _ceil_div(n, t.tile_n), _ceil_div(k, t.tile_k)
    util = (m / (tiles_m * t.tile_m)) * (n / (tiles_n * t.tile_n)) * (k / (k_iter * t.tile_k))
    blocks = tiles_m * tiles_n * problem.G * split_k
    waves = _ceil_div(blocks, SMS)
    quantisation = blocks / (waves * SMS)
    occupancy = min(1.0, blocks / SMS) ** 0.5
    tile_factor = (t.tile_m * t.tile_n / 16384) ** 0.12
    per_split = _ceil_div(k_iter, split_k)
    pipeline = {2: 1.05 if per_split < 8 else 0.85, 3: 1.0, 4: 1.08 if per_split >= 8 else 0.9}.get(
        t.pipeline, 0.95
    )
    two_stage = 0.97 if t.two_stage else 1.0
    noise = 1.0 + 0.08 * (_noise(problem.model_dump(), direction, dtype, kernel, split_k) - 0.5)
    value = PEAK[dtype] * util * quantisation * occupancy * tile_factor * pipeline * two_stage * noise
    return max(value, 1e-3)


def latency_ms(problem: ConvProblem, direction: str, dtype: str, kernel: str, split_k: int = 1) -> float:
    return problem.flops / (tflops(problem, direction, dtype, kernel, split_k) * 1e12) * 1e3


def log2_or_zero(value: float) -> float:
    return math.log2(value) if value > 0 else 0.0
