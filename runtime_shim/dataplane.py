"""The data plane: moving arrays between executors, bit-exactly.

Arrays are immutable by the executor contract, so a move shares memory where
the destination can wrap the source (numpy and torch on the CPU), and
otherwise copies once, byte for byte, never through Python objects. Moves
between the host and CUDA devices of tensors of ``SMALL_BYTES`` or more go
through ``STAGER``:

* uploads from pageable memory up to ``BLOCK_UPLOAD_BYTES`` go through one
  pinned block of their size, chunk copies overlapped with their DMA; larger
  ones are staged through a ring of reused pinned buffers: several threads
  copy pieces of the source into them while the copy engine moves the chunks
  already staged (``runtime_shim.staging``);
* downloads land in a pinned result (the block of a dead result of the same
  size is reused, so there are no page faults and no extra copy) while the
  live pinned results stay under ``PinnedStager.pinned_result_bytes``;
  beyond that, or where pinned memory cannot be had, they are staged through
  the ring into ordinary memory, the reverse of uploads;
* a host array uploaded a second time is page-locked in place
  (``cudaHostRegister``) and stays so while it lives, so that upload and every
  later one are one DMA (``runtime_shim.host_pins``);
* with ``PIN_HOST`` (``RUNTIME_SHIM_PIN_HOST=1``), host arrays made from data
  are pinned at creation (``pin_host``), so their uploads are one DMA.

Sources already in pinned memory go straight to the DMA engine, as in raw
torch; smaller tensors take torch's own copies, so a small move costs what
raw torch's does.

torch is imported only inside the functions that need it, so importing this
module costs nothing where torch is absent or unused.
"""

from __future__ import annotations

import ctypes
import os
import threading
import warnings
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from runtime_shim import host_pins, staging
from runtime_shim.executors.base import Executor, Prim

if TYPE_CHECKING:
    import torch

#: Below this many bytes a host/device copy goes directly, through torch, without staging.
SMALL_BYTES = 8 << 20
#: Size and number of the pinned staging buffers (allocated once, on the first staged move).
BUFFER_BYTES = 16 << 20
BUFFERS = 4
#: With ``RUNTIME_SHIM_PIN_HOST=1``, host arrays of ``SMALL_BYTES`` or more that a host backend makes
#: from data are copied into pinned memory while a CUDA device is usable, so that every upload of
#: them is one DMA. Off by default: the copy costs more at creation than it saves on one upload (a
#: created-then-moved-once tensor is slower end to end); it pays from the second upload on.
PIN_HOST = os.environ.get("RUNTIME_SHIM_PIN_HOST", "").strip().lower() in ("1", "true", "yes", "on")
#: Uploads from pageable memory up to this size go through one pinned block (see ``PinnedStager``).
BLOCK_UPLOAD_BYTES = 128 << 20
#: Pinned download-result blocks kept for reuse after their arrays die.
SPARE_RESULTS = 4
#: Transfers are cut into at least this many chunks (down to one piece each), so the copy of one
#: chunk overlaps the DMA of the others even for mid-sized tensors.
MIN_CHUNKS = 8


