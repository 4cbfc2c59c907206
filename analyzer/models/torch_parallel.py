"""``nn.DataParallel`` and ``DistributedDataParallel``: wrappers that check where their module is and move
their inputs.

``nn.DataParallel``: a wrapper whose module must sit on ``device_ids[0]`` and whose inputs go anywhere.

Before each forward, ``DataParallel`` checks that every parameter and buffer of its module is on
``cuda:device_ids[0]`` (``RuntimeError: module must have its parameters and buffers on device cuda:0
(device_ids[0]) but found one of them on device: cuda:1``, MV202 here); then it scatters the inputs (any
device, the CPU included) over ``device_ids``, runs a replica on each and gathers the outputs on
``output_device`` (``device_ids[0]`` by default). Without CUDA it is the module itself. The analysis models
one replica: the module called with its inputs on ``device_ids[0]``, the outputs gathered.

The wrapper is a container layer named ``DataParallel`` whose ``dev`` is ``device_ids[0]`` (``None``: not
known) and whose child is the module; an ``output_device`` other than ``device_ids[0]`` leaves the outputs'
device unknown.

``DistributedDataParallel(module, device_ids=None, output_device=None, ...)`` (one process of the group):
its constructor raises ``ValueError: DistributedDataParallel device_ids and output_device arguments only work
with single-device/multiple-device GPU modules or CPU modules, but got device_ids [0], output_device None, and
module parameters {device(type='cpu')}.`` when ``device_ids`` is given for a module on the CPU (the usual
``DDP(model, device_ids=[rank])`` before ``model.to(rank)``; MV202 here). With ``device_ids`` its forward
moves the inputs to ``cuda:device_ids[0]`` (a module on another GPU then fails in its own layers); without,
the inputs reach the module as they are. The wrapper is a container layer named ``DistributedDataParallel``
whose ``dev`` is ``cuda:device_ids[0]`` (``cuda`` without an index: given but not known; ``None``: not given).
"""

from __future__ import annotations

import ast
from typing import Any

from runtime_shim import torch_semantics as T

from ..domain import TOP, DictAtom, SeqAtom, V, Value, map_elements
from ..engine.flow_state import Frame, State
from ..facts import Possibility
from ..torch_domain import LEAF, NON_LEAF, TorchDev, TorchDeviceAtom, TorchLayerAtom, TorchTensorAtom
from .signatures import bind_call
from .torch_worlds import CUDA_AVAILABLE

#: How the wrapper is spelled.
DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                           "torch.nn.parallel.data_parallel.DataParallel"})
NAME = "DataParallel"
DISTRIBUTED = frozenset({"torch.nn.parallel.DistributedDataParallel",
                         "torch.nn.parallel.distributed.DistributedDataParallel"})
DDP_NAME = "DistributedDataParallel"
#: the wrappers whose ``.module`` is the module they wrap, and whose own device stays when the module moves
WRAPPERS = frozenset({NAME, DDP_NAME})
_MAX_DEPTH = 4


def data_parallel(engine: Any, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                  fr: Frame) -> Value:
    """``nn.DataParallel(module, device_ids=None, output_device=None, dim=0)``."""
    bound = bind_call(path, args, kwargs)
    module = bound.get("module", TOP)
    if module.top or len(module.atoms) != 1:
        return TOP
    if engine.assumption(CUDA_AVAILABLE) is False:
        return module  # no CUDA: DataParallel runs its module as it is
    child = next(iter(module.atoms))
    ids = bound.get("device_ids")
    output = bound.get("output_device")
    first = _first_device(engine, ids, st)
    if first is not None and output is not None and output.consts() != [None] \
            and _index(engine, output, st) != first.index:
        first = None  # gathered elsewhere: not followed
    if first is not None and _single(ids) and isinstance(node, ast.Call) and node.args:
        # one device: ``__init__`` moves the module there, in place (``self.module.to(src_device_obj)``)
        move = ast.copy_location(ast.Call(func=ast.Attribute(value=node.args[0], attr="to", ctx=ast.Load()),
                                          args=[], keywords=[]), node)
        moved = engine.torch_module_method("to", module, [V(TorchDeviceAtom(first))], {}, move, st, fr)
        if moved.top or len(moved.atoms) != 1:
            return TOP
        child = next(iter(moved.atoms))
    origin = engine.origin(node, fr, "nn.DataParallel created")
    return V(TorchLayerAtom(NAME, first, False, (child,), origin))


