"""Stand-in for ``driver.build_api`` (docs/architecture.md §2): plan() and generate() over text rules.

A rule set is ``rulesets/<name>.txt`` with lines ``<direction> <dtype> <name> <template>``. Units are chunked
by content: a unit ends after a name whose hash is divisible by 3 (or at ``chunk`` names), and is named after
the hash of its first name, so adding a name touches only its own unit (or splits it).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from generators.name_filter import NameFilter


class GenerateRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    ruleset: str
    arch: str
    direction: str
    dtypes: list[str]
    ndims: list[int]
    legacy_dir: Path
    chunk: int = Field(ge=1)
    name_filter: NameFilter = NameFilter()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def collect_configs(request: GenerateRequest) -> list[tuple[str, str]]:
    root = Path(__file__).resolve().parents[1]
    # Logged so the tests can count enumerations (the build should enumerate a direction once per build).
    with (root / "enumerations.log").open("a") as log:
        log.write(f"{request.direction}\n")
    rules = root / "rulesets" / f"{request.ruleset}.txt"
    if not rules.is_file():
        raise ValueError(f"unknown rule set '{request.ruleset}'")
    found = []
    for line in rules.read_text().splitlines():
        direction, dtype, name, template = line.split()
        if direction == request.direction and dtype in request.dtypes and request.name_filter.keeps(name):
            found.append((name, template))
    return sorted(found)


def _units(request: GenerateRequest, instances: Sequence[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    units: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] = []
    for instance in instances:
        current.append(instance)
        if int(_digest(instance[0])[:8], 16) % 3 == 0 or len(current) == request.chunk:
            units.append(current)
            current = []
    if current:
        units.append(current)
    return units


def _files(request: GenerateRequest, instances: Sequence[tuple[str, str]]) -> dict[str, str]:
    direction = request.direction
    files: dict[str, str] = {}
    unit_ids = []
    for unit in _units(request, instances):
        unit_id = _digest(unit[0][0])[:8]
        unit_ids.append(unit_id)
        lines = [f'#include "kernels/{name}.hpp"' for name, _ in unit]
        lines += [f"// instance {name}" for name, _ in unit]
        lines.append(f"void add_unit_{direction}_{unit_id}() {{}}")
        files[f"unit_{direction}_{unit_id}.cu"] = "\n".join(lines) + "\n"
        for name, template in unit:
            files[f"kernels/{name}.hpp"] = (
                f'#pragma once\n#include "tiledispatch/kernels/{template}.hpp"\nstruct {name} {{}};\n'
            )
    calls = "".join(f"void add_unit_{direction}_{unit_id}();\n" for unit_id in unit_ids)
    files[f"register_{direction}.cpp"] = f"{calls}void register_{direction}_instances() {{}}\n"
    expected = sorted(name for name, _ in instances)
    files[f"expected_{direction}.txt"] = "".join(f"{name}\tinstance<{name}>\n" for name in expected)
    return files


def plan(request: GenerateRequest) -> list[str]:
    return plan_configs(request, collect_configs(request))


def plan_configs(request: GenerateRequest, configs: Sequence[tuple[str, str]]) -> list[str]:
    return sorted(_files(request, configs))


def generate(
    request: GenerateRequest, out_dir: Path, configs: Sequence[tuple[str, str]] | None = None
) -> list[str]:
    files = _files(request, collect_configs(request) if configs is None else configs)
    for relative, text in files.items():
        path = out_dir / relative
        if path.is_file() and path.read_text() == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(text)
        os.replace(temporary, path)
    return sorted(files)


ARCH_HEADER_PATH = "tiledispatch/generated/arch_traits.hpp"


def generate_arch_header(out_dir: Path) -> list[str]:
    """The arch header: ``generators/arch_spec.txt`` as a comment (the tests edit it)."""
    spec = (Path(__file__).resolve().parents[1] / "generators" / "arch_spec.txt").read_text()
    path = out_dir / ARCH_HEADER_PATH
    text = f"#pragma once\n// {spec.strip()}\n"
    if not (path.is_file() and path.read_text() == text):
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(text)
        os.replace(temporary, path)
    return [ARCH_HEADER_PATH]
