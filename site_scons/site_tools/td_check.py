"""SCons tool: instance-string verification of the built profiler against the generator's expected lists.

For each direction, runs ``tiledispatch_profiler --verify-instances gen/expected_<dir>.txt`` (no GPU needed)
and keeps its report as ``check/verify_<dir>.txt``. The report is a target, so ``check`` reruns only when the
profiler or the expected list changed; a failing verification prints the profiler's report and fails the
build.

Method: ``env.TDCheck(profiler, expected) -> report node``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from SCons.Action import Action
from SCons.Environment import Base as Environment
from SCons.Node import Node

from generators.atomic_files import write_atomic


def _verify(target: list, source: list, env: Environment) -> int:
    profiler, expected = source[0].abspath, source[1].abspath
    run = subprocess.run(
        [profiler, "--verify-instances", expected],
        capture_output=True,
        text=True,
        env=env["ENV"],
        check=False,
    )
    report = run.stdout + run.stderr
    if run.returncode != 0:
        print(report, end="", file=sys.stderr)
        print(f"check: {source[1].name} failed (status {run.returncode})", file=sys.stderr)
        return 1
    write_atomic(Path(target[0].abspath), report)
    return 0


def _check(env: Environment, profiler: Node, expected: Node) -> list[Node]:
    stem = Path(str(expected)).stem.removeprefix("expected_")
    report = env.Command(
        f"$TD_BUILD_DIR/check/verify_{stem}.txt",
        [profiler, expected],
        Action(_verify, "check ${SOURCES[1].name}"),
    )
    env.Alias("check", report)
    return report


def generate(env: Environment) -> None:
    env.AddMethod(_check, "TDCheck")


def exists(env: Environment) -> bool:
    return True
