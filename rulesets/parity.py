"""Parity report over a legacy directory: what became of every line of every ``.conf`` file.

Per file: lines, comment lines, device-op lines, parsed, duplicates, skipped (with upstream's reason), the
configurations, which the arch rejects (each with its line, rule and reason: the NVIDIA rejections of
upstream rules; also counted per rule), the instances that remain, and whether every native line comes out
byte-identical as its configuration's instance string (after the documented normalisations, listed as
notes). The report is not ok when a line cannot be explained
(``LegacyFormatError``) or a native line's instance string differs.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from generators.arch import get_arch
from generators.validity import validate
from rulesets.errors import LegacyFormatError, RulesetError
from rulesets.legacy import LegacyFileResult, read_legacy_file
from rulesets.legacy_files import discover
from rulesets.warp_tile import WarpTileKConvention

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_CONVENTIONS = tuple(c.value for c in WarpTileKConvention)


class RejectedLine(BaseModel):
    """A legacy configuration the arch rejects: the line it comes from, its name, the rule and why."""

    model_config = _FROZEN

    line_number: int
    name: str
    rule: str
    message: str


class FileParity(BaseModel):
    model_config = _FROZEN

    path: str
    lines: int
    comment_lines: int
    device_op_lines: int
    parsed: int
    duplicates: tuple[tuple[int, int], ...]
    skipped: tuple[tuple[int, str], ...]
    configurations: int
    rejected_by_rule: tuple[tuple[str, int], ...]
    rejected: tuple[RejectedLine, ...] = ()
    instances: int
    native_lines: int
    native_identical: int
    native_mismatches: tuple[tuple[int, str, str], ...]
    notes: tuple[tuple[int, str], ...]

    @property
    def ok(self) -> bool:
        return not self.native_mismatches


class ParityReport(BaseModel):
    model_config = _FROZEN

    legacy_dir: str
    arch: str
    convention: WarpTileKConvention = WarpTileKConvention.CURRENT
    files: tuple[FileParity, ...]
    errors: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors and all(f.ok for f in self.files)

    def render(self) -> str:
        out = [
            f"parity report: {self.legacy_dir} (arch {self.arch}, warp_tile_k convention "
            f"{self.convention.value})"
        ]
        for f in self.files:
            rejected = sum(n for _, n in f.rejected_by_rule)
            out.append(
                f"{f.path}: {f.lines} lines, {f.comment_lines} comments, {f.device_op_lines} device ops: "
                f"{f.parsed} parsed, {len(f.duplicates)} duplicates, {len(f.skipped)} skipped; "
                f"{f.configurations} configurations, {rejected} arch-rejected, {f.instances} instances"
            )
            out.extend(f"  duplicate line {line} of line {first}" for line, first in f.duplicates)
            out.extend(f"  skipped line {line}: {reason}" for line, reason in f.skipped)
            out.extend(f"  arch-rejected ({rule}): {n}" for rule, n in f.rejected_by_rule)
            out.extend(
                f"  arch-rejected line {r.line_number} ({r.rule}): {r.name}: {r.message}" for r in f.rejected
            )
            out.extend(f"  note line {line}: {note}" for line, note in f.notes)
            if f.native_lines:
                out.append(f"  native lines byte-identical: {f.native_identical}/{f.native_lines}")
            for line, expected, got in f.native_mismatches:
                out.append(f"  MISMATCH line {line}: line says {expected} but configuration gives {got}")
        out.extend(f"ERROR {e}" for e in self.errors)
        out.append("parity: ok" if self.ok else "parity: NOT ok")
        return "\n".join(out) + "\n"


def file_parity(result: LegacyFileResult, arch: str) -> FileParity:
    line_of: dict[str, int] = {}
    for outcome in result.outcomes:
        for name in outcome.names:
            line_of.setdefault(name, outcome.line_number)
    rejected = []
    for config in result.configs:
        verdict = validate(config, arch)
        if not verdict.ok:
            rejected.append(
                RejectedLine(
                    line_number=line_of[config.name],
                    name=config.name,
                    rule=verdict.rule,
                    message=verdict.message,
                )
            )
    by_rule = Counter(r.rule for r in rejected)
    by_name = {c.name: c for c in result.configs}
    natives = [o for o in result.outcomes if o.canonical_text is not None]
    mismatches = tuple(
        (
            o.line_number,
            o.canonical_text or "",
            by_name[o.names[0]].instance_string if o.names[0] in by_name else "",
        )
        for o in natives
        if o.names[0] not in by_name or by_name[o.names[0]].instance_string != o.canonical_text
    )
    outcomes = result.outcomes
    return FileParity(
        path=result.file.relative_path,
        lines=result.total_lines,
        comment_lines=result.comment_lines,
        device_op_lines=len(outcomes),
        parsed=result.count("parsed"),
        duplicates=tuple((o.line_number, o.duplicate_of or 0) for o in outcomes if o.status == "duplicate"),
        skipped=tuple((o.line_number, o.reason) for o in outcomes if o.status == "skipped"),
        configurations=len(result.configs),
        rejected_by_rule=tuple(sorted(by_rule.items())),
        rejected=tuple(sorted(rejected, key=lambda r: (r.line_number, r.name))),
        instances=len(result.configs) - len(rejected),
        native_lines=len(natives),
        native_identical=len(natives) - len(mismatches),
        native_mismatches=mismatches,
        notes=tuple((o.line_number, note) for o in outcomes for note in o.notes),
    )


def build_report(
    legacy_dir: Path | str,
    arch: str = "sm_90a",
    convention: WarpTileKConvention | str = WarpTileKConvention.CURRENT,
) -> ParityReport:
    """The parity report of every ``.conf`` file under ``legacy_dir``, converted with the warp_tile_k
    ``convention`` (``current`` or ``first_tool``); RulesetError (one line) for a missing dir, an unknown arch
    or convention."""
    root = Path(legacy_dir)
    if not root.is_dir():
        raise RulesetError(
            f"legacy directory {root} does not exist; accepted: a CK Builder configs directory"
        )
    try:
        get_arch(arch)
    except ValueError as error:
        raise RulesetError(str(error)) from None
    if convention not in (*WarpTileKConvention, *_CONVENTIONS):
        accepted = ", ".join(_CONVENTIONS)
        raise RulesetError(f"unknown warp_tile_k convention {convention!r}; accepted: {accepted}")
    chosen = WarpTileKConvention(convention)
    files: list[FileParity] = []
    errors: list[str] = []
    paths = discover(root)
    if not paths:
        raise RulesetError(
            f"legacy directory {root} holds no .conf files; accepted: a CK Builder configs directory"
        )
    for path in paths:
        try:
            files.append(file_parity(read_legacy_file(root, path, chosen), arch))
        except LegacyFormatError as error:
            errors.append(str(error))
    return ParityReport(
        legacy_dir=str(root), arch=arch, convention=chosen, files=tuple(files), errors=tuple(errors)
    )
