"""SCons tool: one generate step per direction, with every output declared before the build starts.

The emitter asks ``driver.build_api.plan(request)`` for the relative paths the generator will write
(headers, units, register file, expected list) and declares them all as targets of one node; the action calls
``driver.build_api.generate(request, out_dir, configs)`` in-process and checks it wrote exactly the plan.
When the emitter had to enumerate the rule set (plan not memoized), it hands those configurations to the
action through the target node, so a rule change costs one enumeration, not two. The generator's own
sources and templates, the driver, the rule sets, the legacy .conf files and the versions of the Python
packages the generator runs on are sources of that node, so any of them changing reruns the generator; the
generator leaves files whose bytes would not change untouched (the targets are Precious, so SCons does not
delete them first), and only units whose content changed recompile.

The arch header (``build_api.ARCH_HEADER_PATH`` under the generated directory: ``ArchTraits<Arch>`` for every
arch, rendered from ``generators/arch.py``) is one more node, written by ``build_api.generate_arch_header``;
its sources are the generator's own files and package versions, so editing an arch spec rewrites it, and the C
scanner (the generated directory is an include root) recompiles exactly the units whose kernels include it.

The selection models (``heuristics/models/<direction>.trees``) are one more generated source,
``embedded_models.cpp`` (``generators.embedded_models``), compiled into the runtime library so that the C API
ranks kernels with them without reading a file; it depends on the three model files and the renderer.

Methods: ``env.TDGenerate(direction) -> list of output nodes``, ``env.TDArchHeader() -> [header node]``,
``env.TDEmbeddedModels() -> [source node]``.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType

import SCons.Node.Python
from SCons.Action import Action
from SCons.Builder import Builder
from SCons.Environment import Base as Environment
from SCons.Node import Node
from SCons.Script import Exit
from tiledispatch_build.options import DIRECTIONS, BuildOptions
from tiledispatch_build.plan_memo import PlanMemo, load_memo, outputs_intact, record_outputs, save_memo

from generators.atomic_files import remove_stale_temporaries

# Folders of the repository whose content decides what the generator writes.
GENERATOR_INPUT_DIRS = ("driver", "generators", "rulesets")
GENERATOR_PACKAGES = ("pydantic", "pydantic-core", "jinja2", "markupsafe")


class GenerationMismatchError(RuntimeError):
    """generate() wrote a different file set than plan() declared."""


@dataclass(frozen=True)
class Enumerated:
    """A direction's configurations as the emitter enumerated them, with the digest of the inputs they came
    from."""

    key: str
    configs: tuple


def _build_api(env: Environment) -> ModuleType:
    return env["TD_BUILD_API"]


def _request_of(env: Environment, source: list):
    return _build_api(env).GenerateRequest.model_validate_json(source[0].read())


def _inputs_digest(source: list) -> str:
    """Digest of what ``plan`` depends on: the request, package versions and every input file's bytes."""
    digest = hashlib.sha256()
    for node in source:
        if isinstance(node, SCons.Node.Python.Value):
            digest.update(str(node.read()).encode())
        else:
            digest.update(node.abspath.encode())
            digest.update(hashlib.sha256(Path(node.abspath).read_bytes()).digest())
    return digest.hexdigest()


def _memo_path(env: Environment, direction: str) -> Path:
    return Path(env.Dir(env["TD_BUILD_DIR"]).abspath) / f"plan_{direction}.json"


def _memoized_plan(env: Environment, request, source: list) -> tuple[list[str], Enumerated | None, bool]:
    """``plan(request)``, remembered in the build directory under the digest of its inputs
    (``tiledispatch_build.plan_memo``), and whether the generated files are still as the last generate
    action left them.

    Enumerating a rule set can take seconds, and the emitter runs on every build, no-op ones included; plan is
    a pure function of the generate node's sources, so an unchanged digest gives the same answer. When the
    plan has to be computed, the enumerated configurations come back too, for the generate action of the same
    build (one enumeration per build, not one for plan and one for generate). A missing or corrupt memo is a
    cache miss, never an error.
    """
    path = _memo_path(env, request.direction)
    remove_stale_temporaries(path.parent)
    key = _inputs_digest(source)
    memo = load_memo(path)
    if memo is not None and memo.key == key:
        return list(memo.plan), None, outputs_intact(memo, Path(env.Dir(env["TD_GEN_DIR"]).abspath))
    api = _build_api(env)
    configs = tuple(api.collect_configs(request))
    planned = list(api.plan_configs(request, configs))
    save_memo(path, PlanMemo(key=key, plan=tuple(planned)))
    return planned, Enumerated(key=key, configs=configs), False


