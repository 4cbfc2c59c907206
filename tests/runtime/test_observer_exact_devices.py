"""Ops whose CUDA wrapper checks every tensor argument's device refuse a 0-dim CPU tensor that element-wise ops
take as a number. The observer's fake CUDA must fail where the H200 failed: the probe in
docs/results/2026-12-04-h200-zero-dim/ ran there (``real.txt``); here it runs under the observer, case by case."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from runtime_shim.torch_observer import cli  # noqa: E402

PROBE = Path(__file__).resolve().parents[2] / "docs" / "results" / "2026-12-04-h200-zero-dim"


def outcomes(lines: list[str]) -> dict[str, bool]:
    """Each case's name and whether it ran (``name: ok``) or raised."""
    found = {}
    for line in lines:
        name, _, rest = line.partition(": ")
        found[name] = rest == "ok"
    return found


def test_the_observer_fails_where_the_h200_failed() -> None:
    real = outcomes((PROBE / "real.txt").read_text().splitlines())
    outcome = cli.run_program(PROBE / "probe.py")
    assert outcome.status == "ok", outcome.stderr
    observed = outcomes(outcome.stdout.splitlines())
    assert observed.keys() == real.keys()
    assert {name: ran for name, ran in observed.items() if ran != real[name]} == {}
    assert not real["gather"] and not real["clamp"] and real["add"]  # (both kinds are in the probe)
