"""Legacy file discovery: ``<direction>/<subset>/<layout>_<dtype>[_suffix].conf`` -> what the file is for.

The file name decides direction, subset, ndim and dtype, as upstream's generator does (a line's own NDim and
type tokens are checked against it, see ``rulesets.legacy_convert``). ``ngchw_depthwise.conf`` names no dtype:
upstream makes one configuration per dtype from each of its lines.
"""

from __future__ import annotations

import stat
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from generators.enums import DataType, Direction
from rulesets.errors import LegacyFormatError

DIRECTION_DIRS: MappingProxyType[str, Direction] = MappingProxyType(
    {"forward": Direction.FWD, "backward_data": Direction.BWD_DATA, "backward_weight": Direction.BWD_WEIGHT}
)
SUBSETS = ("profiler", "tests")
_LAYOUT_NDIM = MappingProxyType({"nhwgc": 2, "ndhwgc": 3, "ngchw": 2})
_SUFFIXES = ("streamk",)
_READABLE = "a readable .conf file"
_EXPECTED_NAME = "<layout>_<dtype>[_streamk].conf or ngchw_depthwise[_<dtype>].conf"


class LegacyFileName(BaseModel):
    """What a legacy file holds, from its path relative to the legacy directory."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    relative_path: str
    direction: Direction
    subset: Literal["profiler", "tests"]
    layout: str
    ndim: int
    dtypes: tuple[DataType, ...]
    depthwise: bool
    suffix: str | None


def parse_file_name(root: Path, path: Path) -> LegacyFileName:
    """Interpret ``path`` (under ``root``); LegacyFormatError (line 0) when the name fits no pattern."""
    relative = path.relative_to(root)
    parts = relative.parts
    if len(parts) != 3 or parts[0] not in DIRECTION_DIRS or parts[1] not in SUBSETS:
        raise LegacyFormatError(
            path, 0, "unexpected location", f"<{'|'.join(DIRECTION_DIRS)}>/<{'|'.join(SUBSETS)}>/<file>.conf"
        )
    words = path.stem.split("_")
    layout = words[0]
    if layout not in _LAYOUT_NDIM or len(words) < 2:
        raise LegacyFormatError(path, 0, f"file name {path.name!r}", _EXPECTED_NAME)
    depthwise = words[1] == "depthwise"
    dtype_words = words[2:] if depthwise else words[1:2]
    suffix_words = [] if depthwise else words[2:]
    try:
        dtypes = tuple(DataType(w) for w in dtype_words) or tuple(DataType)
    except ValueError:
        raise LegacyFormatError(
            path, 0, f"file name {path.name!r} names no known dtype", _EXPECTED_NAME
        ) from None
    if len(dtype_words) > 1 or len(suffix_words) > 1 or any(w not in _SUFFIXES for w in suffix_words):
        raise LegacyFormatError(path, 0, f"file name {path.name!r}", _EXPECTED_NAME)
    if depthwise != (layout == "ngchw") or (depthwise and parts[0] != "forward"):
        raise LegacyFormatError(
            path, 0, f"file name {path.name!r}", "depthwise files as forward/*/ngchw_depthwise.conf"
        )
    return LegacyFileName(
        relative_path=relative.as_posix(),
        direction=DIRECTION_DIRS[parts[0]],
        subset=parts[1],  # type: ignore[arg-type]
        layout=layout,
        ndim=_LAYOUT_NDIM[layout],
        dtypes=dtypes,
        depthwise=depthwise,
        suffix=suffix_words[0] if suffix_words else None,
    )


def discover(root: Path) -> tuple[Path, ...]:
    """Every entry named ``*.conf`` under ``root``, sorted (deterministic order). Folders, links and special
    files named so are included: reading one (``read_conf_text``) says what is wrong with it."""
    return tuple(sorted(root.rglob("*.conf")))


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def read_conf_text(path: Path) -> str:
    """A legacy file's text; ``LegacyFormatError`` naming the file (and the line, for bytes that are not
    UTF-8) for anything that is not a readable regular UTF-8 file. Never opens a FIFO (it would block)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        what = "a dangling symbolic link" if path.is_symlink() else "missing"
        raise LegacyFormatError(path, 0, what, _READABLE) from None
    except OSError as error:
        raise LegacyFormatError(path, 0, f"cannot read it: {error.strerror}", _READABLE) from None
    if not stat.S_ISREG(mode):
        raise LegacyFormatError(path, 0, _kind(mode), "a regular .conf file")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise LegacyFormatError(path, 0, f"cannot read it: {error.strerror}", _READABLE) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        bad = data[error.start : error.end].hex()
        problem = f"byte 0x{bad} at column {column} is not UTF-8"
        raise LegacyFormatError(path, line, problem, "UTF-8 text") from None


def describe_validation_error(error: ValidationError) -> tuple[str, str]:
    """(problem, expected) of a configuration model's first complaint: the field, its value and the rule,
    never the whole pydantic report."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or error.title
    message = str(first.get("ctx", {}).get("error", first["msg"]))
    value = first.get("input")
    shown = "" if isinstance(value, dict) else f" = {value!r}"
    return f"{field}{shown}: {message}", f"a valid {error.title} field"
