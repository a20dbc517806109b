"""Fuzz-style probes of the legacy .conf reader (issue 11), in-process and fast.

Every line of the shared legacy lists is mutated at random (fixed seed): a field replaced by junk, deleted,
repeated, truncated, renumbered, or a stray character inserted. Reading the mutated file must either succeed
or raise ``LegacyFormatError`` with one line ``<file>:<the mutated line>: ...`` naming the bad value; a
pydantic dump, another exception or a silently accepted junk token fails. The listed probes (folder,
dangling link, unreadable file, FIFO, undecodable bytes, empty directory) come first.
"""

from __future__ import annotations

import os
import random
import signal
from dataclasses import dataclass
from pathlib import Path

import pytest
from fuzz_support import SEED

from rulesets.conf_tokens import is_comment_or_blank, split_device_op, split_top_level
from rulesets.errors import LegacyFormatError, RulesetError
from rulesets.legacy import convert_legacy_text, read_legacy_dir, read_legacy_file
from rulesets.parity import build_report
from rulesets.warp_tile import WarpTileKConvention

LEGACY_DIR = Path(__file__).resolve().parents[3] / "shared" / "legacy" / "ck_builder_configs"
CURRENT = WarpTileKConvention.CURRENT
JUNK = ("fp99", "Banana", "ZZZZ", "\x00", "fp16\x00", "Default\x00", "NHWGC\x00")
# Native (CK Tile) and depthwise lines: every field is read and checked, so junk anywhere is an error.
CHECKED_FORMATS = ("GroupedConvolution",)
MUTATIONS_PER_LINE = 3


@dataclass(frozen=True)
class Mutation:
    path: Path
    line_number: int
    kind: str
    text: str  # the whole mutated file
    must_fail: bool
    bad_value: str | None


def _legacy_lines() -> list[tuple[Path, int, str]]:
    if not LEGACY_DIR.is_dir():
        return []
    found = []
    for path in sorted(LEGACY_DIR.rglob("*.conf")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not is_comment_or_blank(line):
                found.append((path, number, line))
    return found


def _mutate_line(line: str, rng: random.Random) -> tuple[str, str, bool, str | None]:
    """(mutated line, kind, must it fail, the value the error must name)."""
    op, argument_text = split_device_op(line)
    args = split_top_level(argument_text)
    index = rng.randrange(len(args))
    checked = op.startswith(CHECKED_FORMATS)
    kind = rng.choice(("junk", "nul", "delete", "repeat", "truncate", "number", "insert"))
    if kind == "junk":
        junk = rng.choice(JUNK)
        args[index] = junk
        # In old-CK (XDL) lines some positions are never read upstream (thread-cluster Seq(...), layouts).
        return f"{op}<{','.join(args)}>", kind, checked or "\x00" in junk, None
    if kind == "nul":
        at = rng.randrange(1, len(line))
        return line[:at] + "\x00" + line[at:], kind, True, "U+0000"
    if kind == "delete":
        del args[index]
        return f"{op}<{','.join(args)}>", kind, True, None
    if kind == "repeat":
        args.insert(index, args[index])
        return f"{op}<{','.join(args)}>", kind, True, None
    if kind == "truncate":
        return line[: rng.randrange(1, line.rindex(">"))], kind, True, None
    if kind == "number":
        args[index] = str(rng.choice((-1, 0, 3, 7, 2**31, 2**63)))
        return f"{op}<{','.join(args)}>", kind, False, None
    at = rng.randrange(len(line) + 1)
    return line[:at] + rng.choice(("@", "é", " ", ",", "<", ")")) + line[at:], kind, False, None


def _mutations() -> list[Mutation]:
    rng = random.Random(SEED)
    cases = []
    for path, number, line in _legacy_lines():
        if line.startswith("DeviceGroupedConvBwdWeight_Explicit_Xdl"):
            continue  # key: value form, fuzzed by the generic insert/truncate kinds below
        for _ in range(MUTATIONS_PER_LINE):
            mutated, kind, must_fail, bad_value = _mutate_line(line, rng)
            lines = path.read_text(encoding="utf-8").splitlines()
            lines[number - 1] = mutated
            cases.append(Mutation(path, number, kind, "\n".join(lines) + "\n", must_fail, bad_value))
    return cases


MUTATIONS = _mutations()


@pytest.mark.skipif(not MUTATIONS, reason=f"legacy configs not found at {LEGACY_DIR}")
def test_random_mutations_of_real_lines_fail_cleanly_or_parse() -> None:
    failures = []
    for case in MUTATIONS:
        where = f"{case.path}:{case.line_number}: "
        try:
            convert_legacy_text(LEGACY_DIR, case.path, case.text, CURRENT)
        except LegacyFormatError as error:
            message = str(error)
            if not message.startswith(where) or "\n" in message:
                failures.append(f"{case.kind}: message {message!r} does not start with {where!r}")
            elif case.bad_value is not None and case.bad_value not in message:
                failures.append(f"{case.kind}: {message!r} does not name {case.bad_value!r}")
            continue
        except Exception as error:  # a traceback for the user
            failures.append(f"{case.kind} {where}: {type(error).__name__}: {str(error)[:200]}")
            continue
        if case.must_fail:
            mutated = case.text.splitlines()[case.line_number - 1]
            failures.append(f"{case.kind} {where}: silently accepted {mutated!r}")
    assert len(MUTATIONS) > 500
    assert not failures, f"{len(failures)} of {len(MUTATIONS)} probes:\n" + "\n".join(failures[:20])


NATIVE = (
    "GroupedConvolutionBackwardWeightKernel<2,Default,NHWGC,GKYXC,EmptyTuple,NHWGK,8,8,8,1,0,0,64,64,64,"
    "2,2,1,16,16,16,fp16,fp16,BASIC_ASYNC_V1,Intrawave,0,1,fp32,fp16,EmptyTuple,PassThrough,1,2,0>"
)


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        (",fp16,fp16,BASIC", ",fp99,fp16,BASIC", "'fp99'"),
        (",Intrawave,", ",Banana,", "'Banana'"),
        (",EmptyTuple,PassThrough", ",ZZZZ,PassThrough", "'ZZZZ'"),
        (",PassThrough,", ",PassThrough\x00,", "U+0000"),
        ("NHWGC,GKYXC", "NHWGC,ZZZZ", "ZZZZ"),
        (",fp32,fp16,Empty", ",fp64,fp16,Empty", "'fp64'"),
        ("<2,Default", "<9,Default", "NDim is 9"),
    ],
    ids=["fp99", "Banana", "ZZZZ", "NUL", "layout", "acc", "ndim"],
)
def test_junk_tokens_in_native_lines_name_file_line_and_value(tmp_path: Path, old, new, named) -> None:
    path = tmp_path / "backward_weight" / "tests" / "nhwgc_fp16_streamk.conf"
    path.parent.mkdir(parents=True)
    assert old in NATIVE
    path.write_text(f"# a comment\n{NATIVE}\n{NATIVE.replace(old, new, 1)}\n", encoding="utf-8")
    with pytest.raises(LegacyFormatError) as caught:
        read_legacy_file(tmp_path, path, CURRENT)
    assert str(caught.value).startswith(f"{path}:3: ")
    assert named in str(caught.value)


