"""Parity report over a legacy directory: what became of every line of every ``.conf`` file.

Per file: lines, comment lines, device-op lines, parsed, duplicates, skipped (with upstream's reason), the
configurations, how many the arch rejects (per rule: the NVIDIA rejections of upstream rules), the instances
that remain, and whether every native line comes out byte-identical as its configuration's instance string
(after the documented normalisations, listed as notes). The report is not ok when a line cannot be explained
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
    files: tuple[FileParity, ...]
    errors: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors and all(f.ok for f in self.files)

    def render(self) -> str:
        out = [f"parity report: {self.legacy_dir} (arch {self.arch})"]
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
            out.extend(f"  note line {line}: {note}" for line, note in f.notes)
            if f.native_lines:
                out.append(f"  native lines byte-identical: {f.native_identical}/{f.native_lines}")
            for line, expected, got in f.native_mismatches:
                out.append(f"  MISMATCH line {line}: line says {expected} but configuration gives {got}")
        out.extend(f"ERROR {e}" for e in self.errors)
        out.append("parity: ok" if self.ok else "parity: NOT ok")
        return "\n".join(out) + "\n"


def file_parity(result: LegacyFileResult, arch: str) -> FileParity:
    rejected: Counter[str] = Counter()
    for config in result.configs:
        verdict = validate(config, arch)
        if not verdict.ok:
            rejected[verdict.rule] += 1
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
        rejected_by_rule=tuple(sorted(rejected.items())),
        instances=len(result.configs) - sum(rejected.values()),
        native_lines=len(natives),
        native_identical=len(natives) - len(mismatches),
        native_mismatches=mismatches,
        notes=tuple((o.line_number, note) for o in outcomes for note in o.notes),
    )


def build_report(
    legacy_dir: Path | str,
    arch: str = "sm_90a",
    convention: WarpTileKConvention = WarpTileKConvention.CURRENT,
) -> ParityReport:
    """The parity report of every ``.conf`` file under ``legacy_dir``; RulesetError for a missing dir/arch."""
    root = Path(legacy_dir)
    if not root.is_dir():
        raise RulesetError(
            f"legacy directory {root} does not exist; accepted: a CK Builder configs directory"
        )
    try:
        get_arch(arch)
    except ValueError as error:
        raise RulesetError(str(error)) from None
    files: list[FileParity] = []
    errors: list[str] = []
    for path in discover(root):
        try:
            files.append(file_parity(read_legacy_file(root, path, convention), arch))
        except LegacyFormatError as error:
            errors.append(str(error))
    return ParityReport(legacy_dir=str(root), arch=arch, files=tuple(files), errors=tuple(errors))
