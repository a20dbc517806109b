import sys

from heuristics.cli import main

sys.exit(main())
