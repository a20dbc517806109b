"""The one atomic-write helper: umask permissions, no partial file, no temporary left, stale ones cleaned."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from generators.atomic_files import (
    TEMPORARY_SUFFIX,
    remove_stale_temporaries,
    temporary_path,
    write_atomic,
    write_if_changed,
)
from generators.emit import write_files

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def umask_027():
    previous = os.umask(0o027)
    yield
    os.umask(previous)


def test_files_get_the_umask_permissions(tmp_path: Path, umask_027) -> None:
    write_atomic(tmp_path / "a" / "b.txt", "text\n")
    write_files(tmp_path / "gen", {"kernels/x.hpp": "x\n", "unit.cu": "u\n"})
    for path in (
        tmp_path / "a" / "b.txt",
        tmp_path / "gen" / "kernels" / "x.hpp",
        tmp_path / "gen" / "unit.cu",
    ):
        assert path.stat().st_mode & 0o777 == 0o640, path


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old\n")

    def broken_replace(source, destination):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "new\n")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_unchanged_files_are_not_rewritten(tmp_path: Path) -> None:
    target = tmp_path / "same.txt"
    assert write_if_changed(target, "same\n")
    before = target.stat().st_mtime_ns
    assert not write_if_changed(target, "same\n")
    assert target.stat().st_mtime_ns == before


def test_stale_temporaries_of_dead_writers_are_removed_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(dead.stdout)
    stale = tmp_path / "kernels" / f".x.hpp.{dead_pid}.0badc0de{TEMPORARY_SUFFIX}"
    stale.parent.mkdir()
    stale.write_text("half")
    live = temporary_path(tmp_path / "y.hpp")
    live.write_text("being written")
    unrelated = tmp_path / ".hidden.tdtmp.keep"
    unrelated.write_text("not ours")
    assert remove_stale_temporaries(tmp_path) == [stale]
    assert live.exists() and unrelated.exists() and not stale.exists()


def test_a_killed_writer_leaves_a_temporary_that_the_next_write_removes(tmp_path: Path) -> None:
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from generators import atomic_files\n"
        "os.replace = lambda a, b: os.kill(os.getpid(), signal.SIGKILL)\n"
        "atomic_files.write_atomic(Path(sys.argv[1]) / 'unit.cu', 'text')\n"
    )
    killed = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=REPO_ROOT, check=False)
    assert killed.returncode == -signal.SIGKILL
    assert [p.suffix for p in tmp_path.iterdir()] == [TEMPORARY_SUFFIX]
    write_files(tmp_path, {"unit.cu": "text"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["unit.cu"]
