"""Chunk stability through the real build: the real generator and chunker, the fake nvcc, ``ruleset=tests``.

One line of a copied legacy .conf file is removed (or added back); only the unit that held its instance may
recompile (at most two units: a unit that starts at the instance hands over to its neighbour), plus the
direction's register file when a unit id changed; never every unit after it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from build_sandbox import Sandbox, make_real_sandbox

pytestmark = pytest.mark.build

CONF = Path("forward/tests/nhwgc_fp16.conf")
SELECTION = ("ruleset=tests", "directions=fwd", "dtypes=fp16", "ndims=2")
NAMES_SCRIPT = (
    "import sys; from driver.build_api import GenerateRequest, collect_configs; "
    "r = GenerateRequest(ruleset='tests', direction='fwd', dtypes=('fp16',), ndims=(2,), "
    "legacy_dir=sys.argv[1]); print('\\n'.join(c.name for c in collect_configs(r)))"
)


def _names(sandbox: Sandbox) -> set[str]:
    command = [sys.executable, "-c", NAMES_SCRIPT, str(sandbox.root / "legacy")]
    return set(
        subprocess.run(command, cwd=sandbox.root, capture_output=True, text=True, check=True).stdout.split()
    )


def _one_instance_line(sandbox: Sandbox) -> tuple[int, str]:
    """The middle-most line of the .conf whose removal takes away exactly one instance, and that instance."""
    conf = sandbox.root / "legacy" / CONF
    text = conf.read_text()
    lines = text.splitlines(keepends=True)
    every = _names(sandbox)
    try:
        for index in sorted(range(len(lines)), key=lambda i: abs(i - len(lines) // 2)):
            conf.write_text("".join(lines[:index] + lines[index + 1 :]))
            gone = every - _names(sandbox)
            if len(gone) == 1:
                return index, gone.pop()
    finally:
        conf.write_text(text)
    raise AssertionError(f"no line of {CONF} holds exactly one instance")


def _unit_of(sandbox: Sandbox, name: str) -> str:
    holders = [
        unit.name for unit in sandbox.gen.glob("unit_fwd_*.cu") if f"kernels/{name}.hpp" in unit.read_text()
    ]
    assert len(holders) == 1, holders
    return holders[0]


def _build(sandbox: Sandbox) -> None:
    sandbox.scons(*SELECTION, f"legacy_dir={sandbox.root / 'legacy'}", "instances")


@pytest.mark.parametrize("change", ["remove", "add"])
def test_one_conf_line_recompiles_only_the_unit_that_holds_it(tmp_path: Path, change: str) -> None:
    sandbox = make_real_sandbox(tmp_path / "checkout", "tests-sm_90a")
    index, name = _one_instance_line(sandbox)
    conf = sandbox.root / "legacy" / CONF
    full_text = conf.read_text()
    lines = full_text.splitlines(keepends=True)
    without = "".join(lines[:index] + lines[index + 1 :])
    conf.write_text(full_text if change == "remove" else without)
    _build(sandbox)
    units_before = sorted(unit.name for unit in sandbox.gen.glob("unit_fwd_*.cu"))
    assert len(units_before) >= 4, "the test needs several units to show that later ones stay put"
    holder = _unit_of(sandbox, name) if change == "remove" else None
    sandbox.reset_calls()

    conf.write_text(without if change == "remove" else full_text)
    _build(sandbox)
    holder = holder or _unit_of(sandbox, name)
    expected_names = (sandbox.gen / "expected_fwd.txt").read_text()
    assert (f"{name}\t" in expected_names) == (change == "add")

    compiled = sandbox.compiled_sources()
    units = [source for source in compiled if source.startswith("unit_")]
    assert set(compiled) - set(units) <= {"register_fwd.cpp"}, compiled
    assert 1 <= len(units) <= 2, compiled
    units_after = sorted(unit.name for unit in sandbox.gen.glob("unit_fwd_*.cu"))
    assert holder in units_after or change == "remove"
    untouched = sorted(set(units_before) & set(units_after) - set(units))
    assert len(untouched) >= len(units_after) - 2, (units_before, units_after, compiled)
