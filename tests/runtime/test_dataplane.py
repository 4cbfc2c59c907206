"""Tests of the cross-executor data plane: bit-exact moves, memory sharing, CUDA staging.

CPU tests need torch (skipped without it). CUDA tests are marked ``gpu`` and
skipped without a CUDA device; they cover every dtype at sizes from a few
bytes to 200 MiB (several staging chunks), in both directions, from numpy and
from torch sources.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from runtime_shim import dataplane
from runtime_shim.executors import BOOL_DTYPES, FLOAT_DTYPES, INT_DTYPES, Executor, get_executor

torch = pytest.importorskip("torch")

HAS_CUDA = torch.cuda.is_available()
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + BOOL_DTYPES
MIB = 1 << 20
gpu = [pytest.mark.gpu, pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")]

# Bit patterns that a conversion through floats or Python objects would not keep:
# signed zeros, subnormals, infinities, quiet/signalling NaNs with payloads, extremes.
SPECIAL_BITS = {
    "float16": (
        np.uint16,
        [
            0x0000,
            0x8000,
            0x0001,
            0x03FF,
            0x8001,
            0x7C00,
            0xFC00,
            0x7E00,
            0x7C01,
            0xFE01,
            0x7D55,
            0x7BFF,
            0xFBFF,
            0x3C00,
        ],
    ),
    "float32": (
        np.uint32,
        [
            0x00000000,
            0x80000000,
            0x00000001,
            0x007FFFFF,
            0x80000001,
            0x7F800000,
            0xFF800000,
            0x7FC00000,
            0x7F800001,
            0xFFC12345,
            0x7FA5A5A5,
            0x7F7FFFFF,
            0xFF7FFFFF,
            0x3F800000,
        ],
    ),
    "float64": (
        np.uint64,
        [
            0x0,
            0x8000000000000000,
            0x1,
            0x000FFFFFFFFFFFFF,
            0x8000000000000001,
            0x7FF0000000000000,
            0xFFF0000000000000,
            0x7FF8000000000000,
            0x7FF0000000000001,
            0xFFF8DEADBEEF0001,
            0x7FF4000000000000,
            0x7FEFFFFFFFFFFFFF,
            0x3FF0000000000000,
        ],
    ),
}


def bit_array(dtype: str, count: int, seed: int = 0) -> np.ndarray:
    """``count`` values of ``dtype`` from random bytes, special patterns first."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.frombuffer(np.random.default_rng(seed).bytes(count * itemsize), dtype=np.uint8).copy()
    if dtype == "bool":
        return (raw & 1).view(np.bool_)
    array = raw.view(dtype)
    if dtype in SPECIAL_BITS:
        bits_type, bits = SPECIAL_BITS[dtype]
        n = min(count, len(bits))
        array.view(bits_type)[:n] = np.array(bits[:n], dtype=bits_type)
    else:
        info = np.iinfo(dtype)
        array[: min(count, 3)] = np.array([info.min, info.max, 0], dtype=dtype)[: min(count, 3)]
    return array


def as_bytes(value: np.ndarray | torch.Tensor) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().contiguous().numpy()
    return np.ascontiguousarray(value).reshape(-1).view(np.uint8)


def assert_bit_identical(got: np.ndarray | torch.Tensor, expected: np.ndarray) -> None:
    if isinstance(got, torch.Tensor):
        assert str(got.dtype) == f"torch.{expected.dtype.name}"
    else:
        assert got.dtype == expected.dtype
    assert tuple(got.shape) == expected.shape
    assert np.array_equal(as_bytes(got), as_bytes(expected))


@pytest.fixture
def host() -> Executor:
    return get_executor("numpy", "host")


@pytest.fixture
def cpu() -> Executor:
    return get_executor("torch", "cpu")


# --- CPU ------------------------------------------------------------------------------


def test_same_executor_returns_prim(host: Executor, cpu: Executor) -> None:
    array = np.arange(4.0)
    assert dataplane.transfer(array, host, host) is array
    tensor = torch.arange(4)
    assert dataplane.transfer(tensor, cpu, cpu) is tensor


