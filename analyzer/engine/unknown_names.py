"""Which names of a skipped function can hold only what its unknown arguments give.

The demand sweep does not analyse most uncalled functions; it makes unknown what they could have
changed (:func:`analyzer.engine.demand.effects`). The full sweep it stands for runs such a function
with unknown arguments, and a store through an unknown object reaches nothing the analysis knows. So
a store through a name that can only hold an unknown argument, or something read or called from one,
changes nothing: ``for name, child in model.named_children(): setattr(model, name, child.fuse())``.
This matters most for stores whose attribute name is computed (``setattr(m, name, ...)``): counted as
a store of *every* attribute, one such function makes every instance's attributes partly unknown.

Computed over the function's text (its nested functions included, names of all scopes together, which
only makes fewer names unknown), as a greatest fixpoint: a name is unknown while every binding of it
is unknown. Bindings understood: assignments and ``for`` targets (unpacked element by element), and
the parameters of a nested function that is only ever called, with unknown arguments. Any other
binding (``with ... as``, ``except ... as``, ``:=``, imports, ``def``, a ``+=``) makes a name known.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable


class _Bindings(ast.NodeVisitor):
    """Every binding of a name in a function's body (nested functions included)."""

    def __init__(self) -> None:
        self.values: dict[str, list[ast.expr | None]] = {}  # name -> the values bound (None: not understood)
        self.nested: dict[str, list[ast.arg]] = {}  # nested function -> its parameters (in order)
        self.nested_defaults: dict[str, set[str]] = {}  # nested function -> its parameters with a default
        self.calls: dict[str, list[ast.Call]] = {}  # nested function -> the calls of it by name
        self.escaping: set[str] = set()  # names read other than as the function of a call

    def bind(self, target: ast.AST, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.values.setdefault(target.id, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:  # an element of an unknown object is unknown
                self.bind(element, value)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, None)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self.bind(target, node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.bind(node.target, node.value)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.bind(node.target, None)
        self.generic_visit(node)

    def visit_For(self, node: ast.For | ast.AsyncFor | ast.comprehension) -> None:
        self.bind(node.target, node.iter)
        self.generic_visit(node)

    visit_AsyncFor = visit_comprehension = visit_For

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.bind(node.target, None)
        self.generic_visit(node)

    def visit_withitem(self, node: ast.withitem) -> None:
        if node.optional_vars is not None:
            self.bind(node.optional_vars, None)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.values.setdefault(node.name, []).append(None)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            self.values.setdefault(alias.asname or alias.name.partition(".")[0], []).append(None)

    visit_ImportFrom = visit_Import

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        for name in node.names:
            self.values.setdefault(name, []).append(None)  # another scope's name: not followed

    visit_Nonlocal = visit_Global

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        self.nested[node.name] = positional
        defaults = {a.arg for a in positional[len(positional) - len(args.defaults):]}
        defaults |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None}
        self.nested_defaults[node.name] = defaults
        for extra in (*args.kwonlyargs, args.vararg, args.kwarg):
            if extra is not None:
                self.values.setdefault(extra.arg, []).append(None)
        for decorator in node.decorator_list:
            self.escaping.update(n.id for n in ast.walk(decorator) if isinstance(n, ast.Name))
        if node.decorator_list:
            self.escaping.add(node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
            self.values.setdefault(arg.arg, []).append(None)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.values.setdefault(node.name, []).append(None)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name):
            self.calls.setdefault(node.func.id, []).append(node)
            for child in (*node.args, *node.keywords):
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.escaping.add(node.id)  # (a call's function is not visited as a name: visit_Call)


def unknown_rooted(node: ast.expr | None, unknown: set[str] | frozenset[str]) -> bool:
    """Does ``node`` evaluate to an unknown object when the names ``unknown`` hold one? An attribute, item,
    method call or ``getattr`` of an unknown object is unknown."""
    while node is not None:
        kind = type(node)
        if kind is ast.Name:
            return node.id in unknown  # type: ignore[attr-defined]
        if kind in (ast.Attribute, ast.Subscript):
            node = node.value  # type: ignore[attr-defined]
        elif kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if _is_copy(func) and node.args:  # type: ignore[attr-defined]
                node = node.args[0]  # type: ignore[attr-defined]
            elif type(func) is ast.Attribute:
                node = func.value
            elif type(func) is ast.Name and func.id == "getattr" and node.args:  # type: ignore[attr-defined]
                node = node.args[0]  # type: ignore[attr-defined]
            else:
                return False
        elif kind is ast.IfExp:
            return unknown_rooted(node.body, unknown) and unknown_rooted(node.orelse, unknown)  # type: ignore
        else:
            return False
    return False


def _is_copy(func: ast.expr) -> bool:
    """``deepcopy``, ``copy.deepcopy``, ``copy.copy``: a copy of an unknown object is unknown."""
    if type(func) is ast.Name:
        return func.id == "deepcopy"
    return type(func) is ast.Attribute and func.attr in ("deepcopy", "copy") \
        and type(func.value) is ast.Name and func.value.id == "copy"


def unknown_names(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                  unknown_params: Iterable[str]) -> frozenset[str]:
    """The names in ``function`` that can hold only an unknown object, given that its parameters
    ``unknown_params`` do (whatever they are rebound to, as :func:`analyzer.engine.demand.effects` takes them)."""
    found = _Bindings()
    for statement in function.body if not isinstance(function, ast.Lambda) else [function.body]:
        found.visit(statement)
    params = set(unknown_params)
    candidates = {name for name, values in found.values.items() if all(v is not None for v in values)}
    candidates |= {a.arg for name, args in found.nested.items() if name not in found.escaping
                   and name not in found.values for a in args}
    candidates |= params
    unknown = set(candidates)
    changed = True
    while changed:
        changed = False
        for name in list(unknown):
            if not _stays_unknown(name, found, unknown, params):
                unknown.discard(name)
                changed = True
    return frozenset(unknown)


def _stays_unknown(name: str, found: _Bindings, unknown: set[str], params: set[str]) -> bool:
    if name in params:
        return True  # (as :func:`analyzer.engine.demand.effects` takes them: a parameter rebound is not followed)
    if not all(unknown_rooted(value, unknown) for value in found.values.get(name, ())):
        return False
    callers = [(function, args) for function, args in found.nested.items() if any(a.arg == name for a in args)]
    for function, args in callers:
        position = next(i for i, a in enumerate(args) if a.arg == name)
        for call in found.calls.get(function, ()):
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return False
            if position < len(call.args):
                passed: ast.expr | None = call.args[position]
            else:
                passed = next((k.value for k in call.keywords if k.arg == name), None)
                if passed is None:
                    return False  # its default, or a missing argument: not followed
            if not unknown_rooted(passed, unknown):
                return False
    return name in params or bool(found.values.get(name)) or bool(callers)


def constant_keys(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, name: str) -> frozenset[str] | None:
    """The strings ``name`` can hold when it only iterates over the keys of a local dict whose keys are all
    written out (``for key, value in meta.items(): setattr(model, key, value)``), else None.

    The dict must be bound once, to a ``{...}`` display or a ``dict(...)`` call with constant keys, and
    otherwise only have items stored at constant keys, be read or iterated."""
    if isinstance(function, ast.Lambda) or any(
            isinstance(node, ast.arg) and node.arg == name for node in ast.walk(function.args)):
        return None
    loops = [node for node in ast.walk(function) if isinstance(node, (ast.For, ast.comprehension))
             and _loop_key(node.target, node.iter, name) is not None]
    other_bindings = [node for node in ast.walk(function) if isinstance(node, ast.Name) and node.id == name
                      and not isinstance(node.ctx, ast.Load)]
    if not loops or len(other_bindings) != len(loops):
        return None  # bound other than by these loops
    keys: set[str] = set()
    for loop in loops:
        found = _dict_keys(function, _loop_key(loop.target, loop.iter, name))  # type: ignore[arg-type]
        if found is None:
            return None
        keys |= found
    return frozenset(keys)


def _loop_key(target: ast.expr, iterated: ast.expr, name: str) -> str | None:
    """The dict a loop takes ``name`` from as a key: ``for name in d``, ``d.keys()``, ``for name, v in d.items()``."""
    if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and not iterated.args \
            and isinstance(iterated.func.value, ast.Name):
        method, source = iterated.func.attr, iterated.func.value.id
        if method == "keys" and isinstance(target, ast.Name) and target.id == name:
            return source
        if method == "items" and isinstance(target, ast.Tuple) and len(target.elts) == 2 \
                and isinstance(target.elts[0], ast.Name) and target.elts[0].id == name:
            return source
        return None
    if isinstance(iterated, ast.Name) and isinstance(target, ast.Name) and target.id == name:
        return iterated.id
    return None


_DICT_READS = frozenset({"items", "keys", "values", "get"})


def _dict_keys(function: ast.AST, name: str) -> set[str] | None:
    """The keys of the local dict ``name`` when they are all constant strings (see :func:`constant_keys`)."""
    keys: set[str] = set()
    bindings = 0
    parents = {id(child): node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(function):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        parent = parents.get(id(node))
        if isinstance(node.ctx, ast.Store):
            bindings += 1
            value = parent.value if isinstance(parent, ast.Assign) and parent.targets == [node] else None
            found = _display_keys(value)
            if found is None:
                return None
            keys |= found
        elif isinstance(parent, ast.Subscript) and parent.value is node:
            if isinstance(parent.ctx, ast.Store):
                key = parent.slice
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    return None
                keys.add(key.value)
            elif not isinstance(parent.ctx, ast.Load):
                return None
        elif isinstance(parent, ast.Attribute) and parent.value is node:
            if parent.attr not in _DICT_READS:
                return None  # update, setdefault, pop ...: not followed
        elif isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
            continue
        elif not isinstance(node.ctx, ast.Load) or not isinstance(parent, ast.Compare):
            return None  # passed on, returned, stored elsewhere: its keys may change there
    return keys if bindings == 1 else None


def _display_keys(value: ast.expr | None) -> set[str] | None:
    if isinstance(value, ast.Dict):
        if all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys):
            return {k.value for k in value.keys}  # type: ignore[union-attr]
        return None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" \
            and not value.args and all(k.arg is not None for k in value.keywords):
        return {k.arg for k in value.keywords}  # type: ignore[misc]
    return None