def _single(ids: Value | None) -> bool:
    atom = next(iter(ids.atoms)) if ids is not None and len(ids.atoms) == 1 else None
    return isinstance(atom, SeqAtom) and atom.items is not None and len(atom.items) == 1


def _first_device(engine: Any, ids: Value | None, st: State) -> TorchDev | None:
    """``cuda:device_ids[0]`` (all devices by default: the first is 0); ``None``: not known."""
    if ids is None or ids.consts() == [None]:
        return TorchDev("cuda", 0)
    if ids.top or len(ids.atoms) != 1:
        return None
    atom = next(iter(ids.atoms))
    if not isinstance(atom, SeqAtom) or not atom.items:
        return None
    index = _index(engine, atom.items[0], st)
    return None if index < 0 else TorchDev("cuda", index)


def _index(engine: Any, value: Value, st: State) -> int:
    """A CUDA device given as an int, ``"cuda:1"`` or a ``torch.device`` (-1: not known)."""
    if value.only(TorchDeviceAtom):
        return int(engine._cuda_index(value, st))
    consts = value.consts()
    if consts and len(consts) == 1 and type(consts[0]) is int:
        return consts[0]
    if consts and len(consts) == 1 and isinstance(consts[0], str) and consts[0].startswith("cuda:") \
            and consts[0][5:].isdigit():
        return int(consts[0][5:])
    return -1


def data_parallel_call(engine: Any, layer: TorchLayerAtom, args: list[Value], kwargs: dict[str, Value],
                       node: ast.AST, st: State, fr: Frame) -> Value:
    """``wrapper(*inputs)``: the module's check, then one replica on ``device_ids[0]``, gathered there."""
    src = layer.dev
    child = layer.children[0]
    if src is None:
        return TOP
    weights = engine._weights(child)
    site = engine.site(node, "nn.DataParallel", fr)
    target = TorchDeviceAtom(src)
    possibilities = []
    for atom in sorted(weights.atoms, key=repr):
        if not isinstance(atom, TorchTensorAtom):
            continue
        code = None if atom.dev == src else "MV202"
        message = "" if code is None else T.data_parallel_message(src.shown, atom.dev.shown)
        possibilities.append(Possibility((("module weight", atom), ("device_ids[0]", target)), code, message,
                                         "torch.DataParallel"))
    if not possibilities:
        return TOP
    # one parameter known off ``device_ids[0]`` fails the check whatever the parameters not seen are
    failed = all(p.failed for p in possibilities)
    checked = engine.torch_record(site, possibilities, weights.top and not failed, TOP, st, fr)
    if st.dead or failed:
        return checked
    origin = engine.origin(node, fr, "scattered by nn.DataParallel")
    inputs = [copied_to(engine, value, src, origin, 0) for value in args]
    named = {key: copied_to(engine, value, src, origin, 0) for key, value in kwargs.items()}
    if isinstance(child, TorchLayerAtom):
        result = engine.torch_layer_call(child, inputs, named, node, st, fr)
    else:
        result = engine.call(V(child), inputs, named, node, st, fr)
    return copied_to(engine, result, src, engine.origin(node, fr, "gathered by nn.DataParallel"), 0)


def copied_to(engine: Any, value: Value, dev: TorchDev, origin: Any, depth: int) -> Value:
    """``value`` with its tensors copied to ``dev`` (a copy of a tensor in the graph is in the graph)."""
    if depth > _MAX_DEPTH:
        return TOP
    out = Value(frozenset(), value.top)
    for atom in value.atoms:
        if isinstance(atom, TorchTensorAtom):
            if atom.dev != dev:
                atom = atom.with_(dev=dev, grad=NON_LEAF if atom.grad == LEAF else atom.grad, owned=False,
                                  moved_from=None, origin=origin)
            out = out.join(V(atom))
        elif isinstance(atom, (SeqAtom, DictAtom)):
            out = out.join(V(map_elements(atom, lambda v: copied_to(engine, v, dev, origin, depth + 1))))
        else:
            out = out.join(V(atom))
    return out


# --- DistributedDataParallel ---------------------------------------------------------------------------------


