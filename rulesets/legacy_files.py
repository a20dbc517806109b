"""Legacy file discovery: ``<direction>/<subset>/<layout>_<dtype>[_suffix].conf`` -> what the file is for.

The file name decides direction, subset, ndim and dtype, as upstream's generator does (a line's own NDim and
type tokens are checked against it, see ``rulesets.legacy_convert``). ``ngchw_depthwise.conf`` names no dtype:
upstream makes one configuration per dtype from each of its lines.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict

from generators.enums import DataType, Direction
from rulesets.errors import LegacyFormatError

DIRECTION_DIRS: MappingProxyType[str, Direction] = MappingProxyType(
    {"forward": Direction.FWD, "backward_data": Direction.BWD_DATA, "backward_weight": Direction.BWD_WEIGHT}
)
SUBSETS = ("profiler", "tests")
_LAYOUT_NDIM = MappingProxyType({"nhwgc": 2, "ndhwgc": 3, "ngchw": 2})
_SUFFIXES = ("streamk",)
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
    """Every ``.conf`` file under ``root``, sorted (deterministic order)."""
    return tuple(sorted(root.rglob("*.conf")))
