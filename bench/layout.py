"""A checkout's packages laid out as the wheel installs them, made of links to its files: ``devicelint/`` from
``analyzer/``, ``devicelint/rules/`` from ``rules/``, ``runtime_shim/``. On ``PYTHONPATH`` it runs that checkout's
code whatever the environment installed (an editable install maps ``devicelint`` to one checkout only), and mypy
can follow it (it cannot follow the editable install's name mapping)."""

from __future__ import annotations

from pathlib import Path


def installed_layout(checkout: Path, root: Path) -> Path:
    """``root`` holding ``checkout``'s packages as installed (``root`` must not exist yet)."""
    package = root / "devicelint"
    package.mkdir(parents=True)
    for entry in (checkout / "analyzer").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry.resolve())
    (package / "rules").symlink_to((checkout / "rules").resolve())
    (root / "runtime_shim").symlink_to((checkout / "runtime_shim").resolve())
    return root
