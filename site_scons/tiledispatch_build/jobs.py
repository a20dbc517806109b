"""Default parallelism: one job per core, but no more nvcc processes than memory can hold."""

from __future__ import annotations

import os

GIB = 1 << 30
MEMORY_PER_NVCC = 3 * GIB  # a CuTe-heavy unit peaks at about this much resident memory


def default_jobs(cores: int, memory_bytes: int, per_job_bytes: int = MEMORY_PER_NVCC) -> int:
    return max(1, min(cores, memory_bytes // per_job_bytes))


def machine_jobs() -> int:
    """``default_jobs`` for this machine (the cores this process may run on, its physical memory)."""
    cores = len(os.sched_getaffinity(0))
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return default_jobs(cores, memory)
