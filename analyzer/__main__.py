"""``python -m devicelint``: the devicelint command line."""

from .cli import console

console()
