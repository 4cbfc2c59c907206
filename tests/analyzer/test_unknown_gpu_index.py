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
