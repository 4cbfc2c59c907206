"""Bounded cost and crash isolation: no input makes the analysis grow without bound or lose other files' findings.

Every blow-up reproduced here is checked by the *work* it takes (values' sizes, joins, statements run, the
budget's note), never by wall-clock time.
"""

from __future__ import annotations

import json
import os
import signal
import textwrap
from pathlib import Path

import pytest
from devicelint import cli, domain, scheduler
from devicelint.domain import MAX_ATOMS, TOP, V, Value, const, join_all, seq, seq_of
from devicelint.engine import builtins as engine_builtins
from devicelint.engine import calls as engine_calls
from devicelint.runner import check, check_source
from devicelint.settings import Settings

VALUES = ['1', '2.0', '"x"', 'None', '3j', 'b"y"', 'True', '(1,)', '5', '"w"', '6.5', 'False']


def optional_import_rows(n: int, m: int) -> str:
    """scipy's test_mpmath.py shape: nested loops over short lists of mixed types, a ``try/except: continue``,
    an optional import, and a list of rows appended to (on some paths of every iteration)."""
    return textwrap.dedent(f"""\
        import torch
        try:
            import mpmath
        except ImportError:
            mpmath = None

        rows = []
        for a in [{', '.join(VALUES[:n])}]:
            for b in [{', '.join(VALUES[:m])}]:
                try:
                    v = mpmath.mpf(a) + b
                except Exception:
                    continue
                rows.append((a, b, v))
        t = torch.zeros(3, device="cuda")
        """)


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    calls = [0]
    original = getattr(owner, name)

    def counted(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


# --------------------------------------------------------------------------- the domain


def test_a_join_never_holds_more_than_the_atom_limit() -> None:
    lists = [V(seq_of("list", V(const(i)))) for i in range(3 * MAX_ATOMS)]
    joined = lists[0]
    for value in lists[1:]:
        joined = joined.join(value)
        assert len(joined.atoms) <= MAX_ATOMS
    # past the limit the lists were merged into one holding any of their elements: nothing they held is lost
    held = {a.value for atom in joined.atoms for a in atom.elem.atoms}
    assert held == set(range(3 * MAX_ATOMS)) or any(atom.elem.top for atom in joined.atoms)
    assert len(join_all(lists).atoms) == 1


def test_too_many_constants_are_unknown() -> None:
    assert join_all(V(const(i)) for i in range(MAX_ATOMS + 1)) == TOP
    assert join_all(V(const(i)) for i in range(MAX_ATOMS)).atoms == {const(i) for i in range(MAX_ATOMS)}


def test_dicts_of_many_shapes_merge_into_one() -> None:
    dicts = [V(domain.DictAtom(((f"k{i}", V(const(i))),))) for i in range(MAX_ATOMS + 5)]
    joined = join_all(dicts)
    (merged,) = joined.atoms
    assert isinstance(merged, domain.DictAtom) and merged.rest is not None and not merged.items


def test_join_all_is_one_union(monkeypatch: pytest.MonkeyPatch) -> None:
    joins = count_calls(monkeypatch, Value, "join")
    big = seq("list", [V(const(i * 0.5)) for i in range(20_000)])
    assert joins[0] == 0
    assert big.elem == TOP  # more constants than a value holds


# --------------------------------------------------------------------------- reproduced blow-ups


def test_rows_appended_under_try_continue_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # before: every iteration doubled the possible lists (2**16 list values for 4 x 4 elements)
    appends = count_calls(monkeypatch, engine_calls, "seq_of")
    report = check_source(optional_import_rows(4, 4), "rows.py")
    assert not report.notes
    assert appends[0] <= 16 * 2 * MAX_ATOMS


def test_rows_with_more_elements_cost_no_more_per_iteration(monkeypatch: pytest.MonkeyPatch) -> None:
    appends = count_calls(monkeypatch, engine_calls, "seq_of")
    check_source(optional_import_rows(8, 8), "rows.py")
    assert appends[0] <= 64 * 2 * MAX_ATOMS


def test_tensors_appended_on_some_paths_are_still_followed() -> None:
    # the merged lists keep their elements: a CUDA tensor appended in a try is still seen when it is used
    source = textwrap.dedent("""\
        import torch
        try:
            import scipy
        except ImportError:
            scipy = None

        outs = []
        for name in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"]:
            for lib in [scipy, None, torch]:
                try:
                    x = torch.ones(3, device="cuda")
                    lib.check(name)
                except Exception:
                    continue
                outs.append({"name": name, "x": x})
        total = torch.zeros(3)
        for row in outs:
            total = total + row["x"]
        """)
    report = check_source(source, "rows.py")
    assert not report.notes
    assert "MV201" in {d.code for d in report.findings}


def test_huge_list_literal_is_joined_once(monkeypatch: pytest.MonkeyPatch) -> None:
    joins = count_calls(monkeypatch, Value, "join")
    text = "import torch\nDATA = [" + ", ".join(str(i * 1.5) for i in range(40_000)) + "]\nt = torch.zeros(3)\n"
    check_source(text, "data.py")
    assert joins[0] < 1000  # not one join per element


def test_huge_dict_literal_keeps_python_semantics() -> None:
    entries = ", ".join(f'"k{i}": {i}' for i in range(10_000))
    text = textwrap.dedent(f"""\
        import torch
        DATA = {{{entries}, "dev": "cpu", "k5": "cuda"}}
        x = torch.zeros(3, device=DATA["k5"])
        y = torch.zeros(3, device=DATA["dev"])
        z = x + y
        """)
    report = check_source(text, "data.py")
    assert [d.code for d in report.findings] == ["MV201"]


@pytest.mark.parametrize("bound", ["10 ** 20", "2 ** 64", "-(2 ** 70)"])
def test_range_beyond_sys_maxsize_is_analyzed(bound: str) -> None:
    source = textwrap.dedent(f"""\
        import torch
        order = {bound}
        x = torch.zeros(3, device="cuda")
        for j in range(order):
            y = x + torch.zeros(3)
        for k in range(0, order, 3):
            pass
        """)
    report = check_source(source, "big_range.py")
    assert {d.code for d in report.findings} <= {"MV201"}
    assert not any(d.code == "MV903" for d in report.findings)
    assert not report.notes


# --------------------------------------------------------------------------- budgets


def long_program(statements: int) -> str:
    body = "".join(f"y{i} = x + 1\n" for i in range(statements))
    return f'import torch\nx = torch.zeros(3, device="cuda")\n{body}z = x + torch.zeros(3)\n'


def test_a_component_past_its_statement_budget_is_unknown_with_a_note() -> None:
    report = check_source(long_program(5000), "long.py", Settings(max_component_steps=1000))
    assert not report.findings
    (note,) = report.notes
    assert note.name == scheduler.BUDGET_NOTE and note.file.endswith("long.py")
    assert "statements" in note.message
    # within the budget: the same program's finding
    assert [d.code for d in check_source(long_program(5000), "long.py").findings] == ["MV201"]


def test_memory_error_in_a_component_becomes_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    def exhausted(args: list[Value]) -> Value:
        raise MemoryError

    monkeypatch.setattr(engine_builtins.Builtins, "_range", staticmethod(exhausted))
    report = check_source("import torch\nfor i in range(3):\n    pass\n", "mem.py")
    assert not report.findings
    (note,) = report.notes
    assert "out of memory" in note.message


def test_memory_ceiling_stops_a_component(monkeypatch: pytest.MonkeyPatch) -> None:
    grown = iter(range(0, 10 ** 12, 1 << 28))  # the process "grows" by 256 MiB at every check
    monkeypatch.setattr("devicelint.budget.resident_bytes", lambda: next(grown))
    report = check_source(long_program(20_000), "grows.py", Settings(max_worker_memory=512 << 20))
    assert not report.findings
    (note,) = report.notes
    assert "512 MiB" in note.message


def test_budget_notes_under_verbose_and_in_json_statistics(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    program = tmp_path / "long.py"
    program.write_text(long_program(5000))
    (tmp_path / "pyproject.toml").write_text("[tool.devicelint]\nmax-worker-memory = \"2GiB\"\n")
    assert cli.main(["check", "--no-cache", "--exit-zero", str(program)]) == 0
    assert "budget" not in capsys.readouterr().err  # silent by default
    settings = Settings(max_component_steps=1000)
    report = check([str(program)], settings)
    assert report.notes
    from devicelint.output import statistics

    stats = json.loads(statistics(report.diagnostics, "json", notes=report.notes))
    assert {"code": "", "name": "analysis-budget", "count": 1, "fixable": False, "fixable_count": 0} in stats


@pytest.mark.parametrize(("value", "ok"), [("512MiB", True), ("2GiB", True), ("1500MB", True), ("0MiB", False),
                                            ("lots", False), ("-1GiB", False)])
def test_max_worker_memory_values(tmp_path: Path, capsys: pytest.CaptureFixture, value: str, ok: bool) -> None:
    program = tmp_path / "a.py"
    program.write_text("import torch\n")
    code = cli.main(["check", "--no-cache", "--max-worker-memory", value, str(program)])
    assert (code == 0) == ok
    if not ok:
        assert "--max-worker-memory" in capsys.readouterr().err


# --------------------------------------------------------------------------- crash isolation


def project(tmp_path: Path, files: int = 9) -> Path:
    for i in range(files):
        (tmp_path / f"m{i}.py").write_text('import torch\nx = torch.zeros(3, device="cuda")\nz = x + torch.zeros(3)\n')
    (tmp_path / "bad.py").write_text("import torch\nx = torch.zeros(3)\nfor i in range(3):\n    pass\n")
    return tmp_path


def fail_in_range(monkeypatch: pytest.MonkeyPatch, action: str = "raise") -> None:
    def broken(args: list[Value]) -> Value:
        if action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise ValueError("boom")

    monkeypatch.setattr(engine_builtins.Builtins, "_range", staticmethod(broken))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_crash_is_mv903_where_it_happened_and_other_files_are_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    fail_in_range(monkeypatch)
    report = check([str(project(tmp_path))], Settings(jobs=jobs))
    failed = [d for d in report.findings if d.code == "MV903"]
    assert [(Path(d.file).name, d.row, d.column) for d in failed] == [("bad.py", 3, 10)]
    assert "ValueError: boom" in failed[0].message
    assert sorted(Path(d.file).name for d in report.findings if d.code == "MV201") == [f"m{i}.py" for i in range(9)]
    (trace,) = [n for n in report.notes if n.name == scheduler.TRACEBACK_NOTE]
    assert "Traceback" in trace.message and "boom" in trace.message


def test_a_crash_traceback_only_under_verbose(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture) -> None:
    fail_in_range(monkeypatch)
    root = project(tmp_path, files=1)
    assert cli.main(["check", "--no-cache", str(root)]) == 1
    captured = capsys.readouterr()
    assert "MV903" in captured.out and "Traceback" not in captured.err + captured.out
    assert cli.main(["check", "--no-cache", "--verbose", str(root)]) == 1
    assert "Traceback" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "fork"), reason="a killed worker is simulated in a forked process")
