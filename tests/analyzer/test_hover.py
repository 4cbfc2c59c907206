"""Expression states for editors' hover (Settings.record_expressions, analyzer.hover)."""

from __future__ import annotations

import textwrap

from devicelint.hover import state_at
from devicelint.runner import check_source
from devicelint.settings import Settings

PROGRAM = textwrap.dedent("""\
    from runtime_shim import Device, Tensor

    def make(d):
        return Tensor.zeros([2], d)

    flex = Device.flex().autodiff()
    w = make(flex)  # é: a non-ASCII comment keeps columns in characters
    out = w.to_device(Device.ndarray())
""")
AD_FLEX = "Autodiff { device: Flex, checkpointing: Disabled }"


def _report():
    settings = Settings()
    settings.record_expressions = True
    return check_source(PROGRAM, "hover.py", settings)


def test_the_innermost_expression_under_the_position_gives_its_state() -> None:
    report = _report()
    assert state_at(report, "hover.py", 8, 7) == ((8, 7, 8, 8), f"{AD_FLEX} float untracked")
    assert state_at(report, "hover.py", 8, 25) == ((8, 19, 8, 35), "NdArray")
    assert state_at(report, "hover.py", 6, 10) == ((6, 8, 6, 21), "Flex")


def test_a_bound_name_and_a_parameter_inside_a_called_function_have_states() -> None:
    report = _report()
    assert state_at(report, "hover.py", 6, 2) == ((6, 1, 6, 5), AD_FLEX)
    assert state_at(report, "hover.py", 4, 30) == ((4, 30, 4, 31), AD_FLEX)


def test_no_state_off_tensors_and_devices_and_none_without_recording() -> None:
    report = _report()
    assert state_at(report, "hover.py", 1, 3) is None  # the import line
    assert check_source(PROGRAM, "hover.py").expressions == {}


def test_diagnostics_are_the_same_with_and_without_recording() -> None:
    plain = [(d.code, d.row, d.column) for d in check_source(PROGRAM, "hover.py").diagnostics]
    assert plain == [(d.code, d.row, d.column) for d in _report().diagnostics]
    assert ("MV102", 8, 7) in plain
