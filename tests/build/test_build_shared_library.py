"""The shared library target (`lib`: libtiledispatch_<ruleset>.so, the C API that Python loads), on the
synthetic repository with a fake nvcc: what it links, that its objects are the profiler's (compiled once, with
-fPIC), that a no-op build does nothing and that a changed unit relinks it."""

from __future__ import annotations

import pytest
from build_sandbox import Sandbox

pytestmark = pytest.mark.build

LIBRARY = "lib/libtiledispatch_tiny.so"


def _shared_links(sandbox: Sandbox) -> list[list[str]]:
    return [call.split() for call in sandbox.calls() if "-shared" in call.split()]


def test_lib_links_the_runtime_objects_and_every_instance_library(sandbox: Sandbox) -> None:
    run = sandbox.scons("lib")
    assert (sandbox.build / LIBRARY).is_file()
    assert f"link build/tiny-sm_90a/{LIBRARY}" in run.stdout.splitlines()
    [link] = _shared_links(sandbox)
    assert "-cudart=static" in link
    assert "-Xlinker=-soname=libtiledispatch_tiny.so" in link
    assert "-Xlinker=-Bsymbolic" in link
    inputs = [word for word in link if word.endswith((".o", ".a"))]
    assert sorted(inputs) == sorted(
        [
            "build/tiny-sm_90a/obj/runtime/runtime.o",
            "build/tiny-sm_90a/obj/runtime/embedded_models.o",
            "build/tiny-sm_90a/lib/libfwd_instances.a",
            "build/tiny-sm_90a/lib/libbwd_data_instances.a",
            "build/tiny-sm_90a/lib/libbwd_weight_instances.a",
        ]
    )
    # The library needs no profiler.
    assert not (sandbox.build / "profiler" / "tiledispatch_profiler").exists()


def test_profiler_and_lib_share_one_pic_compile_per_unit(sandbox: Sandbox) -> None:
    sandbox.scons()  # the default targets: profiler and lib
    assert (sandbox.build / LIBRARY).is_file()
    assert (sandbox.build / "profiler" / "tiledispatch_profiler").is_file()
    compiled = sandbox.compiled_sources()
    assert len(compiled) == len(set(compiled)), compiled
    compiles = [call.split() for call in sandbox.calls() if "-c" in call.split()]
    assert compiles and all("-Xcompiler=-fPIC" in words for words in compiles)


def test_noop_lib_build_does_nothing_and_a_changed_unit_relinks(sandbox: Sandbox) -> None:
    sandbox.scons("lib")
    sandbox.reset_calls()
    run = sandbox.scons("lib")
    assert "`lib' is up to date." in run.stdout
    assert sandbox.calls() == []
    runtime = sandbox.root / "instances" / "src" / "runtime.cpp"
    runtime.write_text(runtime.read_text() + "\n// changed\n")
    sandbox.scons("lib")
    assert sandbox.compiled_sources() == ["runtime.cpp"]
    assert len(_shared_links(sandbox)) == 1


def test_check_links_the_library_too(sandbox: Sandbox) -> None:
    """CI builds `check`; the shared library (and the tests of its kernel list) come with it."""
    sandbox.scons("check")
    assert (sandbox.build / LIBRARY).is_file()
    assert len(_shared_links(sandbox)) == 1


def test_the_selection_models_are_compiled_in_and_tracked(sandbox: Sandbox) -> None:
    """heuristics/models/<direction>.trees become the runtime's embedded_models.cpp: the text as given, and an
    edit to one model regenerates and recompiles that source alone."""
    models = sandbox.root / "heuristics" / "models"
    models.mkdir(parents=True)
    (models / "bwd_weight.trees").write_text("tiledispatch-trees 1\ndirection bwd_weight\n")
    sandbox.scons("lib")
    embedded = (sandbox.gen / "embedded_models.cpp").read_text()
    model = 'R"tdmodel(tiledispatch-trees 1\ndirection bwd_weight\n)tdmodel";'
    assert f"constexpr char kBwdWeightModel[] =\n    {model}" in embedded
    assert 'constexpr char kFwdModel[] =\n    R"tdmodel()tdmodel";' in embedded
    sandbox.reset_calls()
    (models / "bwd_weight.trees").write_text("tiledispatch-trees 1\ndirection bwd_weight\nfeatures 0\n")
    sandbox.scons("lib")
    assert sandbox.compiled_sources() == ["embedded_models.cpp"]
    assert "features 0" in (sandbox.gen / "embedded_models.cpp").read_text()
