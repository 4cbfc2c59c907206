"""``nn.ModuleDict``, ``nn.ParameterDict`` and ``nn.ParameterList``: containers a module registers, so
``.to()`` of the module moves what they hold (a plain ``dict`` or ``list`` of layers or parameters is not
registered and stays where it was made).

A ``ModuleDict`` is a :class:`~analyzer.torch_domain.TorchLayerAtom` whose ``children`` are its modules and
whose ``keys`` their keys (``None`` for one a loop stored under a key the analysis does not know): ``md[key]``
is the module under that key (under a key not known, any of them), ``.values()``/``.items()``/``.keys()`` and
iterating it (its keys) read them, ``md[key] = m``, ``update`` and ``add_module`` add or replace one. A
``ParameterList``/``ParameterDict`` holds tensors, not modules: it is a layer whose weights are its
parameters, all on its ``dev`` (``None``: on several devices, or not known); a plain tensor put in one
becomes a parameter (``ParameterList.__setitem__``/``ParameterDict.__setitem__`` wrap it), a leaf that
requires grad. Anything else put in them makes the container unknown."""

from __future__ import annotations

from dataclasses import replace

from ..domain import BOTTOM, TOP, Atom, DictAtom, Origin, SeqAtom, V, Value, const, join_all, seq, seq_of
from ..torch_domain import LEAF, NO_GRAD, TorchDev, TorchLayerAtom, TorchTensorAtom
from .layer_items import is_module, with_children

MODULE_DICT = "ModuleDict"
PARAMETER_LIST = "ParameterList"
PARAMETER_DICT = "ParameterDict"
KEYED = frozenset({MODULE_DICT, PARAMETER_DICT})
PARAMETERS = frozenset({PARAMETER_LIST, PARAMETER_DICT})
COLLECTIONS = KEYED | PARAMETERS
#: the methods of each that the analysis follows (the rest of nn.Module's API is any module's)
METHODS: dict[str, frozenset[str]] = {
    MODULE_DICT: frozenset({"items", "values", "keys", "update", "add_module", "pop"}),
    PARAMETER_DICT: frozenset({"items", "values", "keys", "update", "pop"}),
    PARAMETER_LIST: frozenset({"append", "extend"}),
}
#: the methods that change the container (the name or attribute holding it then holds the changed one)
CHANGING = frozenset({"update", "add_module", "append", "extend"})

Entries = list[tuple[str | None, Value]]


def is_collection(atom: Atom) -> bool:
    return isinstance(atom, TorchLayerAtom) and atom.name in COLLECTIONS


def entries(given: Value | None, keyed: bool) -> Entries | None:
    """What a constructor or ``update`` is given, as (key, value) pairs: a dict (its unknown keys: ``None``), a
    list of ``(key, value)`` pairs (a ModuleDict's, a ParameterDict's) or of values (a ParameterList's); None:
    not known."""
    if given is None or given.consts() == [None]:
        return []
    if given.top or len(given.atoms) != 1:
        return None
    atom = next(iter(given.atoms))
    if isinstance(atom, DictAtom) and keyed:
        found: Entries = [(k, v) if isinstance(k, str) else (None, v) for k, v in atom.items]
        if atom.rest is not None and not atom.rest.is_bottom:
            found.append((None, atom.rest))
        return found
    if not isinstance(atom, SeqAtom):
        return None
    items = list(atom.items) if atom.items is not None else [atom.elem] if not atom.elem.is_bottom else []
    if not keyed:
        return [(None, item) for item in items]
    pairs: Entries = []
    for item in items:
        pair = next(iter(item.atoms)) if len(item.atoms) == 1 and not item.top else None
        if not isinstance(pair, SeqAtom) or pair.items is None or len(pair.items) != 2:
            return None
        key = constant_key(pair.items[0]) if atom.items is not None else None
        pairs.append((key, pair.items[1]))
    return pairs


def build(name: str, given: Entries, origin: Origin) -> TorchLayerAtom | None:
    """A new container holding ``given`` (None: something in it is not known)."""
    empty = TorchLayerAtom(name, None, False, (), origin)
    return with_entries(empty, given)


