"""``argparse``: a script's options as the values they take when the command line gives none.

``parser.add_argument("--device", default="cuda")`` then ``model.to(args.device)``: where the model
goes depends on the command line. A small program that parses its command line with ``argparse`` is
analysed twice (:mod:`.worlds`): once as run with no options, where each option read through the
namespace is its default, and once with options given, where each is unknown. A failure seen only
with the defaults is then a warning that names them ("when the command line gives no options").

What is followed, and where it stops (an option it stops on reads as unknown in both runs):

* the parser of one frame, by the name it is bound to: ``add_argument`` on that name records the
  option's destination and default (``type=int``/``float``/``str`` applied to a string default,
  ``store_true``/``store_false``/``store_const``/``count``/``append`` defaults, ``dest=``);
  ``set_defaults`` on that name overrides them. Options added elsewhere (argument groups, a helper
  given the parser, ``parents=``) are not recorded: they read as unknown, and a parser built with
  ``parents=`` or ``argument_default=`` reads every option as unknown;
* ``parse_args()`` / ``parse_known_args()`` / ``parse_intermixed_args()`` with no arguments (the
  command line: the world's answer), or with ``[]`` (the defaults, in every world); anything else, or
  ``namespace=``, gives a namespace of unknown options;
* a required option, or a positional one without ``nargs="?"``/``"*"``, is unknown (no run can leave it
  out); so is an option whose name is ever assigned as an attribute anywhere in the component
  (``args.device = torch.device(args.device)``: the analysis does not follow stores on the namespace).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from ..domain import TOP, Atom, BuiltinRef, SeqAtom, V, Value, const, seq
from .flow_state import Frame, State, rebind_call_receiver

#: the answer of the argparse world split (:mod:`.worlds`): how each such world is named in diagnostics
DEFAULTS_WORLD = "the command line gives no options"
GIVEN_WORLD = "the command line gives options"

_PARSE_METHODS = frozenset({"parse_args", "parse_known_args", "parse_intermixed_args",
                            "parse_known_intermixed_args"})
PARSER_METHODS = frozenset({"add_argument", "set_defaults", *_PARSE_METHODS})
# actions and the default they give when ``default=`` is not passed
_ACTION_DEFAULTS: dict[str, Any] = {"store": None, "store_const": None, "store_true": False, "store_false": True,
                                    "append": None, "append_const": None, "extend": None, "count": None}
_CONVERTERS = {"int": int, "float": float, "str": str}


@dataclass(frozen=True, slots=True)
class ArgparseRef(Atom):
    """``argparse`` or a name inside it (``argparse.ArgumentParser``)."""

    path: str


@dataclass(frozen=True, slots=True)
class ArgParserAtom(Atom):
    """An ``argparse.ArgumentParser`` and the options recorded on it (destination, default: a value, or
    ``None`` where the default is not known); ``complete`` is false where options may come from elsewhere
    with defaults of their own (``parents=``, ``argument_default=``)."""

    origin: object
    options: tuple[tuple[str, Value | None], ...] = ()
    complete: bool = True

    def reveal(self) -> str:
        return "argparse parser"


@dataclass(frozen=True, slots=True)
class NamespaceAtom(Atom):
    """What a parse returned: the parser's options, read as their defaults when ``defaults`` (a parse of
    no options), else unknown."""

    options: tuple[tuple[str, Value | None], ...]
    defaults: bool

    def reveal(self) -> str:
        return "argparse namespace"


def _const_str(value: Value | None) -> str | None:
    consts = value.consts() if value is not None else None
    return consts[0] if consts and len(consts) == 1 and isinstance(consts[0], str) else None


def option_default(args: list[Value], kwargs: dict[str, Value]) -> tuple[str, Value | None] | None:
    """``add_argument``'s (destination, default when no option is given: ``None`` if not known), or
    ``None`` when the destination is not known."""
    names = [_const_str(a) for a in args]
    if not names or any(n is None for n in names):
        return None
    dest = _const_str(kwargs["dest"]) if "dest" in kwargs else None
    positional = not names[0].startswith("-")  # type: ignore[union-attr]
    if dest is None:
        if "dest" in kwargs:
            return None
        if positional:
            dest = names[0]
        else:
            long = [n for n in names if n.startswith("--")]  # type: ignore[union-attr]
            dest = (long or names)[0].lstrip("-").replace("-", "_")  # type: ignore[union-attr]
    action = _const_str(kwargs["action"]) if "action" in kwargs else "store"
    required = kwargs.get("required")
    nargs = _const_str(kwargs.get("nargs"))
    if (required is not None and required.consts() != [False]) or (positional and nargs not in ("?", "*")) \
            or action not in _ACTION_DEFAULTS or "default" in kwargs and kwargs["default"].top:
        return dest, None
    if "default" not in kwargs:
        return dest, V(const(_ACTION_DEFAULTS[action]))
    default = kwargs["default"]
    text = _const_str(default)
    if text is None or "type" not in kwargs or action != "store":
        return dest, default
    converter = kwargs["type"]  # argparse converts a string default with ``type``
    kinds = [a.name for a in converter.atoms if isinstance(a, BuiltinRef)] if not converter.top else []
    if len(kinds) != 1 or len(converter.atoms) != 1 or kinds[0] not in _CONVERTERS:
        return dest, None
    try:
        return dest, V(const(_CONVERTERS[kinds[0]](text)))
    except ValueError:
        return dest, None  # argparse exits with a usage error


class ArgparseModel:
    """The engine's ``argparse`` (mixed into the engine)."""

    argparse_defaults: bool | None  # the world: parsed with no options (True), with options (False), not split

    def argparse_call(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                      fr: Frame) -> Value:
        if path != "argparse.ArgumentParser" or node is None:
            return TOP
        # ``parents`` is ArgumentParser's fifth positional parameter, ``argument_default`` its ninth
        complete = not any(k in kwargs for k in ("parents", "argument_default")) and len(args) < 5
        return V(ArgParserAtom(self.origin(node, fr, "argparse parser"), (), complete))  # type: ignore[attr-defined]

    def argparse_parser_method(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                               node: ast.AST, st: State) -> Value:
        parsers = [a for a in receiver.atoms if isinstance(a, ArgParserAtom)]
        if receiver.top or len(parsers) != 1:
            return TOP
        parser = parsers[0]
        if name == "add_argument":
            found = option_default(args, kwargs)
            options = parser.options if found is None else (*parser.options, found)
            rebind_call_receiver(node, V(ArgParserAtom(parser.origin, options, parser.complete)), st)
            return TOP
        if name == "set_defaults":
            if args:
                return TOP
            given = dict(kwargs)
            options = tuple((dest, given.pop(dest) if dest in given else default) for dest, default in parser.options)
            options += tuple(given.items())  # a default for a destination no option has: still an attribute
            rebind_call_receiver(node, V(ArgParserAtom(parser.origin, options, parser.complete)), st)
            return TOP
        if name not in _PARSE_METHODS:
            return TOP
        line = args[0] if args else kwargs.get("args")
        empty = line is not None and line.only(SeqAtom) and all(a.items == () for a in line.atoms)  # type: ignore[attr-defined]
        if not parser.complete or (line is not None and not empty and line.consts() != [None]) \
                or len(args) > 1 or "namespace" in kwargs:
            defaults = False
        else:
            defaults = empty or bool(self.argparse_defaults)
        namespace = V(NamespaceAtom(parser.options, defaults))
        return V(seq("tuple", (namespace, TOP))) if "known" in name else namespace

    def namespace_attribute(self, atom: NamespaceAtom, attr: str) -> Value:
        assigned = self.attributes_assigned()
        if not atom.defaults or attr in assigned or "*" in assigned:
            return TOP
        found = [default for dest, default in atom.options if dest == attr]
        return found[-1] if found and found[-1] is not None else TOP

    def attributes_assigned(self) -> frozenset[str]:
        """Every attribute name some statement of the component assigns or deletes (``x.name = ...``,
        ``setattr(x, "name", ...)``; ``"*"`` for a computed ``setattr``)."""
        found = getattr(self, "_attributes_assigned", None)
        if found is None:
            names: set[str] = set()
            for module in self.modules:  # type: ignore[attr-defined]
                tree = module.source.tree
                for node in ast.walk(tree) if tree is not None else ():
                    if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
                        names.add(node.attr)
                    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                            and node.func.id == "setattr" and len(node.args) >= 2:
                        name = node.args[1]
                        names.add(name.value if isinstance(name, ast.Constant) and isinstance(name.value, str)
                                  else "*")
            found = self._attributes_assigned = frozenset(names)
        return found

