"""Generated device-heavy programs (bench/generated_programs.py), and any valid Python (hypothesmith's grammar and
syntax-tree programs): the analyzer never crashes on them and its work stays bounded (statements analysed under
a budget far above what they need, memory allocated measured by tracemalloc: counts, not wall-clock time).

A few dozen examples run in the normal suite; the ``slow`` test (``pytest -m slow``) draws many more, and larger
programs.
"""

from __future__ import annotations

import dataclasses
import sys
import tracemalloc
import warnings
from pathlib import Path

import hypothesmith
import pytest
from devicelint.runner import check_source
from devicelint.settings import Settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.generated_programs import generate, generate_seeded, hypothesis_chooser  # noqa: E402

# a 40-statement program needs about a thousand statements analysed (every world, pass and unrolled iteration)
STEPS = 40_000
PEAK_BYTES = 96 << 20
BOUNDED = Settings(max_component_steps=STEPS, max_component_seconds=None, max_worker_memory=None)
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]


def analyze_bounded(source: str) -> None:
    tracemalloc.start()
    try:
        report = check_source(source, "generated.py", BOUNDED)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    crashed = [d for d in report.findings if d.code == "MV903"]
    traces = [n.message for n in report.notes if n.name == "analysis-traceback"]
    assert not crashed, f"{crashed[0].message}\n{traces}\n{source}"
    assert not report.notes, f"{[n.message for n in report.notes]}\n{source}"
    assert peak < PEAK_BYTES, f"{peak >> 20} MiB allocated at the peak\n{source}"


@given(st.data())
@settings(max_examples=30, deadline=None, suppress_health_check=HEALTH, derandomize=True)
def test_generated_programs_analyze_within_bounds(data: st.DataObject) -> None:
    analyze_bounded(generate(hypothesis_chooser(data.draw), max_statements=30))


@pytest.mark.slow
@pytest.mark.skipif("'slow' not in config.getoption('markexpr', '')", reason="many programs: run with -m slow")
@given(st.data())
@settings(max_examples=400, deadline=None, suppress_health_check=HEALTH)
def test_many_generated_programs_analyze_within_bounds(data: st.DataObject) -> None:
    analyze_bounded(generate(hypothesis_chooser(data.draw), max_statements=80))


def analyze_any(source: str) -> None:
    """Any valid Python (hypothesmith's grammar programs): no crash, work bounded; the relevance skip is off so
    that every program is analysed, whatever it mentions."""
    try:
        with warnings.catch_warnings():  # (grammar programs call strings: CPython warns, they still compile)
            warnings.simplefilter("ignore", SyntaxWarning)
            compile(source, "grammar.py", "exec")
    except (SyntaxError, ValueError, RecursionError):  # valid for the grammar, not for CPython's compiler
        return
    report = check_source(source, "grammar.py", dataclasses.replace(BOUNDED, analyze_everything=True))
    crashed = [d for d in report.findings if d.code == "MV903"]
    assert not crashed, f"{crashed[0].message}\n{source}"
    assert not report.notes, f"{[n.message for n in report.notes]}\n{source}"


@given(hypothesmith.from_grammar())
@settings(max_examples=60, deadline=None, suppress_health_check=HEALTH, derandomize=True)
def test_grammar_programs_analyze_within_bounds(source: str) -> None:
    analyze_any(source)


@given(hypothesmith.from_node())
@settings(max_examples=40, deadline=None, suppress_health_check=HEALTH, derandomize=True)
def test_syntax_tree_programs_analyze_within_bounds(source: str) -> None:
    analyze_any(source)


def test_the_generator_is_deterministic_and_valid() -> None:
    assert generate_seeded(7) == generate_seeded(7)
    programs = {generate_seeded(seed) for seed in range(50)}
    assert len(programs) == 50
    text = "\n".join(programs)
    for construct in ("try:", "except", "continue", "for ", "class ", "def ", "match ", ":=", "@", "return",
                      "rows.append", "10 ** 20", ".to(", ".cuda()", "while "):
        assert construct in text, construct
