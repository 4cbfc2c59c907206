"""The staging schedule (runtime_shim.staging) on the CPU, against a lazy fake copy engine.

The fake engine runs a queued DMA only when someone waits for it (or at the end, in queue order,
like a stream draining), so a schedule that wrote a buffer before its previous DMA was done, or
read a buffer before its DMA was done, moves wrong values deterministically: every test checks
values, byte for byte.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable

import numpy as np
import pytest

from runtime_shim import staging


class LazyEngine:
    """A copy engine whose DMAs run in queue order, only when waited for or drained."""

    def __init__(self, ring: list[np.ndarray], device: np.ndarray, fail_at: int | None = None) -> None:
        self.ring = ring
        self.device = device
        self.fail_at = fail_at
        self.queued: list[tuple[str, int, int, int]] = []
        self._pending: list[tuple[int, Callable[[], None]]] = []
        self._done = 0
        self._lock = threading.Lock()

    def _queue(self, kind: str, slot: int, offset: int, size: int, op: Callable[[], None]) -> int:
        with self._lock:
            if self.fail_at is not None and len(self.queued) == self.fail_at:
                raise RuntimeError("copy engine failed")
            self.queued.append((kind, slot, offset, size))
            token = len(self.queued)
            self._pending.append((token, op))
            return token

    def upload(self, slot: int, offset: int, size: int) -> object:
        device = self.device  # the destination of this transfer, bound now

        def op() -> None:
            device[offset : offset + size] = self.ring[slot][:size]

        return self._queue("up", slot, offset, size, op)

    def download(self, slot: int, offset: int, size: int) -> object:
        device = self.device

        def op() -> None:
            self.ring[slot][:size] = device[offset : offset + size]

        return self._queue("down", slot, offset, size, op)

    def wait(self, token: object) -> None:
        if token is None:
            return
        with self._lock:
            while self._pending and self._pending[0][0] <= token:  # type: ignore[operator]
                self._pending.pop(0)[1]()

    def drain(self) -> None:
        with self._lock:
            while self._pending:
                self._pending.pop(0)[1]()


class NoWaitEngine(LazyEngine):
    """A broken engine that never waits: the tests must notice the wrong values it causes."""

    def wait(self, token: object) -> None:
        return


def address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def make_ring(slots: int, nbytes: int) -> list[np.ndarray]:
    return [np.zeros(nbytes, dtype=np.uint8) for _ in range(slots)]


def random_bytes(n: int, seed: int) -> np.ndarray:
    return np.frombuffer(np.random.default_rng(seed).bytes(n), dtype=np.uint8).copy()


SIZES = [1, 7, 4096, 4096 * 3 + 5, 65536, 200_003]
SCHEDULES = [  # (buffer bytes, slots, min chunks, piece bytes, threads)
    (4096, 2, 8, 1024, 1),
    (4096, 2, 8, 1024, 4),
    (8192, 3, 4, 4096, 3),
    (16384, 4, 8, 1000, 8),
    (65536, 2, 1, 65536, 2),
]


@pytest.mark.parametrize("total", SIZES)
@pytest.mark.parametrize(("buffer", "slots", "min_chunks", "piece", "threads"), SCHEDULES)
def test_upload_moves_every_byte(total: int, buffer: int, slots: int, min_chunks: int, piece: int,
                                 threads: int) -> None:
    src = random_bytes(total, seed=total)
    device = np.zeros(total, dtype=np.uint8)
    ring = make_ring(slots, buffer)
    engine = LazyEngine(ring, device)
    plan = staging.plan(total, buffer, min_chunks, piece)
    busy: list[object] = [None] * slots
    staging.upload(address(src), [address(b) for b in ring], busy, plan, engine, staging.CopyThreads(threads))
    engine.drain()
    np.testing.assert_array_equal(device, src)
    assert sorted(q[2] for q in engine.queued) == [k * plan.chunk for k in range(plan.chunks)]
    assert all(q[1] == (q[2] // plan.chunk) % slots for q in engine.queued)  # chunk k through buffer k % slots


@pytest.mark.parametrize("total", SIZES)
@pytest.mark.parametrize(("buffer", "slots", "min_chunks", "piece", "threads"), SCHEDULES)
def test_download_moves_every_byte(total: int, buffer: int, slots: int, min_chunks: int, piece: int,
                                   threads: int) -> None:
    device = random_bytes(total, seed=total + 1)
    dst = np.zeros(total, dtype=np.uint8)
    ring = make_ring(slots, buffer)
    engine = LazyEngine(ring, device)
    plan = staging.plan(total, buffer, min_chunks, piece)
    staging.download(address(dst), [address(b) for b in ring], [None] * slots, plan, engine,
                     staging.CopyThreads(threads))
    np.testing.assert_array_equal(dst, device)
    assert len(engine.queued) == plan.chunks


def test_a_schedule_that_ignores_pending_dmas_is_caught() -> None:
    """The fake engine's laziness makes a missing wait visible as wrong values."""
    total, buffer = 64 * 1024, 4096
    src = random_bytes(total, seed=3)
    device = np.zeros(total, dtype=np.uint8)
    ring = make_ring(2, buffer)
    engine = NoWaitEngine(ring, device)
    plan = staging.plan(total, buffer, 8, 1024)
    staging.upload(address(src), [address(b) for b in ring], [None, None], plan, engine, staging.CopyThreads(2))
    engine.drain()
    assert not np.array_equal(device, src)


