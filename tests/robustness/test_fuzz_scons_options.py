"""Fuzz-style probes of the ``scons`` command line (issue 11).

The listed probes run real SCons (tests/build/test_build_option_probes.py); the generated ones here (random
``name=value`` sets, fixed seed) call ``parse_options`` in-process, which is what the SConstruct runs first:
a valid set or one ``OptionError`` line naming the bad value, never another exception.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from fuzz_support import SEED

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def options_module(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(REPO_ROOT / "site_scons"))
    from tiledispatch_build import options

    return options


def test_an_unwritable_cache_dir_is_refused(options_module, tmp_path: Path, monkeypatch) -> None:
    # Root writes anywhere, so the permission answer is simulated; the check itself is what SCons runs.
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != locked and real_access(path, mode))
    with pytest.raises(
        options_module.OptionError, match=r"^bad value 'locked/cache' for cache_dir: .* not writable"
    ):
        options_module.parse_options({"cache_dir": "locked/cache"}, tmp_path)
    with pytest.raises(
        options_module.OptionError, match=r"^bad value 'locked' for cache_dir: it is not writable"
    ):
        options_module.parse_options({"cache_dir": "locked"}, tmp_path)


GOOD = {
    "ruleset": ("tiny", "default", "tests", "profiler", "full", "full-tests"),
    "arch": ("sm_90a", "sm_80"),
    "directions": ("all", "fwd", "bwd_data,fwd", "bwd_weight"),
    "dtypes": ("all", "fp16", "bf16,fp32"),
    "ndims": ("all", "2", "3,2"),
    "chunk": ("1", "13", "25"),
    "jobs": ("auto", "1", "64"),
    "memory": ("auto", "8"),
    "verbose": ("0", "1", "yes", "False"),
    "kernels": ("", "fwd_fp16", "fwd*128x64x32,bwd_data", "*2stage*"),
    "exclude_kernels": ("", "depthwise", "_dsb,_wg2"),
}
BAD = (
    "",
    " ",
    ",",
    "fwd,fwd",
    "fp16,,fp16",
    "FP16",
    "fp99",
    "Banana",
    "ZZZZ",
    "-1",
    "0",
    "9" * 20,
    "é",
    "\x00",
    "1.5",
)
GENERATED = 200


def _random_arguments(rng: random.Random) -> dict[str, str]:
    arguments = {name: rng.choice(values) for name, values in GOOD.items() if rng.random() < 0.4}
    fuzzed = rng.choice([*GOOD, "legacy_dir", "cache_dir", "cuda_root", "toolchain", "bogus_option"])
    arguments[fuzzed] = rng.choice(BAD)
    return arguments


def test_generated_option_sets(options_module, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    failures = []
    accepted = rejected = 0
    for case in range(GENERATED):
        arguments = _random_arguments(rng)
        try:
            parsed = options_module.parse_options(arguments, tmp_path)
        except options_module.OptionError as error:
            rejected += 1
            message = str(error)
            if "\n" in message or len(message) > 300:
                failures.append(f"#{case} {arguments}: not one short line: {message!r}")
            continue
        except Exception as error:
            failures.append(f"#{case} {arguments}: {type(error).__name__}: {error}")
            continue
        accepted += 1
        # Accepted means every value was understood: the parsed options say what was asked.
        for name in ("directions", "dtypes"):
            text = arguments.get(name)
            if text not in (None, "all"):
                assert set(getattr(parsed, name)) == {v.strip() for v in text.split(",") if v.strip()}
        for name in ("kernels", "exclude_kernels"):
            text = arguments.get(name, "")
            assert getattr(parsed.name_filter, name) == tuple(v.strip() for v in text.split(",") if v.strip())
    assert not failures, "\n".join(failures[:20])
    assert rejected > GENERATED // 2 and accepted > 0, (accepted, rejected)
