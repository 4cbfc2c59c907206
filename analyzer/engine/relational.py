"""One value, one device: undecided branches tag what they leave behind, and statements run per alternative.

An ``if`` whose test the analysis cannot decide joins two states; the
possibilities that only one branch made carry a tag naming the test (a
:class:`~analyzer.choices.Choice`: the frame's context, the test's text and
its abstract value, so the same flag tested twice is one choice) and the way
it went. A simple statement that reads values holding both ways of a choice,
holds an undecided conditional expression about devices, or hands a device
flag to a call, runs once per way, on the state where the choice went that
way, and what it assigns carries that way's tag: ``a + b`` after two
``if use_cuda:`` moves pairs the CPU ``a`` with the CPU ``b`` only. The branches
of a later ``if`` on the same test see only their own way's possibilities. A
name that holds one value on one of two or three devices (a parameter, a
helper's result) is tagged by device where a statement reads it.

Bounded: no new choice inside a loop on a test (or a value) whose names the
loop assigns (one test, many outcomes), and at most :data:`MAX_SPLIT` choices
split per statement (others keep both ways, as before). Tags stay in the frame
that made them: they are dropped on the way into a callee and out of it;
dropping a tag only pairs more. Program-wide choices (a command-line option's
value, :mod:`analyzer.choices`) are the exception: their tags travel, and a
statement reading a global or closure variable that holds them splits too. What
goes into the heap keeps its tags as *lasting* choices, and what a split run
stores there carries its ways (an attribute holds one value at a time); a value
on several devices stored in an attribute (``self.device = get_device()``) is
tagged by device there (:func:`one_value`), and a module's top level makes lasting
choices (it runs once).
"""

from __future__ import annotations

import ast
import itertools
import math
import operator
import re
from collections.abc import Callable, Iterable
from typing import Any

from ..choices import (
    MAX_ALTERNATIVES,
    PROGRAM,
    Choice,
    alternatives,
    combined_test,
    consistent,
    has_tags,
    lasting,
    program_choice,
    restriction,
    stripped,
    tag_except,
    taggable,
    tagged,
    tags_of,
    tracked,
    with_tags,
)
from ..domain import Atom, Const, NumberAtom, Value, const, merge_alike
from ..torch_domain import DEVICE_TYPES
from ..tree_walk import child_nodes
from .flow_state import Frame, FrameKind, State, join_states, with_mode_defaults
from .mixin import EngineMixin
from .program import FunctionInfo, FunctionKind
from .python_values import CMP_OPS, MIRRORED, NEGATED, OP_TEXT, constant_number

#: the most choices one statement is run per way of (2**MAX_SPLIT runs at most)
MAX_SPLIT = 2
#: calls whose result a test may read twice and get the same answer (environment and availability probes)
STABLE_CALLS = frozenset({"get", "getenv", "is_available", "device_count", "is_built", "exists",
                          # a string's views and tests (``args.device.lower().startswith("cuda")``)
                          "lower", "upper", "strip", "casefold", "startswith", "endswith"})
#: of those, the ones that need a key (``queue.get()`` takes the next item: two calls, two answers)
KEYED_CALLS = frozenset({"get", "getenv", "exists"})
SPLIT_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)
_THRESHOLD_TEXT = re.compile(r"^(--\S+) (>|>=|==) (\S+)$")
_THRESHOLD_OPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


