"""The values of a command-line option read through an object filled from the parsed namespace.

``cfg = Config(**vars(args))`` (a class that ``setattr``s its keywords, a dataclass, ``self.__dict__.update``),
a config loaded and merged with the options, a namespace copied field by field: an attribute of such an object
that the analysis does not know, named as an option of the program's parsers, is that option. Its values are
found by syntax, as the parser gives them (:func:`option_values`): a ``store_true``/``store_false`` flag, an
option with a ``True``/``False`` default and a converter (``type=str2bool``), or one with ``choices=`` of a
few constants takes those values, one program-wide choice named as the namespace names it (so ``if
cfg.cpu:`` in one class and ``if args.cpu:`` or ``if not self.cfg.cpu:`` elsewhere are one answer); a
``type=int``/``float`` option is the run's one number. With no options given, each is its default.

Options generated from a dataclass's own fields (``for name, value in asdict(Config()).items():
parser.add_argument("--" + name, default=value)``, or over ``dataclasses.fields(Config)`` with ``default=f.default``)
have names the syntax does not tell; the classes they come from are found instead
(:func:`generated_option_classes`): with no options given, each field of such a class read through an object
filled from the namespace is the field's own default.
"""

from __future__ import annotations

import ast
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from ..choices import one_of
from ..domain import Atom, NumberAtom, V, Value, const

_FLAG_DEFAULTS = {"store_true": False, "store_false": True}
_NUMBERS = frozenset({"int", "float"})


@dataclass(frozen=True, slots=True)
class OptionValues:
    """An option's default and, with options given, the values it may take (``number``: its type's name where
    it is a ``type=int``/``float`` option, else ``alternatives``: a known few constants, the default last)."""

    default: object
    alternatives: tuple[object, ...] | None
    number: str | None = None

    def value(self, dest: str, given: bool) -> Value | None:
        """What the option holds: its default (``given`` false), or its values as the namespace holds them."""
        if not given:
            return V(const(self.default))
        if self.number is not None:
            return V(NumberAtom(self.number, run_constant=f"--{dest}")).join(V(const(self.default)))
        if self.alternatives is None:
            return None
        return option_value(dest, tuple(const(v) for v in self.alternatives))


def option_value(dest: str, values: tuple[Atom, ...]) -> Value | None:
    """The value of the option ``dest`` with options given, one of ``values`` (:func:`analyzer.choices.one_of`).
    Of three, each choice (true on one value) is also a test of the option's value (it carries its
    :class:`~analyzer.choices.ValueTest`), so a test true on two of them (``args.device != "cpu"``, in a
    helper or a method) is a choice of its own that the three values decide (``combined_test``)."""
    return one_of(f"--{dest}", values, f"--{dest}#{zlib.crc32(repr(values).encode()):x}")


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _constant(node: ast.expr | None) -> tuple[bool, object]:
    """(whether ``node`` is a constant, its value); no node: argparse's ``None``."""
    if node is None:
        return True, None
    if isinstance(node, ast.Constant):
        return True, node.value
    return False, None


def destination(call: ast.Call) -> str | None:
    """The destination of an ``add_argument`` whose names are constant strings (None: not known)."""
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not names or len(names) != len(call.args):
        return None
    dest_node = _keyword(call, "dest")
    if dest_node is not None:
        return dest_node.value if isinstance(dest_node, ast.Constant) and isinstance(dest_node.value, str) else None
    if not names[0].startswith("-"):
        return None  # (a positional option: no run leaves it out, its value is any the command line gives)
    return ([n for n in names if n.startswith("--")] or names)[0].lstrip("-").replace("-", "_")


