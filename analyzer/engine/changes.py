"""What the running pass changed that a later evaluation could read: one owner for the counters the engine's
parts bump (the heap, module and class namespaces, a module loaded, the havoc sets, a model's own stores)."""

from __future__ import annotations


class PassChanges:
    """``count``: changes so far (a loop whose iteration changed none can stop early); ``stale``: something
    read in this pass changed after the read (the pass must run again); ``havoc_grew``: a havoc set grew in
    this pass (the heap alone does not show it)."""

    __slots__ = ("count", "havoc_grew", "stale")

    def __init__(self) -> None:
        self.count = 0
        self.stale = False
        self.havoc_grew = False

    def begin_pass(self) -> None:
        self.stale = False
        self.havoc_grew = False

    def changed(self) -> None:
        self.count += 1

    def read_went_stale(self) -> None:
        """A value read in this pass changed since (or will read otherwise in the next)."""
        self.stale = True

    def havoc(self) -> None:
        """A havoc set grew: its attributes read unknown from now on."""
        self.havoc_grew = True
        self.count += 1
