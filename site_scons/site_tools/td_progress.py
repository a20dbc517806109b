"""SCons tool: quiet progress lines and an end-of-build summary.

Each compilation prints ``[k/N] nvcc <unit>`` (``[k/N] cache <unit>`` when the object came from the cache),
where N is the number of units the requested targets contain; other steps print one short line. When the build
ends it prints how many units were compiled, taken from the cache and already up to date, and the wall time.

Methods: ``env.TDProgressScope(targets)`` (call once the graph is declared).
"""

from __future__ import annotations

import atexit
import sys
import threading
import time

import SCons.Node
import SCons.Node.Alias
import SCons.Script
from SCons.Environment import Base as Environment
from SCons.Node import Node
from SCons.Script import GetOption


class Progress:
    """Counters of one build, shared by the job threads that print."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.lock = threading.Lock()
        self.started_units = 0
        self.units: dict[Node, Node] = {}
        # SCons clears a node's own "cached" flag once it is built, so retrievals are recorded as printed.
        self.from_cache: set[Node] = set()

    def emit(self, line: str, counted: bool) -> None:
        """Print one whole line; job threads print concurrently, and print() writes text and newline apart."""
        with self.lock:
            if counted:
                self.started_units += 1
                line = f"[{self.started_units}/{len(self.units)}] {line}"
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def summary(self) -> str:
        compiled = cached = up_to_date = failed = 0
        for obj in self.units:
            state = obj.get_state()
            if obj in self.from_cache:
                cached += 1
            elif state == SCons.Node.executed:
                compiled += 1
            elif state == SCons.Node.up_to_date:
                up_to_date += 1
            elif state == SCons.Node.failed:
                failed += 1
        parts = [f"{compiled} units compiled", f"{cached} from cache", f"{up_to_date} up to date"]
        if failed:
            parts.append(f"{failed} failed")
        skipped = len(self.units) - compiled - cached - up_to_date - failed
        if skipped:
            parts.append(f"{skipped} not reached")
        elapsed = time.time() - self.started
        return f"tiledispatch: {', '.join(parts)} (of {len(self.units)}) in {elapsed:.1f} s"


def _print_line(line: str, target: list, source: list, env: Environment) -> None:
    progress: Progress = env["TD_PROGRESS"]
    unit = progress.units.get(target[0]) if target else None
    if unit is not None and line.startswith("Retrieved"):
        line = f"cache {unit.name}"
        progress.from_cache.add(target[0])
    progress.emit(line, counted=unit is not None)


def _reachable_units(env: Environment, targets: list) -> dict[Node, Node]:
    """The compile objects the requested targets depend on, mapped to their source units."""
    compiles = dict(env["TD_COMPILES"])
    found: dict[Node, Node] = {}
    seen: set[int] = set()
    stack: list[Node] = []
    for target in targets:
        if isinstance(target, str):
            alias = SCons.Node.Alias.default_ans.lookup(target)
            stack.append(alias if alias is not None else env.Entry(target))
        else:
            stack.append(target)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node in compiles:
            found[node] = compiles[node]
            continue
        stack.extend(node.children(scan=0))
    return dict(sorted(found.items(), key=lambda item: item[1].path))


def _scope(env: Environment, targets: list) -> None:
    progress: Progress = env["TD_PROGRESS"]
    progress.units = _reachable_units(env, targets)
    if not GetOption("help") and not GetOption("clean"):
        atexit.register(lambda: print(progress.summary(), flush=True))


def generate(env: Environment) -> None:
    env["TD_PROGRESS"] = Progress(started=SCons.Script.start_time)
    env["PRINT_CMD_LINE_FUNC"] = _print_line
    env.AddMethod(_scope, "TDProgressScope")


def exists(env: Environment) -> bool:
    return True
