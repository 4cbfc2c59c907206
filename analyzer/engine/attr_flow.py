"""Attribute state across a call: what the caller knows of ``obj.x`` (its overlays) reaches the callee's reads of
``self.x``, and what the callee leaves in ``self.x`` on every path it returns by comes back as the caller's overlay.

The heap keeps the join of every store for every other reader; this only carries one path's knowledge through a
call whose receiver and arguments are plain names of the caller (``self.reset()``, ``backend.seed(g)``,
``fill(buf)``), the only places where the caller's overlay and the callee's parameter are the same object."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from ..choices import stripped
from ..domain import FuncRef, Value
from .flow_state import Overlay, State, is_item_overlay, widen_if_large
from .program import FunctionInfo

#: a callee's effect on its parameters' attributes: parameter -> attribute -> what it holds after the call
Effect = dict[str, dict[str, Value]]

def passed_names(fn: FunctionInfo, fref: FuncRef, node: ast.AST | None, args: list[Value],
                 bound: dict[str, Value], st: State | None) -> dict[str, str]:
    """Parameter -> the caller's variable it is (the receiver of ``name.method(...)`` or ``name(...)`` for a
    bound method, a positional or keyword argument that is a plain name), where the caller's variable holds
    exactly what the parameter was bound to."""
    if st is None or not isinstance(node, ast.Call) or st.dead:
        return {}
    out: dict[str, str] = {}

    def same(name: str, param: str) -> bool:
        held = st.vars.get(name)
        return held is not None and param in bound and not held.top and stripped(held) == bound[param]

    params = list(fn.positional)
    if fref.bound is not None and params:
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else node.func
        if isinstance(receiver, ast.Name) and same(receiver.id, params[0]) and len(bound[params[0]].atoms) == 1:
            out[params[0]] = receiver.id
        params = params[1:]
    if len(args) == len(node.args) and not any(isinstance(a, ast.Starred) for a in node.args):
        for param, arg in zip(params, node.args, strict=False):
            if isinstance(arg, ast.Name) and same(arg.id, param):
                out[param] = arg.id
    for keyword in node.keywords:
        if keyword.arg is not None and isinstance(keyword.value, ast.Name) and same(keyword.value.id, keyword.arg):
            out[keyword.arg] = keyword.value.id
    # (one caller variable passed twice: the callee's two names alias, which overlays do not follow)
    counts: dict[str, int] = {}
    for name in out.values():
        counts[name] = counts.get(name, 0) + 1
    return {param: name for param, name in out.items() if counts[name] == 1}


def entry_overlays(fn: FunctionInfo, names: dict[str, str], st: State | None,
                   cache: dict[tuple[int, str], frozenset[str] | None]) -> dict[Overlay, Value]:
    """The caller's overlays of the variables passed, as the callee's parameters' (only attributes the callee
    may read, so that others do not split its contexts: ``cache`` remembers which, per function and parameter)."""
    if not names or st is None or not st.overlays:
        return {}
    out: dict[Overlay, Value] = {}
    by_name = {name: param for param, name in names.items()}
    for key, value in st.overlays.items():
        param = by_name.get(key.base)
        if param is None or is_item_overlay(key):
            continue
        read = _attrs_read(fn, param, cache)
        if read is None or key.attr in read:
            out[Overlay(param, key.attr)] = stripped(value)
    return out


def overlay_key(entry: dict[Overlay, Value]) -> tuple:
    """``entry`` as part of a calling context's key (the same overlays, the same key, in any order)."""
    return tuple(sorted(((k.base, k.attr, v) for k, v in entry.items()), key=lambda t: (t[0], t[1])))


def exit_overlays(st: State, bound: dict[str, Value]) -> dict[Overlay, Value]:
    """A returning path's overlays of the parameters that still name what they were bound to."""
    if not st.overlays:
        return {}
    return {key: value for key, value in st.overlays.items()
            if key.base in bound and not is_item_overlay(key) and st.vars.get(key.base) == bound[key.base]}


def effect_of(entry: dict[Overlay, Value], exits: list[dict[Overlay, Value]]) -> Effect:
    """What the callee leaves in its parameters' attributes: those every returning path holds an overlay of (it
    stored or narrowed them, or kept the caller's), joined over the paths, where some path changed them."""
    if not exits:
        return {}
    common = set(exits[0])
    for other in exits[1:]:
        common &= other.keys()
    out: Effect = {}
    for key in common:
        values = [e[key] for e in exits]
        if all(v == entry.get(key) for v in values):
            continue  # (unchanged: the caller's own overlay stands as it would without the call)
        joined = values[0]
        for value in values[1:]:
            joined = joined.join(value)
        out.setdefault(key.base, {})[key.attr] = widen_if_large(stripped(joined))
    return out


def apply_effect(effect: Effect | None, names: dict[str, str], st: State | None) -> None:
    """Leave the callee's ``effect`` in the caller's overlays of the variables it passed."""
    if not effect or not names or st is None or st.dead:
        return
    for param, attrs in effect.items():
        name = names.get(param)
        if name is None:
            continue
        for attr, value in attrs.items():
            overlay = Overlay(name, attr)
            st.overlays[overlay] = value
            st.kill_aliases(overlay)


def _attrs_read(fn: FunctionInfo, param: str, cache: dict[tuple[int, str], frozenset[str] | None]
                ) -> frozenset[str] | None:
    """The attribute names ``fn`` reads through ``param``; None (every attribute) when it passes ``param`` on to
    a call (a method of the receiver reads what it reads)."""
    key = (id(fn.node), param)
    if key in cache:
        return cache[key]
    found: set[str] = set()
    result: frozenset[str] | None = None
    for sub in ast.walk(fn.node):
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == param:
            found.add(sub.attr)
        elif isinstance(sub, ast.Call) and _passes(sub, param):
            break
    else:
        result = frozenset(found)
    cache[key] = result
    return result


def _passes(call: ast.Call, param: str) -> bool:
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else call.func
    if isinstance(receiver, ast.Name) and receiver.id == param:
        return True
    return any(isinstance(a, ast.Name) and a.id == param for a in _arguments(call))


def _arguments(call: ast.Call) -> Iterable[ast.expr]:
    for arg in call.args:
        yield arg.value if isinstance(arg, ast.Starred) else arg
    for keyword in call.keywords:
        yield keyword.value
