"""The observer's stand-in for ``torch_geometric.data`` (see :mod:`.stand_ins`): ``Data``, a bag of tensors read
as attributes whose ``to``/``cuda``/``cpu`` move every tensor in place (and return the graph), and ``Batch``, the
graphs of a list joined (node indices offset) with the ``batch`` and ``ptr`` vectors made where the nodes are;
the old ``torch_geometric.data.DataLoader`` name."""

from __future__ import annotations

from typing import Any

import torch

__path__: list[str] = []


class Data:
    def __init__(self, x: Any = None, edge_index: Any = None, edge_attr: Any = None, y: Any = None, pos: Any = None,
                 **kwargs: Any) -> None:
        given = {"x": x, "edge_index": edge_index, "edge_attr": edge_attr, "y": y, "pos": pos, **kwargs}
        self.__dict__["_store"] = {k: v for k, v in given.items() if v is not None}

    def __getattr__(self, key: str) -> Any:
        try:
            return self.__dict__["_store"][key]
        except KeyError:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{key}'") from None

    def __setattr__(self, key: str, value: Any) -> None:
        self.__dict__["_store"][key] = value

    def __getitem__(self, key: str) -> Any:
        return self._store[key]

    def keys(self) -> list[str]:
        return list(self._store)

    def apply(self, func: Any) -> Data:
        for key, value in self._store.items():
            if isinstance(value, torch.Tensor):
                moved = func(value)
                if hasattr(value, "graphs"):  # (a batch vector knows its number of graphs: see ``from_data_list``)
                    moved.graphs = value.graphs
                self._store[key] = moved
        return self

    def to(self, device: Any, *args: Any, **kwargs: Any) -> Data:
        return self.apply(lambda t: t.to(device, *args, **kwargs))

    def cuda(self, device: Any = None) -> Data:
        return self.apply(lambda t: t.cuda(device))

    def cpu(self) -> Data:
        return self.apply(lambda t: t.cpu())

    @property
    def num_nodes(self) -> int:
        return int(self._store["x"].size(0))

    @property
    def num_edges(self) -> int:
        return int(self._store["edge_index"].size(1))

    @property
    def num_node_features(self) -> int:
        return int(self._store["x"].size(-1))

    num_features = num_node_features


class Batch(Data):
    @classmethod
    def from_data_list(cls, data_list: list[Data]) -> Batch:
        keys = list(data_list[0].keys())
        out: dict[str, Any] = {}
        offset = 0
        parts: dict[str, list[torch.Tensor]] = {k: [] for k in keys}
        for graph in data_list:
            for key in keys:
                value = getattr(graph, key)
                parts[key].append(value + offset if key == "edge_index" else value)
            offset += graph.num_nodes
        for key in keys:
            first = parts[key][0]
            out[key] = torch.cat(parts[key], dim=1 if key == "edge_index" else 0) \
                if isinstance(first, torch.Tensor) else parts[key]
        device = data_list[0].x.device
        sizes = [g.num_nodes for g in data_list]
        out["batch"] = torch.cat([torch.full((n,), i, dtype=torch.long, device=device) for i, n in enumerate(sizes)])
        # the number of graphs rides on the batch vector: the poolings read it (a fake tensor's values are not
        # known, so ``batch.max() + 1`` cannot be read under the observer)
        out["batch"].graphs = len(data_list)
        out["ptr"] = torch.tensor([sum(sizes[:i]) for i in range(len(sizes) + 1)], device=device)
        batch = cls(**out)
        batch.__dict__["_num_graphs"] = len(data_list)
        return batch

    @property
    def num_graphs(self) -> int:
        return int(self.__dict__["_num_graphs"])


def __getattr__(name: str) -> Any:
    if name == "DataLoader":  # the old name of ``torch_geometric.loader.DataLoader``
        from torch_geometric.loader import DataLoader
        return DataLoader
    raise AttributeError(name)
