"""Build options: declared once as data, parsed and validated before any SCons environment exists.

Every option is a ``name=value`` pair on the scons command line. A misspelled name, a value outside the
accepted set or a malformed number stops the build with one line that names the bad input and what is accepted
(``OptionError``); the SConstruct turns it into exit status 2.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from generators.name_filter import NameFilter, parse_filters

RULESETS = ("tiny", "default", "tests", "profiler", "full", "full-tests")
ARCHES = ("sm_90a", "sm_80")
DIRECTIONS = ("fwd", "bwd_data", "bwd_weight")
DTYPES = ("fp16", "bf16", "fp32")
NDIMS = ("2", "3")
TOOLCHAINS = ("pinned", "system")
MAX_CHUNK = 25  # DESIGN decision 5: at most 25 instances per compilation unit
DEFAULT_LEGACY_DIR = "../shared/legacy/ck_builder_configs"

Ruleset = Literal["tiny", "default", "tests", "profiler", "full", "full-tests"]
Arch = Literal["sm_90a", "sm_80"]
DirectionName = Literal["fwd", "bwd_data", "bwd_weight"]
DTypeName = Literal["fp16", "bf16", "fp32"]


class OptionError(ValueError):
    """A bad command-line option; the message is the whole one-line explanation."""


class BuildOptions(BaseModel):
    """The validated build options. Lists keep the canonical order of their choices, without duplicates."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ruleset: Ruleset
    arch: Arch
    directions: tuple[DirectionName, ...] = Field(min_length=1)
    dtypes: tuple[DTypeName, ...] = Field(min_length=1)
    ndims: tuple[Literal[2, 3], ...] = Field(min_length=1)
    toolchain: Literal["pinned", "system"]
    cuda_root: Path | None
    legacy_dir: Path
    chunk: int = Field(ge=1, le=MAX_CHUNK)
    cache_dir: Path | None
    jobs: int | None = Field(ge=1)
    memory_gib: int | None = Field(ge=1)
    verbose: bool
    name_filter: NameFilter = NameFilter()

    @property
    def variant(self) -> str:
        """The build directory's name under ``build/``: one per rule set and arch."""
        return f"{self.ruleset}-{self.arch}"


Parser = Callable[[str, str], object]


@dataclass(frozen=True)
class OptionSpec:
    """One command-line option: its name, help line, default (as typed on the command line) and parser."""

    name: str
    metavar: str
    help: str
    default: str
    parse: Parser


def _choice(choices: tuple[str, ...]) -> Parser:
    def parse(name: str, text: str) -> str:
        if text not in choices:
            raise OptionError(f"bad value '{text}' for {name}; accepted: {', '.join(choices)}")
        return text

    return parse


def _choice_list(choices: tuple[str, ...]) -> Parser:
    def parse(name: str, text: str) -> tuple[str, ...]:
        items = [item.strip() for item in text.split(",") if item.strip()]
        if text.strip() == "all":
            return choices
        if not items:
            raise OptionError(
                f"empty value for {name}; accepted: all, or a comma list of {', '.join(choices)}"
            )
        for index, item in enumerate(items):
            if item not in choices:
                accepted = f"all, or a comma list of {', '.join(choices)}"
                raise OptionError(f"bad value '{item}' in {name}={text}; accepted: {accepted}")
            if item in items[:index]:
                raise OptionError(f"'{item}' given twice in {name}={text}; accepted: each value once")
        return tuple(choice for choice in choices if choice in items)

    return parse


def _int_range(low: int, high: int | None) -> Parser:
    def parse(name: str, text: str) -> int:
        accepted = f"an integer from {low} to {high}" if high is not None else f"an integer >= {low}"
        try:
            value = int(text)
        except ValueError:
            raise OptionError(f"bad value '{text}' for {name}; accepted: {accepted}") from None
        if value < low or (high is not None and value > high):
            raise OptionError(f"bad value '{text}' for {name}; accepted: {accepted}")
        return value

    return parse


def _auto_or_positive(name: str, text: str) -> int | None:
    return None if text == "auto" else _int_range(1, None)(name, text)


