"""PyTorch and NumPy code: devices as values, tensors, layers, modules, optimizers, grad mode (MV201-MV208).

Every device question is decided by :mod:`runtime_shim.torch_semantics` (the
table the PyTorch observer classifies real failures with), over every
combination of the operands' possibilities, and recorded as a site fact like a
runtime_shim call. Three torch modes travel in the flow state as variables
(joined at merge points like any other): the grad mode (``torch.no_grad()``
blocks, ``set_grad_enabled``), the default device (``torch.set_default_device``,
``with torch.device(...)``) and the current CUDA device (what ``"cuda"`` and
``.cuda()`` mean: ``torch.cuda.set_device(i)`` at a module's top level, ``with
torch.cuda.device(i)``); a call passes them into its callee (they are part of
the calling context). A program that calls ``set_device`` inside a function
(where a caller would not see the change) leaves ``"cuda"`` unknown.

Modules: a ``torch.nn`` layer is a :class:`TorchLayerAtom` (its weights'
device); a project class derived from ``nn.Module`` is an instance whose
``__call__`` is ``forward``. ``module.to(d)`` moves in place: the analysis gives
the receiver a moved copy of the instance (its parameters, buffers and layers
on ``d``, sub-modules moved too) and rebinds the name, a strong update for the
usual ``model.to(device)``. Plain tensor attributes do not move.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from runtime_shim import torch_semantics as T

from .. import lazy_bodies
from ..choices import consistent, joined, tagged, tags_of, untagged, with_tags
from ..domain import (
    BOOL,
    BOTTOM,
    NONE,
    TOP,
    ArrayAtom,
    Atom,
    BoundShim,
    Const,
    DictAtom,
    FuncRef,
    Instance,
    NumberAtom,
    NumpyRef,
    Origin,
    SeqAtom,
    V,
    Value,
    broadcast_ndim,
    const,
    join_all,
    seq,
    seq_of,
)
from ..engine.flow_state import (
    Frame,
    ModeKey,
    Overlay,
    State,
    past_failure,
    rebind_call_receiver,
    stored,
    widen_if_large,
)
from ..engine.program import ClassInfo, FunctionInfo
from ..facts import Possibility, Site
from ..torch_domain import (
    AUTOGRAD_CONTEXT,
    AUTOGRAD_FUNCTION,
    CPU,
    DEVICE_TYPES,
    DISTRIBUTION_INIT,
    DISTRIBUTION_METHODS,
    DISTRIBUTION_STATE,
    LEAF,
    MODULE_TYPE,
    NO_GRAD,
    NON_LEAF,
    OPTIMIZER_METHODS,
    TorchDev,
    TorchDeviceAtom,
    TorchDistributionAtom,
    TorchGeneratorAtom,
    TorchLayerAtom,
    TorchModeAtom,
    TorchOptimizerAtom,
    TorchRef,
    TorchTensorAtom,
    derived_from,
)
from . import layer_dicts
from .base import UNHANDLED, Assumption, LibraryModel, Unhandled
from .entry_points import spawn_call
from .layer_items import ADDING_METHODS, replaced_item, run_as, with_part
from .layer_items import added as container_added
from .library_refs import LibraryRef, library_ref
from .move_memo import CopyRecord, KeptMove, MoveMemo
from .numpy_model import data_ndim, store_converts_array
from .optimizer_subclass import OPTIMIZER_INIT, OPTIMIZER_TYPE, PARAM_GROUPS, is_project_optimizer, optimizer_class
from .optimizer_subclass import param_groups as optimizer_param_groups
from .signatures import argument, bind_call
from .torch_api import (
    CHECKED_OPS,
    COMPARISONS,
    DEFAULT_FLOAT_DTYPES,
    DIM_KEYWORDS,
    DYNAMIC_REGISTRATION,
    FUNCTIONAL_LOSSES,
    GRAD_MODES,
    INDEXED_LOG_PROB,
    INTEGER_DTYPES,
    INTEGER_TENSOR_TYPES,
    LEAF_IDENTITIES,
    LEGACY_TENSOR_TYPES,
    MODULE_METHODS,
    MODULE_SELF_METHODS,
    NO_GRAD_RESULTS,
    NUMPY_DLPACK,
    NUMPY_NO_CONVERSION,
    RANK_KEEPING,
    REDUCTIONS,
    REGISTERING_CONTAINERS,
    SAME_DEVICE_OPS,
    TUPLE_OUTPUTS,
    VALUES_INDICES,
    VALUES_INDICES_FIELDS,
    VARIADIC_SEQUENCE_OPS,
    WEIGHTED_LOSSES,
    device_str,
)
from .torch_calls import torch_handlers
from .torch_data import WORKER_VAR, TorchData
from .torch_load import (
    MAPPING_ONLY,
    SAFETENSORS,
    TorchLoadedAtom,
    container_attribute,
    container_method,
    contents,
    load_call,
    moves_a_pickled_module,
    read_from_file,
)
from .torch_parallel import DDP_NAME, WRAPPERS, data_parallel, data_parallel_call, ddp_call, distributed_data_parallel
from .torch_parallel import NAME as DATA_PARALLEL_NAME
from .torch_worlds import CUDA_AVAILABLE, GPU_COUNT, MPS_AVAILABLE, TORCH_WORLDS
from .torchaudio_model import buffers_only
from .torchvision_model import HEADS, is_classifier, torchvision_call, with_head
from .torchvision_model import ROOT as TORCHVISION

#: flow-state modes. Grad mode: enabled where nothing disabled it (a branch that disables it leaves it on the other)
GRAD_VAR = ModeKey("torch.grad_enabled", V(const(True)))
#: the default device: the CPU where nothing set one (a branch that sets it leaves the CPU on the other)
DEVICE_VAR = ModeKey("torch.default_device", V(TorchDeviceAtom(CPU)))
CUDA_VAR = ModeKey("torch.cuda.current_device", V(const(0)))  # absent: cuda:0
MAX_COMBINATIONS = 64
_UNSET = object()
# the method an operator calls (``a * b`` is ``Tensor.__mul__``), by the name in diagnostics
_DUNDERS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
            ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul", ast.BitAnd: "and", ast.BitOr: "or",
            ast.BitXor: "xor", ast.LShift: "lshift", ast.RShift: "rshift"}
_HOOKS = "@forward_hooks"
#: a tensor's ``is_<type>`` flags and the device type each tests
_DEVICE_PREDICATES = {"is_cuda": "cuda", "is_cpu": "cpu", "is_mps": "mps", "is_xpu": "xpu"}
_MOVED = "@moved_in_place"  # (a layer's origin or a module instance, _MOVED) -> the devices ``.to()`` sent it to
_MOVED_VIA = "@moved_via"  # ... -> "scope:name" of the references the moves went through
_GRAD_FLAG = "@requires_grad"  # (a layer's or parameter's origin, _GRAD_FLAG) -> the flags ``requires_grad_`` set


def _is_module_class(cls: ClassInfo) -> bool:
    return cls.has_library_base(MODULE_TYPE)


def _note(attr: str) -> bool:
    """A note the model keeps on an object (``@...``), not one of its attributes."""
    return attr.startswith("@")


def _move_note(attr: str) -> bool:
    """The notes of an in-place move (the devices, the names it went through): not copied with the module."""
    return attr in (_MOVED, _MOVED_VIA)


#: the torch modes of a function nothing calls (grad mode, default device, current CUDA device): any default
#: device, any current device (``"cuda"`` is then unknown where the program changes it)
UNCALLED_MODES = (None, TOP, TOP, None)
AUTOGRAD_TYPE = "torch.autograd.Function"
DISTRIBUTION_PREFIX = "torch.distributions."  # + a class name: a ``torch.distributions`` base
_TORCH_ALIASES = {"torch.nn.modules": "torch.nn", "torch.nn.parameter": "torch.nn",
                  "torch.optim.optimizer": "torch.optim"}


def torch_path(path: str) -> str:
    """``torch.nn.modules.linear.Linear`` is ``torch.nn.Linear``: the path the model knows a name by."""
    for prefix, short in _TORCH_ALIASES.items():
        if path.startswith(prefix + "."):
            rest = path[len(prefix) + 1:].rpartition(".")[2]
            return f"{short}.{rest}"
    return path


def _written_bare(dev: TorchDev, written: object) -> bool:
    """Is ``torch.device(written)`` a device without an index (``"cuda"``, or a copy of such a device)?"""
    if isinstance(written, TorchDeviceAtom):
        return written.bare
    text = written.value if isinstance(written, Const) else None
    return isinstance(text, str) and ":" not in text and dev.type not in ("cpu", "meta")


def torch_tensors(value: Value) -> list[TorchTensorAtom]:
    return [a for a in value.atoms if isinstance(a, TorchTensorAtom)]


def has_torch(*values: Value) -> bool:
    return any(isinstance(a, (TorchTensorAtom, TorchLayerAtom)) for v in values for a in v.atoms)


class TorchModel(TorchData, LibraryModel):
    """PyTorch calls, attributes, operators and modes."""

    name = "torch"
    world_axes = (TORCH_WORLDS,)

    def __init__(self, engine: Any) -> None:
        super().__init__(engine)
        self.module_code_depth = 0  # project nn.Module forwards in progress (their weights: MV202)
        self._module_code: list[bool] = []  # per call in progress: is it such a method
        self.loaded_module_move: ast.AST | None = None  # ``model.to(d)`` of what a load gave: maybe a module's

    # --- the engine's hooks (:class:`.base.LibraryModel`) ----------------------------------------------

    def import_ref(self, path: str) -> Value | None:
        if path.partition(".")[0] == TORCHVISION:
            return library_ref(path, frozenset({TORCHVISION}))  # its classifiers and box ops: :meth:`call_value`
        if path.partition(".")[0] == SAFETENSORS:
            return V(TorchRef(path))  # ``safetensors.torch.load_file``: :mod:`.torch_load`
        return V(TorchRef(torch_path(path))) if path == "torch" or path.startswith("torch.") else None

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                   st: State, fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if isinstance(atom, TorchRef):
            if star_unknown:
                return TOP
            result = self.torch_call(atom.path, args, kwargs, node, st, fr)
            if WORKER_VAR in st.modes:
                return self.worker_made_cuda(atom.path, result, [*args, *kwargs.values()], node, st, fr)
            return result
        if isinstance(atom, LibraryRef) and atom.path.startswith(TORCHVISION + "."):
            vision = None if star_unknown or node is None else torchvision_call(self, atom, args, kwargs, node, st, fr)
            return UNHANDLED if vision is None else vision
        if isinstance(atom, TorchLayerAtom):
            if star_unknown or node is None:
                return TOP
            if self.moved_elsewhere(atom, getattr(node, "func", None), fr):
                moved = self.moved_reference(atom, st) if _kept_reference(getattr(node, "func", None)) else None
                return TOP if not isinstance(moved, TorchLayerAtom) \
                    else self.torch_layer_call(moved, args, kwargs, node, st, fr)
            return self.torch_layer_call(atom, args, kwargs, node, st, fr)
        if isinstance(atom, Instance) and self.moved_elsewhere(atom, getattr(node, "func", None), fr):
            # a module moved in place elsewhere, seen through an older reference: the moved one
            moved = self.moved_reference(atom, st) if _kept_reference(getattr(node, "func", None)) else None
            return TOP if moved is None or star_unknown else self.call(V(moved), args, kwargs, node, st, fr)
        if isinstance(atom, NumpyRef) and not star_unknown:  # numpy of tensors (``np.asarray(t)``)
            converted = self.torch_numpy_call(atom.path, args, kwargs, node, st, fr)
            return UNHANDLED if converted is None else converted
        return UNHANDLED

    def call_expression(self, node: ast.Call, func: Value, args: list[Value], kwargs: dict[str, Value],
                        star_unknown: bool, st: State, fr: Frame) -> Value | None:
        if moves_a_pickled_module(func):
            self.loaded_module_move = node
        if star_unknown and len(node.args) == 1 and isinstance(node.args[0], ast.Starred) and not node.keywords \
                and func == V(TorchRef("torch.nn.Sequential")):
            return self.torch_sequential_of(self.iter_element(self.eval(node.args[0].value, st.copy(), fr,
                                                                        quiet=True)), node, st, fr)
        return None

    def method_call(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                    node: ast.AST, st: State, fr: Frame) -> Value | Unhandled:
        if kind == "TorchTensorAtom":
            result = self.torch_tensor_method(name, receiver, args, kwargs, node, st, fr)
            if WORKER_VAR in st.modes and isinstance(result, Value):
                return self.worker_made_cuda(f"Tensor.{name}", result, [receiver, *args, *kwargs.values()], node,
                                             st, fr)
            return result
        if kind == "TorchGeneratorAtom":  # ``torch.Generator().manual_seed(0)`` is the generator
            return receiver if name == "manual_seed" else TOP
        if kind == "Instance" and name == DISTRIBUTION_INIT:
            return self.torch_distribution_init(receiver, args, kwargs, st, fr)
        if kind == "Instance" and name == OPTIMIZER_INIT:
            return self._project_optimizer_init(receiver, args, kwargs, fr)
        if kind in ("TorchLayerAtom", "Instance"):
            return self.torch_module_method(name, receiver, args, kwargs, node, st, fr)
        if kind == "TorchDistributionAtom":
            return self.torch_distribution_method(name, receiver, args, kwargs, node, st, fr)
        if kind == "TorchOptimizerAtom":
            return self.torch_optimizer_method(name, receiver, args, kwargs, node, st, fr)
        if kind == "TorchLoadedAtom":
            return join_all(container_method(a, name, args) for a in receiver.atoms if isinstance(a, TorchLoadedAtom))
        return UNHANDLED

    def builtin(self, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
        if name == "str" and len(args) == 1 and not kwargs and args[0].atoms and not args[0].top \
                and args[0].only(TorchDeviceAtom) \
                and not any(isinstance(a, TorchDeviceAtom) and _unknown_index(a) for a in args[0].atoms):
            return Value(frozenset(const(device_str(a.dev.type, a.dev.index, a.bare))  # type: ignore[attr-defined]
                                   for a in args[0].atoms))
        if name == "dict" and len(args) == 1 and not kwargs and not args[0].top:
            # ``state = dict(checkpoint)``: a copy of the checkpoint's mapping, its tensors where the load put them
            containers = frozenset(a for a in args[0].atoms if isinstance(a, TorchLoadedAtom))
            return Value(containers) if containers else None
        return None

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                       fr: Frame) -> Value | None | Unhandled:
        if isinstance(atom, TorchRef):
            return V(TorchRef(torch_path(f"{atom.path}.{attr}")))
        if isinstance(atom, TorchTensorAtom):  # (a mapping's methods: a checkpoint's other possibility answers)
            return Value() if attr in MAPPING_ONLY else self.torch_tensor_attribute(atom, attr)
        if isinstance(atom, TorchLayerAtom):
            return self.torch_layer_attribute(atom, attr)
        if isinstance(atom, TorchDistributionAtom):  # its methods; its attributes (``mean``, ``probs``): not followed
            return V(BoundShim(atom, attr)) if attr in DISTRIBUTION_METHODS else TOP
        if isinstance(atom, TorchGeneratorAtom):
            return V(TorchDeviceAtom(atom.dev, atom.origin)) if attr == "device" else V(BoundShim(atom, attr))
        if isinstance(atom, TorchOptimizerAtom):  # its methods; ``param_groups``, ``state``: not followed
            return V(BoundShim(atom, attr)) if attr in OPTIMIZER_METHODS else TOP
        if isinstance(atom, TorchDeviceAtom):
            return V(const(atom.dev.type)) if attr == "type" else _index_value(atom) if attr == "index" else None
        if isinstance(atom, TorchLoadedAtom):  # a checkpoint's container: its methods; other attributes
            found = container_attribute(atom, attr)
            return V(BoundShim(atom, attr)) if found is None else found
        if isinstance(atom, SeqAtom) and attr in VALUES_INDICES_FIELDS and atom.kind == "tuple" \
                and atom.items is not None and len(atom.items) == 2 \
                and all(item.atoms and item.only(TorchTensorAtom) for item in atom.items):
            # ``torch.topk(t, k).indices``: the named fields of ``(values, indices)`` (a plain tuple has none)
            return atom.items[VALUES_INDICES_FIELDS.index(attr)]
        return UNHANDLED

    def value_attribute(self, obj: Value, attr: str, node: ast.expr, st: State, fr: Frame) -> Value | None:
        if attr == "grad" and any(isinstance(a, TorchTensorAtom) for a in obj.atoms):
            return self.torch_grad_read(obj, node, st, fr)
        return None

    def instance_attribute(self, instance: Atom, attr: str, node: ast.expr | None, st: State,
                           fr: Frame) -> Value | None:
        if isinstance(instance, Instance) and instance.cls.has_library_base(MODULE_TYPE):
            return self.torch_module_attribute(instance, attr, node, st, fr)
        if isinstance(instance, Instance) and distribution_base(instance.cls):
            # ``super().__init__(loc, scale)``, ``super().log_prob(x)``: the library distribution's
            return self.torch_distribution_attribute(instance, attr)
        if isinstance(instance, Instance) and attr == "__init__" and is_project_optimizer(instance.cls):
            return V(BoundShim(instance, OPTIMIZER_INIT))  # ``super().__init__(params, defaults)``
        return None

    def _project_optimizer_init(self, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                                fr: Frame) -> Value:
        """A project optimizer's ``super().__init__(params, defaults)``: the groups it keeps on the instance."""
        params = args[0] if args else kwargs.get("params", TOP)
        defaults = args[1] if len(args) > 1 else kwargs.get("defaults")
        groups = optimizer_param_groups(params, defaults, self.iter_element)
        for atom in receiver.atoms:
            if isinstance(atom, Instance):
                self.store_attribute(V(atom), PARAM_GROUPS, groups, fr)
        return NONE

    def library_init(self, cls: ClassInfo, instance: Value, args: list[Value], kwargs: dict[str, Value],
                     st: State, fr: Frame) -> None:
        if distribution_base(cls) is not None:
            self.torch_distribution_init(instance, args, kwargs, st, fr)
        elif is_project_optimizer(cls):  # ``class Lookahead(torch.optim.SGD): ...`` with the library's constructor
            self._project_optimizer_init(instance, args, kwargs, fr)

    def storing_attribute(self, instance: Atom, value: Value, old: Value | None) -> Value:
        return self.torch_stored_attribute(instance, value, old)  # type: ignore[arg-type]

    def attribute_stored(self, target: ast.Attribute, obj: Value, value: Value, st: State, fr: Frame) -> None:
        if target.attr in ("requires_grad", "data"):
            self.torch_tensor_state_store(target, obj, value, st, fr)
        elif target.attr == "weight":
            self._layer_weight_replaced(target, obj, value, st, fr)
        if isinstance(target.value, ast.Name) and is_classifier(st.vars.get(target.value.id, TOP)):
            # ``model.conv1 = nn.Conv2d(1, ...)``, ``setattr(model, "fc", ...)``: a new layer of the classifier
            # (a new head replaces the old one: :meth:`assigned`)
            owner = st.vars[target.value.id]
            grown = with_head(owner, value) if target.attr in HEADS else self._classifier_with_part(owner, value)
            self._rebind_name(target.value.id, TOP if grown is None else grown, st)

    def _layer_weight_replaced(self, target: ast.Attribute, obj: Value, value: Value, st: State, fr: Frame) -> None:
        """``model.embedding.weight = nn.Parameter(vectors)``: a lookup table's only weight replaced, after the
        model moved or not: the layer is where the new weight is (the module holding it is updated)."""
        layers = [a for a in obj.atoms if isinstance(a, TorchLayerAtom) and a.name in _WEIGHT_ONLY_LAYERS]
        tensors = torch_tensors(value)
        if not layers or len(layers) != len(obj.atoms) or obj.top or not tensors or value.top:
            return
        if not value.only(TorchTensorAtom):
            return
        replaced = Value(frozenset(dataclasses.replace(layer, dev=t.dev) for layer in layers for t in tensors))
        holder = target.value
        if isinstance(holder, ast.Name) and holder.id in st.vars:
            st.vars[holder.id] = replaced  # ``emb.weight = ...``: the name holds the layer as it is now
        elif isinstance(holder, ast.Attribute):  # ``model.embedding.weight = ...``: the module's attribute
            owner = self.eval(holder.value, st, fr)
            if not owner.top and owner.atoms and all(isinstance(a, Instance) for a in owner.atoms):
                self.store_attribute(owner, holder.attr, replaced, fr)

    def binary(self, op: ast.AST, left: Value, right: Value, node: ast.AST, st: State, fr: Frame,
               compare: bool) -> Value | None:
        if not has_torch(left, right):
            return None
        if not compare and isinstance(op, ast.Add):
            joined = self._containers_joined(left, right)
            if joined is not None:
                return joined
        if not compare:
            return self.torch_binop(op, left, right, node, st, fr)  # type: ignore[arg-type]
        if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
            return None
        value = self.torch_binop(op, left, right, node, st, fr)  # type: ignore[arg-type]  # a bool tensor
        return Value(frozenset(a.with_(grad=NO_GRAD) if isinstance(a, TorchTensorAtom) else a
                               for a in value.atoms), value.top)

    def unary(self, op: ast.unaryop, operand: Value, node: ast.AST, st: State, fr: Frame) -> Value | None:
        if isinstance(op, (ast.USub, ast.Invert)) and torch_tensors(operand):
            return self.same_device_result(operand, node, st, fr, None)
        return None

    def item(self, atom: Atom, key: Value, node: ast.AST, st: State, fr: Frame) -> Value | None:
        if isinstance(atom, TorchTensorAtom) and read_from_file(atom, key):
            return Value()  # ``ckpt["epoch"]``: the file was a mapping, not that tensor
        if isinstance(atom, TorchTensorAtom):
            indexed = self.torch_index(atom, key, node, st, fr)
            if WORKER_VAR in st.modes and indexed is not None:  # (indexing computes on the tensor's device)
                return self.worker_made_cuda("Tensor.__getitem__", indexed, [V(atom), key], node, st, fr)
            return indexed
        if layer_dicts.is_collection(atom):  # ``self.heads[task]``, ``self.scales["a"]``
            assert isinstance(atom, TorchLayerAtom)
            return layer_dicts.lookup(atom, key, self._collection_values(atom))
        if isinstance(atom, TorchLayerAtom):  # ``blocks[0]`` of a Sequential or ModuleList
            keys = key.consts()
            if keys and all(type(k) is int and -len(atom.children) <= k < len(atom.children) for k in keys):
                return join_all(V(atom.children[k]) for k in keys)
            if _any_position(key) and atom.children:  # ``self.cells[i]`` for ``i`` in ``range(n)``: one of them
                return self.container_modules(atom)
            return TOP
        if isinstance(atom, TorchLoadedAtom):  # ``ckpt["model"]``: a tensor where the file was mapped, or more
            return contents(atom, key)
        return None

    def store_item(self, container: Value, key: Value, value: Value, target: ast.Subscript, st: State,
                   fr: Frame) -> None:
        for atom in container.atoms:
            if isinstance(atom, TorchTensorAtom):  # ``t[idx] = v``: the index is checked as for ``t[idx]``
                self.torch_index(atom, key, target, st, fr, op="__setitem__", values=value)
        arrays = frozenset(atom.ndim for atom in container.atoms if isinstance(atom, ArrayAtom))
        if arrays and store_converts_array(target.slice, arrays) \
                and any(isinstance(atom, TorchTensorAtom) for atom in value.atoms):
            self.torch_export("numpy", "numpy.ndarray.__setitem__", value, target, st, fr)
        holder = target.value
        if isinstance(holder, ast.Attribute) and isinstance(holder.value, ast.Name):
            self._layer_item_stored(holder.value.id, holder.attr, container, key, value, st, fr)
        if isinstance(holder, ast.Attribute) and self.__dict__.get("_item_move") is target:
            self._tensor_item_stored(holder, container, key, value, st, fr)

    def _tensor_item_stored(self, holder: ast.Attribute, container: Value, key: Value, value: Value, st: State,
                            fr: Frame) -> None:
        """``model.detect.grid[0] = model.detect.grid[0].to(device)``: a list of tensors an object keeps, its
        item at a known position moved; whoever reads the attribute sees the list as it is now (as after an
        in-place move), so a loop over the positions that moves each one leaves them all moved. (A store of
        anything else, a grid a ``forward`` remakes, stays a weak update.)"""
        keys = key.consts()
        if not keys or len(keys) != 1 or type(keys[0]) is not int or not value.atoms or value.top \
                or not value.only(TorchTensorAtom) or not container.atoms or container.top:
            return
        updated = []
        for atom in container.atoms:
            if not isinstance(atom, SeqAtom) or atom.kind != "list" or atom.items is None \
                    or not -len(atom.items) <= keys[0] < len(atom.items):
                return
            items = list(atom.items)
            items[keys[0]] = value
            updated.append(seq("list", items))
        owner = self.eval(holder.value, st.copy(), fr, quiet=True)
        if owner.atoms and not owner.top and all(isinstance(a, Instance) for a in owner.atoms):
            self.supersede_attribute(owner, holder.attr, container, Value(frozenset(updated)), fr)

    def _layer_item_stored(self, name: str, attr: str, container: Value, key: Value, value: Value, st: State,
                           fr: Frame) -> None:
        """``model.classifier[6] = nn.Linear(...)``: a torchvision classifier now holds that layer too (the
        engine keeps the torchvision model's own containers unknown); on a project module, the container the
        attribute held is superseded by the updated one (the object changed in place)."""
        owner = st.vars.get(name)
        if owner is None:
            return
        if is_classifier(owner):
            self._rebind_name(name, self._classifier_with_part(owner, value), st)
        elif owner.atoms and all(isinstance(a, Instance) for a in owner.atoms) and container.atoms \
                and all(isinstance(a, TorchLayerAtom) and (a.name in ADDING_METHODS or layer_dicts.is_collection(a))
                        for a in container.atoms):
            self.supersede_attribute(owner, attr, container, self.updated_item_value(container, key, value), fr)

    def updated_item_value(self, container: Value, key: Value, value: Value) -> Value:
        out = BOTTOM
        for atom in container.atoms:
            updated = self.updated_item(atom, key, value)
            if updated is None or updated.top:
                return TOP
            out = out.join(updated)
        return out

    def updated_item(self, atom: Atom, key: Value, value: Value) -> Value | None:
        if isinstance(atom, TorchLayerAtom) and layer_dicts.is_collection(atom):
            if atom.name == layer_dicts.PARAMETER_LIST:  # (a position: the parameter there replaced)
                stored = layer_dicts.with_entries(replace(atom, keys=()), [(None, value)])
                return TOP if stored is None else V(replace(stored, keys=atom.keys))
            stored = layer_dicts.with_entries(atom, [(layer_dicts.constant_key(key), value)])
            return TOP if stored is None else V(stored)
        if not isinstance(atom, TorchLayerAtom) or atom.name not in ADDING_METHODS:
            return None
        replaced = replaced_item(atom, key, value)
        return TOP if replaced is None else V(replaced)

    @staticmethod
    def _classifier_with_part(classifier: Value, part: Value) -> Value:
        out = BOTTOM
        for atom in classifier.atoms:
            assert isinstance(atom, TorchLayerAtom)  # (is_classifier)
            grown = with_part(atom, part)
            if grown is None:
                return TOP
            out = out.join(grown)
        return out

    @staticmethod
    def _rebind_name(name: str, value: Value, st: State) -> None:
        st.vars[name] = value
        st.kill_aliases(name)
        st.drop_overlays(name)

    def pure_attribute(self, atom: Atom, kind: str, name: str) -> Value | None:
        if isinstance(atom, TorchTensorAtom):
            if kind == "attr" and name in _DEVICE_PREDICATES:
                return V(const(atom.dev.type == _DEVICE_PREDICATES[name]))
            if kind == "attr" and name == "device":
                return V(TorchDeviceAtom(atom.dev, atom.origin, tensor=atom.provenance))
            if kind == "call" and name == "get_device":  # (the CPU's is -1)
                return V(const(-1)) if atom.dev.type == "cpu" else _index_value(atom)
            if kind == "attr" and name == "shape" and atom.ndim is not None:
                return V(seq("tuple", (TOP,) * atom.ndim))  # its sizes unknown, their number known
        if isinstance(atom, TorchDeviceAtom) and kind == "attr" and name in ("type", "index"):
            return V(const(atom.dev.type)) if name == "type" else _index_value(atom)
        return None

    def element(self, atom: Atom, how: str) -> Value | None:
        if isinstance(atom, TorchLoadedAtom):  # a list's slice, else an element (or a key: not a tensor)
            return V(atom) if how == "slice" else contents(atom)
        if isinstance(atom, TorchTensorAtom) and how == "slice":
            return V(atom.with_(zero_dim=False, owned=False))  # a view: same device, same graph, a dimension
        if isinstance(atom, TorchTensorAtom):
            return V(atom.row())  # a row: same device, same graph
        if how == "iterate" and layer_dicts.is_collection(atom):  # a dict's keys, a ParameterList's parameters
            assert isinstance(atom, TorchLayerAtom)
            return layer_dicts.key_values(atom) if atom.name in layer_dicts.KEYED else self._collection_values(atom)
        if how == "iterate" and isinstance(atom, TorchLayerAtom) and atom.name in ("ModuleList", "Sequential") \
                and atom.children:
            return self.container_modules(atom)  # ``for block in self.blocks``: its modules
        return None

    def enter_with(self, value: Value, st: State) -> Any:
        return self.torch_mode_enter(value, st)

    def exit_with(self, saved: Any, st: State) -> None:
        self.torch_mode_exit(saved, st)

    def choose_branch(self, true: State, false: State) -> bool | None:
        return self.world_branch(true, false)

    def decides_values(self) -> bool:
        return self.assumption(CUDA_AVAILABLE) is not None

    def choose_value(self, body: Value, orelse: Value) -> bool | None:
        return self.world_device_choice(body, orelse)

    def assignment(self, node: ast.Assign, st: State, fr: Frame) -> Value | None:
        owner = _head_owner(node.targets[0], st) if len(node.targets) == 1 else None
        return owner if owner is not None else self.self_move(node, st, fr)

    def assigned(self, target: ast.expr, before: Value, after: Value, st: State, fr: Frame) -> None:
        owner = _head_owner(target, st)
        if owner is not None and isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            # ``model.fc = nn.Linear(...)`` on a torchvision classifier: the model now ends in that layer
            replaced = with_head(owner, after)
            st.vars[target.value.id] = replaced if replaced is not None else TOP
            st.kill_aliases(target.value.id)
            st.drop_overlays(target.value.id)
            return
        self.supersede_moved_attribute(target, before, after, st, fr)  # type: ignore[arg-type]

    def context_key(self, st: State | None, uncalled: bool) -> Any:
        return UNCALLED_MODES if uncalled else self.torch_modes(st)

    def enter_function(self, state: State, key: Any, fn: FunctionInfo) -> None:
        # ``@torch.no_grad()`` / ``@torch.inference_mode()``: the body runs with grad disabled
        no_grad = any(_decorator_name(d) in ("no_grad", "inference_mode")
                      for d in getattr(fn.node, "decorator_list", ()))
        self.enter_torch_modes(state, key, no_grad=no_grad)

    def enter_call(self, fn: FunctionInfo) -> None:
        # PyTorch's running module is one whose ``__call__`` is on the stack: its ``forward`` (and what that
        # calls); a method such as a metric's ``update`` called directly runs no module
        module_code = fn.name == "forward" and fn.cls is not None and fn.cls.has_library_base(MODULE_TYPE)
        self._module_code.append(module_code)  # (as it was on entry: the class's bases may change meanwhile)
        self.module_code_depth += module_code

    def exit_call(self, fn: FunctionInfo) -> None:
        self.module_code_depth -= self._module_code.pop()

    def class_base(self, value: Value) -> tuple[str, ...]:
        kinds: dict[str, None] = {}
        for atom in value.atoms:
            if isinstance(atom, TorchRef) and atom.path.startswith("torch.nn."):
                kinds[MODULE_TYPE] = None  # its ``__call__`` runs ``forward``, ``.to()`` moves it in place
            if isinstance(atom, TorchRef) and atom.path in AUTOGRAD_FUNCTION:
                kinds[AUTOGRAD_TYPE] = None  # ``Cls.apply(*args)`` is ``Cls.forward(ctx, *args)``
            if isinstance(atom, TorchRef) and optimizer_class(atom.path):
                kinds[OPTIMIZER_TYPE] = None  # its ``super().__init__(params, defaults)`` keeps ``param_groups``
        for atom in value.atoms:  # a ``torch.distributions`` class (its ``sample``, ``log_prob`` ...)
            if isinstance(atom, TorchRef) and atom.path.startswith("torch.distributions.") \
                    and atom.path.rpartition(".")[2][:1].isupper():
                kinds[DISTRIBUTION_PREFIX + atom.path.rpartition(".")[2]] = None
                break
        return tuple(kinds)

    def class_attribute(self, cls: ClassInfo, attr: str) -> Value | None:
        if attr != "apply" or not cls.has_library_base(AUTOGRAD_TYPE):
            return None
        # ``MyFunction.apply``: its ``forward`` staticmethod with autograd's context object bound first
        forward = self.class_lookup(cls, "forward")
        if forward is None:
            return None
        out = BOTTOM
        for item in forward.atoms:
            out = out.join(V(FuncRef(item.fn, item.closure, item.defaults, item.kw_defaults, AUTOGRAD_CONTEXT))
                           if isinstance(item, FuncRef) else TOP)
        return out.join(TOP) if forward.top else out

    # --- the two modes ---------------------------------------------------------------------------------

    @staticmethod
    def grad_modes(st: State | None) -> set[bool]:
        value = st.modes.get(GRAD_VAR) if st is not None else None
        if value is None:
            return {True}
        modes = {a.value for a in value.atoms if isinstance(a, Const) and isinstance(a.value, bool)}
        return {True, False} if value.top or not modes else modes

    @staticmethod
    def torch_modes(st: State | None) -> tuple[Value | None, Value | None, Value | None, Value | None]:
        """What a callee inherits (and what tells its calling contexts apart): the grad mode, the default device,
        the current CUDA device, and whether it runs in a forked DataLoader worker (:mod:`.torch_data`)."""
        if st is None:
            return (None, None, None, None)
        return (st.modes.get(GRAD_VAR), st.modes.get(DEVICE_VAR), st.modes.get(CUDA_VAR), st.modes.get(WORKER_VAR))

    @staticmethod
    def enter_torch_modes(state: State, modes: tuple[Value | None, ...], no_grad: bool = False) -> None:
        for name, value in zip((GRAD_VAR, DEVICE_VAR, CUDA_VAR, WORKER_VAR), modes, strict=False):
            if value is not None:
                state.modes[name] = value
        if no_grad:
            state.modes[GRAD_VAR] = V(const(False))

    def default_devices(self, st: State) -> list[tuple[TorchDev, object]] | None:
        value = st.modes.get(DEVICE_VAR)
        if value is None:
            return [(CPU, None)]
        devices = self.devices_of(value, st)
        return devices

    def torch_mode_enter(self, value: Value, st: State) -> dict[str, Value | None] | None:
        """``with torch.no_grad():`` / ``with torch.device("cuda"):``: set the mode, return what to restore."""
        modes = [a for a in value.atoms if isinstance(a, (TorchModeAtom, TorchDeviceAtom))]
        if not modes or value.top or len(modes) != len(value.atoms):
            return None
        saved: dict[str, Value | None] = {name: st.modes.get(name) for name in (GRAD_VAR, DEVICE_VAR, CUDA_VAR)}
        grads = {m.grad for m in modes if isinstance(m, TorchModeAtom) and m.grad is not None}
        if grads:
            st.modes[GRAD_VAR] = Value(frozenset(const(g) for g in grads))
        currents = {m.cuda for m in modes if isinstance(m, TorchModeAtom) and m.cuda is not None}
        if currents:
            st.modes[CUDA_VAR] = TOP if -1 in currents else Value(frozenset(const(i) for i in currents))
        devices = [m for m in modes if isinstance(m, TorchDeviceAtom)]
        if devices:
            st.modes[DEVICE_VAR] = Value(frozenset(devices))
        return saved

    @staticmethod
    def torch_mode_exit(saved: dict[str, Value | None], st: State) -> None:
        for name, value in saved.items():
            if value is None:
                st.modes.pop(name, None)
            else:
                st.modes[name] = value

    # --- devices as values -----------------------------------------------------------------------------

    def parse_device(self, text: str, st: State | None = None) -> TorchDev | None:
        kind, _, index = text.partition(":")
        if kind not in DEVICE_TYPES:
            return None
        if kind == "cpu":
            return CPU
        if index:
            return TorchDev(kind, int(index)) if index.isdigit() else None
        if kind == "cuda":
            # "cuda" is the current device: a GPU whose index may not be known (``set_device(local_rank)``)
            return TorchDev("cuda", self.current_cuda_index(st))
        return TorchDev(kind, 0) if kind != "meta" else TorchDev("meta")

    def current_cuda_index(self, st: State | None) -> int | None:
        """The current CUDA device's index (None: not known)."""
        changes = self.current_cuda_device_changes()
        if changes is None:
            return 0  # this program never changes it
        if changes or st is None:
            return None  # changed where a caller cannot see it, or asked where the flow state is not at hand
        value = st.modes.get(CUDA_VAR)
        if value is None:
            return 0
        indexes = value.consts()
        return indexes[0] if not value.top and indexes is not None and len(indexes) == 1 \
            and type(indexes[0]) is int else None

    def current_cuda_device_changes(self) -> bool | None:
        """Does this program change the current CUDA device: None (never), False (only where the flow state
        follows it: ``set_device`` at a module's top level, ``with torch.cuda.device(i)`` blocks), True (some
        ``set_device`` inside a function, or ``torch.cuda.device`` not as a ``with`` block)."""
        cached = getattr(self, "_cuda_current_changes", _UNSET)
        if cached is None or isinstance(cached, bool):
            return cached
        texts = [m for m in self.modules if m.source.mentions("set_device") or m.source.mentions("cuda.device(")]
        changes = None if not texts else any(_changes_current_device_unseen(m.source.tree) for m in texts)
        self._cuda_current_changes = changes
        return changes

    def devices_of(self, value: Value, st: State | None = None, tensors_too: bool = False,
                   call: ast.AST | None = None) -> list[tuple[TorchDev, object]] | None:
        """The devices a ``device`` argument names (``None``: some possibility is unknown). ``call``: the call
        given it, whose argument names a GPU index the analysis does not know (``.cuda(local_rank)``)."""
        if value.top or not value.atoms:
            return None
        out: list[tuple[TorchDev, object]] = []
        for atom in value.atoms:
            dev: TorchDev | None = None
            if isinstance(atom, TorchDeviceAtom):
                dev = atom.dev
            elif isinstance(atom, Const) and isinstance(atom.value, str):
                dev = self.parse_device(atom.value, st)
            elif isinstance(atom, Const) and type(atom.value) is int:
                dev = TorchDev("cuda", atom.value)
            elif isinstance(atom, NumberAtom) and atom.tname == "int":
                # an ordinal the analysis does not know (``.cuda(local_rank)``): still a GPU
                dev = TorchDev("cuda", None, index_name(device_expression(call)))
            elif tensors_too and isinstance(atom, TorchTensorAtom):
                dev = atom.dev
            if dev is None:
                return None
            out.append((dev, atom))
        return out

    def _device_argument(self, value: Value | None, st: State,
                         call: ast.AST | None = None) -> list[tuple[TorchDev, object]] | None:
        """The devices of a ``device`` argument (of ``call``), else the default device's."""
        if value is None or value.consts() == [None]:
            return self.default_devices(st)
        return self.devices_of(value, st, call=call)

    # --- recording --------------------------------------------------------------------------------------

    def torch_record(self, site: Site, possibilities: list[Possibility], unknown: bool, result: Value,
                     st: State, fr: Frame, raises: bool = True, intended: Value | None = None,
                     **operands: Value) -> Value:
        """Store the facts of one call and return its result. A call that raises on every path is reported and
        the path goes on with ``intended``, the result the user meant it to have (``result`` when that is not
        empty, else unknown), so the bugs after it are found in the same run."""
        if self.assumption(CUDA_AVAILABLE) is False and possibilities:
            # without CUDA no tensor is on a GPU: the move or creation that would have put one there raised, so
            # a combination with one is not reached (a program that calls ``.cuda()`` unconditionally)
            reached = [p for p in possibilities if not _on_cuda(p)]
            if not reached and not unknown:
                return widen_if_large(result)
            possibilities = reached
        fact = self.facts.site(site, fr.ctx)
        fact.record(possibilities, st.past_failure)
        if unknown and st.past_failure:
            fact.passed_past_failure = True  # (what a path no run takes makes unknown is no more than its passes)
        else:
            fact.unknown = fact.unknown or unknown
        for role, value in operands.items():
            fact.operands[role] = fact.operands[role].join(value) if role in fact.operands else value
        if raises and possibilities and not unknown and all(p.failed for p in possibilities):
            meant = intended if intended is not None and not intended.is_bottom else result
            return past_failure(TOP if meant.is_bottom else meant, st, self.catching)
        return widen_if_large(result.join(TOP) if unknown else result)

    # --- device checks over combinations -----------------------------------------------------------------

    def checked_op(self, api: str, operands: list[tuple[str, Value, bool, bool]], node: ast.AST, st: State,
                   fr: Frame, op: str = "", zero_dim: bool | None = None,
                   rank: Callable[[list[TorchTensorAtom]], int | None] | None = None) -> Value:
        """An op whose tensor operands must share a device. ``operands``: (role, value, is_index, owned).
        ``rank``: the result's number of dimensions from the combination's tensors, where the op decides it.

        Non-tensor possibilities (numbers, ``None``) take no part; unknown ones make the verdict partial."""
        roles: list[tuple[str, list[TorchTensorAtom], bool, bool]] = []
        unknown = False
        partial = False  # an operand that may be a tensor the combinations below leave out, or combinations not judged
        absent = False  # an operand known only as unknown (it may be a tensor on any device)
        for role, value, is_index, owned in operands:
            tensors = torch_tensors(value)
            vague = value.top or any(isinstance(a, (Instance, BoundShim)) for a in value.atoms)
            unknown = unknown or vague
            partial = partial or (vague and bool(tensors))
            absent = absent or (vague and not tensors)
            if tensors:
                roles.append((role, tensors, is_index, owned))
        if not roles:
            return TOP
        grads = self.grad_modes(st)
        possibilities: list[Possibility] = []
        results: set[Atom] = set()
        intended: set[Atom] = set()  # the failing combinations' results, as if they had succeeded
        combos = list(itertools.islice(itertools.product(*(tensors for _r, tensors, _i, _o in roles)),
                                       MAX_COMBINATIONS + 1))
        # operands of one undecided choice's two ways never meet (:mod:`analyzer.choices`)
        combos = [c for c in combos if consistent(*(tags_of(a) for a in c))] or combos
        for count, combo in enumerate(combos):
            if count >= MAX_COMBINATIONS:
                partial = True
                break
            if _index_undecided(combo):
                partial = True  # a GPU of unknown index beside a known one: the same device or not
                continue
            pairs = tuple((roles[i][0], atom) for i, atom in enumerate(combo))
            # a module's weight counts as one (MV202) where a module's code runs, as PyTorch's running module
            semantic = [T.Operand(atom.dev.text, 0 if atom.zero_dim else 1,
                                  (atom.owned and self.module_code_depth > 0) or roles[i][3], roles[i][2])
                        for i, atom in enumerate(combo)]
            code = T.mismatch_code(semantic, op)
            if any(atom.zero_dim is None and atom.dev == CPU for atom in combo) and len({a.dev for a in combo}) > 1 \
                    and T.scalar_exempt(op) and code != T.mismatch_code(
                        [o if o.device != "cpu" or combo[i].zero_dim is not None else dataclasses.replace(o, ndim=0)
                         for i, o in enumerate(semantic)], op):
                partial = True  # the scalar exemption (CPU 0-dim only) depends on a rank the analysis does not know
                continue
            data = [a for i, a in enumerate(combo) if not roles[i][2]] or list(combo)
            if code is not None:
                possibilities.append(Possibility(pairs, code, T.failure_message(_shown(semantic, combo), op),
                                                 f"torch.{op or api}"))
                # what the user meant: the accelerator's side of a CPU/accelerator mismatch (the CPU operand is
                # the one left behind: its later uses on the accelerator are not more findings of one cause),
                # else the first operand's device
                device = next((a.dev for a in data if a.dev != CPU), data[0].dev)
                target = intended
            else:
                possibilities.append(Possibility(pairs, None, "", f"torch.{op or api}"))
                if absent and all(a.dev == CPU and a.zero_dim is not False for a in data) and T.scalar_exempt(op):
                    continue  # a CPU scalar with an unknown operand: the result is where that operand is (unknown)
                if absent and st.past_failure:
                    continue  # an unknown operand past a failure may be what that failure left: so is the result
                device = next((a.dev for a in data if not (a.dev == CPU and a.zero_dim)), data[0].dev)
                target = results
            needs_grad = any(True in self.grad_flags(a) for a in combo) and op not in NO_GRAD_RESULTS \
                and op not in COMPARISONS
            dims = zero_dim if zero_dim is not None else (
                True if all(a.zero_dim for a in data) else None if any(a.zero_dim is None for a in data) else False)
            ndim = rank(list(combo)) if rank is not None else None
            if ndim is not None and zero_dim is None:
                dims = ndim == 0
            elif op == "matmul" and zero_dim is None:
                dims = None  # two vectors make a number: without both ranks, either may be
            tags = joined(tags_of(a) for a in combo)
            source = derived_from(data, device)
            if target is intended:
                # what a failing op was meant to give comes from the operand it left behind: a later failure over it
                # is the same bug as this one, where that operand came from (:mod:`rules.cascades`)
                left = {a.provenance for a in data if a.dev != device and not a.owned}
                source = left.pop() if len(left) == 1 else source
            for enabled in grads:
                target.add(TorchTensorAtom(device, NON_LEAF if needs_grad and enabled else NO_GRAD, dims,
                                           origin=self.origin(node, fr, f"{api} result", result=True), tags=tags,
                                           ndim=ndim, source=source))
        if unknown and not partial and possibilities and all(p.failed for p in possibilities):
            # every combination of the known tensors is on two devices: an operand the analysis knows nothing of
            # (a fill value from ``float("-inf")``, ``math.inf``) cannot bring them together
            unknown = False
        site = self.site(node, api, fr)
        return self.torch_record(site, possibilities, unknown or partial, Value(frozenset(results)), st, fr,
                                 intended=Value(frozenset(intended)))

    def same_device_result(self, receiver: Value, node: ast.AST, st: State, fr: Frame, zero_dim: bool | None,
                           detach: bool = False, api: str = "") -> Value:
        grads = self.grad_modes(st)
        out: set[Atom] = set()
        detach = detach or api in NO_GRAD_RESULTS  # an integer or boolean result: never in the graph
        for atom in torch_tensors(receiver):
            dims = atom.zero_dim if zero_dim is None and api != "reshape" else zero_dim
            ndim = atom.ndim if api in RANK_KEEPING else None
            tags = tags_of(atom)  # (made from one way of a choice: that way's, as the receiver's device)
            if detach or not atom.requires_grad:
                out.add(with_tags(TorchTensorAtom(atom.dev, NO_GRAD, dims, origin=atom.origin, ndim=ndim,
                                                  source=atom.source), tags))
                continue
            if atom.grad == LEAF and api in LEAF_IDENTITIES:
                out.add(atom)  # the tensor itself (created contiguous, in the default dtype): still a leaf
                continue
            for enabled in grads:
                out.add(with_tags(TorchTensorAtom(atom.dev, NON_LEAF if enabled else NO_GRAD, dims, origin=atom.origin,
                                                  ndim=ndim, source=atom.source), tags))
        return Value(frozenset(out), receiver.top or any(not isinstance(a, TorchTensorAtom) for a in receiver.atoms))

    # --- torch.* calls ---------------------------------------------------------------------------------

    def torch_call(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None, st: State,
                   fr: Frame) -> Value:
        """A call of a qualified torch name: the handlers of :data:`.torch_calls.TORCH_CALLS` whose rules match
        it, in order, until one answers."""
        if node is None:
            return TOP
        for handler in torch_handlers(path):
            found = getattr(self, handler)(path, args, kwargs, node, st, fr)
            if found is not None:
                return found
        return TOP

    # --- the call handlers (``(path, args, kwargs, node, st, fr)``; None: the next rule's) --------------------

    def _call_spawn(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                    fr: Frame) -> Value | None:
        return spawn_call(self, path, args, kwargs, node, st, fr)  # a process entry point: called with its args

    def _call_create(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                     fr: Frame) -> Value | None:
        return self._create(path.rpartition(".")[2], args, kwargs, node, st, fr)

    def _call_fft_frequencies(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                              st: State, fr: Frame) -> Value | None:
        # ``torch.fft.fftfreq(n, d)``: a 1-d tensor on ``device=``, else on the default device
        devices = self._device_argument(kwargs.get("device"), st, node)
        if devices is None:
            return TOP
        origin = self.origin(node, fr, f"created by {path}")
        return Value(frozenset(with_tags(TorchTensorAtom(dev, NO_GRAD, False, origin=origin, ndim=1), tags_of(source))
                               for dev, source in devices))

    def _call_fft(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                  fr: Frame) -> Value | None:
        # ``torch.fft.fft(x)``: on ``x``'s device, in its graph
        data = args[0] if args else kwargs.get("input")
        return TOP if data is None else self.same_device_result(data, node, st, fr, False)

    def _call_create_like(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                          fr: Frame) -> Value | None:
        return self._create_like(path, args, kwargs, node, st, fr)

    def _call_legacy_type(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                          fr: Frame) -> Value | None:
        # always a CPU tensor (not the default device)
        return V(TorchTensorAtom(CPU, NO_GRAD, False, origin=self.origin(node, fr, f"torch.{path.rpartition('.')[2]}")))

    def _call_cuda_legacy_type(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                               st: State, fr: Frame) -> Value | None:
        # on the current CUDA device (``torch.cuda.set_device(1)``, ``with torch.cuda.device(1):``)
        dev = None if "device" in kwargs else self.parse_device("cuda", st)
        return TOP if dev is None else V(TorchTensorAtom(dev, NO_GRAD, False, origin=self.origin(
            node, fr, f"torch.cuda.{path.rpartition('.')[2]}")))

    def _call_clip_grad_norm(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                             fr: Frame) -> Value | None:
        # the total norm: a 0-dim tensor outside the graph, where the parameters (their grads) are; unknown when
        # they are on several devices or not known
        bound = bind_call(path, args, kwargs).arguments
        given = bound.get("parameters", bound.get("tensors"))
        if given is None:
            return None
        tensors = given if given.only(TorchTensorAtom) else self.iter_element(given)
        devices = {a.dev for a in torch_tensors(tensors)}
        if tensors.top or len(devices) != 1 or not tensors.only(TorchTensorAtom):
            return None
        return V(TorchTensorAtom(devices.pop(), NO_GRAD, True, origin=self.origin(node, fr, "total norm")))

    def _call_autograd_grad(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                            fr: Frame) -> Value | None:
        # ``grad(outputs, inputs, grad_outputs)``, ``backward(tensors, grad_tensors)``: each given gradient on its
        # output's device (the result: not followed)
        bound = bind_call(path, args, kwargs).arguments
        outputs = bound.get("outputs", bound.get("tensors"))
        given = bound.get("grad_outputs", bound.get("grad_tensors"))
        if outputs is not None and given is not None:
            self.check_gradients(path.removeprefix("torch."), outputs, given, node, st, fr)
        return BOTTOM if st.dead else None

    def check_gradients(self, api: str, outputs: Value, gradients: Value, node: ast.AST, st: State,
                        fr: Frame) -> None:
        """Each gradient given for an output must be on that output's device (autograd's engine checks them
        pairwise, with no scalar exemption); a pair that is not known is not checked."""
        outs, grads = _one_or_items(outputs), _one_or_items(gradients)
        if outs is None or grads is None or len(outs) != len(grads):
            return
        for i, (output, gradient) in enumerate(zip(outs, grads, strict=True)):
            if st.dead:
                return
            if torch_tensors(output) and torch_tensors(gradient):
                self.checked_op(api if i == 0 else f"{api}[{i}]", [("output", output, False, False),
                                                                   ("gradient", gradient, False, False)],
                                node, st, fr, op="autograd.grad")

    def _call_variable(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                       fr: Frame) -> Value | None:
        return self._wrapped(path, args, kwargs, parameter=False)

    def _call_set_default_tensor_type(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                                      st: State, fr: Frame) -> Value | None:
        kind = _legacy_type_device(argument(path, args, kwargs, "t"))
        if kind == "cpu":
            st.modes.pop(DEVICE_VAR, None)
        else:
            dev = self.parse_device("cuda", st) if kind == "cuda" else None
            st.modes[DEVICE_VAR] = TOP if dev is None else V(TorchDeviceAtom(
                dev, self.origin(node, fr, "set_default_tensor_type")))
        return NONE

    def _call_from_dlpack(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                          fr: Frame) -> Value | None:
        if not (args and torch_tensors(args[0])):
            return None  # a capsule: a torch function like any other
        # a tensor (not a capsule) is exported through its ``__dlpack__``: refused while it requires grad
        self.torch_export("dlpack", path, args[0], node, st, fr)
        return BOTTOM if st.dead else self.same_device_result(args[0], node, st, fr, None, detach=True)

    def _call_from_numpy(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                         fr: Frame) -> Value | None:
        # it takes an ndarray (a numpy scalar raises): an array the numpy model made has a dimension, as
        # nearly all do (a 0-d ``np.array(x)`` is the exception, which the model does not make apart)
        # (``np.array(2.0)``, ``a.mean()``: a 0-d array, a 0-dim tensor, which the model makes apart)
        array = argument(path, args, kwargs, "ndarray", None)
        made = array.only(ArrayAtom) if array is not None else False
        ndims = {a.ndim for a in array.atoms} if made else {None}
        zero_dim = (True if ndims == {0} else None if 0 in ndims else False) if made else None
        return V(TorchTensorAtom(CPU, NO_GRAD, zero_dim, ndim=ndims.pop() if len(ndims) == 1 else None,
                                 origin=self.origin(node, fr, "from numpy")))

    def _call_pad_sequence(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                           st: State, fr: Frame) -> Value | None:
        # the sequences are padded and stacked: all on one device, the batch where they are
        sequences = argument(path, args, kwargs, "sequences", None)
        return None if sequences is None else self._sequence_op("stack", sequences, node, st, fr)

    def _call_tensor_class(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                           st: State, fr: Frame) -> Value | None:
        # ``torch.Tensor(data)``: the legacy constructor, a float tensor of the default tensor type (a CPU one
        # unless a default device or tensor type was set, then unknown here); never 0-dim
        if st.modes.get(DEVICE_VAR) is not None or not args or kwargs:
            return TOP
        return V(TorchTensorAtom(CPU, NO_GRAD, False, origin=self.origin(node, fr, "torch.Tensor")))

    def _call_sparse_coo(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                         fr: Frame) -> Value | None:
        # on ``device=`` when given, else where its values are (PyTorch infers it from indices and values)
        if "device" in kwargs:
            devices = self._device_argument(kwargs["device"], st, node)
            return TOP if devices is None else Value(frozenset(
                TorchTensorAtom(dev, NO_GRAD, False, origin=self.origin(node, fr, f"created on {dev.shown} by {path}"))
                for dev, _source in devices))
        values = argument(path, args, kwargs, "values", None)
        return TOP if values is None else self.same_device_result(values, node, st, fr, False, detach=True)

    def _call_load(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                   fr: Frame) -> Value | None:
        return load_call(self, path, args, kwargs, node, st, fr)  # a checkpoint: where ``map_location`` says

    def _call_device(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                     fr: Frame) -> Value | None:
        return self._device_ctor(path, args, kwargs, node, st, fr)

    def _call_generator(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                        fr: Frame) -> Value | None:
        return self.torch_generator(path, args, kwargs, node, st, fr)

    def _call_data(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                   fr: Frame) -> Value | None:
        return self.torch_data_call(path, args, kwargs, node, st, fr)

    def _call_current_device(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                             st: State, fr: Frame) -> Value | None:
        current = self.current_cuda_index(st)
        return TOP if current is None else V(const(current))

    def _call_set_device(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                         fr: Frame) -> Value | None:
        index = self._cuda_index(argument(path, args, kwargs, "device"), st)
        if path == "torch.cuda.device":
            return V(TorchModeAtom(cuda=index))  # a ``with`` block's current device
        st.modes[CUDA_VAR] = TOP if index < 0 else V(const(index))
        return NONE

    def _call_is_available(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                           fr: Frame) -> Value | None:
        return self._world_answer(CUDA_AVAILABLE)

    def _call_device_count(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                           fr: Frame) -> Value | None:
        return self._world_answer(GPU_COUNT)  # (not known outside a world)

    def _call_mps_available(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                            st: State, fr: Frame) -> Value | None:
        return self._world_answer(MPS_AVAILABLE)

    def _world_answer(self, question: Assumption[Any]) -> Value | None:
        """The answer of the world analysed (:mod:`.torch_worlds`); None: either (a bool, an int)."""
        answer = self.assumption(question)
        return None if answer is None else V(const(answer))

    def _call_unknown_bool(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                           fr: Frame) -> Value | None:
        return BOOL

    def _call_pack_padded(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                          fr: Frame) -> Value | None:
        """``pack_padded_sequence(input, lengths)``: the lengths must be on the CPU (MV212); a list is made a CPU
        tensor. The packed sequence itself is not followed (unknown)."""
        lengths = argument(path, args, kwargs, "lengths")
        tensors = torch_tensors(lengths)
        if not tensors:
            return TOP
        possibilities = []
        for atom in tensors:
            code, message = T.lengths_outcome(atom.dev.shown) or (None, "")
            possibilities.append(Possibility((("lengths", atom),), code, message, "torch.pack_padded_sequence"))
        unknown = lengths.top or len(tensors) != len(lengths.atoms)
        return self.torch_record(self.site(node, "pack_padded_sequence", fr), possibilities, unknown, TOP, st, fr)

    def _call_compiled(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                       fr: Frame) -> Value | None:
        """``torch.compile(model)`` / ``torch.jit.script(model)``: a wrapper that runs the module's (or the
        function's) own code on its own weights, and moves with it: for devices, the module itself. Called with
        no module (``torch.compile(mode=...)``, a decorator factory): unknown."""
        module = argument(path, args, kwargs, "model" if path == "torch.compile" else "obj", None)
        return TOP if module is None or module.consts() == [None] else module

    def _call_grad_mode(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                        fr: Frame) -> Value | None:
        if args and isinstance(args[0].atoms and next(iter(args[0].atoms)), FuncRef):
            return args[0]  # ``torch.no_grad()(fn)``: the function (its calls are analysed as usual)
        return V(TorchModeAtom(grad=GRAD_MODES[path.rpartition(".")[2]]))

    def _call_set_grad_enabled(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                               st: State, fr: Frame) -> Value | None:
        flag = argument(path, args, kwargs, "mode")
        truth = flag.truthiness()
        grads = {t for t in truth if t is not None}
        value = BOOL if None in truth or not grads else Value(frozenset(const(g) for g in grads))
        st.modes[GRAD_VAR] = value
        return V(TorchModeAtom(grad=next(iter(grads)) if len(grads) == 1 and None not in truth else None))

    def _call_set_default_device(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                                 st: State, fr: Frame) -> Value | None:
        value = argument(path, args, kwargs, "device")
        if value.consts() == [None]:
            st.modes.pop(DEVICE_VAR, None)
        else:
            devices = self.devices_of(value, st)
            st.modes[DEVICE_VAR] = TOP if devices is None else Value(frozenset(
                TorchDeviceAtom(d, self.origin(node, fr, "set_default_device")) for d, _a in devices))
        return NONE

    def _call_from_pretrained(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                              st: State, fr: Frame) -> Value | None:
        # the layer's weight is a Parameter of the given tensor: on its device
        module = path.rpartition(".")[0]
        bound = bind_call("torch.nn.Embedding.from_pretrained", args, kwargs)
        table = bound.get("embeddings", TOP)
        tensors = torch_tensors(table)
        origin = self.origin(node, fr, f"nn.{module.rpartition('.')[2]}.from_pretrained")
        # the weight requires grad unless frozen, and ``freeze=True`` is the default
        freeze = bound.get("freeze", V(const(True))).truthiness()
        self._note_flag(origin, Value(frozenset(const(not t) for t in freeze if t is not None), None in freeze))
        if table.top or not tensors or not table.only(TorchTensorAtom):
            return V(TorchLayerAtom(module.rpartition(".")[2], None, True, (), origin))
        return Value(frozenset(TorchLayerAtom(module.rpartition(".")[2], a.dev, True, (), origin)
                               for a in tensors))

    def _call_data_parallel(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                            st: State, fr: Frame) -> Value | None:
        return data_parallel(self, path, args, kwargs, node, st, fr)

    def _call_distributed_data_parallel(self, path: str, args: list[Value], kwargs: dict[str, Value],
                                        node: ast.AST, st: State, fr: Frame) -> Value | None:
        return distributed_data_parallel(self, path, args, kwargs, node, st, fr)

    def _call_parameter(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                        fr: Frame) -> Value | None:
        return self._wrapped(path, args, kwargs, parameter=True)

    def _call_layer(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                    fr: Frame) -> Value | None:
        return self._layer(path.rpartition(".")[2], args, kwargs, node, st, fr)

    def _call_kl_divergence(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                            st: State, fr: Frame) -> Value | None:
        if len(args) + len(kwargs) != 2:
            return None
        bound = bind_call(path, args, kwargs)
        return self.torch_kl_divergence(bound.get("p", TOP), bound.get("q", TOP), node, st, fr)

    def _call_distribution(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                           fr: Frame) -> Value | None:
        return self._distribution(path.rpartition(".")[2], args, kwargs, st)

    def _call_optimizer(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                        fr: Frame) -> Value | None:
        return self._optimizer(path.rpartition(".")[2], args, kwargs, node, st, fr)

    def _call_unchecked_view(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                             st: State, fr: Frame) -> Value | None:
        return V(seq("tuple", tuple(Value(frozenset(a.with_(zero_dim=None, owned=False)
                                                    if isinstance(a, TorchTensorAtom) else a for a in arg.atoms),
                                          arg.top) for arg in args)))

    def _call_sequence_op(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                          fr: Frame) -> Value | None:
        name = path.rpartition(".")[2]
        if name in VARIADIC_SEQUENCE_OPS and (len(args) != 1 or torch_tensors(args[0])):
            # ``torch.meshgrid(xs, ys)``: the tensors are the arguments; one result per tensor
            result = self._sequence_op(name, V(seq("tuple", tuple(args))), node, st, fr)
            return V(seq("tuple", (result,) * len(args))) if name == "meshgrid" \
                and not st.dead else result
        bound = bind_call(path, args, kwargs)  # (the variadic ones given one sequence: ``torch.meshgrid([x, y])``)
        tensors = bound.get("tensors", bound.rest[0] if bound.rest else bound.extra.get("tensors", TOP))
        return self._sequence_op(name, tensors, node, st, fr)

    def _call_function_op(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                          fr: Frame) -> Value | None:
        module, _, name = path.rpartition(".")
        return self._function_op(name, path, args, kwargs, node, st, fr, module)

    def _create(self, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                fr: Frame) -> Value:
        devices = self._device_argument(argument(f"torch.{name}", args, kwargs, "device", None), st, node)
        if devices is None:
            return TOP
        zero_dim: bool | None = False
        if name in ("tensor", "as_tensor", "scalar_tensor"):
            data = argument(f"torch.{name}", args, kwargs, "data")
            if name == "scalar_tensor" or data.only(Const, NumberAtom):
                zero_dim = True
            elif data.only(ArrayAtom) and not data.top:
                ndims = {a.ndim for a in data.atoms}
                zero_dim = True if ndims == {0} else None if None in ndims or 0 in ndims else False
            elif not data.only(SeqAtom):
                zero_dim = None
                if data.only(TorchTensorAtom) and name == "as_tensor":
                    return data  # as_tensor of a tensor: the same tensor (or a copy on ``device=``)
        elif name in ("zeros", "ones", "empty", "full", "rand", "randn") and args and args[0].only(SeqAtom):
            zero_dim = all(a.items == () for a in args[0].atoms)  # type: ignore[attr-defined]
        ndim = _created_ndim(name, args, kwargs)
        grad_flags = self._requires_grad_flags(kwargs)
        out = set()
        for dev, source in devices:
            for flag in grad_flags:  # (on a tagged device: that device's way of its choices)
                made = TorchTensorAtom(dev, LEAF if flag else NO_GRAD, zero_dim, ndim=ndim,
                                       origin=self.origin(node, fr, f"created on {dev.shown} by torch.{name}"),
                                       source=getattr(source, "tensor", None))
                out.add(with_tags(made, tags_of(source)))
        result = Value(frozenset(out)) if out else TOP
        generator = kwargs.get("generator")
        if generator is not None and out and not st.dead:
            return self._check_generator(f"torch.{name}", result, generator, node, st, fr)
        return result

    def _check_generator(self, api: str, made: Value, generator: Value, node: ast.AST, st: State,
                         fr: Frame) -> Value:
        """A random op drawing ``made`` with ``generator=``: the generator must be of the output's device type
        (MV211, ATen's ``check_generator``: ``torch.randn(n, device="cuda", generator=torch.Generator())``)."""
        if generator.consts() == [None]:
            return made
        generators = [a for a in generator.atoms if isinstance(a, TorchGeneratorAtom)]
        possibilities = []
        for atom in torch_tensors(made):
            for g in generators:
                if not consistent(tags_of(atom), tags_of(g)):
                    continue  # (made on one way of a choice, the generator on the other)
                code, message = T.generator_outcome(atom.dev.type, g.dev.type) or (None, "")
                possibilities.append(Possibility((("output", atom), ("generator", g)), code, message,
                                                 "torch.random_op"))
        if not possibilities:
            return made
        unknown = generator.top or len(generators) != len(generator.atoms)
        return self.torch_record(self.site(node, api, fr), possibilities, unknown, made, st, fr)

    @staticmethod
    def _requires_grad_flags(kwargs: dict[str, Value]) -> set[bool]:
        """The flags ``requires_grad=`` may be (empty: unknown; a flag from a variable is usually tied to
        other branches, ``requires_grad=training`` ... ``if not training:``, which the analysis does not relate)."""
        flag = kwargs.get("requires_grad")
        if flag is None:
            return {False}
        truth = flag.truthiness()
        return set() if None in truth else {bool(t) for t in truth}

    def _create_like(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                     fr: Frame) -> Value:
        bound = bind_call(path, args, kwargs)
        source = bound.get("input", TOP)
        if "device" in bound:
            devices = self.devices_of(bound.arguments["device"], st, call=node)
        else:
            devices = self.devices_of(source, st, tensors_too=True) if source.only(TorchTensorAtom) else None
        if devices is None:
            return TOP
        out = set()
        for dev, atom in devices:
            for flag in self._requires_grad_flags(kwargs):
                zero = atom.zero_dim if isinstance(atom, TorchTensorAtom) else None
                # on the input's device: derived from it, as a view of it would be
                like = atom.provenance if isinstance(atom, TorchTensorAtom) and "device" not in bound else None
                out.add(TorchTensorAtom(dev, LEAF if flag else NO_GRAD, zero,
                                        origin=self.origin(node, fr, f"created on {dev.shown}"), source=like))
        return Value(frozenset(out)) if out else TOP

    def _cuda_index(self, value: Value, st: State) -> int:
        """The CUDA device ``set_device`` / ``torch.cuda.device`` names: an index, ``"cuda:1"``, a
        ``torch.device`` (-1: not known, or several)."""
        devices = self.devices_of(value, st)
        indexes = {dev.index for dev, _a in devices or () if dev.type == "cuda"}
        if devices is None or len(indexes) != 1 or len(devices) != len(value.atoms):
            return -1
        index = indexes.pop()
        return index if isinstance(index, int) else -1

    def _device_ctor(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                     fr: Frame) -> Value:
        value = argument(path, args, kwargs, "type")
        if len(args) == 2:  # ``torch.device("cuda", 1)``
            kinds, indexes = args[0].consts(), args[1].consts()
            if kinds and indexes and len(kinds) == len(indexes) == 1 and type(indexes[0]) is int:
                value = V(const(f"{kinds[0]}:{indexes[0]}"))
            elif kinds == ["cuda"] and args[1].atoms and not args[1].top \
                    and all(isinstance(a, NumberAtom) and a.tname == "int" for a in args[1].atoms):
                index = node.args[1] if isinstance(node, ast.Call) and len(node.args) == 2 else None
                return V(TorchDeviceAtom(TorchDev("cuda", None, index_name(index)),
                                         self.origin(node, fr, "torch.device('cuda', <index>)")))
            else:
                return TOP
        devices = self.devices_of(value, st, call=node)
        if devices is None:
            return TOP
        made = [TorchDeviceAtom(dev, bare=_written_bare(dev, atom)) for dev, atom in devices]
        return Value(frozenset(dataclasses.replace(device, origin=self.origin(node, fr, device.reveal()))
                               for device in made))

    @staticmethod
    def _wrapped(path: str, args: list[Value], kwargs: dict[str, Value], *, parameter: bool) -> Value:
        """``nn.Parameter(t)``: a leaf the module owns (no grad with ``requires_grad=False``); ``Variable(t)``
        (the pre-0.4 wrapper): ``t`` itself, a requires-grad leaf with ``requires_grad=True``."""
        bound = bind_call(path, args, kwargs)
        data = bound.get("data", TOP)
        flag = bound.get("requires_grad", V(const(parameter)))
        truth = flag.truthiness()
        out: set[Atom] = set()
        for atom in torch_tensors(data):
            for grad in truth:
                out.add(atom if grad is False and not parameter else atom.with_(
                    grad=NO_GRAD if grad is False else LEAF, owned=parameter or atom.owned, moved_from=None))
        return Value(frozenset(out), data.top or None in truth or not data.only(TorchTensorAtom))

    # --- numpy / DLPack / optimizers / .grad --------------------------------------------------------------

    def torch_export(self, kind: str, api: str, tensor: Value, node: ast.AST, st: State, fr: Frame,
                     result: Value = TOP, role: str = "tensor") -> Value:
        """``t.numpy()``, ``np.asarray(t)`` (kind "numpy") or ``t.__dlpack__()`` (kind "dlpack"); ``role``
        "element" for a tensor inside a list or tuple given to numpy."""
        possibilities = self._export_possibilities(kind, tensor, st, role)
        if not possibilities:
            return TOP
        unknown = tensor.top or not tensor.only(TorchTensorAtom)
        return self.torch_record(self.site(node, api, fr), possibilities, unknown, result, st, fr,
                                 raises=True, **{role: tensor})  # (raises given: the role names an operand)

    def _export_possibilities(self, kind: str, tensor: Value, st: State, role: str = "tensor") -> list[Possibility]:
        possibilities = []
        for atom in torch_tensors(tensor):
            for requires_grad in sorted(self.grad_flags(atom)):
                for enabled in sorted(self.grad_modes(st)) if kind == "numpy" else [True]:
                    outcome = T.numpy_outcome(atom.dev.shown, requires_grad, enabled) if kind == "numpy" \
                        else T.dlpack_outcome(requires_grad)
                    code, message = outcome if outcome is not None else (None, "")
                    possibilities.append(Possibility(((role, atom),), code, message, f"torch.{kind}"))
        return possibilities

    @staticmethod
    def torch_stored_attribute(instance: Instance, value: Value, old: Value | None) -> Value:
        """``module.name = t`` where ``name`` is a registered buffer: ``nn.Module.__setattr__`` keeps ``t`` as
        that buffer (it moves with the module, and belongs to it in MV202). Parameters kept in a plain dict,
        list or tuple are not registered: not the module's (PyTorch does not count them among its parameters)."""
        if instance.cls.has_library_base(MODULE_TYPE) and any(isinstance(a, (DictAtom, SeqAtom)) for a in value.atoms):
            value = Value(frozenset(_unregistered(a) for a in value.atoms), value.top)
        if old is None or not instance.cls.has_library_base(MODULE_TYPE) or not any(
                isinstance(a, TorchTensorAtom) and a.owned and a.grad == NO_GRAD for a in old.atoms):
            return value
        return Value(frozenset(a.with_(owned=True) if isinstance(a, TorchTensorAtom) else a for a in value.atoms),
                     value.top)

    def _export_always_fails(self, kind: str, tensor: Value, st: State) -> bool:
        if tensor.top or not tensor.only(TorchTensorAtom):
            return False
        possibilities = self._export_possibilities(kind, tensor, st)
        return bool(possibilities) and all(p.failed for p in possibilities)

    def _optimizer(self, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                   fr: Frame) -> Value:
        params = argument(f"torch.optim.{name}", args, kwargs, "params")
        elements, unknown = _parameter_elements(params)
        for item in _sequence_items(params) or ():
            # every parameter is checked: one that fails on every path decides (the others cannot save it)
            if not item.top and item.atoms and all(
                    isinstance(a, TorchTensorAtom) and T.optimize_outcome(a.requires_grad, a.grad != NON_LEAF)
                    for a in item.atoms):
                elements, unknown = [a for a in item.atoms if isinstance(a, TorchTensorAtom)], False
                break
        possibilities = []
        for atom in elements:
            outcome = T.optimize_outcome(atom.requires_grad, atom.grad != NON_LEAF)
            code, message = outcome if outcome is not None else (None, "")
            possibilities.append(Possibility((("parameter", atom),), code, message, "torch.optimize"))
        if not possibilities:
            return self._optimizer_object(node, elements, True, st, fr)
        # one non-leaf in the list makes the construction fail: that is a failure on every path only when every
        # element's possibilities fail; otherwise some paths (the rule's warning)
        result = self.torch_record(self.site(node, f"torch.optim.{name}", fr), possibilities, unknown, TOP, st, fr,
                                   params=params)
        if result.is_bottom:
            return result
        return self._optimizer_object(node, elements, unknown, st, fr)

    def _optimizer_object(self, node: ast.AST, elements: list[TorchTensorAtom], unknown: bool, st: State,
                          fr: Frame) -> Value:
        """The optimizer a constructor makes (its ``add_param_group`` is checked: :meth:`torch_optimizer_method`).
        Its state is followed when it is built from ``model.parameters()`` with ``model`` a name of this frame
        holding modules on known devices; otherwise it has no modules (not followed)."""
        origin = self.origin(node, fr, "optimizer")
        untracked = V(TorchOptimizerAtom(origin, frozenset(), "", frozenset()))
        first = node.args[0] if isinstance(node, ast.Call) and node.args else None
        if unknown and elements and _project_parameters(first, st):
            unknown = False  # what is not seen of a project module moves with it: its seen parameters decide
        if unknown or not (isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute)
                           and first.func.attr == "parameters" and not first.args and not first.keywords
                           and isinstance(first.func.value, ast.Name) and first.func.value.id in st.vars):
            return untracked
        modules = st.vars[first.func.value.id]
        devices = frozenset(a.dev for a in elements)
        via = access(first.func.value, fr)
        if modules.top or not modules.atoms or via is None or not devices or None in devices or not all(
                _identity(a) is not None for a in modules.atoms):
            return untracked
        return V(TorchOptimizerAtom(origin, frozenset(modules.atoms), via, devices))

    def torch_optimizer_method(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                               node: ast.AST, st: State, fr: Frame) -> Value:
        """``load_state_dict`` and the first ``step()`` make the state where the parameters are; a later
        ``step()`` with the parameters elsewhere (the module moved in place since) fails like any op over
        tensors on two devices (MV201). Anything the analysis cannot place in time stops the following."""
        optimizers = [a for a in receiver.atoms if isinstance(a, TorchOptimizerAtom)]
        group = argument("torch.optim.Optimizer.add_param_group", args, kwargs, "param_group", None)
        if name == "add_param_group" and group is not None:
            self.torch_add_param_group(group, node, st, fr)
            self._rebind_optimizer(node, TOP, st)  # parameters of other modules now: not followed
            return NONE
        if name not in ("step", "load_state_dict") or receiver.top or len(optimizers) != len(receiver.atoms) \
                or not all(a.modules for a in optimizers):
            return NONE if name in ("zero_grad", "step", "load_state_dict") else TOP
        if any(self._moved_unseen(a) for a in optimizers):
            self._rebind_optimizer(node, TOP, st)
            return NONE
        if name == "step":
            for atom in optimizers:  # (a passing step is recorded too: it shows the worlds where the step is fine)
                if atom.state is not None:
                    self._check_optimizer_state(atom, node, st, fr)
        where = self.origin(node, fr, f"optimizer state made by {name}()")
        made = Value(frozenset(a if a.state is not None and name == "step" else replace(a, state=a.params, made=where)
                               for a in optimizers))
        self._rebind_optimizer(node, made, st)
        return BOTTOM if st.dead else NONE

    def _check_optimizer_state(self, atom: TorchOptimizerAtom, node: ast.AST, st: State, fr: Frame) -> None:
        def parameter(dev: TorchDev) -> TorchTensorAtom:
            return TorchTensorAtom(dev, LEAF, False, owned=True, origin=self.origin(node, fr, "optimizer parameter"))

        def state(dev: TorchDev) -> TorchTensorAtom:
            return TorchTensorAtom(dev, NO_GRAD, False, origin=atom.made)

        if atom.state == atom.params:
            # the state was made where the parameters were and they have not moved since: each parameter's state
            # is on its own device (one alternative of the parameters never meets another's state)
            passes = [Possibility((("parameter", parameter(dev)), ("state", state(dev))), None, "", "torch.step")
                      for dev in sorted(atom.params, key=str)]
            self.torch_record(self.site(node, "Optimizer.step", fr), passes, False, TOP, st, fr)
            return
        params = Value(frozenset(parameter(dev) for dev in atom.params))
        states = Value(frozenset(state(dev) for dev in atom.state or ()))
        self.checked_op("Optimizer.step", [("parameter", params, False, False), ("state", states, False, False)],
                        node, st, fr, op="step")

    def _moved_unseen(self, atom: TorchOptimizerAtom) -> bool:
        """Was one of its modules, or a sub-module of one (``net.backbone.cuda()``), moved in place other than
        through the name it was built from, here?"""
        seen: set[int] = set()
        pending = list(atom.modules)
        while pending:
            module = pending.pop()
            if id(module) in seen or len(seen) > MAX_COMBINATIONS * 16:
                return len(seen) > MAX_COMBINATIONS * 16  # too many to look at: not followed
            seen.add(id(module))
            key = _identity(module)
            if key is not None and self.heap_get((key, _MOVED)) is not None:
                via = self.heap_get((key, _MOVED_VIA))
                if via is None or via.top or via.consts() != [atom.access]:
                    return True
            if isinstance(module, TorchLayerAtom):
                pending.extend(module.children)
            elif isinstance(module, Instance):
                pending.extend(inner for _attr, value in self.heap_attributes(module, _move_note)
                               for inner in value.atoms if isinstance(inner, (TorchLayerAtom, Instance)))
        return False

    @staticmethod
    def _rebind_optimizer(node: ast.AST, value: Value, st: State) -> None:
        rebind_call_receiver(node, value, st)

    @staticmethod
    def _follow_optimizers(before: Value, moved: Value, devices: frozenset | None, st: State) -> None:
        """``model.to(d)`` moved ``model`` in place: the optimizers built from its parameters here have them on
        ``d`` now (their state stays where it was made)."""
        olds = set(before.atoms)
        for name, value in list(st.vars.items()):
            if not any(isinstance(a, TorchOptimizerAtom) and a.modules & olds for a in value.atoms):
                continue
            atoms = set()
            for atom in value.atoms:
                if not isinstance(atom, TorchOptimizerAtom) or not atom.modules & olds:
                    atoms.add(atom)
                    continue
                if devices is None or moved.top or not atom.modules <= olds:
                    st.vars[name] = TOP  # some of its parameters moved, or moved somewhere not known
                    break
                atoms.add(replace(atom, modules=frozenset(moved.atoms), params=devices))
            else:
                st.vars[name] = Value(frozenset(atoms), value.top)

    def torch_add_param_group(self, group: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        """``optimizer.add_param_group({"params": [...], ...})``: its parameters are checked as the optimizer's
        constructor checks them."""
        params = [atom.get("params") for atom in group.atoms if isinstance(atom, DictAtom)]
        if group.top or len(params) != len(group.atoms) or any(p is None for p in params):
            return TOP
        self._optimizer("add_param_group", [join_all(params)], {}, node, st, fr)  # type: ignore[arg-type]
        return NONE

    def _distribution(self, name: str, args: list[Value], kwargs: dict[str, Value], st: State) -> Value:
        """``Normal(loc, scale)``, ``Categorical(logits=...)``: where its parameters are (numbers join the tensors'
        device, the default device without any) and whether they are 0-dim; unknown parameters: not followed.
        Parameters on two devices make a distribution all the same (``broadcast_all`` checks no devices)."""
        values = [*args, *(v for k, v in kwargs.items() if k != "validate_args")]
        tensors: list[TorchTensorAtom] = []
        firsts: list[TorchDev] = []  # each parameter's device, in order (the first decides ``dev``)
        for value in values:
            if value.top or not all(isinstance(a, (TorchTensorAtom, Const)) for a in value.atoms):
                return TOP
            found = [a for a in value.atoms if isinstance(a, TorchTensorAtom)]
            if len({a.dev for a in found}) > 1:
                return TOP  # one parameter on either of two devices: not followed
            tensors.extend(found)
            firsts.extend(a.dev for a in found[:1])
        if not tensors:
            defaults = self.default_devices(st)
            devices = [dev for dev, _a in defaults] if defaults is not None else []
            if len(devices) != 1:
                return TOP
            return V(TorchDistributionAtom(name, devices[0], False, zero_dim=True))
        ranks = {a.zero_dim for a in tensors}
        zero_dim = False if False in ranks else True if ranks == {True} else None
        others = tuple(dict.fromkeys(d for d in firsts if d != firsts[0]))
        return V(TorchDistributionAtom(name, firsts[0], any(a.requires_grad for a in tensors), zero_dim, others))

    def torch_distribution_init(self, receiver: Value, args: list[Value], kwargs: dict[str, Value], st: State,
                                fr: Frame) -> Value:
        """A project subclass's distribution set up (its constructor inherited, or ``super().__init__(...)``):
        the library object's state, kept on the instance."""
        for atom in receiver.atoms:
            base = distribution_base(atom.cls) if isinstance(atom, Instance) else None
            if base is not None:
                self.store_attribute(V(atom), DISTRIBUTION_STATE, self._distribution(base, args, kwargs, st), fr)
        return NONE

    def torch_distribution_attribute(self, instance: Instance, attr: str) -> Value | None:
        """An attribute a project distribution inherits: the library's methods, on the state it was set up with
        (``__init__``: sets it up); anything else: unknown."""
        if attr == "__init__":
            return V(BoundShim(instance, DISTRIBUTION_INIT))
        state = self.heap_get((instance, DISTRIBUTION_STATE))
        if state is None or attr not in DISTRIBUTION_METHODS:
            return None
        return Value(frozenset(BoundShim(a, attr) for a in state.atoms if isinstance(a, TorchDistributionAtom)),
                     state.top or not state.only(TorchDistributionAtom))

    def _distribution_parameters(self, atom: TorchDistributionAtom, node: ast.AST, fr: Frame) -> list[tuple]:
        """The parameters as operands of a checked op: one per device they are on."""
        grad = NON_LEAF if atom.grad else NO_GRAD
        return [(f"{atom.name} parameters" + (f" on {dev.shown}" if atom.others else ""),
                 V(TorchTensorAtom(dev, grad, atom.zero_dim, origin=self.origin(node, fr, f"{atom.name} parameters"))),
                 False, False) for dev in (atom.dev, *atom.others)]

    def torch_distribution_method(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                                  node: ast.AST, st: State, fr: Frame) -> Value:
        """``sample()`` (out of the graph), ``rsample()``, ``entropy()`` on the parameters' device; ``log_prob(x)``,
        ``cdf(x)``, ``icdf(x)`` check ``x`` against the parameters like any element-wise op. Parameters on two
        devices: sampling and the densities fail as an op over them does (MV201); ``entropy``: not followed."""
        out = TOP if receiver.top else BOTTOM
        for atom in receiver.atoms:
            if not isinstance(atom, TorchDistributionAtom):
                out = out.join(TOP)
                continue
            params = TorchTensorAtom(atom.dev, NON_LEAF if atom.grad else NO_GRAD, atom.zero_dim,
                                     origin=self.origin(node, fr, f"{atom.name} parameters"))
            sampled = name in ("sample", "sample_n", "rsample")
            if atom.others and sampled:
                self.checked_op(f"{atom.name}.{name}", self._distribution_parameters(atom, node, fr), node, st, fr,
                                op=name)
                out = out.join(BOTTOM if st.dead else TOP)
            elif name in ("sample", "sample_n") or (name == "rsample" and not atom.grad):
                # of the parameters' shape, after the sample shape when one is given (``sample((n, d))``)
                out = out.join(V(TorchTensorAtom(atom.dev, NO_GRAD, _sampled_zero_dim(atom.zero_dim, args, kwargs),
                                                 origin=self.origin(node, fr, f"{atom.name}.{name}()"))))
            elif name in ("rsample", "entropy") and not atom.others:
                out = out.join(V(params.with_(zero_dim=None, origin=self.origin(node, fr, f"{atom.name}.{name}()"))))
            elif name in ("log_prob", "cdf", "icdf") \
                    and (value := argument(f"torch.distributions.Distribution.{name}", args, kwargs, "value",
                                           None)) is not None:
                indexed = name == "log_prob" and atom.name in INDEXED_LOG_PROB
                out = out.join(self.checked_op(f"{atom.name}.{name}", [("value", value, indexed, False),
                                                                       *self._distribution_parameters(atom, node, fr)],
                                               node, st, fr, op=name))
            else:
                out = out.join(TOP)
        return out

    def torch_kl_divergence(self, p: Value, q: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        """``kl_divergence(p, q)``: an op over both distributions' parameters (``p.scale / q.scale`` ...)."""
        if p.top or q.top or not p.only(TorchDistributionAtom) or not q.only(TorchDistributionAtom):
            return TOP
        out = BOTTOM
        for first in p.atoms:
            for second in q.atoms:
                assert isinstance(first, TorchDistributionAtom) and isinstance(second, TorchDistributionAtom)
                operands = [(f"p: {role}", value, i, o) for role, value, i, o in
                            self._distribution_parameters(first, node, fr)]
                operands += [(f"q: {role}", value, i, o) for role, value, i, o in
                             self._distribution_parameters(second, node, fr)]
                out = out.join(self.checked_op("torch.distributions.kl_divergence", operands, node, st, fr,
                                               op="kl_divergence"))
        return out

    def torch_grad_flag_check(self, obj: Value, flag: Value, method: bool, node: ast.AST, st: State,
                              fr: Frame) -> Value:
        """``t.requires_grad = flag`` / ``t.requires_grad_(flag)``: a non-leaf (a moved requires-grad leaf) refuses
        the change (MV205). Silent where the tensor or the flag is not known."""
        truth = flag.truthiness()
        tensors = torch_tensors(obj)
        if not tensors or None in truth:
            return NONE
        possibilities = []
        for atom in tensors:
            for value in sorted(t for t in truth if t is not None):
                outcome = T.grad_flag_outcome(atom.grad != NON_LEAF, value, method)
                code, message = outcome if outcome is not None else (None, "")
                possibilities.append(Possibility((("tensor", atom),), code, message, "torch.grad"))
        unknown = obj.top or not obj.only(TorchTensorAtom)
        api = "Tensor.requires_grad_" if method else "Tensor.requires_grad"
        return self.torch_record(self.site(node, api, fr), possibilities, unknown, NONE, st, fr, tensor=obj)

    def torch_grad_read(self, obj: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        possibilities = []
        out = TOP if obj.top else BOTTOM
        for atom in obj.atoms:
            if not isinstance(atom, TorchTensorAtom):
                out = out.join(TOP)
                continue
            outcome = T.grad_read_outcome(atom.requires_grad, atom.grad != NON_LEAF)
            code, message = outcome if outcome is not None else (None, "")
            possibilities.append(Possibility((("tensor", atom),), code, message, "torch.grad"))
            out = out.join(V(TorchTensorAtom(atom.dev, NO_GRAD, atom.zero_dim, origin=atom.origin))
                           if atom.grad == LEAF else NONE)
        unknown = obj.top or not obj.only(TorchTensorAtom)
        return self.torch_record(self.site(node, "Tensor.grad", fr), possibilities, unknown, out, st, fr,
                                 raises=False, tensor=obj)

    def torch_numpy_call(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                         st: State, fr: Frame) -> Value | None:
        """A numpy function given a tensor: converted by ``__array__`` (like ``.numpy()``) or ``__dlpack__``."""
        name = path.rpartition(".")[2]
        tensors = [inner for v in [*args, *kwargs.values()] for inner in _numpy_inputs(v)]
        if name in NUMPY_NO_CONVERSION and tensors:
            converted = [(role, value) for role, value in tensors if role != "tensor"]  # lists still are
            if not converted:
                return TOP
            tensors = converted
        if not tensors or node is None:
            return None
        kind = "dlpack" if name in NUMPY_DLPACK else "numpy"
        result = self._convert(kind, f"numpy.{name}", tensors, node, st, fr)
        return result if name not in ("asarray", "array") or st.dead else V(ArrayAtom("float"))

    def numpy_conversion(self, api: str, values: list[Value], node: ast.AST, st: State, fr: Frame) -> Value | None:
        """A library call ``api`` that converts ``values`` with ``numpy.asarray`` (``Tensor.__array__``): the
        tensors among them, and in the lists and tuples among them. None: no tensor is converted."""
        tensors = [inner for v in values for inner in _numpy_inputs(v)]
        return self._convert("numpy", api, tensors, node, st, fr) if tensors else None

    def _convert(self, kind: str, api: str, tensors: list[tuple[str, Value]], node: ast.AST, st: State,
                 fr: Frame) -> Value:
        # every element is converted: one that fails on every path decides the call (the others cannot save it)
        certain = [(role, value) for role, value in tensors if self._export_always_fails(kind, value, st)]
        result = TOP
        for role, value in certain[:1] or tensors:
            result = self.torch_export(kind, api, value, node, st, fr, role=role)
            if st.dead:
                return BOTTOM
        return result

    # --- tensor methods and attributes ----------------------------------------------------------------------

    def torch_tensor_attribute(self, atom: TorchTensorAtom, attr: str) -> Value | None:
        if attr == "device":
            return V(TorchDeviceAtom(atom.dev, atom.origin, tensor=atom.provenance))
        if attr == "is_leaf":
            return V(const(atom.grad != NON_LEAF))
        if attr == "requires_grad":
            return V(const(atom.requires_grad))
        if attr in _DEVICE_PREDICATES:
            return V(const(atom.dev.type == _DEVICE_PREDICATES[attr]))
        if attr in ("T", "mT", "H", "mH"):
            return V(atom.with_(owned=False))
        if attr == "data":
            return V(atom.with_(grad=NO_GRAD, owned=False))
        if attr == "shape" and atom.ndim is not None:
            # a torch.Size of that many sizes, each an int of unknown value (``n * t`` is a tensor on ``t``'s device)
            return V(seq("tuple", (V(NumberAtom("int", low=0)),) * atom.ndim))
        if attr == "dtype":
            return V(UNKNOWN_DTYPE)  # a dtype the analysis does not know: ``m.to(h.dtype)`` is a cast, not a move
        if attr in ("shape", "ndim", "layout", "names", "grad_fn"):
            return None
        return V(BoundShim(atom, attr))

    def torch_tensor_method(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                            node: ast.AST, st: State, fr: Frame) -> Value:
        result = self._tensor_method(name, receiver, args, kwargs, node, st, fr)
        if name.endswith("_") and not name.startswith("_") and any(
                isinstance(a, TorchTensorAtom) and a.owned for a in receiver.atoms):
            # an in-place op returns its receiver: a module's buffer stays the module's (``buf.mul_(m).add_(x)``)
            result = Value(frozenset(a.with_(owned=True) if isinstance(a, TorchTensorAtom) else a
                                     for a in result.atoms), result.top)
        return result

    def _tensor_method(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                       node: ast.AST, st: State, fr: Frame) -> Value:
        if name in T.MOVE_METHODS:
            return self._tensor_move(name, receiver, args, kwargs, node, st, fr)
        if name == "type_as":
            return self._type_as(receiver, args, kwargs, node, st, fr)
        if name == "numpy":
            forced = argument("torch.Tensor.numpy", args, kwargs, "force", None)
            if forced is not None and forced.truthiness() == {True}:
                return V(ArrayAtom("float"))
            return self.torch_export("numpy", "Tensor.numpy", receiver, node, st, fr, V(ArrayAtom("float")))
        if name == "__dlpack__":
            return self.torch_export("dlpack", "Tensor.__dlpack__", receiver, node, st, fr)
        if name == "get_device" and not args and not kwargs and receiver.atoms and not receiver.top \
                and receiver.only(TorchTensorAtom):
            # -1 on the CPU, the index on a GPU (``if t.get_device() >= 0``: a device test)
            return join_all(V(const(-1)) if a.dev == CPU else _index_value(a) for a in torch_tensors(receiver))
        if name == "backward":
            gradient = argument("torch.Tensor.backward", args, kwargs, "gradient", None)
            if gradient is not None:
                self.check_gradients("Tensor.backward", receiver, gradient, node, st, fr)
            return BOTTOM if st.dead else TOP
        if name in ("item", "tolist", "size", "dim", "numel", "element_size", "get_device", "data_ptr", "stride",
                    "register_hook", "is_contiguous", "is_floating_point", "nelement"):
            return TOP
        if name in ("detach", "detach_"):
            result = self.same_device_result(receiver, node, st, fr, None, detach=True)
            if name == "detach_":
                self._rebind_receiver(node, result, st, fr, receiver)
            return result
        if name == "requires_grad_":
            flag = argument("torch.Tensor.requires_grad_", args, kwargs, "requires_grad", V(const(True)))
            if self.torch_grad_flag_check(receiver, flag, True, node, st, fr).is_bottom:
                return BOTTOM
            for atom in torch_tensors(receiver):
                self._note_grad_flag(atom, flag, set())
            result = self._grad_flag_set(receiver, flag)
            self._rebind_receiver(node, result, st, fr, receiver)
            return result
        if name == "retain_grad":
            # a non-leaf that keeps its ``.grad``: reads of it are fine, an optimizer still refuses it
            self._rebind_receiver(node, TOP, st, fr, receiver)
            return NONE
        if name in T.INDEX_ARGS or name in CHECKED_OPS:
            operands = [("input", receiver, False, False)]
            index = T.INDEX_ARGS.get(name)
            for i, value in enumerate(args):
                operands.append((f"arg{i + 1}", value, index is not None and index[0] == i + 1, False))
            for key, value in kwargs.items():
                operands.append((key, value, index is not None and index[1] == key, False))
            dims = True if name in ("dot", "vdot") else None
            return self.checked_op(f"Tensor.{name}", operands, node, st, fr, op=name, zero_dim=dims)
        if name in VALUES_INDICES and (name not in REDUCTIONS or args or any(k in kwargs for k in DIM_KEYWORDS)):
            if name in ("max", "min") and args and torch_tensors(args[0]):
                return self.checked_op(f"Tensor.{name}", [("input", receiver, False, False),
                                                          ("other", args[0], False, False)], node, st, fr, op=name)
            return self._values_indices(receiver, node, st, fr)
        if name in REDUCTIONS:
            has_dim = len(args) > 0 or any(k in kwargs for k in DIM_KEYWORDS)
            return self.same_device_result(receiver, node, st, fr, None if has_dim else True, api=name)
        if name == "type":
            return self._retyped(receiver, args, kwargs, node, st, fr)
        if name in SAME_DEVICE_OPS:
            result = self.same_device_result(receiver, node, st, fr, None, api=name)
            if name in AT_LEAST_1D:
                # ``index.unsqueeze(-1)``: never 0-dim, whatever the tensor was (no scalar exemption past it)
                return Value(frozenset(dataclasses.replace(a, zero_dim=False, ndim=_at_least_1d_rank(name, a.ndim))
                                       if isinstance(a, TorchTensorAtom) else a for a in result.atoms), result.top)
            rank = _reshaped_rank(name, args, kwargs, node)
            return result if rank is None else Value(frozenset(
                dataclasses.replace(a, ndim=rank, zero_dim=rank == 0) if isinstance(a, TorchTensorAtom) else a
                for a in result.atoms), result.top)
        if name in SPLITTING_OPS:
            return V(seq_of("tuple", self.same_device_result(receiver, node, st, fr, False)))
        return TOP

    def _values_indices(self, tensor: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        """``t.max(dim)``, ``t.sort()``, ``torch.topk(t, k)``: ``(values, indices)``, both on ``t``'s device; the
        indices never require grad."""
        values = self.same_device_result(tensor, node, st, fr, None)
        indices = self.same_device_result(tensor, node, st, fr, None, detach=True)
        if not torch_tensors(tensor):
            return TOP
        return V(seq("tuple", (values, indices)))

    def _cast(self, receiver: Value, dtype: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        """``t.to(dtype)``: an integer dtype drops requires-grad, float32 (the default) is the tensor itself, another
        float dtype is a new tensor (in the graph); unknown: the tensor as it was (no finding either way)."""
        names = {a.path.rpartition(".")[2] for a in dtype.atoms if isinstance(a, TorchRef)}
        if dtype.top or len(names) != 1 or not dtype.only(TorchRef) or UNKNOWN_DTYPE in dtype.atoms:
            return receiver
        name = names.pop()
        api = "long" if name in INTEGER_DTYPES else "float" if name in DEFAULT_FLOAT_DTYPES else "double"
        return self.same_device_result(receiver, node, st, fr, None, api=api)

    @staticmethod
    def _grad_flag_set(tensor: Value, flag: Value) -> Value:
        """``t.requires_grad_(flag)`` / ``t.requires_grad = flag``: a leaf's flag changes (a non-leaf's cannot)."""
        truth = flag.truthiness()
        out = {a.with_(grad=(LEAF if t else NO_GRAD) if a.grad != NON_LEAF else NON_LEAF)
               for a in torch_tensors(tensor) for t in truth if t is not None}
        return Value(frozenset(out), tensor.top or None in truth or not tensor.only(TorchTensorAtom))

    def _note_grad_flag(self, atom: Atom, flag: Value, seen: set) -> None:
        """``module.requires_grad_(flag)``, or a parameter's flag set (``for p in m.parameters(): p.requires_grad =
        False``): noted on the layer or parameter (by where it was created), for every reference to it. A module's
        own layers and parameters (a project module's attributes) are noted too."""
        if isinstance(atom, TorchTensorAtom):
            if atom.owned and atom.origin is not None:
                self._note_flag(atom.origin, flag)
        elif isinstance(atom, TorchLayerAtom):
            if atom.origin is not None:
                self._note_flag(atom.origin, flag)
            for child in atom.children:
                self._note_grad_flag(child, flag, seen)
        elif isinstance(atom, Instance) and atom.cls.has_library_base(MODULE_TYPE) and atom not in seen:
            seen.add(atom)
            for attr, value in self.heap_attributes(atom, _note):
                self.heap_reads.add((atom, attr))
                for inner in value.atoms:
                    if isinstance(inner, (TorchTensorAtom, TorchLayerAtom, Instance)):
                        self._note_grad_flag(inner, flag, seen)

    def _note_flag(self, origin: Origin, flag: Value) -> None:
        truth = flag.truthiness()
        value = Value(frozenset(const(t) for t in truth if t is not None), None in truth)
        old = self.heap.get((origin, _GRAD_FLAG))
        self.heap_set((origin, _GRAD_FLAG), value if old is None else old.join(value))

    def grad_flags(self, atom: TorchTensorAtom | TorchLayerAtom) -> set[bool]:
        """Whether a module's weights (a layer's, or a parameter) may require grad: True unless frozen (a layer
        whose tensors are all buffers: never)."""
        if isinstance(atom, TorchLayerAtom) and buffers_only(atom.name):
            return {False}
        if atom.origin is None or (isinstance(atom, TorchTensorAtom) and not (atom.owned and atom.grad == LEAF)):
            return {atom.requires_grad} if isinstance(atom, TorchTensorAtom) else {True}
        noted = self.heap_get((atom.origin, _GRAD_FLAG))
        if noted is None:
            return {True}
        consts = noted.consts()  # (None: a flag that is not a constant, ``requires_grad_(p.requires_grad)``)
        flags = {c for c in consts or () if isinstance(c, bool)}
        return {True, False} if noted.top or consts is None or not flags else flags

    def torch_tensor_state_store(self, target: ast.Attribute, obj: Value, value: Value, st: State,
                                 fr: Frame) -> None:
        """``w.requires_grad = flag`` and ``w.data = t`` change the tensor ``w`` names in place: its grad flag,
        or its device (its autograd role stays). ``layer.weight.requires_grad = False`` freezes the layer's weights
        (a layer's parameters share its grad flag)."""
        if target.attr == "requires_grad":
            self.torch_grad_flag_check(obj, value, False, target, st, fr)
        if target.attr == "requires_grad" and isinstance(target.value, ast.Attribute):
            for atom in torch_tensors(obj):
                if atom.owned:
                    self._note_grad_flag(atom, value, set())
            return
        if not isinstance(target.value, ast.Name) or target.value.id not in st.vars or not torch_tensors(obj):
            return
        if target.attr == "requires_grad":
            for atom in torch_tensors(obj):
                self._note_grad_flag(atom, value, set())
            now = self._grad_flag_set(obj, value)
        else:
            devices = {a.dev for a in torch_tensors(value)}
            if value.top or not value.only(TorchTensorAtom) or not obj.only(TorchTensorAtom):
                now = TOP
            else:
                now = Value(frozenset(a.with_(dev=dev, origin=b.origin) for a in torch_tensors(obj)
                                      for dev in devices for b in torch_tensors(value) if b.dev == dev))
        st.vars[target.value.id] = now
        st.kill_aliases(target.value.id)
        st.drop_overlays(target.value.id)

    def _retyped(self, receiver: Value, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                 fr: Frame) -> Value:
        """``t.type(torch.cuda.FloatTensor)`` moves to the GPU, ``t.type(torch.FloatTensor)`` to the CPU, and
        ``t.type(torch.float16)`` only casts; ``t.type()`` is the type's name (a string)."""
        target = argument("torch.Tensor.type", args, kwargs, "dtype", None)
        kind = None if target is None else _legacy_type_device(target)
        names = {a.path.rpartition(".")[2] for a in target.atoms if isinstance(a, TorchRef)} if target else set()
        # an integer or boolean type (``torch.LongTensor``, ``torch.long``): the result is out of the graph
        api = "long" if names and all(n in INTEGER_DTYPES or n in INTEGER_TENSOR_TYPES for n in names) else "type"
        if kind == "same":
            return self.same_device_result(receiver, node, st, fr, None, api=api)
        dev = CPU if kind == "cpu" else self.parse_device("cuda", st) if kind == "cuda" else None
        if dev is None:
            return TOP
        grads = self.grad_modes(st)
        out: set[Atom] = set()
        for atom in torch_tensors(receiver):
            if atom.dev == dev:
                out.update(self.same_device_result(V(atom), node, st, fr, None, api=api).atoms)
                continue
            moved_from = atom.dev if atom.grad == LEAF else atom.moved_from
            for enabled in grads:
                grad = NON_LEAF if atom.requires_grad and enabled and api != "long" else NO_GRAD
                out.add(TorchTensorAtom(dev, grad, atom.zero_dim, moved_from=moved_from if grad == NON_LEAF else None,
                                        origin=self.origin(node, fr, f"moved to {dev.shown}")))
        return Value(frozenset(out), receiver.top or not receiver.only(TorchTensorAtom))

    def _type_as(self, receiver: Value, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                 fr: Frame) -> Value:
        """``t.type_as(other)`` is ``t.type(other.type())``: a copy with ``other``'s tensor type, so on the CPU for a
        CPU ``other`` and on the *current* CUDA device for a CUDA one (the type names no index)."""
        other = argument("torch.Tensor.type_as", args, kwargs, "other")
        targets: set[TorchDev] = set()
        for atom in torch_tensors(other):
            dev = self.parse_device("cuda", st) if atom.dev.type == "cuda" else atom.dev
            if dev is None:
                return TOP
            targets.add(dev)
        if not targets or other.top or not other.only(TorchTensorAtom):
            return TOP
        out = BOTTOM
        for dev in sorted(targets, key=lambda d: d.text):
            out = out.join(self._tensor_move("to", receiver, [V(TorchDeviceAtom(dev))], {}, node, st, fr))
        return out

    def _tensor_move(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                     st: State, fr: Frame) -> Value:
        if name == "cpu":
            targets: list[tuple[TorchDev, object]] | None = [(CPU, None)]
        elif name == "cuda":
            index = argument("torch.Tensor.cuda", args, kwargs, "device", None)
            targets = self.devices_of(index, st, call=node) if index is not None and index.consts() != [None] \
                else [(d, None) for d in [self.parse_device("cuda", st)] if d is not None] or None
        else:
            targets = self._to_targets(args, kwargs, st, node)
            if targets == []:  # ``.to(dtype)``: a cast, on the same device
                return self._cast(receiver, argument("torch.Tensor.to", args, kwargs, "dtype"), node, st, fr)
        discarded = node is getattr(self, "discarded_call", None) and node is not self.loaded_module_move \
            and (targets is not None or not _maybe_cast(node))
        possibilities: list[Possibility] = []
        out: set[Atom] = set()
        unknown = receiver.top or targets is None or not receiver.only(TorchTensorAtom)
        grads = self.grad_modes(st)
        for atom in torch_tensors(receiver):
            for dev, source in _same_way(atom, targets or []):
                for enabled in grads if atom.dev != dev else (True,):
                    tracked = atom.requires_grad and enabled  # under no_grad the copy is a leaf without grad
                    out.add(with_tags(atom if atom.dev == dev else atom.with_(
                        dev=dev, owned=False, ndim=atom.ndim,
                        grad=NON_LEAF if tracked else NO_GRAD,
                        moved_from=(atom.dev if atom.grad == LEAF else atom.moved_from) if tracked else None,
                        origin=self.origin(node, fr, f"moved to {dev.shown}" + (
                            " (a requires-grad leaf: the result is a non-leaf)" if atom.grad == LEAF and tracked
                            else ""))), tags_of(source)))
            if discarded:  # thrown away wherever it goes (a device or a dtype the analysis does not know)
                possibilities.append(Possibility((("tensor", atom),), "MV206",
                                                 T.DISCARDED_MOVE_MESSAGE.format(op=name), "torch.discarded"))
        if discarded and possibilities:
            not_tensor = receiver.top or not receiver.only(TorchTensorAtom)  # where it goes does not matter
            self.torch_record(self.site(node, f"Tensor.{name}", fr), possibilities, not_tensor, TOP, st, fr,
                              raises=False, tensor=receiver)
        if targets is None:
            return TOP
        return Value(frozenset(out), unknown)

    def _to_targets(self, args: list[Value], kwargs: dict[str, Value], st: State,
                    call: ast.AST | None = None) -> list[tuple[TorchDev, object]] | None:
        """Where ``t.to(...)`` moves to: ``[]`` for a cast (dtype only), ``None`` when unknown."""
        candidates = [v for v in args[:1]] + [kwargs[k] for k in ("device", "other") if k in kwargs]
        for value in candidates:
            if value.only(TorchRef) or value.consts() == [None]:
                continue  # a dtype
            return self.devices_of(value, st, tensors_too=True, call=call)
        if not candidates and "dtype" in kwargs:
            return []
        if candidates and all(v.only(TorchRef) for v in candidates):
            return []
        return [] if not candidates else None

    def torch_binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST, st: State,
                    fr: Frame) -> Value:
        name = _DUNDERS.get(type(op), type(op).__name__.lower())
        # a number operand has no dimensions: where every tensor's rank is known, the result has the largest
        return self.checked_op(f"Tensor.__{name}__", [("left", left, False, False), ("right", right, False, False)],
                               node, st, fr, op=name, rank=matmul_rank if name == "matmul" else broadcast_rank)

    def torch_index(self, atom: TorchTensorAtom, key: Value, node: ast.AST, st: State, fr: Frame,
                    op: str = "__getitem__", values: Value | None = None) -> Value:
        """``t[key]`` (``t[key] = v``: ``op="__setitem__"``): an index tensor on the GPU must be on ``t``'s
        device; a CPU index works anywhere. Assigning through an index tensor is ``index_put_``: the values
        must be on ``t``'s device too (but for a 0-dim CPU tensor); through slices it is a ``copy_``, which
        copies across devices."""
        indexes = Value(frozenset(_index_tensors(key)), key.top)
        if not torch_tensors(indexes):
            ints = _int_positions(key)
            if ints and atom.ndim is not None and ints <= atom.ndim and op == "__getitem__":
                # ``stride[i]``, ``t[index]`` of a 1-D tensor: one dimension fewer per int (0-dim: a scalar,
                # which works with a tensor on any device)
                rank = atom.ndim - ints
                result = self.same_device_result(V(atom), node, st, fr, rank == 0)
                return Value(frozenset(a.with_(ndim=rank) if isinstance(a, TorchTensorAtom) else a
                                       for a in result.atoms), result.top)
            return self.same_device_result(V(atom), node, st, fr, None)
        operands = [("tensor", V(atom), False, False), ("indices", indexes, True, False)]
        if values is not None and torch_tensors(values):
            operands.append(("values", values, False, False))
        return self.checked_op(f"Tensor.{op}", operands, node, st, fr, op=op, zero_dim=None)

    def _function_op(self, name: str, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                     st: State, fr: Frame, module: str) -> Value:
        if name in T.INDEX_ARGS or name in CHECKED_OPS:
            index = T.INDEX_ARGS.get(name)
            operands = [(f"arg{i}", v, index is not None and index[0] == i, False) for i, v in enumerate(args)]
            operands += [(k, v, index is not None and index[1] == k, False) for k, v in kwargs.items()]
            dims = True if name in FUNCTIONAL_LOSSES and "reduction" not in kwargs else None
            return self.checked_op(path.replace("torch.nn.functional.", "F."), operands, node, st, fr, op=name,
                                   zero_dim=dims)
        if name in VALUES_INDICES and args and (name not in REDUCTIONS or len(args) > 1
                                                 or any(k in kwargs for k in DIM_KEYWORDS)):
            if name in ("max", "min") and len(args) > 1 and torch_tensors(args[1]):
                return self.checked_op(path, [("input", args[0], False, False), ("other", args[1], False, False)],
                                       node, st, fr, op=name)
            return self._values_indices(args[0], node, st, fr)
        if (name in SAME_DEVICE_OPS or name in REDUCTIONS) and args:
            has_dim = len(args) > 1 or any(k in kwargs for k in DIM_KEYWORDS)
            return self.same_device_result(args[0], node, st, fr,
                                           True if name in REDUCTIONS and not has_dim else None, api=name)
        if name in SPLITTING_OPS and module == "torch" and (args or "input" in kwargs or "tensor" in kwargs):
            # ``torch.split(indices, 1, dim=-1)``: a tuple of pieces on the tensor's device, as the method's
            tensor = args[0] if args else kwargs.get("input", kwargs.get("tensor", TOP))
            return V(seq_of("tuple", self.same_device_result(tensor, node, st, fr, False)))
        return TOP

    def _sequence_op(self, name: str, tensors: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        out = TOP if tensors.top else BOTTOM
        atoms = tensors.atoms
        if name in NONEMPTY_SEQUENCE_OPS and any(isinstance(a, SeqAtom) and a.items != () for a in atoms):
            # ``torch.cat(self.log_probs)`` of a list that was empty in ``__init__`` and appended since: an empty
            # list raises (not a device failure), so the result is the other possibilities'
            atoms = frozenset(a for a in atoms if not (isinstance(a, SeqAtom) and a.items == ()))
        for atom in atoms:
            if isinstance(atom, SeqAtom) and atom.items:
                operands = [(f"tensors[{i}]", item, False, False) for i, item in enumerate(atom.items)]
            elif isinstance(atom, SeqAtom) and atom.items is None and not atom.elem.is_bottom:
                operands = [("tensors[0]", atom.elem, False, False), ("tensors[1]", atom.elem, False, False)]
            else:
                out = out.join(TOP)
                continue
            result = self.checked_op(f"torch.{name}", operands, node, st, fr, op=name, zero_dim=False,
                                     rank=SEQUENCE_RANKS.get(name))
            if st.dead:
                return BOTTOM
            out = out.join(result)
        return out

    # --- layers and modules ------------------------------------------------------------------------------

    def _layer(self, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
               fr: Frame) -> Value:
        origin = self.origin(node, fr, f"nn.{name} created")
        if name in layer_dicts.COLLECTIONS:
            given = layer_dicts.entries(args[0] if args else kwargs.get("values", kwargs.get("modules",
                                        kwargs.get("parameters"))), name in layer_dicts.KEYED)
            built = None if given is None or len(args) + len(kwargs) > 1 else layer_dicts.build(name, given, origin)
            return TOP if built is None else V(built)
        if name in T.CONTAINERS:
            items: list[Value] = list(args)
            if name == "ModuleList":
                listed = (_sequence_items(args[0]) or _one_kind_items(args[0])) if args else []
                if listed is None:
                    return TOP
                items = listed
            children: list[Atom] = []
            for item in items:
                atom = next(iter(item.atoms)) if len(item.atoms) == 1 and not item.top else None
                if not isinstance(atom, TorchLayerAtom) and not (isinstance(atom, Instance)
                                                                 and atom.cls.has_library_base(MODULE_TYPE)):
                    return TOP  # something unknown inside: not followed
                children.append(atom)
            layers = [c for c in children if isinstance(c, TorchLayerAtom)]
            devices = {c.dev for c in layers if c.weights}
            # a project module inside: its weights are its attributes (where they are, the layer does not say)
            projects = len(layers) < len(children)
            dev = devices.pop() if len(devices) == 1 and not projects else None
            return V(TorchLayerAtom(name, dev, bool(devices) or projects or any(c.dev is None for c in layers
                                                                                   if c.weights),
                                    tuple(children), origin))
        weights = name in T.LAYERS_WITH_WEIGHTS or name in T.LOSSES
        if not weights and name not in T.LAYERS_WITHOUT_WEIGHTS:
            return TOP
        if name in T.LOSSES:
            return self._loss(name, args, kwargs, origin)
        placements = self._device_argument(kwargs.get("device"), st, node) if weights else [(CPU, None)]
        if placements is None:
            return TOP
        return Value(frozenset(with_tags(TorchLayerAtom(name, dev if weights else None, weights, (), origin),
                                         tags_of(source) if weights else frozenset())
                               for dev, source in placements))

    def torch_sequential_of(self, element: Value, node: ast.AST, st: State, fr: Frame) -> Value:
        """``nn.Sequential(*layers)`` with ``layers`` built in a loop (its length unknown): the layers it may hold,
        when they are library layers whose weights are all on one device (their order then decides nothing a
        device check sees; an empty list, a model of no layers, is not considered)."""
        layers = sorted((a for a in element.atoms if isinstance(a, TorchLayerAtom)), key=repr)
        if element.top or not layers or len(layers) != len(element.atoms) \
                or len({a.dev for a in layers if a.weights}) > 1:
            return TOP
        return self._layer("Sequential", [V(a) for a in layers], {}, node, st, fr)

    @staticmethod
    def _loss(name: str, args: list[Value], kwargs: dict[str, Value], origin: Origin) -> Value:
        """A loss: with class weights (``CrossEntropyLoss(weight=w)``) it holds a buffer on their device."""
        weights = [value for _position, keyword in WEIGHTED_LOSSES.get(name, ())
                   for value in [argument(f"torch.nn.{name}", args, kwargs, keyword, None)]
                   if value is not None and value.consts() != [None]]
        if not weights:
            return V(TorchLayerAtom(name, None, False, (), origin))
        devices: set[TorchDev | None] = {atom.dev for value in weights for atom in torch_tensors(value)}
        if len(weights) > 1 or any(value.top or not torch_tensors(value) for value in weights):
            devices = {None} if len(devices) != 1 or any(value.top for value in weights) else devices
        return Value(frozenset(TorchLayerAtom(name, dev, True, (), origin) for dev in devices or {None}))

    def torch_layer_attribute(self, atom: TorchLayerAtom, attr: str) -> Value | None:
        if attr in ("weight", "bias", "in_proj_weight", "out_proj", "running_mean", "running_var") \
                and atom.weights and atom.dev is not None:
            if attr.startswith("running"):
                return V(TorchTensorAtom(atom.dev, NO_GRAD, False, owned=True, origin=atom.origin))
            return Value(frozenset(TorchTensorAtom(atom.dev, LEAF if flag else NO_GRAD, False, owned=True,
                                                   origin=atom.origin) for flag in self.grad_flags(atom)))
        if attr == "module" and atom.name in WRAPPERS:
            return V(atom.children[0])  # the wrapped module
        if attr in MODULE_METHODS or attr in ADDING_METHODS.get(atom.name, ()) \
                or attr in layer_dicts.METHODS.get(atom.name, ()):
            return V(BoundShim(atom, attr))
        return None

    def torch_layer_call(self, layer: TorchLayerAtom, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                         st: State, fr: Frame) -> Value:
        if layer.name == "Sequential":
            value = argument("torch.nn.Sequential.forward", args, {}, "input")
            for i, child in enumerate(layer.children):
                failed_before = st.past_failure
                if isinstance(child, Instance):  # a project module: its forward
                    value = self.call(V(child), [value], {}, node, st, fr)
                else:  # (the container's choice tags: its layers were placed with it)
                    assert isinstance(child, TorchLayerAtom)  # a Sequential holds library layers and project modules
                    value = self._apply_layer(with_tags(child, tags_of(layer)), [value], {}, node, st, fr,
                                              f"nn.Sequential[{i}] ({child.name})")
                if st.dead:
                    return BOTTOM
                if value.top and st.past_failure and not failed_before:
                    # a layer refused its input on every path, and where its output was meant to be is not known:
                    # the next layers would place it on their weights, a device no run gives it (a teacher model
                    # left on the CPU would make its logits a CPU tensor, one more finding of the same cause)
                    return TOP
            return value
        if layer.name == "ModuleList" or layer.name in layer_dicts.COLLECTIONS:  # (not callable)
            return TOP
        if layer.name == DATA_PARALLEL_NAME:
            return data_parallel_call(self, layer, args, kwargs, node, st, fr)
        if layer.name == DDP_NAME:
            return ddp_call(self, layer, args, kwargs, node, st, fr)
        if layer.children and layer.name.startswith(TORCHVISION + "."):
            # a torchvision classifier whose head was replaced: its body, then the new head
            value = self._apply_layer(replace(layer, children=()), args, kwargs, node, st, fr, layer.name)
            for child in layer.children:
                if st.dead:
                    return BOTTOM
                value = self.torch_layer_call(with_tags(run_as(child), tags_of(layer)), [value], {}, node, st, fr)  # type: ignore[arg-type]
            return value
        # (a torchvision classifier is named by its path)
        return self._apply_layer(layer, args, kwargs, node, st, fr,
                                 layer.name if "." in layer.name else f"nn.{layer.name}")

    def _apply_layer(self, layer: TorchLayerAtom, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                     st: State, fr: Frame, api: str) -> Value:
        x = argument("torch.nn.Module.forward", args, kwargs, "input")
        if layer.name in T.LOSSES:
            target = argument("torch.nn.modules.loss._Loss.forward", args, kwargs, "target")
            operands = [("input", x, False, False), ("target", target, False, False)]
            if layer.weights:  # the class weights, a buffer of the loss
                operands.append(("weight", TOP if layer.dev is None else V(with_tags(TorchTensorAtom(
                    layer.dev, NO_GRAD, False, owned=True, origin=layer.origin), tags_of(layer))), False, True))
            result = self.checked_op(api, operands, node, st, fr, op="loss", zero_dim=True)
        elif not layer.weights:
            result = self.same_device_result(x, node, st, fr, None)
        elif layer.dev is None:
            result = TOP
        else:
            # (the layer's choice tags: a layer placed on one way of a choice meets inputs of that way only)
            weight = with_tags(TorchTensorAtom(layer.dev, NO_GRAD if buffers_only(layer.name) else LEAF, False,
                                               owned=True, origin=layer.origin), tags_of(layer))
            checked = self.checked_op(api, [("input", x, layer.name in ("Embedding", "EmbeddingBag"), False),
                                            *_more_tensor_operands(args[1:], kwargs, layer.name),
                                            ("weight", V(weight), False, True)], node, st, fr, op="forward")
            # the output: on the weights' device, part of the graph while grad is enabled
            # frozen weights (``requires_grad_(False)``) make an output in the graph only for an input that is
            tracked = {True} if x.top or any(a.requires_grad for a in torch_tensors(x)) else self.grad_flags(layer)
            # where the output is: the weights' device. Past the failure of a layer left on the CPU given an input on
            # an accelerator, unknown: the user may have meant the input on the CPU (a model never moved: its next
            # layer is not one more finding) or the layer on the accelerator (a layer built in ``forward``: the
            # model's next layer is not one either). A batch left on the CPU is meant on the model's accelerator.
            # (an input of the other way of a choice the layer was placed by never meets it: :mod:`analyzer.choices`)
            own = tags_of(layer)
            inputs = [a for a in torch_tensors(x) if consistent(own, tags_of(a))] or torch_tensors(x)
            undecided = layer.dev == CPU and any(a.dev != CPU for a in inputs)
            # an unknown input past a failure may be what that failure left (a model whose first layer refused the
            # batch): not placed on these weights either, or a model left on the CPU is found again at its output
            guessed = x.top and st.past_failure
            placed = (not inputs or x.top) and not guessed or any(not (layer.dev == CPU and a.dev != CPU)
                                                                  for a in inputs)
            # its ways: the layer's and the input's (the output of an input on one way of a choice is on that way)
            ways = {joined((own, tags_of(a))) for a in inputs
                    if consistent(own, tags_of(a)) and not (layer.dev == CPU and a.dev != CPU)} or {own}
            if x.top:
                ways.add(own)
            # its device is its input's where the input is on the weights' device (the batch a caller passed, or a
            # value derived from it), and what a failing call was meant to give is its input's too: a later
            # failure over it comes from where the input did (:mod:`rules.anchors`)
            source = derived_from(inputs, layer.dev) if inputs and not x.top else None
            output = self.origin(node, fr, f"{api} output", result=True)
            result = Value(frozenset(with_tags(TorchTensorAtom(layer.dev, NON_LEAF if enabled and grad else NO_GRAD,
                                                               False, origin=output, source=source),
                                               way)
                                     for enabled in self.grad_modes(st) for grad in tracked for way in ways)
                           if placed else (), checked.top or undecided or guessed) if not st.dead else BOTTOM
            if layer.name in TUPLE_OUTPUTS and not st.dead:
                # ``output, (h, c) = lstm(x)``, ``output, h = gru(x)``, ``out, weights = attention(q, k, v)``
                second = V(seq("tuple", (result, result))) if layer.name == "LSTM" else result
                result = V(seq("tuple", (result, second)))
        hooks = self.heap_get((layer.origin, _HOOKS)) if layer.origin is not None else None
        if hooks is not None and not st.dead:
            # a hook bound to a module that later moved in place (``self.fc.register_forward_hook(self._mask)`` in
            # ``__init__``, then ``model.to(device)``): which of its states a call sees, the analysis cannot tell
            moved_from = self.__dict__.get("_moved_from", ())
            hooks = Value(frozenset(a for a in hooks.atoms if not (isinstance(a, FuncRef) and a.bound in moved_from)),
                          hooks.top)
            self.call(hooks, [V(layer), TOP, result], {}, node, st, fr)
        return result

    def torch_module_method(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                            node: ast.AST, st: State, fr: Frame) -> Value:
        """nn.Module's API on a library layer or on an instance of a project ``nn.Module`` subclass."""
        if receiver.atoms and any(name in layer_dicts.METHODS.get(getattr(a, "name", ""), ()) for a in receiver.atoms):
            return self._collection_method(name, receiver, args, kwargs, node, st, fr)
        if name in ("to", "cuda", "cpu"):
            if name == "cpu":
                targets: list[tuple[TorchDev, object]] | None = [(CPU, None)]
            elif name == "cuda":
                index = argument("torch.nn.Module.cuda", args, kwargs, "device", None)
                targets = self.devices_of(index, st, call=node) if index is not None else \
                    [(d, None) for d in [self.parse_device("cuda", st)] if d is not None] or None
            else:
                targets = self._to_targets(args, kwargs, st, node)
                if targets == []:
                    return receiver
            moved = TOP
            moved_each: dict[Atom, Value] = {}
            if targets is not None:  # (a moved project module keeps its device's ways in the value's notes)
                moved = Value((), receiver.top)
                for atom in receiver.atoms:
                    mine = BOTTOM
                    for dev, source in _same_way(atom, targets):
                        mine = mine.join(tagged(V(self.move_module(atom, dev)), tags_of(source)))
                    moved_each[atom] = mine
                    moved = moved.join(mine)
            source = getattr(getattr(node, "func", None), "value", None)
            if not _made_here(receiver, source):  # ``nn.Linear(4, 2).cuda()``: no other reference to move
                # (moved on one way of a command-line option, ``if not args.cpu: self.model.cuda()``: that way's)
                self._note_moved_in_place(receiver, TOP if targets is None else Value(frozenset(
                    with_tags(const(dev.text), st.ways) for dev, _s in targets)), access(source, fr))
            self._rebind_receiver(node, moved, st, fr, receiver)
            if isinstance(source, ast.Name):
                self._follow_optimizers(receiver, moved, None if targets is None else frozenset(
                    dev for dev, _s in targets), st)
                _follow_containers(source.id, moved_each, st)
            if isinstance(source, ast.Call) and isinstance(source.func, ast.Name) and source.func.id == "super" \
                    and fr.func is not None and fr.func.positional and fr.func.positional[0] in st.vars:
                # ``super().to(...)`` in an override moves ``self`` in place: the rest of the override sees it moved
                this = fr.func.positional[0]
                st.vars[this] = moved
                st.kill_aliases(this)
                st.drop_overlays(this)
            return moved
        if name == "requires_grad_":
            flag = argument("torch.nn.Module.requires_grad_", args, kwargs, "requires_grad", V(const(True)))
            for atom in receiver.atoms:
                self._note_grad_flag(atom, flag, set())
            return receiver
        if name in MODULE_SELF_METHODS:
            return receiver
        if name in ("append", "extend") and receiver.atoms and not receiver.top and all(
                isinstance(a, TorchLayerAtom) and a.name == "ModuleList" for a in receiver.atoms):
            # ``self.blocks = nn.ModuleList()`` then ``self.blocks.append(Block())`` in a loop: the modules it may hold
            added = (self.iter_element(args[0]) if name == "extend" else args[0]) if args else TOP
            grown = self._module_list_with(receiver, added)
            self._rebind_receiver(node, grown, st, fr, receiver)
            return NONE
        if (name in ("append", "extend", "insert") or name == "add_module") and receiver.atoms and not receiver.top:
            # ``head.append(nn.Linear(...))`` after ``head.to(device)``: the container holds a layer on the CPU
            changed = self._container_added(name, receiver, args, kwargs)
            if changed is not None:
                self._rebind_receiver(node, changed, st, fr, receiver)
                return changed if name in ("append", "extend") else NONE  # (``append`` returns the container)
        if name in ("parameters", "buffers"):
            module_expr = getattr(getattr(node, "func", None), "value", None)
            return V(seq_of("list", join_all(_each_note(receiver, atom, self._weights(
                self._as_moved(atom, module_expr, st, fr))) for atom in receiver.atoms)))
        if name in ("named_parameters", "named_buffers"):
            weights = join_all(self._weights(atom) for atom in receiver.atoms)
            return V(seq_of("list", V(seq("tuple", (TOP, weights)))))
        keep_vars = argument("torch.nn.Module.state_dict", [], kwargs, "keep_vars", V(const(False))).consts()
        if name == "state_dict" and not args and set(kwargs) <= {"keep_vars"} and keep_vars in ([False], [True]):
            # detached snapshots of the weights where they are now: a later in-place move of the module replaces
            # its parameters' data, not theirs; ``keep_vars=True`` gives the parameters themselves. Through a
            # reference an in-place move elsewhere left behind, where they are now is not known
            module_expr = getattr(getattr(node, "func", None), "value", None)
            if any(self.moved_elsewhere(atom, module_expr, fr) for atom in receiver.atoms):
                return TOP
            weights = join_all(self._weights(atom) for atom in receiver.atoms)
            tensors = torch_tensors(weights)
            if keep_vars == [False]:
                origin = self.origin(node, fr, "state_dict()")
                tensors = [a.with_(grad=NO_GRAD, owned=False, origin=origin) for a in tensors]
            return V(DictAtom((), Value(frozenset(tensors), True)))
        if name in ("register_forward_hook",):
            hook = argument("torch.nn.Module.register_forward_hook", args, kwargs, "hook")
            for atom in receiver.atoms:
                if isinstance(atom, TorchLayerAtom) and atom.origin is not None:
                    key = (atom.origin, _HOOKS)
                    self.heap_set(key, self.heap.get(key, BOTTOM).join(hook))
            return TOP
        if name in ("register_buffer", "register_parameter") and len(args) >= 2:
            names = args[0].consts()
            if names and len(names) == 1 and isinstance(names[0], str):
                value = Value(frozenset(a.with_(owned=True) for a in torch_tensors(args[1])), args[1].top)
                self.store_attribute(receiver, names[0], value, fr)
            return NONE
        return TOP

    def _collection_values(self, atom: TorchLayerAtom) -> Value:
        """What a ModuleDict's, ParameterList's or ParameterDict's entries hold, as reading one gives it."""
        if atom.name in layer_dicts.PARAMETERS:
            return layer_dicts.parameter(atom, self.grad_flags(atom))
        return self.container_modules(atom) if atom.children else TOP

    def _collection_method(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                           node: ast.AST, st: State, fr: Frame) -> Value:
        """``.items()``/``.values()``/``.keys()`` of a ModuleDict or ParameterDict, and what adds to one
        (``update``, ``add_module``, a ParameterList's ``append``/``extend``)."""
        if receiver.top or kwargs or not all(layer_dicts.is_collection(a) for a in receiver.atoms):
            return TOP
        atoms = [a for a in receiver.atoms if isinstance(a, TorchLayerAtom)]
        if name not in layer_dicts.CHANGING:
            if name == "pop":
                return join_all(layer_dicts.lookup(a, args[0] if args else TOP, self._collection_values(a))
                                for a in atoms)
            return join_all(layer_dicts.listed(a, name, self._collection_values(a)) for a in atoms)
        given: layer_dicts.Entries | None
        if name == "add_module":
            given = [(layer_dicts.constant_key(args[0]), args[1])] if len(args) == 2 else None
        elif name == "append":
            given = [(None, args[0])] if len(args) == 1 else None
        else:
            given = layer_dicts.entries(args[0], name == "update") if len(args) == 1 else None
        changed = BOTTOM
        for atom in atoms:
            stored = None if given is None else layer_dicts.with_entries(atom, given)
            changed = changed.join(TOP if stored is None else V(stored))
        self._rebind_receiver(node, changed, st, fr, receiver)
        return changed if name in ("append", "extend") else NONE

    def _container_added(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
        """The modules after ``receiver.<name>(...)`` adds one (a Sequential's ``append``/``insert``/``extend``/
        ``add_module``, a ModuleList's ``insert``, a torchvision classifier's ``add_module``); unknown when what
        is added is not known; None: not such a call."""
        if kwargs:
            return TOP
        if is_classifier(receiver):
            return self._classifier_with_part(receiver, args[1]) if name == "add_module" and len(args) == 2 else None
        out = BOTTOM
        for atom in receiver.atoms:
            if not isinstance(atom, TorchLayerAtom) or name not in ADDING_METHODS.get(atom.name, ()):
                return None
            extended = self.iter_element(args[0]) if name == "extend" and args else None
            grown = container_added(atom, name, args, extended)
            if grown is None:
                return TOP
            out = out.join(V(grown))
        return out

    def _containers_joined(self, left: Value, right: Value) -> Value | None:
        """``blocks += [Block(d) for d in dims]`` or ``seq + nn.Sequential(...)``: a ModuleList or Sequential and
        the modules ``right`` iterates to, as ``extend`` gives them (``__iadd__`` is ``extend``; ``__add__`` is a
        new container of the same modules); None when ``left`` is not such a container."""
        if left.top or not left.atoms or not all(
                isinstance(a, TorchLayerAtom) and a.name in ("ModuleList", "Sequential") for a in left.atoms):
            return None
        if all(isinstance(a, TorchLayerAtom) and a.name == "ModuleList" for a in left.atoms):
            return self._module_list_with(left, self.iter_element(right))
        return self._container_added("extend", left, [right], {})

    @staticmethod
    def _module_list_with(lists: Value, added: Value) -> Value:
        """A ModuleList after appending ``added``: its modules, as a set (the order a loop appended them in is not
        kept; a ModuleList is iterated, not called). Something other than a module makes it unknown."""
        if added.top or not added.atoms or not all(
                isinstance(a, TorchLayerAtom) or (isinstance(a, Instance) and a.cls.has_library_base(MODULE_TYPE))
                for a in added.atoms):
            return TOP
        out = set()
        for atom in lists.atoms:
            assert isinstance(atom, TorchLayerAtom)
            children = tuple(dict.fromkeys((*atom.children, *sorted(added.atoms - set(atom.children), key=repr))))
            projects = any(isinstance(c, Instance) for c in children)
            devices = {c.dev for c in children if isinstance(c, TorchLayerAtom) and c.weights}
            dev = devices.pop() if len(devices) == 1 and not projects else None
            out.add(TorchLayerAtom(atom.name, dev, bool(devices) or projects, children, atom.origin))
        return Value(frozenset(out))

    def _weights(self, atom: Atom, seen: frozenset = frozenset()) -> Value:
        """A module's parameters: a layer's weights, a container's layers', and for a project module those of
        its attributes (layers, parameters, sub-modules) joined with unknown (what the analysis does not see)."""
        if isinstance(atom, TorchLayerAtom):
            if atom.children:
                return join_all(self._weights(c, seen) for c in atom.children)
            if atom.weights and atom.dev is not None:
                return Value(frozenset(TorchTensorAtom(atom.dev, LEAF if flag else NO_GRAD, False, owned=True,
                                                       origin=atom.origin) for flag in self.grad_flags(atom)))
            return BOTTOM if not atom.weights else TOP
        if isinstance(atom, Instance) and atom.cls.has_library_base(MODULE_TYPE) and atom not in seen:
            out = BOTTOM
            for attr, value in self.heap_attributes(atom, _note):
                self.heap_reads.add((atom, attr))
                for inner in value.atoms:
                    if isinstance(inner, TorchTensorAtom) and inner.owned and inner.grad != NON_LEAF:
                        out = out.join(V(inner))
                    elif isinstance(inner, (TorchLayerAtom, Instance)):
                        out = out.join(self._weights(inner, seen | {atom}))
            # moved as a whole to one device: the weights not seen are there too, the seen ones stand for them
            moved_to = self.__dict__.get("_moved_to", {}).get(atom)
            whole = moved_to is not None and bool(out.atoms) and not out.top and all(
                isinstance(a, TorchTensorAtom) and a.dev.text == moved_to for a in out.atoms)
            return out if whole else out.join(TOP)
        return TOP

    def move_module(self, atom: Atom, dev: TorchDev) -> Atom:
        """A module's state after ``.to(dev)``: its layers, parameters and buffers (and sub-modules') on ``dev``."""
        if isinstance(atom, TorchLayerAtom):
            children = tuple(self.move_module(c, dev) for c in atom.children)
            # a wrapper's own device (``DataParallel``'s ``device_ids[0]``) does not move with its module
            own = atom.dev if atom.name in WRAPPERS else None
            return TorchLayerAtom(atom.name, dev if atom.weights else own, atom.weights, children, atom.origin,
                                  keys=atom.keys)
        if isinstance(atom, Instance):
            if atom.cls.has_library_base(MODULE_TYPE):
                return self._moved_instance(atom, dev)
            memo: MoveMemo | None = self.__dict__.get("_move_memo")
            if memo is not None and memo.open:  # (not a module now: a kept move checks it still is not)
                memo.open[-1][1].append(atom.cls)
        return atom

    def _moved_instance(self, instance: Instance, dev: TorchDev) -> Instance:
        registry: dict = self.__dict__.setdefault("_moved", {})
        moved = registry.get((instance, dev))
        if moved is None:
            moved = registry[(instance, dev)] = Instance(instance.cls, instance.file, instance.line, instance.col,
                                                         -len(registry) - 1)
            self.__dict__.setdefault("_moved_to", {})[moved] = dev.text
            self.__dict__.setdefault("_moved_from", set()).add(instance)
            self.instances.setdefault(instance.cls, set()).add(moved)
        memo: MoveMemo | None = self.__dict__.get("_move_memo")
        if memo is None:
            memo = self.__dict__["_move_memo"] = MoveMemo()
        memo_key = (instance, dev, self.program_ways)  # (a split run's heap stores carry its ways)
        kept = memo.kept.get(memo_key)
        if kept is not None and memo.current(kept, self.heap, self.heap_owners, _move_note, self._registration_ways,
                                             _is_module_class):
            for copy in kept.copies:  # what the move would read (the run's record, the pass's reads), no change
                for attr, _value in self.heap_attributes(copy.instance, _move_note):
                    self.heap_reads.add((copy.instance, attr))
            if memo.open:
                memo.open[-1][0].extend(kept.copies)
                memo.open[-1][1].extend(kept.plain)
            return moved
        changes = self.changes.count
        ways = self._registration_ways(instance.cls)
        attributes = list(self.heap_attributes(instance, _move_note))
        registered = _registered_identities(value for _attr, value in attributes)
        # registered only through containers whose modules are all known (``nn.ModuleList`` of known layers): a
        # module a plain list holds is registered exactly when one of them holds it too (``registered``)
        plain_moves = ways == "call" or ways == "container" and any(value.top for _attr, value in attributes)
        memo.open.append(([], []))
        try:
            for attr, value in attributes:
                self.heap_reads.add((instance, attr))
                key = (moved, attr)
                value = _rebound_methods(value, instance, moved)  # ``self.post = self._mask``: now the moved one's
                self.heap_set(key, stored(self.heap.get(key), self._moved_value(value, dev, plain_moves, registered)))
        finally:
            below, plain = memo.open.pop()
        done = KeptMove((CopyRecord(instance, moved, ways, tuple(attributes),
                                    tuple(self.heap.get((moved, attr)) for attr, _value in attributes)), *below),
                        tuple(plain))
        if memo.open:
            memo.open[-1][0].extend(done.copies)
            memo.open[-1][1].extend(done.plain)
        if self.changes.count == changes:
            memo.kept[memo_key] = done
        else:
            memo.kept.pop(memo_key, None)
        return moved

    def _registration_ways(self, cls: ClassInfo) -> str | None:
        """:func:`_dynamic_registration` of ``cls``, once per analysis: a class that registers modules keeps its
        answer; one that does not is walked again only once its MRO changed (a base it gains may register)."""
        dynamic: dict = self.__dict__.setdefault("_dynamic", {})  # per analysis, as the copies above
        ways = dynamic.get(cls)
        if ways is not None:
            return ways
        unregistered: dict = self.__dict__.setdefault("_unregistered", {})  # class -> the MRO walked
        mro = cls.mro()
        if unregistered.get(cls) == mro:
            return None
        ways = _dynamic_registration(cls)
        if ways is None:
            unregistered[cls] = mro
        else:
            dynamic[cls] = ways
        return ways

    def _note_moved_in_place(self, receiver: Value, devices: Value, via: str | None) -> None:
        """A module moves in place: every other reference to it (a trainer's ``self.model``, the caller's
        ``model``) now holds a module that is on ``devices`` after the move and where it was before it.
        ``via``: the name the move went through, in its function (that name is rebound, flow-sensitively)."""
        for atom in receiver.atoms:
            key = _identity(atom)
            if key is not None:
                for sentinel, value in ((_MOVED, devices), (_MOVED_VIA, V(const(via)) if via else TOP)):
                    old = self.heap.get((key, sentinel))
                    self.heap_set((key, sentinel), value if old is None else old.join(value))

    def world_device_choice(self, body: Value, orelse: Value) -> bool | None:
        """In a world of ``torch.cuda.is_available()`` (:mod:`analyzer.engine.worlds`), a choice between a CUDA
        device and the CPU by a condition the analysis does not know (``"cuda" if use_cuda else "cpu"`` with
        ``use_cuda = not args.no_cuda and torch.cuda.is_available()``) is the world's: CUDA where it is
        available, the CPU where not. Joining both would pair a model moved to one with a batch moved to the
        other (the analysis is not relational), a mismatch no run makes. True: the first branch, False: the
        second, None: not such a choice (both are kept)."""
        cuda = self.assumption(CUDA_AVAILABLE)
        if cuda is None:
            return None
        # where CUDA is not available: the CPU, not another accelerator (MPS in the world that has it)
        wanted = "cuda" if cuda else "mps" if self.assumption(MPS_AVAILABLE) else "cpu"
        kinds = (_device_kind(body, wanted), _device_kind(orelse, wanted))
        if set(kinds) != {True, False}:
            return None
        return kinds[0]

    def world_branch(self, true: State, false: State) -> bool | None:
        """The same choice for an ``if`` statement whose test the analysis does not know: the branch whose
        device variables are the world's (True: the first, False: the second), when every variable the branches
        leave on different devices agrees; None otherwise (both are joined)."""
        if self.assumption(CUDA_AVAILABLE) is None:
            return None
        choices = set()
        for ours, others in zip(true.value_maps(), false.value_maps(), strict=True):
            for name in ours.keys() | others.keys():
                mine, theirs = ours.get(name), others.get(name)
                if mine is None or theirs is None or mine is theirs or mine == theirs:
                    continue
                chosen = self.world_device_choice(mine, theirs)
                if chosen is not None:
                    choices.add(chosen)
        return choices.pop() if len(choices) == 1 else None

    def container_modules(self, container: TorchLayerAtom) -> Value:
        """The modules a ``ModuleList`` or ``Sequential`` holds, as iterating it gives them; one that ``.to()`` moved
        in place (``for layer in layers: layer.cuda()``) is where the analysis cannot say at this point: unknown."""
        out = BOTTOM
        for child in container.children:
            key = _identity(child)
            out = out.join(TOP if key is not None and self.heap_get((key, _MOVED)) is not None else V(child))
        return out

    def moved_elsewhere(self, atom: Atom, func: ast.AST | None, fr: Frame) -> bool:
        """Whether ``atom``, called through ``func``, is a module (a library layer by where it was created, an
        instance of a project module) that ``.to()`` moved in place through another name or in another
        function, to a device it is not on here: a reference the move did not rebind. When the move
        happened, the analysis does not know, so uses of it stay silent."""
        key = _identity(atom)
        if key is None:
            return False
        devices = _moves_on_way(self.heap_get((key, _MOVED)), tags_of(atom) | self.program_ways)
        if devices is None:
            return False
        via = self.heap_get((key, _MOVED_VIA))
        here = access(func, fr)
        if via is not None and not via.top and here is not None and via.consts() == [here]:
            return False  # moved through this very name here: the name was rebound where the move happened
        if isinstance(atom, Instance):
            return True  # the moved copies are other instances: this one is the reference left behind
        weights_on = _weight_devices(atom, self.__dict__.get("_moved_to", {})) if isinstance(atom, TorchLayerAtom) \
            else set()
        return devices.top or len(weights_on) != 1 or any(c not in weights_on for c in devices.consts() or ())

    def moved_reference(self, atom: Atom, st: State) -> Atom | None:
        """A module that ``.to()`` moved in place elsewhere, read through a reference the move left behind
        (``self.online_model`` kept by an EMA wrapper, then ``model.cuda()`` in the script): the moved module,
        when the move went to one known device. A use is taken to come after the move, as a superseded
        attribute's is; None when the device is not known."""
        key = _identity(atom)
        ways = tags_of(atom) | self.program_ways
        devices = _moves_on_way(self.heap_get((key, _MOVED)), ways) if key is not None else None
        texts = devices.consts() if devices is not None and not devices.top else None
        if devices is None or not texts or len(texts) != 1 or not isinstance(texts[0], str) \
                or not tags_of(next(iter(devices.atoms))) <= ways:
            return None  # (a move on one way of a choice, ``if use_cuda: model.cuda()``: where it is, unknown)
        dev = self.parse_device(texts[0], st)
        return None if dev is None else self.move_module(atom, dev)

    def _as_moved(self, atom: Atom, module_expr: ast.AST | None, st: State, fr: Frame) -> Atom:
        if not _kept_reference(module_expr) or not self.moved_elsewhere(atom, module_expr, fr):
            return atom
        moved = self.moved_reference(atom, st)
        return atom if moved is None else moved

    def self_move(self, node: ast.Assign, st: State, fr: Frame) -> Value | None:
        """For ``self.x = self.x.to(d)`` (``.cuda()``, ``.cpu()``), and for ``model.x = t`` from outside the
        module's class (a tensor attribute replaced after construction): the tensors ``x`` holds now."""
        call = node.value
        if len(node.targets) == 1 and _moves_own_item(call, node.targets[0]):
            self.__dict__["_item_move"] = node.targets[0]  # ``grid[i] = grid[i].to(d)``: for :meth:`store_item`
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Attribute) \
                or _dotted(node.targets[0]) is None:
            return None
        target = node.targets[0]
        moved = isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
            and call.func.attr in T.MOVE_METHODS and _dotted(call.func.value) == _dotted(target)
        if _moves_each_item(call, target):  # ``self.shadow = [p.to(device) for p in self.shadow]``
            if self.sweeping:
                return None
            before = self.eval(target, st.copy(), fr, quiet=True)
            return before if before.atoms and not before.top and all(
                isinstance(a, SeqAtom) and a.elem.atoms and all(isinstance(e, TorchTensorAtom) for e in a.elem.atoms)
                for a in before.atoms) else None
        if not moved and not self._replaced_from_outside(target, st, fr):
            return None
        if moved and self.sweeping:
            return None  # a method no analysed code calls (an input holder's ``to()`` the program forgets)
        before = self.eval(target, st.copy(), fr, quiet=True)
        if not before.atoms or before.top:
            return None
        # a project object's own move method (``self.inputs = self.inputs.to(device)`` on a ``BatchEncoding``)
        # supersedes the object as a tensor's move does
        method = call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else None
        projects = moved and method is not None and all(
            isinstance(a, Instance) and a.cls.lookup(method) is not None for a in before.atoms)
        return before if before.only(TorchTensorAtom) or projects else None

    def _replaced_from_outside(self, target: ast.Attribute, st: State, fr: Frame) -> bool:
        """``model.mean = ckpt["mean"].cuda()``: code outside the module's class reconfigures one module after
        building it; its methods called later read the new tensor (the one ``__init__`` made is superseded)."""
        owner = self.eval(target.value, st.copy(), fr, quiet=True)
        atom = next(iter(owner.atoms)) if len(owner.atoms) == 1 and not owner.top else None
        return isinstance(atom, Instance) and atom.cls.has_library_base(MODULE_TYPE) \
            and (fr.func is None or fr.func.cls is not atom.cls)

    def supersede_moved_attribute(self, target: ast.Attribute, before: Value, after: Value, st: State,
                                fr: Frame) -> None:
        """A method that moves an attribute and stores it back supersedes it, as a module's in-place move does:
        the other methods read the moved tensor (not the one from before the move)."""
        self.supersede_attribute(self.eval(target.value, st.copy(), fr, quiet=True), target.attr, before, after, fr)

    def _moved_value(self, value: Value, dev: TorchDev, plain_moves: bool,
                     registered: frozenset[object] = frozenset(), in_plain: bool = False) -> Value:
        """An attribute after its module's ``.to(dev)``. What a plain list, tuple or dict holds is not
        registered, so it stays where it is (the classic ``self.layers = [nn.Linear(...)]``), unless the
        class registers modules by other means (``add_module``, ``nn.ModuleList`` ...): the same layers may
        then be registered too, and move in place. A module a plain list shares with a registered container
        (``self.heads = [block[0] for block in self.blocks]``, ``registered``: the identities of what the
        module registers) is the same object, and moves with it."""
        atoms: set[Atom] = set()
        for atom in value.atoms:
            if isinstance(atom, TorchTensorAtom) and atom.owned and not in_plain:
                # parameters stay leaves: the module moves their data; where they were made no longer matters
                # (the moved module's ways are its value's notes)
                atoms.add(untagged(atom.with_(dev=dev)))
            elif isinstance(atom, SeqAtom):
                plain = in_plain or not plain_moves
                items = None if atom.items is None else tuple(
                    self._moved_value(v, dev, plain_moves, registered, plain) for v in atom.items)
                atoms.add(SeqAtom(atom.kind, items, self._moved_value(atom.elem, dev, plain_moves, registered, plain)))
            elif in_plain and _identity(atom) not in registered:
                atoms.add(atom)
            else:
                atoms.add(self.move_module(atom, dev))
        return Value(frozenset(atoms), value.top)

    def _rebind_receiver(self, node: ast.AST, value: Value, st: State, fr: Frame, before: Value = BOTTOM) -> None:
        """``model.to(d)`` as a statement moves ``model`` in place: the name now holds the moved module.

        On an attribute (``self.model.to(self.device)`` in a trainer's setup) the moved module supersedes the
        one the attribute held: the object moved, so whoever reads the attribute sees it moved (a read that
        runs before the move, in an order the heap does not keep, is then not reported: quiet rather than a
        warning on every trainer)."""
        func = getattr(node, "func", None)
        receiver = getattr(func, "value", None)
        if isinstance(receiver, ast.Name) and receiver.id in st.vars:
            st.vars[receiver.id] = value
            st.kill_aliases(receiver.id)
            st.drop_overlays(receiver.id)
        elif isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name):
            owner = self.eval(receiver.value, st.copy(), fr, quiet=True)
            self.supersede_attribute(owner, receiver.attr, before, value, fr)
            st.overlays[Overlay(receiver.value.id, receiver.attr)] = value

    def torch_module_attribute(self, atom: Instance, attr: str, node: ast.expr | None, st: State,
                               fr: Frame) -> Value | None:
        """What nn.Module gives an instance of a project subclass: ``__call__`` is ``forward``."""
        if attr == "__call__":
            forward = atom.cls.lookup("forward")
            return self._bind_class_attr(forward, atom, node, st, fr) if forward is not None else None
        if attr in MODULE_METHODS:
            return V(BoundShim(atom, attr))
        if attr in _LIGHTNING_DEVICE_ATTRIBUTES:
            return self._lightning_device_attribute(atom, attr)
        return None

    def _lightning_device_attribute(self, atom: Instance, attr: str) -> Value | None:
        """``self.device`` / ``self.on_gpu`` of a LightningModule the Trainer moved (unknown otherwise)."""
        text = self.__dict__.get("_moved_to", {}).get(atom)
        frameworks = self.model_named("entry_points")  # (the entry points' model knows Lightning's classes)
        if text is None or frameworks is None or not any(frameworks.is_lightning_class(c)
                                                         for c in atom.cls.mro()):
            return None
        kind, _, index = text.partition(":")
        if attr == "on_gpu":
            return V(const(kind == "cuda"))
        return V(TorchDeviceAtom(TorchDev(kind, int(index) if index else None)))


#: what a LightningModule says of where it is (a moved one: where it was moved)
_LIGHTNING_DEVICE_ATTRIBUTES = frozenset({"device", "on_gpu"})


def _same_way(atom: Atom, targets: list[tuple[TorchDev, object]]) -> list[tuple[TorchDev, object]]:
    """The devices ``atom`` can be moved to: those whose device value is on a way of a choice ``atom`` is on too
    (``x.to(args.device)`` with ``x`` and the device placed by one option), all where none is."""
    mine = tags_of(atom)
    kept = [t for t in targets if consistent(mine, tags_of(t[1]))] if mine else targets
    return kept or targets


def _on_cuda(possibility: Possibility) -> bool:
    """Whether an operand of the combination is on a CUDA device."""
    return any(getattr(getattr(atom, "dev", None), "type", None) == "cuda" for _role, atom in possibility.operands)


def _parameter_elements(params: Value) -> tuple[list[TorchTensorAtom], bool]:
    """The tensors of an optimizer's parameter list (also inside ``[{"params": [...]}]`` groups)."""
    out: list[TorchTensorAtom] = []
    unknown = params.top
    for atom in params.atoms:
        if isinstance(atom, SeqAtom):
            for item in (atom.items if atom.items is not None else (atom.elem,)):
                for inner in item.atoms:
                    if isinstance(inner, DictAtom):
                        found = inner.get("params")
                        sub, sub_unknown = _parameter_elements(found if found is not None else TOP)
                        out.extend(sub)
                        unknown = unknown or sub_unknown
                    elif isinstance(inner, TorchTensorAtom):
                        out.append(inner)
                    else:
                        unknown = True
                unknown = unknown or item.top
        elif isinstance(atom, TorchTensorAtom):
            out.append(atom)
        else:
            unknown = True
    return out, unknown


#: Creation functions whose sizes are their positional arguments (or one sequence of them).
_SIZED_CREATORS = frozenset({"zeros", "ones", "empty", "rand", "randn"})


def _sampled_zero_dim(params_zero_dim: bool | None, args: list[Value], kwargs: dict[str, Value]) -> bool | None:
    """Whether ``dist.sample(sample_shape)`` is 0-dim: a sample shape of known length decides with the parameters'
    rank (an empty one keeps it); an unknown one (``mu.shape``) leaves it unknown."""
    shape = args[0] if args else kwargs.get("sample_shape")
    if shape is None:
        return params_zero_dim
    lengths = {len(a.items) for a in shape.atoms if isinstance(a, SeqAtom) and a.items is not None}
    if shape.top or len(lengths) != 1 or not shape.only(SeqAtom):
        return None
    return False if lengths.pop() else params_zero_dim


def _created_ndim(name: str, args: list[Value], kwargs: dict[str, Value]) -> int | None:
    """The number of dimensions of ``torch.<name>(...)`` where the call says it (``None``: not known)."""
    if name in ("tensor", "as_tensor"):
        return data_ndim(args[0] if args else kwargs.get("data"))
    if name in ("arange", "linspace", "logspace", "randperm") or name.endswith("_window"):
        return 1
    if name == "eye":
        return 2
    sizes = args[:1] if name in ("full", "randint") else args
    if name == "randint":
        sizes = [a for a in args if a.only(SeqAtom)][:1]
    if name not in _SIZED_CREATORS | {"full", "randint"} or not sizes or "size" in kwargs:
        return None
    if len(sizes) == 1 and sizes[0].only(SeqAtom) and len(sizes[0].atoms) == 1:
        items = next(iter(sizes[0].atoms)).items  # type: ignore[attr-defined]
        return len(items) if items is not None else None
    if all(len(v.atoms) == 1 and not v.top and v.only(Const, NumberAtom) for v in sizes):
        return len(sizes) if name in _SIZED_CREATORS else None
    return None


def _index_tensors(key: Value) -> Iterable[Atom]:
    for atom in key.atoms:
        if isinstance(atom, TorchTensorAtom):
            yield atom
        elif isinstance(atom, SeqAtom) and atom.kind == "tuple" and atom.items is not None:
            for item in atom.items:
                yield from (a for a in item.atoms if isinstance(a, TorchTensorAtom))


#: The names of a layer's positional arguments after its input (for the operands' roles in messages).
#: Layers whose one parameter is ``weight``: replacing it puts the whole layer where the new weight is.
_WEIGHT_ONLY_LAYERS = frozenset({"Embedding", "EmbeddingBag"})
_DECODER_ARGUMENTS = ("memory", "tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask")
_LATER_ARGUMENTS = {"RNN": ("hx",), "LSTM": ("hx",), "GRU": ("hx",), "RNNCell": ("hx",), "LSTMCell": ("hx",),
                    "GRUCell": ("hx",), "MultiheadAttention": ("key", "value"), "Bilinear": ("input2",),
                    "TransformerEncoder": ("mask", "src_key_padding_mask"),
                    "TransformerEncoderLayer": ("src_mask", "src_key_padding_mask"),
                    "TransformerDecoder": _DECODER_ARGUMENTS, "TransformerDecoderLayer": _DECODER_ARGUMENTS,
                    "Transformer": ("tgt", "src_mask", "tgt_mask", "memory_mask", "src_key_padding_mask",
                                    "tgt_key_padding_mask", "memory_key_padding_mask")}
#: A transformer's self-attention mask and the padding mask of the same attention. A causal mask with no padding
#: mask beside it is dropped for the ``is_causal`` hint (``F.multi_head_attention_forward``), so a CPU
#: ``generate_square_subsequent_mask(n)`` runs on the GPU; whether a mask is causal is a matter of its values,
#: which the analysis does not know: such a mask alone is not checked.
_CAUSAL_MASKS = {"mask": "src_key_padding_mask", "src_mask": "src_key_padding_mask",
                 "tgt_mask": "tgt_key_padding_mask"}


def _more_tensor_operands(args: list[Value], kwargs: dict[str, Value],
                          layer: str) -> list[tuple[str, Value, bool, bool]]:
    """A layer's tensor arguments after its input (an LSTM's ``(h0, c0)``, attention's key and value): each on
    the weights' device too. A tuple or list counts item by item; an argument with no known tensor is left out
    (it adds no failure the known ones do not already decide)."""
    names = _LATER_ARGUMENTS.get(layer, ())
    named = [(names[i] if i < len(names) else f"arg{i + 2}", value) for i, value in enumerate(args)]
    named += [(key, value) for key, value in kwargs.items() if key != "input"]
    if layer.startswith("Transformer"):
        given = {role for role, value in named if value.consts() != [None]}
        named = [(role, value) for role, value in named
                 if role not in _CAUSAL_MASKS or _CAUSAL_MASKS[role] in given]
    out = []
    for role, value in named:
        for sub_role, item in _argument_parts(role, value):
            if torch_tensors(item):
                out.append((sub_role, item, False, False))
    return out


def _argument_parts(role: str, value: Value) -> list[tuple[str, Value]]:
    """An argument as the tensors it passes: a tensor as itself, a tuple or list item by item (``hx[0]``). A state
    that may be one of several tuples (``self.hidden`` made on the CPU in ``__init__``, then stored from the
    layer's output) is each position's join over them, each item with its tuple's choice tags. A tuple of unknown
    length (``tuple(h.detach() for h in hidden)``) adds only the unknown: its elements have lost which way of a
    choice each came from (a CPU element of one run would meet the GPU input of another)."""
    seqs = [a for a in value.atoms if isinstance(a, SeqAtom) and a.kind in ("tuple", "list")]
    if not seqs:
        return [(role, value)]
    length = max((len(a.items) for a in seqs if a.items is not None), default=0)
    unknown = value.top or any(a.items is None for a in seqs)
    parts: list[Value] = [Value((), unknown) for _ in range(length)]
    for atom in seqs:
        for j, item in enumerate(atom.items or ()):
            parts[j] = parts[j].join(tagged(item, tags_of(atom)))
    rest = Value(frozenset(a for a in value.atoms if a not in seqs), value.top)
    named = [(f"{role}[{j}]", part) for j, part in enumerate(parts)]
    return [*named, (role, rest)] if torch_tensors(rest) else named


def _each_note(receiver: Value, atom: Atom, weights: Value) -> Value:
    """``weights`` of the module ``atom`` with the ways ``receiver``'s notes keep for it: the parameters of a model
    moved to one of a choice's devices (``model.to(device)`` where ``--cuda`` picked it) are on that way only, so
    ``next(self.parameters()).new_zeros(...)`` meets the batches of that way and not the other's."""
    ways = (receiver.notes or {}).get(atom)
    if not ways:
        return weights
    return join_all(tagged(weights, way) for way in ways)


def _legacy_type_device(value: Value) -> str | None:
    """Where a tensor type sends a tensor: "cuda" (``torch.cuda.FloatTensor``), "cpu" (``torch.FloatTensor``),
    "same" (a dtype: a cast in place), or None (unknown)."""
    kinds = set()
    for atom in value.atoms:
        if isinstance(atom, TorchRef):
            name = atom.path.rpartition(".")[2]
            kinds.add(("cuda" if ".cuda." in f".{atom.path}" else "cpu") if name in LEGACY_TENSOR_TYPES else "same")
        elif isinstance(atom, Const) and isinstance(atom.value, str) and \
                atom.value.rpartition(".")[2] in LEGACY_TENSOR_TYPES:
            kinds.add("cuda" if atom.value.startswith("torch.cuda.") else "cpu")
        else:
            return None
    return kinds.pop() if len(kinds) == 1 and not value.top else None




def _numpy_inputs(value: Value, depth: int = 0) -> list[tuple[str, Value]]:
    """What a numpy function converts of an argument: a tensor, or each tensor in a list or tuple
    (``np.mean(losses)`` converts every element). Of a list whose length the analysis does not know
    there may be no element at all, and an argument that may be something else than the sequence
    may convert nothing: those elements join the unknown (a failure on some paths)."""
    seqs = [a for a in value.atoms if isinstance(a, SeqAtom) and a.kind in ("list", "tuple")]
    if not seqs or depth > 1:
        return [("tensor" if depth == 0 else "element", value)] if torch_tensors(value) else []
    rest = Value(frozenset(a for a in value.atoms if not isinstance(a, SeqAtom)), value.top)
    out = [("tensor", rest.join(TOP))] if torch_tensors(rest) else []
    alone = len(seqs) == 1 and not rest.atoms and not value.top
    for atom in seqs:
        items = list(atom.items) if atom.items is not None else [atom.elem.join(TOP)]
        for item in items:
            out.extend(("element", inner if alone else inner.join(TOP)) for _role, inner in
                       _numpy_inputs(item, depth + 1))
    return out


def _head_owner(target: ast.expr, st: State) -> Value | None:
    """For ``model.fc = ...`` where ``model`` names a torchvision classifier: the classifier."""
    if not isinstance(target, ast.Attribute) or target.attr not in HEADS or not isinstance(target.value, ast.Name):
        return None
    owner = st.vars.get(target.value.id)
    return owner if owner is not None and is_classifier(owner) else None


def _one_or_items(value: Value) -> list[Value] | None:
    """A tensor as one item, a list or tuple of known length as its items; None otherwise."""
    if value.atoms and not value.top and value.only(TorchTensorAtom):
        return [value]
    return _sequence_items(value)


def _one_kind_items(value: Value) -> list[Value] | None:
    """A list of unknown length whose items are all the one module made at one place (``cells.append(Cell())``
    in a loop): that module, once (a ``ModuleList`` holds its modules as a set); None otherwise."""
    atom = next(iter(value.atoms)) if len(value.atoms) == 1 and not value.top else None
    if isinstance(atom, SeqAtom) and atom.items is None and len(atom.elem.atoms) == 1 and not atom.elem.top:
        return [atom.elem]
    return None


def _sequence_items(value: Value) -> list[Value] | None:
    if len(value.atoms) != 1 or value.top:
        return None
    atom = next(iter(value.atoms))
    if isinstance(atom, SeqAtom) and atom.items is not None:
        return list(atom.items)
    return None


def _dotted(expr: ast.AST) -> str | None:
    """``self.x`` as "self.x" (names and attributes only; load or store alike)."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    return ".".join([expr.id, *reversed(parts)]) if isinstance(expr, ast.Name) else None


def _weight_devices(layer: TorchLayerAtom, moved_to: dict[Atom, str]) -> set[str | None]:
    """The devices of a layer's weights (a container's: its layers' and project modules'; ``None`` for one not
    known; ``moved_to``: the device of each instance a ``.to()`` made)."""
    if layer.children:
        return {dev for child in layer.children
                for dev in (_weight_devices(child, moved_to) if isinstance(child, TorchLayerAtom)
                            else {moved_to.get(child)})}
    return {layer.dev.text if layer.dev is not None else None} if layer.weights else set()


def _device_kind(value: Value, wanted: str) -> bool | None:
    """True when every possibility of ``value`` names a device of type ``wanted`` (a string or a
    ``torch.device``), False when every one names a device of another type, None otherwise."""
    kinds = set()
    for atom in value.atoms:
        if isinstance(atom, TorchDeviceAtom):
            kinds.add(atom.dev.type == wanted)
        elif isinstance(atom, Const) and isinstance(atom.value, str) and atom.value.split(":", 1)[0] in DEVICE_TYPES:
            kinds.add(atom.value.split(":", 1)[0] == wanted)
        else:
            return None
    return kinds.pop() if len(kinds) == 1 and not value.top else None


def _unregistered(atom: Atom, depth: int = 0) -> Atom:
    """A plain container's tensors as a module attribute holds them: not registered, so not the module's."""
    if isinstance(atom, TorchTensorAtom):
        return atom.with_(owned=False) if atom.owned else atom
    if depth > 1:
        return atom
    if isinstance(atom, DictAtom):
        rest = atom.rest
        return DictAtom(tuple((k, _plain(v, depth)) for k, v in atom.items),
                        _plain(rest, depth) if rest is not None else None)
    if isinstance(atom, SeqAtom):
        return SeqAtom(atom.kind, tuple(_plain(v, depth) for v in atom.items) if atom.items is not None else None,
                       _plain(atom.elem, depth))
    return atom


def _plain(value: Value, depth: int) -> Value:
    return Value(frozenset(_unregistered(a, depth + 1) for a in value.atoms), value.top)


def _made_here(value: Value, expr: ast.AST | None) -> bool:
    """Is every module ``value`` holds created by the call ``expr`` itself (a constructor's result, which nothing
    else refers to yet)?"""
    if not isinstance(expr, ast.Call) or value.top or not value.atoms:
        return False
    for atom in value.atoms:
        where = atom.origin if isinstance(atom, TorchLayerAtom) else atom if isinstance(atom, Instance) else None
        if where is None or (where.line, where.col) != (expr.lineno, expr.col_offset):
            return False
    return True


def access(expr: ast.AST | None, fr: Frame) -> str | None:
    """``scope:dotted.name`` of a reference (``model``, ``self.model``) in the running function or module."""
    dotted = _dotted(expr) if expr is not None else None
    if dotted is None:
        return None
    scope = f"{id(fr.func.node)}" if fr.func is not None else fr.module.name
    return f"{scope}:{dotted}"


def _moves_own_item(value: ast.AST, target: ast.AST) -> bool:
    """``obj.grid[i] = obj.grid[i].to(device)`` (``.cuda()``, ``.cpu()``): an item replaced by its moved self."""
    return isinstance(target, ast.Subscript) and isinstance(value, ast.Call) \
        and isinstance(value.func, ast.Attribute) and value.func.attr in T.MOVE_METHODS \
        and ast.dump(value.func.value) == ast.dump(target, annotate_fields=True).replace("ctx=Store()", "ctx=Load()")


def _moves_each_item(value: ast.AST, target: ast.Attribute) -> bool:
    """``[p.to(device) for p in self.x]`` stored back into ``self.x`` (each item moved, or moved one way or
    another: ``p.to(d, dtype) if p.is_floating_point() else p.to(d)``)."""
    if not isinstance(value, ast.ListComp) or len(value.generators) != 1:
        return False
    gen = value.generators[0]
    if gen.ifs or not isinstance(gen.target, ast.Name) or _dotted(gen.iter) != _dotted(target):
        return False
    name = gen.target.id
    ends = [value.elt.body, value.elt.orelse] if isinstance(value.elt, ast.IfExp) else [value.elt]
    return all(isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in T.MOVE_METHODS
               and isinstance(e.func.value, ast.Name) and e.func.value.id == name for e in ends)


def _int_positions(key: Value) -> int:
    """How many dimensions an index of plain ints takes away (``t[i]``: 1, ``t[i, j]``: 2); 0 when the index
    is anything else (a slice, ``None``, a tensor, not known)."""
    def is_int(value: Value) -> bool:
        return bool(value.atoms) and not value.top and all(
            isinstance(a, NumberAtom) and a.tname == "int" or isinstance(a, Const) and type(a.value) is int
            for a in value.atoms)

    if is_int(key):
        return 1
    atom = next(iter(key.atoms)) if len(key.atoms) == 1 and not key.top else None
    if isinstance(atom, SeqAtom) and atom.kind == "tuple" and atom.items and all(is_int(v) for v in atom.items):
        return len(atom.items)
    return 0


def _kept_reference(expr: ast.AST | None) -> bool:
    """Whether a module is reached through an object's attribute (``self.online_model``): a reference the
    object keeps, which an in-place move through another name reaches (a name's value is followed instead)."""
    return isinstance(expr, ast.Attribute)


def _any_position(key: Value) -> bool:
    """Whether ``key`` is an index whose value is not known but which can only be an int (a loop's ``i``, an
    int the analysis cannot bound): a container's item for it is one of its items."""
    return bool(key.atoms) and not key.top and all(
        isinstance(a, NumberAtom) and a.tname == "int" or isinstance(a, Const) and type(a.value) is int
        for a in key.atoms)


def _moves_on_way(devices: Value | None, mine: frozenset) -> Value | None:
    """The in-place moves of a module (the devices noted) that its ways (``mine``: its own, and the run's) allow: a
    layer kept on the CPU on one way of an option was not moved by the ``.cuda()`` of the other way (None: no such
    move)."""
    if devices is None or devices.top or not mine:
        return devices
    kept = frozenset(a for a in devices.atoms if consistent(tags_of(a), mine))
    return None if not kept else devices if kept == devices.atoms else Value(kept)


def _identity(atom: Atom) -> object | None:
    """What stays the same object across an in-place ``.to()``: a layer's creation site, a module instance."""
    if isinstance(atom, TorchLayerAtom) and (atom.weights or atom.children) and atom.origin is not None:
        return atom.origin
    if isinstance(atom, Instance) and atom.cls.has_library_base(MODULE_TYPE):
        return atom
    return None


def _at_least_1d_rank(name: str, ndim: int | None) -> int | None:
    """The rank of ``t.unsqueeze(d)`` (one more) or ``t.flatten(...)`` (1 for a 0-dim tensor; else it depends on
    the dimensions flattened) for a tensor of rank ``ndim``."""
    if ndim is None:
        return None
    if name == "unsqueeze":
        return ndim + 1
    return 1 if ndim == 0 else None


def _reshaped_rank(name: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST) -> int | None:
    """The number of dimensions ``t.view(a, b, c)``, ``t.reshape((a, b))`` or ``t.permute(2, 0, 1)`` gives: one
    per size or dimension written (whatever their values); None when it is not written out (``*shape``, a
    dtype, one argument the analysis does not know)."""
    if name not in ("view", "reshape", "permute") or kwargs or not args or not isinstance(node, ast.Call) \
            or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    if len(args) > 1:
        return len(args)  # (several arguments: each one size or dimension)
    only = args[0]
    if only.top or len(only.atoms) != 1:
        return None
    atom = next(iter(only.atoms))
    if isinstance(atom, SeqAtom):
        return len(atom.items) if atom.items is not None else None
    if isinstance(atom, NumberAtom) or isinstance(atom, Const) and type(atom.value) is int:
        return 1
    return None


#: Sequence ops that raise on an empty sequence ("expected a non-empty list of Tensors").
def _shown(operands: list[T.Operand], combo: tuple[TorchTensorAtom, ...]) -> list[T.Operand]:
    """The operands with their devices as a message shows them (a GPU of unknown index: ``cuda:<local_rank>``);
    one device string stays one (each is shown as its first tensor's)."""
    shown: dict[str, str] = {}
    for atom in combo:
        shown.setdefault(atom.dev.text, atom.dev.shown)
    if all(text == seen for text, seen in shown.items()):
        return operands
    return [dataclasses.replace(o, device=shown.get(o.device, o.device)) for o in operands]


def device_expression(call: ast.AST | None) -> ast.expr | None:
    """The expression a call gives its device by: ``device=`` (``other=``), else its first argument (``.cuda(i)``,
    ``.to(i)``, ``torch.device(i)``)."""
    if not isinstance(call, ast.Call):
        return None
    named = next((k.value for k in call.keywords if k.arg in ("device", "other")), None)
    return named if named is not None else call.args[0] if call.args else None


def index_name(index: ast.expr | None) -> str | None:
    """What a GPU index of unknown value is named by where it is given: a variable or parameter (``local_rank``),
    an attribute of one (``args.local_rank``, ``self.rank``); None for anything else (a call, arithmetic)."""
    node = index
    while isinstance(node, ast.Attribute):
        node = node.value
    return ast.unparse(index) if index is not None and isinstance(node, ast.Name) else None


def _unknown_index(atom: TorchDeviceAtom | TorchTensorAtom) -> bool:
    """On a GPU whose index the analysis does not know (``TorchDev("cuda", None)``, shown ``cuda:<local_rank>``):
    never the CPU; the same device as another such one (one process's GPU), undecided beside a GPU of known
    index."""
    return atom.dev.index is None and atom.dev.type == "cuda" and not getattr(atom, "bare", False)


def _index_value(atom: TorchDeviceAtom | TorchTensorAtom) -> Value:
    """``device.index`` / ``t.get_device()``: unknown for a GPU of unknown index."""
    return TOP if _unknown_index(atom) else V(const(atom.dev.index))


def _index_undecided(combo: Iterable[TorchTensorAtom]) -> bool:
    """Do these tensors put a GPU of unknown index beside a GPU of known index?"""
    indexes = {a.dev.index for a in combo if a.dev.type == "cuda"}
    return None in indexes and len(indexes) > 1


def broadcast_rank(tensors: list[TorchTensorAtom]) -> int | None:
    """The rank of an elementwise op's result (broadcasting): the largest of its tensors' ranks, all known."""
    return broadcast_ndim(a.ndim for a in tensors)


def matmul_rank(tensors: list[TorchTensorAtom]) -> int | None:
    """The rank of ``a @ b``: a vector on either side takes its dimension away (two vectors: a number)."""
    if len(tensors) != 2 or tensors[0].ndim is None or tensors[1].ndim is None:
        return None
    left, right = tensors[0].ndim, tensors[1].ndim
    if left == 0 or right == 0:
        return None  # (refused: a matrix product of a number)
    if left == 1 or right == 1:
        return left + right - 2
    return max(left, right)


def _same_rank(tensors: list[TorchTensorAtom]) -> int | None:
    ranks = {a.ndim for a in tensors}
    return ranks.pop() if len(ranks) == 1 else None


def _stacked_rank(tensors: list[TorchTensorAtom]) -> int | None:
    rank = _same_rank(tensors)
    return None if rank is None else rank + 1


#: the rank of a sequence op's result from its tensors' (``cat`` keeps it, ``stack`` adds one)
SEQUENCE_RANKS: dict[str, Callable[[list[TorchTensorAtom]], int | None]] = {
    "cat": _same_rank, "concat": _same_rank, "concatenate": _same_rank, "stack": _stacked_rank}

#: What splits a tensor into a tuple of pieces on its device (as ``t.split(...)`` and ``torch.split(t, ...)``).
SPLITTING_OPS = frozenset({"unbind", "split", "chunk", "tensor_split"})
NONEMPTY_SEQUENCE_OPS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack"})

#: Methods whose result has a dimension even for a 0-dim tensor.
AT_LEAST_1D = frozenset({"unsqueeze", "flatten"})

#: a tensor's ``dtype`` (``torch.dtype``, the class, stands for a dtype the analysis does not know)
UNKNOWN_DTYPE = TorchRef("torch.dtype")


def _maybe_cast(node: ast.AST) -> bool:
    """``t.to(x)`` with ``x`` unknown, named like a dtype (``t.to(dtype)``, ``t.to(self.compute_dtype)``): maybe a
    cast, which the observer does not count as a discarded move."""
    if not isinstance(node, ast.Call) or any(k.arg == "device" for k in node.keywords) or len(node.args) != 1:
        return False
    dotted = _dotted(node.args[0])
    return dotted is not None and "type" in dotted.rpartition(".")[2].lower()


def _project_parameters(expr: ast.AST | None, st: State) -> bool:
    """Is ``expr`` ``model.parameters()`` with ``model`` a name holding project modules (the parameters the
    analysis sees are theirs; the rest, unknown, move with them)?"""
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "parameters"
            and not expr.args and not expr.keywords and isinstance(expr.func.value, ast.Name)):
        return False
    modules = st.vars.get(expr.func.value.id)
    return modules is not None and not modules.top and bool(modules.atoms) and all(
        isinstance(a, Instance) and a.cls.has_library_base(MODULE_TYPE) for a in modules.atoms)


_REGISTRATION_WORDS = tuple(sorted(name.encode() for name in DYNAMIC_REGISTRATION))


def _dynamic_registration(cls: ClassInfo) -> str | None:
    """How ``cls`` or a project base may register a module besides an attribute: "call" (``add_module``,
    ``setattr`` ...: what it registers is not an attribute the analysis reads), "container" (only through
    ``nn.ModuleList`` / ``ModuleDict`` / ``Sequential``, which are attributes), None (it does not)."""
    # (a method body not parsed yet without any of the names holds none of them: lazy_bodies)
    names = {node.id if isinstance(node, ast.Name) else node.attr
             for base in cls.mro() for node in lazy_bodies.walk(base.node, _REGISTRATION_WORDS)
             if isinstance(node, ast.Name) and node.id in DYNAMIC_REGISTRATION
             or isinstance(node, ast.Attribute) and node.attr in DYNAMIC_REGISTRATION}
    if names - REGISTERING_CONTAINERS:
        return "call"
    return "container" if names else None


__all__ = ["TorchModel", "GRAD_VAR", "DEVICE_VAR", "has_torch", "torch_tensors", "seq"]


def _follow_containers(name: str, moved: dict[Atom, Value], st: State) -> None:
    """``encoder.to(device)`` moved a library layer in place: the lists, tuples and dicts of this function
    that hold the same layer (``encoders = [encoder, other]`` made before the move) hold it moved too."""
    layers = {atom: value for atom, value in moved.items() if isinstance(atom, TorchLayerAtom)
              and _identity(atom) is not None}
    if not layers:
        return

    def follow(value: Value, depth: int) -> Value:
        if depth > 3 or not any(isinstance(a, (SeqAtom, DictAtom)) for a in value.atoms):
            return value
        atoms: set[Atom] = set()
        changed = False
        for atom in value.atoms:
            new = _follow_in(atom, depth)
            changed = changed or new is not atom
            atoms.add(new)
        return Value(frozenset(atoms), value.top, value.notes) if changed else value

    def item(value: Value, depth: int) -> Value:
        if not any(a in layers for a in value.atoms):
            return follow(value, depth + 1)
        out = Value(frozenset(a for a in value.atoms if a not in layers), value.top)
        for atom in value.atoms:
            if atom in layers:
                out = out.join(layers[atom])
        return out

    def _follow_in(atom: Atom, depth: int) -> Atom:
        if isinstance(atom, SeqAtom):
            items = None if atom.items is None else tuple(item(v, depth) for v in atom.items)
            elem = item(atom.elem, depth)
            if elem is atom.elem and (items is None or all(a is b for a, b in zip(items, atom.items or (),
                                                                                     strict=True))):
                return atom
            return SeqAtom(atom.kind, items, elem)
        if isinstance(atom, DictAtom):
            entries = tuple((k, item(v, depth)) for k, v in atom.items)
            rest = None if atom.rest is None else item(atom.rest, depth)
            if rest is atom.rest and all(a[1] is b[1] for a, b in zip(entries, atom.items, strict=True)):
                return atom
            return DictAtom(entries, rest)
        return atom

    for other, value in list(st.vars.items()):
        if other != name:
            followed = follow(value, 0)
            if followed is not value:
                st.vars[other] = followed


def _registered_identities(values: Iterable[Value]) -> frozenset[object]:
    """The identities of the modules a module's attributes register: the layers and project modules they
    hold, and what each ``Sequential`` / ``ModuleList`` among them holds, at any depth (not what a plain
    list holds)."""
    out: set[object] = set()
    seen: set[Atom] = set()  # (one creation site may be several atoms: a block filled differently per branch)
    pending = [atom for value in values for atom in value.atoms]
    while pending:
        atom = pending.pop()
        key = _identity(atom)
        if key is None or atom in seen:
            continue
        seen.add(atom)
        out.add(key)
        if isinstance(atom, TorchLayerAtom):
            pending.extend(atom.children)
    return frozenset(out)


def _rebound_methods(value: Value, old: Instance, new: Instance) -> Value:
    """``value`` with the methods bound to ``old`` bound to ``new`` instead."""
    if not any(isinstance(a, FuncRef) and a.bound is old for a in value.atoms):
        return value
    return Value(frozenset(FuncRef(a.fn, a.closure, a.defaults, a.kw_defaults, new)
                           if isinstance(a, FuncRef) and a.bound is old else a for a in value.atoms), value.top)


def _changes_current_device_unseen(tree: ast.AST | None) -> bool:
    """Does this module change the current CUDA device where the flow state does not follow it:
    ``torch.cuda.device(...)`` other than as a ``with`` block? (A ``set_device`` call is followed, inside a
    function too: the mode it sets stays in force in the function's callers.)"""
    if tree is None:
        return False
    # (``torch.cuda.device`` spells "device": bodies not parsed yet without the word hold none)
    blocks = {id(item.context_expr) for node in lazy_bodies.walk(tree, b"device")
              if isinstance(node, (ast.With, ast.AsyncWith)) for item in node.items}
    for node in lazy_bodies.walk(tree, b"device"):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr == "device" and isinstance(node.func.value, ast.Attribute) \
                and node.func.value.attr == "cuda" and id(node) not in blocks:
            return True
    return False


def _decorator_name(node: ast.expr) -> str:
    """The last name of a decorator (``torch.no_grad()`` -> ``no_grad``)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def distribution_base(cls: ClassInfo) -> str | None:
    """The ``torch.distributions`` class a project class derives from (``Normal``), if any: the first base's."""
    for c in cls.mro():
        for name in c.library_bases:
            if name.startswith(DISTRIBUTION_PREFIX):
                return name[len(DISTRIBUTION_PREFIX):]
    return None
