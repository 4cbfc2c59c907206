"""Move bandwidth: runtime_shim's ``Tensor.to_device`` against raw torch copies, in the same run.

What it measures
    For float32 tensors of 1, 4, 16, 64, 256 and 1024 MiB (``--max-mb`` caps the size), the
    wall-clock time of one move, with ``torch.cuda.synchronize()`` before the clock starts and
    after the move on every device involved, so queued copies are counted. Each row reports the
    median over N repeats (N adapts to the size: about ``--seconds-per-row`` seconds a row, at
    least 5, at most 200) after two warm-up moves, as GB/s (10^9 bytes per second), for
    runtime_shim and for raw torch, and their ratio (shim / raw: 1.0 is parity, lower is slower).
    runtime_shim and raw moves alternate within a row, so both see the same machine state.

    * host→GPU: a ``Device.cpu()`` tensor made by ``from_data`` of a pageable array with host
      pinning on (``RUNTIME_SHIM_PIN_HOST=1``: pinned at creation) ``.to_device(Device.cuda(0))``,
      against raw ``torch.from_numpy(a).to('cuda', non_blocking=True)`` where ``a`` is pinned (the
      numpy view of ``torch.empty(n, pin_memory=True)``, built once);
    * host (pinned)→GPU: the same, the Cpu tensor made from that pinned ``a``;
    * numpy→GPU: a ``Device.flex()`` tensor made the same way, same baseline;
    * host (pageable)→GPU and numpy (pageable)→GPU: the same with host pinning off (the default),
      each from its own array: the first upload is staged, the second registers the array in place
      (``runtime_shim.host_pins``), so the rows measure an array uploaded again and again;
    * host (pageable, first upload)→GPU and numpy (pageable, first upload)→GPU: every move uploads
      an array object runtime_shim has not seen (a new Cpu tensor, or a new numpy view, over the
      same never-registered memory, made inside the timed call: about 0.02 ms), so every move is
      staged, as a result of an operation uploaded once would be;
    * GPU→host and GPU→numpy: a ``Device.cuda(0)`` tensor ``.to_device(Device.cpu())`` or
      ``.to_device(Device.flex())``, against raw ``x.cpu().numpy()``;
    * GPU→GPU, only with 2+ GPUs: ``Device.cuda(0)`` → ``Device.cuda(1)``, against ``x.to('cuda:1')``.

    The "reference" column gives context the ratio does not: for moves to the GPU, raw torch from
    a *pageable* numpy array with the same values (never registered); for moves to the host, raw torch into
    a preallocated pinned buffer (the DMA ceiling). Raw ``x.cpu()`` writes freshly allocated
    pageable memory on every move, so on hosts where first-touch page faults are slow (VMs; torch's
    CPU allocator asks for no huge pages unless ``THP_MEM_ALLOC_ENABLE=1``) that baseline measures
    the faults more than the copy: read GPU→host ratios next to the pinned reference. "staged
    chunks" counts the chunks each shim move sent through ``runtime_shim.dataplane.STAGER`` (0: a
    direct copy). Every shim move's values are checked against the source once per row.

    Without a CUDA device the GPU rows are skipped with a message. ``--quick`` runs, instead, a tiny
    CPU smoke run of the host paths (Flex→Cpu, Cpu→Flex, both zero-copy: there GB/s only shows
    per-call overhead), so the script can be tested without a GPU. runtime_shim runs in real mode
    whatever ``RUNTIME_SHIM_VIRTUAL`` says.

Reproduce
    python bench/move_bandwidth.py --json bench-results/move_bandwidth.json   # on a CUDA machine
    python bench/move_bandwidth.py --quick                                    # anywhere
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: runtime_shim without installing

import numpy as np  # noqa: E402
import torch  # noqa: E402

import runtime_shim as rs  # noqa: E402
from bench.common import cuda_count, environment, markdown_table, write_json  # noqa: E402
from runtime_shim import dataplane  # noqa: E402

SIZES_MB = (1, 4, 16, 64, 256, 1024)
QUICK_SIZES_MB = (1, 4)
MIB = 1 << 20
WARMUP = 2
MIN_REPEATS, MAX_REPEATS = 5, 200
QUICK_MIN_REPEATS, QUICK_SECONDS_PER_ROW = 3, 0.05


@dataclass
class Case:
    """One row: a runtime_shim move, its raw torch baseline and optionally a context reference."""

    move: str
    shim: Callable[[], rs.Tensor]
    raw: Callable[[], Any]
    sync: Callable[[], None]
    expected: np.ndarray
    reference: tuple[str, Callable[[], Any]] | None = None
    #: which variant is the pinned-copy ceiling of this direction: "raw" (uploads, from pinned
    #: memory) or "reference" (downloads, into a preallocated pinned buffer)
    ceiling: str | None = None


def timed(fn: Callable[[], Any], sync: Callable[[], None]) -> float:
    """Seconds for one call of ``fn``, synchronized before and after."""
    sync()
    start = time.perf_counter()
    result = fn()
    sync()
    elapsed = time.perf_counter() - start
    del result  # freed after the clock stops: freeing a GiB of host memory is no part of a move
    return elapsed


def measure(case: Case, nbytes: int, seconds_per_row: float, min_repeats: int) -> dict[str, Any]:
    """Warm up, check the shim's values, then time shim, raw and reference moves alternately."""
    variants: dict[str, Callable[[], Any]] = {"shim": case.shim, "raw": case.raw}
    if case.reference is not None:
        variants["reference"] = case.reference[1]
    estimate = 0.0  # seconds one round of all variants takes, from the last warm-up round
    first: dict[str, float] = {}
    for name, fn in variants.items():
        warmups = [timed(fn, case.sync) for _ in range(WARMUP)]
        first[name] = warmups[0]
        estimate += warmups[-1]
    moved = case.shim()
    case.sync()
    if not np.array_equal(moved.to_numpy(), case.expected):
        raise AssertionError(f"{case.move}: runtime_shim moved wrong values")
    del moved
    repeats = max(min_repeats, min(MAX_REPEATS, int(seconds_per_row / max(estimate, 1e-9))))
    times: dict[str, list[float]] = {name: [] for name in variants}
    stager = dataplane.STAGER
    chunks_before, pinned_before = sum(stager.chunks.values()), stager.pinned_results
    for _ in range(repeats):
        for name, fn in variants.items():
            times[name].append(timed(fn, case.sync))
    staged = (sum(stager.chunks.values()) - chunks_before) / repeats
    pinned = (stager.pinned_results - pinned_before) / repeats
    row: dict[str, Any] = {"move": case.move, "mib": nbytes // MIB, "bytes": nbytes, "repeats": repeats,
                           "staged_chunks_per_move": staged, "pinned_results_per_move": pinned}
    for name, samples in times.items():
        median = statistics.median(samples)
        row[name] = {"median_s": median, "min_s": min(samples), "max_s": max(samples), "gbps": nbytes / median / 1e9}
    for name in variants:
        row[name]["first_s"] = first[name]
    row["ratio"] = row["shim"]["gbps"] / row["raw"]["gbps"]
    if case.reference is not None:
        row["reference"]["name"] = case.reference[0]
    if case.ceiling is not None:
        row["ceiling"] = {"variant": case.ceiling, "gbps": row[case.ceiling]["gbps"]}
        row["ceiling_ratio"] = row["shim"]["gbps"] / row[case.ceiling]["gbps"]
    return row


