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
``__getitem__`` returns (called with an ``int`` index from the loader's own sampler, an unknown one from a
sampler the program gives; ``int(...)`` / ``float(...)`` there, or the index itself, is a number, so its
batch is a CPU tensor). A project ``collate_fn`` is called with a list of items and gives the batch. Anything
else (a dict used as a dataset included, a library ``collate_fn``) yields batches the analysis does not know
(silent).

What a loader's settings make fail when it is iterated (each recorded at the ``DataLoader(...)`` call but the
first, which is recorded where the CUDA tensor is made):

* **MV209**: with ``num_workers`` > 0 (a known int; an option's default in the command line's world without
  options) and workers started by fork (no ``multiprocessing_context``: the default start method, fork on Linux;
  or ``"fork"``), the dataset's ``__getitem__``, what it calls and the ``collate_fn`` run in a forked worker:
  they are analysed with a worker mode (``WORKER_VAR``, part of the calling context like the default device),
  and a torch call there that makes a CUDA tensor from no CUDA input (``.cuda()``, ``.to(device)``, a creation
  on a CUDA device) fails with torch's ``Cannot re-initialize CUDA in forked subprocess``, and so does one that
  computes with a CUDA tensor the parent process made (a project dataset's features moved to the GPU in
  ``__init__``, indexed in ``__getitem__``: the parent initialised CUDA, the child cannot). A later call over
  such a tensor (one the worker made, whose source names the first failure, or the parent's) fails again: it
  is recorded too, a cascade of the first (:mod:`rules.cascades`); a library dataset
  (a ``TensorDataset``, a list, a tensor) holding CUDA tensors fails the same way when torch indexes it there
  (recorded at the ``DataLoader(...)`` call). A ``spawn`` or ``forkserver`` context, or one the analysis does
  not know, is silent.
* **MV210**: ``pin_memory=True`` with batches (the collated items or the ``collate_fn``'s) holding a CUDA tensor:
  the loader pins every batch, and ``Tensor.pin_memory()`` of a GPU tensor raises.
* **MV211**: a random sampler (``shuffle=True``, or ``sampler=RandomSampler(...)``) or an explicit ``generator``
  whose generator is on another device type than the default device (``torch.set_default_device("cuda")``,
  ``set_default_tensor_type(torch.cuda.FloatTensor)``): ``RandomSampler`` makes a CPU ``torch.Generator()``
  when it is given none, and ``torch.randperm`` on the default device refuses it (a CUDA generator on the CPU
  default device the other way round). The default device is the one in force where the loader is built
  (programs set it at start-up); one changed between building and iterating is not followed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from runtime_shim import torch_semantics as T

from ..choices import consistent, tags_of
from ..domain import (
    TOP,
    ArrayAtom,
    Const,
    DictAtom,
    Instance,
    NumberAtom,
    Origin,
    SeqAtom,
    V,
    Value,
    map_elements,
    seq,
    seq_of,
)
from ..engine.flow_state import Frame, State, widen_if_large
from ..facts import Possibility
from ..torch_domain import (
    CPU,
    LEAF,
    NO_GRAD,
    NON_LEAF,
    TorchDeviceAtom,
    TorchGeneratorAtom,
    TorchSamplerAtom,
    TorchTensorAtom,
    TorchWorkersAtom,
)
from .records import RecordAtom, named_fields, record
from .signatures import Bound, argument, bind_call

DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
TENSOR_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})
RANDOM_SAMPLERS = frozenset({"torch.utils.data.RandomSampler", "torch.utils.data.sampler.RandomSampler"})
#: a view of some of a dataset's items (``Subset(ds, idx)``), and ``random_split``'s list of them
SUBSETS = frozenset({"torch.utils.data.Subset", "torch.utils.data.dataset.Subset"})
SPLITS = frozenset({"torch.utils.data.random_split", "torch.utils.data.dataset.random_split"})
GENERATORS = frozenset({"torch.Generator", "torch._C.Generator"})
#: The functions that seed PyTorch's default generator and return it: the CPU one (``torch.cuda.manual_seed``
#: seeds the CUDA generators and returns None).
DEFAULT_GENERATOR_SEEDS = frozenset({"torch.manual_seed", "torch.random.manual_seed"})
_NUMBERS = frozenset({"int", "float", "bool"})
#: the flow-state mode of a worker: a DataLoader's forked workers run the code analysed under it
WORKER_VAR = "torch.data_worker"
WORKER_SITE = "DataLoader worker"  # the api of the worker checks' sites (apart from the call's own checks)
_FORK_METHODS = {None: "fork (the default start method on Linux)", "fork": "fork"}


