"""The build imports the repository's packages during actions, not only while the SConstruct is read.

SCons restores ``sys.path`` after reading the SConstruct and each tool; the generate action imports
``rulesets`` lazily. A build whose plan came from the memo (so the emitter imported nothing) and that must
regenerate a file used to fail with ``ModuleNotFoundError: No module named 'rulesets'`` on every later run.
The sandbox runs SCons with ``python -P`` so the checkout is not on ``sys.path`` by accident.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from build_sandbox import Sandbox, make_real_sandbox

pytestmark = pytest.mark.build


@pytest.fixture
def real(tmp_path: Path) -> Sandbox:
    return make_real_sandbox(tmp_path / "checkout", "tiny-sm_90a")


def _generate(sandbox: Sandbox) -> str:
    run = sandbox.scons("ruleset=tiny", "directions=fwd", f"legacy_dir={sandbox.root / 'legacy'}", "generate")
    return run.stdout + run.stderr


def test_a_deleted_generated_file_is_regenerated_from_a_memoized_plan(real: Sandbox) -> None:
    _generate(real)
    register = real.gen / "register_fwd.cpp"
    expected = register.read_bytes()
    register.unlink()
    output = _generate(real)
    assert "ModuleNotFoundError" not in output
    assert register.read_bytes() == expected