def _values_of(call: ast.Call) -> OptionValues | None:
    action_node, kind, choices_node = _keyword(call, "action"), _keyword(call, "type"), _keyword(call, "choices")
    if any(_keyword(call, k) is not None for k in ("nargs", "required", "const")):
        return None
    is_action, action = _constant(action_node)
    known, default = _constant(_keyword(call, "default"))
    if not is_action or not known or (action is not None and not isinstance(action, str)):
        return None
    if action in _FLAG_DEFAULTS:
        flag_default = default if _keyword(call, "default") is not None else _FLAG_DEFAULTS[action]
        return OptionValues(flag_default, tuple(dict.fromkeys((True, False, flag_default))))
    if action not in (None, "store"):
        return None
    kind_name = kind.id if isinstance(kind, ast.Name) else None
    if kind_name in _NUMBERS and choices_node is None and isinstance(default, (int, float)) \
            and not isinstance(default, bool):
        return OptionValues(default, None, kind_name)
    if type(default) is bool and kind is not None and kind_name not in ("str", "int", "float") \
            and choices_node is None:
        return OptionValues(default, (True, False))  # (``type=str2bool``: one of the two)
    if choices_node is None or kind_name not in (None, "str"):
        return OptionValues(default, None) if kind_name in (None, "str") else None
    if not isinstance(choices_node, (ast.List, ast.Tuple)) or not all(
            isinstance(e, ast.Constant) for e in choices_node.elts):
        return None
    values = [e.value for e in choices_node.elts]  # type: ignore[attr-defined]
    return OptionValues(default, tuple(dict.fromkeys((*values, default))))


def option_values(trees: Iterable[ast.AST]) -> dict[str, OptionValues]:
    """Every optional ``add_argument`` in these modules whose default and values are constants, by
    destination; a destination added twice differently is left out (which one a parse made is not known)."""
    found: dict[str, OptionValues | None] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument" and node.args) or any(k.arg is None for k in node.keywords):
                continue
            dest = destination(node)
            if dest is None:
                continue
            values = _values_of(node)
            found[dest] = values if dest not in found or found[dest] == values else None
    return {dest: values for dest, values in found.items() if values is not None}


# ``asdict(C())`` / ``vars(C())`` / ``C().__dict__`` (``.items()``, ``.keys()``), ``fields(C)``
_FIELD_SOURCES = frozenset({"asdict", "vars", "fields"})


def _call_name(node: ast.expr) -> str | None:
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _class_of_fields(node: ast.expr) -> str | None:
    """The class name ``C`` of a loop's iterable over a dataclass's fields with their defaults (None: not
    such an iterable)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("items", "keys") \
            and not node.args:
        node = node.func.value
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        made = node.value
    elif isinstance(node, ast.Call) and _call_name(node) in _FIELD_SOURCES and len(node.args) == 1 \
            and not node.keywords:
        made = node.args[0]
        if _call_name(node) == "fields":  # (``fields(C)``: the class itself, or an instance)
            made = made if isinstance(made, ast.Call) else ast.Call(func=made, args=[], keywords=[])
    else:
        return None
    if isinstance(made, ast.Call) and not made.args and not made.keywords:
        cls = made.func
        if isinstance(cls, ast.Name):
            return cls.id
        if isinstance(cls, ast.Attribute):
            return cls.attr
    return None


def generated_option_classes(trees: Iterable[ast.AST]) -> frozenset[str]:
    """Names of the classes whose fields a loop adds as options, each with the field's default as the option's
    (``add_argument`` with a computed name and ``default=`` the loop's value, or ``.default`` of its field)."""
    found: set[str] = set()
    for tree in trees:
        for loop in ast.walk(tree):
            if not isinstance(loop, (ast.For, ast.AsyncFor)):
                continue
            cls = _class_of_fields(loop.iter)
            if cls is None:
                continue
            targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
            for node in (n for stmt in loop.body for n in ast.walk(stmt)):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr == "add_argument" and _default_from(node, targets):
                    found.add(cls)
    return frozenset(found)


def _default_from(call: ast.Call, targets: set[str]) -> bool:
    """Whether ``default=`` of this ``add_argument`` is the loop's value (``value``, ``f.default``)."""
    default = _keyword(call, "default")
    if isinstance(default, ast.Attribute) and default.attr == "default":
        default = default.value
    return isinstance(default, ast.Name) and default.id in targets
