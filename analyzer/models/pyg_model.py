"""PyTorch Geometric's graphs, datasets, loaders, convolutions and pooling, as the torch model sees them.

A graph (``torch_geometric.data.Data(x=..., edge_index=...)``, a ``Batch``) is a bag of tensors read as attributes
(``data.x``, ``data.edge_index``); ``data.to(device)`` (``cuda()``, ``cpu()``) moves every one of them, in place
(the graph is returned too). A dataset of ``torch_geometric.datasets`` (``Planetoid``, ``TUDataset`` ...) holds
graphs whose tensors are on the CPU (unless a ``transform`` is given: ``T.ToDevice`` may move them); indexing
gives a graph, slicing, ``shuffle()`` and ``index_select`` a dataset of the same graphs. A ``DataLoader`` of
``torch_geometric.loader`` yields batches of its dataset's graphs, where they are, with their ``batch`` and
``ptr`` vectors on that device too: a loop that forgets ``data = data.to(device)`` gives the model CPU tensors.

The message-passing layers (``GCNConv``, ``SAGEConv``, ``GATConv`` ...) are library layers with weights made on
the CPU, moved by ``model.to(device)``; their node features and edge index must be on the weights' device
("Expected all tensors to be on the same device"). A layer built with ``in_channels=-1`` is initialised on its
first input's device: unknown. The global poolings need the features and the ``batch`` vector on one device.

Everything else of PyG is a name of a library the analysis does not read (:mod:`.library_refs`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from ..domain import TOP, Atom, Const, DictAtom, NumberAtom, Origin, SeqAtom, V, Value, const, join_all
from ..engine.flow_state import Frame, State
from ..torch_domain import CPU, NO_GRAD, TorchLayerAtom, TorchTensorAtom
from .base import UNHANDLED, LibraryModel, Unhandled
from .keyed_moves import hold_in_place, moved_fields
from .library_refs import LibraryRef, library_ref
from .signatures import bind_call

ROOT = "torch_geometric"
#: ``Data``'s positional parameters, in order.
DATA_FIELDS = ("x", "edge_index", "edge_attr", "y", "pos")
#: The graph containers and the loaders (a ``DataLoader`` of ``torch_geometric.data`` is the old name).
GRAPH_CLASSES = frozenset({"Data", "Batch"})
LOADERS = frozenset({"DataLoader", "DenseDataLoader"})
#: Message-passing layers with weights of their own: ``(in_channels, out_channels, ...)``.
CONVOLUTIONS = frozenset({"GCNConv", "SAGEConv", "GATConv", "GATv2Conv", "GraphConv", "ChebConv", "TransformerConv",
                          "TAGConv", "SGConv", "ARMAConv", "GENConv", "ResGatedGraphConv", "LEConv", "ClusterGCNConv",
                          "GeneralConv", "FiLMConv", "SuperGATConv", "MFConv", "CuGraphSAGEConv"})
#: Poolings ``(x, batch, size=None)``: the features and the graph of each node on one device.
POOLINGS = frozenset({"global_mean_pool", "global_add_pool", "global_max_pool"})
#: A graph's counts (numbers, never tensors).
COUNTS = frozenset({"num_nodes", "num_edges", "num_graphs", "num_features", "num_node_features",
                    "num_edge_features", "num_classes"})
#: A count's value: an int, never negative.
COUNT = NumberAtom("int", low=0)
#: Dataset methods that give a dataset of the same graphs.
SAME_DATASET = frozenset({"shuffle", "index_select", "copy"})
#: A graph's methods that move its tensors.
MOVES = frozenset({"to", "cuda", "cpu"})


@dataclass(frozen=True, slots=True)
class GraphAtom(DictAtom):
    """A ``Data`` or ``Batch``: its tensors by attribute (``rest``: those of attributes not known statically)."""

    loose = True

    origin: Origin | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class GraphsAtom(Atom):
    """A dataset or a loader of graphs, each ``elem``."""

    kind: str  # "dataset" or "loader"
    elem: Value


@dataclass(frozen=True, slots=True)
class GraphTransformAtom(Atom):
    """A transform of ``torch_geometric.transforms`` (``T.Compose([...])``: the names of all it composes)."""

    names: frozenset[str]


@dataclass(frozen=True, slots=True)
class GraphMethod(Atom):
    """A method of a graph or a dataset bound to it (``data.to``, ``dataset.shuffle``)."""

    receiver: Atom
    name: str


def _leaf(path: str) -> tuple[str, str]:
    module, _, name = path.rpartition(".")
    return module, name


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def graphs_of(value: Value | None) -> Value:
    """The graphs a dataset argument holds (a PyG dataset, a list of graphs); unknown otherwise."""
    if value is None or value.top or not value.atoms:
        return TOP
    out = Value()
    for atom in value.atoms:
        if isinstance(atom, GraphsAtom):
            out = out.join(atom.elem)
        elif isinstance(atom, SeqAtom):
            out = out.join(join_all(atom.items) if atom.items is not None else atom.elem)
        else:
            return TOP
    return out if out.atoms and all(isinstance(a, GraphAtom) for a in out.atoms) else TOP


def batched(graphs: Value) -> Value:
    """A loader's batch of ``graphs``: their tensors, with the ``batch`` and ``ptr`` vectors where ``x`` is."""
    if graphs.top:
        return TOP
    out = Value()
    for atom in graphs.atoms:
        assert isinstance(atom, GraphAtom)
        found = atom.get("x")
        where = found if found is not None else atom.rest
        vectors = TOP if where is None else Value(frozenset(
            a.with_(grad=NO_GRAD, zero_dim=False, owned=False, ndim=1) if isinstance(a, TorchTensorAtom) else a
            for a in where.atoms), where.top)
        items = tuple((k, v) for k, v in atom.items if k not in ("batch", "ptr"))
        out = out.join(V(GraphAtom((*items, ("batch", vectors), ("ptr", vectors)), atom.rest, atom.origin)))
    return out