class Relational(EngineMixin):
    """Choice tags on undecided branches, and statements run per way of a choice."""

    _statement_ifexps: frozenset[int] = frozenset()
    _forced: dict[int, bool] = {}  # noqa: RUF012 (replaced, never changed in place)
    #: the ways of the choices the statement being run took (what it stores in the heap carries them)
    program_ways: frozenset = frozenset()
    #: the ways of command-line options the path to the statement being run took (:attr:`State.ways`)
    path_ways: frozenset = frozenset()

    def choice(self, test: ast.expr, st: State, fr: Frame) -> tuple[Choice, bool] | None:
        """The choice an undecided ``test`` stands for, and the way that makes it true (``if not flag:`` is
        ``flag``'s choice, true its false way); None: not a test whose ways can be told apart."""
        if st.dead:
            return None
        facts = _test_facts(test)
        if facts is None or (fr.loops and not self._loop_invariant(test, facts[2], fr)):
            return None
        inner, way, text = facts[0], facts[1], facts[3]
        value = st.vars.get(inner.id) if isinstance(inner, ast.Name) else None
        if value is None:
            value = self.eval(inner, st.copy(), fr, quiet=True)
        truth = value.truthiness()
        if len(truth) < 2 and truth != {None}:
            return None
        decided = _decided_by(value)
        if decided is not None:  # a flag an earlier test of it tagged: that test's choice
            return decided[0], decided[1] == way
        threshold = self._option_threshold(inner, st, fr)
        if threshold is not None:  # ``args.gpus > 0``: one answer for the whole run, in every function
            return threshold[0], threshold[1] == way
        combined = combined_test(value, text)
        if combined is not None:  # ``args.device == "cuda" or args.device == "gpu"``: a test of the option too
            return combined, way
        return lasting_in(fr, Choice(fr.ctx.id, f"{text}#{hash(stripped(value))}")), way

    def _option_threshold(self, test: ast.expr, st: State, fr: Frame) -> tuple[Choice, bool] | None:
        """A command-line option's number compared with a constant (``args.gpus > 0``, ``1 <= n`` where ``n``
        holds it): the program-wide choice of that comparison, written option first, and the way that makes
        ``test`` true (``!=`` is ``==``'s other way)."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1) or type(test.ops[0]) not in _THRESHOLD_OPS:
            return None
        compare = CMP_OPS[type(test.ops[0])]
        for subject, other, flipped in ((test.left, test.comparators[0], False),
                                        (test.comparators[0], test.left, True)):
            numbers = [a for a in self.eval(subject, st.copy(), fr, quiet=True).atoms if isinstance(a, NumberAtom)]
            constants = {a.run_constant for a in numbers}
            bound = constant_number(self.eval(other, st.copy(), fr, quiet=True))
            if len(constants) != 1 or None in constants or bound is None:
                continue
            integral = all(a.tname == "int" for a in numbers)
            written, bound, way = _canonical_threshold(MIRRORED[compare] if flipped else compare, bound, integral)
            option = str(constants.pop())
            choice = program_choice(f"{option} {OP_TEXT[written]} {bound}")
            self.thresholds.setdefault(option, set()).add(choice)
            return choice, way
        return None

    @property
    def thresholds(self) -> dict[str, set[Choice]]:
        """The thresholds tested of each command-line number in this analysis (by option): deciding one may
        decide the others."""
        found: dict[str, set[Choice]] | None = self.__dict__.get("_thresholds")
        if found is None:
            found = self.__dict__["_thresholds"] = {}
        return found

    def restrict_state(self, st: State, choice: Choice, way: bool, fr: Frame | None = None) -> None:
        """Leave out of ``st`` the possibilities of ``choice``'s other way (and, for a threshold of a
        command-line number, of the other thresholds of that option it decides: ``--gpus > 0`` false makes
        ``--gpus > 1`` false). With ``fr``: a program-wide way that a parameter of ``fr`` contradicts (the
        function runs for the other way of the command line) leaves ``st`` dead."""
        if st.dead:
            return
        decided = [(choice, way)]
        found = threshold_of(choice)
        if found is not None:
            decided += [(other, implied) for other in self.thresholds.get(found[0], ()) if other != choice
                        and (implied := implied_way(((choice, way),), other)) is not None]
        if fr is not None and choice.ctx == PROGRAM and any(
                holds_only_the_other_way(st, fr, c, w) for c, w in decided):
            st.dead = True
            return
        restricts = [restriction(c, w) for c, w in decided]
        for values in st.value_maps():
            for name, value in list(values.items()):
                kept = value
                for restrict in restricts:
                    kept = restrict(kept)
                if kept is not value:
                    values[name] = kept

    @staticmethod
    def differ_in_taggables(true: State, false: State) -> bool:
        """Whether the branches leave some name holding a possibility that can carry a tag the other lacks."""
        if true.dead or false.dead:
            return False
        with_defaults(true, false)
        for ours, others in zip(true.value_maps(), false.value_maps(), strict=True):
            for name, mine in ours.items():
                theirs = others.get(name)
                if theirs is None or mine is theirs:
                    continue
                if any(tracked(a) for a in mine.atoms ^ theirs.atoms):
                    return True
        return False

    def implied_ways(self, test: ast.expr, st: State, fr: Frame) -> tuple[frozenset, frozenset]:
        """The command-line ways a test joined by ``and``/``or`` implies when true and when false (``not args.cpu
        and len(gpu_ids) > 1`` true: ``--cpu`` false), from the tags of its operands' values."""
        inner, flipped = test, False
        while isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
            inner, flipped = inner.operand, not flipped
        if not isinstance(inner, ast.BoolOp):
            return frozenset(), frozenset()
        true, false = self._operand_ways(inner, st, fr)
        return (false, true) if flipped else (true, false)

    def _operand_ways(self, node: ast.expr, st: State, fr: Frame) -> tuple[frozenset, frozenset]:
        inner, flipped = node, False
        while isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
            inner, flipped = inner.operand, not flipped
        if isinstance(inner, ast.BoolOp):
            both = isinstance(inner.op, ast.And)
            parts = [self._operand_ways(v, st, fr) for v in inner.values]
            # (``a and b`` true: both true; ``a or b`` false: both false; the other answer says nothing sure)
            union = frozenset().union(*(part[0] if both else part[1] for part in parts))
            found = (union, frozenset()) if both else (frozenset(), union)
        else:
            value = self.eval(inner, st.copy(), fr, quiet=True)
            ways = []
            for answer in (True, False):
                common: frozenset | None = None
                for atom in () if value.top else value.atoms:
                    if atom.truthy() in (answer, None):
                        mine = frozenset(t for t in tags_of(atom) if t[0].ctx == PROGRAM)
                        common = mine if common is None else common & mine
                ways.append(common or frozenset())
            found = (ways[0], ways[1])
        return (found[1], found[0]) if flipped else found

    @staticmethod
    def tag_branches(choice: Choice | None, way: bool, true: State, false: State, fr: Frame,
                     implied: tuple[frozenset, frozenset] = (frozenset(), frozenset())) -> None:
        """Before the join: what differs between the branches carries the way it came from (``way``: the
        true branch's; no ``choice``: a test that makes none), and the command-line ways its test implies on
        each branch (``implied``)."""
        if true.dead or false.dead:
            return
        mine_tags = frozenset({(choice, way)} if choice is not None else ()) | implied[0]
        their_tags = frozenset({(choice, not way)} if choice is not None else ()) | implied[1]
        with_defaults(true, false)
        for ours, others in zip(true.value_maps(), false.value_maps(), strict=True):
            for name in ours.keys() & others.keys():
                mine, theirs = ours[name], others[name]
                if mine is theirs or mine == theirs:
                    continue
                # (a namespace each branch narrowed to its way of a flag is one namespace again: tagged per
                # branch, it would double at every ``if args.<flag>:`` and outgrow the value limit)
                mine, theirs = ours[name], others[name] = merge_alike(mine, theirs)
                if mine == theirs:
                    continue
                common = mine.atoms & theirs.atoms
                fr.tagged = True
                ours[name] = tag_except(mine, common, mine_tags)
                others[name] = tag_except(theirs, common, their_tags)

    def statement_choice(self, node: ast.IfExp) -> bool:
        """Whether a conditional expression is one choice: evaluated once per run of its statement (not the
        element of a comprehension, not a lambda's body)."""
        return id(node) in self._statement_ifexps

    def _one_value_one_device(self, node: ast.stmt, reads: tuple[str, ...], st: State, fr: Frame) -> None:
        """A name the statement reads that holds one value on one of two devices, not yet told apart (a
        parameter given a CPU or a CUDA tensor, what a helper returned: ``get_device()``): its possibilities
        are tagged by device, a choice of this statement, so what the statement and later ones make from it
        (``torch.ones(n, device=x.device)``, ``x.clone()``) stays with the same device."""
        variables = st.vars
        for name in reads:
            value = variables.get(name)
            if value is None or len(value.atoms) < 2:
                continue
            keys = _device_keys(value)
            if keys is None:
                continue
            if fr.loops and not self._name_loop_invariant(node, name, fr):
                continue  # (a loop that rebinds it: one statement, a new value each time)
            variables[name] = by_device(value, keys, f"{name}@{node.lineno}:{node.col_offset}", _made_in(fr))
            fr.tagged = True

    @staticmethod
    def _name_loop_invariant(node: ast.stmt, name: str, fr: Frame) -> bool:
        scope = fr.func.node if fr.func is not None else fr.module.source.tree
        return scope is not None and not any(
            name in assigned for inside, assigned in _loops(scope) if id(node) in inside)

    def forced_way(self, node: ast.IfExp) -> bool | None:
        """The branch a conditional expression takes in this run of its statement (None: not split on it)."""
        return self._forced.get(id(node))

    def run_split(self, node: ast.stmt, st: State, fr: Frame, run: Callable[[ast.stmt, State, Frame], State]) -> State:
        """Run a simple statement once per way of the choices the values it reads hold both ways of, and of
        the undecided conditional expressions in it (``torch.device("cuda" if flag else "cpu")``: each run
        takes one branch, so what is made from it carries that way)."""
        if st.dead or not isinstance(node, SPLIT_STATEMENTS):
            return run(node, st, fr)
        once = _statement_info(node)
        self._one_value_one_device(node, once[3], st, fr)
        outer = _tagged_outer_names(once[3], st, fr)
        if not once[0] and not once[2] and not fr.tagged and not outer:
            return run(node, st, fr)  # (no conditional expression, no name handed to a call, nothing tagged)
        saved = self._statement_ifexps, self._forced, self.program_ways
        self._statement_ifexps, self._forced = once[0], {}
        try:
            found: set[Choice] = set()
            values: list[Value] = []
            if fr.tagged or outer:
                variables = {**outer, **st.vars}
                values = [self.model_attributes_read(variables[name], once[4].get(name, ()))
                          for name in once[3] if name in variables]
                found = {c for c, ways in alternatives(values).items() if len(ways) == 2}
            forcing: list[tuple[int, Choice, bool]] = []
            for ifexp in once[1]:
                made = self.choice(ifexp.test, st, fr)
                if made is not None:
                    forcing.append((id(ifexp), *made))
                    found.add(made[0])
            flags = self._flag_arguments(once[2], st, fr) if once[2] else {}
            found.update(flags.values())
            choices = sorted(found)[:MAX_SPLIT]
            if not choices:
                return run(node, st, fr)
            fr.tagged = True
            outs: list[State] = []
            for ways in itertools.product((True, False), repeat=len(choices)):
                chosen = dict(zip(choices, ways, strict=True))
                if not _feasible(values, frozenset(chosen.items())) or not thresholds_agree(chosen.items()):
                    continue  # (``--device`` of three values: no value is the first and the second)
                self._forced = {key: chosen[c] == way for key, c, way in forcing if c in chosen}
                part = st.copy()
                part.vars.update(outer)  # (a global's or a closure's value: restricted as a local for this run)
                for choice, way in chosen.items():
                    self.restrict_state(part, choice, way)
                for name, choice in flags.items():
                    if choice in chosen:  # ``to_device(t, use_cuda)``: the callee sees one answer
                        way = chosen[choice]
                        part.vars[name] = tagged(Value((const(way),)), frozenset({(choice, way)}))
                before = [dict(values) for values in part.value_maps()]
                self.program_ways = saved[2] | frozenset(chosen.items())
                split_before = fr.split_ways
                fr.split_ways = split_before | frozenset(chosen.items())
                try:
                    out = run(node, part, fr)
                finally:
                    fr.split_ways = split_before
                if not out.dead:
                    tags = frozenset(chosen.items())
                    for earlier, now, unsplit in zip(before, out.value_maps(), st.value_maps(), strict=True):
                        for name, value in list(now.items()):
                            if earlier.get(name) is not value:
                                now[name] = tagged(value, tags)
                            elif name in unsplit:  # (restricted for this run only: a namespace's would not join back)
                                now[name] = unsplit[name]
                            elif name in outer:
                                del now[name]
                outs.append(out)
            return join_states(outs) if outs else run(node, st, fr)
        finally:
            self._statement_ifexps, self._forced, self.program_ways = saved

    def _flag_arguments(self, names: tuple[ast.Name, ...], st: State, fr: Frame) -> dict[str, Choice]:
        """Of the names passed straight to a call (``names``), those that hold an undecided ``True``/``False``
        (a flag handed to a helper that tests it), with the choice an ``if`` on the name would make."""
        out: dict[str, Choice] = {}
        for arg in names:
            if not any(word in arg.id.lower() for word in _FLAG_WORDS):
                continue  # (``verbose``: a run per answer would only multiply the callee's contexts)
            value = st.vars.get(arg.id)
            if value is None or value.top or len(value.atoms) != 2 or any(
                    not (isinstance(a, Const) and type(a.value) is bool) or tags_of(a) for a in value.atoms):
                continue
            made = self.choice(arg, st, fr)
            if made is not None and made[1]:
                out[arg.id] = made[0]
        return out

    @staticmethod
    def _loop_invariant(test: ast.expr, names: frozenset[str], fr: Frame) -> bool:
        """No name ``test`` reads is assigned in a loop around it (one test, one answer in every iteration)."""
        known = getattr(test, "_devicelint_invariant", None)
        if known is None:
            scope = fr.func.node if fr.func is not None else fr.module.source.tree
            known = scope is not None and not any(
                names & assigned for inside, assigned in _loops(scope) if id(test) in inside)
            test._devicelint_invariant = known  # type: ignore[attr-defined]
        return known



