"""Tests of a free string option against constants, read as one program-wide choice over the option's values.

``args.device == "gpu"`` in one function, ``args.device != "cpu"`` in another, ``args.device in ("cuda",
"gpu")``, ``args.device.startswith("cuda")``: each is a test of the one value the command line gave. The
option's value domain is every constant it is compared with anywhere in the program (its ``choices=`` when a
literal list gives them), its default, and any other value (none where ``choices=`` bounds it). Each test is a
*predicate* over that domain, tagged as a program-wide choice; a test's outcome also decides the other
predicates that hold alike on every value left: ``== "gpu"`` true means ``== "cpu"`` false and
``startswith("cuda")`` false, so no operation pairs what the GPU branch made with what a CPU branch made.

The domain is found by syntax (every module's comparisons of an attribute, a ``["key"]`` or ``.get("key")``
named as the option, through ``.lower()``/``.upper()``/``.strip()``/``.casefold()``/``str()``): a constant
compared with something else of that name only widens the domain (more tags, never a lost pairing).
"""

from __future__ import annotations

import ast
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from ..choices import OTHER_SHOWN, Tag, ValueTest, program_choice

#: calls that read the option's text in another form: the same test of the same value
_VIEWS = frozenset({"lower", "upper", "strip", "casefold"})
#: a value that is none of the program's constants and starts with none of its prefixes
_OTHER = "\x00"


@dataclass(frozen=True, slots=True)
class Predicate:
    """One test of the option: equal to one constant, one of a few, or starting with one of a few."""

    kind: str  # "eq", "in", "prefix"
    texts: tuple[str, ...]

    def holds(self, value: str) -> bool:
        if self.kind == "prefix":
            return value.startswith(self.texts)
        return value in self.texts

    def name(self, dest: str) -> str:
        if self.kind == "eq":
            return f"--{dest} == {self.texts[0]!r}"  # (the name a single comparison always had)
        if self.kind == "in":
            return f"--{dest} in {self.texts!r}"
        return f"--{dest}.startswith({self.texts!r})"


def viewed(node: ast.expr) -> ast.expr:
    """The expression ``node`` reads through ``.lower()``, ``.upper()``, ``.strip()``, ``.casefold()``, ``str()``."""
    while (inner := viewed_once(node)) is not node:
        node = inner
    return node


def seen_through(node: ast.expr, text: str) -> str:
    """``text`` (what :func:`viewed` of ``node`` holds) as ``node`` reads it: ``.lower()`` lowered, and so on."""
    views: list[str] = []
    while (inner := viewed_once(node)) is not node:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            views.append(node.func.attr)
        node = inner
    for view in reversed(views):
        text = getattr(text, view)()
    return text


def viewed_once(node: ast.expr) -> ast.expr:
    if isinstance(node, ast.Call) and not node.keywords and isinstance(node.func, ast.Attribute) \
            and node.func.attr in _VIEWS and not node.args:
        return node.func.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" \
            and len(node.args) == 1 and not node.keywords:
        return node.args[0]
    return node


