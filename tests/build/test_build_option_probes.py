"""The ``scons`` command line's listed bad-input probes (issue 11), run for real over the fake-nvcc sandbox.

Each stops while the options are read, with one ``scons: ***`` line naming the bad value and status 2, and
compiles nothing. Random option sets are fuzzed in-process by tests/robustness/test_fuzz_scons_options.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from build_sandbox import SCONS, Sandbox, make_sandbox
from fuzz_support import Ended, assert_one_line_error, run_bounded

pytestmark = pytest.mark.build


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return make_sandbox(tmp_path / "checkout")


def _scons(sandbox: Sandbox, *args: str) -> Ended:
    command = [*SCONS, f"cuda_root={sandbox.cuda}", "toolchain=system", *args]
    return run_bounded(command, cwd=sandbox.root)


@pytest.mark.parametrize(
    ("argument", "named"),
    [
        ("legacy_dir=", "empty value for legacy_dir"),
        ("legacy_dir=.", "it contains the build directory"),
        ("legacy_dir=..", "it contains the build directory"),
        ("directions=fwd,fwd", "'fwd' given twice in directions=fwd,fwd"),
        ("dtypes=fp16,fp16", "'fp16' given twice"),
        ("ndims=2,2", "'2' given twice"),
        ("dtypes=", "empty value for dtypes"),
        ("dtypes=fp99", "'fp99'"),
        ("ruleset=Banana", "'Banana'"),
        ("chunk=0", "'0' for chunk"),
        ("chunk=99999999999999999999", "chunk"),
        ("cache_dir=SConstruct", "it is not a directory"),
        ("cache_dir=SConstruct/cache", "SConstruct is not a directory"),
        ("jobs=-1", "'-1' for jobs"),
        ("verbose=maybe", "'maybe'"),
        ("ZZZZ=1", "unknown option 'ZZZZ'"),
        ("kernels=KFWD", "bad filter 'KFWD' in kernels"),
        ("exclude_kernels=kfwd;rm", "bad filter 'kfwd;rm' in exclude_kernels"),
        ("kernels=kbwdw exclude_kernels=kbwd", "keeps no instance of rule set 'tiny'"),
    ],
)
def test_bad_options_stop_with_one_line(sandbox: Sandbox, argument: str, named: str) -> None:
    ended = _scons(sandbox, *argument.split())
    assert_one_line_error(ended, named, prefix="scons: ***")
    assert not (sandbox.root / "build").exists() or not any((sandbox.root / "build").rglob("*.o"))
    assert not sandbox.calls() or all("-c" not in call.split() for call in sandbox.calls())


