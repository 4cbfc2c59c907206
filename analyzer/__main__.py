"""``python -m analyzer``: the devicelint command line."""

from .cli import console

console()