def _emitter(target: list, source: list, env: Environment) -> tuple[list, list]:
    request = _request_of(env, source)
    try:
        planned, enumerated, intact = _memoized_plan(env, request, source)
    except (ValueError, OSError) as error:
        # Bad input (rule set, legacy file) or an unwritable build directory gets one line, never a traceback.
        print(f"scons: *** generate {request.direction}: {error}", file=sys.stderr)
        Exit(2)
    gen_dir = env["TD_GEN_DIR"]
    outputs = [env.File(f"{gen_dir}/{relative}") for relative in planned]
    # The node carries the enumeration to the action: per-build state, never module-level.
    outputs[0].attributes.td_enumerated = enumerated
    if not intact:
        # A generated file was deleted, truncated or edited, or the last generate action never finished
        # (killed): SCons would not notice from the sources, so the generate step runs again. It rewrites
        # only the files whose bytes differ, so only their units recompile.
        env.AlwaysBuild(outputs)
    return outputs, source


def _handed_configs(target: list, source: list) -> tuple | None:
    """The emitter's configurations if their digest is still that of the sources; ``None`` (generate then
    enumerates itself) when the plan came from the memo or an input changed while the build ran."""
    enumerated = getattr(target[0].attributes, "td_enumerated", None)
    if enumerated is None or enumerated.key != _inputs_digest(source):
        return None
    return enumerated.configs


def _generate(target: list, source: list, env: Environment) -> int:
    request = _request_of(env, source)
    out_dir = Path(env.Dir(env["TD_GEN_DIR"]).abspath)
    written = sorted(_build_api(env).generate(request, out_dir, _handed_configs(target, source)))
    declared = sorted(Path(node.abspath).relative_to(out_dir).as_posix() for node in target)
    if written != declared:
        extra = sorted(set(written) - set(declared))
        missing = sorted(set(declared) - set(written))
        raise GenerationMismatchError(f"generate() differs from plan(): extra {extra}, missing {missing}")
    # Recorded last: a generate action killed before this line leaves a memo without outputs, and the next
    # build generates again.
    memo = PlanMemo(
        key=_inputs_digest(source), plan=tuple(declared), outputs=record_outputs(out_dir, declared)
    )
    save_memo(_memo_path(env, request.direction), memo)
    return 0


def _input_files(env: Environment, legacy_dir: Path) -> list[Node]:
    root = Path(env.Dir("#").abspath)
    files = [path for folder in GENERATOR_INPUT_DIRS for path in (root / folder).rglob("*")]
    if legacy_dir.is_dir():
        # Only what the generator reads: the .conf files (a stray folder of other things is not an input).
        files += legacy_dir.rglob("*.conf")
    wanted = sorted(path for path in files if path.is_file() and "__pycache__" not in path.parts)
    return [env.File(str(path)) for path in wanted]


def _package_versions() -> str:
    versions = [f"python {sys.version.split()[0]}"]
    versions += [f"{name}=={metadata.version(name)}" for name in GENERATOR_PACKAGES]
    return "\n".join(versions)


