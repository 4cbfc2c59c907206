"""Program structure: the functions, classes and modules of the analysed code, and the names each scope binds."""

from __future__ import annotations

import ast
import enum
import os
import zlib
from array import array
from dataclasses import dataclass
from typing import Any

from .. import lazy_bodies
from ..domain import Atom, Value
from ..frontend import SourceFile
from ..tree_walk import child_nodes
from . import scan_summary


class FunctionKind(enum.Enum):
    """How a function is reached from its class (its decorator)."""

    FUNCTION = "function"  # a plain function or method
    STATICMETHOD = "staticmethod"
    CLASSMETHOD = "classmethod"
    PROPERTY = "property"  # (``cached_property`` too)
    SETTER = "setter"  # a property's setter or deleter

    __hash__ = object.__hash__  # members are singletons; Enum's hash is slow


class FunctionInfo:
    """A ``def`` or ``lambda`` of the analysed code (one per AST node, stable across passes)."""

    def __init__(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, module: ModuleInfo,
                 qualname: str, cls: ClassInfo | None) -> None:
        self.node = node
        self.module = module
        self.qualname = qualname
        self.name = getattr(node, "name", "<lambda>")
        self.cls = cls
        self.kind = FunctionKind.FUNCTION
        args = node.args
        self.positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        self.vararg = args.vararg.arg if args.vararg else None
        self.kwonly = [a.arg for a in args.kwonlyargs]
        self.kwarg = args.kwarg.arg if args.kwarg else None
        self.param_names = [*self.positional, *([self.vararg] if self.vararg else []), *self.kwonly,
                            *([self.kwarg] if self.kwarg else [])]
        # ``locals``, ``free``, ``is_generator`` and ``globals`` (the names of its scope) are read from the
        # body when first asked for (``__getattr__``): a library defines thousands of functions the demand
        # sweep never runs, and walking each body at its ``def`` was a third of the modules' top level

    # read from the body when first asked for (``__getattr__``)
    locals: set[str]
    free: list[str]
    is_generator: bool
    globals: frozenset[str]

    def __getattr__(self, name: str) -> Any:
        if name not in _SCOPE_ATTRIBUTES:
            raise AttributeError(name)
        bound, loads, generator, declared = self.module.scope_info(self.node)
        bound.update(self.param_names)
        self.locals = bound  # names bound in its own scope, parameters included
        self.free = sorted(loads - bound)  # names it loads that it does not bind
        self.__dict__.setdefault("is_generator", generator)  # (``async def`` sets it before)
        self.globals = declared  # names its own scope declares ``global``
        return self.__dict__[name]

    def __repr__(self) -> str:
        return f"<function {self.qualname}>"



_SCOPE_ATTRIBUTES = frozenset({"locals", "free", "is_generator", "globals"})


#: The methods a record of data may have besides dunders: moving its tensors.
DATA_METHODS = frozenset({"to", "cuda", "cpu", "pin_memory"})


