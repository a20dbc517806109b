"""Name filters (generators/name_filter.py): CUTLASS's rule (a filter's '*'-separated parts occur in the name
in order), include-then-exclude, and one-line errors for filters no instance name could match."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from generators.name_filter import NameFilter, filter_matches, parse_filters, select_by_name
from rulesets import RulesetRequest, enumerate_ruleset

NAME = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x64x32_2x2x1_32x32x16"


@pytest.mark.parametrize(
    ("item", "matches"),
    [
        ("fwd", True),
        ("fwd_fp16*128x64x32", True),
        ("128x64x32*fwd_fp16", False),  # parts in order only
        ("grouped*fp16*2d*16", True),
        ("fwd_bf16", False),
        ("_32x32x16", True),  # a suffix, as CUTLASS matches substrings
        ("x32x16*x", False),  # the last part must follow the one before it
        ("*compv3*", True),
    ],
)
def test_parts_must_occur_in_order(item: str, matches: bool) -> None:
    assert filter_matches(item, NAME) is matches


def test_include_then_exclude_on_a_rule_set() -> None:
    configs = enumerate_ruleset(
        RulesetRequest.build(ruleset="tiny", direction="fwd", dtype="fp16", ndim=2)
    ).configs
    names = [c.name for c in configs]
    name_filter = NameFilter(kernels=("128x128", "depthwise"), exclude_kernels=("f5",))
    # The same selection written as regular expressions over the names.
    wanted = [n for n in names if re.search("128x128|depthwise", n) and not re.search("f5", n)]
    assert 0 < len(wanted) < len(names)
    assert [c.name for c in select_by_name(configs, name_filter)] == wanted
    assert select_by_name(configs, NameFilter()) == list(configs)
    assert not NameFilter().active and name_filter.active


def test_parse_drops_empty_items_and_names_a_bad_filter() -> None:
    assert parse_filters(" fwd_fp16*128x64 , ,bwd_data", "kernels") == ("fwd_fp16*128x64", "bwd_data")
    assert parse_filters("", "kernels") == ()
    with pytest.raises(
        ValueError, match=r"^bad filter 'fwd-fp16' in kernels: '-' appears in no instance name"
    ):
        parse_filters("fwd_fp16,fwd-fp16", "kernels")
    with pytest.raises(
        ValueError, match=r"^bad filter '\*\*' in exclude_kernels: it holds no part of a name"
    ):
        parse_filters("**", "exclude_kernels")


def test_model_validates_and_describes_its_filters() -> None:
    with pytest.raises(ValidationError, match="bad filter 'FWD' in kernels"):
        NameFilter(kernels=("FWD",))
    both = NameFilter(kernels=("a", "b*c"), exclude_kernels=("d",))
    assert both.describe() == "kernels=a,b*c exclude_kernels=d"
    assert both.describe("cli") == "--kernels a,b*c --exclude-kernels d"
