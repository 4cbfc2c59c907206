"""The observer's stand-in for ``torch_geometric.nn`` (see :mod:`.stand_ins`): message-passing layers whose
weights are made on the CPU (a linear map, then messages gathered along ``edge_index`` and summed with
``index_add_``, so features, edge index and weights on two devices fail as PyG's kernels do), and the global
poolings, which scatter the features by their ``batch`` vector."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

__path__: list[str] = []


class _Conv(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        x = self.lin(x)
        messages = x.index_select(0, edge_index[0])
        return x + torch.zeros_like(x).index_add_(0, edge_index[1], messages)


class GCNConv(_Conv):
    pass


class SAGEConv(_Conv):
    pass


class GraphConv(_Conv):
    pass


class GATConv(_Conv):
    pass


def _pool(x: torch.Tensor, batch: torch.Tensor | None, size: int | None, reduce: str) -> torch.Tensor:
    if batch is None:
        return x.mean(0, keepdim=True) if reduce == "mean" else x.sum(0, keepdim=True) if reduce == "sum" \
            else x.max(0, keepdim=True).values
    if size is None:
        size = getattr(batch, "graphs", None) or int(batch.max().item()) + 1
    index = batch.view(-1, 1).expand_as(x)
    out = torch.zeros(size, x.size(1), dtype=x.dtype, device=x.device)
    if reduce == "max":
        return out.fill_(float("-inf")).scatter_reduce(0, index, x, "amax")
    out = out.scatter_add(0, index, x)
    if reduce == "sum":
        return out
    count = torch.zeros(size, 1, dtype=x.dtype, device=x.device).scatter_add(
        0, batch.view(-1, 1), torch.ones(x.size(0), 1, dtype=x.dtype, device=x.device))
    return out / count.clamp(min=1)


def global_mean_pool(x: torch.Tensor, batch: torch.Tensor | None, size: int | None = None) -> torch.Tensor:
    return _pool(x, batch, size, "mean")


def global_add_pool(x: torch.Tensor, batch: torch.Tensor | None, size: int | None = None) -> torch.Tensor:
    return _pool(x, batch, size, "sum")


def global_max_pool(x: torch.Tensor, batch: torch.Tensor | None, size: int | None = None) -> torch.Tensor:
    return _pool(x, batch, size, "max")
