"""The arch header (generators/arch_header.py): rendered from the arch specs, refused on bad input before a
line is rendered, written only when its bytes change; docs/pipelines.md's pipeline table is the specs'."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from driver.build_api import generate_arch_header
from driver.cli import main
from generators.arch import ARCH_NAMES, ArchSpec, PipelineStrategy, get_arch
from generators.arch_header import ARCH_HEADER_PATH, arch_header_files, render_arch_header
from generators.enums import Pipeline

REPO_ROOT = Path(__file__).resolve().parents[2]
PIPELINES_DOC = REPO_ROOT / "docs" / "pipelines.md"


def _specs() -> list[ArchSpec]:
    return [get_arch(name) for name in ARCH_NAMES]


def _without_mem(arch: ArchSpec) -> ArchSpec:
    return arch.model_copy(
        update={"pipelines": {p: s for p, s in arch.pipelines.items() if p.value != "mem"}}
    )


def test_the_header_specialises_every_arch_with_its_own_limits() -> None:
    text = arch_header_files()[ARCH_HEADER_PATH]
    assert text == render_arch_header(_specs())  # deterministic: no timestamp, no path
    for arch in _specs():
        body = text.split(f"struct ArchTraits<{arch.cpp}> {{", 1)[1].split("\n};", 1)[0]
        assert f"kSmemPerBlockBytes = {arch.smem_per_block_bytes};" in body
        assert f"kMaxAccumulatorsPerThread = {arch.max_accumulators_per_thread};" in body
        assert f"kHasWgmma = {'true' if arch.has_wgmma else 'false'};" in body
        assert body.count("case Pipeline::") == len(Pipeline)


@pytest.mark.parametrize(
    ("arches", "message"),
    [
        ([], "no arch to render"),
        ([get_arch("sm_80"), get_arch("sm_80")], "arch sm_80 given twice"),
        ([get_arch("sm_80").model_copy(update={"name": "sm 80"})], "has no C++ enumerator"),
        ([_without_mem(get_arch("sm_80"))], "no pipeline strategy for mem"),
    ],
)
def test_bad_input_is_refused_before_anything_is_rendered(arches: list[ArchSpec], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        render_arch_header(arches)


def test_generate_writes_the_header_once(tmp_path: Path) -> None:
    assert generate_arch_header(tmp_path) == [ARCH_HEADER_PATH]
    header = tmp_path / ARCH_HEADER_PATH
    assert header.read_text() == arch_header_files()[ARCH_HEADER_PATH]
    os.utime(header, (1, 1))
    assert generate_arch_header(tmp_path) == [ARCH_HEADER_PATH]
    assert header.stat().st_mtime == 1  # unchanged bytes: not rewritten, so nothing recompiles
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == [
        ARCH_HEADER_PATH
    ]


def test_cli_writes_the_header_and_generate_includes_it(tmp_path: Path) -> None:
    assert main(["arch-header", "--out-dir", str(tmp_path / "a")]) == 0
    assert (tmp_path / "a" / ARCH_HEADER_PATH).read_text() == arch_header_files()[ARCH_HEADER_PATH]
    # generate writes it too: the generated directory is complete with it.
    selection = ["--ruleset", "tiny", "--direction", "fwd", "--dtype", "fp16", "--ndim", "2"]
    assert main(["generate", *selection, "--out-dir", str(tmp_path / "g")]) == 0
    assert (tmp_path / "g" / ARCH_HEADER_PATH).is_file()


# docs/pipelines.md shows the table; it is rendered from the arch specs here, so the doc cannot drift.
def _copies(s: PipelineStrategy) -> str:
    return "`cp.async`" if s.async_copy else "through registers (`ld.global` → `st.shared`)"


def _overlap(s: PipelineStrategy) -> str:
    if s.register_prefetch:
        return "next tile loaded into registers during the MMAs"
    if s.prefetch:
        return f"{s.stages - 1} tile{'s' if s.stages > 2 else ''} in flight"
    return "none"


def pipeline_table(arch: ArchSpec) -> str:
    columns = (
        "pipeline",
        "smem stages (with dsb)",
        "global → shared",
        "copies in flight during the MMAs",
        "fragments",
    )
    rows = [f"| {' | '.join(columns)} |", "|---|---|---|---|---|"]
    for pipeline in Pipeline:
        plain = arch.pipeline_strategy(pipeline, double_smem_buffer=False)
        dsb = arch.pipeline_strategy(pipeline, double_smem_buffer=True)
        fragments = "double" if plain.fragment_double_buffer else "single"
        stages = f"{plain.stages} ({dsb.stages})"
        rows.append(f"| {pipeline.value} | {stages} | {_copies(plain)} | {_overlap(plain)} | {fragments} |")
    return "\n".join(rows) + "\n"


def test_the_pipeline_table_of_the_docs_is_the_arch_specs() -> None:
    tables = {pipeline_table(arch) for arch in _specs()}
    assert len(tables) == 1, "the arches' pipeline tables differ: docs/pipelines.md shows one"
    doc = PIPELINES_DOC.read_text()
    found = re.search(r"<!-- pipeline table -->\n(.*?)<!-- end pipeline table -->", doc, re.DOTALL)
    assert found, "docs/pipelines.md: the table between <!-- pipeline table --> markers is missing"
    table = tables.pop()
    assert found.group(1) == table, f"docs/pipelines.md: paste this table:\n{table}"
