"""Move bandwidth: runtime_shim's ``Tensor.to_device`` against raw torch copies, in the same run.

What it measures
    For float32 tensors of 1, 4, 16, 64, 256 and 1024 MiB (``--max-mb`` caps the size), the
    wall-clock time of one move, with ``torch.cuda.synchronize()`` before the clock starts and
    after the move on every device involved, so queued copies are counted. Each row reports the
    median over N repeats (N adapts to the size: about ``--seconds-per-row`` seconds a row, at
    least 5, at most 200) after two warm-up moves, as GB/s (10^9 bytes per second), for
    runtime_shim and for raw torch, and their ratio (shim / raw: 1.0 is parity, lower is slower).
    runtime_shim and raw moves alternate within a row, so both see the same machine state.

    * host→GPU: a ``Device.cpu()`` tensor ``.to_device(Device.cuda(0))``, against raw
      ``torch.from_numpy(a).to('cuda', non_blocking=True)`` where ``a`` is pinned (the numpy view
      of ``torch.empty(n, pin_memory=True)``, built once);
    * host (pinned)→GPU: the same, the Cpu tensor made from that pinned ``a``;
    * numpy→GPU: a ``Device.flex()`` tensor ``.to_device(Device.cuda(0))``, same baseline;
    * GPU→host and GPU→numpy: a ``Device.cuda(0)`` tensor ``.to_device(Device.cpu())`` or
      ``.to_device(Device.flex())``, against raw ``x.cpu().numpy()``;
    * GPU→GPU, only with 2+ GPUs: ``Device.cuda(0)`` → ``Device.cuda(1)``, against ``x.to('cuda:1')``.

    The "reference" column gives context the ratio does not: for moves to the GPU, raw torch from
    the same *pageable* numpy array runtime_shim starts from; for moves to the host, raw torch into
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
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: runtime_shim without installing

import numpy as np  # noqa: E402
import torch  # noqa: E402

import runtime_shim as rs  # noqa: E402
from bench.common import cuda_count, environment, markdown_table, write_json  # noqa: E402
from runtime_shim.dataplane import STAGER  # noqa: E402

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
    for fn in variants.values():
        estimate += [timed(fn, case.sync) for _ in range(WARMUP)][-1]
    moved = case.shim()
    case.sync()
    if not np.array_equal(moved.to_numpy(), case.expected):
        raise AssertionError(f"{case.move}: runtime_shim moved wrong values")
    del moved
    repeats = max(min_repeats, min(MAX_REPEATS, int(seconds_per_row / max(estimate, 1e-9))))
    times: dict[str, list[float]] = {name: [] for name in variants}
    chunks_before = sum(STAGER.chunks.values())
    for _ in range(repeats):
        for name, fn in variants.items():
            times[name].append(timed(fn, case.sync))
    staged = (sum(STAGER.chunks.values()) - chunks_before) / repeats
    row: dict[str, Any] = {"move": case.move, "mib": nbytes // MIB, "bytes": nbytes, "repeats": repeats,
                           "staged_chunks_per_move": staged}
    for name, samples in times.items():
        median = statistics.median(samples)
        row[name] = {"median_s": median, "min_s": min(samples), "max_s": max(samples), "gbps": nbytes / median / 1e9}
    row["ratio"] = row["shim"]["gbps"] / row["raw"]["gbps"]
    if case.reference is not None:
        row["reference"]["name"] = case.reference[0]
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
    on_cpu = rs.Tensor.from_data(host, cpu)
    on_cpu_pinned = rs.Tensor.from_data(pinned_np, cpu)
    on_flex = rs.Tensor.from_data(host, flex)
    on_gpu = rs.Tensor.from_data(host, cuda0)
    raw_gpu = torch.from_numpy(pinned_np).to("cuda:0")
    sync0 = synchronizer(0)

    def raw_to_gpu() -> torch.Tensor:
        return torch.from_numpy(pinned_np).to("cuda:0", non_blocking=True)

    def raw_to_host() -> np.ndarray:
        return raw_gpu.cpu().numpy()

    to_gpu_reference = ("pageable src", lambda: torch.from_numpy(host).to("cuda:0"))
    to_host_reference = ("pinned dst", lambda: pinned_dst.copy_(raw_gpu, non_blocking=True))
    cases = [
        Case("host→GPU", lambda: on_cpu.to_device(cuda0), raw_to_gpu, sync0, host, to_gpu_reference),
        Case("host (pinned)→GPU", lambda: on_cpu_pinned.to_device(cuda0), raw_to_gpu, sync0, host),
        Case("numpy→GPU", lambda: on_flex.to_device(cuda0), raw_to_gpu, sync0, host, to_gpu_reference),
        Case("GPU→host", lambda: on_gpu.to_device(cpu), raw_to_host, sync0, host, to_host_reference),
        Case("GPU→numpy", lambda: on_gpu.to_device(flex), raw_to_host, sync0, host, to_host_reference),
    ]
    if cuda_count() >= 2:
        cuda1 = rs.Device.cuda(1)
        cases.append(Case("GPU→GPU", lambda: on_gpu.to_device(cuda1), lambda: raw_gpu.to("cuda:1"),
                          synchronizer(0, 1), host))
    return cases


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

    return markdown_table(
        ["move", "MiB", "shim GB/s", "raw GB/s", "shim/raw", "reference GB/s", "staged chunks", "n",
         "shim ms", "raw ms"],
        [[r["move"], r["mib"], f"{r['shim']['gbps']:.2f}", f"{r['raw']['gbps']:.2f}", f"{r['ratio']:.2f}",
          reference(r), f"{r['staged_chunks_per_move']:g}", r["repeats"], f"{r['shim']['median_s'] * 1e3:.3f}",
          f"{r['raw']['median_s'] * 1e3:.3f}"] for r in rows],
    )


def summary(rows: list[dict[str, Any]]) -> str:
    """The ratios at the largest size measured, one per move."""
    largest = max(r["mib"] for r in rows)
    parts = [f"{r['move']} {r['ratio']:.2f}x ({r['shim']['gbps']:.1f} vs {r['raw']['gbps']:.1f} GB/s)"
             for r in rows if r["mib"] == largest]
    return f"move bandwidth at {largest} MiB, shim/raw: " + "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-mb", type=int, default=1024, help="largest tensor size in MiB (default 1024)")
    parser.add_argument("--quick", action="store_true", help="tiny CPU smoke run of the host paths")
    parser.add_argument("--seconds-per-row", type=float, default=1.0,
                        help="timing budget of one row, which sets its repeat count (default 1.0)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    rs.set_virtual(False)  # real devices only: a virtual Cuda(0) would be a CPU
    sizes = [mb for mb in (QUICK_SIZES_MB if args.quick else SIZES_MB) if mb <= args.max_mb]
    payload: dict[str, Any] = {"benchmark": "move_bandwidth", "environment": environment(),
                               "stager": {"chunk_bytes": STAGER.chunk_bytes, "small_bytes": STAGER.small_bytes}}
    print("# Move bandwidth: runtime_shim to_device vs raw torch")
    print(f"torch {torch.__version__}, CUDA devices: {payload['environment']['cuda_devices'] or 'none'}")
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
            rows.append(measure(case, nbytes, seconds_per_row, min_repeats))
            print(f"  measured {case.move} {mb} MiB", file=sys.stderr)
    payload["rows"] = rows
    payload["summary"] = summary(rows)
    print()
    print(table(rows))
    print()
    print(payload["summary"])
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