class PygModel(LibraryModel):
    """PyG's names and the graphs, datasets and loaders they make; its layers are library layers the torch model
    calls and moves."""

    name = "torch_geometric"

    def import_ref(self, path: str) -> Value | None:
        return library_ref(path, frozenset({ROOT}))

    # -- calls ---------------------------------------------------------------------------------------------
    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None, st: State,
                   fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if isinstance(atom, TorchLayerAtom) and atom.name.startswith(f"{ROOT}.nn."):
            return TOP if star_unknown or node is None else self._propagate(atom, args, kwargs, node, st, fr)
        if isinstance(atom, GraphMethod):
            return TOP if star_unknown or node is None else self._method(atom, args, kwargs, node, st, fr)
        if not isinstance(atom, LibraryRef) or not atom.path.startswith(ROOT + "."):
            return UNHANDLED
        if star_unknown or node is None:
            return TOP
        module, name = _leaf(atom.path)
        if _in(module, f"{ROOT}.data") and name in GRAPH_CLASSES:
            if len(args) > len(DATA_FIELDS):
                return TOP
            given = {**dict(zip(DATA_FIELDS, args, strict=False)), **kwargs}
            return V(GraphAtom(tuple(given.items()), None, self.origin(node, fr, f"{name} created")))
        if (_in(module, f"{ROOT}.loader") or _in(module, f"{ROOT}.data")) and name in LOADERS:
            dataset = bind_call("torch.utils.data.DataLoader", args, kwargs).get("dataset")
            return V(GraphsAtom("loader", batched(graphs_of(dataset))))
        if _in(module, f"{ROOT}.transforms") and name[:1].isupper():
            return self._transform(name, args, kwargs)
        if _in(module, f"{ROOT}.datasets") and name[:1].isupper():
            # (a transform that may move the graphs, ``T.ToDevice``, or one not known: where they are is not known)
            moved = any(not _keeps_device(kwargs.get(k)) for k in ("transform", "pre_transform"))
            cpu = V(TorchTensorAtom(CPU, NO_GRAD, False, origin=self.origin(node, fr, f"{name} graph")))
            return V(GraphsAtom("dataset", V(GraphAtom((), TOP if moved else cpu, None))))
        if _in(module, f"{ROOT}.nn") and name in CONVOLUTIONS:
            first = args[0] if args else kwargs.get("in_channels")
            if first is None or first.top or not all(_known_size(a) for a in first.atoms):
                return TOP  # a lazy layer (``-1``), or sizes the analysis does not know
            return V(TorchLayerAtom(f"{ROOT}.nn.{name}", CPU, True, (), self.origin(node, fr, f"{name} created")))
        if _in(module, f"{ROOT}.nn") and name in POOLINGS:
            return self._pool(f"{ROOT}.nn.{name}", args, kwargs, node, st, fr)
        return UNHANDLED  # unknown (:class:`.library_refs.LibraryReferences`)

    def _propagate(self, layer: TorchLayerAtom, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                   st: State, fr: Frame) -> Value | Unhandled:
        """``conv(x, edge_index, ...)``: the node features meet the weights first (the layer's linear map: MV202
        when they are apart); features on the weights' device are then gathered and scattered along
        ``edge_index`` there (an index elsewhere: MV207). Further tensors (edge weights) go with the index."""
        torch = self.model_named("torch")
        names = ("x", "edge_index")
        bound = {**dict(zip(names, args, strict=False)), **kwargs}
        x = bound.pop("x", TOP)
        if torch is None or layer.dev is None or x.top or not x.atoms \
                or any(not isinstance(a, TorchTensorAtom) or a.dev != layer.dev for a in x.atoms):
            return UNHANDLED  # the torch model's layer call: the features against the weights, the rest with them
        if torch.moved_elsewhere(layer, getattr(node, "func", None), fr):
            return TOP
        edges = [(role, value, role == "edge_index", False) for role, value in bound.items()
                 if value.top or (value.atoms and value.consts() != [None])]
        if edges:
            # (checked first: the features' check against the weights passes here, and a passing check at the same
            # call would make the index's failure one of some paths only)
            torch.checked_op(layer.name, [("x", x, False, False), *edges], node, st, fr, op="propagate",
                             zero_dim=False)
            if st.dead:
                return Value()
        return torch.torch_layer_call(layer, [x], {}, node, st, fr)

    @staticmethod
    def _transform(name: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """``T.NormalizeFeatures()``; ``T.Compose([...])`` composes the names of its transforms (unknown when one
        of them is)."""
        if name != "Compose":
            return V(GraphTransformAtom(frozenset({name})))
        listed = args[0] if args else kwargs.get("transforms")
        if listed is None or listed.top or len(listed.atoms) != 1:
            return TOP
        seq = next(iter(listed.atoms))
        if not isinstance(seq, SeqAtom):
            return TOP
        items = seq.items if seq.items is not None else (seq.elem,)
        names: set[str] = set()
        for item in items:
            if item.top or not item.atoms or not item.only(GraphTransformAtom):
                return TOP
            names.update(n for a in item.atoms for n in a.names)  # type: ignore[attr-defined]
        return V(GraphTransformAtom(frozenset(names)))

    def _pool(self, api: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
              fr: Frame) -> Value:
        torch = self.model_named("torch")
        names = ("x", "batch", "size")
        if torch is None or len(args) > len(names) or any(k not in names for k in kwargs):
            return TOP
        bound = {**dict(zip(names, args, strict=False)), **kwargs}
        x = bound.get("x", TOP)
        operands = [("x", x, False, False), ("batch", bound.get("batch", V(const(None))), True, False)]
        torch.checked_op(api, operands, node, st, fr, op="pool", zero_dim=False)
        return torch.same_device_result(x, node, st, fr, False) if not st.dead else Value()

    def _method(self, method: GraphMethod, args: list[Value], kwargs: dict[str, Value], node: ast.AST, st: State,
                fr: Frame) -> Value:
        receiver = method.receiver
        if isinstance(receiver, GraphsAtom):
            return V(receiver)  # ``dataset.shuffle()``: the same graphs
        assert isinstance(receiver, GraphAtom)
        torch = self.model_named("torch")
        if method.name == "cpu":
            found = torch.devices_of(V(const("cpu")), st) if torch is not None else None
        elif method.name == "cuda":
            target = args[0] if args else kwargs.get("device", V(const("cuda")))
            found = torch.devices_of(target if target.consts() != [None] else V(const("cuda")), st) \
                if torch is not None else None
        else:
            given = args[0] if args else kwargs.get("device")
            found = torch.devices_of(given, st) if torch is not None and given is not None else None
        origin = self.origin(node, fr, f"{type(receiver).__name__}.{method.name}")
        # ``data.to(device, "x", "y")`` (``cuda(device, *attrs)``, ``cpu(*attrs)``) moves the named fields only
        names = args[1:] if method.name != "cpu" else args
        named = [v.consts() or [] for v in names]
        only = {c for consts in named for c in consts if isinstance(c, str)} if names else None
        if only is not None and any(v.top or len(consts) != 1 for v, consts in zip(names, named, strict=True)):
            found = None  # fields named by values the analysis does not know: every field's device is unknown
            only = None
        order = [key for key, _v in receiver.items]
        staying = {key: value for key, value in receiver.items if only is not None and key not in only}

        def graph(fields: tuple[tuple[Any, Value], ...], rest: Value | None) -> GraphAtom:
            by_key = {**dict(fields), **staying}
            if only is not None and receiver.rest is not None:
                rest = TOP  # (fields the analysis does not know by name: moved or not, as the names say)
            return GraphAtom(tuple((key, by_key[key]) for key in order), rest, receiver.origin)

        moving = tuple((key, value) for key, value in receiver.items if key not in staying)
        moved = moved_fields(self.engine, graph, moving, receiver.rest, found, origin)
        return hold_in_place(self.engine, node, moved, st, fr)

    # -- attributes, items, elements ---------------------------------------------------------------------
    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                       fr: Frame) -> Value | None | Unhandled:
        if isinstance(atom, GraphAtom):
            if attr in MOVES:
                return V(GraphMethod(atom, attr))
            if attr in COUNTS:
                return V(COUNT)
            found = atom.get(attr)
            return found if found is not None else atom.rest
        if isinstance(atom, GraphsAtom):
            if attr in SAME_DATASET:
                return V(GraphMethod(atom, attr))
            return V(COUNT) if attr in COUNTS else None
        if isinstance(atom, GraphMethod):
            return None
        return UNHANDLED

    def item(self, atom: Atom, key: Value, node: ast.AST, st: State, fr: Frame) -> Value | None:
        if isinstance(atom, GraphsAtom):
            sliced = isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)
            return V(atom) if sliced else atom.elem if atom.kind == "dataset" else None
        if isinstance(atom, GraphAtom):
            keys = key.consts()
            if keys is None or not all(isinstance(k, str) for k in keys):
                return None
            return join_all(atom.get(k) or atom.rest or TOP for k in keys)
        return None

    def element(self, atom: Atom, how: str) -> Value | None:
        if isinstance(atom, GraphsAtom):
            return V(atom) if how == "slice" else atom.elem
        return None


def _known_size(atom: Atom) -> bool:
    """A layer's size: an int constant other than ``-1`` (lazy), or a count (``dataset.num_features``)."""
    if isinstance(atom, Const):
        return type(atom.value) is int and atom.value != -1
    return isinstance(atom, NumberAtom) and atom.tname == "int" and atom.low is not None and atom.low >= 0


def _keeps_device(transform: Value | None) -> bool:
    """Does a dataset's ``transform`` leave its graphs where they are (none given, or transforms of PyG other than
    ``ToDevice``)?"""
    if transform is None or transform.consts() == [None]:
        return True
    return transform.only(GraphTransformAtom) and all(
        "ToDevice" not in a.names for a in transform.atoms)  # type: ignore[attr-defined]