def _canonical_threshold(compare: Callable[[Any, Any], Any], bound: float,
                         integral: bool) -> tuple[Callable[[Any, Any], Any], float, bool]:
    """``x <op> bound`` as one of ``x > b``, ``x >= b`` (``x > b - 1`` for an int), ``x == b`` and the way that
    makes it true: ``x < 1``, ``x <= 0`` and ``not x > 0`` are one choice."""
    way = compare not in (operator.ne, operator.lt, operator.le)
    if not way:
        compare = NEGATED[compare]
    if integral and compare is operator.ge:
        compare, bound = operator.gt, math.ceil(bound) - 1
    elif integral and compare is operator.gt:
        bound = math.floor(bound)
    return compare, bound, way


def fewest_ways(ways: frozenset) -> frozenset:
    """``ways`` less those the others imply (``--device == "mps"`` true implies ``--device == "cuda"`` false: the
    ``elif`` of a chain on one option is on one way, whose other way is every other branch's)."""
    kept = set(ways)
    for choice, way in sorted(ways):
        rest = frozenset(kept - {(choice, way)})
        if rest and not consistent(rest, frozenset({(choice, not way)})):
            kept.discard((choice, way))
    return frozenset(kept)


def with_defaults(true: State, false: State) -> None:
    """A mode one branch sets and the other does not is its default on the other (which then carries that
    way's tag like any value the branches leave apart)."""
    true.modes, false.modes = (with_mode_defaults(true.modes, (false.modes,)),
                               with_mode_defaults(false.modes, (true.modes,)))


