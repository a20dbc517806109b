"""Content-defined chunking of the sorted instance list into compilation units (DESIGN decision 5).

Positional chunking of a sorted list (every 25 names) cascades: one new name shifts every later unit. Here
the boundaries depend on the names themselves:

1. *natural boundaries*: a unit starts at every name whose hash falls below ``1 / NATURAL_PERIOD``;
2. a run longer than ``chunk`` is split recursively at the name with the smallest hash inside it (a treap
   split: also content-defined, so a change moves only the splits on its own path).

Adding or removing one name therefore changes the unit that holds it and, when the name is itself a
boundary, its neighbour; in a run longer than ``chunk`` (about 1 run in 5 by default) the treap split may
also regroup other parts of that run. Never units outside it, never the units after it.
A unit's id is a short hash of its first name, so ids do not depend on positions either.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

DEFAULT_CHUNK = 25
NATURAL_PERIOD = 16
_HASH_SPACE = 1 << 64
ID_HEX_DIGITS = 10


class Unit(BaseModel):
    """One compilation unit: its content-derived id and its instance names, in sorted order."""

    model_config = ConfigDict(frozen=True)

    id: str
    names: tuple[str, ...]


def _hash(name: str) -> int:
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big")


def is_natural_boundary(name: str) -> bool:
    """Whether ``name`` starts a unit whatever its neighbours are."""
    return _hash(name) < _HASH_SPACE // NATURAL_PERIOD


def unit_id(first_name: str) -> str:
    return hashlib.blake2b(first_name.encode(), digest_size=8).hexdigest()[:ID_HEX_DIGITS]


def _split_run(run: Sequence[str], hashes: Sequence[int], chunk: int) -> list[Sequence[str]]:
    if len(run) <= chunk:
        return [run]
    # The name with the smallest hash (never the first, which already starts this run) starts a new part.
    cut = min(range(1, len(run)), key=hashes.__getitem__)
    return _split_run(run[:cut], hashes[:cut], chunk) + _split_run(run[cut:], hashes[cut:], chunk)


def chunk_names(names: Sequence[str], chunk: int = DEFAULT_CHUNK) -> list[Unit]:
    """Split sorted, unique ``names`` into units of at most ``chunk`` names; deterministic."""
    if chunk < 1:
        raise ValueError(f"chunk {chunk} is not a positive number of instances per unit")
    if list(names) != sorted(set(names)):
        raise ValueError("chunk_names needs sorted, unique names")
    if not names:
        return []
    hashes = [_hash(n) for n in names]
    threshold = _HASH_SPACE // NATURAL_PERIOD
    starts = [0] + [i for i in range(1, len(names)) if hashes[i] < threshold]
    units: list[Unit] = []
    for begin, end in zip(starts, [*starts[1:], len(names)], strict=True):
        for part in _split_run(names[begin:end], hashes[begin:end], chunk):
            units.append(Unit(id=unit_id(part[0]), names=tuple(part)))
    ids = [u.id for u in units]
    if len(set(ids)) != len(ids):
        raise ValueError("two units got the same id; raise ID_HEX_DIGITS")
    return units
