"""The Python builtins and container methods the analysis models (range, enumerate, zip, len, dict methods ...)."""

from __future__ import annotations

import ast

from ..domain import (
    BOOL,
    BOTTOM,
    NONE,
    TOP,
    Atom,
    ClassRef,
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
    seq_of,
)
from .flow_state import Frame, State
from .limits import MAX_GETATTR_NAMES, MAX_UNROLL
from .mixin import EngineMixin
from .narrowing import isinstance_outcome
from .python_values import splice_items

#: Builtins that iterate their positional arguments (``enumerate(loader)``, ``iter(loader)``).
_ITERATING = frozenset({"enumerate", "zip", "list", "tuple", "sorted", "reversed", "set", "iter", "min", "max",
                        "sum"})


class Builtins(EngineMixin):
    """The Python builtins and container methods the analysis models (range, enumerate, zip, len, dict methods ...)."""

    def call_builtin(self, name: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None,
                     st: State, fr: Frame) -> Value:
        modelled = self.model_builtin(name, args, kwargs)
        if modelled is not None:
            return modelled  # ``str(device)``, ``vars(args)``: a builtin over a library model's values
        if name == "range":
            return self._range(args)
        if name in _ITERATING and node is not None and not st.dead:
            # their arguments are iterated: a project object's ``__iter__()`` stands for it
            count = len(args) if name == "zip" else (len(args) == 1) if name in ("min", "max") else 1
            args = [self.iterated(a, node, st, fr) if i < count else a
                    for i, a in enumerate(args)]
        if name == "enumerate" and args:
            items = splice_items(args[0])
            if items is not None and not kwargs and len(args) == 1:
                return V(seq("list", [V(seq("tuple", (V(const(i)), item))) for i, item in enumerate(items)]))
            return V(seq_of("list", V(seq("tuple", (TOP, self.iter_element(args[0]))))))
        if name == "zip" and args:
            columns = [splice_items(a) for a in args]
            if all(c is not None for c in columns):
                rows = zip(*columns, strict=False)  # zip's own semantics: the shortest wins
                return V(seq("list", [V(seq("tuple", row)) for row in rows]))
            return V(seq_of("list", V(seq("tuple", [self.iter_element(a) for a in args]))))
        if name in ("list", "tuple", "sorted", "reversed", "set") and args:
            kind = "tuple" if name == "tuple" else "set" if name == "set" else "list"
            if name in ("list", "tuple") and args[0].only(SeqAtom):
                return Value(frozenset(SeqAtom(kind, a.items, a.elem) for a in args[0].atoms))  # type: ignore
            keyed = next(iter(args[0].atoms)) if len(args[0].atoms) == 1 and not args[0].top else None
            if name in ("list", "tuple") and isinstance(keyed, DictAtom) and keyed.rest is None:
                return V(seq(kind, keyed.keys()))  # ``list(batch)``: its keys, in order
            return V(seq_of(kind, self.iter_element(args[0])))
        if name in ("list", "tuple"):
            return V(seq(name, ()))
        if name == "print":
            return NONE
        if name in ("int", "float"):
            return self._number(name, args, kwargs)
        if name == "dict" and len(args) <= 1:
            return self._dict_call(args, kwargs)
        if name in ("min", "max") and len(args) == 1:
            return self.iter_element(args[0])  # one of the elements (which one: not followed)
        if name == "len" and args:
            return self._length(args[0])
        if name == "isinstance":
            outcome = isinstance_outcome(args[0], args[1]) if len(args) == 2 and not kwargs else None
            return BOOL if outcome is None else V(const(outcome))
        if name == "type" and len(args) == 1 and not kwargs:
            # ``type(self).DEVICE``: the instance's own class (class attributes through its MRO)
            classes = [ClassRef(a.cls) for a in args[0].atoms if isinstance(a, Instance)]
            return Value(frozenset(classes), args[0].top or len(classes) != len(args[0].atoms))
        if name == "super":
            return self._super(st, fr)
        if name == "setattr" and len(args) == 3 and not kwargs:
            self._setattr(args[0], args[1], args[2], node, st, fr)
            return NONE
        if name == "getattr" and len(args) >= 2:
            attrs = args[1].consts()
            if attrs and len(attrs) <= MAX_GETATTR_NAMES and all(isinstance(a, str) for a in attrs):
                # one of a few known names (``for name in ("enc", "dec"): getattr(self, name)``): any of them
                found = join_all(self.attribute(args[0], attr, node if isinstance(node, ast.expr) else None, st, fr)
                                 for attr in attrs)
                # (a name inside ``torch``, ``getattr(torch.backends, "mps", None)``: read as ``torch.backends.mps``
                # is, the default left out; the package needs a torch that has what programs probe for)
                library = args[0].only(Atom) and all(a.names_library_module() for a in args[0].atoms)
                return found.join(args[2]) if len(args) > 2 and not library else found
            return TOP
        if name in ("staticmethod", "classmethod", "property") and args:
            return args[0]
        if name == "sum" and args:
            return self._sum(args[0], args[1] if len(args) > 1 else kwargs.get("start", V(const(0))), node, st, fr)
        if name == "next" and args:
            # ``next(batches)`` over a project iterator: what its ``__next__()`` returns
            iterated = self._iterator_items(args[0], node, st, fr) if node is not None and not st.dead else args[0]
            return self.iter_element(iterated).join(args[1]) if len(args) > 1 else self.iter_element(iterated)
        if name == "iter" and args:
            return V(seq_of("list", self.iter_element(args[0])))
        if name == "map" and len(args) >= 2 and not kwargs and node is not None:
            return self._map(args[0], args[1:], node, st, fr)
        return TOP

    def _map(self, func: Value, iterables: list[Value], node: ast.AST, st: State, fr: Frame) -> Value:
        """``map(f, xs, ...)``: ``f`` called with an element of each iterable (``map(np.asarray, columns)``
        converts each column where the ``map`` is), a list of its results."""
        elements = [self.iter_element(self.iterated(xs, node, st, fr)) for xs in iterables]
        if st.dead:
            return BOTTOM
        result = self.call(func, elements, {}, node, st, fr)
        return V(seq_of("list", result))

    def _setattr(self, obj: Value, attr: Value, value: Value, node: ast.AST | None, st: State, fr: Frame) -> None:
        """``setattr(obj, name, value)``: a store of each name it may be; a name not known makes every attribute
        of the instances it may reach partly unknown (modules and classes: not followed)."""
        names = attr.consts() or []  # (None: some possibility is not a constant, e.g. a function's __name__)
        holder = node.args[0] if isinstance(node, ast.Call) and node.args else None
        if (not attr.top and len(names) == 1 and type(names[0]) is str and isinstance(holder, ast.expr)
                and node is not None):
            # ``obj.name = value`` itself (setters, buffers, the ``obj.name`` overlay: Assignment.assign)
            self.assign(ast.copy_location(ast.Attribute(holder, names[0], ast.Store()), node), value, st, fr)
            return
        if not attr.top and names and len(names) <= MAX_GETATTR_NAMES and all(type(n) is str for n in names):
            for name in names:  # one of several names: none of them replaced for sure
                self.store_attribute(Value(obj.atoms, True), name, value, fr)
        else:
            for atom in obj.atoms:
                if isinstance(atom, Instance):
                    self.havoc_instance_attributes(atom.cls)
        if isinstance(holder, ast.Name):
            st.drop_overlays(holder.id)  # ``obj.name`` as this function last stored it

    def _sum(self, iterable: Value, start: Value, node: ast.AST | None, st: State, fr: Frame) -> Value:
        """``sum(losses)``: ``start + x0 + x1 ...`` (tensor additions checked at the ``sum`` call; the
        default start 0 is left out: ``0 + x`` is ``x``)."""
        zero = start.consts() == [0]
        items = splice_items(iterable)
        if items is not None:
            total = items[0] if zero and items else start
            for item in items[1:] if zero else items:
                total = self.binop(ast.Add(), total, item, node, st, fr)
                if st.dead:
                    return BOTTOM  # an addition failed on every path: the rest never runs
            return total
        # unknown length: none, one, or several elements (a failing addition may not run: not dead)
        element = self.iter_element(iterable)
        once = element if zero else self.binop(ast.Add(), start, element, node, st.copy(), fr)
        return start.join(once).join(self.binop(ast.Add(), once, element, node, st.copy(), fr))

    @staticmethod
    def _number(name: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """``int(x)`` / ``float(x)``: folded from constants, else a number of that type (it is one or it raises)."""
        convert = int if name == "int" else float
        if not args and not kwargs:
            return V(const(convert()))
        values = args[0].consts() if len(args) == 1 and not kwargs else None
        if values is not None and all(isinstance(v, (int, float, bool, str)) for v in values):
            try:
                return Value(frozenset(const(convert(v)) for v in values))
            except (ValueError, OverflowError):
                pass  # the program raises here (or the value is out of reach): a number of unknown value
        return V(NumberAtom(name))

    @staticmethod
    def _range(args: list[Value]) -> Value:
        """``range(n)`` (``range(a, b)``, ``range(a, b, s)``) with constant int bounds and a short length: the
        ints element-wise; else a list of unknown length."""
        bounds = [a.consts() for a in args]
        if 1 <= len(args) <= 3 and all(b is not None and len(b) == 1 and type(b[0]) is int for b in bounds):
            numbers = [b[0] for b in bounds]  # type: ignore[index]
            if len(numbers) < 3 or numbers[2] != 0:
                values = range(*numbers)
                # (``len`` of a range longer than sys.maxsize raises OverflowError: compare without it)
                if _range_length(values) <= MAX_UNROLL:
                    return V(seq("list", [V(const(i)) for i in values]))
        return V(seq_of("list", TOP))

    @staticmethod
    def _length(value: Value) -> Value:
        """``len(x)``: folded where the items are known, else an int of unknown value (``len`` returns one or
        raises, whatever ``x`` is: ``len(y) - t`` is a tensor on ``t``'s device)."""
        lengths = set()
        for atom in value.atoms:
            items = _known_items(atom)
            if items is not None:
                lengths.add(len(items))
            elif isinstance(atom, Const) and isinstance(atom.value, (str, bytes)):
                lengths.add(len(atom.value))
            else:
                return V(NumberAtom("int"))
        if value.top or not lengths:
            return V(NumberAtom("int"))
        return Value(frozenset(const(n) for n in lengths))

    @staticmethod
    def _dict_call(args: list[Value], kwargs: dict[str, Value]) -> Value:
        """``dict(train=d, eval=e)``, ``dict(base, eval=e)``: the keys are known (``dict(d)`` of a dict with keys
        not known statically: a copy of it)."""
        base: tuple = ()
        rest = None
        if args:
            atom = next(iter(args[0].atoms)) if len(args[0].atoms) == 1 and not args[0].top else None
            if not isinstance(atom, DictAtom):
                return TOP
            base = tuple((k, v) for k, v in atom.items if k not in kwargs or type(k) is not str)
            rest = atom.rest  # (a copy of a dict with keys not known statically: those values too)
        return V(DictAtom((*base, *kwargs.items()), rest))

    @staticmethod
    def _dict_method(name: str, receiver: Value, args: list[Value]) -> Value:
        out = BOTTOM
        for atom in receiver.atoms:
            assert isinstance(atom, DictAtom)
            values = join_all(v for _k, v in atom.items).join(atom.unknown_keys())
            keys = Value(frozenset(const(k) for k, _v in atom.items), atom.rest is not None)
            if name == "items":
                pairs = [V(seq("tuple", (V(const(k)), v))) for k, v in atom.items]
                if atom.rest is not None:
                    out = out.join(V(seq_of("list", join_all(pairs).join(V(seq("tuple", (TOP, atom.rest)))))))
                elif len(receiver.atoms) == 1:
                    out = out.join(V(seq("list", pairs)))  # insertion order, known length
                else:
                    out = out.join(V(seq_of("list", join_all(pairs))))
            elif name == "copy":
                out = out.join(V(atom))
            elif name == "values":
                out = out.join(V(seq_of("list", values)))
            elif name == "keys" and atom.rest is None and len(receiver.atoms) == 1:
                out = out.join(V(seq("list", atom.keys())))  # insertion order
            elif name == "keys":
                out = out.join(V(seq_of("list", keys)))
            elif name == "get":
                wanted = args[0].consts() if args else None
                found = atom.get(wanted[0]) if wanted and len(wanted) == 1 else None
                default = args[1] if len(args) > 1 else NONE
                if found is None and wanted and len(wanted) == 1:
                    # a key the dict does not hold: the default, or a value under a key not known statically
                    found = default.join(atom.unknown_keys())
                out = out.join(found if found is not None else values.join(default))
            else:
                out = out.join(TOP)
        return out


def _known_items(atom: Atom) -> tuple[object, ...] | None:
    """The items of a sequence or a dict whose every item is known (None: any other atom)."""
    if isinstance(atom, SeqAtom):
        return atom.items
    if isinstance(atom, DictAtom) and atom.rest is None:
        return atom.items
    return None


def _range_length(values: range) -> int:
    """``len(values)`` without its OverflowError beyond ``sys.maxsize`` (``range(10 ** 20)`` is valid code)."""
    step = values.step
    return max(0, (values.stop - values.start + step - (1 if step > 0 else -1)) // step)
