"""The base of the engine's mixins (:class:`~analyzer.engine.core.Engine` is their union).

A mixin reaches the other mixins' methods and the engine's state through ``self``, which only the assembled
engine has. To the type checker (only: nothing changes at run time) an attribute a mixin does not define itself
is therefore of any type; everything else about it, and every other object's attributes, stays checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any


class EngineMixin:
    # the engine's counters that mixins update in place (``self.depth += 1``): set in Engine.__init__
    # (module_loads: in PassReuse.init_reuse)
    function_runs: int
    depth: int
    catching: int
    module_code_depth: int
    module_stores: int
    mutations: int
    unrolled_runs: int
    module_loads: int
    # the ways of the command-line options the statement running now was split on (``program_ways``), and that
    # its path took (``path_ways``): set by the relational mixin, read by the heap and attribute ones
    program_ways: frozenset
    path_ways: frozenset

    if TYPE_CHECKING:
        def __getattr__(self, name: str) -> Any: ...
