"""The public request and result models of ``enumerate_ruleset`` (the CLI and the build API call it)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from generators.arch import DEFAULT_ARCH
from generators.config import AnyConfig
from generators.enums import DataType, Direction
from rulesets.errors import RulesetError
from rulesets.warp_tile import WarpTileKConvention

DEFAULT_LEGACY_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "legacy" / "ck_builder_configs"
"""``../shared/legacy/ck_builder_configs`` relative to the repository root."""


class RulesetName(Enum):
    TINY = "tiny"
    DEFAULT = "default"
    TESTS = "tests"
    PROFILER = "profiler"
    FULL = "full"
    FULL_TESTS = "full-tests"


RULESET_NAMES: tuple[str, ...] = tuple(r.value for r in RulesetName)
NDIMS = (2, 3)
_FROZEN = ConfigDict(frozen=True, extra="forbid")


def _choice(enum: type[Enum], value: Any, what: str) -> Any:
    if isinstance(value, enum):
        return value
    try:
        return enum(value)
    except ValueError:
        accepted = ", ".join(str(m.value) for m in enum)
        raise ValueError(f"unknown {what} {value!r}; accepted: {accepted}") from None


class RulesetRequest(BaseModel):
    """Which rule set to enumerate, for one direction, dtype and ndim, on one arch."""

    model_config = _FROZEN

    ruleset: RulesetName
    direction: Direction
    dtype: DataType
    ndim: Literal[2, 3]
    arch: str = DEFAULT_ARCH
    legacy_dir: Path = DEFAULT_LEGACY_DIR
    warp_tile_k_convention: WarpTileKConvention = WarpTileKConvention.CURRENT

    @field_validator("ruleset", mode="before")
    @classmethod
    def _ruleset(cls, value: Any) -> Any:
        return _choice(RulesetName, value, "rule set")

    @field_validator("direction", mode="before")
    @classmethod
    def _direction(cls, value: Any) -> Any:
        return _choice(Direction, value, "direction")

    @field_validator("dtype", mode="before")
    @classmethod
    def _dtype(cls, value: Any) -> Any:
        return _choice(DataType, value, "dtype")

    @field_validator("ndim", mode="before")
    @classmethod
    def _ndim(cls, value: Any) -> Any:
        if str(value) not in ("2", "3"):
            raise ValueError(f"unknown ndim {value!r}; accepted: 2, 3")
        return int(value)

    @field_validator("warp_tile_k_convention", mode="before")
    @classmethod
    def _convention(cls, value: Any) -> Any:
        return _choice(WarpTileKConvention, value, "warp_tile_k convention")

    @classmethod
    def build(cls, **fields: Any) -> RulesetRequest:
        """Construct, turning a validation failure into one ``RulesetError`` line naming the bad value."""
        try:
            return cls(**fields)
        except ValidationError as error:
            first = error.errors()[0]
            message = str(first.get("ctx", {}).get("error", first["msg"]))
            raise RulesetError(message.removeprefix("Value error, ")) from None


class RejectedConfig(BaseModel):
    """A configuration the arch's validity rules reject, with the rule it broke."""

    model_config = _FROZEN

    config: AnyConfig
    rule: str
    message: str


class SkippedLine(BaseModel):
    """A legacy line the upstream converter skips, with its reason."""

    model_config = _FROZEN

    file: str
    line_number: int
    reason: str


class RulesetResult(BaseModel):
    """Configurations (sorted by name, unique), arch rejections and skipped legacy lines."""

    model_config = _FROZEN

    request: RulesetRequest
    configs: tuple[AnyConfig, ...]
    rejected: tuple[RejectedConfig, ...] = ()
    skipped: tuple[SkippedLine, ...] = ()
