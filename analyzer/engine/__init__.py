"""The abstract interpreter: follows every tensor and device through the program.

Flow-sensitive inside a body (module top level, function, class body):
assignments, unpacking, augmented assignment, branches joined at merge points
with narrowing on the condition (``d.is_autodiff()``, ``t.device().is_autodiff()``,
``d.backend == "Flex"``, ``t.device() == d``, ``x is None``, truthiness; also through a variable
that copied such a value, ``b = t.device().backend`` / ``ad = d.is_autodiff()`` / a walrus),
loops iterated to a fixpoint (widened after a bound), ``break``/``continue``/
``return``, ``try`` (the handlers see the state before and after every
statement of the body), ``with``, conditional expressions, the walrus,
comprehensions (element-wise over short sequences of known length, e.g. ``range(3)``; dict
comprehensions as dicts) and lambdas; a generator function's call gives what it yields.

Interprocedural: a call to a function of the analysed project is analysed once
per *calling context* (the tuple of argument values, the closure, the module
globals it reads, the open capture scopes and the profile) and summarised by
its return value; the facts at sites inside are recorded under that context.
Recursion and depth are bounded. Instances are abstracted per allocation site
and context; their attributes live in a heap (weak updates; flow-sensitive
overlays inside one body, carried through calls by ``attr_flow``) which is iterated to a
fixpoint over whole passes. A method analysed for many receivers at once joins only receivers
placed alike (``sweep_groups``).

Every runtime_shim call is evaluated by :mod:`analyzer.lift` (the semantics
table) and recorded as a fact (:mod:`analyzer.facts`).

Modules (each a mixin of :class:`Engine`, or a leaf the mixins share):

* ``core``: the driver (whole-program passes, uncalled functions) and calling contexts;
* ``modules``: loading project modules and resolving imports;
* ``statements``, ``control_flow``, ``assignment``, ``definitions``: statements;
* ``narrowing``: branch conditions and what they say about devices and tensors;
* ``expressions``, ``attributes``: expressions;
* ``calls``, ``instances``, ``builtins``: calls of project functions, classes and builtins;
* ``shim_calls``: runtime_shim calls, evaluated by :mod:`analyzer.lift`;
* ``models``: the hooks through which the library models of :mod:`analyzer.models` are reached;
* leaves: ``limits``, ``program``, ``flow_state``, ``attr_flow``, ``python_values``, ``dispatch_helpers``,
  ``sweep_groups``.
"""

from typing import Any

__all__ = ["Engine", "FunctionInfo", "ClassInfo", "ModuleInfo", "State", "join_states"]


def __getattr__(name: str) -> Any:
    # lazy: the library models import the engine's leaf modules (flow_state, program), and the core imports
    # the models' registry; importing the package must not start that cycle
    if name == "Engine":
        from .core import Engine
        return Engine
    if name in ("State", "join_states"):
        from . import flow_state
        return getattr(flow_state, name)
    if name in ("FunctionInfo", "ClassInfo", "ModuleInfo"):
        from . import program
        return getattr(program, name)
    raise AttributeError(name)