def holds_only_the_other_way(state: State, fr: Frame, choice: Choice, way: bool) -> bool:
    """A parameter of ``fr`` holds only possibilities made where the program-wide ``choice`` went the other way:
    the function runs here for that way. (A parameter is defined on every path; a name only one branch assigned
    holds one way's possibilities without saying anything of the path.)"""
    names = (*fr.func.positional, *fr.func.kwonly) if fr.func is not None else ()
    for name in names:
        value = state.vars.get(name)
        if value is not None and value.atoms and not value.top and all(
                (choice, not way) in tags_of(a)
                or _noted_only(value, a, (choice, not way))
                for a in value.atoms):  # (an instance's ways are its value's notes)
            return True
    return False


def _noted_only(value: Value, atom: Atom, tag: tuple[Choice, bool]) -> bool:
    """Every way ``value``'s notes give ``atom`` (an instance) holds ``tag``."""
    ways = (value.notes or {}).get(atom)
    return bool(ways) and all(tag in way for way in ways or ())


def threshold_of(choice: Choice) -> tuple[str, Callable[[float], bool], float] | None:
    """A command-line number's threshold (``--gpus > 0``): the option, the test and its bound; None: another
    kind of choice."""
    if choice.ctx != PROGRAM:
        return None
    found = _THRESHOLD_TEXT.match(choice.test)
    if found is None:
        return None
    option, op, text = found.groups()
    try:
        bound = float(text)
    except ValueError:
        return None
    test: Callable[[float], bool] = {">": lambda p: p > bound, ">=": lambda p: p >= bound,
                                     "==": lambda p: p == bound}[op]
    return option, test, bound