def test_unknown_family_is_rejected(host: Executor) -> None:
    class Other(Executor):
        family, place = "jax", "cpu"

    with pytest.raises(ValueError):
        dataplane.transfer(np.zeros(1), host, Other())


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (7, 5), (2, 3, 4)])
def test_numpy_torch_cpu_round_trip_is_bit_exact_and_zero_copy(
    host: Executor, cpu: Executor, dtype: str, shape: tuple[int, ...]
) -> None:
    array = bit_array(dtype, int(np.prod(shape))).reshape(shape)
    original = array.copy()
    tensor = dataplane.transfer(array, host, cpu)
    assert isinstance(tensor, torch.Tensor) and tensor.device.type == "cpu"
    assert_bit_identical(tensor, original)
    back = dataplane.transfer(tensor, cpu, host)
    assert isinstance(back, np.ndarray)
    assert_bit_identical(back, original)
    if array.size:
        assert np.shares_memory(tensor.numpy(), array)
        assert np.shares_memory(back, array)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_executor_from_to_numpy_is_bit_exact(cpu: Executor, host: Executor, dtype: str) -> None:
    array = bit_array(dtype, 1000, seed=1).reshape(10, 100)
    for ex in (host, cpu):
        prim = ex.from_numpy(array)
        assert_bit_identical(prim, array)
        out = ex.to_numpy(prim)
        assert_bit_identical(out, array)
        assert not np.shares_memory(out, array)
        assert_bit_identical(ex.copy(prim), array)


def test_read_only_array_is_copied_without_warning(host: Executor, cpu: Executor) -> None:
    array = bit_array("float32", 64, seed=2)
    array.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tensor = dataplane.transfer(array, host, cpu)
    assert_bit_identical(tensor, array)
    assert not np.shares_memory(tensor.numpy(), array)


def test_strided_arrays(host: Executor, cpu: Executor) -> None:
    base = bit_array("float64", 48, seed=3).reshape(6, 8)
    positive = base[::2, 1::3]
    tensor = dataplane.transfer(positive, host, cpu)
    assert_bit_identical(tensor, np.ascontiguousarray(positive))
    assert np.shares_memory(tensor.numpy(), base)  # torch wraps positive strides as they are
    negative = base[::-1, ::-2]
    assert_bit_identical(dataplane.transfer(negative, host, cpu), np.ascontiguousarray(negative))
    transposed = torch.from_numpy(base.copy()).T
    assert_bit_identical(dataplane.transfer(transposed, cpu, host), np.ascontiguousarray(base.T))


def test_non_native_byte_order(host: Executor, cpu: Executor) -> None:
    values = bit_array("float32", 16, seed=4)
    swapped = values.astype(">f4")
    tensor = dataplane.transfer(swapped, host, cpu)
    assert_bit_identical(tensor, values)


def test_dataplane_import_does_not_import_torch() -> None:
    code = "import sys, runtime_shim.dataplane\nassert 'torch' not in sys.modules\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


# --- CUDA ----------------------------------------------------------------------------------

DIRECTIONS = ["numpy->cuda", "cuda->numpy", "torch_cpu->cuda", "cuda->torch_cpu"]
# Element counts are per dtype: bytes // itemsize (so 200 MiB spans four 64 MiB chunks).
SIZES_BYTES = {
    "small": 68,
    "below_staging": dataplane.SMALL_BYTES - 8,
    "staged": dataplane.SMALL_BYTES + 8,
    "multi_chunk": 200 * MIB,
}


@pytest.fixture(scope="module")
def random_bytes() -> np.ndarray:
    return np.frombuffer(np.random.default_rng(5).bytes(SIZES_BYTES["multi_chunk"]), dtype=np.uint8)


@pytest.fixture
def cuda0() -> Executor:
    return get_executor("torch", "cuda:0")


def _host_values(random_bytes: np.ndarray, dtype: str, nbytes: int) -> np.ndarray:
    raw = random_bytes[:nbytes]
    if dtype == "bool":
        return (raw & 1).view(np.bool_)
    values = raw.copy().view(dtype)
    special = bit_array(dtype, min(values.size, 16), seed=6)
    values[: special.size] = special
    return values


