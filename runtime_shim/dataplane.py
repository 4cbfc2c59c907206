"""The data plane: moving arrays between executors, bit-exactly.

Arrays are immutable by the executor contract, so a move shares memory where
the destination can wrap the source (numpy and torch on the CPU), and
otherwise copies once, byte for byte, never through Python objects. Moves to
and from CUDA devices of tensors of 1 MiB or more go through ``STAGER``: a
pair of reusable pinned host buffers, with chunked, double-buffered copies on
a dedicated CUDA stream per device, so the host memcpy of one chunk overlaps
the DMA of the previous one.

torch is imported only inside the functions that need it, so importing this
module costs nothing where torch is absent or unused.
"""

from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING

import numpy as np

from runtime_shim.executors.base import Executor, Prim

if TYPE_CHECKING:
    import torch

#: Below this many bytes a host/device copy goes directly, without staging: measured on an
#: H200 host, staging's fixed cost (~120 us) loses to a plain pageable copy up to 4-16 MiB.
SMALL_BYTES = 8 << 20
#: The largest chunk staged at once (the size each pinned buffer grows to at most).
CHUNK_BYTES = 64 << 20
#: Transfers are cut into at least this many chunks (down to MIN_CHUNK_BYTES), so the host
#: memcpy of one chunk overlaps the DMA of the previous one even for mid-sized tensors.
MIN_CHUNKS = 8
MIN_CHUNK_BYTES = 4 << 20


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
        import torch

        return torch.from_numpy(device_to_host(prim))
    if src_host:
        return host_to_device(prim, dst.place)
    return prim.to(dst.place)  # device to device, peer-to-peer where the devices allow it


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
        host = host.detach()
        if host.is_pinned():
            # Already DMA-able: one async copy, queued on the current stream like any op.
            return host.to(device, non_blocking=True)
        if host.numel() * host.element_size() < stager.small_bytes:
            return host.to(device)
    else:
        wrapped = numpy_to_torch(host)  # zero-copy for ordinary arrays
        if wrapped.data_ptr() == host.__array_interface__["data"][0] and wrapped.is_pinned():
            # A numpy view of pinned memory: DMA straight from it, as raw torch would.
            return wrapped.to(device, non_blocking=True)
        if host.nbytes < stager.small_bytes:
            return wrapped.to(device)
    return stager.to_device(host, device)


def device_to_host(t: torch.Tensor) -> np.ndarray:
    """A fresh numpy array with the values of CUDA tensor ``t``."""
    t = t.detach()
    stager = STAGER
    if t.numel() * t.element_size() < stager.small_bytes:
        return t.cpu().numpy()
    return stager.to_host(t)


