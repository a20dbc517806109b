"""Entry point of ``python -m generators``: Ctrl-C, even while modules load, is one line and status 130."""

import os
import sys

INTERRUPTED = 130

try:
    from generators.cli import main

    status = main()
except KeyboardInterrupt:
    sys.stderr.write("python -m generators: interrupted\n")
    status = INTERRUPTED
if status == INTERRUPTED:
    # CPython 3.11 ends the process by SIGINT, not with this status, once a KeyboardInterrupt has passed
    # through code run by exec() of a string (dataclasses build methods so), even one caught since.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(INTERRUPTED)
sys.exit(status)