def _points(thresholds: list[tuple[str, Callable[[float], bool], float]]) -> list[float]:
    """A number from every region the thresholds' bounds cut the line into: what holds for these holds for
    every number."""
    bounds = sorted({t[2] for t in thresholds})
    points = [bounds[0] - 1, bounds[-1] + 1, *bounds]
    points += [(a + b) / 2 for a, b in itertools.pairwise(bounds)]
    return points


def thresholds_agree(ways: Iterable[tuple[Choice, bool]]) -> bool:
    """Some number answers each threshold of one option as ``ways`` says (no number is not above 0 and above
    1)."""
    by_option: dict[str, list[tuple[Callable[[float], bool], bool, tuple]]] = {}
    for choice, way in ways:
        found = threshold_of(choice)
        if found is not None:
            by_option.setdefault(found[0], []).append((found[1], way, found))
    for tests in by_option.values():
        if len(tests) > 1 and not any(all(test(p) == way for test, way, _t in tests)
                                      for p in _points([t for _f, _w, t in tests])):
            return False
    return True


def implied_way(known: tuple[tuple[Choice, bool], ...], other: Choice) -> bool | None:
    """The way ``known`` thresholds of an option decide another threshold of it (None: they do not)."""
    target = threshold_of(other)
    if target is None:
        return None
    tests = [(found, way) for choice, way in known
             if (found := threshold_of(choice)) is not None and found[0] == target[0]]
    if not tests:
        return None
    inside = [p for p in _points([t for t, _w in tests] + [target]) if all(t[1](p) == w for t, w in tests)]
    answers = {target[1](p) for p in inside}
    return answers.pop() if len(answers) == 1 else None


