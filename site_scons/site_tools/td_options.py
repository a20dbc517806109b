"""SCons tool: build settings that follow from the validated options.

Expects ``env['TD_OPTIONS']`` (a ``BuildOptions``, validated by the SConstruct before the environment exists).
Sets the build directories, pins the signature database inside the build directory, chooses content signatures
with timestamp short-cuts (fast no-op builds), the shared cache, the default parallelism and the nvcc slots.
"""

from __future__ import annotations

from pathlib import Path

from SCons.Environment import Base as Environment
from SCons.Script import GetOption, SetOption
from tiledispatch_build.jobs import GIB, default_jobs, machine_cores, machine_memory, nvcc_slots
from tiledispatch_build.options import BuildOptions


def _apply_jobs(env: Environment, options: BuildOptions) -> None:
    """Set -j unless the command line gave one (SetOption never overrides a command-line value), and the
    number of nvcc slots, which holds whatever -j is."""
    memory = options.memory_gib * GIB if options.memory_gib else machine_memory()
    env["TD_NVCC_SLOTS"] = nvcc_slots(memory, options.chunk)
    wanted = options.jobs or default_jobs(machine_cores(), memory, options.chunk)
    before = GetOption("num_jobs")
    SetOption("num_jobs", before + 1)
    if GetOption("num_jobs") == before + 1:
        SetOption("num_jobs", wanted)


def generate(env: Environment) -> None:
    options: BuildOptions = env["TD_OPTIONS"]
    build_dir = f"build/{options.variant}"
    env.Replace(
        TD_BUILD_DIR=build_dir,
        TD_GEN_DIR=f"{build_dir}/gen",
        TD_OBJ_DIR=f"{build_dir}/obj",
        TD_LIB_DIR=f"{build_dir}/lib",
    )
    # Created here so that SCons does not announce the directory it makes for its signature database.
    Path(env.Dir(build_dir).abspath).mkdir(parents=True, exist_ok=True)
    env.SConsignFile(f"{build_dir}/sconsign")
    # Content signatures only. With "content-timestamp", files rewritten in place during a build (generator
    # Precious outputs, objects) were sometimes judged by a timestamp read before the rewrite, and dependents
    # were not rebuilt (flaky in tests/build, SCons issue 2980); hashing costs little for these sizes.
    env.Decider("content")
    if options.cache_dir is not None:
        env.CacheDir(str(options.cache_dir))
    _apply_jobs(env, options)


def exists(env: Environment) -> bool:
    return "TD_OPTIONS" in env
