"""Worlds: the whole analysis once per answer of ``torch.cuda.is_available()`` when a program asks it.

``device = "cuda" if torch.cuda.is_available() else "cpu"`` makes every later
value depend on one answer: a non-relational join of both answers would pair
a CUDA model with a CPU batch (a mismatch no run can reach). So a component that
asks is analysed twice, with the answer fixed, and the facts of both runs are
merged: a fact both worlds agree on is kept once, as it is; a fact that differs
is kept per world, its context naming the world ("... when
torch.cuda.is_available() is True"), so a site that fails in one world only is
a failure on some paths (a warning), in both an error.
"""

from __future__ import annotations

import dataclasses

from ..facts import Context, FactStore, RevealFact, SiteFact
from ..frontend import SourceFile
from .core import Engine

# the questions whose answers split the analysis: is_available() itself, and device_count() (0 without CUDA)
QUESTIONS = (b"cuda.is_available", b"cuda.device_count")
# a library (hundreds of files) asks somewhere, but its values rarely hang on the answer: analysed once
MAX_WORLD_FILES = 40
WORLD_OFFSET = 1 << 32  # context ids of a world's own facts: apart from the shared ones


def run_worlds(sources: list[SourceFile], facts: FactStore, profile: str, backends: frozenset[str] | None,
               project_modules: frozenset[str] | None) -> None:
    """Run the engine over ``sources`` into ``facts`` (once, or once per world)."""
    if len(sources) > MAX_WORLD_FILES or not any(question in s.data for s in sources for question in QUESTIONS):
        engine = Engine(sources, facts, profile, backends, project_modules=project_modules)
        engine.run()
        engine.release()
        return
    parts = []
    for world in (True, False):
        part = FactStore()
        part.expressions = {} if facts.expressions is not None else None
        engine = Engine(sources, part, profile, backends, project_modules=project_modules, cuda_world=world)
        engine.run()
        engine.release()
        parts.append((world, part))
    _merge(parts, facts)


def _signature(fact: SiteFact | RevealFact) -> tuple:
    """What identifies a fact's site and context across the two runs (their context ids differ)."""
    ctx = fact.context
    return (fact.site, ctx.function, ctx.file, ctx.args, ctx.uncalled,
            tuple((c.file, c.line, c.col) for c in ctx.callers))


def _content(fact: SiteFact | RevealFact) -> tuple:
    if isinstance(fact, RevealFact):
        return (frozenset(fact.texts),)
    return (frozenset(fact.possibilities), fact.unknown)


def _merge(parts: list[tuple[bool, FactStore]], into: FactStore) -> None:
    (_first_world, first), (_second_world, second) = parts
    relabelled: dict[tuple[int, bool], Context] = {}

    def labelled(context: Context, world: bool) -> Context:
        key = (id(context), world)
        if key not in relabelled:
            offset = (len(relabelled) + 1) * WORLD_OFFSET
            relabelled[key] = dataclasses.replace(context, id=context.id + offset,
                                                  world=f"torch.cuda.is_available() is {world}")
        return relabelled[key]

    for kind in ("sites", "reveals"):
        ours: dict = getattr(first, kind)
        theirs: dict = getattr(second, kind)
        target: dict = getattr(into, kind)
        index: dict[tuple, list] = {}
        for other in theirs.values():
            index.setdefault((_signature(other), _content(other)), []).append(other)
        matched: set[int] = set()
        for fact in ours.values():
            same = index.get((_signature(fact), _content(fact)))
            if same:
                matched.add(id(same.pop()))
                target[(fact.site, fact.context.id)] = fact  # both worlds agree: one fact, no label
                continue
            fact.context = labelled(fact.context, True)
            target[(fact.site, fact.context.id)] = fact
        for fact in theirs.values():
            if id(fact) in matched:
                continue
            fact.context = labelled(fact.context, False)
            target[(fact.site, fact.context.id)] = fact
    if into.expressions is not None:
        for _world, part in parts:
            for key, texts in (part.expressions or {}).items():
                into.expressions.setdefault(key, set()).update(texts)