def _made_in(fr: Frame) -> Callable[[str], Choice]:
    return lambda name: lasting_in(fr, Choice(fr.ctx.id, name))


def lasting_in(fr: Frame, choice: Choice) -> Choice:
    """A choice of a module's top level, or of a class body there, outlives it (either runs once: one answer
    for the whole run, ``device = "cuda" if ... else "cpu"`` in a config class read by every method)."""
    once = fr.kind is FrameKind.MODULE or (fr.kind is FrameKind.CLASS and fr.ctx.function is None)
    return lasting(choice) if once else choice


def by_device(value: Value, keys: dict[Atom, object], name: str, made: Callable[[str], Choice]) -> Value:
    """``value``'s possibilities tagged by device (``keys``): one choice per device but the last (true for that
    device), so two devices differ in one of them."""
    devices = sorted(set(keys.values()), key=repr)
    choices = [made(f"{name}#{i}") for i in range(len(devices) - 1)]
    return Value(frozenset(with_tags(a, frozenset((c, keys[a] == devices[i]) for i, c in enumerate(choices)))
                           for a in value.atoms), value.top)


def one_value(value: Value, name: str) -> Value:
    """``value`` stored where it outlives its activation (an attribute, ``name``): one value on one of two or
    three devices not yet told apart (what a helper returned) is tagged by device with lasting choices, so the
    model moved there and the batches moved there later, in any method, stay on the same one."""
    if len(value.atoms) < 2:
        return value
    keys = _device_keys(value)
    return value if keys is None else by_device(value, keys, name, lambda n: Choice(PROGRAM, n))


_MANY_TIMES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)


def _feasible(values: list[Value], ways: frozenset) -> bool:
    """Whether some run takes these ways of the choices: every value read has a possibility they allow."""
    return all(value.top or not value.atoms or any(_allowed(value, a, ways) for a in value.atoms)
               for value in values)


def _allowed(value: Value, atom: Atom, ways: frozenset) -> bool:
    """Whether a possibility of ``value`` can be there on these ways (its own tags, or an instance's notes)."""
    noted_ways = value.notes.get(atom) if value.notes else None
    if noted_ways is not None:
        return any(consistent(way, ways) for way in noted_ways)
    return consistent(tags_of(atom), ways)


def _tagged_outer_names(reads: tuple[str, ...], st: State, fr: Frame) -> dict[str, Value]:
    """Of the names a statement in a function reads, the globals and closure variables holding tags (a
    module-level choice, such as a command-line option: the same in every function)."""
    if fr.kind is FrameKind.MODULE:
        return {}
    out: dict[str, Value] = {}
    for name in reads:
        if name in st.vars:
            continue
        value = fr.closure.get(name)
        if value is None:
            value = fr.module.namespace.get(name)
        if value is not None and has_tags(value):
            out[name] = value
    return out


def _statement_info(node: ast.stmt) -> tuple[frozenset[int], tuple[ast.IfExp, ...], tuple[ast.Name, ...],
                                               tuple[str, ...], dict[str, set[str]]]:
    """What splitting a simple statement looks at, found once per statement (kept on the node): the
    conditional expressions that run once per run of it (their ids) and the outermost of them (a nested one
    is tested where the outer one went), the names passed straight to a call, the names it reads, and the
    attributes it reads of each (``args.device``)."""
    info = getattr(node, "_devicelint_split", None)
    if info is not None:
        return info
    ids: set[int] = set()
    outermost: list[ast.IfExp] = []
    direct = getattr(node, "value", None)
    arguments: list[ast.Name] = []
    reads: set[str] = set()
    attributes: dict[str, set[str]] = {}
    pending: list[tuple[ast.AST, bool, bool]] = [(node, False, False)]  # (node, inside an IfExp, run many times)
    while pending:
        current, inside, many = pending.pop()
        if isinstance(current, ast.Attribute) and isinstance(current.value, ast.Name):
            attributes.setdefault(current.value.id, set()).add(current.attr)
        if isinstance(current, ast.Name):
            reads.add(current.id)
            continue
        many = many or isinstance(current, _MANY_TIMES)
        if isinstance(current, ast.IfExp) and not many:
            ids.add(id(current))
            if not inside and current is not direct and (_device_like(current.body) or _device_like(current.orelse)):
                outermost.append(current)  # (the statement's own value is tagged as it is: no run per way)
            inside = True
        if isinstance(current, ast.Call):
            given = (*current.args, *(k.value for k in current.keywords))
            arguments.extend(a for a in given if isinstance(a, ast.Name))
        pending.extend((child, inside, many) for child in child_nodes(current))
    # (the names read as a tuple, in a set's order: only iterated, and a tuple costs a fifth of a small set,
    # kept on each statement run)
    info = (frozenset(ids), tuple(outermost), tuple(arguments), tuple(frozenset(reads)), attributes)
    node._devicelint_split = info  # type: ignore[attr-defined]
    return info


