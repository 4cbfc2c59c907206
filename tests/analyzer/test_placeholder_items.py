"""A list of placeholders (``[torch.zeros(1)] * n``) whose items a shape test replaces on the input's device: the
item read at an index a loop variable holds is narrowed in the test's branches, as at a constant index."""

from __future__ import annotations

import textwrap

from devicelint.runner import check_source

HEAD = """\
    import torch

    def make_grid(n):
        return torch.zeros(1, 1, n, n, 2)

    feats = [torch.randn(2, 3, 8, 8, 4, device="cuda"), torch.randn(2, 3, 4, 4, 4, device="cuda")]
    """


def codes(body: str) -> list[tuple[str, int]]:
    source = textwrap.dedent(HEAD) + textwrap.dedent(body)
    return [(d.code, d.row) for d in check_source(source, "placeholders.py").findings]


def test_a_placeholder_a_rank_test_replaces_at_a_loop_index_is_not_read() -> None:
    assert codes("""\
        grid = [torch.zeros(1)] * 2
        for i in range(2):
            if grid[i].shape[2:4] != feats[i].shape[2:4]:
                grid[i] = make_grid(feats[i].shape[2]).to(feats[i].device)
            print(feats[i][..., :2] + grid[i])
        """) == []


def test_the_whole_shape_and_a_none_test_decide_too() -> None:
    assert codes("""\
        grid = [torch.empty(0) for _ in range(2)]
        cache = [None] * 2
        for i, x in enumerate(feats):
            if grid[i].shape != x.shape:
                grid[i] = make_grid(x.shape[2]).to(x.device)
            if cache[i] is None:
                cache[i] = torch.ones(1, device=x.device)
            print(x[..., :2] + grid[i] + cache[i])
        """) == []


def test_a_test_the_ranks_do_not_decide_keeps_the_placeholder() -> None:
    # ``shape[0]`` of both is one size of unknown value: the placeholder may stay
    assert codes("""\
        grid = [torch.zeros(1)] * 2
        for i in range(2):
            if grid[i].shape[0] != feats[i].shape[0]:
                grid[i] = make_grid(feats[i].shape[2]).to(feats[i].device)
            print(feats[i][..., :2] + grid[i])
        """) == [("MV201", 11)]


def test_the_test_narrows_only_the_item_it_reads() -> None:
    assert codes("""\
        grid = [torch.zeros(1)] * 2
        for i in range(1):
            if grid[i].shape[2:4] != feats[i].shape[2:4]:
                grid[i] = make_grid(feats[i].shape[2]).to(feats[i].device)
            print(feats[i][..., :2] + grid[i])
        print(feats[1][..., :2] + grid[1])
        """) == [("MV201", 12)]


def test_an_index_the_analysis_does_not_know_narrows_nothing() -> None:
    assert codes("""\
        import sys
        grid = [torch.zeros(1)] * 2
        i = int(sys.argv[1])
        if grid[i].shape[2:4] != feats[0].shape[2:4]:
            grid[i] = make_grid(8).to(feats[0].device)
        print(feats[0][..., :2] + grid[i])
        """) == [("MV201", 12)]


def test_a_placeholder_attribute_list_of_a_detection_head() -> None:
    assert codes("""\
        from torch import nn

        class Detect(nn.Module):
            def __init__(self, nl=2):
                super().__init__()
                self.nl = nl
                self.grid = [torch.zeros(1)] * nl

            def forward(self, xs):
                out = []
                for i in range(self.nl):
                    if self.grid[i].shape[2:4] != xs[i].shape[2:4]:
                        self.grid[i] = make_grid(xs[i].shape[2]).to(xs[i].device)
                    out.append((xs[i][..., :2] + self.grid[i]).flatten())
                return torch.cat(out)

        print(Detect().to("cuda")(feats).shape)
        """) == []


def test_an_attribute_item_the_test_did_not_read_keeps_its_placeholder() -> None:
    assert codes("""\
        from torch import nn

        class Detect(nn.Module):
            def __init__(self):
                super().__init__()
                self.grid = [torch.empty(0) for _ in range(2)]

            def forward(self, xs):
                for i in range(1):
                    if self.grid[i].shape != xs[i].shape:
                        self.grid[i] = make_grid(xs[i].shape[2]).to(xs[i].device)
                first = xs[0][..., :2] + self.grid[0]
                second = xs[1][..., :2] + self.grid[1]
                return first, second

        print(Detect().to("cuda")(feats))
        """) == [("MV201", 19)]
