"""Where things are in a call's source, found with libcst: the shared helpers rules build fixes with.

A rule knows its call site from the facts (ast's span: 1-based rows, 0-based *byte* columns);
:meth:`Source.call_at` parses that call's text with libcst and maps every node of it to text
offsets, and the helpers give the spans of its receiver, its arguments and their parentheses.
Fixes are small text edits at those offsets, so everything around them (formatting, comments)
stays as it was.

Only the call is parsed, not the file: libcst's parser and position metadata take hundreds of
milliseconds on a few hundred lines, a call takes a few. Where a fix needs a module-level name
(``Tensor``), :meth:`Source.tensor_class` reads the imports with ``ast``.

Importing this module imports libcst (a few hundred milliseconds, see docs/ci.md): only rules
that build a fix import it, and only when they do.
"""

from __future__ import annotations

import ast
import functools
import re
import warnings

with warnings.catch_warnings():  # libcst imports its pyre provider, which uses deprecated typing names
    warnings.simplefilter("ignore", DeprecationWarning)
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

from devicelint.diagnostics import Edit
from devicelint.facts import Site

from . import edit_between, line_starts

SHIM = "runtime_shim"

# Expressions that can take `.attr` or `(...)` after them, and stand where a call stood, without parentheses.
_PRIMARY = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Dict, cst.Set, cst.ListComp,
            cst.SetComp, cst.DictComp, cst.SimpleString, cst.FormattedString)


