"""``python -m generators {list,count,show,export-json,parity,generate,arch-header}`` (entry point:
``generators/__main__.py``, which only calls ``main`` here).

Bad input never gets a traceback: an unknown option or value, or one given twice, prints one line naming it
and what is accepted and exits 2; a missing or empty legacy directory, a bad legacy line (file and line) or an
unwritable output does the same. Ctrl-C prints one line and exits 130. ``parity`` exits 1 when the report is
not ok. Output files are written atomically (``generators.atomic_files``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import NoReturn

from driver.build_api import GenerateRequest, generate, generate_arch_header
from generators.arch import ARCH_NAMES, DEFAULT_ARCH
from generators.chunking import DEFAULT_CHUNK
from generators.config import DepthwiseConfig, KernelConfig
from generators.emit import sorted_by_name, write_files
from generators.enums import DataType, Direction
from generators.name_filter import NameFilter, parse_filters, select_by_name
from generators.naming import parse_kernel_name
from generators.validity import validate
from rulesets import DEFAULT_LEGACY_DIR, RULESET_NAMES, RulesetRequest, RulesetResult, enumerate_ruleset
from rulesets.parity import build_report

PROG = "python -m generators"
NDIMS = (2, 3)


class UsageError(Exception):
    """One line for the user; exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _choices(text: str, accepted: Sequence[str], what: str) -> list[str]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    for index, value in enumerate(values):
        if value not in accepted:
            raise UsageError(f"unknown {what} {value!r}; accepted: {', '.join(accepted)}")
        if value in values[:index]:
            raise UsageError(f"{what} {value!r} given twice in {text!r}; accepted: each value once")
    if not values:
        raise UsageError(f"empty {what}; accepted: {', '.join(accepted)}")
    return values