class PinnedStager:
    """Copies between host memory and CUDA devices through two reusable pinned buffers.

    A transfer is split into chunks of at most ``chunk_bytes``; chunk k goes
    through buffer k % 2, so the host-side memcpy of chunk k runs while the
    asynchronous DMA of chunk k - 1 is in flight. A CUDA event per buffer says
    when its last DMA is done and the buffer may be reused. Buffers grow on
    demand up to ``chunk_bytes``. Transfers are serialized by a lock, since
    they share the buffers.
    """

    def __init__(self, chunk_bytes: int = CHUNK_BYTES, small_bytes: int = SMALL_BYTES) -> None:
        self.chunk_bytes = chunk_bytes
        self.small_bytes = small_bytes
        #: chunks staged so far per direction, to check which path a transfer took
        self.chunks = {"h2d": 0, "d2h": 0}
        self._lock = threading.Lock()
        self._buffers: list[torch.Tensor | None] = [None, None]
        self._events: list[torch.cuda.Event | None] = [None, None]
        self._streams: dict[torch.device, torch.cuda.Stream] = {}

    def to_device(self, host: np.ndarray | torch.Tensor, device: torch.device) -> torch.Tensor:
        """A new tensor on ``device`` with ``host``'s values, ready on the current stream."""
        import torch

        src = _host_bytes(host)
        dtype = _torch_dtype(host.dtype.name) if isinstance(host, np.ndarray) else host.dtype
        out = torch.empty(tuple(host.shape), dtype=dtype, device=device)
        total = src.nbytes
        if total == 0:
            return out
        dst = out.view(-1).view(torch.uint8)
        chunk = self._chunk_for(total)
        with self._lock:
            stream = self._stream(device)
            current = torch.cuda.current_stream(device)
            # out's memory may have been freed by work still queued on the current stream.
            stream.wait_stream(current)
            for k, start in enumerate(range(0, total, chunk)):
                size = min(chunk, total - start)
                buffer = self._acquire(k % 2, size)
                buffer[:size].copy_(src[start : start + size])  # torch's CPU copy uses all cores
                with torch.cuda.stream(stream):
                    dst[start : start + size].copy_(buffer[:size], non_blocking=True)
                self._record(k % 2, stream)
                self.chunks["h2d"] += 1
            current.wait_stream(stream)
            # out was written on the copy stream: have the allocator wait for that stream's
            # work too before reusing out's memory, whichever stream out is freed on.
            out.record_stream(stream)
        return out

    def to_host(self, t: torch.Tensor) -> np.ndarray:
        """A new numpy array with the values of CUDA tensor ``t``."""
        import torch

        out = np.empty(tuple(t.shape), dtype=np.dtype(_dtype_name(t.dtype)))
        total = out.nbytes
        if total == 0:
            return out
        dst = torch.from_numpy(out.reshape(-1).view(np.uint8))
        # Kept referenced until every chunk is copied out, so no record_stream is needed.
        src_tensor = t.detach().contiguous()
        src = src_tensor.reshape(-1).view(torch.uint8)
        chunk = self._chunk_for(total)
        starts = range(0, total, chunk)

        def issue(k: int, stream: torch.cuda.Stream) -> None:
            size = min(chunk, total - starts[k])
            buffer = self._acquire(k % 2, size)
            with torch.cuda.stream(stream):
                buffer[:size].copy_(src[starts[k] : starts[k] + size], non_blocking=True)
            self._record(k % 2, stream)

        with self._lock:
            stream = self._stream(t.device)
            # t (and src_tensor) are written by work queued on the current stream.
            stream.wait_stream(torch.cuda.current_stream(t.device))
            for k in range(min(2, len(starts))):
                issue(k, stream)
            for k, start in enumerate(starts):
                size = min(chunk, total - start)
                self._events[k % 2].synchronize()
                dst[start : start + size].copy_(self._buffers[k % 2][:size])
                self.chunks["d2h"] += 1
                if k + 2 < len(starts):
                    issue(k + 2, stream)
        return out

    def _chunk_for(self, total: int) -> int:
        """Chunk size for a transfer of ``total`` bytes: small enough to pipeline, at most chunk_bytes."""
        return max(1, min(self.chunk_bytes, max(MIN_CHUNK_BYTES, -(-total // MIN_CHUNKS))))

    def _stream(self, device: torch.device) -> torch.cuda.Stream:
        import torch

        stream = self._streams.get(device)
        if stream is None:
            stream = self._streams[device] = torch.cuda.Stream(device=device)
        return stream

    def _acquire(self, slot: int, nbytes: int) -> torch.Tensor:
        """Pinned buffer ``slot`` holding at least ``nbytes``, once its last DMA is done."""
        import torch

        event = self._events[slot]
        if event is not None:
            event.synchronize()
            self._events[slot] = None
        buffer = self._buffers[slot]
        if buffer is None or buffer.numel() < nbytes:
            size = min(self.chunk_bytes, 1 << (nbytes - 1).bit_length())
            buffer = self._buffers[slot] = torch.empty(size, dtype=torch.uint8, pin_memory=True)
        return buffer

    def _record(self, slot: int, stream: torch.cuda.Stream) -> None:
        import torch

        event = torch.cuda.Event()
        event.record(stream)
        self._events[slot] = event


#: The process's stager; tests may swap in one with small chunks.
STAGER = PinnedStager()


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