def _move(
    direction: str, values: np.ndarray, host: Executor, cpu: Executor, cuda0: Executor
) -> np.ndarray | torch.Tensor:
    """Move ``values`` along ``direction``; a source on CUDA is made with a plain .to() first."""
    if direction == "numpy->cuda":
        return dataplane.transfer(values, host, cuda0)
    if direction == "torch_cpu->cuda":
        return dataplane.transfer(torch.from_numpy(values.copy()), cpu, cuda0)
    on_device = torch.from_numpy(values).to("cuda:0")
    return dataplane.transfer(on_device, cuda0, host if direction == "cuda->numpy" else cpu)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("size", list(SIZES_BYTES))
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_cuda_transfers_are_bit_exact(
    random_bytes: np.ndarray, host: Executor, cpu: Executor, cuda0: Executor, direction: str, size: str, dtype: str
) -> None:
    nbytes = SIZES_BYTES[size] // np.dtype(dtype).itemsize * np.dtype(dtype).itemsize
    values = _host_values(random_bytes, dtype, nbytes)
    stager = dataplane.STAGER
    chunks_before, pinned_before = sum(stager.chunks.values()), stager.pinned_results
    moved = _move(direction, values, host, cpu, cuda0)
    if direction.endswith("cuda"):
        assert moved.device == torch.device("cuda:0")
    elif direction.endswith("numpy"):
        assert isinstance(moved, np.ndarray)
    else:
        assert isinstance(moved, torch.Tensor) and moved.device.type == "cpu"
    assert_bit_identical(moved, values)
    staged = sum(stager.chunks.values()) - chunks_before
    large = nbytes >= stager.small_bytes
    if direction.endswith("cuda"):  # uploads from pageable memory go through the ring
        assert staged == (stager.plan(nbytes).chunks if large else 0)
    else:  # downloads land in a pinned result (the default budget holds them)
        assert (staged, stager.pinned_results - pinned_before) == (0, 1 if large else 0)


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> dataplane.PinnedStager:
    """A stager with 4 KiB buffers, 1 KiB pieces and no pinned results, so odd sizes split
    elements across piece and chunk edges in both directions."""
    stager = dataplane.PinnedStager(4096, 1024, buffers=3, threads=4, piece_bytes=1024, pinned_result_bytes=0)
    monkeypatch.setattr(dataplane, "STAGER", stager)
    return stager


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("nbytes", [1024, 4096, 4096 + 8, 5 * 4096 - 8, 7 * 4096 + 24])
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_chunk_edges(
    small_chunks: dataplane.PinnedStager,
    random_bytes: np.ndarray,
    host: Executor,
    cpu: Executor,
    cuda0: Executor,
    direction: str,
    nbytes: int,
    dtype: str,
) -> None:
    itemsize = np.dtype(dtype).itemsize
    values = _host_values(random_bytes, dtype, nbytes // itemsize * itemsize)
    moved = _move(direction, values.reshape(-1, 1) if values.size % 2 else values.reshape(2, -1), host, cpu, cuda0)
    assert_bit_identical(moved, values.reshape(tuple(moved.shape)))
    assert sum(small_chunks.chunks.values()) == small_chunks.plan(values.nbytes).chunks


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_pinned_and_unusual_sources(
    small_chunks: dataplane.PinnedStager, cpu: Executor, host: Executor, cuda0: Executor
) -> None:
    values = bit_array("float64", 3000, seed=7).reshape(50, 60)
    pinned = torch.from_numpy(values).pin_memory()
    assert_bit_identical(dataplane.transfer(pinned, cpu, cuda0), values)
    assert small_chunks.chunks["h2d"] == 0  # pinned sources go directly

    read_only = values.copy()
    read_only.flags.writeable = False
    assert_bit_identical(dataplane.transfer(read_only, host, cuda0), values)
    assert_bit_identical(dataplane.transfer(values[::-1, ::3], host, cuda0), np.ascontiguousarray(values[::-1, ::3]))
    assert_bit_identical(dataplane.transfer(values.astype(">f8"), host, cuda0), values)
    transposed = torch.from_numpy(values.copy()).T
    assert_bit_identical(dataplane.transfer(transposed, cpu, cuda0), np.ascontiguousarray(values.T))
    on_device = torch.from_numpy(values).to("cuda:0").T
    assert_bit_identical(dataplane.transfer(on_device, cuda0, host), np.ascontiguousarray(values.T))
    for tiny in (np.zeros((0, 3), np.float32), np.array(2.5, np.float32)):
        assert_bit_identical(dataplane.transfer(tiny, host, cuda0), tiny)
        assert_bit_identical(dataplane.transfer(torch.from_numpy(tiny).cuda(), cuda0, host), tiny)
        # The stager itself, below its size threshold too.
        assert_bit_identical(small_chunks.to_device(tiny, torch.device("cuda:0")), tiny)
        assert_bit_identical(small_chunks.to_host(torch.from_numpy(tiny).cuda()), tiny)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_staged_results_are_ordered_on_a_side_stream(host: Executor, cuda0: Executor) -> None:
    """Results are usable on the caller's current stream, a non-default one included."""
    values = np.random.default_rng(8).standard_normal(16 * MIB).astype(np.float32)  # 64 MiB: staged
    reference = torch.from_numpy(values).to("cuda:0")
    side = torch.cuda.Stream(device="cuda:0")
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            moved = dataplane.transfer(values, host, cuda0)
            # Queued on the side stream right away, with no synchronization by the test.
            assert bool(torch.equal(moved, reference))
            # A kernel still running on the side stream must be finished before the copy back.
            doubled = moved * 2 + 1
            back = dataplane.transfer(doubled, cuda0, host)
            np.testing.assert_array_equal(back, values * 2 + 1)
    torch.cuda.synchronize()


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_executor_from_to_numpy_on_cuda_is_bit_exact(cuda0: Executor, random_bytes: np.ndarray) -> None:
    for dtype in ALL_DTYPES:
        values = _host_values(random_bytes, dtype, 8 * MIB)
        prim = cuda0.from_numpy(values)
        assert prim.device == torch.device("cuda:0")
        out = cuda0.to_numpy(prim)
        assert_bit_identical(out, values)
        assert not np.shares_memory(out, values)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA or torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_cuda_to_cuda(random_bytes: np.ndarray) -> None:
    cuda0, cuda1 = get_executor("torch", "cuda:0"), get_executor("torch", "cuda:1")
    for dtype in ALL_DTYPES:
        values = _host_values(random_bytes, dtype, 3 * MIB)
        moved = dataplane.transfer(torch.from_numpy(values).to("cuda:0"), cuda0, cuda1)
        assert moved.device == torch.device("cuda:1")
        assert_bit_identical(moved, values)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_numpy_view_of_pinned_memory_is_copied_without_staging() -> None:
    pinned = torch.empty(4 * dataplane.SMALL_BYTES, dtype=torch.uint8, pin_memory=True)
    array = pinned.numpy()
    array[:] = np.arange(array.size, dtype=np.uint64) % 251
    before = dict(dataplane.STAGER.chunks)
    moved = dataplane.host_to_device(array, "cuda:0")
    torch.cuda.synchronize()
    assert dataplane.STAGER.chunks == before
    assert np.array_equal(moved.cpu().numpy(), array)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_pinned_results_stay_within_their_budget(
    monkeypatch: pytest.MonkeyPatch, random_bytes: np.ndarray, host: Executor, cpu: Executor, cuda0: Executor
) -> None:
    import gc

    stager = dataplane.PinnedStager(1 << 20, 1 << 20, pinned_result_bytes=5 * MIB)
    monkeypatch.setattr(dataplane, "STAGER", stager)
    values = _host_values(random_bytes, "float32", 2 * MIB)
    on_device = torch.from_numpy(values).to("cuda:0")
    first = dataplane.transfer(on_device, cuda0, cpu)
    assert first.is_pinned() and stager.live_pinned_bytes == 2 * MIB
    second = dataplane.transfer(on_device, cuda0, host)
    assert stager.pinned_results == 2 and stager.chunks["d2h"] == 0
    third = dataplane.transfer(on_device, cuda0, host)  # over the budget: staged into ordinary memory
    assert stager.pinned_results == 2 and stager.chunks["d2h"] > 0
    for result in (first, second, third):
        assert_bit_identical(result, values)
    del first, second
    gc.collect()
    assert stager.live_pinned_bytes == 0
    fourth = dataplane.transfer(on_device, cuda0, host)
    assert stager.pinned_results == 3
    assert_bit_identical(fourth, values)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_concurrent_moves_from_several_threads(
    small_chunks: dataplane.PinnedStager, random_bytes: np.ndarray, host: Executor, cuda0: Executor
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def round_trip(seed: int) -> bool:
        values = _host_values(random_bytes[seed * 4096 :], "int32", 40_000 + 4 * seed)
        moved = dataplane.transfer(values, host, cuda0)
        return np.array_equal(dataplane.transfer(moved, cuda0, host), values)

    with ThreadPoolExecutor(6) as pool:
        assert all(pool.map(round_trip, range(24)))


def test_host_arrays_stay_shared_without_a_usable_gpu(monkeypatch: pytest.MonkeyPatch, host: Executor,
                                                      cpu: Executor) -> None:
    """Host pinning needs a real CUDA device: virtual devices (and machines without one) share the
    caller's array, as before."""
    from runtime_shim import virtual_devices

    stager = dataplane.PinnedStager(1 << 20, 1 << 20)
    monkeypatch.setattr(dataplane, "STAGER", stager)
    monkeypatch.setattr(dataplane, "PIN_HOST", True)
    values = np.arange(MIB, dtype=np.float32)  # 4 MiB: above this stager's staging threshold
    with virtual_devices():
        for ex in (host, cpu):
            prim = ex.from_numpy(values)
            assert np.shares_memory(prim if isinstance(prim, np.ndarray) else prim.numpy(), values)
    assert stager.pinned_hosts == 0
    if not HAS_CUDA:
        assert dataplane.pin_host(values) is values


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_large_host_arrays_are_created_pinned_on_request(monkeypatch: pytest.MonkeyPatch, random_bytes: np.ndarray,
                                              host: Executor, cpu: Executor, cuda0: Executor) -> None:
    import gc

    from runtime_shim import virtual_devices

    stager = dataplane.PinnedStager(1 << 20, 1 << 20, pinned_result_bytes=9 * MIB // 2)
    monkeypatch.setattr(dataplane, "STAGER", stager)
    monkeypatch.setattr(dataplane, "PIN_HOST", True)
    values = _host_values(random_bytes, "float32", 2 * MIB).reshape(2, -1)  # 2 MiB
    with virtual_devices(False):
        on_host, on_cpu = host.from_numpy(values), cpu.from_numpy(values)
        assert torch.from_numpy(on_host).is_pinned() and on_cpu.is_pinned()
        assert not np.shares_memory(on_host, values) and stager.pinned_hosts == 2
        for prim, src in ((on_host, host), (on_cpu, cpu)):
            assert_bit_identical(prim, values)
            assert_bit_identical(dataplane.transfer(prim, src, cuda0), values)
        assert stager.chunks["h2d"] == 0  # pinned at creation: each upload is one DMA
        assert not torch.from_numpy(host.from_numpy(values[:, ::2])).is_pinned()  # 1 MiB more: over the budget
        del on_host, on_cpu, prim  # the loop's last prim is on_cpu
        gc.collect()
        assert stager.live_pinned_bytes == 0
        monkeypatch.setattr(dataplane, "PIN_HOST", False)
        assert np.shares_memory(host.from_numpy(values), values)


@pytest.mark.parametrize("dtype", ["float16", "float64", "int8", "bool"])
@pytest.mark.parametrize("nbytes", [1024, 4096 + 8, 7 * 4096 + 24])
@pytest.mark.parametrize("direction", ["numpy->cuda", "torch_cpu->cuda"])
@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_block_uploads_split_at_chunk_edges(monkeypatch: pytest.MonkeyPatch, random_bytes: np.ndarray, host: Executor,
                                            cpu: Executor, cuda0: Executor, direction: str, nbytes: int,
                                            dtype: str) -> None:
    """Uploads from pageable memory through one pinned block, chunk by chunk, are bit-exact at
    odd sizes; with no pinned budget left they take the ring."""
    stager = dataplane.PinnedStager(4096, 1024, buffers=3, threads=4, piece_bytes=1024, pinned_result_bytes=1 << 20)
    monkeypatch.setattr(dataplane, "STAGER", stager)
    itemsize = np.dtype(dtype).itemsize
    values = _host_values(random_bytes, dtype, nbytes // itemsize * itemsize)
    moved = _move(direction, values, host, cpu, cuda0)
    assert_bit_identical(moved, values)
    assert stager.chunks["h2d"] == stager.plan(values.nbytes).chunks and stager.live_pinned_bytes == 0


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_dead_pinned_results_are_recycled(monkeypatch: pytest.MonkeyPatch, random_bytes: np.ndarray) -> None:
    """A pinned result's memory serves the next result of its size once no view of it is left,
    whatever the dtype; never while one is."""
    import gc

    stager = dataplane.PinnedStager(1 << 20, 1 << 20)
    monkeypatch.setattr(dataplane, "STAGER", stager)
    values = _host_values(random_bytes, "float32", 2 * MIB)
    on_device = torch.from_numpy(values).to("cuda:0")
    first = stager.to_host(on_device)
    address = first.__array_interface__["data"][0]
    view = first[10:]
    del first
    gc.collect()
    second = stager.to_host(on_device)  # the first is still viewed: new memory
    assert second.__array_interface__["data"][0] != address
    assert_bit_identical(view, values[10:])
    del view
    gc.collect()
    as_ints = stager.to_host(on_device.view(torch.int32))
    assert as_ints.__array_interface__["data"][0] == address
    assert_bit_identical(as_ints, values.view(np.int32))
    assert_bit_identical(second, values)


@pytest.mark.parametrize("source", ["numpy", "torch_cpu"])
@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_an_array_uploaded_again_is_registered_in_place_while_it_lives(
    monkeypatch: pytest.MonkeyPatch, random_bytes: np.ndarray, host: Executor, cpu: Executor, cuda0: Executor,
    source: str,
) -> None:
    """The first upload of a host array is staged; the second registers the array's memory and is one
    DMA, as are later ones and uploads of its views; when the uploaded object dies the registration
    ends (its memory, still viewed, is pageable again) and the budget is back."""
    import gc

    stager = dataplane.PinnedStager()
    monkeypatch.setattr(dataplane, "STAGER", stager)
    base = _host_values(random_bytes, "float32", 3 * dataplane.SMALL_BYTES)
    owner = base[:] if source == "numpy" else torch.from_numpy(base)
    executor = host if source == "numpy" else cpu
    moves = [dataplane.transfer(owner, executor, cuda0) for _ in range(3)]
    assert stager.chunks["h2d"] == stager.plan(base.nbytes).chunks  # the first upload only
    assert stager.pins.registered == 1 and stager.live_in_place_bytes == base.nbytes
    assert stager.live_pinned_bytes == 0  # its own budget: downloads keep theirs
    view = base[1:] if source == "numpy" else torch.from_numpy(base)[1:]
    moves.append(dataplane.transfer(view, executor, cuda0))
    assert stager.chunks["h2d"] == stager.plan(base.nbytes).chunks
    for moved in moves[:3]:
        assert_bit_identical(moved, base)
    assert_bit_identical(moves[3], base[1:])
    del owner, view, moves
    gc.collect()
    assert stager.pins.unregistered == 1 and stager.live_in_place_bytes == 0
    assert not torch.from_numpy(base).is_pinned()
    assert_bit_identical(dataplane.transfer(base, host, cuda0), base)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_registrations_stay_within_their_own_budget(
    monkeypatch: pytest.MonkeyPatch, random_bytes: np.ndarray, host: Executor, cuda0: Executor
) -> None:
    """An array larger than what may be registered in place is staged at every upload."""
    stager = dataplane.PinnedStager(pinned_in_place_bytes=dataplane.SMALL_BYTES)
    monkeypatch.setattr(dataplane, "STAGER", stager)
    values = _host_values(random_bytes, "float32", 2 * dataplane.SMALL_BYTES)
    for _ in range(3):
        assert_bit_identical(dataplane.transfer(values, host, cuda0), values)
    assert stager.pins.registered == 0 and stager.chunks["h2d"] == 3 * stager.plan(values.nbytes).chunks
