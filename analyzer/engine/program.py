"""Program structure: the functions, classes and modules of the analysed code, and the names each scope binds."""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from typing import Any

from ..domain import Atom, Value
from ..frontend import SourceFile
from ..tree_walk import child_nodes


class FunctionInfo:
    """A ``def`` or ``lambda`` of the analysed code (one per AST node, stable across passes)."""

    def __init__(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, module: ModuleInfo,
                 qualname: str, cls: ClassInfo | None) -> None:
        self.node = node
        self.module = module
        self.qualname = qualname
        self.name = getattr(node, "name", "<lambda>")
        self.cls = cls
        self.kind = "function"  # or "staticmethod", "classmethod", "property"
        args = node.args
        self.positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        self.vararg = args.vararg.arg if args.vararg else None
        self.kwonly = [a.arg for a in args.kwonlyargs]
        self.kwarg = args.kwarg.arg if args.kwarg else None
        self.param_names = [*self.positional, *([self.vararg] if self.vararg else []), *self.kwonly,
                            *([self.kwarg] if self.kwarg else [])]
        self.locals, loads, self.is_generator = scope_names(node)
        self.locals.update(self.param_names)
        self.globals = declared_globals(node)
        self.free = sorted(loads - self.locals)

    def __repr__(self) -> str:
        return f"<function {self.qualname}>"



class ClassInfo:
    """A ``class`` of the analysed code; its namespace is rebuilt each pass, its identity is stable."""

    def __init__(self, node: ast.ClassDef, module: ModuleInfo, qualname: str) -> None:
        self.node = node
        self.module = module
        self.qualname = qualname
        self.name = node.name
        self.bases: list[ClassInfo] = []
        self.namespace: dict[str, Value] = {}
        self.dataclass_fields: list[tuple[str, ast.expr | None]] | None = None
        self.setters: dict[str, Value] = {}  # property name -> its ``@name.setter`` function

    def mro(self) -> list[ClassInfo]:
        out: list[ClassInfo] = []
        pending = [self]
        while pending:
            cls = pending.pop(0)
            if cls not in out:
                out.append(cls)
                pending.extend(cls.bases)
        return out

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

    def defines_truth(self) -> bool:
        return any("__bool__" in c.namespace or "__len__" in c.namespace for c in self.mro())

    def __repr__(self) -> str:
        return f"<class {self.qualname}>"



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
        self.state = "new"  # "new", "loading", "done"



@dataclass(frozen=True, slots=True)
class SuperRef(Atom):
    """``super()`` inside a method: attribute lookups start after ``cls`` in the instance's MRO."""

    cls: Any
    instance: Atom



def declared_globals(node: ast.AST) -> frozenset[str]:
    """The names a function declares ``global`` in its own scope (its stores go to the module)."""
    names: set[str] = set()
    stack = list(node.body) if isinstance(node.body, list) else []
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Global):
            names.update(current.names)
        elif not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(child_nodes(current))
    return frozenset(names)


def scope_names(node: ast.AST) -> tuple[set[str], set[str], bool]:
    """Names bound in a function's own scope, names it (or its nested scopes) loads, and whether it yields."""
    bound: set[str] = set()
    loads: set[str] = set()
    declared: set[str] = set()
    generator = False
    body = node.body if isinstance(node.body, list) else [node.body]
    stack: list[tuple[ast.AST, bool]] = [(child, True) for child in body]
    while stack:
        current, own = stack.pop()
        if isinstance(current, ast.Name):
            if isinstance(current.ctx, ast.Load):
                loads.add(current.id)
            elif own:
                bound.add(current.id)
            continue
        if isinstance(current, (ast.Global, ast.Nonlocal)):
            declared.update(current.names)
            continue
        if own and isinstance(current, (ast.Yield, ast.YieldFrom)):
            generator = True
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if own:
                bound.add(current.name)
            for deco in current.decorator_list:
                stack.append((deco, own))
            if isinstance(current, ast.ClassDef):
                stack.extend((b, own) for b in current.bases)
                stack.extend((child, False) for child in current.body)
            else:
                stack.extend((d, own) for d in (*current.args.defaults, *current.args.kw_defaults) if d is not None)
                stack.extend((child, False) for child in current.body)
            continue
        if isinstance(current, ast.Lambda):
            stack.extend((d, own) for d in current.args.defaults)
            stack.append((current.body, False))
            continue
        if isinstance(current, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for child in child_nodes(current):
                if isinstance(child, ast.comprehension):
                    stack.append((child.iter, own))
                    stack.append((child.target, False))
                    stack.extend((cond, False) for cond in child.ifs)
                else:
                    stack.append((child, False))
            continue
        if isinstance(current, ast.NamedExpr) and isinstance(current.target, ast.Name):
            bound.add(current.target.id)  # the walrus binds in the enclosing function, even from a comprehension
            stack.append((current.value, own))
            continue
        if own and isinstance(current, (ast.Import, ast.ImportFrom)):
            for alias in current.names:
                if alias.name != "*":
                    bound.add((alias.asname or alias.name).split(".")[0])
            continue
        if own and isinstance(current, ast.ExceptHandler) and current.name:
            bound.add(current.name)
        stack.extend([(child, own) for child in child_nodes(current)])
    return bound - declared, loads, generator



