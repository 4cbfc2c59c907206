"""The observer's stand-in for ``torch_geometric.loader`` (see :mod:`.stand_ins`): ``DataLoader`` yields
``Batch`` objects of its dataset's graphs, left where they are."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from torch_geometric.data import Batch

__path__: list[str] = []


class DataLoader:
    def __init__(self, dataset: Any, batch_size: int = 1, shuffle: bool = False, **kwargs: Any) -> None:
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle

    def __len__(self) -> int:
        return (len(self.dataset) + self.batch_size - 1) // self.batch_size

    def __iter__(self) -> Iterator[Batch]:
        order = list(range(len(self.dataset)))
        if self.shuffle:
            random.shuffle(order)
        for start in range(0, len(order), self.batch_size):
            yield Batch.from_data_list([self.dataset[i] for i in order[start:start + self.batch_size]])


DenseDataLoader = DataLoader