def _request(env: Environment, direction: str):
    """The generator request for one direction; a direction left out of ``directions=`` gets no dtypes, so its
    register file and expected list are generated empty (the profiler links all three register functions)."""
    options: BuildOptions = env["TD_OPTIONS"]
    selected = direction in options.directions
    try:
        return _build_api(env).GenerateRequest(
            ruleset=options.ruleset,
            arch=options.arch,
            direction=direction,
            dtypes=list(options.dtypes) if selected else [],
            ndims=list(options.ndims),
            legacy_dir=options.legacy_dir,
            chunk=options.chunk,
            name_filter=options.name_filter.model_dump(),
        )
    except ValueError as error:
        print(f"scons: *** generate {direction}: {' '.join(str(error).split())}", file=sys.stderr)
        Exit(2)


def _generate_method(env: Environment, direction: str) -> list[Node]:
    request = _request(env, direction)
    sources = [
        env.Value(request.model_dump_json()),
        env.Value(_package_versions()),
        *_input_files(env, Path(request.legacy_dir)),
    ]
    outputs = env.TDGenerateBuilder(
        target=f"$TD_GEN_DIR/expected_{request.direction}.txt",
        source=sources,
        TD_GENERATE_LABEL=request.direction,
    )
    env.Precious(outputs)
    env.Alias("generate", outputs)
    return outputs


def _generate_arch_header(target: list, source: list, env: Environment) -> int:
    out_dir = Path(env.Dir(env["TD_GEN_DIR"]).abspath)
    written = _build_api(env).generate_arch_header(out_dir)
    declared = [Path(target[0].abspath).relative_to(out_dir).as_posix()]
    if written != declared:
        raise GenerationMismatchError(f"generate_arch_header() wrote {written}, declared {declared}")
    return 0


def _arch_header_method(env: Environment) -> list[Node]:
    root = Path(env.Dir("#").abspath)
    # The arch specs (generators/) and the call that writes them (the driver's build API).
    files = [path for folder in ("driver", "generators") for path in (root / folder).rglob("*")]
    generator_files = sorted(path for path in files if path.is_file() and "__pycache__" not in path.parts)
    header = env.TDArchHeaderBuilder(
        target=f"$TD_GEN_DIR/{_build_api(env).ARCH_HEADER_PATH}",
        source=[env.Value(_package_versions()), *(env.File(str(path)) for path in generator_files)],
    )
    env.Precious(header)
    env.Alias("generate", header)
    return header


def _write_embedded_models(target: list, source: list, env: Environment) -> int:
    embed = importlib.import_module("generators.embedded_models")
    embed.write_embedded_models(Path(env.Dir("#heuristics/models").abspath), Path(target[0].abspath))
    return 0


def _embedded_models_method(env: Environment) -> list[Node]:
    root = Path(env.Dir("#").abspath)
    models = [root / "heuristics" / "models" / f"{direction}.trees" for direction in DIRECTIONS]
    renderer = [root / "generators" / "embedded_models.py"]
    source = env.TDEmbeddedModelsBuilder(
        target="$TD_GEN_DIR/embedded_models.cpp",
        source=[env.File(str(path)) for path in [*models, *renderer] if path.is_file()],
    )
    env.Alias("generate", source)
    return source


def generate(env: Environment) -> None:
    # The build runs the driver's build API in-process; site_scons/site_init.py keeps the repository root on
    # sys.path for the whole build (SCons restores sys.path after reading the SConstruct and each tool).
    try:
        env["TD_BUILD_API"] = importlib.import_module("driver.build_api")
    except ImportError as error:
        print(f"scons: *** the generator API is not importable: {error}", file=sys.stderr)
        Exit(2)
    env["BUILDERS"]["TDGenerateBuilder"] = Builder(
        action=Action(_generate, "generate $TD_GENERATE_LABEL"), emitter=_emitter
    )
    env.AddMethod(_generate_method, "TDGenerate")
    env["BUILDERS"]["TDArchHeaderBuilder"] = Builder(
        action=Action(_generate_arch_header, "generate arch header")
    )
    env.AddMethod(_arch_header_method, "TDArchHeader")
    env["BUILDERS"]["TDEmbeddedModelsBuilder"] = Builder(
        action=Action(_write_embedded_models, "generate embedded selection models")
    )
    env.AddMethod(_embedded_models_method, "TDEmbeddedModels")


def exists(env: Environment) -> bool:
    return True
