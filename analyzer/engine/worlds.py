"""Worlds: the whole analysis once per answer of a library's question when a program asks it.

The models declare the questions (:class:`..models.base.WorldAxis`: torch's ``torch.cuda.is_available()``,
argparse's command line with no options or some). ``device = "cuda" if torch.cuda.is_available() else
"cpu"`` makes every later value depend on one answer: a non-relational join of both answers would pair a
CUDA model with a CPU batch (a mismatch no run can reach). So a component that asks is analysed once per
world, its answers fixed (the models read them: ``LibraryModel.assumption``), and the facts of the runs are
merged: a fact every world agrees on is kept once, as it is; a fact that differs is kept per world, its
context naming the world ("... when CUDA is available"), so a site that fails in some worlds only is a
failure on some paths (a warning), in all an error.

Each axis a program asks splits the runs of the axes after it: the outer ones first (a command line, around
the CUDA worlds), then in the models' registration order. A named ``target-device`` keeps the worlds of an
axis that names it (:attr:`..models.base.World.target`), and of an asked axis with a world every machine
keeps (the command line with no options), that world; it names no world.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..budget import active as active_budget
from ..facts import Context, FactStore, RevealFact, SiteFact, keep_earliest
from ..frontend import SourceFile
from ..models.base import ANY_TARGET, Assumption, LibraryModel, World, WorldAxis
from ..models.registry import default_models
from .core import Engine

# a library (hundreds of files) asks somewhere, but its values rarely hang on the answer: analysed once
MAX_WORLD_FILES = 40
# context ids of a world's own facts, apart from the shared ones: the innermost axis shifts them by this, each
# axis around it by 16 bits more (a world's facts are apart from those of the worlds it is inside)
WORLD_OFFSET = 1 << 32
AXIS_SHIFT = 16
#: the world of an axis not split: nothing assumed, nothing named
UNSPLIT = World("", {})

Assumptions = Mapping[Assumption[Any], object]


def world_axes(models: Sequence[type[LibraryModel]]) -> list[tuple[WorldAxis, tuple[bytes, ...]]]:
    """The models' axes, outer ones first, each with every question that asks it (its own, other models')."""
    extra: dict[str, list[bytes]] = {}
    for model in models:
        for asks in model.axis_questions:
            extra.setdefault(asks.axis, []).extend(asks.questions)
    axes = sorted((axis for model in models for axis in model.world_axes), key=lambda axis: not axis.outer)
    return [(axis, (*axis.questions, *extra.get(axis.name, ()))) for axis in axes]


def axis_worlds(axis: WorldAxis, questions: tuple[bytes, ...], asked: Callable[[bytes], bool], small: bool,
                target: str) -> tuple[World, ...]:
    """The worlds ``axis`` splits a component into (:data:`UNSPLIT` alone: none)."""
    worlds = axis.worlds
    for refinement in axis.refinements:
        if asked(refinement.question):
            worlds = tuple(split for world in worlds for split in (
                refinement.into if world.label == refinement.splits
                else (dataclasses.replace(world, assumptions={**world.assumptions, **refinement.elsewhere}),)))
    named = tuple(world for world in worlds if world.target and world.target == target)
    if named:  # the machine is named: its worlds only, in any component, asked or not
        return named if small else named[:1]
    if small and any(asked(question) for question in questions):
        if target not in ("auto", ANY_TARGET):  # the machine is named: the run it names on this axis, if any
            return tuple(world for world in worlds if world.target == ANY_TARGET)[:1] or worlds
        return worlds
    return (UNSPLIT,)


@dataclasses.dataclass(frozen=True)
class WorldPlan:
    """The worlds a component is analysed in: each axis with the worlds it splits it into, outer axes first."""

    splits: tuple[tuple[WorldAxis, tuple[World, ...]], ...]

    def leaves(self) -> list[Assumptions]:
        """Each engine run's assumptions, in the order the runs are made and merged (the outer axes' worlds
        vary slowest)."""
        found: list[Assumptions] = [{}]
        for _axis, worlds in self.splits:
            found = [{**assumptions, **world.assumptions} for assumptions in found for world in worlds]
        return found


def plan_worlds(sources: list[SourceFile], target: str = "auto",
                models: Sequence[type[LibraryModel]] | None = None) -> WorldPlan:
    """The worlds :func:`run_worlds` analyses ``sources`` in (read from their bytes: no engine runs)."""
    models = default_models() if models is None else models
    answers: dict[bytes, bool] = {}

    def asked(question: bytes) -> bool:
        if question not in answers:
            answers[question] = any(question in s.data for s in sources)
        return answers[question]

    small = len(sources) <= MAX_WORLD_FILES
    return WorldPlan(tuple((axis, axis_worlds(axis, questions, asked, small, target))
                           for axis, questions in world_axes(models)))


def run_world(sources: list[SourceFile], into: FactStore, profile: str, backends: frozenset[str] | None,
              project_modules: frozenset[str] | None, assumptions: Assumptions,
              models: Sequence[type[LibraryModel]] | None = None) -> None:
    """One engine run (one world) over ``sources`` into ``into``. The budget's checks restart with it, so a
    world's run is the same whether it follows others in this process or runs alone in another."""
    active_budget().new_world()
    engine = Engine(sources, into, profile, backends, project_modules=project_modules, assumptions=assumptions,
                    models=default_models() if models is None else models)
    engine.run()
    engine.release()


#: fills a store with one world's facts (its assumptions, the store)
Leaf = Callable[[Assumptions, FactStore], None]


