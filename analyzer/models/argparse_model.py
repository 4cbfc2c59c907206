"""``argparse``: a script's options as the values they take when the command line gives none.

``parser.add_argument("--device", default="cuda")`` then ``model.to(args.device)``: where the model
goes depends on the command line. A small program that parses its command line with ``argparse`` is
analysed twice (its world axis, :data:`COMMAND_LINE_WORLDS`): once as run with no options, where each
option read through the namespace is its default, and once with options given, where each is unknown. A
failure seen only with the defaults is then a warning that names them ("when the command line gives no
options").

What is followed, and where it stops (an option it stops on reads as unknown in both runs):

* the parser of one frame, by the name it is bound to: ``add_argument`` on that name records the
  option's destination and default (``type=int``/``float``/``str`` applied to a string default,
  ``store_true``/``store_false``/``store_const``/``count``/``append`` defaults, ``dest=``);
  ``set_defaults`` on that name overrides them. Options added elsewhere (argument groups, a helper
  given the parser, ``parents=``) are not recorded: they read as unknown, and a parser built with
  ``parents=`` or ``argument_default=`` reads every option as unknown;
* ``parse_args()`` / ``parse_known_args()`` / ``parse_intermixed_args()`` with no arguments (the
  command line: the world's answer), or with ``[]`` (the defaults, in every world), or with a written list of
  constant strings whose options have forms :mod:`.argparse_argv` follows (those values and the defaults, in
  every world); anything else, or ``namespace=``, gives a namespace of unknown options;
* a required option, or a positional one without ``nargs="?"``/``"*"``, is unknown (no run can leave it
  out);
* with options given, an option whose values are a known few (a ``store_true``/``store_false`` flag, an
  option with ``choices=`` of up to three constants, and its default) reads as those values, tagged as one
  program-wide choice (:func:`analyzer.choices.one_of`): one command line, one value, in every function; a
  ``type=int``/``float`` option reads as a number (within its numeric ``choices=``) or its default, and its
  tests against constants are program-wide choices (:mod:`analyzer.engine.relational`);
* attributes stored on the namespace through the variable that holds it (``args.cuda = not args.no_cuda and
  torch.cuda.is_available()``, ``args.device = torch.device(...)``) travel with it, into every function it is
  passed to, in both runs; an option's default is dropped (unknown) where some other store could reach a
  namespace unseen (``self.args.device = ...``, ``setattr(args, ...)``: a store whose object is not a plain
  variable), while ``self.device = ...`` in a method stores on an instance and leaves the default alone;
* ``vars(args)`` is a dict of the options and stored attributes, with unknown keys besides (options added
  through argument groups or helpers are not recorded); ``types.SimpleNamespace(...)`` and
  ``argparse.Namespace(...)`` with keywords are namespaces holding exactly those attributes;
* an attribute of a project instance the analysis knows no value of, named as an option of the program's
  parsers (``cfg = Config(**vars(args))``), is that option: its default, or its values as the namespace holds
  them (:mod:`.option_values`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from ..choices import with_tags
from ..domain import (
    TOP,
    Atom,
    BoundShim,
    BuiltinRef,
    Const,
    DictAtom,
    Instance,
    NumberAtom,
    SeqAtom,
    V,
    Value,
    const,
    join_all,
    seq,
)
from ..engine.flow_state import Frame, State, rebind_call_receiver
from ..engine.python_values import field_call, inherited_fields
from ..tree_walk import scope_nodes
from .argparse_argv import OptionForm, option_form, parse_argv
from .base import ANY_TARGET, UNHANDLED, Assumption, LibraryModel, Unhandled, World, WorldAxis
from .option_tests import (
    OptionDomain,
    Predicate,
    StringOption,
    compared,
    option_name,
    predicates_by_name,
    prefix_test,
    seen_through,
    string_options,
    viewed,
)
from .option_values import OptionValues, generated_option_classes, option_value, option_values
from .signatures import bind_call

#: the command line gives no options (True: each option is its default), or gives some (False: unknown)
NO_OPTIONS: Final[Assumption[bool]] = Assumption("argparse.no_options")
DEFAULTS_WORLD = "the command line gives no options"
GIVEN_WORLD = "the command line gives options"
#: a program that parses its command line, analysed with no options and with options given: an outer split,
#: around the others, where a site seen failing with the defaults and not seen with options (its operands
#: unknown there) may pass there (a warning that names the defaults)
COMMAND_LINE_WORLDS: Final = WorldAxis(
    name="command line",
    questions=(b"parse_args", b"parse_known_args", b"parse_intermixed_args"),
    # (a named ``target-device`` is one machine running the program as its defaults say: options that would
    # pick another device, or the CPU, are not that machine's run)
    worlds=(World(DEFAULTS_WORLD, {NO_OPTIONS: True}, target=ANY_TARGET), World(GIVEN_WORLD, {NO_OPTIONS: False})),
    outer=True,
)

_PARSE_METHODS = frozenset({"parse_args", "parse_known_args", "parse_intermixed_args",
                            "parse_known_intermixed_args"})
PARSER_METHODS = frozenset({"add_argument", "set_defaults", *_PARSE_METHODS})
# actions and the default they give when ``default=`` is not passed
_ACTION_DEFAULTS: dict[str, Any] = {"store": None, "store_const": None, "store_true": False, "store_false": True,
                                    "append": None, "append_const": None, "extend": None, "count": None}
_CONVERTERS = {"int": int, "float": float, "str": str}
#: classes whose instances are plain attribute holders: ``SimpleNamespace(device="cuda", hidden=8)``
NAMESPACE_TYPES = frozenset({"types.SimpleNamespace", "argparse.Namespace"})


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
    #: the values an option can take on any command line (``choices=``, a flag's two), by destination
    alternatives: tuple[tuple[str, tuple[Atom, ...]], ...] = ()
    #: with options given, the value of a ``type=int``/``float`` option: a number, or its default
    numbers: tuple[tuple[str, Value], ...] = ()
    #: how each option reads a command line written into the program (``forms_known``: every option's form)
    forms: tuple[OptionForm, ...] = ()
    forms_known: bool = True

    def reveal(self) -> str:
        return "argparse parser"


@dataclass(frozen=True, slots=True)
class NamespaceAtom(Atom):
    """What a parse returned: the parser's options, read as their defaults when ``defaults`` (a parse of
    no options), else unknown, or one of their values where those are a known few (``given``)."""

    options: tuple[tuple[str, Value | None], ...]
    defaults: bool
    #: attributes stored on it after the parse (or given to ``SimpleNamespace(...)``), the last store last
    assigned: tuple[tuple[str, Value], ...] = ()
    #: with options given, each option whose values are a known few: those values, as one program-wide choice
    given: tuple[tuple[str, Value], ...] = ()
    #: with options given, each ``type=int``/``float`` option: a number or its default (no choice tags: numbers
    #: take none, their tests are the choices)
    numbers: tuple[tuple[str, Value], ...] = ()

    mergeable = True

    def reveal(self) -> str:
        return "argparse namespace"

    def with_attribute(self, attr: str, value: Value) -> NamespaceAtom:
        kept = tuple(item for item in self.assigned if item[0] != attr)
        return NamespaceAtom(self.options, self.defaults, (*kept, (attr, value)), self.given, self.numbers)

    def inner_values(self) -> list[Value]:
        """The values it holds that may carry choice tags (:mod:`analyzer.choices`)."""
        return [value for _name, value in self.given] + [value for _name, value in self.assigned]

    def merge_key(self) -> object | None:
        # one parse as two paths left it: the values of its options narrowed by tests (each keeps its way's
        # program-wide tags, so their join is the namespace as it was before the test), attributes stored on
        # one path and not the other
        return ("namespace", self.options, self.defaults, self.numbers, tuple(name for name, _value in self.given))

    def merged(self, other: Atom) -> Atom:
        if not isinstance(other, NamespaceAtom) or other.merge_key() != self.merge_key():
            return self
        given = tuple((name, value.join(theirs)) for (name, value), (_n, theirs) in zip(self.given, other.given,
                                                                                       strict=True))
        mine, theirs = dict(self.assigned), dict(other.assigned)
        # a store on one path only: that value, or on the other path whatever the option held there (unknown:
        # the analysis may not follow every store of it)
        assigned = tuple((name, mine.get(name, TOP).join(theirs.get(name, TOP)))
                         for name in sorted(mine.keys() | theirs.keys()))  # (in one order: merges commute)
        return NamespaceAtom(self.options, self.defaults, assigned, given, self.numbers)

    def map_inner(self, fn: Callable[[Value], Value]) -> NamespaceAtom:
        return NamespaceAtom(self.options, self.defaults, tuple((n, fn(v)) for n, v in self.assigned),
                             tuple((n, fn(v)) for n, v in self.given), self.numbers)


def read_values(value: Value, attributes: Iterable[str]) -> Value:
    """What a statement that reads ``attributes`` of ``value`` reads: of a namespace, only those (a run per
    way of each of its options would split on options the statement never looks at)."""
    if not any(isinstance(a, NamespaceAtom) for a in value.atoms):
        return value
    names = set(attributes)
    others = [a for a in value.atoms if not isinstance(a, NamespaceAtom)]
    read = [found for a in value.atoms if isinstance(a, NamespaceAtom) for name in names
            if (found := dict((*a.numbers, *a.given, *a.assigned)).get(name)) is not None]  # (a store overrides)
    return join_all([Value(frozenset(others), value.top), *read])


def _const_str(value: Value | None) -> str | None:
    consts = value.consts() if value is not None else None
    return consts[0] if consts and len(consts) == 1 and isinstance(consts[0], str) else None


def option_default(args: list[Value], kwargs: dict[str, Value]) -> tuple[str, Value | None] | None:
    """``add_argument``'s (destination, default when no option is given: ``None`` if not known), or
    ``None`` when the destination is not known."""
    texts = [_const_str(a) for a in args]
    names = [n for n in texts if n is not None]
    if not names or len(names) != len(texts):
        return None
    dest = _const_str(kwargs["dest"]) if "dest" in kwargs else None
    positional = not names[0].startswith("-")
    if dest is None:
        if "dest" in kwargs:
            return None
        if positional:
            dest = names[0]
        else:
            long = [n for n in names if n.startswith("--")]
            dest = (long or names)[0].lstrip("-").replace("-", "_")
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


def option_alternatives(kwargs: dict[str, Value], default: Value | None) -> tuple[Atom, ...] | None:
    """The values an option can take on any command line, given or not: its ``choices=`` (constants) or a
    ``store_true``/``store_false`` flag's two, and its default (``None``: not a known few)."""
    if default is None or default.top or not default.only(Const) or len(default.atoms) != 1:
        return None
    action = _const_str(kwargs["action"]) if "action" in kwargs else "store"
    if action in ("store_true", "store_false") and "choices" not in kwargs:
        values: list[Atom] = [const(True), const(False)]
    elif action == "store" and _parses_a_bool(kwargs, default):
        values = [const(True), const(False)]
    elif action == "store" and "choices" in kwargs and "nargs" not in kwargs:
        choices = kwargs["choices"]
        seqs = [a for a in choices.atoms if isinstance(a, SeqAtom)]
        if choices.top or len(seqs) != 1 or len(choices.atoms) != 1 or seqs[0].items is None:
            return None
        values = []
        for item in seqs[0].items:
            if item.top or len(item.atoms) != 1 or not item.only(Const):
                return None
            values.extend(item.atoms)
    else:
        return None
    values.extend(a for a in default.atoms if a not in values)  # (a default outside the choices: not given)
    return tuple(dict.fromkeys(values))


