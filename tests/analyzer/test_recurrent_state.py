"""Recurrent state: an LSTM's or GRU's hidden state kept in an attribute, reset from the loop, detached between
batches or made by ``init_hidden()``, checked against the layer's input and weights like any operand."""

from __future__ import annotations

import textwrap

from devicelint.runner import check_source
from devicelint.settings import Settings


def observed(source: str) -> list[tuple[int, str, str]]:
    """(row, code or "reveal", severity or the revealed text) of every finding and note."""
    report = check_source(textwrap.dedent(source), "prog.py", Settings())
    return sorted((d.row, d.code or "reveal", d.severity.value if d.code else d.message.removeprefix(
        "reveal_device: ")) for d in report.diagnostics)


TUTORIAL = """
    import torch
    from torch import nn


    class Forecaster(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(1, 8)
            self.hidden_cell = {state}

        def forward(self, seq):
            out, self.hidden_cell = self.lstm(seq.view(len(seq), 1, -1), self.hidden_cell)
            return out


    model = Forecaster().to("cuda")
    for seq in [torch.randn(12) for _ in range(3)]:
        model.hidden_cell = {reset}
        model(seq.to("cuda"))
"""
CPU_PAIR = "(torch.zeros(1, 1, 8), torch.zeros(1, 1, 8))"
CUDA_PAIR = "(torch.zeros(1, 1, 8, device='cuda'), torch.zeros(1, 1, 8, device='cuda'))"


def test_a_state_that_may_be_several_tuples_is_checked_item_by_item() -> None:
    # the tuple made in ``__init__``, the one the loop may store and the one the layer gives back: one of them
    sometimes = TUTORIAL.replace("        model.hidden_cell = {reset}",
                                 "        if seq.sum() > 0:\n            model.hidden_cell = {reset}")
    assert observed(sometimes.format(state=CPU_PAIR, reset=CPU_PAIR)) == [(13, "MV202", "error")]
    assert observed(sometimes.format(state=CUDA_PAIR, reset=CPU_PAIR)) == [(13, "MV202", "warning")]
    assert observed(sometimes.format(state=CPU_PAIR, reset=CUDA_PAIR)) == [(13, "MV202", "warning")]
    assert observed(sometimes.format(state=CUDA_PAIR, reset=CUDA_PAIR)) == []


def test_a_state_the_loop_resets_before_each_call_is_the_reset_one() -> None:
    # ``model.hidden_cell = ...`` right before ``model(...)``: the call reads what the loop stored, not ``__init__``'s
    assert observed(TUTORIAL.format(state=CUDA_PAIR, reset=CPU_PAIR)) == [(13, "MV202", "error")]
    assert observed(TUTORIAL.format(state=CPU_PAIR, reset=CUDA_PAIR)) == []


def test_a_state_stored_back_past_the_failure_leaves_the_call_an_error() -> None:
    # the call fails on its first run, so the state it would give back never exists: the pass that reads it from
    # ``self.hidden_cell`` is hypothetical, as a later iteration past a failure is
    source = """
        import torch
        from torch import nn


        class Forecaster(nn.Module):
            def __init__(self):
                super().__init__()
                self.gru = nn.GRU(1, 8)
                self.h = torch.zeros(1, 1, 8)

            def forward(self, seq):
                out, self.h = self.gru(seq, self.h)
                return out


        model = Forecaster().to("cuda")
        model(torch.randn(12, 1, 1, device="cuda"))
    """
    assert observed(source) == [(13, "MV202", "error")]
    # a state made on the device the model runs on: silent
    assert observed(source.replace("torch.zeros(1, 1, 8)", "torch.zeros(1, 1, 8, device=torch.device("
                                   "'cuda' if torch.cuda.is_available() else 'cpu'))")) == []