class ClassInfo:
    """A ``class`` of the analysed code; its namespace is rebuilt each pass, its identity is stable."""

    bases_version = 0  # bumped whenever a class's bases change (cached MROs are then recomputed)

    def __init__(self, node: ast.ClassDef, module: ModuleInfo, qualname: str) -> None:
        self.node = node
        self.module = module
        self.qualname = qualname
        self.name = node.name
        self.bases: list[ClassInfo] = []
        self._mro: tuple[int, tuple[ClassInfo, ...]] | None = None  # (bases_version, the MRO then)
        self.namespace: dict[str, Value] = {}
        self.dataclass_fields: list[tuple[str, ast.expr | None]] | None = None
        self.setters: dict[str, Value] = {}  # property name -> its ``@name.setter`` function
        # the library classes its bases derive from, as the models name them (``torch.nn.Module``), in order
        self.library_bases: tuple[str, ...] = ()
        # a base the analysis could not name (neither a class of the analysed code nor a library class a model
        # knows): it may derive from any project class, so ``isinstance`` against one cannot say no
        self.unknown_base = False
        self.dict_base = False  # derives from the builtin ``dict`` (a ``BatchEncoding``-like mapping)
        self._digest: int | None = None  # the hash, computed on first use (sets of instances hash it often)

    def __hash__(self) -> int:
        # by where it is defined, not by identity: sets of instances of project classes (a receiver of several
        # objects) then iterate in the same order in every analysis of the program, and so do the calls made
        # on them (which of them reach a method's bound on calling contexts first)
        # (a digest, not ``hash(str)``: the same order in every process, whatever ``PYTHONHASHSEED`` is)
        digest = self._digest
        if digest is None:
            where = f"{self.module.file}:{self.qualname}:{self.node.lineno}:{self.node.col_offset}"
            digest = self._digest = zlib.crc32(where.encode())
        return digest

    def set_bases(self, bases: list[ClassInfo]) -> None:
        """The class statement ran again: its bases as evaluated now (every cached MRO may change)."""
        if bases != self.bases:
            ClassInfo.bases_version += 1
        self.bases = bases

    def mro(self) -> tuple[ClassInfo, ...]:
        """This class, then its bases breadth first (cached until some class's bases change: a lookup of
        every attribute read walks it)."""
        cached = self._mro
        if cached is not None and cached[0] == ClassInfo.bases_version:
            return cached[1]
        out: list[ClassInfo] = []
        pending = [self]
        while pending:
            cls = pending.pop(0)
            if cls not in out:
                out.append(cls)
                pending.extend(cls.bases)
        self._mro = (ClassInfo.bases_version, tuple(out))
        return self._mro[1]

    def derives_from(self, other: ClassInfo) -> bool | None:
        """Whether an instance of this class is an instance of ``other`` (None: a base is not known)."""
        chain = self.mro()
        if other in chain:
            return True
        return None if any(cls.unknown_base for cls in chain) else False

    def lookup(self, name: str, after: ClassInfo | None = None) -> Value | None:
        chain = self.mro()
        if after is not None and after in chain:
            chain = chain[chain.index(after) + 1:]
        for cls in chain:
            if name in cls.namespace:
                return cls.namespace[name]
        return None

    def setter(self, name: str) -> Value | None:
        """The setter of the property ``name`` when the class that defines ``name`` first has one."""
        for cls in self.mro():
            if name in cls.namespace:
                return cls.setters.get(name)
        return None

    def has_library_base(self, name: str) -> bool:
        """Derived from the library class ``name`` (a model's: ``torch.nn.Module``)."""
        return any(name in c.library_bases for c in self.mro())

    def holds_data(self, record_bases: frozenset[str]) -> bool:
        """Whether an instance is a record of data (a batch): a dataclass, a class derived from library record
        classes only (``record_bases``: ``typing.NamedTuple``), or a class whose methods are dunders and moves
        (``to``, ``cuda``); not a module, a trainer or any object with behaviour of its own. What a record holds
        is what a caller hands over when it passes one."""
        chain = self.mro()
        if any(c.unknown_base or not set(c.library_bases) <= record_bases for c in chain):
            return False
        if any(c.dataclass_fields is not None or c.library_bases for c in chain):
            return True
        return all(not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or stmt.name.startswith("__")
                   or stmt.name in DATA_METHODS for c in chain for stmt in c.node.body)


    def dict_items_kept(self) -> bool:
        """Whether an instance's items are those the builtin ``dict`` keeps: a subclass of ``dict`` (through
        project classes) that defines none of the methods that would store or read them otherwise."""
        chain = self.mro()
        return any(c.dict_base for c in chain) and not any(
            name in c.namespace for c in chain for name in ("__init__", "__new__", "__getitem__", "__setitem__",
                                                             "__missing__", "__class_getitem__"))

    def defines_truth(self) -> bool:
        return any("__bool__" in c.namespace or "__len__" in c.namespace for c in self.mro())

    def __repr__(self) -> str:
        return f"<class {self.qualname}>"



#: The heap attribute that holds what an instance of a ``dict`` subclass maps (not a name Python code can use).
DICT_ITEMS = "<dict items>"
#: ``dict`` methods that change what it maps: through an instance, they make its items unknown.
DICT_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__",
                           "__ior__"})
#: ``dict`` methods that read what it maps (a ``dict`` subclass's items, through its instance).
DICT_READERS = frozenset({"items", "keys", "values", "get", "copy"})