def test_a_worker_that_dies_loses_only_its_component(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fail_in_range(monkeypatch, "kill")
    report = check([str(project(tmp_path))], Settings(jobs=2))
    failed = [d for d in report.findings if d.code == "MV903"]
    assert [Path(d.file).name for d in failed] == ["bad.py"] and "died" in failed[0].message
    assert sorted(Path(d.file).name for d in report.findings if d.code == "MV201") == [f"m{i}.py" for i in range(9)]


def test_failed_components_are_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "src").mkdir()
    root = project(tmp_path / "src", files=1)
    settings = Settings(cache_dir=str(tmp_path / "cache"))
    with monkeypatch.context() as patched:
        fail_in_range(patched)
        assert any(d.code == "MV903" for d in check([str(root)], settings).findings)
    assert not any(d.code == "MV903" for d in check([str(root)], Settings(cache_dir=str(tmp_path / "cache"))).findings)


def test_a_function_past_its_budget_is_unknown_and_the_rest_is_analyzed() -> None:
    body = "".join(f"    y{i} = x + 1\n" for i in range(3000))
    source = (f'import torch\nx = torch.zeros(3, device="cuda")\n\n\ndef heavy(x):\n{body}'
              "    return x\n\n\ndef light(x):\n    return x + torch.zeros(3)\n\n\n"
              "heavy(x)\nlight(x)\n")
    light_row = source.splitlines().index("def light(x):") + 2
    report = check_source(source, "heavy.py", Settings(max_function_steps=1000))
    assert [d.row for d in report.findings] == [light_row]
    (note,) = report.notes
    assert note.name == scheduler.BUDGET_NOTE and "`heavy`" in note.message and note.row == 5
    default = check_source(source, "heavy.py")
    assert [d.row for d in default.findings] == [light_row] and not default.notes


def test_a_stopped_function_run_reports_nothing_it_saw_before_stopping() -> None:
    body = "".join(f"    y{i} = x + 1\n" for i in range(3000))
    source = (f'import os\nimport torch\nx = torch.zeros(3, device="cuda")\n\n\ndef heavy(x):\n'
              f'    if os.environ.get("A"):\n        w = x + torch.zeros(3)\n{body}    return x\n\n\nheavy(x)\n')
    assert [d.row for d in check_source(source, "heavy.py").findings] == [8]
    stopped = check_source(source, "heavy.py", Settings(max_function_steps=1000))
    assert not stopped.findings and len(stopped.notes) == 1  # what it recorded before the stop was partial


def test_setattr_with_a_name_that_is_not_a_constant() -> None:
    # found by bench/robustness.py in torch.distributed: the attribute's name is a function's __name__
    report = check_source(textwrap.dedent("""\
        import sys
        import torch

        def wrap(fn):
            def wrapper(*args):
                return fn(*args)
            setattr(sys.modules[__name__], fn.__name__, wrapper)
            return wrapper

        wrap(torch.zeros)
        """), "wrapping.py", Settings())
    assert not [d for d in report.diagnostics if d.code == "MV903"]