def synchronizer(*indices: int) -> Callable[[], None]:
    def sync() -> None:
        for index in indices:
            torch.cuda.synchronize(index)

    return sync


def no_sync() -> None:
    """Host-only moves have nothing queued."""


def cuda_cases(nbytes: int) -> list[Case]:
    """The GPU rows for one size (and their sources, built once)."""
    n = nbytes // 4
    host = np.arange(n, dtype=np.float32)
    pinned = torch.empty(n, dtype=torch.float32, pin_memory=True)
    pinned_np = pinned.numpy()
    pinned_np[...] = host
    pinned_dst = torch.empty(n, dtype=torch.float32, pin_memory=True)
    cuda0, cpu, flex = rs.Device.cuda(0), rs.Device.cpu(), rs.Device.flex()
    with host_pinning(True):  # created from pageable data, pinned at creation (RUNTIME_SHIM_PIN_HOST=1)
        on_cpu = rs.Tensor.from_data(host, cpu)
        on_flex = rs.Tensor.from_data(host, flex)
    on_cpu_pinned = rs.Tensor.from_data(pinned_np, cpu)
    with host_pinning(False):  # sources that stayed in pageable memory (the default), one array each
        on_cpu_pageable = rs.Tensor.from_data(host.copy(), cpu)
        on_flex_pageable = rs.Tensor.from_data(host.copy(), flex)
    host_once, host_ref = host.copy(), host.copy()
    on_gpu = rs.Tensor.from_data(host, cuda0)
    raw_gpu = torch.from_numpy(pinned_np).to("cuda:0")
    sync0 = synchronizer(0)

    def raw_to_gpu() -> torch.Tensor:
        return torch.from_numpy(pinned_np).to("cuda:0", non_blocking=True)

    def raw_to_host() -> np.ndarray:
        return raw_gpu.cpu().numpy()

    def upload_once(device: rs.Device) -> rs.Tensor:
        with host_pinning(False):  # a new object over host_once's memory: a first upload every time
            return rs.Tensor.from_data(host_once[:], device).to_device(cuda0)

    to_gpu_reference = ("pageable src", lambda: torch.from_numpy(host_ref).to("cuda:0"))
    to_host_reference = ("pinned dst", lambda: pinned_dst.copy_(raw_gpu, non_blocking=True))
    cases = [
        Case("host→GPU", lambda: on_cpu.to_device(cuda0), raw_to_gpu, sync0, host, to_gpu_reference, "raw"),
        Case("host (pinned)→GPU", lambda: on_cpu_pinned.to_device(cuda0), raw_to_gpu, sync0, host, None, "raw"),
        Case("numpy→GPU", lambda: on_flex.to_device(cuda0), raw_to_gpu, sync0, host, to_gpu_reference, "raw"),
        Case("host (pageable)→GPU", lambda: on_cpu_pageable.to_device(cuda0), raw_to_gpu, sync0, host,
             to_gpu_reference, "raw"),
        Case("numpy (pageable)→GPU", lambda: on_flex_pageable.to_device(cuda0), raw_to_gpu, sync0, host,
             to_gpu_reference, "raw"),
        Case("host (pageable, first upload)→GPU", lambda: upload_once(cpu), raw_to_gpu, sync0, host,
             to_gpu_reference, "raw"),
        Case("numpy (pageable, first upload)→GPU", lambda: upload_once(flex), raw_to_gpu, sync0, host,
             to_gpu_reference, "raw"),
        Case("GPU→host", lambda: on_gpu.to_device(cpu), raw_to_host, sync0, host, to_host_reference, "reference"),
        Case("GPU→numpy", lambda: on_gpu.to_device(flex), raw_to_host, sync0, host, to_host_reference,
             "reference"),
    ]
    if cuda_count() >= 2:
        cuda1 = rs.Device.cuda(1)
        cases.append(Case("GPU→GPU", lambda: on_gpu.to_device(cuda1), lambda: raw_gpu.to("cuda:1"),
                          synchronizer(0, 1), host))
    return cases


