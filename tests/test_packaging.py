"""The wheel installs two import names, ``devicelint`` and ``runtime_shim``, and every source folder under them."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE_FOLDERS = {"devicelint": "analyzer", "devicelint.rules": "rules", "runtime_shim": "runtime_shim"}


def setuptools_table() -> dict:
    with open(REPO / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["tool"]["setuptools"]


def test_two_top_level_import_names() -> None:
    packages = setuptools_table()["packages"]
    assert {name.split(".")[0] for name in packages} == {"devicelint", "runtime_shim"}


def test_every_source_package_is_listed() -> None:
    table = setuptools_table()
    assert table["package-dir"] == {"devicelint": "analyzer", "devicelint.rules": "rules"}
    expected = set()
    for name, folder in SOURCE_FOLDERS.items():
        for init in (REPO / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(REPO / folder).parts
            expected.add(".".join((name, *relative)))
    assert set(table["packages"]) == expected


def test_installed_names_resolve() -> None:
    import devicelint
    import devicelint.rules

    import runtime_shim

    # an editable install maps the names onto the repository's folders; a wheel holds devicelint/rules/
    assert Path(devicelint.__file__).parent.name in {"analyzer", "devicelint"}
    assert Path(devicelint.rules.__file__).parent.name == "rules"
    assert Path(runtime_shim.__file__).parent.name == "runtime_shim"
    assert "analyzer" not in sys.modules and "rules" not in sys.modules
