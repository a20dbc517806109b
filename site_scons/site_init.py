"""Read by SCons before the SConstruct: the repository root stays importable for the whole build.

The generate action runs the driver's build API (``driver.build_api``) in-process, and a module imported for
the first time during an action or emitter (a library's lazy import, say) is imported long after the
SConstruct was read. SCons restores ``sys.path`` after reading each SConscript and tool, so an entry added
there is gone by the time an action runs; this file runs on the process's own ``sys.path`` (as SCons's site
directory does), so the root added here stays.
"""

import sys
from pathlib import Path

if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
