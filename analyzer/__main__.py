"""``python -m devicelint``: the devicelint command line."""

import os
import sys

# ``python -m`` puts the working directory first on ``sys.path``: run inside a checked project, its own
# ``typing.py`` or ``ast.py`` would shadow the standard library and take the run down (pip's ``__main__`` drops
# that entry the same way). The analysis never imports the code it checks.
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from .cli import console  # noqa: E402  (after the path is made safe)

console()
