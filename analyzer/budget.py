"""Work budgets of one component's analysis: statements run, wall time, and memory grown.

Every bound of :mod:`.limits` keeps one construct finite; these keep their product finite. The engine ticks the
active budget once per statement it runs (:meth:`Budget.tick`); every :data:`CHECK_EVERY` ticks the clock and the
process's resident memory are read. Past a limit :class:`OverBudget` (or a ``MemoryError`` of the interpreter)
ends the component's analysis: the runner reports nothing for its files (unknown, as for any state the analysis
cannot follow) and leaves a note (``devicelint check --verbose``), never failing the run. One function's run
past its own budget (:class:`FunctionOverBudget`) only makes that run's result unknown and drops its facts.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass

CHECK_EVERY = 2048  # statements between two reads of the clock and of the process's memory

MIB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """The most one component's analysis may take (``None``: no limit)."""

    steps: int | None = 3_000_000  # statements run, over every world and pass
    seconds: float | None = 120.0  # wall time
    memory: int | None = 1 << 30  # bytes the process grows by (``max-worker-memory``)
    # statements one run of a function in one calling context may take, what it calls included: past it
    # that run's result is unknown and its facts are dropped (the rest of the component goes on)
    function_steps: int | None = 400_000


class FunctionOverBudget(Exception):
    """One function's run (calling context ``ctx_id``) reached :attr:`Limits.function_steps`."""

    def __init__(self, ctx_id: int) -> None:
        super().__init__(ctx_id)
        self.ctx_id = ctx_id


class OverBudget(Exception):
    """A component's analysis reached a limit (``reason`` says which)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def steps_reason(steps: int) -> str:
    return f"more than {steps:,} statements analysed"


def seconds_reason(seconds: float) -> str:
    return f"more than {seconds:g} s"


def resident_bytes() -> int:
    """The process's resident memory now (Linux); elsewhere its peak, which only errs towards stopping early."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


class Budget:
    """The budget of the component being analysed in this thread."""

    __slots__ = ("limits", "steps", "left", "started", "baseline", "runs", "stopped")

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.steps = 0
        self.left = CHECK_EVERY
        self.started = time.monotonic()
        self.baseline = resident_bytes() if limits.memory is not None else 0
        self.runs: list[list[int]] = []  # [context id, statements when its run began] of the runs in progress
        self.stopped: list[tuple[str, int, str]] = []  # (file, line, function) of the runs stopped at their budget

    def enter(self, ctx_id: int) -> None:
        """A function's run in context ``ctx_id`` begins (its statements count against its budget too)."""
        self.runs.append([ctx_id, self.steps + CHECK_EVERY - self.left])

    def leave(self) -> None:
        self.runs.pop()

    def new_world(self) -> None:
        """An engine run of one world begins: what was ticked since the last check is counted, and the next
        check is :data:`CHECK_EVERY` statements into this run (where it would be in a run alone)."""
        self.steps += CHECK_EVERY - self.left
        self.left = CHECK_EVERY

    @property
    def ticked(self) -> int:
        """The statements analysed so far (those since the last check too)."""
        return self.steps + CHECK_EVERY - self.left

    def tick(self) -> None:
        self.left -= 1
        if self.left <= 0:
            self.check()

    def check(self) -> None:
        self.steps += CHECK_EVERY - self.left
        self.left = CHECK_EVERY
        limits = self.limits
        if limits.steps is not None and self.steps > limits.steps:
            raise OverBudget(steps_reason(limits.steps))
        if limits.seconds is not None and time.monotonic() - self.started > limits.seconds:
            raise OverBudget(seconds_reason(limits.seconds))
        if limits.memory is not None:
            grown = resident_bytes() - self.baseline
            if grown > limits.memory:
                raise OverBudget(f"more than {limits.memory / MIB:g} MiB of memory")
        if limits.function_steps is not None and self.runs:
            # the innermost run over its budget is the one stopped; the runs around it start counting afresh (else
            # each would be stopped in turn, up to the outermost)
            for index in range(len(self.runs) - 1, -1, -1):
                ctx_id, began = self.runs[index]
                if self.steps - began > limits.function_steps:
                    for run in self.runs[:index]:
                        run[1] = self.steps
                    raise FunctionOverBudget(ctx_id)


class _Unlimited(Budget):
    """No component is being analysed under a budget (an engine run directly, as tests do)."""

    def tick(self) -> None:
        return None

    def enter(self, ctx_id: int) -> None:
        return None

    def leave(self) -> None:
        return None

    def new_world(self) -> None:
        return None


_UNLIMITED = _Unlimited(Limits(None, None, None, None))
_local = threading.local()


def active() -> Budget:
    """The budget the engine running in this thread ticks."""
    return getattr(_local, "budget", _UNLIMITED)


class budgeted:
    """``with budgeted(limits):`` the engine's work in this thread counts against a new budget."""

    def __init__(self, limits: Limits | None) -> None:
        self.budget = Budget(limits) if limits is not None else _UNLIMITED
        self.saved: Budget | None = None

    def __enter__(self) -> Budget:
        self.saved = active()
        _local.budget = self.budget
        return self.budget

    def __exit__(self, *exc: object) -> None:
        _local.budget = self.saved
