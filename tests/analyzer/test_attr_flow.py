"""Attribute state through calls: what a callee leaves in ``self.x`` on every path it returns by is the caller's
``obj.x`` after the call, and what the caller stored reaches the callee's reads (``analyzer/engine/attr_flow.py``)."""

from __future__ import annotations

import textwrap

import pytest
from devicelint.engine import reuse
from devicelint.runner import check_source

HEAD = """\
    import torch

    x = torch.randn(4, 3, device="cuda")


    class State:
        def __init__(self):
            self.h = torch.zeros(3)

        def reset(self, device):
            self.h = torch.zeros(3, device=device)

        def reset_if(self, device, flag):
            if flag:
                self.h = torch.zeros(3, device=device)

        def ensure(self, device):
            if self.h.device == device:
                return
            self.h = self.h.to(device)

        def step(self, x):
            return self.h + x.mean(0)

    """


def findings(body: str) -> list[tuple[str, int, str]]:
    source = textwrap.dedent(HEAD) + textwrap.dedent(body)
    lines = source.splitlines()
    return [(d.code, d.row, lines[d.row - 1].strip()) for d in check_source(source, "attrs.py").findings]


def test_a_replacement_in_a_method_is_what_the_next_call_reads() -> None:
    assert findings("""\
        s = State()
        s.reset(x.device)
        print(s.step(x))
        """) == []


def test_a_narrowing_return_and_a_store_both_leave_the_attribute_on_the_device() -> None:
    assert findings("""\
        s = State()
        s.ensure(x.device)
        print(s.step(x))
        """) == []


def test_a_helper_function_that_fills_its_argument() -> None:
    assert findings("""\
        def prepare(state, device):
            state.h = torch.zeros(3, device=device)

        s = State()
        prepare(s, x.device)
        print(s.step(x))
        """) == []


def test_a_path_that_did_not_store_leaves_the_join() -> None:
    # ``flag`` is not known: the placeholder of ``__init__`` may still be there
    found = findings("""\
        import sys
        s = State()
        s.reset_if(x.device, len(sys.argv) > 1)
        print(s.step(x))
        """)
    assert [(code, text) for code, _row, text in found] == [("MV201", "return self.h + x.mean(0)")]


def test_a_call_that_never_replaced_it_is_still_found() -> None:
    found = findings("""\
        s = State()
        print(s.step(x))
        """)
    assert [(code, text) for code, _row, text in found] == [("MV201", "return self.h + x.mean(0)")]


def test_the_callers_store_reaches_the_callees_read() -> None:
    assert findings("""\
        class Grid:
            def __init__(self):
                self.device = None

            def make(self, n):
                return torch.arange(n, device=self.device)

            def forward(self, x):
                self.device = x.device
                return x + self.make(x.shape[-1])

        g = Grid()
        print(g.forward(torch.randn(2, 5)))
        print(g.forward(torch.randn(2, 5, device="cuda")))
        """) == []


def test_a_store_on_another_variable_is_not_the_receivers() -> None:
    # ``other`` is another object of the class: what ``reset`` left on ``s`` is not its state
    found = findings("""\
        s = State()
        other = State()
        s.reset(x.device)
        print(other.step(x))
        """)
    assert [code for code, _row, _text in found] == ["MV201"]


@pytest.mark.parametrize("keep", [True, False])
def test_reuse_keeps_the_same_findings(keep: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # the effect of ``reset`` changes between passes (``self.h`` grows): kept runs must see the same as new ones
    monkeypatch.setattr(reuse.PassReuse, "keep_runs", keep)
    found = findings("""\
        def run(s, flag):
            if flag:
                s.reset(x.device)
            else:
                s.ensure(x.device)
            return s.step(x)

        for flag in (True, False):
            s = State()
            print(run(s, flag))
        s = State()
        print(s.step(x))
        """)
    assert [(code, text) for code, _row, text in found] == [("MV201", "return self.h + x.mean(0)")]
