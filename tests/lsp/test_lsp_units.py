"""The LSP server's pure parts: position conversion, the noqa edit, settings parsing."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("pygls", reason="the LSP tests need the `lsp` extra (pygls, lsprotocol)")

from devicelint.diagnostics import Diagnostic, Severity  # noqa: E402
from devicelint.lsp.actions import noqa_edit  # noqa: E402
from devicelint.lsp.options import parse_client_options  # noqa: E402
from devicelint.lsp.positions import UTF8, UTF16, UTF32, analyzer_position, from_units, lsp_position, split_lines  # noqa: E402
from devicelint.settings import SettingsError  # noqa: E402


def test_columns_count_code_units_of_the_negotiated_encoding() -> None:
    lines = ['s = "é😀"; out = x']
    column = lines[0].index("out") + 1  # 1-based characters
    assert lsp_position(lines, 1, column, UTF16) == (0, column - 1 + 1)  # the emoji is a surrogate pair
    assert lsp_position(lines, 1, column, UTF8) == (0, column - 1 + 1 + 3)  # é: 2 bytes, 😀: 4
    assert lsp_position(lines, 1, column, UTF32) == (0, column - 1)
    assert analyzer_position(lines, 0, column, UTF16) == (1, column)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=30),
       st.sampled_from([UTF8, UTF16, UTF32]))
def test_every_character_boundary_round_trips(line: str, encoding: str) -> None:
    for characters in range(len(line) + 1):
        _, units = lsp_position([line], 1, characters + 1, encoding)
        assert from_units(line, units, encoding) == characters


def test_rows_split_on_every_line_end_lsp_knows() -> None:
    assert split_lines("a\r\nb\rc\nd") == ["a", "b", "c", "d"]
    assert split_lines("a\n") == ["a", ""]


def _finding(row: int, code: str = "MV102") -> Diagnostic:
    return Diagnostic(code, "x", Severity.ERROR, "m", "f.py", row, 1, row, 2)


def test_the_noqa_edit_appends_a_comment_or_extends_the_lines_codes() -> None:
    text = "a = 1   \nb = 2  # noqa: MV105\nc = 3  # noqa\n"
    new = noqa_edit(_finding(1), text)
    assert (new.row, new.column, new.end_column, new.content) == (1, 6, 9, "  # noqa: MV102")
    extended = noqa_edit(_finding(2), text)
    assert (extended.row, extended.column, extended.content) == (2, len("b = 2  # noqa: MV105") + 1, ", MV102")
    assert noqa_edit(_finding(3), text) is None  # a bare noqa already covers every code


def test_client_settings_are_validated() -> None:
    options = parse_client_options({"devicelint": {"select": ["mv1"], "ignore": "MV102", "debounceMs": 0,
                                                   "profile": "burn-0.21", "backends": ["flex"], "other": 1}})
    assert options.select == ("MV1",) and options.ignore == ("MV102",) and options.debounce_ms == 0
    assert options.backends == frozenset({"Flex"}) and options.unknown == ("other",)
    for wrong in ({"select": ["NOPE"]}, {"profile": "burn-9"}, {"debounceMs": -1}, {"ignoreNoqa": "yes"},
                  {"targetDevice": "gpu"}, {"targetDevice": 1}):
        with pytest.raises(SettingsError):
            parse_client_options(wrong)


def test_the_client_target_device_wins_over_the_file() -> None:
    from devicelint import config
    from devicelint.lsp.options import build_settings

    found = config.Config(None, os.getcwd(), {"target-device": "cpu"})
    assert build_settings(found, parse_client_options({})).target_device == "cpu"
    assert build_settings(found, parse_client_options({"targetDevice": "cuda"})).target_device == "cuda"


def test_the_cli_imports_no_pygls_and_says_what_to_install_without_it(monkeypatch, capsys) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import sys, analyzer.cli; print('pygls' in sys.modules)"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    from devicelint.cli import main

    monkeypatch.setitem(sys.modules, "pygls", None)  # as if it were not installed
    assert main(["lsp"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'devicelint[lsp]'" in err


def test_the_collector_is_paused_during_analyses_and_resumed_after_the_last() -> None:
    import gc

    from devicelint.lsp.server import gc_paused

    enabled = gc.isenabled()
    gc.enable()
    try:
        with gc_paused():
            assert not gc.isenabled()
            with gc_paused():  # overlapping analyses (a hover's detailed run while a re-check publishes)
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled()
        with pytest.raises(RuntimeError), gc_paused():
            raise RuntimeError("an analysis failed")
        assert gc.isenabled()
        gc.disable()  # a collector someone else turned off stays off
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        if enabled:
            gc.enable()
        else:
            gc.disable()


def test_a_finding_at_the_caller_names_the_inner_call_as_related_information() -> None:
    from devicelint.diagnostics import Related
    from devicelint.lsp.convert import to_lsp

    inner = Related("/p/prog.py", 5, 12, "the call that fails, inside `mse`")
    finding = Diagnostic("MV201", "operands-on-different-devices", Severity.ERROR, "... this call passes ...",
                         "/p/prog.py", 10, 7, 10, 56, [inner])
    finding.inner = inner
    lines = ["x = 1"] * 4 + ["    diff = pred - target.float()"] + ["x = 1"] * 4 + [" " * 70]
    converted = to_lsp(finding, lambda _path: lines)
    [info] = converted.related_information or []
    assert info.message == inner.message and info.location.uri.endswith("/p/prog.py")
    assert (info.location.range.start.line, info.location.range.start.character) == (4, 11)
    assert (converted.range.start.line, converted.range.start.character) == (9, 6)
