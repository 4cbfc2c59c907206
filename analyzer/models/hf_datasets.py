"""Hugging Face ``datasets``: the rows a dataset formatted for torch gives are CPU tensors.

What the library does with devices (read from datasets' source, ``formatting/torch_formatter.py``):

* ``load_dataset(...)`` gives a ``DatasetDict`` of splits (a ``Dataset`` with ``split=``; ``streaming=True``:
  their iterable counterparts, alike here), ``Dataset.from_dict``/``from_list``/``from_pandas``/
  ``from_generator``, ``load_from_disk`` and ``concatenate_datasets`` a dataset; ``dataset_dict["train"]`` is
  one split. ``map``, ``filter``, ``shuffle``, ``select``, ``sort``, ``remove_columns``, ``rename_column(s)``,
  ``select_columns``, ``cast``, ``cast_column``, ``flatten`` and ``train_test_split`` (a ``DatasetDict``) keep
  the format.
* By default rows are Python objects (lists, numbers, strings: what a ``DataLoader`` collates, not followed
  here). ``set_format("torch")`` (in place; ``"pt"``/``"pytorch"`` too, ``type=``) and
  ``with_format("torch")`` (a new dataset) make ``TorchFormatter`` convert every numeric column with
  ``torch.from_numpy``/``torch.as_tensor``/``torch.tensor``: CPU tensors (on the default device for the
  latter two: where ``torch.set_default_device`` is in force, not known). A ``device=`` keyword is passed to
  ``as_tensor``/``tensor`` only, not to ``from_numpy`` (int64 and float32 columns): where the tensors are is
  then not known. ``reset_format()`` and any other format give rows that are not followed.
* ``dataset[i]`` is a row (a dict of the columns' tensors), ``dataset["col"]`` a column (a tensor),
  ``dataset[a:b]`` a batch (a dict of tensors); iterating a dataset gives rows, so a ``DataLoader`` over it
  collates them into a dict of CPU tensors, which a model on the GPU cannot take unmoved.

Columns named in ``set_format(columns=[...])`` are the row's keys; otherwise every key reads a tensor
(string columns among them are not told apart). Anything else from ``datasets`` is unknown.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from ..domain import NONE, TOP, Atom, BoundShim, Const, DictAtom, NumberAtom, Origin, SeqAtom, V, Value
from ..engine.flow_state import Frame, State
from ..torch_domain import CPU, NO_GRAD, TorchTensorAtom
from .base import UNHANDLED, LibraryModel, Unhandled
from .keyed_moves import hold_in_place
from .library_refs import LibraryRef, library_ref
from .signatures import bind_call

ROOTS = frozenset({"datasets"})
_TORCH_FORMATS = frozenset({"torch", "pt", "pytorch"})
#: functions that make a dataset (``split`` decides between a dataset and a dict of splits for the first)
_LOADERS = frozenset({"load_dataset"})
_MAKERS = frozenset({"load_from_disk", "concatenate_datasets", "interleave_datasets"})
_CONSTRUCTORS = frozenset({"from_dict", "from_list", "from_pandas", "from_generator", "from_csv", "from_json",
                           "from_parquet", "from_text", "load_from_disk"})
_DATASET_CLASSES = frozenset({"Dataset", "IterableDataset", "DatasetDict", "IterableDatasetDict"})
#: methods that give the dataset with its format kept
_SAME_FORMAT = frozenset({"map", "filter", "shuffle", "select", "sort", "remove_columns", "rename_column",
                          "rename_columns", "select_columns", "cast", "cast_column", "flatten", "take", "skip",
                          "class_encode_column", "add_column", "flatten_indices", "with_transform"})
_METHODS = _SAME_FORMAT | {"set_format", "with_format", "reset_format", "train_test_split", "set_transform"}


@dataclass(frozen=True, slots=True)
class HFDatasetAtom(Atom):
    """A ``datasets`` dataset (``splits``: a ``DatasetDict`` of them). ``torch``: formatted for torch, its rows
    CPU tensors (``None``: a format whose tensors the analysis does not place); ``columns``: the formatted
    columns (``None``: any)."""

    splits: bool
    torch: bool | None = False
    columns: tuple[str, ...] | None = None
    origin: Origin | None = None

    def truthy(self) -> bool | None:
        return None  # (``len`` of it: not known)


class HFDatasets(LibraryModel):
    """``datasets``' datasets, their formats and the rows they give."""

    name = "datasets"

    def import_ref(self, path: str) -> Value | None:
        return library_ref(path, ROOTS)

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                       fr: Frame) -> Value | None | Unhandled:
        if isinstance(atom, HFDatasetAtom):
            return V(BoundShim(atom, attr)) if attr in _METHODS else None
        return UNHANDLED

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                   st: State, fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if not isinstance(atom, LibraryRef) or atom.path.partition(".")[0] not in ROOTS:
            return UNHANDLED
        owner, _dot, leaf = atom.path.rpartition(".")
        made = leaf in _LOADERS or leaf in _MAKERS \
            or (leaf in _CONSTRUCTORS and owner.rpartition(".")[2] in _DATASET_CLASSES)
        if not made or node is None:
            return TOP
        splits = False
        if leaf in _LOADERS:
            split = bind_call("datasets.load_dataset", args, kwargs).get("split")
            if star_unknown or (split is not None and split.top):
                return TOP
            splits = split is None or split.consts() == [None]
        return V(HFDatasetAtom(splits, origin=self.origin(node, fr, f"datasets {leaf}")))

    def method_call(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                    node: ast.AST, st: State, fr: Frame) -> Value | Unhandled:
        if kind != "HFDatasetAtom":
            return UNHANDLED
        if receiver.top or len(receiver.atoms) != 1:
            return TOP
        dataset = next(iter(receiver.atoms))
        assert isinstance(dataset, HFDatasetAtom)
        if name in _SAME_FORMAT:
            return TOP if name in ("with_transform",) else V(dataset)
        if name == "train_test_split":
            return V(replace(dataset, splits=True))
        if name in ("set_format", "with_format", "reset_format", "set_transform"):
            formatted = _formatted(dataset, name, args, kwargs)
            if name == "with_format":
                return V(formatted)
            hold_in_place(self.engine, node, V(formatted), st, fr)
            return NONE
        return TOP

    def item(self, atom: Atom, key: Value, node: ast.AST, st: State, fr: Frame) -> Value | None:
        if not isinstance(atom, HFDatasetAtom):
            return None
        keys = key.consts()
        if atom.splits:
            return V(replace(atom, splits=False)) if keys and all(isinstance(k, str) for k in keys) else TOP
        if not atom.torch or key.top or not key.atoms:
            return TOP
        if key.only(NumberAtom, Const) and all(_is_int(a) for a in key.atoms):
            return _row(atom)  # ``dataset[i]``
        if keys and len(keys) == 1 and isinstance(keys[0], str):  # a column
            return _tensor(atom, True) if atom.columns is None or keys[0] in atom.columns else TOP
        return TOP

    def element(self, atom: Atom, how: str) -> Value | None:
        if not isinstance(atom, HFDatasetAtom):
            return None
        if how == "slice":
            return V(atom) if not atom.torch else _row(atom, True)  # ``dataset[a:b]``: a batch of columns
        if atom.splits or not atom.torch:
            return TOP  # the splits' names; Python rows
        return _row(atom)