def _bool(name: str, text: str) -> bool:
    table = {"0": False, "no": False, "false": False, "1": True, "yes": True, "true": True}
    if text.lower() not in table:
        raise OptionError(f"bad value '{text}' for {name}; accepted: 0, 1, no, yes, false, true")
    return table[text.lower()]


def _text(name: str, text: str) -> str:
    return text


def _filters(name: str, text: str) -> tuple[str, ...]:
    try:
        return parse_filters(text, name)
    except ValueError as error:
        raise OptionError(str(error)) from None


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("ruleset", "NAME", f"rule set to build: {', '.join(RULESETS)}", "tiny", _choice(RULESETS)),
    OptionSpec("arch", "ARCH", f"GPU architecture: {', '.join(ARCHES)}", "sm_90a", _choice(ARCHES)),
    OptionSpec(
        "directions",
        "LIST",
        f"all, or a comma list of {', '.join(DIRECTIONS)}",
        "all",
        _choice_list(DIRECTIONS),
    ),
    OptionSpec("dtypes", "LIST", f"all, or a comma list of {', '.join(DTYPES)}", "all", _choice_list(DTYPES)),
    OptionSpec("ndims", "LIST", f"all, or a comma list of {', '.join(NDIMS)}", "all", _choice_list(NDIMS)),
    OptionSpec(
        "kernels",
        "FILTERS",
        "build only the instances whose names match one of these comma-separated filters, each parts of a "
        "name joined by '*' (CUTLASS_LIBRARY_KERNELS's rule: the parts in order), e.g. fwd_fp16*128x64x32; "
        "empty: all",
        "",
        _filters,
    ),
    OptionSpec(
        "exclude_kernels",
        "FILTERS",
        "then leave out the instances whose names match one of these filters (same rule), e.g. _2stage",
        "",
        _filters,
    ),
    OptionSpec(
        "toolchain",
        "KIND",
        "pinned: the CUDA wheels in this Python's site-packages; system: the CUDA install at cuda_root",
        "pinned",
        _choice(TOOLCHAINS),
    ),
    OptionSpec("cuda_root", "DIR", "CUDA install for toolchain=system (e.g. /usr/local/cuda)", "", _text),
    OptionSpec(
        "legacy_dir", "DIR", "CK Builder .conf files, relative to the repository", DEFAULT_LEGACY_DIR, _text
    ),
    OptionSpec(
        "chunk", "N", f"most instances per compilation unit (1 to {MAX_CHUNK})", "25", _int_range(1, 25)
    ),
    OptionSpec("cache_dir", "DIR", "shared build cache (SCons CacheDir); empty: no cache", "", _text),
    OptionSpec(
        "jobs",
        "N",
        "parallel jobs; auto: cores, capped by memory. -j N wins over both, but nvcc itself never runs more "
        "than memory / (2 GiB + 0.4 GiB x chunk) at once (12 GiB each at chunk=25), whatever -j says",
        "auto",
        _auto_or_positive,
    ),
    OptionSpec(
        "memory",
        "GIB",
        "memory the concurrent nvcc processes may use together, in GiB; auto: this machine's physical memory",
        "auto",
        _auto_or_positive,
    ),
    OptionSpec("verbose", "BOOL", "print full command lines instead of the short progress lines", "0", _bool),
)


def option_names() -> tuple[str, ...]:
    return tuple(spec.name for spec in OPTIONS)


def _unknown_option_error(name: str) -> OptionError:
    names = option_names()
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return OptionError(f"unknown option '{name}'{hint}; valid options: {', '.join(names)}")


def _cache_dir_problem(path: Path) -> str | None:
    """Why SCons could not keep a cache in ``path`` (None when it can): it must be a writable directory, or be
    creatable under the nearest existing parent."""
    if path.exists():
        if not path.is_dir():
            return "it is not a directory"
        return None if os.access(path, os.W_OK | os.X_OK) else "it is not writable"
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is not a directory"
    return None if os.access(parent, os.W_OK | os.X_OK) else f"{parent} is not writable"


