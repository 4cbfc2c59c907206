"""Bounds that keep the analysis finite (loops, call depth, contexts, value sizes)."""

from __future__ import annotations

from ..domain import MAX_ATOMS as MAX_ATOMS  # a value with more possibilities is made small (domain.bounded)

MAX_LOOP_ITERATIONS = 12  # a loop that has not converged by then is cut (its changing names become unknown)

WIDEN_AFTER = 4  # iterations before names that keep changing are widened to unknown

MAX_CALL_DEPTH = 24

MAX_CONTEXTS_PER_FUNCTION = 24  # beyond this, a function is analysed with unknown arguments

MAX_PASSES = 4  # whole-program passes while the heap of instance attributes grows

MAX_DEPTH = 6  # lists of lists of ... deeper than this are widened to unknown

MAX_RECURSION_ROUNDS = 6  # re-analyses of a recursive context until its result is stable


# comprehensions over a sequence of known length up to this many items are evaluated element-wise
# (``[Device.cuda(i) for i in range(2)]``), and ``range(n)`` with a constant n up to it has a known length
MAX_UNROLL = 16
#: the most sequences of known length a comprehension's iterable may be one of and still be unrolled for each
MAX_WAYS_UNROLLED = 4
# loops over known elements run each iteration in turn while the runs of a body, nested loops multiplied, stay
# within this (``for i in range(3)`` thirty deep would be 3**30 runs: the inner ones reach a fixpoint instead)
MAX_UNROLLED_RUNS = 64

# Context-sensitive analyses per pass, per function of the component (beyond that a call's result is unknown and
# the function is analysed once with unknown arguments): large libraries stay linear, small programs never reach it.
RUNS_PER_FUNCTION = 2
MIN_RUN_BUDGET = 400

MAX_DICT_KEYS = 64  # a dict with more constant keys keeps its values, not which key holds which

MAX_SWEPT_INSTANCES = 8  # an uncalled method runs once per instance of its class up to this many, else per group
# of instances placed alike (:mod:`sweep_groups`), and on their join only where the groups are more than this

MAX_GETATTR_NAMES = 8  # ``getattr(obj, name)`` with more possible names than this: unknown
