"""Worlds: the whole analysis once per answer of ``torch.cuda.is_available()`` when a program asks it.

A program that also asks ``torch.backends.mps.is_available()`` gets a third world, a machine with MPS and
no CUDA ("... when MPS is available"), where the device choices are MPS's.

``device = "cuda" if torch.cuda.is_available() else "cpu"`` makes every later
value depend on one answer: a non-relational join of both answers would pair
a CUDA model with a CPU batch (a mismatch no run can reach). So a component that
asks is analysed twice, with the answer fixed, and the facts of both runs are
merged: a fact both worlds agree on is kept once, as it is; a fact that differs
is kept per world, its context naming the world ("... when CUDA is available"),
so a site that fails in one world only is a failure on some paths (a warning),
in both an error. A named target device (``target-device``) runs its world only.

A program that asks ``torch.cuda.device_count()`` picks devices by it (``"cuda:1" if
torch.cuda.device_count() > 1 else "cuda:0"``): the CUDA world is then split in two, one GPU and
several, so that a model and its batches placed by the same answer are not paired across answers
either. (A program that parses its command line is split once more, around these worlds: with no
options and with options given, :mod:`.argparse_model`.) "Several" is analysed as two GPUs
(``cuda:0`` and ``cuda:1``): the count programs compare
against and the devices they pick by it; branches for three or more GPUs are not followed.
"""

from __future__ import annotations

import dataclasses

from ..facts import Context, FactStore, RevealFact, SiteFact
from ..frontend import SourceFile
from ..models.argparse_model import DEFAULTS_WORLD, GIVEN_WORLD
from ..models.entry_points import CLI_QUESTIONS, FRAMEWORK_QUESTIONS
from .core import Engine

# the questions whose answers split the analysis: is_available() itself, and device_count() (0 without CUDA)
MPS_QUESTION = b"mps.is_available"
QUESTIONS = (b"cuda.is_available", b"cuda.device_count", MPS_QUESTION, *FRAMEWORK_QUESTIONS)
# a library (hundreds of files) asks somewhere, but its values rarely hang on the answer: analysed once
MAX_WORLD_FILES = 40
WORLD_OFFSET = 1 << 32  # context ids of a world's own facts: apart from the shared ones
ARGPARSE_OFFSET = 1 << 48  # the same for the argparse split, around the CUDA one: apart from both
#: a program that parses its command line is analysed with no options and with options given (:mod:`.argparse_model`)
ARGPARSE_QUESTIONS = (b"parse_args", b"parse_known_args", b"parse_intermixed_args", *CLI_QUESTIONS)
COUNT_QUESTION = b"cuda.device_count"
# (is_available(), device_count() or None where not asked, the assumption named in a diagnostic, in a few words)
CUDA_WORLD = "CUDA is available"
CPU_WORLD = "CUDA is not available"
# (what torch.cuda.is_available() answers, what torch.cuda.device_count() answers, the world's name); None: either
World = tuple[bool | None, int | None, str]
WORLDS: tuple[World, ...] = ((True, None, CUDA_WORLD), (False, 0, CPU_WORLD))
WORLDS_BY_COUNT: tuple[World, ...] = ((True, 1, "one GPU is available"), (True, 2, "several GPUs are available"),
                                      (False, 0, CPU_WORLD))
#: a program that asks ``torch.backends.mps.is_available()`` runs on a Mac too: no CUDA, and MPS (its answer is
#: False in the other worlds)
MPS_WORLD: World = (False, 0, "MPS is available")
NO_ACCELERATOR_WORLD = "neither CUDA nor MPS is available"


def run_worlds(sources: list[SourceFile], facts: FactStore, profile: str, backends: frozenset[str] | None,
               project_modules: frozenset[str] | None, target: str = "auto") -> None:
    """Run the engine over ``sources`` into ``facts`` (once, or once per world). ``target`` (``cuda``/``cpu``,
    the ``target-device`` setting) fixes the answer of ``torch.cuda.is_available()``: that world only."""
    small = len(sources) <= MAX_WORLD_FILES
    if not (small and any(question in s.data for s in sources for question in ARGPARSE_QUESTIONS)):
        _run_cuda_worlds(sources, facts, profile, backends, project_modules, None, target)
        return
    parts = []
    for defaults, label in ((True, DEFAULTS_WORLD), (False, GIVEN_WORLD)):
        part = _store_like(facts)
        _run_cuda_worlds(sources, part, profile, backends, project_modules, defaults, target)
        parts.append((label, part))
    # with options given, what the defaults fix is unknown: a site failing with the defaults and not seen failing
    # or passing with options (its operands unknown there) may pass there (a warning that names the defaults)
    _merge(parts, facts, offset=ARGPARSE_OFFSET, unseen_unknown=True)


def _store_like(facts: FactStore) -> FactStore:
    part = FactStore()
    part.expressions = {} if facts.expressions is not None else None
    return part


def _run_cuda_worlds(sources: list[SourceFile], facts: FactStore, profile: str, backends: frozenset[str] | None,
                     project_modules: frozenset[str] | None, argparse_defaults: bool | None,
                     target: str = "auto") -> None:
    counts = any(COUNT_QUESTION in s.data for s in sources)
    worlds = WORLDS_BY_COUNT if counts else WORLDS
    mps = any(MPS_QUESTION in s.data for s in sources)
    if mps and target == "auto":  # the CPU world is then a machine with neither
        worlds = (*((c, g, NO_ACCELERATOR_WORLD if label == CPU_WORLD else label) for c, g, label in worlds),
                  MPS_WORLD)
    if target != "auto":  # the machine is named: its world only (several GPUs or one are still both CUDA)
        worlds = tuple(w for w in worlds if w[0] == (target == "cuda"))
        if len(sources) > MAX_WORLD_FILES:
            worlds = worlds[:1]
    elif len(sources) > MAX_WORLD_FILES or not any(question in s.data for s in sources for question in QUESTIONS):
        worlds = ((None, None, ""),)
    if len(worlds) == 1:  # one run: its facts are the program's, no world to name
        cuda_world, gpus, _label = worlds[0]
        engine = Engine(sources, facts, profile, backends, project_modules=project_modules, cuda_world=cuda_world,
                        gpu_count=gpus, argparse_defaults=argparse_defaults,
                        mps_world=False if mps and cuda_world is not None else None)
        engine.run()
        engine.release()
        return
    parts = []
    for world, gpus, label in worlds:
        part = _store_like(facts)
        engine = Engine(sources, part, profile, backends, project_modules=project_modules, cuda_world=world,
                        gpu_count=gpus, argparse_defaults=argparse_defaults,
                        mps_world=(label == MPS_WORLD[2]) if mps else None)
        engine.run()
        engine.release()
        parts.append((label, part))
    _merge(parts, facts)


def _signature(fact: SiteFact | RevealFact) -> tuple:
    """What identifies a fact's site and context across the two runs (their context ids differ)."""
    ctx = fact.context
    return (fact.site, ctx.function, ctx.file, ctx.args, ctx.uncalled, ctx.world,
            tuple((c.file, c.line, c.col) for c in ctx.callers))


def _content(fact: SiteFact | RevealFact) -> tuple:
    if isinstance(fact, RevealFact):
        return (frozenset(fact.texts),)
    return (frozenset(fact.possibilities), fact.unknown, fact.real, fact.passed_past_failure)


def _merge(parts: list[tuple[str, FactStore]], into: FactStore, offset: int = WORLD_OFFSET,
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
                                                  conditions=(*context.conditions, world))
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
                matched.update(id(index[key].pop()) for index in indexes)
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