class Source:
    """One file's text; its calls are parsed on demand (see :func:`source_for`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = line_starts(text)
        self._calls: dict[tuple[int, int, int, int], cst.Call | None] = {}
        self._spans: dict[cst.CSTNode, tuple[int, int]] = {}  # node -> (start, end) offsets in the text

    # --- positions ------------------------------------------------------------------------------

    def _byte_offset(self, line: int, byte_column: int) -> int:
        """The text offset of ast's (1-based line, 0-based byte column)."""
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        return start + len(self.text[start:end].encode("utf-8")[:byte_column].decode("utf-8", errors="replace"))

    def start(self, node: cst.CSTNode, outer: bool = True) -> int:
        """Where ``node`` starts (with its opening parentheses when ``outer``)."""
        lpar = [p for p in getattr(node, "lpar", ()) if p in self._spans] if outer else []
        return self._spans[lpar[0] if lpar else node][0]

    def end(self, node: cst.CSTNode, outer: bool = True) -> int:
        """Where ``node`` ends (after its closing parentheses when ``outer``)."""
        rpar = [p for p in getattr(node, "rpar", ()) if p in self._spans] if outer else []
        return self._spans[rpar[-1] if rpar else node][1]

    def edit(self, start: int, end: int, content: str) -> Edit:
        return edit_between(self.starts, self.text, start, end, content)

    def insert(self, at: int, content: str) -> Edit:
        return self.edit(at, at, content)

    # --- the call of a site ---------------------------------------------------------------------

    def call_at(self, site: Site) -> cst.Call | None:
        """The call expression of ``site`` (ast's span, byte columns), parsed; None when it is not a call
        that libcst can read."""
        key = (site.line, site.col, site.end_line, site.end_col)
        if key not in self._calls:
            self._calls[key] = self._parse_call(site)
        return self._calls[key]

    def _parse_call(self, site: Site) -> cst.Call | None:
        if not (1 <= site.line <= site.end_line <= len(self.starts)):
            return None
        start, end = self._byte_offset(site.line, site.col), self._byte_offset(site.end_line, site.end_col)
        snippet = "(" + self.text[start:end] + ")\n"  # parenthesized: a call may span lines
        try:
            module = cst.parse_module(snippet)
        except (cst.ParserSyntaxError, RecursionError):
            return None
        statement = module.body[0] if len(module.body) == 1 else None
        if not (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr)):
            return None
        call = statement.body[0].value
        if not isinstance(call, cst.Call) or len(call.lpar) != 1:
            return None
        local = line_starts(snippet)
        base = start - 1  # the snippet's "(" is not in the text
        for node, where in MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider).items():
            self._spans[node] = (base + local[where.start.line - 1] + where.start.column,
                                 base + local[where.end.line - 1] + where.end.column)
        del self._spans[call.lpar[0]], self._spans[call.rpar[0]]  # the parentheses added above
        return call

    @staticmethod
    def method_receiver(call: cst.Call) -> cst.BaseExpression | None:
        """``x`` of ``x.method(...)``."""
        return call.func.value if isinstance(call.func, cst.Attribute) else None

    def after_receiver(self, call: cst.Call) -> int:
        """Where ``.method`` begins in ``x.method(...)`` (after ``x`` and its parentheses): the place to
        insert another method call on ``x``."""
        assert isinstance(call.func, cst.Attribute)
        return self.end(call.func.value)

    @staticmethod
    def argument(call: cst.Call, index: int, keyword: str) -> cst.Arg | None:
        """The argument given at position ``index`` or as ``keyword=``; None when absent or unpacked."""
        positional = [a for a in call.args if a.keyword is None and not a.star]
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == keyword:
                return arg
        if any(a.star for a in call.args[: index + 1]):
            return None
        return positional[index] if index < len(positional) else None

    def converted_operand(self, call: cst.Call) -> cst.BaseExpression | None:
        """The tensor a conversion call exports: ``t`` of ``t.numpy()`` / ``t.__dlpack__()``, or the only
        positional argument of a function (``np.asarray(t)``)."""
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("numpy", "__dlpack__"):
            return call.func.value
        positional = [a for a in call.args if a.keyword is None and not a.star]
        return positional[0].value if len(positional) == 1 and len(call.args) == 1 else None

    def append_to_converted(self, site: Site, suffix: str) -> list[Edit] | None:
        """Edits that call ``suffix`` on the tensor the conversion at ``site`` exports (``t.numpy()`` ->
        ``t.cpu().numpy()``); None when the site is not such a call."""
        call = self.call_at(site)
        tensor = self.converted_operand(call) if call is not None else None
        return self.append_call(tensor, suffix) if tensor is not None else None

    def has_comment(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` holds a comment (a deletion there would lose it)."""
        return "#" in self.text[start:end]

    # --- building edits -------------------------------------------------------------------------

    @staticmethod
    def is_primary(node: cst.BaseExpression) -> bool:
        """Whether ``node`` can be followed by ``.attr`` (or replace a call) without parentheses."""
        return bool(getattr(node, "lpar", None)) or isinstance(node, _PRIMARY)

    def append_call(self, node: cst.BaseExpression, suffix: str) -> list[Edit]:
        """Edits that turn ``node`` into ``node.suffix`` (parenthesizing it when it must be)."""
        if self.is_primary(node):
            return [self.insert(self.end(node), suffix)]
        return [self.insert(self.start(node), "("), self.insert(self.end(node), ")" + suffix)]

    def unwrap_method(self, call: cst.Call) -> list[Edit] | None:
        """Edits that turn ``x.method(...)`` into ``x`` (None when that would drop a comment or an argument)."""
        if call.args or not isinstance(call.func, cst.Attribute):
            return None
        start, end = self.after_receiver(call), self.end(call, outer=False)
        if self.has_comment(start, end):
            return None
        return [self.edit(start, end, "")]

    def unwrap_call(self, call: cst.Call) -> list[Edit] | None:
        """Edits that turn ``f(x)`` into ``x`` (keeping parentheses when ``x`` needs them)."""
        if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
            return None
        value = call.args[0].value
        call_start, call_end = self.start(call, outer=False), self.end(call, outer=False)
        value_start, value_end = self.start(value), self.end(value)
        if self.has_comment(call_start, value_start) or self.has_comment(value_end, call_end):
            return None
        keep = "" if self.is_primary(value) else "("
        return [self.edit(call_start, value_start, keep), self.edit(value_end, call_end, ")" if keep else "")]

    def wrap_call(self, call: cst.Call, function: str) -> list[Edit]:
        """Edits that turn the call ``c`` into ``function(c)``."""
        return [self.insert(self.start(call, outer=False), function + "("),
                self.insert(self.end(call, outer=False), ")")]

    # --- names ---------------------------------------------------------------------------------

    @functools.cached_property
    def _tree(self) -> ast.Module | None:
        try:
            return ast.parse(self.text)
        except (SyntaxError, ValueError, RecursionError):
            return None

    def tensor_class(self) -> tuple[str, list[Edit]] | None:
        """How this module names ``runtime_shim.Tensor``, and the import edit when it does not yet
        (None when the name ``Tensor`` is taken by something else)."""
        tree = self._tree
        if tree is None:
            return None
        taken = False
        for statement in tree.body:
            if isinstance(statement, ast.ImportFrom) and statement.module == SHIM and not statement.level:
                for alias in statement.names:
                    if alias.name in ("*", "Tensor"):
                        return alias.asname or "Tensor", []
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    if alias.asname and alias.name == SHIM:
                        return f"{alias.asname}.Tensor", []
                    if not alias.asname and (alias.name == SHIM or alias.name.startswith(SHIM + ".")):
                        return f"{SHIM}.Tensor", []
            taken = taken or _binds(statement, "Tensor")
        if taken:
            return None
        at, prefix = self._import_point(tree)
        return "Tensor", [self.insert(at, f"{prefix}from {SHIM} import Tensor{self._newline()}")]

    def _newline(self) -> str:
        match = re.search(r"\r\n|\r|\n", self.text)
        return match.group() if match else "\n"

    def _import_point(self, tree: ast.Module) -> tuple[int, str]:
        """(offset, prefix) for a new import: after the docstring and ``from __future__`` imports,
        before the comment lines right above the next statement."""
        body = tree.body
        index = 1 if body and _docstring(body[0]) else 0
        while index < len(body) and _is_future_import(body[index]):
            index += 1
        if index == len(body):
            ends_with_newline = not self.text or self.text.endswith(("\n", "\r"))
            return len(self.text), "" if ends_with_newline else self._newline()
        statement = body[index]
        line = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
        if index > 0:  # above the first statement, comments are the file's header: stay below them
            while line - 1 > body[index - 1].end_lineno and self._line(line - 1).lstrip().startswith("#"):
                line -= 1
        return self.starts[line - 1], ""

    def _line(self, row: int) -> str:
        end = self.starts[row] if row < len(self.starts) else len(self.text)
        return self.text[self.starts[row - 1]:end]


def _docstring(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def _binds(statement: ast.stmt, name: str) -> bool:
    """Whether a module-level statement may bind ``name``: a def or class of that name, else
    (conservatively) any mention of ``name`` in it."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return statement.name == name
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and node.id == name:
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            return True
    return False


@functools.lru_cache(maxsize=8)
def source_for(text: str) -> Source:
    """The :class:`Source` of ``text`` (cached: the fixes of one file share its parsed calls and imports)."""
    return Source(text)


def _is_future_import(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