def _legacy_dir(text: str, repo_root: Path) -> Path:
    if not text.strip():
        raise OptionError("empty value for legacy_dir; accepted: a directory of CK Builder .conf files")
    legacy_dir = _resolve(text, repo_root)
    # The legacy files are inputs of the generate step: a folder that holds build/ would make outputs inputs.
    if (repo_root / "build").resolve().is_relative_to(legacy_dir.resolve()):
        raise OptionError(
            f"bad value '{text}' for legacy_dir: it contains the build directory; "
            "accepted: a directory of CK Builder .conf files"
        )
    return legacy_dir


def _resolve(path_text: str, repo_root: Path) -> Path:
    path = Path(path_text).expanduser()
    return path if path.is_absolute() else repo_root / path


def parse_options(arguments: Mapping[str, str], repo_root: Path) -> BuildOptions:
    """Validate the command line's ``name=value`` pairs; raise ``OptionError`` on the first bad one."""
    for name in sorted(arguments):
        if name not in option_names():
            raise _unknown_option_error(name)
    values = {spec.name: spec.parse(spec.name, arguments.get(spec.name, spec.default)) for spec in OPTIONS}

    cuda_root_text = str(values["cuda_root"])
    if values["toolchain"] == "system" and not cuda_root_text:
        raise OptionError("toolchain=system needs cuda_root=DIR (e.g. cuda_root=/usr/local/cuda)")
    if values["toolchain"] == "pinned" and cuda_root_text:
        raise OptionError(
            f"cuda_root={cuda_root_text} applies only to toolchain=system; add toolchain=system"
        )
    cuda_root = _resolve(cuda_root_text, repo_root) if cuda_root_text else None
    if cuda_root is not None and not (cuda_root / "bin" / "nvcc").is_file():
        raise OptionError(
            f"bad value '{cuda_root_text}' for cuda_root; accepted: a CUDA install with bin/nvcc"
        )

    cache_text = str(values["cache_dir"])
    cache_dir = _resolve(cache_text, repo_root) if cache_text else None
    problem = _cache_dir_problem(cache_dir) if cache_dir is not None else None
    if problem is not None:
        accepted = "a writable directory"
        raise OptionError(f"bad value '{cache_text}' for cache_dir: {problem}; accepted: {accepted}")
    return BuildOptions(
        ruleset=values["ruleset"],
        arch=values["arch"],
        directions=values["directions"],
        dtypes=values["dtypes"],
        ndims=tuple(int(ndim) for ndim in values["ndims"]),
        toolchain=values["toolchain"],
        cuda_root=cuda_root,
        legacy_dir=_legacy_dir(str(values["legacy_dir"]), repo_root),
        chunk=values["chunk"],
        cache_dir=cache_dir,
        jobs=values["jobs"],
        memory_gib=values["memory"],
        verbose=values["verbose"],
        name_filter=NameFilter(kernels=values["kernels"], exclude_kernels=values["exclude_kernels"]),
    )


TARGETS = (
    ("generate", "write the generated headers, units, register files and expected instance lists"),
    ("instances", "the per-direction instance libraries and the runtime library"),
    ("profiler", "the profiler executable (default)"),
    ("lib", "libtiledispatch_<ruleset>.so: the C API over every instance (default; what Python loads)"),
    ("examples", "the C++ examples in examples/cpp, linked against the shared library"),
    ("check", "the profiler's --verify-instances against each expected_<dir>.txt (no GPU needed); links lib"),
    ("compiledb", "compile_commands.json in the build directory"),
)


def help_text() -> str:
    """What ``scons -h`` prints: every option with its default, then the targets."""
    width = max(len(f"{spec.name}={spec.metavar}") for spec in OPTIONS) + 2
    lines = ["tiledispatch build. Usage: scons [name=value ...] [target ...]", "", "Options:"]
    for spec in OPTIONS:
        default = spec.default if spec.default else "(empty)"
        lines.append(f"  {f'{spec.name}={spec.metavar}':<{width}}{spec.help} [default: {default}]")
    lines += ["", "Targets:"]
    lines += [f"  {name:<{width}}{text}" for name, text in TARGETS]
    lines += ["", "Outputs go to build/<ruleset>-<arch>/."]
    return "\n".join(lines) + "\n"
