"""The observer's stand-in for Hugging Face ``datasets`` (see :mod:`.stand_ins`): datasets held as columns of
Python values, with the formats of ``arrow_dataset.py`` and ``formatting/torch_formatter.py``.

Rows are Python objects until ``set_format("torch")`` (in place; ``"pt"``/``"pytorch"``, ``type=``) or
``with_format("torch")`` (a copy): then every numeric value is converted as ``TorchFormatter._tensorize``
does (int64/float32 through numpy and ``torch.from_numpy``, on the CPU; a ``device=`` reaches only
``torch.as_tensor``/``torch.tensor``), strings stay strings. ``dataset[i]`` is a row, ``dataset["col"]`` a
column, ``dataset[a:b]`` a batch of columns; ``map`` (a row or, ``batched=True``, a batch of columns at a
time), ``filter``, ``select``, ``shuffle``, ``train_test_split`` and the column methods keep the format.

Nothing is downloaded: ``load_dataset(path, ...)`` gives a small synthetic text-classification dataset
(``text`` and ``label`` columns; ``train``/``test`` splits without ``split=``), enough for a program's device
placement to run.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

__version__ = "0.0.0+runtime-shim-stand-in"

_TORCH = ("torch", "pt", "pytorch")


def _tensorize(value: Any, kwargs: dict[str, Any]) -> Any:
    if isinstance(value, (str, bytes, type(None))):
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (list, tuple, str)) for v in value) \
            and any(isinstance(v, str) for v in value):
        return list(value)
    array = np.asarray(value)
    if array.dtype.kind in "iu":
        if array.dtype == np.int64 and "dtype" not in kwargs:
            return torch.from_numpy(array.copy())
        return torch.as_tensor(array, **{"dtype": torch.int64, **kwargs})
    if array.dtype.kind == "f":
        if array.dtype == np.float32 and "dtype" not in kwargs:
            return torch.from_numpy(array.copy())
        return torch.as_tensor(array, **{"dtype": torch.float32, **kwargs})
    if array.dtype.kind == "b":
        return torch.from_numpy(array.copy())
    return value


class Dataset:
    def __init__(self, columns: dict[str, list[Any]], format_type: str | None = None,
                 format_columns: list[str] | None = None, format_kwargs: dict[str, Any] | None = None) -> None:
        self._columns = {name: list(values) for name, values in columns.items()}
        self._format_type = format_type
        self._format_columns = format_columns
        self._format_kwargs = dict(format_kwargs or {})

    # -- construction --------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, mapping: dict[str, list[Any]], **kwargs: Any) -> Dataset:
        return cls(mapping)

    @classmethod
    def from_list(cls, rows: list[dict[str, Any]], **kwargs: Any) -> Dataset:
        names = list(rows[0]) if rows else []
        return cls({name: [row[name] for row in rows] for name in names})

    def _like(self, columns: dict[str, list[Any]]) -> Dataset:
        return Dataset(columns, self._format_type, self._format_columns, self._format_kwargs)

    # -- format --------------------------------------------------------------------------------------
    def set_format(self, type: str | None = None, columns: list[str] | None = None,  # noqa: A002 (datasets' name)
                   output_all_columns: bool = False, **format_kwargs: Any) -> None:
        self._format_type = type
        self._format_columns = None if columns is None or output_all_columns else list(columns)
        self._format_kwargs = format_kwargs

    def with_format(self, type: str | None = None, columns: list[str] | None = None,  # noqa: A002
                    output_all_columns: bool = False, **format_kwargs: Any) -> Dataset:
        copy = self._like(self._columns)
        copy.set_format(type, columns, output_all_columns, **format_kwargs)
        return copy

    def reset_format(self) -> None:
        self.set_format(None)

    def _formatted(self, value: Any) -> Any:
        if self._format_type not in _TORCH:
            return value
        return _tensorize(value, self._format_kwargs)

    def _names(self) -> list[str]:
        return [n for n in self._columns if self._format_columns is None or n in self._format_columns]

    # -- access --------------------------------------------------------------------------------------
    @property
    def column_names(self) -> list[str]:
        return list(self._columns)

    def __len__(self) -> int:
        return len(next(iter(self._columns.values()), []))

    def __getitem__(self, key: int | slice | str) -> Any:
        if isinstance(key, str):
            return self._formatted(self._columns[key])
        if isinstance(key, slice):
            return {n: self._formatted(self._columns[n][key]) for n in self._names()}
        return {n: self._formatted(self._columns[n][key]) for n in self._names()}

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for i in range(len(self)):
            yield self[i]

    # -- transforms (the format kept) ----------------------------------------------------------------
    def _rows(self) -> list[dict[str, Any]]:
        return [{n: values[i] for n, values in self._columns.items()} for i in range(len(self))]

    def map(self, function: Callable[..., Any] | None = None, batched: bool = False, batch_size: int | None = 1000,
            remove_columns: list[str] | str | None = None, **kwargs: Any) -> Dataset:
        removed = [remove_columns] if isinstance(remove_columns, str) else list(remove_columns or [])
        columns = {n: list(v) for n, v in self._columns.items() if n not in removed}
        if function is None:
            return self._like(columns)
        if batched:
            update = dict(function({n: list(v) for n, v in self._columns.items()}))
            new = {n: list(v) for n, v in update.items()}
        else:
            outputs = [dict(function(row)) for row in self._rows()]
            new = {n: [o[n] for o in outputs] for n in (outputs[0] if outputs else {})}
        columns.update(new)
        return self._like(columns)

    def filter(self, function: Callable[[dict[str, Any]], bool], **kwargs: Any) -> Dataset:
        keep = [i for i, row in enumerate(self._rows()) if function(row)]
        return self.select(keep)

    def select(self, indices: Any) -> Dataset:
        order = list(indices)
        return self._like({n: [v[i] for i in order] for n, v in self._columns.items()})

    def shuffle(self, seed: int | None = None, **kwargs: Any) -> Dataset:
        order = list(range(len(self)))
        random.Random(seed).shuffle(order)
        return self.select(order)

    def remove_columns(self, column_names: list[str] | str) -> Dataset:
        removed = [column_names] if isinstance(column_names, str) else column_names
        return self._like({n: v for n, v in self._columns.items() if n not in removed})

    def rename_column(self, original_column_name: str, new_column_name: str) -> Dataset:
        return self._like({new_column_name if n == original_column_name else n: v for n, v in self._columns.items()})

    def select_columns(self, column_names: list[str] | str) -> Dataset:
        kept = [column_names] if isinstance(column_names, str) else column_names
        return self._like({n: v for n, v in self._columns.items() if n in kept})

    def train_test_split(self, test_size: float = 0.25, seed: int | None = None, **kwargs: Any) -> DatasetDict:
        shuffled = self.shuffle(seed)
        cut = len(self) - max(1, int(round(len(self) * test_size)))
        return DatasetDict(train=shuffled.select(range(cut)), test=shuffled.select(range(cut, len(self))))


class DatasetDict(dict):
    """Splits by name; the format and transform methods apply to each."""

    def map(self, *args: Any, **kwargs: Any) -> DatasetDict:
        return DatasetDict({k: v.map(*args, **kwargs) for k, v in self.items()})

    def filter(self, *args: Any, **kwargs: Any) -> DatasetDict:
        return DatasetDict({k: v.filter(*args, **kwargs) for k, v in self.items()})

    def shuffle(self, *args: Any, **kwargs: Any) -> DatasetDict:
        return DatasetDict({k: v.shuffle(*args, **kwargs) for k, v in self.items()})

    def remove_columns(self, *args: Any, **kwargs: Any) -> DatasetDict:
        return DatasetDict({k: v.remove_columns(*args, **kwargs) for k, v in self.items()})

    def rename_column(self, *args: Any, **kwargs: Any) -> DatasetDict:
        return DatasetDict({k: v.rename_column(*args, **kwargs) for k, v in self.items()})

    def set_format(self, *args: Any, **kwargs: Any) -> None:
        for split in self.values():
            split.set_format(*args, **kwargs)

    def with_format(self, *args: Any, **kwargs: Any) -> DatasetDict:
        return DatasetDict({k: v.with_format(*args, **kwargs) for k, v in self.items()})

    def reset_format(self) -> None:
        for split in self.values():
            split.reset_format()


_WORDS = ["good", "bad", "great", "awful", "fine", "boring", "moving", "dull"]


def _synthetic(rows: int, seed: int) -> Dataset:
    rng = random.Random(seed)
    texts = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 12))) for _ in range(rows)]
    return Dataset.from_dict({"text": texts, "label": [rng.randint(0, 1) for _ in range(rows)]})


def load_dataset(path: str, name: str | None = None, split: str | None = None, **kwargs: Any) -> Any:
    splits = DatasetDict(train=_synthetic(32, 0), test=_synthetic(16, 1))
    if split is None:
        return splits
    return splits[split.split("[")[0]]
