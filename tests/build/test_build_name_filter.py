"""``kernels=`` / ``exclude_kernels=`` on the synthetic repository with the fake nvcc: only the units of the
instances the filters keep are generated and compiled, the expected lists name exactly those instances, and a
filter that keeps nothing stops the build with one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from build_sandbox import Sandbox

pytestmark = pytest.mark.build


def _rules(sandbox: Sandbox) -> list[tuple[str, str, str]]:
    """(direction, dtype, name) of every line of the sandbox's tiny rule set."""
    lines = (sandbox.root / "rulesets" / "tiny.txt").read_text().splitlines()
    return [(words[0], words[1], words[2]) for words in (line.split() for line in lines if line.strip())]


def _expected_names(sandbox: Sandbox) -> set[str]:
    names: set[str] = set()
    for path in sandbox.gen.glob("expected_*.txt"):
        names.update(line.split()[0] for line in path.read_text().splitlines() if line.strip())
    return names


def _unit_instances(sandbox: Sandbox) -> set[str]:
    """Every instance name a generated unit registers (the fixture's units name theirs in the text)."""
    rules = {name for *_, name in _rules(sandbox)}
    text = "".join(path.read_text() for path in sandbox.gen.glob("unit_*.cu"))
    return {name for name in rules if name in text}


def test_kernels_and_exclude_keep_exactly_the_matching_instances(sandbox: Sandbox) -> None:
    # The rule as a regular expression (parts in order, anywhere in the name), applied to the rule file.
    names = [name for *_, name in _rules(sandbox)]
    wanted = {n for n in names if re.search("kfwd.*1|kfwd.*3", n) and "kfwd03" not in n}
    assert {"kfwd01", "kfwd10", "kfwdb03"} <= wanted, "the fixture rule set changed"
    assert "kfwd03" not in wanted
    sandbox.scons("profiler", "kernels=kfwd*1,kfwd*3", "exclude_kernels=kfwd03")
    assert _expected_names(sandbox) == wanted
    assert _unit_instances(sandbox) == wanted
    compiled = [name for name in sandbox.compiled_sources() if name.startswith("unit_")]
    assert sorted(compiled) == sorted(path.name for path in sandbox.gen.glob("unit_*.cu"))


def test_dropping_the_filter_builds_the_whole_rule_set_again(sandbox: Sandbox) -> None:
    sandbox.scons("profiler", "kernels=kfwd0")
    filtered = _expected_names(sandbox)
    sandbox.scons("profiler")
    assert filtered < _expected_names(sandbox) == {name for *_, name in _rules(sandbox)}


def test_a_filter_that_keeps_nothing_is_one_line_and_status_2(sandbox: Sandbox) -> None:
    run = sandbox.scons("profiler", "kernels=nosuchkernel", check=False)
    assert run.returncode == 2
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert "kernels=nosuchkernel keeps no instance of rule set 'tiny'" in lines[0]
    assert not list(Path(sandbox.build).glob("obj/**/*.o"))