class TorchData:
    """``DataLoader`` and ``TensorDataset`` (part of the torch model)."""

    def torch_data_call(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                        fr: Frame) -> Value | None:
        """The value of a ``torch.utils.data`` call the model knows (None: not one)."""
        if path in TENSOR_DATASETS:
            return self._tensor_dataset(args, kwargs)
        if path in DATA_LOADERS:
            return self._data_loader(args, kwargs, node, st, fr)
        if path in RANDOM_SAMPLERS:
            return self._random_sampler(path, args, kwargs, node, fr)
        if path in SUBSETS or path in SPLITS:
            # its items are the dataset's (indexed through the subset's indices): for devices, the dataset
            dataset = args[0] if args else kwargs.get("dataset", TOP)
            return dataset if path in SUBSETS else V(seq_of("list", dataset))
        return None

    def torch_generator(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                        fr: Frame) -> Value | None:
        """``torch.Generator(device=...)``: a generator on that device (the CPU without one; unknown: None);
        ``torch.manual_seed(s)``: the default generator, on the CPU."""
        if path in DEFAULT_GENERATOR_SEEDS:  # ``generator = torch.manual_seed(0)``: the default CPU generator
            return V(TorchGeneratorAtom(CPU, self.origin(node, fr, path)))  # type: ignore[attr-defined]
        if path not in GENERATORS:
            return None
        device = argument("torch.Generator", args, kwargs, "device", None)
        devices = [(CPU, None)] if device is None else self.devices_of(device, st)  # type: ignore[attr-defined]
        if devices is None:
            return TOP
        origin = self.origin(node, fr, "torch.Generator")  # type: ignore[attr-defined]
        # (on the way of a choice its device came from: ``device="cuda" if args.cuda else "cpu"``)
        return Value(frozenset(TorchGeneratorAtom(dev, origin, tags_of(source)) for dev, source in devices))

    def _random_sampler(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                        fr: Frame) -> Value:
        """``RandomSampler(data, generator=g)``: a sampler that draws with ``g`` (its own CPU generator without)."""
        generator = argument("torch.utils.data.RandomSampler", args, kwargs, "generator", None)
        origin = self.origin(node, fr, "RandomSampler")  # type: ignore[attr-defined]
        if generator is None or generator.consts() == [None]:
            return V(TorchSamplerAtom(None, origin))
        if generator.top or not generator.only(TorchGeneratorAtom):
            return TOP
        return Value(frozenset(TorchSamplerAtom(g, origin) for g in generator.atoms
                               if isinstance(g, TorchGeneratorAtom)))

    def _tensor_dataset(self, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """``TensorDataset(a, b)``: a list whose items are ``(a[i], b[i])``."""
        if kwargs or not args or not all(arg.only(TorchTensorAtom) for arg in args):
            return V(seq_of("list", TOP))
        rows = [self.iter_element(arg) for arg in args]  # type: ignore[attr-defined]
        return V(seq_of("list", V(seq("tuple", rows))))

    def _data_loader(self, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                     fr: Frame) -> Value:
        bound = bind_call("torch.utils.data.DataLoader", args, kwargs)
        self._check_sampler_generator(bound, node, st, fr)
        own_collate = bound.get("collate_fn")
        batch_size = bound.get("batch_size")
        workers = self._forked_workers(bound, node, fr)
        saved = st.modes.get(WORKER_VAR)
        if workers is not None:  # the dataset and the collate_fn run in a forked worker
            st.modes[WORKER_VAR] = V(workers)
        try:
            if batch_size is not None and batch_size.consts() == [None]:
                return V(seq_of("list", TOP))  # items given one by one (converted, not collated)
            dataset = bound.get("dataset", TOP)
            item = self._dataset_item(dataset, _index(bound), node, st, fr)
            if workers is not None:
                self._check_worker_rows(dataset, workers, node, st, fr)
            if own_collate is not None and own_collate.consts() != [None]:
                if own_collate.top or not own_collate.atoms:
                    return V(seq_of("list", TOP))
                # the project's own collation, called on a list of items (as the loader does for each batch)
                batch = self.call(own_collate, [V(seq_of("list", item))], {}, node, st, fr)  # type: ignore[attr-defined]
            else:
                batch = _collated(self._as_records(item, st, fr), self.origin(node, fr, "DataLoader batch"))  # type: ignore[attr-defined]
        finally:
            if saved is None:
                st.modes.pop(WORKER_VAR, None)
            else:
                st.modes[WORKER_VAR] = saved
        self._check_pinning(bound, batch, node, st, fr)
        return V(seq_of("list", widen_if_large(batch)))

    def _forked_workers(self, bound: Bound[Value], node: ast.AST, fr: Frame) -> TorchWorkersAtom | None:
        """The loader's workers, when it has some (a known count above 0) and fork starts them."""
        count = bound.get("num_workers")
        counts = count.consts() if count is not None and not count.top else None
        if not counts or not all(type(c) is int and c > 0 for c in counts):
            return None
        context = bound.get("multiprocessing_context")
        methods = [None] if context is None else context.consts() if not context.top else None
        if not methods or len(methods) != 1 or methods[0] not in _FORK_METHODS:
            return None  # "spawn", "forkserver", a context object: a fresh interpreter may use CUDA
        return TorchWorkersAtom(min(counts), _FORK_METHODS[methods[0]],
                                self.origin(node, fr, f"DataLoader with num_workers={min(counts)}"))  # type: ignore[attr-defined]

    def _check_worker_rows(self, dataset: Value, workers: TorchWorkersAtom, node: ast.AST, st: State,
                           fr: Frame) -> None:
        """A library dataset (a ``TensorDataset``, a list, a tensor) holding CUDA tensors, indexed in a forked
        worker: indexing a CUDA tensor there initialises CUDA (MV209, at the ``DataLoader(...)`` call: the
        indexing is torch's code)."""
        rows = Value(frozenset(a for a in dataset.atoms if not isinstance(a, Instance)))
        if not rows.atoms:
            return
        tensors = _tensors_in(self.iter_element(rows))  # type: ignore[attr-defined]
        if not tensors:
            return
        # (CPU rows are recorded too: they show the worlds where the workers are fine)
        possibilities = [Possibility((("tensor", t), ("worker", workers)), "MV209" if t.dev.type == "cuda" else None,
                                     T.BAD_FORK_MESSAGE if t.dev.type == "cuda" else "", "torch.worker")
                         for t in tensors]
        self.torch_record(self.site(node, WORKER_SITE, fr), possibilities, dataset.top, TOP, st, fr,  # type: ignore[attr-defined]
                          raises=False)

    def worker_made_cuda(self, api: str, result: Value, inputs: list[Value], node: ast.AST | None, st: State,
                         fr: Frame) -> Value:
        """A torch call in a forked DataLoader worker: one that makes a CUDA tensor from no CUDA input initialises
        CUDA in the child, which fails (MV209, recorded here)."""
        workers = st.modes.get(WORKER_VAR)
        if workers is None or node is None:
            return result
        tensors = _tensors(result)
        # the CUDA tensors the worker's own code made, each to the tensor made where the worker first failed:
        # using one again fails again, a cascade of that first failure (:mod:`rules.cascades`), not another bug
        made: dict[Origin, Origin] = self.__dict__.setdefault("_worker_made", {})
        cuda_inputs = [t for value in inputs for t in _tensors(value) if t.dev.type == "cuda"]
        # (an index of a parent's tensor keeps its origin: still the parent's)
        firsts = {id(t): _worker_first(t, made) for t in cuda_inputs}
        if cuda_inputs and not tensors:
            return result  # one that gives no tensor (``size()``, ``dim()``) reads metadata only
        parents = {t.origin for t in cuda_inputs if firsts[id(t)] is None}
        for t in tensors:
            if t.dev.type == "cuda" and t.origin is not None and t.origin not in made and t.origin not in parents:
                first = next((f for f in firsts.values() if f is not None), None)
                made[t.origin] = first if first is not None else t.origin
        if cuda_inputs:
            # a CUDA tensor of the parent process (made before the fork) or the worker's own: a call that
            # computes with it initialises CUDA in the child (the worker's own names the first failure)
            tensors = [t if (first := firsts[id(t)]) is None else t.with_(source=first, ndim=t.ndim)
                       for t in cuda_inputs]
        # (a CPU result is recorded too, at the call's worker site: it shows the worlds where the worker is fine)
        possibilities = [Possibility((("tensor", t), ("worker", w)),
                                     "MV209" if t.dev.type == "cuda" else None,
                                     T.BAD_FORK_MESSAGE if t.dev.type == "cuda" else "", "torch.worker")
                         for t in tensors for w in workers.atoms if isinstance(w, TorchWorkersAtom)]
        # (raises=False: the worker raises, but the DataLoader(...) call that analyses its code does not: the loop
        # over the loader does, and the code after the call is analysed with the batches the user meant)
        return self.torch_record(self.site(node, f"{api} in a {WORKER_SITE}", fr), possibilities, result.top,  # type: ignore[attr-defined]
                                 result, st, fr, raises=False)

    def _check_pinning(self, bound: Bound[Value], batch: Value, node: ast.AST, st: State, fr: Frame) -> None:
        """``pin_memory=True``: each batch is pinned, and a tensor on a GPU cannot be (MV210)."""
        pin = bound.get("pin_memory")
        if pin is None or pin.truthiness() != {True}:
            return
        tensors = _tensors_in(batch)
        if not tensors:
            return
        # (CPU batches are recorded too: they show the worlds where pinning works)
        possibilities = [Possibility((("batch", t),),
                                     "MV210" if t.dev.type != "cpu" else None,
                                     T.pin_message(f"{t.dev.shown} tensor") if t.dev.type != "cpu" else "",
                                     "torch.pin_memory") for t in tensors]
        self.torch_record(self.site(node, "DataLoader(pin_memory=True)", fr), possibilities, batch.top, TOP, st, fr,  # type: ignore[attr-defined]
                          raises=False)

    def _check_sampler_generator(self, bound: Bound[Value], node: ast.AST, st: State, fr: Frame) -> None:
        """The generator a loader draws with against the default device (MV211): a random sampler (``shuffle=True``
        or a ``RandomSampler``) draws ``torch.randperm`` on the default device with its generator, and a loader's
        own ``generator`` seeds its workers with ``random_`` on the default device."""
        generators: list[TorchGeneratorAtom | None] = []  # None: a sampler's own CPU generator
        explicit = bound.get("generator")
        sampler = bound.get("sampler")
        shuffle = bound.get("shuffle")
        if explicit is not None and explicit.consts() != [None]:
            if explicit.top or not explicit.only(TorchGeneratorAtom):
                return
            generators = list(explicit.atoms)  # type: ignore[arg-type]
        elif sampler is not None and sampler.consts() != [None]:
            if sampler.top or not sampler.only(TorchSamplerAtom):
                return
            generators = [a.generator for a in sampler.atoms]  # type: ignore[attr-defined]
        elif shuffle is not None and shuffle.truthiness() == {True}:
            generators = [None]
        if not generators:
            return
        defaults = self.default_devices(st)  # type: ignore[attr-defined]
        if defaults is None:
            return
        # (a passing draw is recorded too: it shows the worlds where the loader works, e.g. without CUDA)
        origin = self.origin(node, fr, "RandomSampler's own torch.Generator()")  # type: ignore[attr-defined]
        possibilities = []
        for generator in generators:
            atom = generator if generator is not None else TorchGeneratorAtom(CPU, origin)
            for dev, source in defaults:
                device = source if isinstance(source, TorchDeviceAtom) else TorchDeviceAtom(dev)
                if not consistent(tags_of(atom), tags_of(device)):
                    continue  # one way of a choice made the generator, the other set the default device
                code, message = T.generator_outcome(dev.type, atom.dev.type) or (None, "")
                possibilities.append(Possibility((("generator", atom), ("default device", device)), code, message,
                                                 "torch.generator"))
        # its own site: the loader's other checks (pinning, workers) are judged apart from the sampler's draw
        self.torch_record(self.site(node, "RandomSampler", fr), possibilities, False, TOP, st, fr,  # type: ignore[attr-defined]
                          raises=False)

    def _as_records(self, item: Value, st: State, fr: Frame) -> Value:
        """``item`` with each ``typing.NamedTuple`` instance as a record of its fields (collated field by field)."""
        out = Value(frozenset(), item.top)
        for atom in item.atoms:
            names = named_fields(atom)
            fields = None if names is None else self.model_items(atom, st, fr)  # type: ignore[attr-defined]
            out = out.join(V(atom) if names is None or fields is None else V(record(names, fields)))
        return out

    def _dataset_item(self, dataset: Value, index: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        """``dataset[i]``: a project dataset's ``__getitem__`` called with ``index``; for anything else, what
        iterating it gives (a ``TensorDataset``'s rows, a list's elements, a tensor's rows)."""
        instances = [atom for atom in dataset.atoms if isinstance(atom, Instance)]
        iterated = dataset.atoms.difference(instances)
        dicts = any(isinstance(atom, DictAtom) for atom in iterated)  # ``d[i]`` is a value, iterating gives keys
        out = TOP if dicts else self.iter_element(Value(iterated, dataset.top))  # type: ignore[attr-defined]
        for atom in instances:
            method = self.attribute_of(atom, "__getitem__", None, st, fr)  # type: ignore[attr-defined]
            out = out.join(TOP if method is None else self.call(method, [index], {}, node, st, fr))  # type: ignore[attr-defined]
        return out


def _index(bound: Bound[Value]) -> Value:
    """What the loader gives ``__getitem__``: an ``int`` from its own sampler (sequential or random), whatever a
    sampler or batch sampler the program passes yields (unknown)."""
    for name in ("sampler", "batch_sampler"):
        given = bound.get(name)
        if given is not None and given.consts() != [None]:
            return TOP
    return V(NumberAtom("int", low=0))


@dataclass(frozen=True, slots=True)
class CollatedAtom(SeqAtom):
    """A batch ``default_collate`` made of a dataset's tuples: a list of its fields (``[inputs, targets]``), one
    record, unpacked where it is used (``inputs, targets = batch``), unlike a list of batches or of weights."""

    def held(self) -> tuple[Value, ...]:
        return self.items or ()


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
        elif isinstance(atom, RecordAtom) and atom.items is not None:  # a named tuple: of the same type
            out = out.join(V(record(atom.names, [_collated(element, origin) for element in atom.items])))
        elif isinstance(atom, (SeqAtom, DictAtom)):  # a tuple's elements are collated into a list
            collated = map_elements(atom, lambda element: _collated(element, origin), kind="list")
            if isinstance(collated, SeqAtom) and collated.items is not None:
                collated = CollatedAtom(collated.kind, collated.items, collated.elem)
            out = out.join(V(collated))
        else:
            out = out.join(TOP)
    return out


def _tensors(value: Value) -> list[TorchTensorAtom]:
    return [a for a in value.atoms if isinstance(a, TorchTensorAtom)]


def _worker_first(tensor: TorchTensorAtom, made: dict[Origin, Origin]) -> Origin | None:
    """Where the worker first failed making the CUDA tensor ``tensor`` comes from (None: the parent's tensor)."""
    for origin in (tensor.origin, tensor.source):
        if origin is not None and origin in made:
            return made[origin]
    return None


def _tensors_in(value: Value, depth: int = 0) -> list[TorchTensorAtom]:
    """The tensors of a batch: the value's and its lists', tuples' and dicts' elements."""
    out: list[TorchTensorAtom] = []
    for atom in value.atoms:
        if isinstance(atom, TorchTensorAtom):
            out.append(atom)
        elif isinstance(atom, SeqAtom) and depth < 4:
            for element in (*(atom.items or ()), atom.elem):
                out.extend(_tensors_in(element, depth + 1))
        elif isinstance(atom, DictAtom) and depth < 4:
            for _key, element in atom.items:
                out.extend(_tensors_in(element, depth + 1))
    return list(dict.fromkeys(out))
