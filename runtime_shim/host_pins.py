"""Pinning host arrays in place once they are uploaded again.

An upload from pageable memory is staged: copied on the host into pinned buffers that the DMA engine
reads. On a host whose memory copy is slower than the copy engine, that copy bounds the upload. A host
array that a program uploads a second time is likely to be uploaded again (a constant input, a batch
sent to several devices, values moved back and forth), so at its second upload its memory is
page-locked where it is (``cudaHostRegister``) and stays so while the array lives: that upload and
every later one are one DMA, as from pinned memory. The first upload of an array stays staged, since
registering costs about as much as staging does and pays only from the next DMA on.

A registration lives exactly as long as the array object that was uploaded: a weak reference's
finalizer waits for the DMAs queued from it, then unregisters, and the memory is freed only after
that (the object keeps it alive until then). Ranges sharing a page with a registration already made
here are left pageable: the driver refuses to register a page twice.

Nothing here imports torch: the CUDA calls are behind ``Driver``, so the bookkeeping is tested
without a GPU.
"""

from __future__ import annotations

import bisect
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

PAGE = 4096


class Driver(Protocol):
    """Page-locks and unlocks host memory for the DMA engine."""

    def register(self, ptr: int, size: int) -> bool:
        """Page-lock [ptr, ptr + size); False (nothing locked, no error left behind) where refused."""

    def unregister(self, ptr: int) -> None:
        """Undo a successful ``register(ptr, ...)``."""


@dataclass(eq=False)
class Pin:
    """One registered range and, per device, a wait for the last DMA queued from it."""

    start: int
    size: int
    waits: dict[object, Callable[[], None]] = field(default_factory=dict)

    @property
    def first_page(self) -> int:
        return self.start // PAGE

    @property
    def last_page(self) -> int:
        return (self.start + self.size - 1) // PAGE


class HostPins:
    """The registrations made for repeated uploads, and the arrays seen uploaded once.

    ``reserve(n)`` / ``release(n)`` account the registered bytes against the caller's budget of
    page-locked memory (a refused reservation leaves the array pageable).
    """

    def __init__(self, driver: Callable[[], Driver | None], reserve: Callable[[int], bool],
                 release: Callable[[int], None]) -> None:
        self._driver = driver
        self._reserve = reserve
        self._release = release
        self._lock = threading.Lock()
        #: id(owner) -> (weak reference, address, size, refused) of arrays uploaded once
        self._seen: dict[int, tuple[weakref.ref[object], int, int, bool]] = {}
        self._starts: list[int] = []  # sorted, parallel to _pins
        self._pins: list[Pin] = []
        #: registrations made and undone so far, to check which path uploads took
        self.registered = 0
        self.unregistered = 0

    @property
    def active(self) -> bool:
        return bool(self._pins)

    @property
    def pinned_bytes(self) -> int:
        return sum(pin.size for pin in self._pins)

    def pin_if_repeated(self, owner: object, ptr: int, size: int) -> bool:
        """Register [ptr, ptr + size) if ``owner`` was uploaded before from that same memory (and
        the budget, the pages and the driver allow); True if it is registered now."""
        key = id(owner)
        with self._lock:
            entry = self._seen.get(key)
            if entry is None or entry[0]() is not owner or entry[1:3] != (ptr, size):
                try:
                    ref = weakref.ref(owner, lambda _, key=key: self._forget(key))
                except TypeError:  # not weakly referenceable: its lifetime cannot be followed
                    return False
                self._seen[key] = (ref, ptr, size, False)
                return False
            if entry[3] or self._overlaps(ptr, size):
                return False
            if not self._reserve(size):
                return False
            driver = self._driver()
            if driver is None or not driver.register(ptr, size):
                self._release(size)
                self._seen[key] = (*entry[:3], True)  # refused: do not ask again for this array
                return False
            pin = Pin(ptr, size)
            index = bisect.bisect(self._starts, ptr)
            self._starts.insert(index, ptr)
            self._pins.insert(index, pin)
            del self._seen[key]
            self.registered += 1
        weakref.finalize(owner, self._unpin, pin, driver)
        return True

    def find(self, ptr: int) -> Pin | None:
        """The registration holding address ``ptr``, if any."""
        with self._lock:
            index = bisect.bisect(self._starts, ptr) - 1
            if index >= 0 and ptr < self._pins[index].start + self._pins[index].size:
                return self._pins[index]
            return None

    def note_use(self, ptr: int, device: object, wait: Callable[[], None]) -> None:
        """A DMA from ``ptr`` was queued to ``device``; ``wait`` blocks until it is done."""
        pin = self.find(ptr)
        if pin is not None:
            with self._lock:
                pin.waits[device] = wait

    def _overlaps(self, ptr: int, size: int) -> bool:
        first, last = ptr // PAGE, (ptr + size - 1) // PAGE
        index = bisect.bisect(self._starts, ptr)
        return any(0 <= i < len(self._pins) and self._pins[i].first_page <= last and first <= self._pins[i].last_page
                   for i in (index - 1, index))

    def _forget(self, key: int) -> None:
        with self._lock:
            entry = self._seen.get(key)
            if entry is not None and entry[0]() is None:
                del self._seen[key]

    def _unpin(self, pin: Pin, driver: Driver) -> None:
        """The array is dying: wait for the DMAs that read it, then unregister its memory."""
        with self._lock:
            waits = list(pin.waits.values())
        try:
            for wait in waits:
                wait()
            driver.unregister(pin.start)
        except Exception:  # noqa: BLE001 - at interpreter exit the driver may be gone already
            pass
        with self._lock:
            index = self._pins.index(pin)
            del self._pins[index], self._starts[index]
            self.unregistered += 1
        self._release(pin.size)
