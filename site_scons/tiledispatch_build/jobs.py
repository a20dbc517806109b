"""Default parallelism: one job per core, but no more nvcc processes than memory can hold.

nvcc's peak memory grows with the instances in a unit. Measured with nvcc 13.0 on the implicit-GEMM template
(2025-11, tiny rule set, sm_90a): a 1-instance unit peaks at 2.1 GB resident, a 10-instance unit at 5.4 GB;
``memory_per_nvcc`` is that line, rounded up.
"""

from __future__ import annotations

import os

GIB = 1 << 30
MIB = 1 << 20
BASE_MEMORY = 2 * GIB
MEMORY_PER_INSTANCE = 400 * MIB


def memory_per_nvcc(chunk: int) -> int:
    """Peak resident memory of one nvcc compiling a unit of ``chunk`` instances."""
    return BASE_MEMORY + chunk * MEMORY_PER_INSTANCE


def default_jobs(cores: int, memory_bytes: int, chunk: int) -> int:
    return max(1, min(cores, memory_bytes // memory_per_nvcc(chunk)))


def machine_jobs(chunk: int) -> int:
    """``default_jobs`` for this machine (the cores this process may run on, its physical memory)."""
    cores = len(os.sched_getaffinity(0))
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return default_jobs(cores, memory, chunk)
