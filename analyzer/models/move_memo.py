"""Module copies that a move would leave as they are: ``model.to(device)`` again on a model nothing changed.

Moving a project module copies each of its attributes onto its moved twin (its sub-modules' too, recursively),
joined with what the twin held. A program moves the same model in many calling contexts and every pass runs
them again (a factory's ``model.to(device)``, a training script's ``main``), and most of those moves find the
module, its sub-modules and the twins exactly as the previous move of the same instance to the same device
left them: the copy changes nothing. Such a move is kept here (:class:`MoveMemo`), with what it read; the next
move of that instance to that device, under the same ways of the statement's choices, is a replay of its reads
if every one of them is still the same object (the heap replaces a value that changes, so the same object is
the same value), each class registers its modules the same way and each instance the move met is a module, or
not, as it was then. A move that changed the heap is not kept:
joining the same values again could change it once more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..domain import Instance, Value


@dataclass(frozen=True, slots=True)
class CopyRecord:
    """One instance's copy in a move: what it read and what the twin held after it."""

    instance: Instance
    moved: Instance
    registration: str | None  # how the class registers its modules (it decides what a plain list moves)
    attributes: tuple[tuple[str, Value], ...]  # the instance's attributes as copied (the move's notes left out)
    copied: tuple[Value | None, ...]  # the twin's value of each attribute after the copy


@dataclass(frozen=True, slots=True)
class KeptMove:
    """A move that changed nothing: the copies of the instance and of every sub-module it reached, and the
    classes of the other instances it met (not modules then: left where they were)."""

    copies: tuple[CopyRecord, ...]
    plain: tuple[Any, ...]


class MoveMemo:
    """The moves that changed nothing, by (instance, device, ways of the statement's choices)."""

    def __init__(self) -> None:
        self.kept: dict[Any, KeptMove] = {}
        # the copies and the plain instances' classes of the moves in progress, innermost last
        self.open: list[tuple[list[CopyRecord], list[Any]]] = []

    def current(self, kept: KeptMove, heap: dict, owners: dict[Any, list[str]], skip: Callable[[str], bool],
                registration: Callable[[Any], str | None], is_module: Callable[[Any], bool]) -> bool:
        """Would this move read and leave the same objects now (its classes still modules, or still not)?"""
        if any(is_module(cls) for cls in kept.plain):
            return False
        for copy in kept.copies:
            instance, moved = copy.instance, copy.moved
            attrs = [attr for attr in owners.get(instance, ()) if not skip(attr)]
            if len(attrs) != len(copy.attributes) or registration(instance.cls) != copy.registration \
                    or not is_module(instance.cls):
                return False
            for attr, (seen_attr, seen), after in zip(attrs, copy.attributes, copy.copied, strict=True):
                if attr != seen_attr or heap[(instance, attr)] is not seen or heap.get((moved, attr)) is not after:
                    return False
        return True

