"""Entry point of ``python -m generators``."""

import sys

from generators.cli import main

sys.exit(main())
