"""Tests of ``runtime_shim.host_pins``: which repeated uploads register their array in place, and
that a registration is undone, after its DMAs, when the array dies. A fake driver stands in for
CUDA; ``test_dataplane.py`` runs the real one on a GPU."""

from __future__ import annotations

import gc
import subprocess
import sys

import numpy as np
import pytest

from runtime_shim.host_pins import PAGE, HostPins

MIB = 1 << 20


class FakeDriver:
    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse
        self.calls: list[tuple[str, int, int]] = []

    def register(self, ptr: int, size: int) -> bool:
        self.calls.append(("register", ptr, size))
        return not self.refuse

    def unregister(self, ptr: int) -> None:
        self.calls.append(("unregister", ptr, 0))


class Budget:
    def __init__(self, limit: int) -> None:
        self.limit, self.used = limit, 0

    def reserve(self, n: int) -> bool:
        if self.used + n > self.limit:
            return False
        self.used += n
        return True

    def release(self, n: int) -> None:
        self.used -= n


def make(driver: FakeDriver | None, limit: int = 1 << 30) -> tuple[HostPins, Budget]:
    budget = Budget(limit)
    return HostPins(lambda: driver, budget.reserve, budget.release), budget


def ptr(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def test_the_second_upload_of_an_array_registers_it() -> None:
    driver = FakeDriver()
    pins, budget = make(driver)
    a = np.zeros(MIB, dtype=np.uint8)
    assert not pins.pin_if_repeated(a, ptr(a), a.nbytes)  # first upload: staged
    assert driver.calls == [] and not pins.active
    assert pins.pin_if_repeated(a, ptr(a), a.nbytes)
    assert driver.calls == [("register", ptr(a), a.nbytes)] and budget.used == a.nbytes
    assert pins.find(ptr(a) + 100) is not None and pins.find(ptr(a) + a.nbytes) is None
    assert pins.registered == 1 and pins.pinned_bytes == a.nbytes


def test_other_arrays_and_other_memory_are_not_repeats() -> None:
    driver = FakeDriver()
    pins, _ = make(driver)
    a, b = np.zeros(MIB, dtype=np.uint8), np.zeros(MIB, dtype=np.uint8)
    assert not pins.pin_if_repeated(a, ptr(a), a.nbytes)
    assert not pins.pin_if_repeated(b, ptr(b), b.nbytes)  # another array: its own first upload
    assert not pins.pin_if_repeated(a, ptr(a), a.nbytes // 2)  # the same object, other bytes: a first upload again
    assert driver.calls == []


def test_registration_ends_after_the_arrays_dmas_when_it_dies() -> None:
    run_alone("registration_ends_after_the_arrays_dmas_when_it_dies")


def test_a_view_keeps_the_memory_but_not_the_registration_of_its_owner() -> None:
    run_alone("a_view_keeps_the_memory_but_not_the_registration_of_its_owner")


def run_alone(name: str) -> None:
    """Run a test of an array's death in a fresh interpreter: in a worker that ran other tests first, something
    else may keep the array alive past ``del`` (seen once in a clean-clone CI run), and the test is about the
    registration, not about what other tests leave behind."""
    done = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def registration_ends_after_the_arrays_dmas_when_it_dies() -> None:
    driver = FakeDriver()
    pins, budget = make(driver)
    a = np.zeros(MIB, dtype=np.uint8)
    address = ptr(a)
    pins.pin_if_repeated(a, address, a.nbytes)
    pins.pin_if_repeated(a, address, a.nbytes)
    order: list[str] = []
    pins.note_use(address + 8, "cuda:0", lambda: order.append("waited cuda:0"))
    pins.note_use(address, "cuda:1", lambda: order.append("waited cuda:1"))
    pins.note_use(address - 1, "cuda:0", lambda: order.append("not this one"))
    del a
    gc.collect()
    assert order == ["waited cuda:0", "waited cuda:1"]
    assert driver.calls[-1] == ("unregister", address, 0)
    assert budget.used == 0 and not pins.active and pins.unregistered == 1
    assert pins.find(address) is None


def a_view_keeps_the_memory_but_not_the_registration_of_its_owner() -> None:
    driver = FakeDriver()
    pins, _ = make(driver)
    base = np.zeros(2 * MIB, dtype=np.uint8)
    view = base[:]
    pins.pin_if_repeated(view, ptr(view), view.nbytes)
    assert pins.pin_if_repeated(view, ptr(view), view.nbytes)
    del view
    gc.collect()
    assert [c[0] for c in driver.calls] == ["register", "unregister"]  # before base's memory is freed
    assert base.sum() == 0


def test_pages_shared_with_a_registration_stay_pageable() -> None:
    driver = FakeDriver()
    pins, _ = make(driver)
    memory = np.zeros(4 * PAGE, dtype=np.uint8)
    start = (ptr(memory) + PAGE - 1) // PAGE * PAGE - ptr(memory)
    first, overlapping, next_page = (memory[start : start + PAGE + 10], memory[start + PAGE + 20 : start + 2 * PAGE],
                                     memory[start + 2 * PAGE : start + 3 * PAGE])
    for array in (first, overlapping, next_page):
        pins.pin_if_repeated(array, ptr(array), array.nbytes)
    assert pins.pin_if_repeated(first, ptr(first), first.nbytes)
    assert not pins.pin_if_repeated(overlapping, ptr(overlapping), overlapping.nbytes)
    assert pins.pin_if_repeated(next_page, ptr(next_page), next_page.nbytes)
    assert [c[1] for c in driver.calls] == [ptr(first), ptr(next_page)]


@pytest.mark.parametrize("case", ["budget", "driver refuses", "no driver"])
def test_refusals_leave_the_array_pageable(case: str) -> None:
    driver = None if case == "no driver" else FakeDriver(refuse=case == "driver refuses")
    pins, budget = make(driver, limit=MIB - 1 if case == "budget" else 1 << 30)
    a = np.zeros(MIB, dtype=np.uint8)
    for _ in range(3):
        assert not pins.pin_if_repeated(a, ptr(a), a.nbytes)
    assert budget.used == 0 and not pins.active
    if case == "driver refuses":
        assert len(driver.calls) == 1  # refused once: not asked again for that array


def test_objects_without_weak_references_are_never_registered() -> None:
    driver = FakeDriver()
    pins, _ = make(driver)
    data = bytes(MIB)
    for _ in range(2):
        assert not pins.pin_if_repeated(data, id(data), len(data))
    assert driver.calls == []


if __name__ == "__main__":  # (``run_alone``: one test body in this interpreter)
    globals()[sys.argv[1]]()