def _parses_a_bool(kwargs: dict[str, Value], default: Value) -> bool:
    """A ``True``/``False`` default with a converter that is not ``str``, ``int`` or ``float`` (``type=str2bool``,
    ``type=utils.bool_flag``, ``type=lambda s: s == "true"``, ``type=bool``): the option is one of the two."""
    converter = kwargs.get("type")
    first = next(iter(default.atoms), None)
    if converter is None or "choices" in kwargs or "nargs" in kwargs or not isinstance(first, Const) \
            or type(first.value) is not bool:
        return False
    return not any(isinstance(a, BuiltinRef) and a.name in ("str", "int", "float") for a in converter.atoms)


def _option_form(dest: str, args: list[Value], kwargs: dict[str, Value]) -> OptionForm | None:
    names = [_const_str(a) for a in args]
    action = _const_str(kwargs["action"]) if "action" in kwargs else "store"
    nargs_value = kwargs.get("nargs")
    nargs_consts = nargs_value.consts() if nargs_value is not None and not nargs_value.top else None
    if action is None or any(n is None for n in names) or (nargs_value is not None and
                                                             (not nargs_consts or len(nargs_consts) != 1)) \
            or any(k in kwargs for k in ("const", "required")):
        return None
    return option_form(dest, [n for n in names if n is not None], action,
                       nargs_consts[0] if nargs_consts else None, kwargs.get("type"))


