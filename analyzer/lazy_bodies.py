"""Function bodies parsed when first read: a large library's trees without the bodies the engine never runs.

A whole-package run of a library parses every file, and most of its functions are never entered (transformers:
70 % of the tree's nodes are in bodies the demand sweep skips), yet a parsed tree keeps every node. After a file
is parsed and everything that reads the whole file has read it (its imports, the demand sweep's scan), the body
of each function defined at its top level or in its classes is replaced by a :class:`LazyBody`: a list that
holds nothing until it is first read, then parses the body's own lines from the file's bytes, with every line
and column exactly where the whole file's parse put them (the same text parses to the same nodes), and becomes
the function's ``body`` from then on: a body read once keeps its node identities like any other.

What only looks at a function (:func:`full`: its scope's names) reads a copy with its body parsed and keeps
nothing. Only UTF-8 files with ``\\n`` line ends are laid out so (ast's columns are byte offsets in them).
"""

from __future__ import annotations

import ast
import warnings
from array import array
from collections import deque
from collections.abc import Iterator
from typing import Any, SupportsIndex

from .frontend import SourceFile

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_INDENT = frozenset(b" \t\f")


class LazyBody(list[ast.stmt]):
    """A function's body not parsed yet: reading it in any way parses it (once) and puts the parsed list on the
    function; until then its own storage is empty."""

    __slots__ = ("source", "node", "line", "start", "end")

    def __init__(self, source: SourceFile, node: ast.FunctionDef | ast.AsyncFunctionDef, line: int, start: int,
                 end: int) -> None:
        super().__init__()
        self.source: SourceFile | None = source
        self.node: ast.FunctionDef | ast.AsyncFunctionDef | None = node
        self.line = line  # the first statement's line
        self.start = start  # where its line starts in the file's bytes
        self.end = end  # where the last statement ends

    def load(self) -> list[ast.stmt]:
        """Parse the body (first read) and make it the function's; its statements are this list's too."""
        node, source = self.node, self.source
        if node is None or source is None:
            return self
        body = parse_body(source, node, self.line, self.start, self.end)
        list.extend(self, body)
        node.body = body
        self.node = self.source = None
        return body

    def __iter__(self) -> Any:
        if self.node is not None:
            self.load()
        return list.__iter__(self)

    def __len__(self) -> int:
        if self.node is not None:
            self.load()
        return list.__len__(self)

    def __getitem__(self, index: Any) -> Any:
        if self.node is not None:
            self.load()
        return list.__getitem__(self, index)

    def __reduce_ex__(self, protocol: SupportsIndex) -> Any:
        """Pickled as the plain list it stands for."""
        if self.node is not None:
            self.load()
        return list, (list(list.__iter__(self)),)


def _loading(name: str) -> Any:
    method = getattr(list, name)

    def call(self: LazyBody, *args: Any, **kwargs: Any) -> Any:
        if self.node is not None:
            self.load()
        return method(self, *args, **kwargs)

    call.__name__ = name
    return call


# every other way of reading or changing a list parses the body first
for _name in ("__contains__", "__reversed__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
              "__add__", "__mul__", "__rmul__", "__iadd__", "__imul__", "__setitem__", "__delitem__", "__repr__",
              "append", "extend", "insert", "pop", "remove", "index", "count", "copy", "sort", "reverse", "clear"):
    setattr(LazyBody, _name, _loading(_name))
LazyBody.__hash__ = None


def parse_body(source: SourceFile, node: ast.FunctionDef | ast.AsyncFunctionDef, line: int, start: int,
               end: int) -> list[ast.stmt]:
    """The statements of ``node``'s body, parsed from their own lines: under an ``if 1:`` on the line before the
    first one (whole lines: columns stay; blank lines before it: line numbers stay). A text that does not parse
    so (which a whole file that parsed cannot give) is found in a parse of the whole file instead."""
    text = source.data[start:end].decode("utf-8")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the whole file's parse ignored them too)
            tree = ast.parse("\n" * (line - 2) + "if 1:\n" + text + "\n", type_comments=False)
        block = tree.body[0]
        if len(tree.body) == 1 and isinstance(block, ast.If):
            return block.body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    return _from_whole_file(source, node)


