"""SCons tool: nvcc as the one compiler, archiver and linker, run by absolute path in a fixed environment.

Expects ``env['TD_TOOLCHAIN']`` (a resolved ``Toolchain``), ``env['TD_OPTIONS']``, ``env['TD_NVCC_SLOTS']``.
Absolute toolchain paths sit inside ``$( ... $)`` so they stay out of the signatures (a second checkout with
its own venv still hits the shared cache); the toolchain's identity enters every signature through ``varlist``
instead, so a new nvcc, host compiler or wheel recompiles everything. Header dependencies come from SCons' C
scanner over ``CPPPATH`` (``instances/include`` and the generated directory); the CuTe include directory is
passed with ``-isystem`` outside ``CPPPATH``: it belongs to the pinned wheel, whose version is in the
identity, and scanning it on every build would only slow no-op builds down.

Methods: ``env.TDObjects(sources, obj_dir)``, ``env.TDLibrary(target, objects)``,
``env.TDSharedLibrary(target, sources)``, ``env.TDProgram(target, sources, rpath=None)``,
``env.TDCompileDb(target)``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import SCons.Scanner.C
from SCons.Action import Action
from SCons.Builder import Builder
from SCons.Environment import Base as Environment
from SCons.Node import Node
from tiledispatch_build.flags import LINK_FLAGS, SHARED_LINK_FLAGS, compile_flags
from tiledispatch_build.options import BuildOptions
from tiledispatch_build.toolchain import HERMETIC_ENV, Toolchain

from generators.atomic_files import write_atomic

_TOOL = "$( $NVCC -ccbin $TD_HOST_COMPILER $)"
_SIGNATURE_VARS = ["TD_TOOLCHAIN_ID"]


def _compile_entries(env: Environment) -> list[tuple[Node, Node]]:
    return env["TD_COMPILES"]


def _limit(env: Environment, target: Node) -> None:
    """Give the compile one of ``TD_NVCC_SLOTS`` slots; SCons never runs two targets that share a side effect
    at once, so at most that many nvcc run together whatever ``-j`` is (MongoDB's task limiter). Slots go
    round-robin in declaration order, which is sorted, so the choice is deterministic; side effects are not
    part of any signature, so the slot a unit gets never causes a rebuild."""
    slot = len(_compile_entries(env)) % env["TD_NVCC_SLOTS"]
    env.SideEffect(env.Alias(f"td-nvcc-slot-{slot}"), target)


def _objects(env: Environment, sources: list, obj_dir: str) -> list[Node]:
    """One object per source, named after the source's stem, in ``obj_dir``."""
    objects = []
    for source in env.Flatten(sources):
        node = env.File(source)
        target = env.NvccObject(target=f"{obj_dir}/{Path(node.name).stem}.o", source=node)[0]
        _limit(env, target)
        _compile_entries(env).append((target, node))
        objects.append(target)
    return objects


def _library(env: Environment, target: str, objects: list) -> list[Node]:
    return env.NvccLibrary(target=target, source=env.Flatten(objects))


def _shared_library(env: Environment, target: str, sources: list) -> list[Node]:
    """A shared library from objects and static libraries (whole archives are not forced: every instance is
    reached through the register functions the C API calls)."""
    return env.NvccSharedLibrary(target=target, source=env.Flatten(sources))


def _program(env: Environment, target: str, sources: list, rpath: str | None = None) -> list[Node]:
    """An executable; ``rpath`` (relative to the executable, e.g. ``../lib``) finds the shared libraries."""
    flags = [f"-Xlinker=-rpath='$$ORIGIN/{rpath}'"] if rpath else []  # quoted: the shell must not expand it
    return env.NvccProgram(target=target, source=env.Flatten(sources), TD_RPATH_FLAGS=flags)


def _write_compile_db(target: list, source: list, env: Environment) -> None:
    directory = env.Dir("#").abspath
    entries = [
        {
            "directory": directory,
            "file": unit.path,
            "output": obj.path,
            "command": env.subst("$NVCCCOM", target=[obj], source=[unit]),
        }
        for obj, unit in sorted(_compile_entries(env), key=lambda entry: entry[1].path)
    ]
    write_atomic(Path(target[0].abspath), json.dumps(entries, indent=1) + "\n")


def _compile_db(env: Environment, target: str) -> list[Node]:
    # The database is rebuilt when the set of units or the flags change, not on every build.
    listing = "\n".join(sorted(unit.path for _, unit in _compile_entries(env)))
    key = hashlib.sha256((listing + env.subst("$NVCCFLAGS")).encode()).hexdigest()
    return env.Command(target, env.Value(key), Action(_write_compile_db, "compiledb $TARGET"))


def generate(env: Environment) -> None:
    toolchain: Toolchain = env["TD_TOOLCHAIN"]
    options: BuildOptions = env["TD_OPTIONS"]
    env["ENV"] = dict(HERMETIC_ENV)
    env.Replace(
        NVCC=str(toolchain.nvcc),
        TD_HOST_COMPILER=str(toolchain.host_compiler),
        TD_CUTE_INCLUDE=str(toolchain.cute_include),
        TD_CUDA_LIB_DIR=str(toolchain.cuda_lib_dir),
        TD_TOOLCHAIN_ID=hashlib.sha256(toolchain.identity.encode()).hexdigest(),
        NVCCFLAGS=compile_flags(options.arch),
        NVCCLINKFLAGS=list(LINK_FLAGS),
        INCPREFIX="-I",
        INCSUFFIX="",
        CPPPATH=["#instances/include", f"#{env['TD_GEN_DIR']}"],
        # The identity above stands for the toolchain; hashing the nvcc binary itself adds nothing.
        IMPLICIT_COMMAND_DEPENDENCIES=0,
        NVCCCOM=f"{_TOOL} $NVCCFLAGS $( -isystem $TD_CUTE_INCLUDE $) $_CPPINCFLAGS -c $SOURCE -o $TARGET",
        NVCCLIBCOM=f"{_TOOL} --lib -o $TARGET $SOURCES",
        NVCCLINKCOM=f"{_TOOL} -o $TARGET $SOURCES $( -L$TD_CUDA_LIB_DIR $) $NVCCLINKFLAGS $TD_RPATH_FLAGS",
        NVCCSHAREDLINKFLAGS=list(SHARED_LINK_FLAGS),
        NVCCSHLINKCOM=f"{_TOOL} -o $TARGET $SOURCES $( -L$TD_CUDA_LIB_DIR $) $NVCCSHAREDLINKFLAGS "
        "-Xlinker=-soname=${TARGET.file}",
        TD_RPATH_FLAGS=[],
        TD_COMPILES=[],
    )
    if not options.verbose:
        env.Replace(
            NVCCCOMSTR="nvcc $SOURCE.name",
            NVCCLIBCOMSTR="ar $TARGET.name",
            NVCCLINKCOMSTR="link $TARGET",
            NVCCSHLINKCOMSTR="link $TARGET",
        )
    env["BUILDERS"]["NvccObject"] = Builder(
        action=Action("$NVCCCOM", "$NVCCCOMSTR", varlist=_SIGNATURE_VARS),
        source_scanner=SCons.Scanner.C.CScanner(),
    )
    env["BUILDERS"]["NvccLibrary"] = Builder(
        action=Action("$NVCCLIBCOM", "$NVCCLIBCOMSTR", varlist=_SIGNATURE_VARS)
    )
    env["BUILDERS"]["NvccProgram"] = Builder(
        action=Action("$NVCCLINKCOM", "$NVCCLINKCOMSTR", varlist=_SIGNATURE_VARS)
    )
    env["BUILDERS"]["NvccSharedLibrary"] = Builder(
        action=Action("$NVCCSHLINKCOM", "$NVCCSHLINKCOMSTR", varlist=_SIGNATURE_VARS)
    )
    env.AddMethod(_objects, "TDObjects")
    env.AddMethod(_shared_library, "TDSharedLibrary")
    env.AddMethod(_library, "TDLibrary")
    env.AddMethod(_program, "TDProgram")
    env.AddMethod(_compile_db, "TDCompileDb")


def exists(env: Environment) -> bool:
    return "TD_TOOLCHAIN" in env