def distributed_data_parallel(engine: Any, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                              st: State, fr: Frame) -> Value:
    """``DistributedDataParallel(module, device_ids=None, output_device=None, ...)``: the constructor's check of a
    CPU module given ``device_ids``, then the wrapper."""
    bound = bind_call(path, args, kwargs)
    module = bound.get("module", TOP)
    if module.top or len(module.atoms) != 1:
        return TOP
    child = next(iter(module.atoms))
    ids = bound.get("device_ids")
    given = _given_ids(ids)
    if given is None:
        return TOP  # device_ids that may or may not be given: not followed
    dev: TorchDev | None = None
    if given:
        weights = engine._weights(child)
        site = engine.site(node, "DistributedDataParallel", fr)
        shown = _ids_text(ids)
        output = bound.get("output_device")
        output_text = "None" if output is None or output.consts() == [None] else "..."
        index = _index(engine, _first_id(ids), st) if ids is not None else -1
        dev = TorchDev("cuda", index if index >= 0 else None)
        named = (("device_ids[0]", TorchDeviceAtom(dev)),) if dev.index is not None else ()
        possibilities = []
        for atom in sorted(weights.atoms, key=repr):
            if not isinstance(atom, TorchTensorAtom):
                continue
            cpu = atom.dev.type == "cpu"
            message = T.ddp_device_ids_message(shown, output_text, "{device(type='cpu')}") if cpu else ""
            possibilities.append(Possibility((("module weight", atom), *named), "MV202" if cpu else None, message,
                                             "torch.DistributedDataParallel"))
        if possibilities:
            # a parameter on the CPU fails the check whatever the others are (alone, or beside GPU ones)
            failed = all(p.failed for p in possibilities)
            checked = engine.torch_record(site, possibilities, weights.top and not failed, TOP, st, fr)
            if st.dead or failed:
                return checked
    origin = engine.origin(node, fr, "DistributedDataParallel created")
    return V(TorchLayerAtom(DDP_NAME, dev, False, (child,), origin))


def _given_ids(ids: Value | None) -> bool | None:
    """Whether ``device_ids`` names devices (a non-empty list); ``None``: not known."""
    if ids is None or ids.consts() == [None]:
        return False
    if ids.top or len(ids.atoms) != 1:
        return None
    atom = next(iter(ids.atoms))
    if not isinstance(atom, SeqAtom):
        return None
    if atom.items is None:
        return None
    return bool(atom.items)


def _first_id(ids: Value) -> Value:
    atom = next(iter(ids.atoms))
    assert isinstance(atom, SeqAtom) and atom.items
    return atom.items[0]


def _ids_text(ids: Value | None) -> str:
    """``device_ids`` as PyTorch prints it in its message (``[0]``; ``[...]`` for an index not known)."""
    atom = next(iter(ids.atoms)) if ids is not None and len(ids.atoms) == 1 else None
    if not isinstance(atom, SeqAtom) or atom.items is None:
        return "[...]"
    texts = []
    for item in atom.items:
        consts = item.consts() if not item.top else None
        texts.append(repr(consts[0]) if consts and len(consts) == 1 and isinstance(consts[0], (int, str)) else "...")
    return f"[{', '.join(texts)}]"


def ddp_call(engine: Any, layer: TorchLayerAtom, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
             st: State, fr: Frame) -> Value:
    """``ddp(*inputs)``: with ``device_ids``, the inputs moved to ``cuda:device_ids[0]`` (unknown where the index is
    not known), then the module; without, the module with the inputs as they are."""
    child = layer.children[0]
    src = layer.dev
    if src is not None:
        origin = engine.origin(node, fr, "moved by DistributedDataParallel")
        if src.index is None:
            args = [unknown_tensors(v, 0) for v in args]
            kwargs = {key: unknown_tensors(v, 0) for key, v in kwargs.items()}
        else:
            args = [copied_to(engine, v, src, origin, 0) for v in args]
            kwargs = {key: copied_to(engine, v, src, origin, 0) for key, v in kwargs.items()}
    if isinstance(child, TorchLayerAtom):
        return engine.torch_layer_call(child, args, kwargs, node, st, fr)
    return engine.call(V(child), args, kwargs, node, st, fr)


def unknown_tensors(value: Value, depth: int) -> Value:
    """``value`` with its tensors' devices unknown (moved to a device the analysis does not know)."""
    if depth > _MAX_DEPTH:
        return TOP
    out = Value(frozenset(), value.top)
    for atom in value.atoms:
        if isinstance(atom, TorchTensorAtom):
            out = out.join(TOP)
        elif isinstance(atom, (SeqAtom, DictAtom)):
            out = out.join(V(map_elements(atom, lambda v: unknown_tensors(v, depth + 1))))
        else:
            out = out.join(V(atom))
    return out
