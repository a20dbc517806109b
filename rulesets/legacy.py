"""Reading a legacy directory: every ``.conf`` file -> per-line outcomes and de-duplicated configurations.

Each non-comment line is parsed (``rulesets.conf_lines``), converted (``rulesets.legacy_convert``) and then
either *parsed* (its configurations are new), *duplicate* (they repeat an earlier line's: lines that differ
only in thread-cluster ``Seq(...)`` or K0/K1 splits) or *skipped* (with upstream's reason). A line no format
explains raises ``LegacyFormatError`` naming ``file:line``. The ``profiler`` and ``tests`` rule sets are the
configurations of the ``profiler/`` and ``tests/`` files (``rulesets.enumerate``); per file and line, the
parity report (``rulesets.parity``) lists which of them the arch rejects.

Arch rejections of ``profiler`` on sm_90a (configurations summed over the 18 requests):
``depthwise_shared_memory`` 2 -- fp32 forward depthwise vec 8 on the 32x32 tile (a 262-293 KB halo). Its
other 12 fp32 vec-8 lines run, as two 16-byte accesses per vector.

Arch rejections of ``tests`` on sm_90a (configurations summed over the 18 requests): ``register_budget`` 6 --
224x256, 256x224 and 256x256 tiles on four waves (more than 128 fp32 accumulators per thread).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from generators.config import AnyConfig
from rulesets.conf_lines import LineFormatError, parse_line
from rulesets.conf_tokens import is_comment_or_blank
from rulesets.errors import LegacyFormatError, RulesetError
from rulesets.legacy_convert import convert_line
from rulesets.legacy_files import (
    LegacyFileName,
    describe_validation_error,
    discover,
    parse_file_name,
    read_conf_text,
)
from rulesets.warp_tile import WarpTileKConvention

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class LineOutcome(BaseModel):
    """What became of one device-op line."""

    model_config = _FROZEN

    line_number: int
    text: str
    status: Literal["parsed", "duplicate", "skipped"]
    reason: str = ""
    duplicate_of: int | None = None
    notes: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    canonical_text: str | None = None


class LegacyFileResult(BaseModel):
    """One legacy file: its meaning, line counts, per-line outcomes and its unique configurations."""

    model_config = _FROZEN

    file: LegacyFileName
    total_lines: int
    comment_lines: int
    outcomes: tuple[LineOutcome, ...]
    configs: tuple[AnyConfig, ...]

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)


def read_legacy_file(root: Path, path: Path, convention: WarpTileKConvention) -> LegacyFileResult:
    return convert_legacy_text(root, path, read_conf_text(path), convention)


def convert_legacy_text(
    root: Path, path: Path, text: str, convention: WarpTileKConvention
) -> LegacyFileResult:
    """``read_legacy_file`` on text already read (a pure function of its arguments)."""
    file = parse_file_name(root, path)
    lines = text.splitlines()
    outcomes: list[LineOutcome] = []
    configs: list[AnyConfig] = []
    first_line_of: dict[str, int] = {}
    comments = 0
    for number, line in enumerate(lines, start=1):
        if is_comment_or_blank(line):
            comments += 1
            continue
        try:
            conversion = convert_line(parse_line(line), file, convention)
        except LineFormatError as error:
            raise LegacyFormatError(path, number, error.problem, error.expected) from None
        except ValidationError as error:
            # A line of a known format whose values make no configuration: name the field and the value.
            problem, expected = describe_validation_error(error)
            raise LegacyFormatError(path, number, problem, expected) from None
        if conversion.skip_reason is not None:
            outcomes.append(
                LineOutcome(line_number=number, text=line, status="skipped", reason=conversion.skip_reason)
            )
            continue
        names = tuple(c.name for c in conversion.configs)
        fresh = [c for c in conversion.configs if c.name not in first_line_of]
        status: Literal["parsed", "duplicate"] = "parsed" if fresh else "duplicate"
        outcomes.append(
            LineOutcome(
                line_number=number,
                text=line,
                status=status,
                duplicate_of=None if fresh else first_line_of[names[0]],
                notes=conversion.notes,
                names=names,
                canonical_text=conversion.canonical_text,
            )
        )
        for config in fresh:
            first_line_of[config.name] = number
            configs.append(config)
    return LegacyFileResult(
        file=file,
        total_lines=len(lines),
        comment_lines=comments,
        outcomes=tuple(outcomes),
        configs=tuple(configs),
    )


def read_legacy_dir(root: Path, convention: WarpTileKConvention) -> tuple[LegacyFileResult, ...]:
    """Every legacy file under ``root`` in path order; RulesetError when ``root`` is not a directory."""
    if not root.is_dir():
        raise RulesetError(
            f"legacy directory {root} does not exist; pass --legacy-dir / legacy_dir= a configs dir"
        )
    paths = discover(root)
    if not paths:
        raise RulesetError(
            f"legacy directory {root} holds no .conf files; pass --legacy-dir / legacy_dir= a configs dir"
        )
    return tuple(read_legacy_file(root, path, convention) for path in paths)
