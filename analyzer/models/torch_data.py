"""``torch.utils.data``: what a ``DataLoader`` yields, so that a batch used without a move is followed.

The classic failure of a training loop is a batch that never reaches the model's device::

    loader = DataLoader(TensorDataset(features, labels), batch_size=32)
    for x, y in loader:
        out = model(x)          # model on cuda:0, x on the CPU

A ``DataLoader`` is modelled as a list of batches, each the default collation of one dataset item
(``torch.utils.data.default_collate``): a tensor is stacked where it is (a stack of leaves that require
grad is a non-leaf), a number or a numpy array becomes a CPU tensor, a tuple or a list a list of collated
elements, a dict a dict of collated values, a string a list of strings. The item is a row of each tensor of
a ``TensorDataset`` (or of a tensor), an element of a list used as a dataset, or what a project dataset's
``__getitem__`` returns (called with an unknown index; ``int(...)`` / ``float(...)`` there is a number, so its
batch is a CPU tensor). A project ``collate_fn`` is called with a list of items and gives the batch. Anything
else (a dict used as a dataset included, a library ``collate_fn``) yields batches the analysis does not know
(silent).
"""

from __future__ import annotations

import ast
from typing import Any

from ..domain import TOP, ArrayAtom, Const, DictAtom, Instance, NumberAtom, SeqAtom, V, Value, map_elements, seq, seq_of
from ..engine.flow_state import Frame, State, widen_if_large
from ..torch_domain import CPU, LEAF, NO_GRAD, NON_LEAF, TorchTensorAtom
from .signatures import bind_call

DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
TENSOR_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})
_NUMBERS = frozenset({"int", "float", "bool"})


class TorchData:
    """``DataLoader`` and ``TensorDataset`` (part of the torch model)."""

    def torch_data_call(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                        fr: Frame) -> Value | None:
        """The value of a ``torch.utils.data`` call the model knows (None: not one)."""
        if path in TENSOR_DATASETS:
            return self._tensor_dataset(args, kwargs)
        if path in DATA_LOADERS:
            return self._data_loader(args, kwargs, node, st, fr)
        return None

    def _tensor_dataset(self, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """``TensorDataset(a, b)``: a list whose items are ``(a[i], b[i])``."""
        if kwargs or not args or not all(arg.only(TorchTensorAtom) for arg in args):
            return V(seq_of("list", TOP))
        rows = [self.iter_element(arg) for arg in args]  # type: ignore[attr-defined]
        return V(seq_of("list", V(seq("tuple", rows))))

    def _data_loader(self, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                     fr: Frame) -> Value:
        bound = bind_call("torch.utils.data.DataLoader", args, kwargs)
        own_collate = bound.get("collate_fn")
        batch_size = bound.get("batch_size")
        if batch_size is not None and batch_size.consts() == [None]:
            return V(seq_of("list", TOP))  # items given one by one (converted, not collated)
        dataset = bound.get("dataset", TOP)
        item = self._dataset_item(dataset, node, st, fr)
        if own_collate is not None and own_collate.consts() != [None]:
            if own_collate.top or not own_collate.atoms:
                return V(seq_of("list", TOP))
            # the project's own collation, called on a list of items (as the loader does for each batch)
            batch = self.call(own_collate, [V(seq_of("list", item))], {}, node, st, fr)  # type: ignore[attr-defined]
            return V(seq_of("list", widen_if_large(batch)))
        origin = self.origin(node, fr, "DataLoader batch")  # type: ignore[attr-defined]
        return V(seq_of("list", widen_if_large(_collated(item, origin))))

    def _dataset_item(self, dataset: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        """``dataset[i]``: a project dataset's ``__getitem__``; for anything else, what iterating it gives (a
        ``TensorDataset``'s rows, a list's elements, a tensor's rows)."""
        instances = [atom for atom in dataset.atoms if isinstance(atom, Instance)]
        iterated = dataset.atoms.difference(instances)
        dicts = any(isinstance(atom, DictAtom) for atom in iterated)  # ``d[i]`` is a value, iterating gives keys
        out = TOP if dicts else self.iter_element(Value(iterated, dataset.top))  # type: ignore[attr-defined]
        for atom in instances:
            method = self.attribute_of(atom, "__getitem__", None, st, fr)  # type: ignore[attr-defined]
            out = out.join(TOP if method is None else self.call(method, [TOP], {}, node, st, fr))  # type: ignore[attr-defined]
        return out


def _collated(item: Value, origin: Any) -> Value:
    """What ``default_collate`` makes of a batch of ``item``s."""
    out = TOP if item.top else Value()
    for atom in item.atoms:
        if isinstance(atom, TorchTensorAtom):
            grad = NON_LEAF if atom.grad == LEAF else atom.grad
            out = out.join(V(atom.with_(grad=grad, zero_dim=False, owned=False, moved_from=None)))
        elif isinstance(atom, (ArrayAtom, NumberAtom)) or (isinstance(atom, Const) and atom.tname in _NUMBERS):
            out = out.join(V(TorchTensorAtom(CPU, NO_GRAD, False, origin=origin)))
        elif isinstance(atom, Const) and atom.tname == "str":
            out = out.join(V(seq_of("list", V(atom))))
        elif isinstance(atom, (SeqAtom, DictAtom)):  # a tuple's elements are collated into a list
            out = out.join(V(map_elements(atom, lambda element: _collated(element, origin), kind="list")))
        else:
            out = out.join(TOP)
    return out