def _device_keys(value: Value) -> dict[Atom, object] | None:
    """Each possibility's device, when every possibility can carry a tag, they are on two or three devices, and
    possibilities with the same tags (none yet, or one way of an option: ``pick(args.device)`` giving the CPU or
    MPS for ``--device mps``) are on two of them (None otherwise)."""
    out: dict[Atom, object] = {}
    for atom in value.atoms:
        if not taggable(atom):
            return None
        if isinstance(atom, Const) and not (isinstance(atom.value, str) and atom.value.partition(":")[0] in
                                            DEVICE_TYPES):
            return None  # (a flag or another string: not a device)
        key = atom.value if isinstance(atom, Const) else getattr(atom, "dev", None)
        if key is None:
            return None
        out[atom] = key
    if len(set(out.values())) not in (2, 3):
        return None
    ways: dict[frozenset, set[object]] = {}
    for atom, key in out.items():
        ways.setdefault(tags_of(atom), set()).add(key)
    return out if any(len(keys) > 1 for keys in ways.values()) else None


#: words of a flag's name that make handing it to a call worth a run per answer (``use_cuda``, ``on_gpu``)
_FLAG_WORDS = ("cuda", "gpu", "cpu", "dev", "mps", "xpu", "tpu", "accel")
#: words of names and attributes that make a conditional expression's branches worth a run each
_DEVICE_WORDS = ("dev", "cuda", "cpu", "gpu", "mps")


def _device_like(expr: ast.expr) -> bool:
    """Whether a branch of a conditional expression may give a device or move a tensor (a string, a name or
    attribute about devices, a ``.to()``/``.cuda()`` call): the ones worth running a statement once per way."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return True
        word = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if word is not None and (word == "to" or any(w in word.lower() for w in _DEVICE_WORDS)):
            return True
    return False


def _decided_by(value: Value) -> tuple[Choice, bool] | None:
    """The choice whose ways a flag's possibilities are (its way when true), if one is."""
    if value.top or not value.atoms:
        return None
    common: set | None = None
    for atom in value.atoms:
        truth = atom.truthy()
        if truth is None:
            return None
        tags = {(choice, way == truth) for choice, way in tags_of(atom)}  # the way that makes the test true
        common = tags if common is None else common & tags
    if not common:
        return None
    return min(common)


def _test_facts(test: ast.expr) -> tuple[ast.expr, bool, frozenset[str], str] | None:
    """A test without its ``not``s, the way that makes it true, the names it reads and its text (None: not
    a stable test), found once per test (kept on the node)."""
    if hasattr(test, "_devicelint_test"):
        return test._devicelint_test
    facts: tuple[ast.expr, bool, frozenset[str], str] | None = None
    if _stable(test):
        inner, way = test, True
        while isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
            inner, way = inner.operand, not way
        names = frozenset(n.id for n in ast.walk(inner) if isinstance(n, ast.Name))
        facts = (inner, way, names, ast.unparse(inner))
    test._devicelint_test = facts  # type: ignore[attr-defined]
    return facts


def _loops(scope: ast.AST) -> list[tuple[frozenset[int], set[str]]]:
    """The loops of a function or module body: the ids of the nodes in each, and the names each assigns
    (kept on the scope's node)."""
    loops = getattr(scope, "_devicelint_loops", None)
    if loops is None:
        loops = [(frozenset(id(n) for n in ast.walk(loop)), _assigned(loop)) for loop in ast.walk(scope)
                 if isinstance(loop, (ast.For, ast.AsyncFor, ast.While))]
        scope._devicelint_loops = loops  # type: ignore[attr-defined]
    return loops


def _assigned(loop: ast.AST) -> set[str]:
    """The names a loop (its target and body) binds or changes an attribute or element of."""
    out: set[str] = set()
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store):
            base = node.value
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name):
                out.add(base.id)
    return out


def _constant(node: ast.expr) -> bool:
    """A constant, or a tuple of constants (``startswith(("cuda", "gpu"))``)."""
    return isinstance(node, ast.Constant) or (isinstance(node, ast.Tuple)
                                              and all(isinstance(e, ast.Constant) for e in node.elts))