def _written_line(line: Value | None) -> list[str] | None:
    """``parse_args(["--gpus", "1"])``: the constant strings of a list or tuple written in the call."""
    if line is None or line.top or len(line.atoms) != 1:
        return None
    atom = next(iter(line.atoms))
    if not isinstance(atom, SeqAtom) or not atom.items:
        return None
    texts = [_const_str(item) for item in atom.items]
    return [t for t in texts if t is not None] if all(t is not None for t in texts) else None


def option_number(dest: str, kwargs: dict[str, Value], default: Value | None) -> Value | None:
    """What a ``type=int``/``type=float`` option holds when the command line may give it: a number the analysis
    does not know (between the least and the greatest of its ``choices=``), or its default (``None``: not such
    an option, or its default is not known). Its tests against constants are program-wide choices
    (:mod:`analyzer.engine.relational`), so it is not one of a few tagged values as other options are."""
    converter = kwargs.get("type")
    action = _const_str(kwargs["action"]) if "action" in kwargs else "store"
    if default is None or default.top or converter is None or converter.top or len(converter.atoms) != 1 \
            or action != "store" or "nargs" in kwargs:
        return None
    kind = next(iter(converter.atoms))
    if not isinstance(kind, BuiltinRef) or kind.name not in ("int", "float"):
        return None
    number = NumberAtom(kind.name, run_constant=f"--{dest}")
    if "choices" in kwargs:
        values = _numbers_of(kwargs["choices"])
        if values is None:
            return None
        number = number.within(min(values), max(values)) or number
    return V(number).join(default)