def _parser(ruleset_names: Sequence[str]) -> _Parser:
    common = _Parser(add_help=False)
    common.add_argument("--ruleset", default="default", help=f"one of {', '.join(ruleset_names)}")
    common.add_argument("--direction", default="fwd,bwd_data,bwd_weight", help="comma-separated directions")
    common.add_argument("--dtype", default="fp16,bf16,fp32", help="comma-separated dtypes")
    common.add_argument("--ndim", default="2,3", help="comma-separated spatial dims")
    common.add_argument("--arch", default=DEFAULT_ARCH, help=f"one of {', '.join(ARCH_NAMES)}")
    common.add_argument("--legacy-dir", default=str(DEFAULT_LEGACY_DIR), help="CK Builder .conf directory")
    # The commands over a selection of instances also take name filters (generators/name_filter.py).
    filtered = _Parser(add_help=False, parents=[common])
    filtered.add_argument(
        "--kernels",
        default="",
        help="only names matching one of these comma-separated filters (parts of a name joined by '*', "
        "in order, as CUTLASS_LIBRARY_KERNELS), e.g. fwd_fp16*128x64x32",
    )
    filtered.add_argument("--exclude-kernels", default="", help="then leave out names matching one of these")
    parser = _Parser(
        prog=PROG, description="tiledispatch configurations: list, count, show, export, generate"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    commands.add_parser("list", parents=[filtered], help="print every kernel name")
    commands.add_parser("count", parents=[filtered], help="table of counts per direction x dtype x ndim")
    show = commands.add_parser("show", parents=[common], help="print one configuration, parsed from its name")
    show.add_argument("name")
    export = commands.add_parser("export-json", parents=[filtered], help='write {"instances": [...]}')
    export.add_argument("--output", type=Path, default=None, help="file to write (default: stdout)")
    commands.add_parser("parity", parents=[common], help="parity report of the legacy .conf files")
    gen = commands.add_parser("generate", parents=[filtered], help="write the generated C++ file set")
    gen.add_argument("--out-dir", type=Path, required=True)
    gen.add_argument("--chunk", type=int, default=DEFAULT_CHUNK)
    header = commands.add_parser(
        "arch-header",
        help="write tiledispatch/generated/arch_traits.hpp (all arches) for builds without SCons",
    )
    header.add_argument("--out-dir", type=Path, required=True)
    return parser


class _Selection:
    def __init__(self, args: argparse.Namespace, ruleset_names: Sequence[str]) -> None:
        if args.ruleset not in ruleset_names:
            raise UsageError(f"unknown rule set {args.ruleset!r}; accepted: {', '.join(ruleset_names)}")
        if args.arch not in ARCH_NAMES:
            raise UsageError(f"unknown arch {args.arch!r}; accepted: {', '.join(ARCH_NAMES)}")
        self.ruleset: str = args.ruleset
        self.arch: str = args.arch
        if not str(args.legacy_dir).strip():
            raise UsageError("empty --legacy-dir; accepted: a directory of CK Builder .conf files")
        self.legacy_dir = Path(args.legacy_dir)
        self.directions = [Direction(d) for d in _choices(args.direction, Direction.values(), "direction")]
        self.dtypes = [DataType(d) for d in _choices(args.dtype, DataType.values(), "dtype")]
        self.ndims = [int(n) for n in _choices(args.ndim, [str(n) for n in NDIMS], "ndim")]
        try:
            self.name_filter = NameFilter(
                kernels=parse_filters(getattr(args, "kernels", ""), "--kernels"),
                exclude_kernels=parse_filters(getattr(args, "exclude_kernels", ""), "--exclude-kernels"),
            )
        except ValueError as error:
            raise UsageError(str(error)) from None

    def kept(self, configs: Iterable[KernelConfig | DepthwiseConfig]) -> list[KernelConfig | DepthwiseConfig]:
        """The configurations the name filters keep; ``UsageError`` when filters keep none of several."""
        listed = list(configs)
        chosen = select_by_name(listed, self.name_filter)
        if listed and not chosen:
            raise UsageError(
                f"{self.name_filter.describe('cli')} keeps none of the {len(listed)} instances of rule set "
                f"{self.ruleset!r} in this selection; `list` without filters prints their names"
            )
        return chosen


def _enumerate(selection: _Selection) -> Iterator[tuple[Direction, DataType, int, RulesetResult]]:
    for direction in selection.directions:
        for dtype in selection.dtypes:
            for ndim in selection.ndims:
                request = RulesetRequest.build(
                    ruleset=selection.ruleset,
                    direction=direction,
                    dtype=dtype,
                    ndim=ndim,
                    arch=selection.arch,
                    legacy_dir=selection.legacy_dir,
                )
                yield direction, dtype, ndim, enumerate_ruleset(request)


def _all_configs(selection: _Selection) -> list[KernelConfig | DepthwiseConfig]:
    return selection.kept(sorted_by_name(c for *_, result in _enumerate(selection) for c in result.configs))


def _cmd_list(selection: _Selection, args: argparse.Namespace) -> int:
    for config in _all_configs(selection):
        print(config.name)
    return 0


def _cmd_count(selection: _Selection, args: argparse.Namespace) -> int:
    header = f"{'direction':<11} {'dtype':<5} {'ndim':>4} {'configs':>8} {'rejected':>8} {'skipped':>8}"
    print(f"rule set {selection.ruleset}, arch {selection.arch}")
    print(header)
    totals = [0, 0, 0]
    for direction, dtype, ndim, result in _enumerate(selection):
        kept = select_by_name(result.configs, selection.name_filter)
        counts = (len(kept), len(result.rejected), len(result.skipped))
        totals = [t + c for t, c in zip(totals, counts, strict=True)]
        print(
            f"{direction.value:<11} {dtype.value:<5} {ndim:>4} {counts[0]:>8} {counts[1]:>8} {counts[2]:>8}"
        )
    print(f"{'total':<11} {'':<5} {'':>4} {totals[0]:>8} {totals[1]:>8} {totals[2]:>8}")
    if selection.name_filter.active:
        print(f"configs: those {selection.name_filter.describe('cli')} keeps")
    print(
        "rejected: candidates the arch spec refused, each with its rule (tiny and full-tests report "
        "those of full, which they select from);\n"
        "skipped: legacy .conf lines skipped with a reason (see parity)"
    )
    return 0


def _record(config: KernelConfig | DepthwiseConfig) -> dict[str, object]:
    return {
        "name": config.name,
        "instance_string": config.instance_string,
        "direction": config.direction.value,
        "dtype": config.dtype.value,
        "ndim": config.ndim_spatial,
        "layout": config.layout.value,
        "family": config.family.value,
        "category": config.category.value,
        **config.model_dump(mode="json"),
    }


def _cmd_show(selection: _Selection, args: argparse.Namespace) -> int:
    try:
        config = parse_kernel_name(args.name)
    except ValueError as error:
        raise UsageError(str(error)) from None
    for key, value in _record(config).items():
        print(f"{key}: {value}")
    result = validate(config, selection.arch)
    verdict = "valid" if result.ok else f"invalid ({result.rule}: {result.message})"
    print(f"validity on {selection.arch}: {verdict}")
    return 0


def _cmd_export_json(selection: _Selection, args: argparse.Namespace) -> int:
    text = json.dumps({"instances": [_record(c) for c in _all_configs(selection)]}, indent=1) + "\n"
    if args.output is None:
        sys.stdout.write(text)
        return 0
    output: Path = args.output.resolve()
    try:
        write_files(output.parent, {output.name: text})
    except OSError as error:
        raise UsageError(f"cannot write --output {args.output}: {error.strerror or error}") from None
    return 0


def _cmd_parity(selection: _Selection, args: argparse.Namespace) -> int:
    report = build_report(selection.legacy_dir, selection.arch)
    print(report.render())
    return 0 if report.ok else 1


def _write_arch_header(out_dir: Path) -> None:
    try:
        generate_arch_header(out_dir)
    except OSError as error:
        raise UsageError(f"cannot write --out-dir {out_dir}: {error.strerror or error}") from None


def _cmd_arch_header(args: argparse.Namespace) -> int:
    _write_arch_header(args.out_dir)
    print(f"arch header in {args.out_dir}")
    return 0


def _cmd_generate(selection: _Selection, args: argparse.Namespace) -> int:
    for direction in selection.directions:
        request = GenerateRequest.build(
            ruleset=selection.ruleset,
            arch=selection.arch,
            direction=direction,
            dtypes=selection.dtypes,
            ndims=selection.ndims,
            legacy_dir=selection.legacy_dir,
            chunk=args.chunk,
            name_filter=selection.name_filter,
        )
        try:
            written = generate(request, args.out_dir)
        except OSError as error:
            raise UsageError(f"cannot write --out-dir {args.out_dir}: {error.strerror or error}") from None
        print(f"{direction.value}: {len(written)} files in {args.out_dir}")
    # The instance headers include the arch header: the generated directory is complete with it. It is
    # written last, so that bad input (refused while the directions are generated) leaves no output.
    _write_arch_header(args.out_dir)
    return 0


COMMANDS = {
    "list": _cmd_list,
    "count": _cmd_count,
    "show": _cmd_show,
    "export-json": _cmd_export_json,
    "parity": _cmd_parity,
    "generate": _cmd_generate,
}


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser(RULESET_NAMES).parse_args(argv)
        if args.command == "arch-header":  # no rule set, arch or legacy directory: it holds every arch
            return _cmd_arch_header(args)
        selection = _Selection(args, RULESET_NAMES)
        return COMMANDS[args.command](selection, args)
    except UsageError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except ValueError as error:  # RulesetError and friends: one line naming the bad value
        first_line = (str(error) or type(error).__name__).splitlines()[0]
        print(f"{PROG}: error: {first_line}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
