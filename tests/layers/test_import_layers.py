"""The Python packages are layers: driver -> rulesets -> generators, and no import goes the other way.

Every import statement of every project module is read with ``ast`` (module level, inside functions, under
``if TYPE_CHECKING``, and ``importlib.import_module("...")`` with a literal name: all of them count), and
resolved to the project module it loads. Two properties are checked (docs/architecture.md, "Layers"):

- ``generators`` imports only ``generators``, ``rulesets`` only ``generators`` and ``rulesets``, ``driver``
  only those two and itself; the one exception is ``generators/__main__.py``, the thin entry point of
  ``python -m generators``, which imports ``driver.cli`` and which nothing imports;
- there is no import cycle among the project's modules (``driver``, ``generators``, ``rulesets``,
  ``heuristics``, the runtime package ``tiledispatch`` and the SCons side: ``tiledispatch_build`` and the
  site tools).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SITE_TOOLS = REPO_ROOT / "site_scons" / "site_tools"
# (folder that is on sys.path, packages or modules under it that belong to the project)
SOURCE_ROOTS: tuple[tuple[Path, tuple[str, ...]], ...] = (
    (REPO_ROOT, ("driver", "generators", "rulesets", "heuristics")),
    (REPO_ROOT / "dispatcher", ("tiledispatch",)),
    (REPO_ROOT / "site_scons", ("tiledispatch_build",)),
    (SITE_TOOLS, tuple(sorted(path.stem for path in SITE_TOOLS.glob("*.py")))),
)
ALLOWED: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "generators": frozenset({"generators"}),
        "rulesets": frozenset({"generators", "rulesets"}),
        "driver": frozenset({"generators", "rulesets", "driver"}),
    }
)
ENTRY_POINT = "generators.__main__"
ENTRY_POINT_TARGET = "driver.cli"


@dataclass(frozen=True)
class Module:
    name: str
    path: Path

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def package(self) -> str:
        """The package relative imports start from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def discover(roots: tuple[tuple[Path, tuple[str, ...]], ...]) -> dict[str, Module]:
    """Every module under ``roots``, by dotted name."""
    modules: dict[str, Module] = {}
    for root, tops in roots:
        for top in tops:
            single = root / f"{top}.py"
            if single.is_file():
                modules[top] = Module(top, single)
                continue
            for path in sorted((root / top).rglob("*.py")):
                parts = path.relative_to(root).with_suffix("").parts
                name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
                modules[name] = Module(name, path)
    return modules


def _longest_known(name: str, modules: Mapping[str, Module]) -> str | None:
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def _imported_names(module: Module) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """(line, dotted module, names taken from it) for every import the file makes, wherever it sits."""
    tree = ast.parse(module.path.read_text(), filename=str(module.path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.package.split(".")
                anchor = ".".join(package[: len(package) - (node.level - 1)])
                base = f"{anchor}.{base}" if base else anchor
            yield node.lineno, base, tuple(alias.name for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.lineno, node.args[0].value, ()


def import_graph(modules: Mapping[str, Module]) -> dict[str, dict[str, int]]:
    """module -> {project module it imports: line of the first such import}."""
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for name, module in modules.items():
        for line, base, taken in _imported_names(module):
            # ``from pkg import sub`` loads the submodule ``pkg.sub`` when there is one.
            targets = [f"{base}.{t}" if f"{base}.{t}" in modules else base for t in taken] or [base]
            for target in targets:
                known = _longest_known(target, modules)
                if known is not None and known != name:
                    graph[name].setdefault(known, line)
    return graph


def cycles(graph: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def upward_imports(graph: Mapping[str, Mapping[str, int]], modules: Mapping[str, Module]) -> list[str]:
    """``file.py:line: a imports b`` for every import that leaves the allowed layers."""
    found = []
    for name, targets in sorted(graph.items()):
        top = name.split(".")[0]
        if top not in ALLOWED:
            continue
        for target, line in sorted(targets.items()):
            if name == ENTRY_POINT and target == ENTRY_POINT_TARGET:
                continue
            if target.split(".")[0] not in ALLOWED[top]:
                found.append(f"{modules[name].path.name}:{line}: {name} imports {target}")
    return found


Project = tuple[dict[str, Module], dict[str, dict[str, int]]]


@pytest.fixture(scope="module")
def project() -> Project:
    modules = discover(SOURCE_ROOTS)
    return modules, import_graph(modules)


def test_every_layer_is_found(project: Project) -> None:
    modules, graph = project
    assert {"driver.cli", "driver.build_api", "generators.config", "rulesets.space", "td_generate"} <= set(
        modules
    )
    # The resolver sees lazy and string imports: the SCons tool loads the driver's build API by name.
    assert "driver.build_api" in graph["td_generate"]
    assert graph[ENTRY_POINT] == {ENTRY_POINT_TARGET: graph[ENTRY_POINT][ENTRY_POINT_TARGET]}


def test_no_upward_imports(project: Project) -> None:
    modules, graph = project
    assert upward_imports(graph, modules) == []


def test_nothing_imports_the_entry_point(project: Project) -> None:
    _, graph = project
    assert [name for name, targets in graph.items() if ENTRY_POINT in targets] == []


def test_no_import_cycles(project: Project) -> None:
    _, graph = project
    assert cycles(graph) == []


def test_the_checks_catch_a_cycle_and_an_upward_import(tmp_path: Path) -> None:
    """The checker on a made-up tree: a lazy import that closes a circle, and generators importing up."""
    files = {
        "generators/__init__.py": "",
        "generators/config.py": "def name():\n    from generators.naming import spell\n    return spell()\n",
        "generators/naming.py": "from generators.config import name\n",
        "generators/emit.py": "from . import config\nimport rulesets.space\n",
        "rulesets/__init__.py": "",
        "rulesets/space.py": "from generators import config\n",
    }
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    modules = discover(((tmp_path, ("generators", "rulesets")),))
    graph = import_graph(modules)
    assert graph["generators.emit"] == {"generators.config": 1, "rulesets.space": 2}
    assert graph["rulesets.space"] == {"generators.config": 1}
    assert cycles(graph) == [["generators.config", "generators.naming"]]
    assert [line.split(": ", 1)[1] for line in upward_imports(graph, modules)] == [
        "generators.emit imports rulesets.space"
    ]


def test_generators_alone_imports_and_the_entry_point_says_what_is_missing(tmp_path: Path) -> None:
    """A copy of ``generators/`` without the layers above: every module but the entry point imports, and
    ``python -m generators`` ends in one line and status 2 naming the missing driver, not a traceback."""
    shutil.copytree(
        REPO_ROOT / "generators", tmp_path / "generators", ignore=shutil.ignore_patterns("__pycache__")
    )
    names = sorted(name for name in discover(((tmp_path, ("generators",)),)) if name != ENTRY_POINT)
    # The copy is the working directory, first on sys.path; the checkout is not on it (no PYTHONPATH).
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    script = f"import importlib; [importlib.import_module(n) for n in {names!r}]"
    imported = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert imported.returncode == 0, imported.stderr
    assert len(names) > 10
    run = subprocess.run(
        [sys.executable, "-m", "generators", "list"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr.splitlines() == [
        "python -m generators: error: the driver cannot be imported: No module named 'driver'"
    ]
