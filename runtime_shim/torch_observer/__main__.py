"""``python -m runtime_shim.torch_observer``: see :mod:`runtime_shim.torch_observer.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
