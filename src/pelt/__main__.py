"""``python -m pelt``: the ``pelt`` command, for environments without the console script on PATH."""

import sys

from pelt.cli import main

sys.exit(main())