@contextlib.contextmanager
def host_pinning(enabled: bool) -> Iterator[None]:
    """Creations inside the block copy large host arrays into pinned memory (or not)."""
    previous = dataplane.PIN_HOST
    dataplane.PIN_HOST = enabled
    try:
        yield
    finally:
        dataplane.PIN_HOST = previous


def creation_costs(sizes_mb: list[int], repeats: int) -> list[dict[str, Any]]:
    """What pinning at creation costs and what it saves: the median time of ``Tensor.from_data``
    from a pageable numpy array on Cpu and Flex, and of that creation followed by one move to
    Cuda(0) (the whole cost of a one-shot upload), with host pinning on and off."""
    cuda0 = rs.Device.cuda(0)
    sync = synchronizer(0)
    rows = []
    for mb in sizes_mb:
        nbytes = mb * MIB
        host = np.arange(nbytes // 4, dtype=np.float32)
        for name, device in (("Cpu", rs.Device.cpu()), ("Flex", rs.Device.flex())):
            row: dict[str, Any] = {"backend": name, "mib": mb, "repeats": repeats}
            for pinned in (True, False):
                with host_pinning(pinned):
                    create = functools.partial(rs.Tensor.from_data, host, device)
                    both = functools.partial(_create_and_upload, host, device, cuda0)
                    for fn in (create, both):
                        for _ in range(WARMUP):
                            timed(fn, sync)
                    create_s = statistics.median(timed(create, sync) for _ in range(repeats))
                    both_s = statistics.median(timed(both, sync) for _ in range(repeats))
                key = "pinned" if pinned else "pageable"
                row[key] = {"create_ms": create_s * 1e3, "create_and_upload_ms": both_s * 1e3}
            rows.append(row)
    return rows


def _create_and_upload(host: np.ndarray, device: rs.Device, target: rs.Device) -> rs.Tensor:
    return rs.Tensor.from_data(host, device).to_device(target)


def creation_table(rows: list[dict[str, Any]]) -> str:
    return markdown_table(
        ["backend", "MiB", "from_data ms (pinned / pageable)", "from_data + to Cuda(0) ms (pinned / pageable)", "n"],
        [[r["backend"], r["mib"], f"{r['pinned']['create_ms']:.2f} / {r['pageable']['create_ms']:.2f}",
          f"{r['pinned']['create_and_upload_ms']:.2f} / {r['pageable']['create_and_upload_ms']:.2f}", r["repeats"]]
         for r in rows],
    )


def cpu_cases(nbytes: int) -> list[Case]:
    """The --quick rows: host moves between the numpy and torch CPU backends (zero-copy)."""
    host = np.arange(nbytes // 4, dtype=np.float32)
    raw_cpu = torch.from_numpy(host)
    cpu, flex = rs.Device.cpu(), rs.Device.flex()
    on_flex, on_cpu = rs.Tensor.from_data(host, flex), rs.Tensor.from_data(host, cpu)
    return [
        Case("numpy→host", lambda: on_flex.to_device(cpu), lambda: torch.from_numpy(host), no_sync, host),
        Case("host→numpy", lambda: on_cpu.to_device(flex), raw_cpu.numpy, no_sync, host),
    ]


def table(rows: list[dict[str, Any]]) -> str:
    def reference(row: dict[str, Any]) -> str:
        ref = row.get("reference")
        return f"{ref['name']} {ref['gbps']:.2f}" if ref else "—"

    def path(row: dict[str, Any]) -> str:
        if row.get("pinned_results_per_move"):
            return "pinned result"
        return f"{row['staged_chunks_per_move']:g} chunks" if row["staged_chunks_per_move"] else "direct"

    def ceiling(row: dict[str, Any]) -> str:
        return f"{row['ceiling_ratio']:.2f}" if "ceiling_ratio" in row else "—"

    return markdown_table(
        ["move", "MiB", "shim GB/s", "raw GB/s", "shim/raw", "reference GB/s", "shim/pinned ceiling",
         "shim path", "n", "shim ms", "raw ms", "first shim ms"],
        [[r["move"], r["mib"], f"{r['shim']['gbps']:.2f}", f"{r['raw']['gbps']:.2f}", f"{r['ratio']:.2f}",
          reference(r), ceiling(r), path(r), r["repeats"],
          f"{r['shim']['median_s'] * 1e3:.3f}", f"{r['raw']['median_s'] * 1e3:.3f}",
          f"{r['shim']['first_s'] * 1e3:.3f}"] for r in rows],
    )


def summary(rows: list[dict[str, Any]]) -> str:
    """The ratios at the largest size measured, one per move."""
    largest = max(r["mib"] for r in rows)
    parts = [f"{r['move']} {r['ratio']:.2f}x ({r['shim']['gbps']:.1f} vs {r['raw']['gbps']:.1f} GB/s"
             + (f", {r['ceiling_ratio']:.2f} of the pinned ceiling)" if "ceiling_ratio" in r else ")")
             for r in rows if r["mib"] == largest]
    return f"move bandwidth at {largest} MiB, shim/raw: " + "; ".join(parts)


STAGER_KEYS = {"threads": 1, "buffers": 1, "buffer_mb": MIB, "min_chunks": 1, "piece_kb": 1024,
               "pinned_result_mb": MIB, "small_mb": MIB, "block_uploads": 1,
               "block_upload_mb": MIB, "recycle": 1, "pin_repeated": 1,
               "in_place_mb": MIB}


def stager_from(spec: str) -> dataplane.PinnedStager:
    """A stager from ``key=value,...`` (keys: STAGER_KEYS; sizes in the unit their name says)."""
    options: dict[str, int] = {}
    for item in filter(None, spec.split(",")):
        key, _, value = item.partition("=")
        if key not in STAGER_KEYS or not value.isdigit():
            raise SystemExit(f"--stager: expected key=integer with key in {sorted(STAGER_KEYS)}, got {item!r}")
        options[key] = int(value) * STAGER_KEYS[key]
    return dataplane.PinnedStager(
        options.get("buffer_mb", dataplane.BUFFER_BYTES), options.get("small_mb", dataplane.SMALL_BYTES),
        buffers=options.get("buffers", dataplane.BUFFERS), threads=options.get("threads", dataplane.STAGER.threads),
        min_chunks=options.get("min_chunks", dataplane.MIN_CHUNKS),
        piece_bytes=options.get("piece_kb", dataplane.STAGER.piece_bytes),
        pinned_result_bytes=options.get("pinned_result_mb"),
        block_uploads=bool(options.get("block_uploads", dataplane.STAGER.block_uploads)),
        block_upload_bytes=options.get("block_upload_mb", dataplane.STAGER.block_upload_bytes),
        recycle_results=bool(options.get("recycle", dataplane.STAGER.recycle_results)),
        pin_repeated=bool(options.get("pin_repeated", dataplane.STAGER.pin_repeated)),
        pinned_in_place_bytes=options.get("in_place_mb"))


def stager_settings(stager: dataplane.PinnedStager) -> dict[str, int]:
    return {"buffer_bytes": stager.buffer_bytes, "buffers": stager.buffers, "threads": stager.threads,
            "min_chunks": stager.min_chunks, "piece_bytes": stager.piece_bytes,
            "pinned_result_bytes": stager.pinned_result_bytes, "small_bytes": stager.small_bytes,
            "block_uploads": int(stager.block_uploads), "block_upload_bytes": stager.block_upload_bytes,
            "recycle": int(stager.recycle_results), "pin_repeated": int(stager.pin_repeated),
            "pinned_in_place_bytes": stager.pinned_in_place_bytes}


SMALL_SIZES = (4 << 10, 64 << 10, 1 << 20)


def small_pairs(host: np.ndarray) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """(runtime_shim move, raw torch move from the same pageable memory) per direction."""
    cuda0, cpu, flex = rs.Device.cuda(0), rs.Device.cpu(), rs.Device.flex()
    raw_gpu = torch.from_numpy(host).to("cuda:0")
    on_cpu, on_flex = rs.Tensor.from_data(host, cpu), rs.Tensor.from_data(host, flex)
    on_gpu = rs.Tensor.from_data(host, cuda0)
    return {
        "host→GPU": (lambda: on_cpu.to_device(cuda0), lambda: torch.from_numpy(host).to("cuda:0")),
        "numpy→GPU": (lambda: on_flex.to_device(cuda0), lambda: torch.from_numpy(host).to("cuda:0")),
        "GPU→host": (lambda: on_gpu.to_device(cpu), lambda: raw_gpu.cpu()),
        "GPU→numpy": (lambda: on_gpu.to_device(flex), lambda: raw_gpu.cpu().numpy()),
    }


def small_overheads(repeats: int) -> list[dict[str, Any]]:
    """Microseconds per move for small tensors, runtime_shim against raw torch from the same
    pageable memory (what a move of that size costs either way; median of ``repeats``)."""
    rows = []
    sync = synchronizer(0)
    for nbytes in SMALL_SIZES:
        host = np.arange(nbytes // 4, dtype=np.float32)
        for move, (shim, raw) in small_pairs(host).items():
            if not np.array_equal(shim().to_numpy(), host):
                raise AssertionError(f"{move}: runtime_shim moved wrong values")
            samples: dict[str, list[float]] = {"shim": [], "raw": []}
            for _ in range(WARMUP):
                timed(shim, sync), timed(raw, sync)
            for _ in range(repeats):  # alternating, so both see the same machine state
                samples["shim"].append(timed(shim, sync))
                samples["raw"].append(timed(raw, sync))
            shim_us, raw_us = (statistics.median(samples[k]) * 1e6 for k in ("shim", "raw"))
            rows.append({"move": move, "bytes": nbytes, "repeats": repeats, "shim_us": shim_us, "raw_us": raw_us,
                         "added_us": shim_us - raw_us})
    return rows


def small_table(rows: list[dict[str, Any]]) -> str:
    return markdown_table(
        ["move", "KiB", "shim µs", "raw µs", "added µs", "n"],
        [[r["move"], r["bytes"] // 1024, f"{r['shim_us']:.1f}", f"{r['raw_us']:.1f}", f"{r['added_us']:+.1f}",
          r["repeats"]] for r in rows],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-mb", type=int, default=1024, help="largest tensor size in MiB (default 1024)")
    parser.add_argument("--sizes", help="comma-separated tensor sizes in MiB instead of the default list")
    parser.add_argument("--quick", action="store_true", help="tiny CPU smoke run of the host paths")
    parser.add_argument("--seconds-per-row", type=float, default=1.0,
                        help="timing budget of one row, which sets its repeat count (default 1.0)")
    parser.add_argument("--small", type=int, default=0, metavar="N",
                        help="also time N moves of 4 KiB, 64 KiB and 1 MiB each: µs per move against raw torch")
    parser.add_argument("--stager", default="", metavar="KEY=N,...",
                        help=f"measure a stager with these settings ({', '.join(STAGER_KEYS)})")
    parser.add_argument("--moves", help="comma-separated moves to measure (e.g. 'host→GPU,numpy→GPU'); default all")
    parser.add_argument("--creation", type=int, default=0, metavar="N",
                        help="also time N creations from pageable data, with host pinning on and off, alone "
                             "and followed by one upload (what pinning at creation costs)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    wanted = set(args.moves.split(",")) if args.moves else None
    rs.set_virtual(False)  # real devices only: a virtual Cuda(0) would be a CPU
    if args.stager:
        dataplane.STAGER = stager_from(args.stager)
    try:
        chosen = [int(mb) for mb in args.sizes.split(",")] if args.sizes else None
    except ValueError:
        raise SystemExit(f"--sizes: expected MiB as integers separated by commas, got {args.sizes!r}") from None
    sizes = chosen or [mb for mb in (QUICK_SIZES_MB if args.quick else SIZES_MB) if mb <= args.max_mb]
    payload: dict[str, Any] = {"benchmark": "move_bandwidth", "environment": environment(),
                               "stager": stager_settings(dataplane.STAGER)}
    print("# Move bandwidth: runtime_shim to_device vs raw torch")
    print(f"torch {torch.__version__}, CUDA devices: {payload['environment']['cuda_devices'] or 'none'}")
    print("stager: " + ", ".join(f"{k} {v}" for k, v in payload["stager"].items()))
    if not args.quick and cuda_count() == 0:
        payload["skipped"] = payload["summary"] = (
            "move bandwidth: skipped, no CUDA device (torch.cuda.is_available() is False); "
            "--quick runs the CPU paths")
        write_json(args.json, payload)
        print(payload["summary"])
        return 0
    seconds_per_row, min_repeats = ((QUICK_SECONDS_PER_ROW, QUICK_MIN_REPEATS) if args.quick
                                    else (args.seconds_per_row, MIN_REPEATS))
    rows = []
    for mb in sizes:
        nbytes = mb * MIB
        for case in cpu_cases(nbytes) if args.quick else cuda_cases(nbytes):
            if wanted is not None and case.move not in wanted:
                continue
            rows.append(measure(case, nbytes, seconds_per_row, min_repeats))
            print(f"  measured {case.move} {mb} MiB", file=sys.stderr)
    payload["rows"] = rows
    payload["summary"] = summary(rows)
    print()
    print(table(rows))
    if args.small and not args.quick:
        payload["small"] = small_overheads(args.small)
        print()
        print(small_table(payload["small"]))
    if args.creation and not args.quick:
        payload["creation"] = creation_costs(sizes, args.creation)
        print()
        print(creation_table(payload["creation"]))
    print()
    print(payload["summary"])
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
