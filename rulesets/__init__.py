"""tiledispatch rule sets: the six rule sets of ck_conventions §5 and the legacy CK Builder ``.conf`` parser.

Public API (used by the driver layer: ``driver.cli``, behind ``python -m generators``, and
``driver.build_api``)::

    from rulesets import RULESET_NAMES, RulesetRequest, RulesetResult, enumerate_ruleset
    result = enumerate_ruleset(RulesetRequest.build(ruleset="full", direction="fwd", dtype="fp16", ndim=2))

Bad input raises ``RulesetError`` whose ``str`` is one line naming the bad value and the accepted ones.
"""

from rulesets.enumerate import enumerate_ruleset
from rulesets.errors import LegacyFormatError, RulesetError
from rulesets.request import (
    DEFAULT_LEGACY_DIR,
    RULESET_NAMES,
    RejectedConfig,
    RulesetName,
    RulesetRequest,
    RulesetResult,
    SkippedLine,
)
from rulesets.warp_tile import WarpTileKConvention

__all__ = [
    "DEFAULT_LEGACY_DIR",
    "RULESET_NAMES",
    "LegacyFormatError",
    "RejectedConfig",
    "RulesetError",
    "RulesetName",
    "RulesetRequest",
    "RulesetResult",
    "SkippedLine",
    "WarpTileKConvention",
    "enumerate_ruleset",
]