def _stable(test: ast.expr) -> bool:
    """A test that gives the same answer each time it is evaluated while its names hold the same values."""
    for node in ast.walk(test):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name not in STABLE_CALLS or not all(_constant(a) for a in node.args) or (
                    name in KEYED_CALLS and not node.args) or node.keywords:
                return False
        elif isinstance(node, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda, ast.ListComp,
                               ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return False
    return True


def helper_answer(fn: FunctionInfo, bound: dict[str, Value], result: Value) -> Value:
    """What a device helper returned (``get_device()``: CUDA when it is available, else the CPU), as one value
    for the whole run: its possibilities on two or three devices are tagged by device with program-wide
    choices named for the helper and its constant arguments, so every call of it answers the same way
    (``model.to(get_device())`` and, later or in another module, ``x.to(get_device())``). Only for a helper
    whose answer cannot change between calls (:func:`_answers_once`)."""
    if not result.atoms or not _answers_once(fn):
        return result
    arguments = []
    for name in fn.param_names:
        value = bound.get(name)
        if value is None or value.top or len(value.atoms) != 1 or not isinstance(next(iter(value.atoms)), Const):
            if name in _test_names(fn):
                return result  # (a test reads an argument that is not one constant: two calls may differ)
            continue
        arguments.append(f"{name}={next(iter(value.atoms))!r}")
    return _one_answer(result, f"{fn.module.file}:{fn.node.lineno}:{fn.qualname}({', '.join(arguments)})")


def _one_answer(value: Value, name: str) -> Value:
    """``value`` tagged by device as one program-wide value, and the values a namespace it holds carries
    (``SimpleNamespace(device=...)`` a config helper built), each by its place in it."""
    if len(value.atoms) == 1 and hasattr(atom := next(iter(value.atoms)), "map_inner"):
        counter = itertools.count()
        return Value((atom.map_inner(lambda v: _one_answer(v, f"{name}.{next(counter)}")),), value.top)
    if 1 < len(value.atoms) <= MAX_ALTERNATIVES and all(hasattr(a, "map_inner") for a in value.atoms):
        # several namespaces (one per way of the helper's test): the values of each go together
        ordered = sorted(value.atoms, key=repr)
        choices = [program_choice(f"{name}#{j}") for j in range(len(ordered) - 1)]
        ways = [frozenset((c, i == j) for j, c in enumerate(choices)) for i in range(len(ordered))]
        return Value(frozenset(a.map_inner(lambda v, w=w: tagged(v, w))  # type: ignore[attr-defined]
                               for a, w in zip(ordered, ways, strict=True)), value.top)
    keys = _device_keys(value) if len(value.atoms) > 1 else None
    return value if keys is None else by_device(value, keys, name, program_choice)


def _answers_once(fn: FunctionInfo) -> bool:
    """A function whose tests are all stable (:func:`_stable`: availability probes, environment lookups,
    constants), outside loops, that rebinds no global and is not an instance's method (whose answer may
    follow the instance's state: ``next(self.parameters()).device``)."""
    known = getattr(fn.node, "_devicelint_answers_once", None)
    if known is not None:
        return known
    node = fn.node
    answers = not fn.is_generator and not isinstance(node, (ast.Lambda, ast.AsyncFunctionDef)) and (
        fn.cls is None or fn.kind is FunctionKind.STATICMETHOD)
    if answers:
        for inner in ast.walk(node):
            if isinstance(inner, (ast.Global, ast.Nonlocal, ast.For, ast.AsyncFor, ast.While, ast.Yield,
                                  ast.Await, *_MANY_TIMES)) and inner is not node:
                answers = False
                break
            test = getattr(inner, "test", None) if isinstance(inner, (ast.If, ast.IfExp)) else None
            if test is not None and _test_facts(test) is None:
                answers = False
                break
    node._devicelint_answers_once = answers  # type: ignore[union-attr]
    return answers


def _test_names(fn: FunctionInfo) -> frozenset[str]:
    """The names the tests of ``fn`` read (walked once per function: asked per argument of every call)."""
    known = getattr(fn.node, "_devicelint_test_names", None)
    if known is not None:
        return known
    names = frozenset(n.id for inner in ast.walk(fn.node) if isinstance(inner, (ast.If, ast.IfExp))
                      for n in ast.walk(inner.test) if isinstance(n, ast.Name))
    fn.node._devicelint_test_names = names  # type: ignore[union-attr]
    return names