def assemble(plan: WorldPlan, leaf: Leaf, into: FactStore) -> None:
    """The facts of every world of ``plan`` into ``into``: ``leaf`` fills a store per world, in the order of
    :meth:`WorldPlan.leaves`, and each split's worlds are merged as soon as they are all there."""

    def run(splits: tuple[tuple[WorldAxis, tuple[World, ...]], ...], assumptions: Assumptions,
            into: FactStore) -> None:
        if not splits:
            leaf(assumptions, into)
            return
        (axis, worlds), inner = splits[0], splits[1:]
        if len(worlds) == 1:  # one run: its facts are the program's, no world to name
            run(inner, {**assumptions, **worlds[0].assumptions}, into)
            return
        parts = []
        for world in worlds:
            part = _store_like(into)
            run(inner, {**assumptions, **world.assumptions}, part)
            parts.append((world.label, part))
        # an outer split: what it fixes may be unknown in its other worlds, where a site reached with unknown
        # operands has no fact (a site failing in the first world only and unseen elsewhere may pass there)
        _merge(parts, into, axis.name, offset=WORLD_OFFSET << (AXIS_SHIFT * len(inner)), unseen_unknown=axis.outer)

    run(plan.splits, {}, into)


def run_worlds(sources: list[SourceFile], facts: FactStore, profile: str, backends: frozenset[str] | None,
               project_modules: frozenset[str] | None, target: str = "auto",
               models: Sequence[type[LibraryModel]] | None = None) -> None:
    """Run the engine over ``sources`` into ``facts`` (once, or once per world), one world after another.
    ``target`` (``cuda``/``cpu``, the ``target-device`` setting) keeps the worlds that name it. ``models``: the
    registered ones (None). The scheduler may run the worlds in worker processes instead
    (:func:`run_world` there, :func:`assemble` here)."""
    models = default_models() if models is None else models

    def leaf(assumptions: Assumptions, into: FactStore) -> None:
        run_world(sources, into, profile, backends, project_modules, assumptions, models)

    assemble(plan_worlds(sources, target, models), leaf, facts)


def adopt(into: FactStore, part: FactStore) -> None:
    """A world's facts, found in another process, as if its engine had recorded them into ``into``."""
    into.sites.update(part.sites)
    into.reveals.update(part.reveals)
    for file, spans in part.function_spans.items():
        into.function_spans.setdefault(file, []).extend(spans)
    if into.expressions is not None and part.expressions:
        for span, texts in part.expressions.items():
            into.expressions.setdefault(span, set()).update(texts)


def _store_like(facts: FactStore) -> FactStore:
    part = FactStore()
    part.expressions = {} if facts.expressions is not None else None
    return part


def _signature(fact: SiteFact | RevealFact) -> tuple:
    """What identifies a fact's site and context across the two runs (their context ids differ)."""
    ctx = fact.context
    return (fact.site, ctx.function, ctx.file, ctx.args, ctx.uncalled, ctx.world,
            tuple((c.file, c.line, c.col) for c in ctx.callers))


def _content(fact: SiteFact | RevealFact) -> tuple:
    if isinstance(fact, RevealFact):
        return (frozenset(fact.texts),)
    return (frozenset(fact.possibilities), fact.unknown, fact.real, fact.passed_past_failure)


def _merge(parts: list[tuple[str, FactStore]], into: FactStore, split: str, offset: int = WORLD_OFFSET,
           unseen_unknown: bool = False) -> None:
    """The worlds' facts in one store: a fact every world has alike once, as it is; the others once per world,
    their contexts naming it (after the world they already name, for a split inside another). With
    ``unseen_unknown``, a fact of the first world whose site and context the others have no fact for is
    partly unknown (the others reached it with unknown operands, or not at all)."""
    relabelled: dict[tuple[int, str], Context] = {}

    def labelled(context: Context, world: str) -> Context:
        key = (id(context), world)
        if key not in relabelled:
            shift = (len(relabelled) + 1) * offset
            named = f"{context.world} and {world}" if context.world else world
            relabelled[key] = dataclasses.replace(context, id=context.id + shift, world=named,
                                                  conditions=(*context.conditions, world),
                                                  splits=(*context.splits, split))
        return relabelled[key]

    (first_world, first), others = parts[0], parts[1:]
    for kind in ("sites", "reveals"):
        target: dict = getattr(into, kind)
        indexes: list[dict[tuple, list]] = []
        for _world, part in others:
            index: dict[tuple, list] = {}
            for other in getattr(part, kind).values():
                index.setdefault((_signature(other), _content(other)), []).append(other)
            indexes.append(index)
        matched: set[int] = set()
        seen = {signature for index in indexes for signature, _content in index} if unseen_unknown else set()
        for fact in getattr(first, kind).values():
            key = (_signature(fact), _content(fact))
            if all(index.get(key) for index in indexes):
                twins = [index[key].pop() for index in indexes]
                matched.update(id(twin) for twin in twins)
                if kind == "sites":  # (alike but for where operands came from: the earliest, whichever world)
                    for twin in twins:
                        for possibility in twin.possibilities:
                            keep_earliest(fact.possibilities, possibility)
                target[(fact.site, fact.context.id)] = fact  # every world agrees: one fact, no label
                continue
            if unseen_unknown and kind == "sites" and key[0] not in seen:
                fact.unknown = True
            fact.context = labelled(fact.context, first_world)
            target[(fact.site, fact.context.id)] = fact
        for world, part in others:
            for fact in getattr(part, kind).values():
                if id(fact) in matched:
                    continue
                fact.context = labelled(fact.context, world)
                target[(fact.site, fact.context.id)] = fact
    for _world, part in parts:
        for file, spans in part.function_spans.items():
            into.function_spans[file] = sorted({*into.function_spans.get(file, ()), *spans})
    if into.expressions is not None:
        for _world, part in parts:
            for span, texts in (part.expressions or {}).items():
                into.expressions.setdefault(span, set()).update(texts)
