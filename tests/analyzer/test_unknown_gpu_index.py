"""A GPU whose index is not known before the program runs (``cuda:<LOCAL_RANK>``) is still a GPU: a CPU operand
beside it fails; beside a GPU of known index the analysis cannot tell, and says nothing."""

from __future__ import annotations

import textwrap

from devicelint.runner import check_source

PRELUDE = """\
import os
import torch
rank = int(os.environ["LOCAL_RANK"])
"""


def codes(body: str) -> list[tuple[str, int]]:
    source = PRELUDE + textwrap.dedent(body)
    return [(d.code, d.row - 3) for d in check_source(source, "rank.py").findings]


def test_a_cpu_operand_beside_a_gpu_of_unknown_index_fails() -> None:
    assert codes("""\
        x = torch.randn(3).cuda(rank)
        print(x + torch.ones(3))
        """) == [("MV201", 2)]


def test_the_index_may_be_given_to_a_device_or_a_move() -> None:
    assert codes("""\
        d = torch.device("cuda", rank)
        x = torch.randn(3).to(rank)
        y = torch.randn(3, device=d)
        print(x + y)
        print(y * torch.ones(3))
        """) == [("MV201", 5)]


def test_beside_a_gpu_of_known_index_nothing_is_said() -> None:
    assert codes("""\
        x = torch.randn(3).cuda(rank)
        print(x + torch.ones(3, device="cuda:0"))
        """) == []


def test_its_index_is_unknown() -> None:
    # (not ``None``, which would make the test below decided: the CPU move on every path, an error)
    source = PRELUDE + textwrap.dedent("""\
        x = torch.randn(3).cuda(rank)
        if x.device.index is None or x.get_device() is None:
            x = x.cpu()
        print(x + torch.ones(3).cuda(rank))
        """)
    [finding] = check_source(source, "rank.py").findings
    assert (finding.code, finding.severity.name) == ("MV201", "WARNING")


NAMED = """\
import argparse
import os

import torch
from torch import nn
from devicelint import reveal_device


def train(local_rank, args):
    device = torch.device("cuda", local_rank)
    reveal_device(device)
    x = torch.randn(4).cuda(local_rank)
    reveal_device(x)
    reveal_device(torch.zeros(4, device=args.local_rank))
    reveal_device(torch.ones(4).to(local_rank % 8))
    model = nn.Linear(4, 2).cuda(local_rank)
    reveal_device(model)
    reveal_device(torch.ones(4).to(torch.device(local_rank)))
    reveal_device(torch.device("cuda"))
    print(x.numpy())
    print(model(torch.randn(3, 4)))
    print(x + torch.zeros(4))


parser = argparse.ArgumentParser()
parser.add_argument("--local-rank", type=int, default=0)
train(int(os.environ["LOCAL_RANK"]), parser.parse_args())
"""


def test_a_gpu_of_unknown_index_is_shown_by_what_gave_the_index() -> None:
    # PyTorch prints ``cuda:N``: the analysis names the variable, parameter or attribute the index came from, and
    # ``cuda:?`` where it was computed; a device written without an index prints without one
    report = check_source(NAMED, "train.py")
    reveals = [d.message.removeprefix("reveal_device: ") for d in report.diagnostics if not d.code]
    assert reveals == ["torch.device('cuda:<local_rank>')", "cuda:<local_rank> tensor",
                       "cuda:0 tensor | cuda:<args.local_rank> tensor", "cuda:? tensor",
                       "nn.Linear on cuda:<local_rank>", "cuda:<local_rank> tensor", "torch.device('cuda:0')"]
    messages = {d.code: d.message for d in report.findings}
    assert messages["MV203"].startswith("can't convert cuda:<local_rank> device type tensor to numpy"), messages
    assert "found at least two devices, cpu and cuda:<local_rank>!" in messages["MV202"], messages
    assert "weight: cuda:<local_rank> tensor" in messages["MV202"], messages
    assert "found at least two devices, cuda:<local_rank> and cpu!" in messages["MV201"], messages
    assert "(moved to cuda:<local_rank> at train.py:12)" in messages["MV201"], messages


def test_hover_shows_a_gpu_of_unknown_index_by_what_gave_it() -> None:
    from devicelint.hover import state_at
    from devicelint.settings import Settings

    settings = Settings()
    settings.record_expressions = True
    report = check_source(NAMED, "train.py", settings)
    assert state_at(report, "train.py", 12, 5) == ((12, 5, 12, 6), "cuda:<local_rank> tensor")
