"""Loops stop once nothing their body reads first has changed (analyzer.engine.liveness)."""

from __future__ import annotations

import ast
import textwrap

import pytest
from devicelint.engine import control_flow
from devicelint.engine.liveness import loop_reads
from devicelint.runner import check, check_source
from devicelint.settings import Settings

from tests.analyzer.fixture_support import FIXTURES


def reads(source: str) -> set[str]:
    loop = next(node for node in ast.walk(ast.parse(textwrap.dedent(source)))
                if isinstance(node, (ast.For, ast.While)))
    return set(loop_reads(loop))


def test_temporaries_are_not_read_first_and_accumulators_are() -> None:
    assert reads("""
        for k, v in cfgs.items():
            tag = v.tag.strip("*")
            model = k + tag
            total = total + 1
            out[model] = v
    """) == {"total", "out"}  # (the iterable is evaluated once, before the loop)


def test_a_name_assigned_on_one_path_only_is_read_first() -> None:
    assert reads("""
        for x in xs:
            if x:
                last = x
            use(last)
    """) == {"use", "last"}
    assert reads("""
        for x in xs:
            if x:
                y = 1
            else:
                y = 2
            use(y)
    """) == {"use", "y"}  # (joins of branches are not followed: one more iteration at worst)


def test_nested_loops_try_with_and_walrus() -> None:
    assert reads("""
        for x in xs:
            for y in ys:
                prev = y
            use(prev)
    """) == {"ys", "use", "prev"}  # the inner body may not run
    assert reads("""
        for x in xs:
            for y in ys:
                seen = seen + [prev]
                prev = y
    """) == {"ys", "seen", "prev"}  # prev: from the inner loop's previous iteration
    assert reads("""
        for x in xs:
            try:
                value = f(x)
            except KeyError:
                pass
            with open(x) as handle:
                text = handle.read()
            use(value, text, (n := 1), n)
    """) == {"f", "KeyError", "open", "use", "value", "text", "n"}  # (a with body may be cut short)


def test_deleted_global_and_closure_reads() -> None:
    assert reads("""
        for x in xs:
            y = x
            del y
            print(y)
    """) == {"print", "y"}
    assert reads("""
        for x in xs:
            global count
            count = x
    """) == {"count"}
    assert reads("""
        for x in xs:
            def show():
                return later
            later = x
    """) == {"later"}  # a nested function's reads count where it is defined
    assert reads("""
        while n > 0:
            n = n - 1
            item = stack.pop()
    """) == {"n", "stack"}


def _results(paths: list[str]) -> tuple[dict, list]:
    report = check(paths, Settings(record_expressions=True))
    expressions = {path: sorted(spans) for path, spans in report.expressions.items()}
    return expressions, sorted((d.file, d.row, d.column, d.code, d.message) for d in report.diagnostics)


def test_stopping_early_computes_what_the_full_fixpoint_computes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every fixture, with loops stopped early and without: the same states and the same diagnostics."""
    early = _results([str(FIXTURES)])
    monkeypatch.setattr(control_flow.ControlFlow, "loop_reads", lambda self, node, fr: None)
    assert _results([str(FIXTURES)]) == early


def test_an_iteration_that_changed_the_heap_runs_again() -> None:
    """The second iteration reads what a call in the first stored on an object: the loop's result holds both
    (only a temporary and an unchanged name are assigned in the body)."""
    report = check_source(textwrap.dedent("""
        from runtime_shim import Device, Tensor, reveal_device

        class Box:
            def __init__(self):
                self.device = Device.flex()

            def switch(self):
                self.device = Device.ndarray()

        def fill(box, n):
            for i in range(n):
                t = Tensor.zeros([1], box.device)
                box.switch()
            return t

        reveal_device(fill(Box(), 3))
    """))
    notes = [d.message for d in report.diagnostics if not d.code]
    assert len(notes) == 1 and "Flex" in notes[0] and "NdArray" in notes[0], notes


def test_an_iteration_that_changed_a_module_global_runs_again() -> None:
    """Only a temporary is assigned in the body, but a call in it rebinds a module global that a call in the next
    iteration reads: without the check of what the iteration changed outside the frame (``Engine.changes``) the
    loop stopped after one iteration and ``t`` was on Flex only (the run ends with it on NdArray)."""
    report = check_source(textwrap.dedent("""
        from runtime_shim import Device, Tensor, reveal_device

        DEV = Device.flex()

        def current():
            return DEV

        def switch():
            global DEV
            DEV = Device.ndarray()

        def fill(n):
            for i in range(n):
                t = Tensor.zeros([1], current())
                switch()
            return t

        reveal_device(fill(3))
    """))
    notes = [d.message for d in report.diagnostics if not d.code]
    assert notes == ["reveal_device: Flex float | NdArray float"]