def _is_int(atom: Atom) -> bool:
    if isinstance(atom, NumberAtom):
        return atom.tname == "int"
    return isinstance(atom, Const) and type(atom.value) is int


def _tensor(dataset: HFDatasetAtom, rows: bool) -> Value:
    """A column's CPU tensor: of several rows (at least one dimension), or of one (a label: 0-dim)."""
    return V(TorchTensorAtom(CPU, NO_GRAD, False if rows else None, origin=dataset.origin))


def _row(dataset: HFDatasetAtom, rows: bool = False) -> Value:
    """A row (``rows``: a batch of rows) of a dataset formatted for torch: its columns' CPU tensors."""
    if dataset.columns is not None:
        return V(DictAtom(tuple((c, _tensor(dataset, rows)) for c in dataset.columns)))
    return V(DictAtom((), _tensor(dataset, rows)))


def _formatted(dataset: HFDatasetAtom, method: str, args: list[Value], kwargs: dict[str, Value]) -> HFDatasetAtom:
    """The dataset after ``set_format``/``with_format``/``reset_format``/``set_transform``."""
    if method != "set_format" and method != "with_format":
        return replace(dataset, torch=False if method == "reset_format" else None, columns=None)
    bound = bind_call(f"datasets.Dataset.{method}", args, kwargs)
    given = bound.get("type")
    types = given.consts() if given is not None else [None]
    if types is None or (given is not None and given.top) or len(types) != 1:
        return replace(dataset, torch=None, columns=None)
    if types[0] is None or types[0] == "python":
        return replace(dataset, torch=False, columns=None)
    if types[0] not in _TORCH_FORMATS:
        return replace(dataset, torch=None, columns=None)
    device = bound.extra.get("device")
    if device is not None and device.consts() != [None] and device.consts() != ["cpu"]:
        return replace(dataset, torch=None, columns=None)  # (``from_numpy`` ignores it: where is not known)
    columns = _columns(bound.get("columns"))
    everything = bound.get("output_all_columns")
    if columns is not None and everything is not None and everything.consts() != [False]:
        columns = None  # the other columns come as they are (not told apart)
    return replace(dataset, torch=True, columns=columns)


def _columns(given: Value | None) -> tuple[str, ...] | None:
    """``columns=[...]``: the names (``None``: every column, or not known)."""
    if given is None or given.top or len(given.atoms) != 1:
        return None
    atom = next(iter(given.atoms))
    if not isinstance(atom, SeqAtom) or atom.items is None:
        return None
    names = [item.consts() for item in atom.items]
    if not all(n and len(n) == 1 and isinstance(n[0], str) and not item.top
               for n, item in zip(names, atom.items, strict=True)):
        return None
    return tuple(str(n[0]) for n in names if n)


