"""``python -m analyzer``: the devicelint command line."""

import sys

from .cli import main

sys.exit(main())