def test_ring_reuse_across_transfers_waits_for_the_previous_dmas() -> None:
    """A second upload must not overwrite buffers whose DMAs of the first one are still queued."""
    buffer, slots = 4096, 3
    ring = make_ring(slots, buffer)
    busy: list[object] = [None] * slots
    threads = staging.CopyThreads(3)
    device = np.zeros(2 * 50_000, dtype=np.uint8)
    engine = LazyEngine(ring, device)
    first, second = random_bytes(50_000, seed=1), random_bytes(50_000, seed=2)
    for index, src in enumerate((first, second)):
        engine.device = device[index * 50_000 : (index + 1) * 50_000]
        staging.upload(address(src), [address(b) for b in ring], busy,
                       staging.plan(src.size, buffer, 8, 1024), engine, threads)
    assert all(token is not None for token in busy)
    engine.drain()
    np.testing.assert_array_equal(device[:50_000], first)
    np.testing.assert_array_equal(device[50_000:], second)


def test_download_after_upload_waits_for_the_ring() -> None:
    buffer, slots = 4096, 2
    ring = make_ring(slots, buffer)
    busy: list[object] = [None] * slots
    threads = staging.CopyThreads(2)
    src = random_bytes(30_000, seed=4)
    device = np.zeros(30_000, dtype=np.uint8)
    engine = LazyEngine(ring, device)
    staging.upload(address(src), [address(b) for b in ring], busy, staging.plan(src.size, buffer, 8, 1024),
                   engine, threads)
    back = np.zeros_like(src)
    staging.download(address(back), [address(b) for b in ring], busy, staging.plan(src.size, buffer, 8, 1024),
                     engine, threads)
    np.testing.assert_array_equal(back, src)


@pytest.mark.parametrize("direction", ["upload", "download"])
@pytest.mark.parametrize("fail_at", [0, 3])
def test_engine_errors_propagate_without_hanging(direction: str, fail_at: int) -> None:
    total, buffer = 40_000, 4096
    data = random_bytes(total, seed=5)
    ring = make_ring(2, buffer)
    engine = LazyEngine(ring, np.zeros(total, dtype=np.uint8) if direction == "upload" else data, fail_at=fail_at)
    plan = staging.plan(total, buffer, 8, 1024)
    run = staging.upload if direction == "upload" else staging.download
    host = data if direction == "upload" else np.zeros(total, dtype=np.uint8)
    with pytest.raises(RuntimeError, match="copy engine failed"):
        run(address(host), [address(b) for b in ring], [None, None], plan, engine, staging.CopyThreads(4))


def test_copy_threads_run_in_parallel_and_reraise() -> None:
    threads = staging.CopyThreads(4)
    seen: set[int] = set()
    barrier = threading.Barrier(4, timeout=60)

    def work() -> None:
        seen.add(threading.get_ident())
        barrier.wait()  # only returns once all four run at the same time

    threads.run(work)
    assert len(seen) == 4

    def boom() -> None:
        raise ValueError("piece failed")

    with pytest.raises(ValueError, match="piece failed"):
        threads.run(boom)
    threads.run(lambda: None)  # still usable afterwards


@pytest.mark.parametrize("total", [1, 4095, 4096, 1 << 20, (64 << 20) + 3, 1 << 30])
@pytest.mark.parametrize("buffer", [4096, 16 << 20])
def test_plan_covers_each_byte_once_in_chunk_order(total: int, buffer: int) -> None:
    plan = staging.plan(total, buffer, 8, 2 << 20)
    assert 0 < plan.chunk <= buffer
    assert plan.piece <= plan.chunk
    if total > 1 << 24:
        pieces = plan.pieces()
        assert pieces[0][1] == 0 and pieces[-1][2] == total
        assert all(a[2] == b[1] and a[0] <= b[0] for a, b in zip(pieces, pieces[1:], strict=False))
    else:
        covered = np.zeros(total, dtype=np.int8)
        for k, lo, hi in plan.pieces():
            assert k * plan.chunk <= lo < hi <= k * plan.chunk + plan.chunk_size(k)
            covered[lo:hi] += 1
        assert (covered == 1).all()
    if total >= 8 * buffer:
        assert plan.chunk == buffer
    elif total >= 8 * 4096:
        assert plan.chunks >= 8 or plan.chunk == plan.piece


def test_memmove_releases_the_gil_for_large_copies() -> None:
    """The helpers copy with ctypes.memmove, a foreign call that runs without the GIL."""
    assert isinstance(ctypes.memmove, ctypes._CFuncPtr)  # type: ignore[attr-defined]
    assert not (ctypes.memmove._flags_ & ctypes._FUNCFLAG_PYTHONAPI)  # type: ignore[attr-defined]
