"""The plan memo is a cache that cannot break a build: anything unreadable is a miss; edits are noticed."""

from __future__ import annotations

from pathlib import Path

import pytest
from build_sandbox import REPO_ROOT


@pytest.fixture
def memo_module(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(REPO_ROOT / "site_scons"))
    from tiledispatch_build import plan_memo

    return plan_memo


@pytest.mark.parametrize(
    "content",
    [b"", b"\x00\xff\xfe", b"{", b'{"key": "k"}', b'{"key": "k", "plan": [], "extra": 1}', b"[]", b"null"],
    ids=["empty", "binary", "truncated", "no-plan", "extra-field", "list", "null"],
)
def test_a_corrupt_memo_reads_as_absent(memo_module, tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "plan_fwd.json"
    path.write_bytes(content)
    assert memo_module.load_memo(path) is None


def test_a_memo_round_trips_and_notices_changed_outputs(memo_module, tmp_path: Path) -> None:
    gen = tmp_path / "gen"
    gen.mkdir()
    (gen / "a.cu").write_text("aaaa")
    (gen / "b.cu").write_text("bbbb")
    memo = memo_module.PlanMemo(key="k", plan=("a.cu", "b.cu"), outputs=memo_module.record_outputs(gen, ["a.cu", "b.cu"]))
    memo_module.save_memo(tmp_path / "plan.json", memo)
    loaded = memo_module.load_memo(tmp_path / "plan.json")
    assert loaded == memo
    assert memo_module.outputs_intact(loaded, gen)
    (gen / "a.cu").write_text("aaaa")  # same bytes, new mtime: still intact
    assert memo_module.outputs_intact(loaded, gen)
    (gen / "b.cu").write_text("bbbc")  # same size, other bytes
    assert not memo_module.outputs_intact(loaded, gen)
    (gen / "b.cu").write_text("bbbb")
    (gen / "a.cu").write_text("")
    assert not memo_module.outputs_intact(loaded, gen)
    (gen / "a.cu").unlink()
    assert not memo_module.outputs_intact(loaded, gen)
    assert not memo_module.outputs_intact(memo_module.PlanMemo(key="k", plan=("a.cu",)), gen)