def _default_pinned_result_bytes() -> int:
    """At most 4 GiB of live pinned download results, and at most an eighth of the machine's RAM."""
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        ram = 8 << 30
    return min(4 << 30, ram // 8)


def transfer(prim: Prim, src: Executor, dst: Executor) -> Prim:
    """``prim`` of executor ``src`` as an array of executor ``dst``: same dtype, same bits."""
    for executor in (src, dst):
        if executor.family not in ("numpy", "torch"):
            raise ValueError(f"unknown executor family {executor.family!r}")
    if src is dst or (src.family, src.place) == (dst.family, dst.place):
        return prim
    src_host = src.family == "numpy" or src.place == "cpu"
    if dst.family == "numpy":
        if src_host:
            # Zero-copy view of the CPU tensor: neither side mutates arrays.
            return prim.detach().numpy()
        return device_to_host(prim)
    if dst.place == "cpu":
        if src.family == "numpy":
            return numpy_to_torch(prim)
        return device_to_host_tensor(prim)
    if src_host:
        return host_to_device(prim, dst.place)
    return prim.to(dst.place)  # device to device, peer-to-peer where the devices allow it


def pin_host(array: np.ndarray) -> np.ndarray:
    """``array``, or a copy of it in pinned memory where that makes its uploads one DMA: large
    enough to be staged, pinning on (``PIN_HOST``), a real CUDA device usable, and the pinned
    budget not spent (the copy shares ``PinnedStager.pinned_result_bytes`` with downloads)."""
    stager = STAGER
    if not PIN_HOST or array.nbytes < stager.small_bytes or not _cuda_usable():
        return array
    pinned = stager.pinned_copy(array)
    return array if pinned is None else pinned


def _cuda_usable() -> bool:
    """A real CUDA device can be used: torch is loaded (a program that never loaded it moves
    nothing to a GPU), devices are not virtual, and torch sees a GPU."""
    import sys

    from runtime_shim.modes import SETTINGS

    torch = sys.modules.get("torch")
    return torch is not None and not SETTINGS.virtual and bool(torch.cuda.is_available())


def numpy_to_torch(array: np.ndarray) -> torch.Tensor:
    """A CPU tensor sharing ``array``'s memory.

    Copies only what torch cannot or should not wrap: read-only arrays (torch
    tensors are writable), non-native byte order and negative strides.
    """
    import torch

    if not (array.flags.writeable and array.dtype.isnative and all(s >= 0 for s in array.strides)):
        array = np.array(array, dtype=array.dtype.newbyteorder("="), order="C")
    return torch.from_numpy(array)


def host_to_device(host: np.ndarray | torch.Tensor, place: str) -> torch.Tensor:
    """A tensor on CUDA device ``place`` with the values of a numpy array or CPU tensor.

    The result is ready for use on the device's current stream.
    """
    import torch

    device = torch.device(place)
    stager = STAGER
    if isinstance(host, torch.Tensor):
        detached = host.detach()
        if detached.is_pinned():
            # Already DMA-able: one async copy, queued on the current stream like any op.
            return stager.pinned_upload(detached, detached.data_ptr(), device)
        if detached.numel() * detached.element_size() < stager.small_bytes:
            return detached.to(device)
    else:
        wrapped = numpy_to_torch(host)  # zero-copy for ordinary arrays
        if wrapped.data_ptr() == host.__array_interface__["data"][0] and wrapped.is_pinned():
            # A numpy view of pinned memory: DMA straight from it, as raw torch would.
            return stager.pinned_upload(wrapped, wrapped.data_ptr(), device)
        if host.nbytes < stager.small_bytes:
            return wrapped.to(device)
    # The original object, not a detached view: a repeated upload is recognised by it.
    return stager.to_device(host, device)


def device_to_host(t: torch.Tensor) -> np.ndarray:
    """A fresh numpy array with the values of CUDA tensor ``t``."""
    t = t.detach()
    stager = STAGER
    if t.numel() * t.element_size() < stager.small_bytes:
        return t.cpu().numpy()
    return stager.to_host(t)


def device_to_host_tensor(t: torch.Tensor) -> torch.Tensor:
    """A fresh CPU tensor with the values of CUDA tensor ``t``."""
    import torch

    t = t.detach()
    stager = STAGER
    if t.numel() * t.element_size() < stager.small_bytes:
        return t.cpu()
    # Pinned where the result is: later uploads of it are one DMA, as raw torch's would be.
    return torch.from_numpy(stager.to_host(t))


class PinnedStager:
    """Moves between host memory and CUDA devices through reused pinned memory.

    Uploads: a ring of ``buffers`` pinned buffers of ``buffer_bytes`` each, filled by
    ``threads`` host threads piece by piece while the DMA of earlier chunks runs on a
    dedicated stream per device (``runtime_shim.staging`` has the schedule). Downloads: one
    DMA into a pinned result while the live pinned results stay under
    ``pinned_result_bytes`` (0 turns this off), else the ring in reverse into ordinary
    memory. Transfers through the ring are serialized by a lock, since they share it.
    """

    def __init__(
        self,
        buffer_bytes: int = BUFFER_BYTES,
        small_bytes: int = SMALL_BYTES,
        *,
        buffers: int = BUFFERS,
        threads: int = staging.DEFAULT_THREADS,
        min_chunks: int = MIN_CHUNKS,
        piece_bytes: int = staging.PIECE_BYTES,
        pinned_result_bytes: int | None = None,
        block_uploads: bool = True,
        block_upload_bytes: int = BLOCK_UPLOAD_BYTES,
        recycle_results: bool = True,
        pin_repeated: bool = True,
        pinned_in_place_bytes: int | None = None,
    ) -> None:
        self.buffer_bytes = buffer_bytes
        self.small_bytes = small_bytes
        self.buffers = max(2, buffers)
        self.min_chunks = min_chunks
        self.piece_bytes = piece_bytes
        self.pinned_result_bytes = (_default_pinned_result_bytes() if pinned_result_bytes is None
                                    else pinned_result_bytes)
        #: uploads from pageable memory of at most ``block_upload_bytes`` go through one pinned block
        #: of their size while the pinned budget allows (larger ones, or all when False: the ring)
        self.block_uploads = block_uploads
        self.block_upload_bytes = block_upload_bytes
        #: the memory of a dead pinned download result is kept for the next result of its size
        #: (at most ``SPARE_RESULTS`` blocks) instead of going back through torch's allocator
        self.recycle_results = recycle_results
        self._spare: dict[int, list[torch.Tensor]] = {}
        #: a host array uploaded a second time is registered in place while it lives (``host_pins``)
        self.pin_repeated = pin_repeated
        #: at most this many bytes of the program's own arrays registered at once: a budget of its own,
        #: so that registered arrays never push downloads out of pinned results (default as for those)
        self.pinned_in_place_bytes = (_default_pinned_result_bytes() if pinned_in_place_bytes is None
                                      else pinned_in_place_bytes)
        self._live_in_place = 0
        self.pins = host_pins.HostPins(lambda: _cuda_pin_driver(), self._reserve_in_place, self._release_in_place)
        #: chunks staged so far per direction, and downloads made straight into pinned results,
        #: to check which path a transfer took
        self.chunks = {"h2d": 0, "d2h": 0}
        self.pinned_results = 0
        #: host arrays copied into pinned memory at creation (``pin_host``)
        self.pinned_hosts = 0
        self._threads = staging.CopyThreads(threads)
        self._lock = threading.Lock()
        self._ring: list[torch.Tensor] = []
        self._busy: list[object] = [None] * self.buffers
        self._streams: dict[torch.device, torch.cuda.Stream] = {}
        self._live_lock = threading.Lock()
        self._live_pinned = 0

    @property
    def threads(self) -> int:
        return self._threads.threads

    @property
    def live_in_place_bytes(self) -> int:
        """Bytes of host arrays registered in place (``pins``) and still alive."""
        return self._live_in_place

    @property
    def live_pinned_bytes(self) -> int:
        """Bytes of pinned download results handed out and still referenced."""
        return self._live_pinned

    def plan(self, total: int) -> staging.Plan:
        """How a staged transfer of ``total`` bytes is cut into chunks and pieces."""
        return staging.plan(total, self.buffer_bytes, self.min_chunks, self.piece_bytes)

    def pinned_upload(self, host: torch.Tensor, ptr: int, device: torch.device) -> torch.Tensor:
        """``host`` (in page-locked memory at ``ptr``) on ``device``: one DMA queued on the current
        stream. Where that memory is one of ``pins``' registrations, the DMA is noted, so that the
        registration is undone only once it is done."""
        out = host.to(device, non_blocking=True)
        if self.pins.active:
            self._note_pinned_use(ptr, out.device)
        return out

    def _note_pinned_use(self, ptr: int, device: torch.device) -> None:
        import torch

        event = torch.cuda.Event()
        event.record(torch.cuda.current_stream(device))
        self.pins.note_use(ptr, device, event.synchronize)

    def to_device(self, host: np.ndarray | torch.Tensor, device: torch.device) -> torch.Tensor:
        """A new tensor on ``device`` with ``host``'s values, ready on the current stream."""
        import torch

        src = _host_bytes(host)
        dtype = _torch_dtype(host.dtype.name) if isinstance(host, np.ndarray) else host.dtype
        out = torch.empty(tuple(host.shape), dtype=dtype, device=device)
        total = src.numel()
        if total == 0:
            return out
        dst = out.view(-1).view(torch.uint8)
        ptr = src.data_ptr()
        if self.pin_repeated and ptr == _host_ptr(host):
            with torch.cuda.device(device):
                pinned = self.pins.pin_if_repeated(host, ptr, total)
            if pinned:  # registered just now: one DMA from the array's own memory
                dst.copy_(src, non_blocking=True)
                self._note_pinned_use(ptr, device)
                return out
        plan = self.plan(total)
        if self.block_uploads and total <= self.block_upload_bytes and self._block_upload(src, dst, plan, device):
            out.record_stream(self._stream(device))
            return out
        with self._lock:
            ring = self._ring_buffers()
            stream = self._stream(device)
            current = torch.cuda.current_stream(device)
            # out's memory may have been freed by work still queued on the current stream.
            stream.wait_stream(current)
            engine = _CudaEngine(ring, dst, stream)
            staging.upload(src.data_ptr(), [b.data_ptr() for b in ring], self._busy, plan, engine, self._threads)
            self.chunks["h2d"] += plan.chunks
            current.wait_stream(stream)
            # out was written on the copy stream: have the allocator wait for that stream's
            # work too before reusing out's memory, whichever stream out is freed on.
            out.record_stream(stream)
        return out

    def _block_upload(self, src: torch.Tensor, dst: torch.Tensor, plan: staging.Plan, device: torch.device) -> bool:
        """Upload ``src`` through one pinned block of its size, chunk by chunk: torch copies chunk
        k into the block (its parallel memcpy, on this thread) while the copy stream moves chunk
        k - 1, so the host copy and the DMA overlap without the ring's per-piece hand-offs. False
        (nothing done) where the pinned budget or the allocation says no."""
        import torch

        total = plan.total
        with self._live_lock:
            if self._live_pinned + total > self.pinned_result_bytes:
                return False
            self._live_pinned += total
        try:
            try:
                block = torch.empty(total, dtype=torch.uint8, pin_memory=True)
            except RuntimeError:  # pinned memory exhausted: the ring will do
                return False
            stream = self._stream(device)
            current = torch.cuda.current_stream(device)
            stream.wait_stream(current)  # dst's memory may have been freed by work queued there
            with torch.cuda.stream(stream):
                for start in range(0, total, plan.chunk):
                    end = min(total, start + plan.chunk)
                    block[start:end].copy_(src[start:end])
                    # torch's caching host allocator records this copy on the block, so the block is
                    # reused only once the DMA is done, however soon it is freed here
                    dst[start:end].copy_(block[start:end], non_blocking=True)
            current.wait_stream(stream)
            self.chunks["h2d"] += plan.chunks
        finally:
            self._release(total)
        return True

    def to_host(self, t: torch.Tensor) -> np.ndarray:
        """A new numpy array with the values of CUDA tensor ``t``: pinned memory while the budget
        allows, else ordinary memory filled through the ring."""
        pinned = self._pinned_result(t)
        return pinned if pinned is not None else self._staged_to_host(t)

    def _pinned_result(self, t: torch.Tensor) -> np.ndarray | None:
        """``t`` copied by one DMA into new pinned memory, or None where the budget or the pinned
        allocation says no. The budget is released when the array dies, that is when the last
        view of it or tensor made from it (``torch.from_numpy``) is gone."""
        import torch

        nbytes = t.numel() * t.element_size()
        with self._live_lock:
            if nbytes == 0 or self._live_pinned + nbytes > self.pinned_result_bytes:
                return None
            self._live_pinned += nbytes
        block = self._spare_block(nbytes)
        try:
            if block is None:
                block = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
        except RuntimeError:  # pinned memory exhausted: ordinary memory will do
            self._release(nbytes)
            return None
        out = block.view(t.dtype).view(tuple(t.shape))
        # On the current stream, after the work that wrote t, as raw torch's copy would be.
        stream = torch.cuda.current_stream(t.device)
        with torch.cuda.stream(stream):
            out.copy_(t, non_blocking=True)
        stream.synchronize()
        # The array, not out: numpy's views keep the array alive, and the array keeps the memory.
        array = out.numpy()
        weakref.finalize(array, self._result_died, block, nbytes)
        with self._live_lock:
            self.pinned_results += 1
        return array

    def pinned_copy(self, array: np.ndarray) -> np.ndarray | None:
        """A copy of ``array`` in new pinned memory (C order, native byte order), or None where
        the budget, the dtype or the pinned allocation says no; the budget is released when the
        copy dies, as for pinned download results."""
        import torch

        nbytes = array.nbytes
        with self._live_lock:
            if nbytes == 0 or self._live_pinned + nbytes > self.pinned_result_bytes:
                return None
            self._live_pinned += nbytes
        try:
            out = torch.empty(tuple(array.shape), dtype=_torch_dtype(array.dtype.name), pin_memory=True)
        except (RuntimeError, KeyError, ValueError, TypeError):  # no pinned memory, or a dtype torch lacks
            self._release(nbytes)
            return None
        out.copy_(numpy_to_torch(array))  # torch's parallel copy; numpy_to_torch fixes byte order and strides
        result = out.numpy()
        weakref.finalize(result, self._release, nbytes)
        with self._live_lock:
            self.pinned_hosts += 1
        return result

    def _spare_block(self, nbytes: int) -> torch.Tensor | None:
        with self._live_lock:
            blocks = self._spare.get(nbytes)
            return blocks.pop() if blocks else None

    def _result_died(self, block: torch.Tensor, nbytes: int) -> None:
        """A pinned result's array is gone (no view of it is left): keep its block for the next
        result of that size, within ``SPARE_RESULTS`` blocks."""
        with self._live_lock:
            self._live_pinned -= nbytes
            if self.recycle_results and sum(map(len, self._spare.values())) < SPARE_RESULTS:
                self._spare.setdefault(nbytes, []).append(block)

    def _release(self, nbytes: int) -> None:
        with self._live_lock:
            self._live_pinned -= nbytes

    def _reserve_in_place(self, nbytes: int) -> bool:
        """Count ``nbytes`` more of the program's memory registered in place, if the budget allows."""
        with self._live_lock:
            if self._live_in_place + nbytes > self.pinned_in_place_bytes:
                return False
            self._live_in_place += nbytes
            return True

    def _release_in_place(self, nbytes: int) -> None:
        with self._live_lock:
            self._live_in_place -= nbytes

    def _staged_to_host(self, t: torch.Tensor) -> np.ndarray:
        import torch

        out = np.empty(tuple(t.shape), dtype=np.dtype(_dtype_name(t.dtype)))
        total = out.nbytes
        if total == 0:
            return out
        # Kept referenced until every chunk is copied out, so no record_stream is needed.
        src = t.detach().contiguous().reshape(-1).view(torch.uint8)
        plan = self.plan(total)
        with self._lock:
            ring = self._ring_buffers()
            stream = self._stream(t.device)
            # t (and its contiguous copy) are written by work queued on the current stream.
            stream.wait_stream(torch.cuda.current_stream(t.device))
            engine = _CudaEngine(ring, src, stream)
            dst_ptr = out.__array_interface__["data"][0]
            staging.download(dst_ptr, [b.data_ptr() for b in ring], self._busy, plan, engine, self._threads)
            self.chunks["d2h"] += plan.chunks
        return out

    def _stream(self, device: torch.device) -> torch.cuda.Stream:
        import torch

        stream = self._streams.get(device)
        if stream is None:
            stream = self._streams[device] = torch.cuda.Stream(device=device)
        return stream

    def _ring_buffers(self) -> list[torch.Tensor]:
        """The pinned staging buffers, allocated on first use and kept."""
        import torch

        if not self._ring:
            self._ring = [torch.empty(self.buffer_bytes, dtype=torch.uint8, pin_memory=True)
                          for _ in range(self.buffers)]
        return self._ring


class _CudaEngine:
    """``staging.Engine`` for one transfer: DMAs between the ring and ``device_bytes`` on ``stream``."""

    def __init__(self, ring: list[torch.Tensor], device_bytes: torch.Tensor, stream: torch.cuda.Stream) -> None:
        self.ring = ring
        self.device_bytes = device_bytes
        self.stream = stream

    def upload(self, slot: int, offset: int, size: int) -> object:
        import torch

        with torch.cuda.stream(self.stream):
            self.device_bytes[offset : offset + size].copy_(self.ring[slot][:size], non_blocking=True)
        return self._event()

    def download(self, slot: int, offset: int, size: int) -> object:
        import torch

        with torch.cuda.stream(self.stream):
            self.ring[slot][:size].copy_(self.device_bytes[offset : offset + size], non_blocking=True)
        return self._event()

    def wait(self, token: object) -> None:
        if token is not None:
            token.synchronize()  # type: ignore[attr-defined]  # a torch.cuda.Event; releases the GIL

    def _event(self) -> torch.cuda.Event:
        import torch

        event = torch.cuda.Event()
        event.record(self.stream)
        return event


#: The process's stager; tests and benchmarks may swap in another.
STAGER = PinnedStager()


def _host_ptr(host: np.ndarray | torch.Tensor) -> int:
    """The address of the first byte of ``host``'s data."""
    if isinstance(host, np.ndarray):
        return int(host.__array_interface__["data"][0])
    return int(host.data_ptr())


class _CudaPinDriver:
    """``host_pins.Driver`` through the CUDA runtime torch loaded (the same library instance, so
    that a refused registration's error can be cleared before torch's next error check sees it)."""

    #: page-locked memory usable from every device (cudaHostRegisterPortable)
    PORTABLE = 1

    def __init__(self, library: ctypes.CDLL) -> None:
        self._lib = library
        self._lib.cudaHostRegister.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
        self._lib.cudaHostUnregister.argtypes = [ctypes.c_void_p]

    def register(self, ptr: int, size: int) -> bool:
        if self._lib.cudaHostRegister(ptr, size, self.PORTABLE) == 0:
            return True
        self._lib.cudaGetLastError()  # clear it: the array simply stays pageable
        return False

    def unregister(self, ptr: int) -> None:
        if self._lib.cudaHostUnregister(ptr) != 0:
            self._lib.cudaGetLastError()


_PIN_DRIVER: list[_CudaPinDriver | None] = []


def _cuda_pin_driver() -> _CudaPinDriver | None:
    """The driver for in-place registration, or None where the CUDA runtime torch uses cannot be
    found among the process's loaded libraries (registration is then never tried)."""
    if not _PIN_DRIVER:
        driver = None
        try:
            maps = Path("/proc/self/maps").read_text()
        except OSError:
            maps = ""
        paths = sorted({line.split()[-1] for line in maps.splitlines() if "/libcudart.so" in line})
        for path in paths[:1]:
            try:
                driver = _CudaPinDriver(ctypes.CDLL(path))
            except (OSError, AttributeError):
                driver = None
        _PIN_DRIVER.append(driver)
    return _PIN_DRIVER[0]


def _host_bytes(host: np.ndarray | torch.Tensor) -> torch.Tensor:
    """The bytes of a numpy array or CPU tensor, C order, as a flat uint8 CPU tensor.

    A view where the source is contiguous and native-endian, else one copy.
    """
    import torch

    if not isinstance(host, np.ndarray):
        return host.detach().contiguous().reshape(-1).view(torch.uint8)
    if not host.dtype.isnative:
        host = host.astype(host.dtype.newbyteorder("="))
    flat = np.ascontiguousarray(host).reshape(-1).view(np.uint8)
    if flat.flags.writeable:
        return torch.from_numpy(flat)
    with warnings.catch_warnings():
        # torch warns that it cannot keep a read-only array read-only; this view is only read.
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return torch.from_numpy(flat)


def _torch_dtype(name: str) -> torch.dtype:
    from runtime_shim.executors.torch_executor import torch_dtype

    return torch_dtype(name)


def _dtype_name(dtype: torch.dtype) -> str:
    from runtime_shim.executors.torch_executor import dtype_name

    return dtype_name(dtype)