def test_a_value_no_configuration_accepts_names_field_and_value_not_a_pydantic_dump(tmp_path: Path) -> None:
    path = tmp_path / "backward_weight" / "tests" / "nhwgc_fp16_streamk.conf"
    path.parent.mkdir(parents=True)
    # A tile of 0 parses (an integer) but makes no configuration.
    path.write_text(NATIVE.replace(",64,64,64,", ",0,64,64,", 1) + "\n", encoding="utf-8")
    with pytest.raises(LegacyFormatError) as caught:
        read_legacy_file(tmp_path, path, CURRENT)
    message = str(caught.value)
    assert message.startswith(f"{path}:1: tile_m = 0")
    assert "\n" not in message and "pydantic" not in message


def _legacy_copy(tmp_path: Path) -> Path:
    root = tmp_path / "legacy"
    target = root / "forward" / "tests"
    target.mkdir(parents=True)
    (target / "ngchw_depthwise.conf").write_text(
        "GroupedConvolutionForwardDepthwise<8,8,3,1,1,1,1,8,2,2,2,2>\n", encoding="utf-8"
    )
    return root


def _make_entry(kind: str, path: Path) -> None:
    if kind == "folder":
        path.mkdir()
    elif kind == "dangling link":
        path.symlink_to(path.parent / "nowhere")
    elif kind == "FIFO":
        os.mkfifo(path)
    elif kind == "undecodable":
        path.write_bytes(b"# fine\nGroupedConvolutionForwardDepthwise<8,8,3,1,1,1,1,8,2,2,2,\xff>\n")


ENTRY_KINDS = {
    "folder": ("a directory", ":0:"),
    "dangling link": ("dangling symbolic link", ":0:"),
    "FIFO": ("a FIFO", ":0:"),
    "undecodable": ("byte 0xff at column 58 is not UTF-8", ":2:"),
}


@pytest.fixture
def hang_alarm():
    """Opening a FIFO blocks forever: a SIGALRM turns a regression into a failure, not a hung suite."""

    def hang(signum, frame):
        raise TimeoutError("hang: reading the legacy directory blocked")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("kind", sorted(ENTRY_KINDS))
def test_a_bad_entry_named_conf_is_one_error_naming_it(tmp_path: Path, kind: str, hang_alarm) -> None:
    root = _legacy_copy(tmp_path)
    bad = root / "forward" / "tests" / "nhwgc_bf16.conf"
    _make_entry(kind, bad)
    problem, line = ENTRY_KINDS[kind]
    with pytest.raises(LegacyFormatError) as caught:
        read_legacy_dir(root, CURRENT)  # a FIFO would block here if it were opened
    assert str(caught.value).startswith(f"{bad}{line} ")
    assert problem in str(caught.value)
    report = build_report(root)
    assert not report.ok
    assert any(str(bad) in error and problem in error for error in report.errors)


def test_an_unreadable_file_is_one_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests may run as root, which reads a mode-000 file anyway: the read itself is made to fail.
    root = _legacy_copy(tmp_path)
    bad = root / "forward" / "tests" / "nhwgc_bf16.conf"
    bad.write_text("x\n")
    real_read_bytes = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self == bad:
            raise PermissionError(13, "Permission denied", str(self))
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with pytest.raises(LegacyFormatError, match=r":0: cannot read it: Permission denied"):
        read_legacy_dir(root, CURRENT)


def test_an_empty_legacy_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "forward").mkdir()
    with pytest.raises(RulesetError, match=r"holds no \.conf files"):
        read_legacy_dir(tmp_path, CURRENT)
    with pytest.raises(RulesetError, match=r"holds no \.conf files"):
        build_report(tmp_path)
