"""``parser.parse_args(["--gpus", "1"])``: a command line written into the program (a notebook's or a report's
fixed arguments), parsed as argparse would parse it.

Only options whose form is known are followed: optional ones (``--name``/``-n``, also ``--name=value``) with
``store`` (``nargs`` absent, ``"?"``, ``"*"``, ``"+"`` or a number, ``type=int``/``float``/``str``),
``store_true`` and ``store_false``. Anything else in the list (a positional value, an option not recorded, an
abbreviation, a converter the analysis cannot run) makes the whole parse unknown (``None``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..domain import Atom, BuiltinRef, V, Value, const, seq

_CONVERTERS = {"int": int, "float": float, "str": str}


@dataclass(frozen=True, slots=True)
class OptionForm:
    """How one ``add_argument`` reads the command line."""

    dest: str
    strings: tuple[str, ...]  # its option strings (``-g``, ``--gpus``)
    action: str  # store, store_true, store_false
    nargs: str | int | None
    converter: str | None  # int, float, str (None: a converter the analysis does not run)


def option_form(dest: str, names: list[str], action: str, nargs: object, converter: Value | None) -> OptionForm | None:
    """The form of an optional argument, or None where it is not one the parse below follows."""
    if not names or not all(n.startswith("-") for n in names) or action not in ("store", "store_true", "store_false"):
        return None
    if nargs is not None and nargs not in ("?", "*", "+") and not (isinstance(nargs, int) and nargs >= 0):
        return None
    kind: str | None = "str"
    if converter is not None:
        atoms = list(converter.atoms) if not converter.top else []
        kind = atoms[0].name if len(atoms) == 1 and isinstance(atoms[0], BuiltinRef) else None
        kind = kind if kind in _CONVERTERS else None
    return OptionForm(dest, tuple(names), action, nargs, kind)


def parse_argv(tokens: list[str], forms: tuple[OptionForm, ...]) -> dict[str, Value] | None:
    """What each option given in ``tokens`` sets (its destination: the value), or None (not followed)."""
    by_string = {s: form for form in forms for s in form.strings}
    out: dict[str, Value] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        form = by_string.get(name)
        if form is None:
            return None
        i += 1
        if form.action != "store":
            if eq:
                return None
            out[form.dest] = V(const(form.action == "store_true"))
            continue
        if eq:
            values = [inline]
        else:
            count = form.nargs if isinstance(form.nargs, int) else None
            values = []
            while i < len(tokens) and not tokens[i].startswith("-") and (count is None or len(values) < count):
                values.append(tokens[i])
                i += 1
                if form.nargs is None or form.nargs == "?":
                    break
        if (form.nargs in (None,) and len(values) != 1) or (form.nargs == "+" and not values) \
                or (isinstance(form.nargs, int) and len(values) != form.nargs) or (form.nargs == "?" and not values):
            return None  # (``nargs="?"`` alone gives its ``const``: not followed)
        converted = [_converted(v, form.converter) for v in values]
        if any(c is None for c in converted):
            return None
        items = [V(c) for c in converted if c is not None]
        out[form.dest] = items[0] if form.nargs in (None, "?") else V(seq("list", tuple(items)))
    return out


def _converted(text: str, converter: str | None) -> Atom | None:
    if converter is None:
        return None
    try:
        return const(_CONVERTERS[converter](text))
    except ValueError:
        return None  # (argparse exits: no namespace)

