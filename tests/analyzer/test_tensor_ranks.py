"""What the analysis knows of a tensor's number of dimensions: a CPU tensor with dimensions is never taken as a
number by an op on the GPU (PyTorch's exemption is for 0-dim CPU tensors only), so knowing the rank turns a
silent "maybe a scalar" into a finding."""

from __future__ import annotations

import textwrap

from devicelint.runner import check_source


def codes(source: str) -> list[tuple[str, int]]:
    return [(d.code, d.row) for d in check_source(textwrap.dedent(source), "ranks.py").findings]


def test_rows_of_a_stacked_index_are_vectors() -> None:
    assert codes("""\
        import torch
        x = torch.randn(10, 4, device="cuda")
        edge_index = torch.stack([torch.randint(0, 10, (20,)), torch.randint(0, 10, (20,))])
        src, dst = edge_index
        out = torch.zeros_like(x)
        out.index_add_(0, dst, x[src])
        """) == [("MV207", 6)]


def test_concatenation_keeps_the_rank_and_broadcasting_takes_the_largest() -> None:
    assert codes("""\
        import torch
        x = torch.randn(10, 4, device="cuda")
        rows = torch.cat([torch.arange(3), torch.arange(2)]) * 2 + torch.ones(1)
        out = torch.zeros_like(x)
        out.index_add_(0, rows, x[:5])
        """) == [("MV207", 5)]


def test_a_matrix_product_of_two_vectors_is_a_number() -> None:
    # a 0-dim CPU result works with GPU operands (PyTorch's scalar exemption); a vector does not
    assert codes("""\
        import torch
        x = torch.randn(3, device="cuda")
        scale = torch.ones(3) @ torch.ones(3)
        vector = torch.ones(3, 3) @ torch.ones(3)
        print(x * scale)
        print(x * vector)
        """) == [("MV201", 6)]


def test_a_sum_over_a_list_of_sizes_is_a_number() -> None:
    # ``offset += n`` over sizes: too many values to fold, still an int (not a tensor on some unknown device)
    assert codes("""\
        import torch

        def shifted(sizes):
            parts, offset = [], 0
            for n in sizes:
                parts.append(torch.arange(n) + offset)
                offset += n
            return torch.cat(parts)

        x = torch.randn(16, 4, device="cuda")
        out = torch.zeros_like(x)
        out.index_add_(0, shifted([5, 7, 4]), x)
        """) == [("MV207", 12)]
