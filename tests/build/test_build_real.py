"""The real pieces together: the real generator, kernel templates and pinned nvcc compile one real unit.

One compilation (tens of seconds) is the whole cost; the dependency checks after it are dry runs (``-n``),
which show what SCons would rebuild without compiling.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from build_sandbox import REPO_ROOT

pytestmark = pytest.mark.build

COPIED = ("SConstruct", "site_scons", "driver", "generators", "rulesets", "instances")
LEGACY_DIR = REPO_ROOT.parent / "shared" / "legacy" / "ck_builder_configs"
SELECTION = ("ruleset=tiny", "dtypes=fp16", "ndims=2", "chunk=1", f"legacy_dir={LEGACY_DIR}")
TEMPLATE = Path("instances/include/tiledispatch/kernels/implicit_gemm_instance.hpp")


def _scons(checkout: Path, *args: str) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(
        [sys.executable, "-m", "SCons", *SELECTION, *args], cwd=checkout, capture_output=True, text=True
    )
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
    return run


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    no_caches = shutil.ignore_patterns("__pycache__")
    for name in COPIED:
        source = REPO_ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=no_caches)
        else:
            shutil.copy2(source, tmp_path / name)
    return tmp_path


def test_one_real_unit_compiles_and_tracks_its_template_header(checkout: Path) -> None:
    _scons(checkout, "generate")
    gen = checkout / "build" / "tiny-sm_90a" / "gen"
    units = sorted(gen.glob("unit_fwd_*.cu"))
    assert units, "tiny has fwd fp16 2D instances"
    obj = f"build/tiny-sm_90a/obj/fwd/{units[0].stem}.o"

    compiled = _scons(checkout, obj)
    assert re.search(rf"^\[1/1\] nvcc {units[0].name}$", compiled.stdout, re.MULTILINE), compiled.stdout
    assert (checkout / obj).stat().st_size > 0

    assert "is up to date" in _scons(checkout, "-n", obj).stdout

    unrelated = checkout / "instances/include/tiledispatch/kernels/not_included_anywhere.hpp"
    unrelated.write_text("#pragma once\n")
    assert "is up to date" in _scons(checkout, "-n", obj).stdout

    template = checkout / TEMPLATE
    original = template.read_text()
    template.write_text(original + "\n// edited\n")
    assert re.search(rf"^\[1/1\] nvcc {units[0].name}$", _scons(checkout, "-n", obj).stdout, re.MULTILINE)
    template.write_text(original)
    assert "is up to date" in _scons(checkout, "-n", obj).stdout

    # The kernels read their arch's limits from the generated arch header: an arch spec edit rewrites it (a
    # generate step, no compile) and the unit must then recompile.
    header = gen / "tiledispatch" / "generated" / "arch_traits.hpp"
    assert "kSmemPerBlockBytes = 232448;" in header.read_text()
    arch = checkout / "generators" / "arch.py"
    arch.write_text(arch.read_text().replace("=227 * 1024", "=226 * 1024"))
    _scons(checkout, "generate")
    assert "kSmemPerBlockBytes = 231424;" in header.read_text()
    assert re.search(rf"^\[1/1\] nvcc {units[0].name}$", _scons(checkout, "-n", obj).stdout, re.MULTILINE)