class LoadState(enum.Enum):
    """How far a module's top level has run in this pass."""

    NEW = "new"
    LOADING = "loading"  # (a cycle: what it defined so far is its namespace)
    DONE = "done"


class ModuleInfo:
    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.name = source.module
        self.file = source.path
        # the directory the top-level package (or the script) is in: where its absolute imports start
        directory = os.path.dirname(os.path.abspath(source.path))
        for _ in range(source.module.count(".") + (1 if source.is_package else 0)):
            directory = os.path.dirname(directory)
        self.root = directory
        self.namespace: dict[str, Value] = {}
        self.state = LoadState.NEW
        self._utf8: bytes | None = None  # the text as ast counts columns, and where each line starts in it
        self._line_starts: array[int] | None = None

    def scope_info(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                   ) -> tuple[set[str], set[str], bool, frozenset[str]]:
        """:func:`scope_info` of one of this module's functions, remembered by the function's source text (an
        editor re-analyses the whole file on every keystroke, where most functions did not change)."""
        # (a ``def`` is a statement: its position is exact; a lambda can sit in an f-string, and is small)
        summary = self.source.scan if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if summary is not None:  # the cache's, by the file's content (a def's position names it there)
            kept = scan_summary.scope(summary, node)
            if kept is None:
                kept = self._scope_info(node)
                scan_summary.put_scope(summary, node, kept)
            return kept
        return self._scope_info(node)

    def _scope_info(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                    ) -> tuple[set[str], set[str], bool, frozenset[str]]:
        segment = self._segment(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if segment is None or not segment.startswith((b"def", b"async")):
            return scope_info(lazy_bodies.full(node))
        found = _SCOPES_BY_TEXT.get(segment)
        if found is None:
            if len(_SCOPES_BY_TEXT) >= _SCOPES_BY_TEXT_SIZE:
                _SCOPES_BY_TEXT.clear()
            # (a body not parsed yet is read from a copy: a skipped function's names keep no tree)
            bound, loads, generator, declared = scope_info(lazy_bodies.full(node))
            found = _SCOPES_BY_TEXT[segment] = (frozenset(bound), frozenset(loads), generator, declared)
        return set(found[0]), set(found[1]), found[2], found[3]

    def _segment(self, node: ast.stmt) -> bytes | None:
        """The source of ``node`` (its whole subtree: the same text parses to the same tree, positions aside);
        None when the text is not at hand or has ``\r`` line ends (lines are then not split on ``\n`` alone)."""
        if self._line_starts is None:
            source = self.source
            # ast's columns are UTF-8 byte offsets in the line: the file's own bytes when it is UTF-8 (no copy)
            data = source.data if source.utf8 else None if source.decoded is None else source.decoded.encode("utf-8")
            if data is None or source.tree is None or b"\r" in data:
                self._line_starts = array("q")
                return None
            self._utf8 = data
            found = array("q", [0])  # (machine integers: a list would hold an int object per line)
            position = data.find(b"\n")
            while position >= 0:
                found.append(position + 1)
                position = data.find(b"\n", position + 1)
            self._line_starts = found
        starts = self._line_starts
        end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        if not starts or self._utf8 is None or end_line is None or end_col is None or end_line > len(starts):
            return None
        return self._utf8[starts[node.lineno - 1] + node.col_offset: starts[end_line - 1] + end_col]



@dataclass(frozen=True, slots=True)
class SuperRef(Atom):
    """``super()`` inside a method: attribute lookups start after ``cls`` in the instance's MRO."""

    cls: Any
    instance: Atom



def scope_info(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
               ) -> tuple[set[str], set[str], bool, frozenset[str]]:
    """The names bound in a function's own scope, the names it (or its nested scopes) loads, whether it yields,
    and the names its own scope declares ``global``, in one walk (a ``global`` in its own scope is one the walk
    meets with ``own`` set: nested ``def``, ``class`` and ``lambda`` bodies and comprehensions are walked with it
    cleared, and hold no statement of the function's own scope)."""
    bound: set[str] = set()
    loads: set[str] = set()
    declared: set[str] = set()
    own_globals: set[str] = set()
    generator = False
    body = node.body if isinstance(node.body, list) else [node.body]
    # Any: each node is dispatched on its exact type (``type(node) is``: the walk is hot), which mypy
    # narrows only when spelled at each test
    stack: list[tuple[Any, bool]] = [(child, True) for child in body]
    while stack:
        current, own = stack.pop()
        kind = type(current)
        if kind is ast.Name:
            if type(current.ctx) is ast.Load:
                loads.add(current.id)
            elif own:
                bound.add(current.id)
            continue
        if kind is ast.Global or kind is ast.Nonlocal:
            declared.update(current.names)
            if own and kind is ast.Global and isinstance(node.body, list):
                own_globals.update(current.names)
            continue
        if kind in _PLAIN:
            stack.extend([(child, own) for child in child_nodes(current)])
            continue
        if own and kind in _YIELDS:
            generator = True
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef:
            if own:
                bound.add(current.name)
            for deco in current.decorator_list:
                stack.append((deco, own))
            if kind is ast.ClassDef:
                stack.extend((b, own) for b in current.bases)
                stack.extend((child, False) for child in current.body)
            else:
                stack.extend((d, own) for d in (*current.args.defaults, *current.args.kw_defaults) if d is not None)
                stack.extend((child, False) for child in current.body)
            continue
        if kind is ast.Lambda:
            stack.extend((d, own) for d in current.args.defaults)
            stack.append((current.body, False))
            continue
        if kind in _COMPREHENSIONS:
            for child in child_nodes(current):
                if isinstance(child, ast.comprehension):
                    stack.append((child.iter, own))
                    stack.append((child.target, False))
                    stack.extend((cond, False) for cond in child.ifs)
                else:
                    stack.append((child, False))
            continue
        if kind is ast.NamedExpr and isinstance(current.target, ast.Name):
            bound.add(current.target.id)  # the walrus binds in the enclosing function, even from a comprehension
            stack.append((current.value, own))
            continue
        if own and (kind is ast.Import or kind is ast.ImportFrom):
            for alias in current.names:
                if alias.name != "*":
                    bound.add((alias.asname or alias.name).split(".")[0])
            continue
        if own and kind is ast.ExceptHandler and current.name:
            bound.add(current.name)
        stack.extend([(child, own) for child in child_nodes(current)])
    return bound - declared, loads, generator, frozenset(own_globals)


_SCOPES_BY_TEXT: dict[bytes, tuple[frozenset[str], frozenset[str], bool, frozenset[str]]] = {}
_SCOPES_BY_TEXT_SIZE = 5_000  # functions remembered (then all forgotten at once): an editor's open files
_YIELDS = (ast.Yield, ast.YieldFrom)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
# node types with no special case above (most of them): their children are walked with the same ``own``
_SPECIAL = {ast.Name, ast.Global, ast.Nonlocal, *_YIELDS, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
            ast.Lambda, *_COMPREHENSIONS, ast.NamedExpr, ast.Import, ast.ImportFrom, ast.ExceptHandler}
_PLAIN = frozenset(kind for kind in vars(ast).values()
                   if isinstance(kind, type) and issubclass(kind, ast.AST) and kind not in _SPECIAL)


def stores_after(function: ast.AST, line: int, index: dict[int, list[tuple[int, str]]]) -> frozenset[str]:
    """The names stored (``name = ...``, loop targets, ...) in ``function``'s own scope on lines after
    ``line``; ``index`` keeps each function's stores (id of the node -> (line, name), walked once)."""
    stores = index.get(id(function))
    if stores is None:
        stores = index[id(function)] = own_scope_stores(function)
    return frozenset(name for lineno, name in stores if lineno > line)


def own_scope_stores(function: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of every ``Name`` stored in a function's own scope (nested functions, lambdas, classes
    and comprehensions left out: their stores bind in their own scopes), in no particular order."""
    out: list[tuple[int, str]] = []
    stack: list[Any] = list(ast.iter_child_nodes(function))  # dispatched on the exact type (see scope_info)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is ast.Store:
                out.append((node.lineno, node.id))
            continue
        if kind not in _SCOPES:
            stack.extend(ast.iter_child_nodes(node))
    return out


_SCOPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
                     ast.DictComp, ast.GeneratorExp})