def _from_whole_file(source: SourceFile, node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(source.data.decode("utf-8"), type_comments=False)
    for found in ast.walk(tree):
        if isinstance(found, _FUNCTIONS) and type(found) is type(node) and found.lineno == node.lineno \
                and found.col_offset == node.col_offset:
            return found.body
    raise ValueError(f"{source.path}:{node.lineno}: function not found when parsing its body again")


def full(node: Any) -> Any:
    """``node`` itself, or, while its body is not parsed, a copy of it with its body parsed (nothing is kept:
    for a look at a function the engine may never run)."""
    body = getattr(node, "body", None)
    if type(body) is not LazyBody or body.node is None or body.source is None:
        return node
    kind: Any = type(node)
    copy = kind.__new__(kind)
    copy.__dict__.update(node.__dict__)
    copy.body = parse_body(body.source, body.node, body.line, body.start, body.end)
    return copy


def is_lazy(node: ast.AST) -> bool:
    """Is ``node``'s body not parsed yet?"""
    body = getattr(node, "body", None)
    return type(body) is LazyBody and body.node is not None


def may_hold(node: ast.AST, words: bytes | tuple[bytes, ...]) -> bool:
    """False when ``node``'s body is not parsed yet and its text lacks every one of ``words`` (then no node in it
    can spell one: a walk looking for them need not parse it); True otherwise."""
    body = getattr(node, "body", None)
    if type(body) is not LazyBody or body.source is None:
        return True
    data = body.source.data
    return any(data.find(word, body.start, body.end) >= 0 for word in ((words,) if type(words) is bytes else words))


def walk(tree: ast.AST, words: bytes | tuple[bytes, ...]) -> Iterator[ast.AST]:
    """``ast.walk`` without the function bodies not parsed yet whose text lacks ``words`` (:func:`may_hold`)."""
    todo = deque([tree])
    while todo:
        node = todo.popleft()
        if may_hold(node, words):
            todo.extend(ast.iter_child_nodes(node))
        yield node


def eligible(source: SourceFile) -> bool:
    """Can ``source``'s bodies be parsed again from its bytes (UTF-8, ``\\n`` line ends, the usual grammar)?"""
    data = source.data
    return source.tree is not None and source.utf8 and b"\r" not in data and b"barry_as_FLUFL" not in data


def strip(source: SourceFile) -> int:
    """Replace the body of every function at ``source``'s top level or in its classes (at any depth of their
    blocks) by a :class:`LazyBody`; the number replaced. Left as they are: a file :func:`eligible` refuses, and a
    body that starts on the ``def``'s own line."""
    tree = source.tree
    if tree is None or not eligible(source):
        return 0
    data = source.data
    starts = array("q", [0])  # (machine integers: a list would hold an int object per line)
    position = data.find(b"\n")
    while position >= 0:
        starts.append(position + 1)
        position = data.find(b"\n", position + 1)
    count = 0
    pending: list[Any] = list(tree.body)
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            body = node.body
            if type(body) is not list or not body:
                continue
            first = body[0]
            line, col = first.lineno, first.col_offset
            decorators = getattr(first, "decorator_list", None)
            if decorators:  # (a decorated statement's text starts at its first ``@``, on a line of its own)
                line, col = min((d.lineno, d.col_offset) for d in decorators)
            if line < 2 or col <= 0 or line > len(starts) or node.end_lineno is None \
                    or node.end_col_offset is None or node.end_lineno > len(starts):
                continue
            start = starts[line - 1]
            indent = data[start:start + col].rstrip(b"@ \t\f") if decorators else data[start:start + col]
            if not _INDENT.issuperset(indent) or (decorators and b"@" not in data[start:start + col]):
                continue  # the body starts on the line of the ``def``
            node.body = LazyBody(source, node, line, start, starts[node.end_lineno - 1] + node.end_col_offset)
            count += 1
        elif kind is ast.ClassDef:
            pending.extend(node.body)
        elif kind in _BLOCKS:
            for name in ("body", "orelse", "finalbody"):
                pending.extend(getattr(node, name, ()))
            for handler in getattr(node, "handlers", ()):
                pending.extend(handler.body)
    return count


_BLOCKS = frozenset({ast.If, ast.Try, ast.With, ast.For, ast.While, ast.AsyncWith, ast.AsyncFor,
                     *((ast.TryStar,) if hasattr(ast, "TryStar") else ())})
