"""A demand-driven sweep of uncalled functions for large components (libraries).

In a library almost nothing is called from module level, so the engine's sweep of uncalled
functions (each analysed with unknown arguments and an unknown default device) is nearly all of
the work, and almost all of it finds nothing: a site fact needs a tensor or a device whose state is
known, and with unknown inputs only a *device source* in the function's own text gives one (a device
string, ``.cuda()``/``.cpu()``/``.to()``, ``torch.device``, numpy, gradients: :func:`mentions_device`; not
a ``.to()`` that only casts, ``x.to(y.dtype)``, nor the builtin ``type``).

So in a component of more than :data:`DEMAND_SWEEP_MIN_FILES` files the sweep analyses a function
only when its text mentions a device source, or when it is a method of a class the module-level code
instantiated (its instances hold known states). Every other uncalled function is *skipped*, and what
it could have changed becomes unknown instead of being forgotten (forgetting it would make the values
other functions read more precise than they are: false errors):

* each attribute name it assigns (``x.name = ...``, ``x.name[k] = ...``, ``x.name.append(...)``,
  ``setattr(x, "name", ...)``) reads as "and anything" on every instance
  (:meth:`DemandSweep.havoc_attribute`), and on every project module when ``x`` may be one (it starts
  from a name an import of a project module binds, or a module-level alias of one: :func:`effects`); a
  ``setattr`` with a computed name, or ``__dict__``, does that for every attribute name, unless it stores
  through what only an unknown argument gives (:mod:`analyzer.engine.unknown_names`: the full sweep's
  unknown arguments reach nothing known) or its names iterate over a local dict's constant keys. A function
  that would still store every attribute name of objects it may know is analysed instead of skipped (a
  ``fuse()`` walking a model's children): the analysis makes unknown only what it reaches;
* each module global it rebinds (``global NAME``) or fills (``NAME[k] = ...``, ``NAME.append(...)``)
  is joined with an unknown value.

Functions it would have called are swept on their own (with unknown arguments, which only widens
what they see), nested functions it defines are never seen. What is lost is precision: facts inside
skipped functions (which have no source of their own) and reads of the attribute names they assign.
Each round of the sweep decides first which of the functions it has not analysed yet it skips, and
makes their changes unknown, before it analyses the others: these then read unknown from the start
what a skipped function may store, instead of reading it known and making the pass stale (a function
skipped this way that an analysed one then calls is analysed in that context as well; its havoc stays).
The havoc set only grows; a read that found a name known, on a class a later havoc reaches, makes the
pass stale, so the next pass runs with it from the start (and reused runs check it like any other
input). Reads of the same name on classes the havoc does not reach are left alone.

Smaller components (programs, fixtures, most projects) keep the full sweep.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..domain import TOP, Value
from ..torch_domain import DEVICE_TYPES
from ..tree_walk import child_nodes, store_targets
from . import scan_summary
from .mixin import EngineMixin
from .program import FunctionInfo, FunctionKind
from .unknown_names import constant_keys, unknown_names, unknown_rooted

#: components of more files than this sweep on demand (the ``torch.cuda.is_available()`` worlds use the same bound)
DEMAND_SWEEP_MIN_FILES = 40

#: attribute or function names that give a known device or grad state where the inputs are unknown, move a
#: module in place, register what moves with it, or convert to numpy / DLPack (``type`` as an attribute only:
#: ``t.type("torch.cuda.FloatTensor")``, not the builtin). Not ``device`` itself: passing
#: ``device=device`` or reading ``x.device`` gives a known state only when the caller's is (then the caller,
#: analysed, calls this function in context).
_SOURCE_NAMES = frozenset({
    "cpu", "cuda", "to", "type", "numpy", "from_numpy", "set_default_device", "set_default_tensor_type",
    "Parameter", "requires_grad", "requires_grad_", "optim", "register_buffer", "register_parameter", "add_module",
    "register_module", "apply", "to_dlpack", "from_dlpack", "__dlpack__", "dlpack", "np",
})
_MUTATORS = frozenset({"append", "extend", "insert", "add", "pop", "update", "setdefault"})
ALL_ATTRIBUTES = "*"


def _words(names: Iterable[str]) -> bytes:
    """A pattern matching any of ``names``, as a trie (``c(?:pu|uda)``): ``re`` tries the alternatives of a
    group one by one at each position, so sharing prefixes makes the scan of a module's text a third faster."""
    trie: dict[str, dict] = {}
    for name in names:
        node = trie
        for char in name:
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: dict[str, dict]) -> str:
        branches = [re.escape(char) + pattern(node[char]) for char in sorted(node) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return pattern(trie).encode()


#: what must be on an expression's lines for it to hold a node the scan looks for: the word of a device source
#: (:func:`_is_source`: a source name, a device type, ``device=``/``requires_grad=``) or of a write
#: (:func:`_may_write`: a mutator, ``setattr``, ``__dict__``, a comprehension's ``for``)
_SCANNED_WORDS = re.compile(rb"\b" + _words(
    _SOURCE_NAMES | DEVICE_TYPES | {"device", "requires_grad", "setattr", "__dict__", "for"} | _MUTATORS) + rb"\b")


def _is_source(node: ast.AST) -> bool:
    """Is this node a device source?"""
    kind = type(node)
    if kind is ast.Attribute:
        return node.attr in _SOURCE_NAMES  # type: ignore[attr-defined]
    if kind is ast.Name:
        return node.id in _SOURCE_NAMES and node.id != "type"  # type: ignore[attr-defined]
    if kind is ast.Constant:
        value = node.value  # type: ignore[attr-defined]
        return isinstance(value, str) and value.split(":", 1)[0] in DEVICE_TYPES
    if kind is ast.keyword:  # ``device=<constant>``, ``requires_grad=True``
        value = node.value  # type: ignore[attr-defined]
        return (node.arg in ("device", "requires_grad")  # type: ignore[attr-defined]
                and isinstance(value, ast.Constant) and value.value not in (None, False))
    return False


def _may_write(node: ast.AST) -> bool:
    """Is this a node :func:`effects` reads (a store, ``__dict__``, ``global``, a mutator or ``setattr`` call)?"""
    kind = type(node)
    if kind is ast.Attribute:
        return isinstance(node.ctx, (ast.Store, ast.Del)) or node.attr == "__dict__"  # type: ignore[attr-defined]
    if kind is ast.Subscript:
        return isinstance(node.ctx, (ast.Store, ast.Del))  # type: ignore[attr-defined]
    if kind is ast.Global:
        return True
    if kind is ast.Call:
        func = node.func  # type: ignore[attr-defined]
        return (isinstance(func, ast.Attribute) and func.attr in _MUTATORS) or (
            isinstance(func, ast.Name) and func.id == "setattr" and len(node.args) >= 2)  # type: ignore[attr-defined]
    return False


@dataclass
class FunctionScan:
    """What the demand sweep needs of one function's text (nested functions included)."""

    node_id: int = 0  # ``id`` of the function's node
    mentions: bool = False  # it holds a device source
    writes: list[ast.AST] = field(default_factory=list)  # the nodes through which it may store (see effects)
    node: ast.AST | None = None  # the function's node


class _Lines:
    """Where a pattern matches in a module's text, for "any inside this node" queries: the lines it matches on
    (sorted) and the positions its matches start at (``line << 20 | byte column``, sorted: ast's columns
    count UTF-8 bytes, as the pattern does on the bytes)."""

    def __init__(self, data: bytes, pattern: re.Pattern[bytes]) -> None:
        if b"\r" in data:  # ast counts \r\n and a lone \r as one line end (columns within a line stay)
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        self.lines: list[int] = []
        self.starts: list[int] = []
        line, position, line_start = 1, 0, 0
        for match in pattern.finditer(data):
            start = match.start()
            newlines = data.count(b"\n", position, start)
            if newlines:
                line += newlines
                line_start = data.rindex(b"\n", position, start) + 1
            position = start
            if not self.lines or self.lines[-1] != line:
                self.lines.append(line)
            self.starts.append(line << _COLUMN_BITS | (start - line_start))

    def between(self, first: int, last: int) -> bool:
        i = bisect_left(self.lines, first)
        return i < len(self.lines) and self.lines[i] <= last

    def inside(self, node: ast.AST) -> bool:
        """Does a match start inside ``node``'s text?"""
        starts = self.starts
        i = bisect_left(starts, node.lineno << _COLUMN_BITS | node.col_offset)  # type: ignore[attr-defined]
        return i < len(starts) and starts[i] < (
            node.end_lineno << _COLUMN_BITS | node.end_col_offset)  # type: ignore[attr-defined]


_COLUMN_BITS = 20  # a position is line << 20 | column (lines of a million bytes would need more)


def mentions_device(node: ast.AST, data: bytes) -> bool:
    """Does this function's text (nested functions included; ``data``: its module's source) hold a device
    source?"""
    return scan_functions(node, data)[id(node)].mentions


def target_writes(targets: Iterable[ast.AST | None], out: list[ast.AST] | None = None) -> list[ast.AST]:
    """The attribute and subscript stores of assignment targets (tuples and starred unpacked), added to ``out``."""
    out = [] if out is None else out
    for target in targets:
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            out.append(target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            target_writes(target.elts, out)
        elif isinstance(target, ast.Starred):
            target_writes((target.value,), out)
    return out


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_CONTAINERS = (ast.stmt, ast.ExceptHandler, ast.match_case)  # what holds statements
# the same as sets of node types (``type(node) in ...`` is cheaper than ``isinstance`` in the scan's loop)
_FUNCTION_TYPES = frozenset(_FUNCTIONS)
_STATEMENT_TYPES = frozenset(cls for cls in vars(ast).values()
                             if isinstance(cls, type) and issubclass(cls, (ast.Module, *_CONTAINERS)))
_ALWAYS_VISITED_TYPES = _STATEMENT_TYPES | {ast.Lambda}
_STORING = frozenset({ast.Assign, ast.Delete, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.With,
                      ast.AsyncWith})  # the statements store_targets reads
# the expressions _is_source, _may_write or _note_exempt can answer for
_EXPRESSIONS_LOOKED_AT = frozenset({ast.Attribute, ast.Name, ast.Constant, ast.keyword, ast.Subscript, ast.Call,
                                    ast.Compare})
# expressions whose children are walked whatever their text (a comprehension's target is a store)
_TARGET_HOLDERS = frozenset({ast.comprehension, ast.Tuple, ast.List, ast.Starred})
# statements that hold no statement (a lambda directly in one, ``f = lambda: 0``, is left to ``DemandSweep._scan``'s
# scan of it alone, as one deeper in an expression is)
_SIMPLE = frozenset({ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Delete, ast.Raise,
                     ast.Assert, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Pass, ast.Break,
                     ast.Continue})


def scan_functions(tree: ast.AST, data: bytes, module_names: dict[str, str | None] | None = None,
                   attr_writers: dict[str, set[int]] | None = None) -> dict[int, FunctionScan]:
    """Every function and lambda in ``tree`` (by ``id`` of its node; ``data``: the module's source), scanned
    at once: whether it holds a device source (:func:`_is_source`) and through which nodes it may write.
    ``module_names``, when given, gets the names that may hold a module (for :func:`effects`): every name an
    import binds, anywhere in the tree, with the absolute module it imports from (``None``: a relative
    import), and every name assigned a name or an attribute at the top level (``None``). ``attr_writers``, when
    given, gets for each attribute name the functions (``id`` of the innermost ``def``) with a statement that
    assigns it (``x.name = ...``: the engine's index of who may change an attribute, :meth:`Engine.index_writes`).

    Statements are all visited (targets and ``global`` are writes); an expression is walked only when a
    word it would need is on its lines (:data:`_SCANNED_WORDS`), which leaves out most of a library's
    expressions. Each node counts for every function around it: a nested function's text is its enclosing
    functions' text too. Walking every node of every function was a fifth of a library's analysis."""
    words = _Lines(data, _SCANNED_WORDS)
    between, inside = words.between, words.inside
    scans: dict[int, FunctionScan] = {}
    exempt: set[int] = set()  # nodes that neither write nor give a known state (:func:`_note_exempt`)
    stack: list[tuple[ast.AST, tuple[FunctionScan, ...]]] = [(tree, ())]
    pop, push = stack.pop, stack.append
    while stack:
        node, owners = pop()
        kind = type(node)
        if kind in _FUNCTION_TYPES:
            scan = scans[id(node)] = FunctionScan(id(node), node=node)
            owners = (*owners, scan)
        if kind not in _STATEMENT_TYPES:  # an expression: all of it
            if owners and kind in _EXPRESSIONS_LOOKED_AT:
                if _is_source(node) and id(node) not in exempt:
                    for owner in owners:
                        owner.mentions = True
                if _may_write(node) and id(node) not in exempt:
                    for owner in owners:
                        owner.writes.append(node)
                _note_exempt(node, exempt)
            every = kind in _TARGET_HOLDERS
            for child in child_nodes(node):
                if every or type(child) is ast.Lambda or not hasattr(child, "end_col_offset") or inside(child):
                    push((child, owners))  # (a sub-expression with no word in its text holds nothing to find)
            continue
        if module_names is not None:
            if kind is ast.Import:
                for alias in node.names:  # type: ignore[attr-defined]
                    module_names.setdefault(alias.asname or alias.name.partition(".")[0],
                                            alias.name if alias.asname else alias.name.partition(".")[0])
            elif kind is ast.ImportFrom:
                source = node.module if not node.level else None  # type: ignore[attr-defined]
                for alias in node.names:  # type: ignore[attr-defined]
                    module_names.setdefault(alias.asname or alias.name, source and f"{source}.{alias.name}")
            elif not owners and isinstance(getattr(node, "value", None), (ast.Name, ast.Attribute)):
                for target in store_targets(node):  # ``sub = pkg.sub``: an alias of what may be a module
                    if isinstance(target, ast.Name):
                        module_names.setdefault(target.id, None)
        if owners:
            found: list[ast.AST] = [node] if kind is ast.Global else []
            if kind in _STORING:
                target_writes(store_targets(node), found)
            for write in found:
                for owner in owners:
                    owner.writes.append(write)
            if attr_writers is not None:
                for write in found:
                    if type(write) is ast.Attribute:
                        attr_writers.setdefault(write.attr, set()).add(owners[-1].node_id)
        if kind in _SIMPLE and not between(node.lineno, node.end_lineno or node.lineno):  # type: ignore[attr-defined]
            continue  # no statement inside, no word on its lines: none of its expressions would be walked
        for child in child_nodes(node):
            if type(child) in _ALWAYS_VISITED_TYPES or not hasattr(child, "end_col_offset") or inside(child):
                push((child, owners))  # (withitem, arguments and comprehensions have no position: walked)
    return scans


def summary_of(scans: dict[int, FunctionScan], imported: dict[str, str | None],
               written: dict[str, set[int]]) -> dict[str, Any]:
    """A module's scan (:func:`scan_functions` with ``module_names`` and ``attr_writers``) as plain data."""
    writers: dict[str, list[list[int]]] = {}
    for attr, owners in written.items():
        nodes = [scans[owner].node for owner in owners]
        writers[attr] = sorted([node.lineno, node.col_offset] for node in nodes)  # type: ignore[union-attr]
    mentions: dict[str, bool] = {}
    shared: set[str] = set()  # positions two functions give (wrong positions in an f-string): left out
    for scan in scans.values():
        key = scan_summary.position(scan.node)  # type: ignore[arg-type]
        if key in mentions:
            shared.add(key)
        mentions[key] = scan.mentions
    for key in shared:
        del mentions[key]  # (a function left out is scanned alone, which finds what the module's scan found)
    return scan_summary.new(dict(imported), mentions, writers)


def summarize(source: Any) -> None:
    """Scan a parsed source now, before its bodies are made lazy (:mod:`analyzer.lazy_bodies`): its summary (when
    the cache gave none) and each function's scan by position (``function_scans``: what a run would find walking
    the module again, without the nodes of the functions themselves)."""
    if source.tree is None:
        return
    imported: dict[str, str | None] = {}
    written: dict[str, set[int]] = {}
    scans = scan_functions(source.tree, source.data, imported, written)
    summary = summary_of(scans, imported, written)
    if source.scan is None:
        source.scan = summary
    functions = summary["functions"]
    trimmed: dict[int, ast.AST] = {}
    source.function_scans = {
        key: (scan.mentions, [_what_effects_read(write, trimmed) for write in scan.writes])
        for scan in scans.values() if (key := scan_summary.position(scan.node)) in functions}  # type: ignore[arg-type]


def _what_effects_read(write: ast.AST, done: dict[int, ast.AST]) -> ast.AST:
    """``write`` with only what :func:`_effects` reads of it (kept while the rest of the body is not: a mutator
    call's arguments, a ``setattr``'s value, a subscript's index are left out), one copy per node."""
    found = done.get(id(write))
    if found is not None:
        return found
    kind = type(write)
    if kind is ast.Call:
        func = write.func  # type: ignore[attr-defined]
        found = ast.Call(func=func, args=write.args[:2] if type(func) is ast.Name else [],  # type: ignore[attr-defined]
                         keywords=[])
    elif kind is ast.Subscript:
        found = ast.Subscript(value=write.value, slice=_NO_INDEX, ctx=write.ctx)  # type: ignore[attr-defined]
    else:
        found = write
    done[id(write)] = found
    return found


_NO_INDEX = ast.Constant(value=None)


_DICT_READERS = frozenset({"get", "keys", "items", "values", "copy"})
#: ``.to()`` keywords that never name a device
_CAST_KEYWORDS = frozenset({"dtype", "non_blocking", "copy", "memory_format"})


def _is_dict_attribute(node: ast.AST) -> bool:
    return type(node) is ast.Attribute and node.attr == "__dict__"


def _is_dtype(node: ast.AST) -> bool:
    """``y.dtype``, ``torch.float16``, ``dtype``, ``out_dtype``: a dtype, never a device (a cast, not a move)."""
    kind = type(node)
    if kind is ast.Attribute:
        base = node.value  # type: ignore[attr-defined]
        return node.attr == "dtype" or (  # type: ignore[attr-defined]
            type(base) is ast.Name and base.id == "torch" and node.attr != "device")  # type: ignore[attr-defined]
    return kind is ast.Name and "dtype" in node.id  # type: ignore[attr-defined]


def _note_exempt(node: ast.AST, exempt: set[int]) -> None:
    """Add the children of ``node`` (visited after it) that neither write nor give a known state: a
    ``__dict__`` only read (``x.__dict__[k]``, ``k in x.__dict__``, ``x.__dict__.get(k)``), and the
    ``.to`` of a cast (``x.to(y.dtype)``, ``x.to(torch.float16)``, ``x.to(dtype=dtype)``)."""
    kind = type(node)
    if kind is ast.Subscript and type(node.ctx) is ast.Load and _is_dict_attribute(node.value):  # type: ignore[attr-defined]
        exempt.add(id(node.value))  # type: ignore[attr-defined]
    elif kind is ast.Compare and all(type(op) in (ast.In, ast.NotIn) for op in node.ops):  # type: ignore[attr-defined]
        exempt.update(id(c) for c in node.comparators if _is_dict_attribute(c))  # type: ignore[attr-defined]
    elif kind is ast.Call:
        func = node.func  # type: ignore[attr-defined]
        if type(func) is not ast.Attribute:
            return
        if func.attr in _DICT_READERS and _is_dict_attribute(func.value):
            exempt.add(id(func.value))
        elif (func.attr == "to" and (node.args or node.keywords)  # type: ignore[attr-defined]
              and all(map(_is_dtype, node.args))  # type: ignore[attr-defined]
              and all(k.arg in _CAST_KEYWORDS for k in node.keywords)):  # type: ignore[attr-defined]
            exempt.add(id(func))


@dataclass(frozen=True)
class Effects:
    """What a skipped function's text may change, as the full sweep would have seen it change.

    The full sweep runs an uncalled function with unknown arguments, and a store through an unknown
    object reaches no instance the analysis knows: only stores through ``self`` (the instances of the
    method's class), through a parameter's default, a global or anything else evaluated in the body can."""

    own: frozenset[str]  # attribute names stored on ``self`` (instances of the method's class)
    any: frozenset[str]  # attribute names stored on objects the analysis may know (any instance)
    modules: frozenset[str]  # of ``any``, those stored through an object that may be a project module
    globals: frozenset[str]  # module globals declared ``global`` (rebound)
    # names filled (``NAME[k] = ...``, ``NAME.append(...)``): module globals unless the function binds them (which
    # :meth:`DemandSweep.skip_uncalled` asks only of those the module holds: a function's scope is a walk of it)
    filled: frozenset[str]


def effects(fn: FunctionInfo, writes: list[ast.AST], module_names: set[str] | frozenset[str]) -> Effects:
    """What ``fn`` may change, from the nodes :func:`scan_functions` found it may store through.

    A project module is an object the analysis knows only through an import: a store reaches one only through
    an expression rooted in a name that an import of a project module binds or that the module's top level
    assigns a name or an attribute (``sub = pkg.sub``; ``module_names``: :meth:`DemandSweep.module_names`), or
    one not rooted in a name at all. (A function's local alias, ``m = pkg.sub; m.X = 1``, is not followed.)"""
    node = fn.node
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    with_default = {a.arg for a in positional[len(positional) - len(args.defaults):]} | {
        a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None}
    receiver = receiver_of(fn)
    unknown_args = set(fn.param_names) - with_default - {receiver}
    found = _effects(writes, receiver, unknown_args, module_names, None)
    if ALL_ATTRIBUTES in found.any:
        # a store of every attribute name (``setattr(m, name, ...)``) makes every instance's attributes partly
        # unknown: look closer at what it stores through and with which names (rare: a walk of the function)
        found = _effects(writes, receiver, unknown_names(node, unknown_args), module_names, node)
    return found


def receiver_of(fn: FunctionInfo) -> str | None:
    """The parameter that holds ``self`` (the instances of the method's class) when ``fn`` is skipped."""
    args = fn.node.args
    positional = [*args.posonlyargs, *args.args]
    return positional[0].arg if fn.cls is not None and positional \
        and fn.kind in (FunctionKind.FUNCTION, FunctionKind.PROPERTY) else None


def _effects(writes: list[ast.AST], receiver: str | None, unknown: set[str] | frozenset[str],
             module_names: set[str] | frozenset[str],
             function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None) -> Effects:
    """:func:`effects` with ``unknown`` the names that can hold only unknown objects; given the ``function``,
    a ``setattr`` whose name iterates over a local dict's constant keys stores those names."""
    own: set[str] = set()
    anywhere: set[str] = set()
    modules: set[str] = set()
    names: set[str] = set()
    filled: set[str] = set()

    def attribute(base: ast.expr, attr: str) -> None:
        if isinstance(base, ast.Name) and base.id == receiver:
            own.add(attr)
        elif not unknown_rooted(base, unknown):
            anywhere.add(attr)
            root = _root(base)
            if not isinstance(root, ast.Name) or root.id in module_names:
                modules.add(attr)

    def container(target: ast.expr) -> None:
        if isinstance(target, ast.Attribute):
            attribute(target.value, target.attr)
        elif isinstance(target, ast.Name):
            filled.add(target.id)

    for sub in writes:
        if isinstance(sub, ast.Attribute):
            if isinstance(sub.ctx, (ast.Store, ast.Del)):
                attribute(sub.value, sub.attr)
            elif sub.attr == "__dict__":
                attribute(sub.value, ALL_ATTRIBUTES)
        elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            container(sub.value)
        elif isinstance(sub, ast.Global):
            names.update(sub.names)
        elif isinstance(sub, ast.Call):
            func = sub.func
            if isinstance(func, ast.Attribute) and func.attr in _MUTATORS:
                container(func.value)
            elif isinstance(func, ast.Name) and func.id == "setattr" and len(sub.args) >= 2:
                name = sub.args[1]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    attribute(sub.args[0], name.value)
                    continue
                keys = constant_keys(function, name.id) if function is not None and isinstance(name, ast.Name) \
                    else None
                for key in keys if keys is not None else (ALL_ATTRIBUTES,):
                    attribute(sub.args[0], key)
    return Effects(frozenset(own), frozenset(anywhere), frozenset(modules), frozenset(names), frozenset(filled))


def _root(node: ast.expr) -> ast.expr:
    """The expression an attribute, subscript or call chain starts from (``a`` of ``a.b[0].c()``)."""
    while True:
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return node


class DemandSweep(EngineMixin):
    """Which uncalled functions the sweep analyses, and the havoc of the skipped ones (mixed into the engine)."""

    def init_demand(self, files: int) -> None:
        self.demand_sweep = files > DEMAND_SWEEP_MIN_FILES
        # both grow only, across passes: attribute names any instance may have had stored by a skipped function,
        # and (class, name) for what skipped methods stored on ``self``
        self.havoc_attrs: set[str] = set()
        self.havoc_own: set[tuple[Any, str]] = set()
        self.havoc_module_attrs: set[str] = set()  # of havoc_attrs, those that may be stored on a project module
        self._imported: dict[str, dict[str, str | None]] = {}  # file -> names that may hold a module (scan)
        self._module_names: dict[str, frozenset[str]] = {}  # file -> names that may hold a project module
        # this pass: attribute name -> the classes (None: a project module) a read of it found no skipped
        # function's assignment on; the pass is stale when a later havoc reaches one of them
        self.unhavocked_reads: dict[str, set[Any]] = {}
        self._shim_modules: dict[str, bool] = {}  # file -> does it mention runtime_shim (then nothing is skipped)
        self._scans: dict[str, dict[int, FunctionScan]] = {}  # file -> its functions' scans
        # file -> its scan as plain data (:mod:`analyzer.engine.scan_summary`), restored from the cache or built
        # by the scan: where a module has one, ``_scans`` is filled only when a run needs a function's writes
        self._summaries: dict[str, dict[str, Any]] = {}
        self._alone: dict[int, FunctionScan] = {}  # a lambda the module's scan did not reach, scanned alone
        self._effects: dict[int, Effects] = {}
        self.skipped_uncalled = 0

    def begin_demand_pass(self) -> None:
        self.unhavocked_reads = {}
        self.changes.begin_pass()  # (the engine's pass starts here: the demand sweep's first)
        self.skipped_uncalled = 0

    def sweep_worthy(self, fn: FunctionInfo, instantiated: set[Any]) -> bool:
        """Should the sweep analyse ``fn``? Always in the full sweep; on demand, see the module doc."""
        if not self.demand_sweep or (fn.cls is not None and fn.cls in instantiated):
            return True
        return self._uses_shim(fn) or self._mentions(fn)

    def _uses_shim(self, fn: FunctionInfo) -> bool:
        found = self._shim_modules.get(fn.module.file)
        if found is None:
            found = self._shim_modules[fn.module.file] = b"runtime_shim" in fn.module.source.data
        return found

    def scan_modules(self, modules: list[Any], attr_writers: dict[str, set[tuple[str, int, int]]]) -> None:
        """Scan every module now, filling ``attr_writers`` on the way (one walk for both); a module whose source
        holds its summary (the cache's, for these bytes) is restored from it instead."""
        for module in modules:
            summary = module.source.scan
            if summary is not None:
                self._restore(module, summary, attr_writers)
            elif module.source.tree is not None:
                self._summarize(module, attr_writers)
            else:
                self._scan_module(module)

    def _summarize(self, module: Any, attr_writers: dict[str, set[tuple[str, int, int]]]) -> None:
        """Scan ``module`` and keep its scan as plain data on its source (for the cache, and the other worlds)."""
        written: dict[str, set[int]] = {}
        scans = self._scan_module(module, written)
        module.source.scan = summary_of(scans, self._imported[module.file], written)
        self._restore(module, module.source.scan, attr_writers)

    def _restore(self, module: Any, summary: dict[str, Any],
                 attr_writers: dict[str, set[tuple[str, int, int]]]) -> None:
        file = module.file
        self._summaries[file] = summary
        self._imported[file] = dict(summary["imported"])
        for attr, owners in summary["writers"].items():
            attr_writers.setdefault(attr, set()).update((file, line, col) for line, col in owners)

    def _mentions(self, fn: FunctionInfo) -> bool:
        summary = self._summaries.get(fn.module.file)
        if summary is not None and fn.module.file not in self._scans:
            entry = summary["functions"].get(scan_summary.position(fn.node))
            if entry is not None:
                return entry[0]
        return self._scan(fn).mentions

    def _scan_module(self, module: Any, attr_writers: dict[str, set[int]] | None = None) -> dict[int, FunctionScan]:
        tree = module.source.tree
        names = self._imported[module.file] = {}
        scans = self._scans[module.file] = scan_functions(tree, module.source.data, names, attr_writers) \
            if tree is not None else {}
        return scans

    def _scan(self, fn: FunctionInfo) -> FunctionScan:
        """``fn``'s scan (its module's functions are scanned together, on the first need, unless the scan that
        summarised it kept each function's: :func:`summarize`)."""
        scans = self._scans.get(fn.module.file)
        if scans is None:
            kept = fn.module.source.function_scans
            entry = kept.get(scan_summary.position(fn.node)) if kept is not None else None
            if entry is not None:
                return FunctionScan(id(fn.node), entry[0], entry[1], fn.node)
            summary = self._summaries.get(fn.module.file)
            if summary is not None and scan_summary.position(fn.node) not in summary["functions"]:
                found = self._alone.get(id(fn.node))  # (its module's scan would not reach it either)
                if found is None:
                    found = self._alone[id(fn.node)] = scan_functions(fn.node, fn.module.source.data)[id(fn.node)]
                return found
            scans = self._scan_module(fn.module)
        found = scans.get(id(fn.node))
        if found is None:  # a lambda in an expression the scan did not walk: scan it alone
            found = scans[id(fn.node)] = scan_functions(fn.node, fn.module.source.data)[id(fn.node)]
        return found

    def skip_uncalled(self, fn: FunctionInfo) -> None:
        """``fn`` is not analysed: what it may change becomes unknown."""
        self.skipped_uncalled += 1
        found = self.effects_of(fn)
        for attr in found.any:
            if attr not in self.havoc_attrs:
                self.havoc_attrs.add(attr)
                self._havoc(attr)
        for attr in found.modules:
            if attr not in self.havoc_module_attrs:
                self.havoc_module_attrs.add(attr)
                self._havoc(attr)
        for attr in found.own:
            if (fn.cls, attr) not in self.havoc_own:
                self.havoc_own.add((fn.cls, attr))
                self._havoc(attr)
        namespace = fn.module.namespace
        for name in found.globals:
            if name in namespace:
                self.store_global(fn.module, name, TOP)
        for name in found.filled:
            if name in namespace and name not in found.globals and name not in fn.locals:
                self.store_global(fn.module, name, TOP)

    def effects_of(self, fn: FunctionInfo) -> Effects:
        """What ``fn`` may change if it is skipped (computed once)."""
        found = self._effects.get(id(fn.node))
        if found is None:
            names = self.module_names(fn.module.file)
            summary = self._summaries.get(fn.module.file)
            key, receiver = scan_summary.position(fn.node), receiver_of(fn)
            stored = scan_summary.effects(summary, key, receiver, names) if summary is not None else None
            if stored is not None:
                found = Effects(*(frozenset(part) for part in stored))
            else:
                found = effects(fn, self._scan(fn).writes, names)
                if summary is not None:
                    scan_summary.put_effects(summary, key, receiver, names, [
                        sorted(found.own), sorted(found.any), sorted(found.modules), sorted(found.globals),
                        sorted(found.filled)])
            self._effects[id(fn.node)] = found
        return found

    def worth_analyzing_instead(self, fn: FunctionInfo) -> bool:
        """Would skipping ``fn`` make every attribute of every instance partly unknown (a ``setattr`` with a
        computed name on objects it may know)? Then it is analysed: the analysis makes unknown only the
        attributes of the instances it reaches (rare: ``fuse`` walks of a model's children)."""
        return ALL_ATTRIBUTES in self.effects_of(fn).any

    def havoc_instance_attributes(self, cls: Any) -> None:
        """``setattr(obj, name, value)`` with ``name`` unknown, ``obj`` an instance of ``cls``: any attribute of
        its instances may hold anything from now on."""
        if (cls, ALL_ATTRIBUTES) in self.havoc_own:
            return
        self.havoc_own.add((cls, ALL_ATTRIBUTES))
        self._havoc(ALL_ATTRIBUTES)
        if not self.demand_sweep:
            self.changes.read_went_stale()  # reads so far did not look at the havoc sets: the next pass does

    def module_names(self, file: str) -> frozenset[str]:
        """The names of a scanned module that may hold a project module: those imported from one (``from
        pkg import name`` may import the submodule ``pkg.name``), relatively, or bound at the top level.
        Stores through ``os``, ``torch`` or ``amp`` change no module the analysis knows."""
        found = self._module_names.get(file)
        if found is None:
            is_project = self.resolver.is_project
            found = self._module_names[file] = frozenset(
                name for name, source in self._imported[file].items()
                if source is None or is_project(source) or is_project(source.rpartition(".")[0]))
        return found

    def _havoc(self, attr: str) -> None:
        """``attr`` was just added to a havoc set: a read that found it known and now would not makes the pass
        stale (the next pass reads it as unknown). Reads of the same name on unrelated classes are left alone."""
        self.changes.havoc()
        reads = self.unhavocked_reads
        for name in (list(reads) if attr == ALL_ATTRIBUTES else (attr,)):
            readers = reads.get(name)
            if not readers:
                continue
            reached = {cls for cls in readers if self.havocked(cls, name)}
            if reached:
                self.changes.read_went_stale()
                readers -= reached  # havoc only grows: they stay reached

    def havocked(self, cls: Any, attr: str) -> bool:
        """May a skipped function have stored ``attr`` on an instance of ``cls`` (None: a project module)?"""
        if cls is None:
            return attr in self.havoc_module_attrs or ALL_ATTRIBUTES in self.havoc_module_attrs
        if attr in self.havoc_attrs or ALL_ATTRIBUTES in self.havoc_attrs:
            return True
        if not self.havoc_own:
            return False
        return any((base, attr) in self.havoc_own or (base, ALL_ATTRIBUTES) in self.havoc_own for base in cls.mro())

    def havoc_attribute(self, cls: Any, attr: str, value: Value | None) -> Value | None:
        """An attribute read of an instance of ``cls`` (None: a project module), joined with "anything" when a
        skipped function may have stored it (``None``, not found, stays so unless havocked)."""
        if not self.demand_sweep and not self.havoc_own:
            return value
        havoc = self.havocked(cls, attr)
        self.note_global_read(("havoc", cls, attr), TOP if havoc else None)
        if not havoc:
            self.unhavocked_reads.setdefault(attr, set()).add(cls)
            return value
        return TOP if value is None else value.join(TOP)