def option_name(node: ast.expr) -> str | None:
    """The name an expression reads an option by (``args.device``, ``cfg["device"]``, ``opt.get("device")``,
    seen through ``.lower()`` and the like), or None."""
    node = viewed(node)
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def constant_texts(node: ast.expr) -> tuple[str, ...] | None:
    """The strings a constant or a literal tuple/list/set of constants gives (None: not such a literal)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return tuple(dict.fromkeys(e.value for e in node.elts))  # type: ignore[attr-defined]
    return None


def compared(node: ast.Compare) -> tuple[ast.expr, Predicate] | None:
    """``subject == "c"`` / ``!=`` / ``in (...)`` / ``not in``: the subject and the predicate tested (the
    outcome of an ``==``/``in``; ``!=``/``not in`` is its negation)."""
    if len(node.ops) != 1:
        return None
    op, right = node.ops[0], node.comparators[0]
    if isinstance(op, (ast.Eq, ast.NotEq)):
        for subject, other in ((node.left, right), (right, node.left)):
            if isinstance(other, ast.Constant) and isinstance(other.value, str):
                return subject, Predicate("eq", (other.value,))
    elif isinstance(op, (ast.In, ast.NotIn)):
        texts = constant_texts(right) if not isinstance(right, ast.Constant) else None
        if texts:
            return node.left, Predicate("eq" if len(texts) == 1 else "in", texts)
    return None


def prefix_test(node: ast.Call) -> tuple[ast.expr, Predicate] | None:
    """``subject.startswith("cuda")`` (or a tuple of prefixes): the subject and the predicate."""
    if isinstance(node.func, ast.Attribute) and node.func.attr == "startswith" and len(node.args) == 1 \
            and not node.keywords:
        texts = constant_texts(node.args[0])
        if texts and not isinstance(node.args[0], (ast.List, ast.Set)):
            return node.func.value, Predicate("prefix", texts)
    return None


def predicates_by_name(trees: Iterable[ast.AST]) -> dict[str, frozenset[Predicate]]:
    """Every test of a string against constants in these modules, by the name its subject reads."""
    found: dict[str, set[Predicate]] = {}
    for tree in trees:
        for node in ast.walk(tree):
            test = compared(node) if isinstance(node, ast.Compare) else \
                prefix_test(node) if isinstance(node, ast.Call) else None
            name = option_name(test[0]) if test is not None else None
            if test is not None and name is not None:
                found.setdefault(name, set()).add(test[1])
    return {name: frozenset(tests) for name, tests in found.items()}


@dataclass(frozen=True, slots=True)
class OptionDomain:
    """An option's tests and the values that tell them apart (a representative of each class of values)."""

    dest: str
    predicates: tuple[Predicate, ...]
    values: tuple[str, ...]

    @staticmethod
    def of(dest: str, predicates: Iterable[Predicate], defaults: Iterable[str],
           choices: tuple[str, ...] | None) -> OptionDomain:
        tests = tuple(sorted(predicates, key=lambda p: (p.kind, p.texts)))
        if choices is not None:
            return OptionDomain(dest, tests, choices)
        values: dict[str, None] = dict.fromkeys(defaults)
        for test in tests:
            values.update(dict.fromkeys(test.texts))
            if test.kind == "prefix":  # a longer value with that prefix, equal to no constant
                values.update(dict.fromkeys(text + _OTHER for text in test.texts))
        values[_OTHER] = None
        return OptionDomain(dest, tests, tuple(values))

    def outcome(self, test: Predicate, holds: bool) -> frozenset[Tag] | None:
        """The tag of the test's outcome (``holds``): a program-wide choice that no value of the option makes
        together with an outcome of another test it contradicts (the choice carries its
        :class:`~analyzer.choices.ValueTest`).
        None: no value of the option gives that outcome."""
        answers = tuple(test.holds(v) for v in self.values)
        if holds not in answers:
            return None
        digest = zlib.crc32(_OTHER.join(self.values).encode())  # (one program's values: not another's)
        group = f"--{self.dest}#{digest:x}"
        shown = tuple(OTHER_SHOWN if _OTHER in v else repr(v) for v in self.values)
        choice = program_choice(f"{test.name(self.dest)}#{group}", ValueTest(group, answers), shown)
        return frozenset({(choice, holds)})


@dataclass(frozen=True, slots=True)
class StringOption:
    """An ``add_argument`` whose value is a string the command line may give: its default (where a constant
    string) and its ``choices=`` (where a literal list of strings)."""

    defaults: tuple[str, ...]
    choices: tuple[str, ...] | None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def string_options(trees: Iterable[ast.AST]) -> dict[str, StringOption]:
    """Every ``add_argument`` in these modules that stores a string (no ``action=`` but ``"store"``, no
    ``type=`` but ``str``, no ``nargs=``), by destination; one destination added twice keeps both defaults and
    drops its bound unless both give the same ``choices=``."""
    found: dict[str, StringOption] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument" and node.args) or any(k.arg is None for k in node.keywords):
                continue
            names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            action, kind = _keyword(node, "action"), _keyword(node, "type")
            if len(names) != len(node.args) or _keyword(node, "nargs") is not None \
                    or (action is not None and not (isinstance(action, ast.Constant) and action.value == "store")) \
                    or (kind is not None and not (isinstance(kind, ast.Name) and kind.id == "str")):
                continue
            dest_node = _keyword(node, "dest")
            if dest_node is not None:
                if not (isinstance(dest_node, ast.Constant) and isinstance(dest_node.value, str)):
                    continue
                dest = dest_node.value
            elif names[0].startswith("-"):
                dest = ([n for n in names if n.startswith("--")] or names)[0].lstrip("-").replace("-", "_")
            else:
                dest = names[0]
            default = _keyword(node, "default")
            defaults = (default.value,) if isinstance(default, ast.Constant) and isinstance(default.value, str) \
                else ()
            choices_node = _keyword(node, "choices")
            choices = constant_texts(choices_node) if isinstance(choices_node, (ast.List, ast.Tuple)) else None
            if choices_node is not None and choices is None:
                continue  # (values the analysis cannot list: leave the option alone)
            seen = found.get(dest)
            if seen is not None:
                defaults = tuple(dict.fromkeys((*seen.defaults, *defaults)))
                choices = choices if choices == seen.choices else None
            found[dest] = StringOption(defaults, choices)
    return found
