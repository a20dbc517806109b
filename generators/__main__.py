"""Entry point of ``python -m generators``: Ctrl-C, even while modules load, is one line and status 130."""

import sys

try:
    from generators.cli import main

    sys.exit(main())
except KeyboardInterrupt:
    sys.stderr.write("python -m generators: interrupted\n")
    sys.exit(130)