def _numbers_of(choices: Value) -> list[float] | None:
    """The numbers a ``choices=`` list or tuple holds (None: not a known list of numbers)."""
    seqs = [a for a in choices.atoms if isinstance(a, SeqAtom)]
    if choices.top or len(seqs) != 1 or len(choices.atoms) != 1 or not seqs[0].items:
        return None
    out = []
    for item in seqs[0].items:
        consts = item.consts() if not item.top else None
        if not consts or len(consts) != 1 or type(consts[0]) not in (int, float):
            return None
        out.append(consts[0])
    return out


class ArgparseModel(LibraryModel):
    """The engine's ``argparse`` (mixed into the engine)."""

    name = "argparse"
    world_axes = (COMMAND_LINE_WORLDS,)

    # --- the engine's hooks --------------------------------------------------------------------------
    def import_ref(self, path: str) -> Value | None:
        if path.split(".")[0] == "argparse" or path in ("types", *NAMESPACE_TYPES):
            return V(ArgparseRef(path))
        return None

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None, st: State,
             fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if not isinstance(atom, ArgparseRef):
            return UNHANDLED
        return TOP if star_unknown else self.argparse_call(atom.path, args, kwargs, node, fr)

    def method_call(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
               node: ast.AST, st: State, fr: Frame) -> Value | Unhandled:
        if kind != "ArgParserAtom":
            return UNHANDLED
        return self.argparse_parser_method(name, receiver, args, kwargs, node, st, fr)

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                  fr: Frame) -> Value | None | Unhandled:
        if isinstance(atom, ArgparseRef):
            return V(ArgparseRef(f"{atom.path}.{attr}"))
        if isinstance(atom, ArgParserAtom):
            return V(BoundShim(atom, attr)) if attr in PARSER_METHODS else TOP
        if isinstance(atom, NamespaceAtom):
            return self.namespace_attribute(atom, attr)
        return UNHANDLED

    def attributes_read(self, value: Value, attributes: Iterable[str]) -> Value:
        return read_values(value, attributes)

    def value_attribute(self, obj: Value, attr: str, node: ast.expr, st: State, fr: Frame) -> Value | None:
        """``cfg.cpu`` of a config object filled from the namespace (``Config(**vars(args))``), its attribute not
        known: the option of that name (:mod:`.option_values`), the same values and choice as ``args.cpu``."""
        given = self.assumption(NO_OPTIONS)
        if given is None or not obj.atoms or not all(isinstance(a, Instance) for a in obj.atoms):
            return None
        option = self._option_values().get(attr)
        if option is None:
            return self._generated_field(obj, attr) if given else None
        if self.attribute_assigned(attr):
            return None
        for atom in obj.atoms:  # (an unknown value stored, or none the analysis sees and no class attribute)
            stored = self.heap_get((atom, attr))
            if (stored is not None and (stored.atoms or not stored.top)) \
                    or (stored is None and self.class_lookup(atom.cls, attr) is not None):  # type: ignore[attr-defined]
                return None
        return option.value(attr, not given)

    def _generated_field(self, obj: Value, attr: str) -> Value | None:
        """With no options given, ``cfg.device`` of a config object filled from the namespace whose class's fields
        a loop made into options (:func:`.option_values.generated_option_classes`): the field's own default."""
        generated = self.__dict__.get("_generated_option_classes")
        if generated is None:
            generated = self.__dict__["_generated_option_classes"] = generated_option_classes(
                t for m in self.modules if (t := m.source.tree) is not None
                and (not m.source.has_text or m.source.mentions("add_argument")))
        if not generated or self.attribute_assigned(attr):
            return None
        out: Value | None = None
        for atom in obj.atoms:
            cls = atom.cls  # type: ignore[attr-defined]
            if cls.name not in generated or cls.dataclass_fields is None:
                return None
            fields = dict(inherited_fields(c.dataclass_fields for c in reversed(cls.mro())))
            if self.heap_get((atom, attr)) is None or not self.heap_get((atom, attr)).top:
                return None  # (a value the analysis knows: read as stored)
            default = fields.get(attr)
            if default is None or field_call(default) is not None:
                return None  # (no default, or ``field(...)``: not a plain default)
            value = self.class_lookup(cls, attr)
            if value is None:
                return None
            out = value if out is None else out.join(value)
        return out

    def _option_values(self) -> dict[str, OptionValues]:
        found = self.__dict__.get("_option_value_table")
        if found is None:
            found = self.__dict__["_option_value_table"] = option_values(
                t for m in self.modules if (t := m.source.tree) is not None
                and (not m.source.has_text or m.source.mentions("add_argument")))
        return found

    def binary(self, op: ast.AST, left: Value, right: Value, node: ast.AST, st: State, fr: Frame,
               compare: bool) -> Value | None:
        """``args.device == "gpu"`` (``!=``, ``in (...)``, ``not in``) with options given, the option's value not
        known: one answer for the whole run, so the comparison is a test of one program-wide choice over the
        option's values (:mod:`.option_tests`) and its result carries that test's way (a flag made from it and
        handed to a constructor is the same answer as the same test in ``main``, and ``== "cpu"`` elsewhere the
        opposite answer)."""
        if not compare or not isinstance(node, ast.Compare):
            return None
        test = compared(node)
        if test is None:
            return None
        subject, predicate = test
        subject_value = left if subject is node.left else right
        if not subject_value.top:
            return None
        holds = isinstance(node.ops[0], (ast.Eq, ast.In))
        return self._option_test(subject, predicate, holds, st, fr)

    def call_expression(self, node: ast.Call, func: Value, args: list[Value], kwargs: dict[str, Value],
                        star_unknown: bool, st: State, fr: Frame) -> Value | None:
        """``args.device.startswith("cuda")``: a test of the option, as a comparison is (:meth:`binary`)."""
        test = prefix_test(node)
        if test is None:
            return None
        return self._option_test(test[0], test[1], True, st, fr)

    def _option_test(self, subject: ast.expr, predicate: Predicate, holds: bool, st: State,
                     fr: Frame) -> Value | None:
        """A test of the option ``subject`` reads (its value unknown), as tagged booleans: true where
        ``predicate`` is ``holds``. None: ``subject`` is not such an option."""
        # (a known string, ``args.device.lower()`` with the defaults: the analysis does not fold string methods)
        known = self.eval(viewed(subject), st.copy(), fr, quiet=True)
        texts = known.consts() if not known.top else None
        if texts and len(texts) == 1 and isinstance(texts[0], str):
            return V(const(predicate.holds(seen_through(subject, texts[0])) == holds))
        found = self._unknown_option(subject, st, fr)
        if found is not None and self.assumption(NO_OPTIONS):  # (a config object filled from the defaults)
            option = self._string_options().get(found[0])
            if option is None or len(option.defaults) != 1:
                return None
            return V(const(predicate.holds(seen_through(subject, option.defaults[0])) == holds))
        domain = self._option_domain(*found) if found is not None else None
        if domain is None:
            return None
        atoms = []
        for answer in (True, False):
            tags = domain.outcome(predicate, answer)
            if tags is not None:
                atoms.append(with_tags(const(answer == holds), tags))
        fr.tagged = True  # (statements reading the result split on its ways)
        return Value(frozenset(atoms))

    def _option_domain(self, dest: str, parsed: bool) -> OptionDomain | None:
        """The values of the string option ``dest`` the program's tests tell apart (None: not a string option
        of the program's parsers, nor an option of the namespace read: ``parsed``)."""
        domains = self.__dict__.setdefault("_option_domains", {})  # (the modules are the engine's, fixed)
        if (dest, parsed) not in domains:
            trees = [m.source.tree for m in self.modules if m.source.tree is not None
                     and (not m.source.has_text or m.source.mentions("add_argument") or m.source.mentions(dest))]
            option = self._string_options().get(dest)
            tests = predicates_by_name(trees).get(dest, frozenset())
            if option is None and parsed:  # (an option whose values the syntax does not tell: any string)
                option = StringOption((), None)
            domains[dest, parsed] = None if option is None \
                else OptionDomain.of(dest, tests, option.defaults, option.choices)
        return domains[dest, parsed]

    def _string_options(self) -> dict[str, StringOption]:
        """The string options the program's parsers add (by syntax: :func:`.option_tests.string_options`)."""
        found = self.__dict__.get("_string_option_table")
        if found is None:
            found = self.__dict__["_string_option_table"] = string_options(
                t for m in self.modules if (t := m.source.tree) is not None
                and (not m.source.has_text or m.source.mentions("add_argument")))
        return found

    def _unknown_option(self, subject: ast.expr, st: State, fr: Frame) -> tuple[str, bool] | None:
        """The destination of a parsed option ``subject`` reads when its value is not known (options given;
        none stored on the namespace): ``args.device`` on a namespace, or (seen through ``.lower()`` and the
        like) an attribute, a ``["key"]`` or ``.get("key")`` named as a string option of the program's parsers
        (a config object or ``vars(args)`` filled from the namespace, in any function, read as the option's
        default in the run without options), and whether it was read on a parsed namespace. None for anything
        else."""
        name = option_name(subject)
        if name is None or self.assumption(NO_OPTIONS) is None or self.attribute_assigned(name):
            return None
        holder_node = viewed(subject)
        if isinstance(holder_node, ast.Attribute):
            holder = self.eval(holder_node.value, st.copy(), fr, quiet=True)
            if holder.atoms and all(isinstance(a, NamespaceAtom) for a in holder.atoms):
                if self.assumption(NO_OPTIONS) or not all(
                        not a.defaults and any(dest == name for dest, _d in a.options)
                        and not any(n == name for n, _v in a.assigned) for a in holder.atoms):
                    return None
                return name, True
        return name, False

    def builtin(self, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
        if name == "vars" and len(args) == 1 and not kwargs and args[0].only(NamespaceAtom):
            return join_all(self.namespace_dict(atom) for atom in args[0].atoms)  # type: ignore[arg-type]
        return None

    def argparse_call(self, path: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                      fr: Frame) -> Value:
        if path in NAMESPACE_TYPES and not args:
            return V(NamespaceAtom((), False, tuple(kwargs.items())))
        if path != "argparse.ArgumentParser" or node is None:
            return TOP
        # a parser whose options come partly from elsewhere: not known completely
        bound = bind_call(path, args, kwargs)
        complete = bound.get("parents") is None and bound.get("argument_default") is None
        return V(ArgParserAtom(self.origin(node, fr, "argparse parser"), (), complete))

    def argparse_parser_method(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                               node: ast.AST, st: State, fr: Frame) -> Value:
        parsers = [a for a in receiver.atoms if isinstance(a, ArgParserAtom)]
        if receiver.top or len(parsers) != 1:
            return TOP
        parser = parsers[0]
        if name == "add_argument":
            found = option_default(args, kwargs)
            options = parser.options if found is None else (*parser.options, found)
            alternatives = parser.alternatives
            numbers = parser.numbers
            number = option_number(found[0], kwargs, found[1]) if found is not None else None
            values = option_alternatives(kwargs, found[1]) if found is not None and number is None else None
            if found is not None and number is not None:
                numbers = (*numbers, (found[0], number))
            elif found is not None and values is not None:
                alternatives = (*alternatives, (found[0], values))
            form = _option_form(found[0], args, kwargs) if found is not None else None
            forms = parser.forms if form is None else (*parser.forms, form)
            rebind_call_receiver(node, V(ArgParserAtom(parser.origin, options, parser.complete, alternatives,
                                                       numbers, forms, parser.forms_known and form is not None)),
                                 st)
            return TOP
        if name == "set_defaults":
            if args:
                return TOP
            new_defaults = dict(kwargs)
            options = tuple((dest, new_defaults.pop(dest) if dest in new_defaults else default)
                            for dest, default in parser.options)
            options += tuple(new_defaults.items())  # a default for a destination no option has: still an attribute
            alternatives = tuple(item for item in parser.alternatives if item[0] not in kwargs)  # (a new default)
            numbers = tuple(item for item in parser.numbers if item[0] not in kwargs)
            rebind_call_receiver(node, V(ArgParserAtom(parser.origin, options, parser.complete, alternatives,
                                                       numbers, parser.forms, parser.forms_known)), st)
            return TOP
        if name not in _PARSE_METHODS:
            return TOP
        bound = bind_call(f"argparse.ArgumentParser.{name}", args, kwargs)
        line = bound.get("args")
        written = _written_line(line)
        if written and parser.complete and parser.forms_known and bound.get("namespace") is None:
            # a command line written into the program: the options it gives, the others their defaults
            given_now = parse_argv(written, parser.forms)
            if given_now is not None:
                parsed = V(NamespaceAtom(tuple((dest, given_now.get(dest, default))
                                               for dest, default in parser.options), True))
                return V(seq("tuple", (parsed, V(seq("list", ()))))) if "known" in name else parsed
        empty = line is not None and line.only(SeqAtom) and all(a.items == () for a in line.atoms)  # type: ignore[attr-defined]
        if not parser.complete or (line is not None and not empty and line.consts() != [None]) \
                or bound.get("namespace") is not None:
            defaults = False
        else:
            defaults = empty or bool(self.assumption(NO_OPTIONS))
        given: tuple[tuple[str, Value], ...] = ()
        if not defaults and parser.complete:  # (``argument_default=``, ``parents=``: other defaults)
            chosen = {dest: option_value(dest, values) for dest, values in parser.alternatives}
            given = tuple((dest, value) for dest, value in chosen.items() if value is not None)
            fr.tagged = fr.tagged or bool(given)  # (statements reading them split: :mod:`.relational`)
        numbers = parser.numbers if not defaults and parser.complete else ()
        namespace = V(NamespaceAtom(parser.options, defaults, (), given, numbers))
        return V(seq("tuple", (namespace, TOP))) if "known" in name else namespace

    def namespace_attribute(self, atom: NamespaceAtom, attr: str) -> Value:
        stored = [value for name, value in atom.assigned if name == attr]
        if stored:
            return stored[-1]
        if self.attribute_assigned(attr):
            return TOP
        if not atom.defaults:  # options given: one of its values where those are a known few, the same everywhere
            values = [value for dest, value in (*atom.numbers, *atom.given) if dest == attr]
            return values[-1] if values else TOP
        found = [default for dest, default in atom.options if dest == attr]
        return found[-1] if found and found[-1] is not None else TOP

    @staticmethod
    def namespace_store(obj: Value, attr: str, value: Value) -> Value | None:
        """``args.attr = value`` on a variable holding a namespace: the namespace it now holds (``None``: it
        holds none)."""
        if not any(isinstance(a, NamespaceAtom) for a in obj.atoms):
            return None
        return Value(frozenset(a.with_attribute(attr, value) if isinstance(a, NamespaceAtom) else a
                               for a in obj.atoms), obj.top)

    def namespace_dict(self, atom: NamespaceAtom) -> Value:
        """``vars(args)``: the options and stored attributes by name; other keys are unknown (options added
        where the parser's variable does not see them: argument groups, helpers)."""
        names = dict.fromkeys([dest for dest, _d in atom.options] + [name for name, _v in atom.assigned])
        items = tuple((name, self.namespace_attribute(atom, name)) for name in names)
        return V(DictAtom(items, TOP))

    def attribute_assigned(self, attr: str) -> bool:
        """Whether a store the analysis does not follow on a namespace could assign or delete ``attr``:
        ``del x.name``, ``setattr(x, "name", ...)`` (or a computed name) unless ``x`` is the ``self`` of a
        method (an instance), and ``obj.name = ...`` unless ``obj`` is a variable the same scope binds by
        assignment (followed where it runs: :meth:`namespace_store`) or the ``self`` of a method. A store
        through a parameter, a global or an attribute (``def setup(opt): opt.device = ...``,
        ``self.args.device = ...``) may reach a namespace that other variables also hold. Only modules whose
        text could hold such a store are walked (a large program has few), each once."""
        answers = self.__dict__.setdefault("_assigned_by_name", {})  # (the modules are the engine's, fixed)
        if attr not in answers:
            answers[attr] = self._attribute_assigned(attr)
        return answers[attr]

    def _attribute_assigned(self, attr: str) -> bool:
        cache = self.__dict__.setdefault("_unfollowed_by_module", {})
        # (a comment runs to its line's end: ``#[^\n]*\n`` matches a run of ``#`` one way only, where ``#[^\n]*``
        # under ``*`` would try every split of a ``####...`` banner line)
        mentions = re.compile(r"\.(?:[\s\\]|#[^\n]*\n)*" + re.escape(attr) + r"\b")
        for module in self.modules:
            source = module.source
            # the text could hold such a store: ``setattr``, or ``.attr`` (a substring test first: the pattern
            # is slow to search for where the name does not occur; the text is decoded only then)
            if source.tree is None or (source.has_text and not source.mentions("setattr")
                                       and (not source.mentions(attr) or not mentions.search(source.text or ""))):
                continue
            names = cache.get(module.file)
            if names is None:
                found: set[str] = set()
                _unfollowed_stores(source.tree, frozenset(), found)
                names = cache[module.file] = frozenset(found)
            if attr in names or "*" in names:
                return True
        return False


def _unfollowed_stores(scope: ast.AST, instances: frozenset[str], names: set[str]) -> None:
    nodes = scope_nodes(scope)
    declared = {n for node in nodes if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names}
    bound = {node.id for node in nodes if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    local = (bound - declared) | instances
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if not (isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and node.value.id in local):
                names.add(node.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                and len(node.args) >= 2 and not (isinstance(node.args[0], ast.Name) and node.args[0].id in instances):
            name = node.args[1]  # (``setattr(self, name, ...)`` in a method: an instance's, as ``self.x = ...``)
            names.add(name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else "*")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and isinstance(scope, ast.ClassDef):
            params = node.args.posonlyargs + node.args.args
            static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
            _unfollowed_stores(node, frozenset({params[0].arg} if params and not static else ()), names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            _unfollowed_stores(node, frozenset(), names)