def with_entries(container: TorchLayerAtom, given: Entries) -> TorchLayerAtom | None:
    """``container`` after storing ``given`` in order (a known key replaces its entry, an unknown one adds
    one: a loop that stores the same module under many keys adds it once)."""
    if container.name in PARAMETERS:
        return _with_parameters(container, given)
    children, keys = list(container.children), list(container.keys)
    for key, value in given:
        if value.top or not value.atoms or not all(is_module(a) for a in value.atoms):
            return None
        for module in sorted(value.atoms, key=repr):
            if key is not None and key in keys and len(value.atoms) == 1:
                children[keys.index(key)] = module
            elif key is not None and len(value.atoms) == 1:
                children.append(module)
                keys.append(key)
            elif (None, module) not in zip(keys, children, strict=True):
                children.append(module)
                keys.append(None)
    return replace(with_children(container, tuple(children)), keys=tuple(keys))


def _with_parameters(container: TorchLayerAtom, given: Entries) -> TorchLayerAtom | None:
    devices: set[TorchDev | None] = {container.dev} if container.weights else set()
    keys = list(container.keys)
    for key, value in given:
        tensors = [a for a in value.atoms if isinstance(a, TorchTensorAtom)]
        if value.top or not tensors or len(tensors) != len(value.atoms):
            return None
        devices |= {t.dev for t in tensors}
        if key is None or key not in keys:
            keys.append(key)
    dev = next(iter(devices)) if len(devices) == 1 else None
    return replace(container, dev=dev, weights=bool(devices), keys=tuple(keys))


def parameter(container: TorchLayerAtom, grad_flags: set[bool]) -> Value:
    """One parameter of a ParameterList/ParameterDict: a leaf the module owns, on its device."""
    if container.dev is None or not container.weights:
        return TOP
    return Value(frozenset(TorchTensorAtom(container.dev, LEAF if flag else NO_GRAD, False, owned=True,
                                           origin=container.origin) for flag in grad_flags))


def lookup(container: TorchLayerAtom, key: Value, values: Value) -> Value:
    """``container[key]``: a ModuleDict's module under ``key`` (a key not known: any of them); ``values``:
    what its entries hold (a ParameterList's/ParameterDict's parameter, a ModuleDict's modules as read)."""
    if container.name in PARAMETERS:
        return values
    name = constant_key(key)
    if name is None:
        return values
    if name in container.keys:
        return V(container.children[container.keys.index(name)])
    unknown = [c for k, c in zip(container.keys, container.children, strict=True) if k is None]
    return join_all(V(c) for c in unknown) if unknown else TOP  # (a KeyError: not what the analysis checks)


def key_values(container: TorchLayerAtom) -> Value:
    """Its keys, as iterating a ModuleDict or a ParameterDict gives them."""
    return join_all(V(const(k)) if k is not None else TOP for k in container.keys) if container.keys else BOTTOM


def listed(container: TorchLayerAtom, method: str, values: Value) -> Value:
    """``.keys()``/``.values()``/``.items()``: a list of them, in order where every key is known."""
    known = all(k is not None for k in container.keys) and container.name == MODULE_DICT
    if method == "keys":
        if known:
            return V(seq("list", [V(const(k)) for k in container.keys]))
        return V(seq_of("list", key_values(container)))
    if known and method == "values":
        return V(seq("list", [V(c) for c in container.children]))
    if known:
        return V(seq("list", [V(seq("tuple", (V(const(k)), V(c))))
                              for k, c in zip(container.keys, container.children, strict=True)]))
    if method == "values":
        return V(seq_of("list", values))
    return V(seq_of("list", V(seq("tuple", (key_values(container), values)))))


def constant_key(value: Value) -> str | None:
    """The one string ``value`` is (None: another value, or not known)."""
    keys = value.consts()
    return keys[0] if keys and not value.top and len(keys) == 1 and isinstance(keys[0], str) else None
