"""The worlds of one component as separate work items (:mod:`analyzer.scheduler`'s pool).

A component of a program is analysed once per world (:mod:`analyzer.engine.worlds`), each run independent of
the others. When one component is most of the work (one training project: six worlds, one engine each), the
scheduler makes each of its worlds a work item: a worker runs that world's engine (:func:`run_world_item`)
and sends back its facts and what its budget counted (:class:`WorldOutcome`), never the engine; the parent
merges the worlds' facts in the order one process would (:func:`~analyzer.engine.worlds.assemble`) and runs
the rules (:func:`component_from_worlds`). The diagnostics are those of the component analysed in one process:

* the facts are the same (each world's budget checks restart with its run: :meth:`Budget.new_world`), merged
  in the same order, so the rules see the same store;
* the component's budgets mean the same: the statements are counted over every world as if the worlds had
  run one after another (a world's run stops at the component's budget, or would have, given the statements
  of the worlds before it), wall time is summed over the worlds, memory is what the analysing process grows
  by (the worker's); the first world, in that order, that stops or fails decides the component's note or
  MV903, as one process would have stopped there.
"""

from __future__ import annotations

import gc
import pickle
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import frontend
from .budget import Limits, OverBudget, budgeted, seconds_reason, steps_reason
from .diagnostics import Diagnostic

if TYPE_CHECKING:
    from .facts import FactStore

# a component is split into its worlds from this size (its files' bytes, as the scheduler counts them): a
# world's engine run on a smaller one takes less than a worker's start and the facts' transfer
MIN_SPLIT_COST = 48_000


@dataclass
class WorldOutcome:
    """What a worker sends back for one world: its facts (None: it stopped or failed) and its budget's count."""

    facts: bytes | None  # pickled here, where a deep chain of calling contexts may nest past the default limit
    checked: int = 0  # the statements counted at the budget's last check in this world
    ticked: int = 0  # every statement analysed in this world
    seconds: float = 0.0
    stopped: list[tuple[str, int, str]] = field(default_factory=list)  # functions stopped at their budget
    over: str | None = None  # the budget it stopped at (its reason)
    out_of_memory: bool = False
    failed: list[Diagnostic] | None = None  # the MV903 (and the traceback's note) of an exception


def world_count(sources: list[frontend.SourceFile], target: str) -> int:
    """How many engine runs (worlds) the component of ``sources`` is analysed in."""
    from .engine.worlds import plan_worlds

    return len(plan_worlds(sources, target).leaves())


def splits(costs: list[int], jobs: int, count: Callable[[int], int]) -> list[int]:
    """Into how many items each component goes (``count(n)``: the ``n``-th one's worlds; 1: not split). A
    component is split into its worlds when it is large enough to pay for it and larger than a worker's share
    of the whole (alone in one worker, it would leave the others idle); a run of many small components keeps
    one item per component."""
    total = sum(costs)
    return [count(n) if cost >= MIN_SPLIT_COST and cost * jobs > total else 1 for n, cost in enumerate(costs)]


def run_world_item(sources: list[frontend.SourceFile], world: int, project_modules: frozenset[str], profile: str,
                   backends: frozenset[str] | None, limits: Limits | None, target: str) -> WorldOutcome:
    """In a worker: the ``world``-th engine run of the component of ``sources`` (as :func:`run_worlds` orders
    them), its facts and its budget's count; a stop or an exception is reported, never raised."""
    from .engine.worlds import plan_worlds, run_world
    from .scheduler import deep_recursion, failed_component, prepared

    parsed = prepared(sources)
    assumptions = plan_worlds(parsed, target).leaves()[world]
    store = _store()
    outcome = WorldOutcome(None)
    started = time.monotonic()
    with budgeted(limits) as budget:
        try:
            with deep_recursion():
                run_world(parsed, store, profile, backends, project_modules, assumptions)
                outcome.facts = pickle.dumps(_shipped(store), protocol=pickle.HIGHEST_PROTOCOL)
        except OverBudget as error:
            outcome.over = error.reason
        except MemoryError:
            store = _store()
            gc.collect()
            outcome.out_of_memory = True
        except Exception as error:  # noqa: BLE001 - every bug becomes MV903 on the component, never a lost run
            outcome.failed = failed_component(sources, error)
    outcome.seconds = time.monotonic() - started
    outcome.checked, outcome.ticked, outcome.stopped = budget.steps, budget.ticked, list(budget.stopped)
    return outcome


def _shipped(store: FactStore) -> FactStore:
    """The facts as the parent needs them: each site's operand values, joined over the engine's visits, are
    the engine's working state (no rule reads them) and two thirds of what would travel."""
    for fact in store.sites.values():
        fact.operands = {}
    return store


def _store() -> FactStore:
    from .facts import FactStore

    return FactStore()  # as a world's part in one process (worlds._store_like): no expressions asked


def component_from_worlds(sources: list[frontend.SourceFile], outcomes: list[WorldOutcome], profile: str,
                          limits: Limits | None, target: str) -> list[Diagnostic]:
    """In the parent: the component's diagnostics from its worlds' outcomes, as
    :func:`~analyzer.scheduler.analyze_component` would give them in one process."""
    from .scheduler import guarded

    return guarded(sources, lambda: _from_worlds(sources, outcomes, profile, limits, target))


def _from_worlds(sources: list[frontend.SourceFile], outcomes: list[WorldOutcome], profile: str,
                 limits: Limits | None, target: str) -> list[Diagnostic]:
    from .engine.worlds import adopt, assemble, plan_worlds
    from .scheduler import AnalysisError, component_diagnostics, deep_recursion, new_facts, prepared

    steps, seconds = 0, 0.0
    stopped: list[tuple[str, int, str]] = []
    for outcome in outcomes:  # the worlds one after another, as one process runs them
        if limits is not None and limits.steps is not None and steps + outcome.checked > limits.steps:
            raise OverBudget(steps_reason(limits.steps))  # one process would have stopped in this world
        if outcome.over is not None:
            raise OverBudget(outcome.over)
        if outcome.out_of_memory:
            raise MemoryError
        if outcome.failed is not None:
            return outcome.failed
        steps += outcome.ticked
        seconds += outcome.seconds
        if limits is not None and limits.seconds is not None and seconds > limits.seconds:
            raise OverBudget(seconds_reason(limits.seconds))
        stopped.extend(outcome.stopped)
    parsed = prepared(sources)
    plan = plan_worlds(parsed, target)
    if len(plan.leaves()) != len(outcomes):
        raise AnalysisError(f"{len(outcomes)} worlds analysed of {len(plan.leaves())}")
    facts = new_facts(profile, target, expressions=False)
    found = iter(outcomes)

    def leaf(_assumptions: object, into: FactStore) -> None:
        part = next(found).facts
        assert part is not None
        adopt(into, pickle.loads(part))

    with deep_recursion():
        assemble(plan, leaf, facts)
    return component_diagnostics(sources, parsed, facts, stopped)