def test_a_comprehension_over_one_of_several_tuples_keeps_each_tuple() -> None:
    # ``repackage_hidden``'s ``tuple(h.detach() for h in hidden)`` over the first batch's state or a later one's:
    # still a pair, checked item by item (a tuple of unknown length would leave the state unknown)
    source = """
        import torch
        from torch import nn

        lstm = nn.LSTM(1, 8).cuda()
        saved = torch.load("state.pt") if torch.randn(1).item() > 0 else None
        hidden = (saved[0], saved[1]) if saved is not None else (torch.zeros(1, 1, 8), torch.zeros(1, 1, 8))
        hidden = tuple(h.detach() for h in hidden)
        lstm(torch.randn(4, 1, 1, device="cuda"), hidden)
    """
    assert observed(source) == [(9, "MV202", "warning")]


def test_a_method_of_a_model_moved_by_a_flag_gives_its_result_on_the_flags_way() -> None:
    source = """
        import argparse

        import torch
        from torch import nn

        parser = argparse.ArgumentParser()
        parser.add_argument("--cuda", action="store_true")
        args = parser.parse_args()
        device = torch.device("cuda" if args.cuda else "cpu")


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = nn.LSTM(4, 8)

            def forward(self, x, hidden):
                return self.rnn(x, hidden)

            def init_hidden(self, batch):
                weight = next(self.parameters())
                return weight.new_zeros(1, batch, 8), weight.new_zeros(1, batch, 8)


        model = Model().to(device)
        hidden = model.init_hidden(2)
        for step in range(3):
            hidden = tuple(h.detach() for h in hidden)
            out, hidden = model(torch.randn(5, 2, 4).to(device), hidden)
    """
    assert observed(source) == []
    # (the hidden tuple the loop passes holds the CPU state: reported at that call, the LSTM inside its inner call)
    assert observed(source.replace("weight.new_zeros(1, batch, 8), ", "torch.zeros(1, batch, 8), ")) \
        == [(30, "MV202", "warning")]


def test_only_passes_that_read_the_sites_own_result_are_fed_back() -> None:
    from devicelint.domain import Origin
    from devicelint.facts import Possibility, Site, SiteFact

    site = Site("m.py", 7, 4, 7, 30, "nn.LSTM")

    class Operand:  # an operand state with an origin, as the engine's atoms have
        def __init__(self, origin: Origin) -> None:
            self.origin = origin

        def reveal(self) -> str:
            return "cuda:0 tensor"

    def made(line: int, end_col: int, what: str = "nn.LSTM output", result: bool = True) -> Possibility:
        return Possibility((("hx", Operand(Origin("m.py", line, 4, what, line, end_col, result))),), None, "",  # type: ignore[arg-type]
                           "torch.nn.LSTM")

    own = made(7, 30)
    described_otherwise = made(7, 30, "layer output")  # the site's own result, whatever its text says
    other_line = made(9, 30)
    inner = made(7, 12)  # a call inside the site's, starting where it does (``self.lstm(x)[0].add(h)``)
    checked = made(7, 30, result=False)  # what the call made to check itself (a creation's output operand)
    fact = SiteFact(site, None)  # type: ignore[arg-type]
    fact.record([own, described_otherwise, other_line, inner, checked], past_failure=False)
    assert fact.fed_back == {own, described_otherwise}
    past = SiteFact(site, None)  # type: ignore[arg-type]
    past.record([own], past_failure=True)  # a success past a failure is not recorded at all
    assert past.fed_back == set() and past.passed_past_failure


def test_a_chained_call_is_not_fed_back_by_the_call_it_is_chained_to() -> None:
    # ``x.add(w).add(b)``: both calls start at ``x``; the outer one's operand is the inner one's result, not its
    # own, so its successes with the GPU ``b`` are real and the CPU ``b`` fails on some paths only
    source = """
        import random

        import torch


        def step(x, w):
            b = torch.ones(3) if random.random() > 0.5 else torch.ones(3, device="cuda")
            return x.add(w).add(b)


        x = torch.ones(3, device="cuda")
        print(step(x, torch.ones(3, device="cuda")))
    """
    assert observed(source) == [(9, "MV201", "warning")]
