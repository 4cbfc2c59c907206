"""What ``torch.load`` and its siblings give: tensors where ``map_location`` (or ``device=``) puts them.

``torch.load(f, map_location=d)`` with ``d`` a device (a string, a ``torch.device``, an int ``i``: ``cuda:i``)
restores every tensor in the file on ``d``, whatever structure holds them; without ``map_location``, or with a
dict (``{"cuda:0": "cpu"}``) or a function, the tensors go back where they were saved from (or where the
function puts them), which the source does not say: unknown, but for ``lambda storage, loc: storage``, the
CPU (the storage as deserialized). The structure itself is not known: the result is a tensor on ``d`` or a
:class:`TorchLoadedAtom`, a container of unknown shape whose items (``ckpt["model"]``, ``for v in xs``, ``.get``,
``.values()``, ``.items()``) are again a tensor on ``d`` or such a container (unknown under a bookkeeping key:
``ckpt["epoch"]``); no key is claimed to exist.
``weights_only`` moves nothing; with ``weights_only=False`` the file may hold any pickled object, so attributes
of the container are unknown (with the default, only containers and tensors load: a container has no ``.T``).
Unless ``weights_only=True`` is written, the object may also be a whole pickled module (the default was
``False`` before PyTorch 2.6): ``model.to(device)`` as a statement may move it in place, so it is no discarded
tensor move (MV206).

``torch.hub.load_state_dict_from_url`` is ``torch.load`` of the downloaded file; ``torch.jit.load(f,
map_location=d)`` a module whose weights are on ``d`` (its call checks the inputs against them);
``safetensors.torch.load_file(f, device="cpu")`` a dict of tensors on ``device``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import Any

from ..choices import tags_of
from ..domain import NONE, TOP, Atom, BoundShim, DictAtom, Origin, V, Value, const, join_all, seq, seq_of
from ..engine.flow_state import Frame, State
from ..torch_domain import CPU, NO_GRAD, TorchDev, TorchLayerAtom, TorchTensorAtom
from .signatures import bind_call

#: readers with ``torch.load``'s ``map_location``
MAP_LOCATION_LOADERS = frozenset({"torch.load", "torch.serialization.load", "torch.hub.load_state_dict_from_url"})
JIT_LOADERS = frozenset({"torch.jit.load", "torch.jit._serialization.load"})
SAFETENSORS_LOADERS = frozenset({"safetensors.torch.load_file"})
LOADERS = MAP_LOCATION_LOADERS | JIT_LOADERS | SAFETENSORS_LOADERS
#: a module the torch model owns the names of besides ``torch``
SAFETENSORS = "safetensors"
JIT_MODULE = "torch.jit.ScriptModule"  # the layer name of a loaded TorchScript module
#: methods of the dicts, lists and tuples a file holds that the model answers (others: unknown)
CONTAINER_METHODS = frozenset({"get", "pop", "setdefault", "values", "items", "keys", "copy", "index", "count",
                               "update", "clear", "append", "extend", "insert", "remove", "popitem", "move_to_end"})

MODULE_MOVES = frozenset({"to", "cuda", "cpu"})
#: methods of those containers that no tensor has (``t.items`` raises AttributeError)
MAPPING_ONLY = frozenset({"get", "setdefault", "items", "keys", "update", "popitem", "move_to_end", "append",
                          "extend", "insert", "remove", "pop", "clear"})

@dataclass(frozen=True, slots=True)
class TorchLoadedAtom(Atom):
    """A container read from a checkpoint whose every tensor is on ``dev``. ``weights_only``: as the load was
    given it (``None``: not given); with ``False`` it may be any object, whose attributes are not known."""

    loose = True
    loose_within = ("dev",)

    dev: TorchDev
    weights_only: bool | None = None
    origin: Origin | None = field(default=None, compare=False)
    tags: frozenset = frozenset()  # the undecided choices ``map_location`` came from (:mod:`analyzer.choices`)

    def truthy(self) -> bool | None:
        return None


def loaded(dev: TorchDev, weights_only: bool | None, origin: Origin | None, tags: frozenset = frozenset()) -> Value:
    """A file's contents: a tensor on ``dev`` or a container of such. The tensor is taken to have a dimension
    (weights, statistics, embeddings): with an unknown rank the scalar exemption would make every element-wise
    op and matmul with it unknown."""
    return Value(frozenset({TorchTensorAtom(dev, NO_GRAD, False, origin=origin, tags=tags),
                            TorchLoadedAtom(dev, weights_only, origin, tags)}))


def contents(atom: TorchLoadedAtom, key: Value | None = None) -> Value:
    """An item of the container (``ckpt["model"]``, an element, a value). Under a key that by convention names
    a checkpoint's bookkeeping (``ckpt["epoch"]``, ``ckpt["best_acc"]``, ``ckpt["decay"]``: :func:`bookkeeping`)
    the item is as likely a Python number or an options object as a tensor: unknown."""
    if key is not None and bookkeeping(key):
        return TOP
    return loaded(atom.dev, atom.weights_only, atom.origin, atom.tags)


#: keys a training checkpoint keeps its bookkeeping under (numbers, options, names), as the common trainers and
#: examples write them; a tensor is rarely stored there
BOOKKEEPING_KEYS = frozenset({
    "epoch", "epochs", "step", "steps", "global_step", "iteration", "iterations", "iter", "iters", "it", "lr",
    "learning_rate", "decay", "ema_decay", "momentum", "loss", "acc", "accuracy", "score", "metric", "metrics",
    "seed", "args", "config", "cfg", "hparams", "hyper_parameters", "hyperparameters", "version", "arch", "name",
    "model_name", "num_updates", "updates", "n_iter", "n_iters", "best", "best_epoch", "best_step", "date", "time",
})
BOOKKEEPING_PREFIXES = ("best_", "num_", "n_", "total_", "last_", "current_", "cur_")
BOOKKEEPING_SUFFIXES = ("_epoch", "_epochs", "_step", "_steps", "_iter", "_iters", "_iteration", "_loss", "_acc",
                        "_acc1", "_acc5", "_accuracy", "_score", "_lr", "_metric", "_config", "_args", "_count")


#: how a load's result describes where it came from (``load(...) result``)
LOADED = "(...) result"


def read_from_file(atom: TorchTensorAtom, key: Value) -> bool:
    """``atom`` is the possibility that a loaded file is one tensor, and ``key`` a string: no tensor is indexed by a
    string, so that possibility reads nothing (the container's possibility gives ``ckpt["epoch"]``). Other tensors
    read by a string stand for mappings of tensors (a Lightning batch ``batch["x"]``) and keep their reading."""
    keys = key.consts()
    if keys is None or not keys or key.top:
        return False
    return atom.origin is not None and atom.origin.loaded and all(isinstance(k, str) for k in keys)


def bookkeeping(key: Value) -> bool:
    """``key`` is one constant string that names a checkpoint's bookkeeping (:data:`BOOKKEEPING_KEYS`)."""
    keys = key.consts()
    if key.top or not keys or len(keys) != 1 or not isinstance(keys[0], str):
        return False
    name = keys[0].lower()
    return name in BOOKKEEPING_KEYS or name.startswith(BOOKKEEPING_PREFIXES) or name.endswith(BOOKKEEPING_SUFFIXES)


def container_attribute(atom: TorchLoadedAtom, attr: str) -> Value | None:
    """``ckpt.attr`` read on the container possibility: ``None`` for a method the model answers; unknown for
    any attribute of a pickled object; else nothing (a dict or list has no such attribute: the tensor
    possibility answers)."""
    if attr in CONTAINER_METHODS or (attr in MODULE_MOVES and atom.weights_only is not True):
        return None  # (a move of what may be a module: unknown, see :func:`moves_a_pickled_module`)
    return TOP if atom.weights_only is False else Value()


def container_method(atom: TorchLoadedAtom, name: str, args: list[Value]) -> Value:
    """``ckpt.get(k)``, ``.values()``, ``.items()`` ...: items are :func:`contents`, keys unknown."""
    item = contents(atom, args[0] if name in ("get", "pop", "setdefault") and args else None)
    if name in ("get", "pop", "setdefault"):
        return item.join(args[1] if len(args) > 1 else NONE if name == "get" else Value())
    if name == "values":
        return V(seq_of("list", item))
    if name == "items":
        return V(seq_of("list", V(seq("tuple", (TOP, item)))))
    if name == "copy":
        return V(atom)
    if name in MODULE_MOVES:  # a pickled module moved (unknown); a dict or list has no such method
        return TOP if atom.weights_only is False else Value()
    if name in ("update", "clear", "append", "extend", "insert", "remove"):
        return NONE
    return TOP


def load_call(model: Any, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
              fr: Frame) -> Value:
    """A call of one of :data:`LOADERS` (``model``: the torch model, which parses devices)."""
    bound = bind_call(path, args, kwargs).arguments
    # (what tells the file-as-a-tensor possibility from other tensors: :func:`read_from_file`)
    origin = replace(model.origin(node, fr, f"{path.rpartition('.')[2]}{LOADED}"), loaded=True)
    devices: list[tuple[TorchDev, object]] | None
    if path in SAFETENSORS_LOADERS:  # always a dict of tensors (``device="cpu"`` by default)
        devices = model.devices_of(bound.get("device", V(const("cpu"))), st)
        return TOP if devices is None else V(DictAtom((), join_all(
            V(TorchTensorAtom(dev, NO_GRAD, False, origin=origin, tags=tags_of(w))) for dev, w in devices)))
    location = bound.get("map_location")
    if location is None or location.consts() == [None]:
        return TOP  # where the file's tensors were saved from
    if is_storage_identity(_argument_node(node, "map_location", 1)):
        devices = [(CPU, None)]
    else:
        devices = model.devices_of(location, st)  # a dict or another function: not known
    if devices is None:
        return TOP
    if path in JIT_LOADERS:
        return join_all(V(TorchLayerAtom(JIT_MODULE, dev, True, origin=origin, tags=tags_of(w))) for dev, w in devices)
    hub = path == "torch.hub.load_state_dict_from_url"  # (its ``weights_only`` defaults to False)
    given = bound.get("weights_only")
    flags = [False if hub else None] if given is None else given.consts()
    if flags is None or False in flags or (None in flags and hub):
        weights_only: bool | None = False  # (an unknown flag: any object may load)
    else:
        weights_only = True if flags == [True] or all(flags) else None
    return join_all(loaded(dev, weights_only, origin, tags_of(w)) for dev, w in devices)


def moves_a_pickled_module(func: Value) -> bool:
    """``obj.to(d)`` / ``.cuda()`` / ``.cpu()`` where ``obj`` may be a whole module a load gave (no
    ``weights_only=True``): an in-place move, not a tensor's discarded copy."""
    return any(isinstance(a, BoundShim) and a.name in MODULE_MOVES and isinstance(a.receiver, TorchLoadedAtom)
               and a.receiver.weights_only is not True for a in func.atoms)


def _argument_node(node: ast.AST, name: str, position: int) -> ast.expr | None:
    if not isinstance(node, ast.Call):
        return None
    found = next((k.value for k in node.keywords if k.arg == name), None)
    if found is None and len(node.args) > position and not any(isinstance(a, ast.Starred) for a in node.args):
        found = node.args[position]
    return found


def is_storage_identity(node: ast.expr | None) -> bool:
    """``lambda storage, loc: storage``: each storage left as deserialized, on the CPU."""
    return isinstance(node, ast.Lambda) and len(node.args.args) == 2 and not node.args.vararg \
        and isinstance(node.body, ast.Name) and node.body.id == node.args.args[0].arg
