"""Parallelism: one job per core by default, and never more nvcc processes than memory can hold.

``default_jobs`` is the ``-j`` used when the command line gives none. ``nvcc_slots`` bounds the nvcc processes
whatever ``-j`` says (a user's ``-j16`` on a 24 GiB machine would otherwise start 16 nvcc of up to 12 GB):
td_nvcc gives each compile one of that many slots and SCons never runs two compiles of one slot together.

nvcc's peak memory grows with the instances in a unit. ``memory_per_nvcc`` is the line first measured with
nvcc 13.0 on the first-generation template (a 1-instance unit at 2.1 GB resident, a 10-instance unit at
5.4 GB), rounded up. On today's Hopper kernels (docs/performance.md, "Compile time with the TMA stores") units
peak at 1.1-1.2 GiB for one instance and 3.6-6.3 GiB for the 25 a unit holds, under the line's 11.8 GiB.
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


def nvcc_slots(memory_bytes: int, chunk: int) -> int:
    """How many nvcc processes may run at once within ``memory_bytes`` (at least one)."""
    return max(1, memory_bytes // memory_per_nvcc(chunk))


def default_jobs(cores: int, memory_bytes: int, chunk: int) -> int:
    return min(cores, nvcc_slots(memory_bytes, chunk))


def machine_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0))


def machine_memory() -> int:
    """This machine's physical memory in bytes."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
