"""The per-wave MMA step's K (``warp_tile_k``) as CK derives it (ck_conventions §4), in both conventions.

``warp_tile_k = min(max(k1, k_mfma), tile_k)``; ``k_mfma`` depends on dtype and the MxN warp tile. The current
table is upstream's ``generate_instances.get_k_mfma``; the first conversion tool (``ck_dispatcher_json``) used
a smaller one, selectable so that its output can be reproduced field for field.
"""

from __future__ import annotations

from enum import Enum
from types import MappingProxyType

from generators.enums import DataType


class WarpTileKConvention(Enum):
    CURRENT = "current"
    FIRST_TOOL = "first_tool"


# (convention, is_fp32, warp tile M = N) -> k_mfma
_K_MFMA: MappingProxyType[tuple[WarpTileKConvention, bool, int], int] = MappingProxyType(
    {
        (WarpTileKConvention.CURRENT, False, 32): 16,
        (WarpTileKConvention.CURRENT, False, 16): 32,
        (WarpTileKConvention.CURRENT, True, 32): 2,
        (WarpTileKConvention.CURRENT, True, 16): 4,
        (WarpTileKConvention.FIRST_TOOL, False, 32): 8,
        (WarpTileKConvention.FIRST_TOOL, False, 16): 16,
        (WarpTileKConvention.FIRST_TOOL, True, 32): 2,
        (WarpTileKConvention.FIRST_TOOL, True, 16): 4,
    }
)


def k_mfma(
    dtype: DataType, warp_tile_m: int, warp_tile_n: int, convention: WarpTileKConvention
) -> int | None:
    """K of one MFMA for this warp tile, or None when CK has no entry (non-square or not 16/32)."""
    if warp_tile_m != warp_tile_n:
        return None
    return _K_MFMA.get((convention, dtype is DataType.FP32, warp_tile_m))


def rule_k1(tile_k: int) -> int:
    """K1 of a rule-derived configuration, which has no line to read it from (ck_conventions §4)."""
    return 4 if tile_k <= 16 else 8


def warp_tile_k(k1: int, kmfma: int, tile_k: int) -> int:
    return min(max(k1, kmfma), tile_k)
