"""``python -m runtime_shim``: run programs under recording (see :mod:`runtime_shim.runner`)."""

import sys

from .runner import main

if __name__ == "__main__":
    sys.exit(main())
