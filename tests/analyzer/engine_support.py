"""Test support: the engines a check runs, kept for inspection (which passes ran, what the sweep skipped)."""

from __future__ import annotations

import pytest
from devicelint.engine.core import Engine


def remember_engines(monkeypatch: pytest.MonkeyPatch) -> list[Engine]:
    """From now on in the test, every engine that runs is appended to the returned list."""
    engines: list[Engine] = []
    run = Engine.run

    def remembered(self: Engine) -> None:
        engines.append(self)
        run(self)

    monkeypatch.setattr(Engine, "run", remembered)
    return engines
