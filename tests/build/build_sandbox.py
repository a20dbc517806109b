"""Build-test helpers: a throw-away copy of the build rules over a synthetic repository and a fake nvcc.

The sandbox holds the real ``SConstruct`` and ``site_scons/`` and, from ``fixture_repo/``, a stand-in
driver (``driver/build_api.py``, same contract as the real ``driver.build_api``), two kernel-template headers,
one runtime and one profiler source, and
a fake CUDA root whose ``bin/nvcc`` records each call (``calls.log``) and its environment (``env.log``) and
writes outputs derived from its inputs. Builds take well under a second, so every incremental behaviour
gets its own test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURE_REPO = Path(__file__).resolve().parent / "fixture_repo"
VARIANT = "tiny-sm_90a"
# As `.venv/bin/scons` runs it: ``-P`` keeps the working directory off sys.path (``python -m`` would put the
# checkout there and hide a build that cannot import its own packages once SCons has restored sys.path).
SCONS = (sys.executable, "-P", "-m", "SCons")


@dataclass(frozen=True)
class Sandbox:
    root: Path
    variant: str = VARIANT

    @property
    def cuda(self) -> Path:
        return self.root / "fake_cuda"

    @property
    def build(self) -> Path:
        return self.root / "build" / self.variant

    @property
    def gen(self) -> Path:
        return self.build / "gen"

    def scons(self, *args: str, env: dict[str, str] | None = None, check: bool = True):
        command = [*SCONS, f"cuda_root={self.cuda}", "toolchain=system", *args]
        run = subprocess.run(
            command, cwd=self.root, capture_output=True, text=True, env=env or os.environ.copy(), check=False
        )
        if check and run.returncode != 0:
            output = f"{run.stdout}\n{run.stderr}"
            raise AssertionError(f"scons {' '.join(args)} failed ({run.returncode}):\n{output}")
        return run

    def calls(self) -> list[str]:
        """nvcc calls so far, without the --version probes every SConstruct read makes."""
        log = self.cuda / "calls.log"
        lines = log.read_text().splitlines() if log.is_file() else []
        return [line for line in lines if line != "--version"]

    def compiled_sources(self) -> list[str]:
        """Base names of the sources the fake nvcc compiled so far."""
        sources = []
        for call in self.calls():
            words = call.split()
            if "-c" in words:
                sources.append(Path(words[words.index("-c") + 1]).name)
        return sorted(sources)

    def reset_calls(self) -> None:
        (self.cuda / "calls.log").unlink(missing_ok=True)

    def units(self) -> list[Path]:
        return sorted([*self.gen.glob("unit_*.cu"), *self.gen.glob("register_*.cpp")])

    def compiled_objects(self) -> list[Path]:
        return sorted(self.build.glob("obj/**/*.o"))


def make_sandbox(path: Path) -> Sandbox:
    path.mkdir(parents=True)
    shutil.copy2(REPO_ROOT / "SConstruct", path / "SConstruct")
    no_caches = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO_ROOT / "site_scons", path / "site_scons", ignore=no_caches)
    shutil.copytree(FIXTURE_REPO, path, dirs_exist_ok=True, ignore=no_caches)
    # The build tools write through the project's one atomic-write helper, parse name filters with the
    # generator's own rule and render the (here absent) selection models.
    for module in ("atomic_files.py", "name_filter.py", "embedded_models.py"):
        shutil.copy2(REPO_ROOT / "generators" / module, path / "generators" / module)
    return Sandbox(path)


REAL_SOURCES = ("driver", "generators", "rulesets", "instances", "profiler")
LEGACY_DIR = REPO_ROOT.parent / "shared" / "legacy" / "ck_builder_configs"


def make_real_sandbox(path: Path, variant: str) -> Sandbox:
    """The real generator, rule sets and C++ sources with the fake nvcc, and a copy of the legacy .conf files
    in ``path/legacy`` (the tests edit it)."""
    path.mkdir(parents=True)
    no_caches = shutil.ignore_patterns("__pycache__")
    shutil.copy2(REPO_ROOT / "SConstruct", path / "SConstruct")
    for name in ("site_scons", *REAL_SOURCES):
        shutil.copytree(REPO_ROOT / name, path / name, ignore=no_caches)
    shutil.copytree(FIXTURE_REPO / "fake_cuda", path / "fake_cuda")
    shutil.copytree(LEGACY_DIR, path / "legacy")
    return Sandbox(path, variant)
