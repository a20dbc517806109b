"""Which instances to build or list, by name, with the semantics of CUTLASS's kernel filters
(``CUTLASS_LIBRARY_KERNELS`` / ``CUTLASS_LIBRARY_EXCLUDE_KERNELS``): a filter is one or more parts of a name
joined by ``*``, and it matches a name that holds its parts in that order. ``kernels`` keeps the names that
match any of its filters (none given: every name); ``exclude_kernels`` then drops the names that match any of
its.

    kernels=fwd_fp16*128x64x32           every fp16 fwd instance with a 128x64x32 tile
    exclude_kernels=_dsb,depthwise       ... but not the double-buffered nor the depthwise ones

Used by the build (``scons kernels=... exclude_kernels=...``) and by ``python -m generators`` (``list``,
``count``, ``export-json``, ``generate``: ``--kernels``, ``--exclude-kernels``).
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

FILTER_CHARS = frozenset(string.ascii_lowercase + string.digits + "_*")
"""Instance names are lowercase letters, digits and underscores; ``*`` joins the parts of a filter."""
ACCEPTED = "parts of instance names (lowercase letters, digits, '_') joined by '*', e.g. fwd_fp16*128x64x32"


class Named(Protocol):
    @property
    def name(self) -> str: ...


NamedT = TypeVar("NamedT", bound=Named)


def parse_filters(text: str, option: str) -> tuple[str, ...]:
    """``"a*b, c"`` -> ``("a*b", "c")``; empty items are dropped, as CUTLASS drops them. ``ValueError`` (one
    line naming the bad filter and ``option``) for a filter that no instance name could match."""
    filters = tuple(item.strip() for item in text.split(",") if item.strip())
    for item in filters:
        _check_filter(item, option)
    return filters


def _check_filter(item: str, option: str) -> None:
    bad = sorted(set(item) - FILTER_CHARS)
    if bad:
        raise ValueError(
            f"bad filter '{item}' in {option}: {''.join(bad)!r} appears in no instance name; accepted: "
            f"{ACCEPTED}"
        )
    if not item.strip("*"):
        raise ValueError(f"bad filter '{item}' in {option}: it holds no part of a name; accepted: {ACCEPTED}")


def filter_matches(item: str, name: str) -> bool:
    """Whether the ``*``-separated parts of ``item`` occur in ``name`` in order."""
    at = 0
    for part in item.split("*"):
        found = name.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return True


class NameFilter(BaseModel):
    """The ``kernels`` and ``exclude_kernels`` filters of a build or listing; empty ones select every
    instance."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kernels: tuple[str, ...] = ()
    exclude_kernels: tuple[str, ...] = ()

    @field_validator("kernels", "exclude_kernels")
    @classmethod
    def _valid(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        for item in value:
            _check_filter(item, str(info.field_name))
        return value

    @property
    def active(self) -> bool:
        return bool(self.kernels or self.exclude_kernels)

    def keeps(self, name: str) -> bool:
        included = not self.kernels or any(filter_matches(item, name) for item in self.kernels)
        return included and not any(filter_matches(item, name) for item in self.exclude_kernels)

    def describe(self, style: Literal["scons", "cli"] = "scons") -> str:
        """The filters as the build spells them (``kernels=a,b exclude_kernels=c``) or as the command line of
        ``python -m generators`` does (``--kernels a,b --exclude-kernels c``)."""
        given = [
            (name, items)
            for name, items in (("kernels", self.kernels), ("exclude_kernels", self.exclude_kernels))
            if items
        ]
        if style == "scons":
            return " ".join(f"{name}={','.join(items)}" for name, items in given)
        return " ".join(f"--{name.replace('_', '-')} {','.join(items)}" for name, items in given)


def select_by_name(configs: Iterable[NamedT], name_filter: NameFilter) -> list[NamedT]:
    """The configurations whose names ``name_filter`` keeps, in their order."""
    return [config for config in configs if name_filter.keeps(config.name)]
