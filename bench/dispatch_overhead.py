"""Dispatch overhead per operation: runtime_shim against the raw library that executes it, in the same run.

What it measures
    The wall-clock time of one call of add, mul, matmul, exp, relu, sum and to_device (to the
    tensor's own device) on small float32 tensors (``--size`` x ``--size``, default 8 x 8), where
    the op itself costs next to nothing, so the difference is runtime_shim's per-call overhead:

    * Cpu: ``Device.cpu()`` tensors against raw torch CPU tensors;
    * Flex: ``Device.flex()`` tensors against raw numpy arrays;
    * Cuda(0): ``Device.cuda(0)`` tensors against raw torch CUDA tensors, both synchronized once at
      the end of each batch (skipped, with a message, without a CUDA device);
    * Autodiff(Cpu): ``Device.cpu().autodiff()`` leaves marked ``require_grad()`` against torch
      tensors with ``requires_grad=True`` (both record the op for backward).

    One batch is ``--batch`` calls of one op timed together with ``time.perf_counter_ns``; after
    warm-up batches, runtime_shim and raw batches alternate, ``--batches`` of each. Each side's
    time per op is the median of the per-batch means; "added" is runtime_shim's minus raw's, and
    the goal is at most 5 µs added per op. Python's garbage collector stays on, as in real use.

    Real mode by default (``Cuda(0)`` is the GPU); ``--virtual`` runs in virtual mode, where every
    device exists and ``Cuda(0)`` executes with torch on the CPU, so its baseline is torch CPU.
    ``--cprofile N`` then profiles one more pass of runtime_shim's batches and prints the N
    functions with the most internal time to stderr.

Reproduce
    python bench/dispatch_overhead.py --json bench-results/dispatch_overhead.json
    python bench/dispatch_overhead.py --quick            # a few seconds, CPU routes
    python bench/dispatch_overhead.py --cprofile 25      # hot spots of the dispatch path
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: runtime_shim without installing

import numpy as np  # noqa: E402
import torch  # noqa: E402

import runtime_shim as rs  # noqa: E402
from bench.common import cuda_count, environment, markdown_table, write_json  # noqa: E402

OPS = ("add", "mul", "matmul", "exp", "relu", "sum", "to_device")
GOAL_US = 5.0
WARMUP_BATCHES = 5
Calls = dict[str, Callable[[], Any]]


@dataclass
class Route:
    """One device of runtime_shim and the raw library calls it is compared with."""

    name: str
    baseline: str
    shim: Calls
    raw: Calls
    sync: Callable[[], None] = field(default=lambda: None)


def operands(size: int) -> tuple[np.ndarray, np.ndarray]:
    data = np.random.default_rng(0).random((2, size, size), dtype=np.float32)
    return data[0], data[1]


def shim_calls(device: rs.Device, size: int) -> Calls:
    x, y = operands(size)
    a, b = rs.Tensor.from_data(x, device), rs.Tensor.from_data(y, device)
    if device.is_autodiff():
        a, b = a.require_grad(), b.require_grad()
    return {"add": lambda: a.add(b), "mul": lambda: a.mul(b), "matmul": lambda: a.matmul(b),
            "exp": lambda: a.exp(), "relu": lambda: a.relu(), "sum": lambda: a.sum(),
            "to_device": lambda: a.to_device(device)}


def torch_calls(place: str, size: int, requires_grad: bool = False) -> Calls:
    device = torch.device(place)
    x, y = (torch.from_numpy(v).to(device).requires_grad_(requires_grad) for v in operands(size))
    return {"add": lambda: torch.add(x, y), "mul": lambda: torch.mul(x, y), "matmul": lambda: torch.matmul(x, y),
            "exp": lambda: torch.exp(x), "relu": lambda: torch.relu(x), "sum": lambda: torch.sum(x),
            "to_device": lambda: x.to(device)}


def numpy_calls(size: int) -> Calls:
    x, y = operands(size)
    return {"add": lambda: np.add(x, y), "mul": lambda: np.multiply(x, y), "matmul": lambda: np.matmul(x, y),
            "exp": lambda: np.exp(x), "relu": lambda: np.maximum(x, 0), "sum": lambda: np.sum(x),
            "to_device": lambda: np.asarray(x)}


def routes(size: int) -> tuple[list[Route], list[str]]:
    """The routes this machine can run in the current mode, and why any were skipped."""
    cpu = rs.Device.cpu()
    found = [
        Route("Cpu", "torch cpu", shim_calls(cpu, size), torch_calls("cpu", size)),
        Route("Flex", "numpy", shim_calls(rs.Device.flex(), size), numpy_calls(size)),
    ]
    skipped = []
    if rs.is_virtual():
        found.append(Route("Cuda(0) virtual", "torch cpu", shim_calls(rs.Device.cuda(0), size),
                           torch_calls("cpu", size)))
    elif cuda_count() > 0:
        found.append(Route("Cuda(0)", "torch cuda:0", shim_calls(rs.Device.cuda(0), size),
                           torch_calls("cuda:0", size), lambda: torch.cuda.synchronize(0)))
    else:
        skipped.append("Cuda(0): no CUDA device (torch.cuda.is_available() is False); --virtual runs it on the CPU")
    found.append(Route("Autodiff(Cpu)", "torch cpu requires_grad", shim_calls(cpu.autodiff(), size),
                       torch_calls("cpu", size, requires_grad=True)))
    return found, skipped


def batch_ns(fn: Callable[[], Any], calls: int, sync: Callable[[], None]) -> float:
    """Mean nanoseconds per call over one batch of ``calls`` calls, synchronized at its end."""
    sync()
    start = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter_ns() - start) / calls


def measure(route: Route, op: str, calls: int, batches: int) -> dict[str, Any]:
    shim, raw = route.shim[op], route.raw[op]
    for _ in range(WARMUP_BATCHES):
        batch_ns(shim, calls, route.sync)
        batch_ns(raw, calls, route.sync)
    samples: dict[str, list[float]] = {"shim": [], "raw": []}
    for _ in range(batches):
        samples["shim"].append(batch_ns(shim, calls, route.sync))
        samples["raw"].append(batch_ns(raw, calls, route.sync))
    row: dict[str, Any] = {"route": route.name, "baseline": route.baseline, "op": op}
    for side, values in samples.items():
        row[f"{side}_us"] = statistics.median(values) / 1e3
        row[f"{side}_min_us"] = min(values) / 1e3
    row["added_us"] = row["shim_us"] - row["raw_us"]
    row["within_goal"] = row["added_us"] <= GOAL_US
    return row


def profile_shim(found: list[Route], calls: int, batches: int, top: int) -> None:
    """One more pass of runtime_shim's batches under cProfile; the top functions to stderr."""
    profiler = cProfile.Profile()
    profiler.enable()
    for route in found:
        for op in OPS:
            for _ in range(batches):
                batch_ns(route.shim[op], calls, route.sync)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stderr)
    stats.sort_stats("tottime").print_stats(top)


def summary(rows: list[dict[str, Any]], skipped: list[str]) -> str:
    per_route: dict[str, list[float]] = {}
    for row in rows:
        per_route.setdefault(row["route"], []).append(row["added_us"])
    worst = max(rows, key=lambda r: r["added_us"])
    within = sum(r["within_goal"] for r in rows)
    medians = ", ".join(f"{name} {statistics.median(v):.1f}" for name, v in per_route.items())
    text = (f"dispatch overhead, median added µs/op: {medians}; {within}/{len(rows)} ops within the "
            f"{GOAL_US:g} µs goal; worst {worst['route']} {worst['op']} +{worst['added_us']:.1f} µs")
    return text + "".join(f"; skipped {s.split(':')[0]}" for s in skipped)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=8, help="tensors are size x size float32 (default 8)")
    parser.add_argument("--batch", type=int, default=100, help="calls per timed batch (default 100)")
    parser.add_argument("--batches", type=int, default=200, help="timed batches per op and side (default 200)")
    parser.add_argument("--quick", action="store_true", help="a few seconds: 20 batches of 20 calls")
    parser.add_argument("--virtual", action="store_true", help="virtual mode: every device exists, on the CPU")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N",
                        help="profile runtime_shim's calls once more and print the top N functions to stderr")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    calls, batches = (20, 20) if args.quick else (args.batch, args.batches)
    rs.set_virtual(args.virtual)
    found, skipped = routes(args.size)
    print(f"# Dispatch overhead per op: runtime_shim vs raw, ({args.size}, {args.size}) float32, {rs.mode()} mode")
    print(f"torch {torch.__version__}, numpy {np.__version__}; {batches} batches of {calls} calls per op and side")
    rows = []
    for route in found:
        for op in OPS:
            rows.append(measure(route, op, calls, batches))
        print(f"  measured {route.name}", file=sys.stderr)
    for reason in skipped:
        print(f"skipped {reason}")
    print()
    print(markdown_table(
        ["route", "op", "shim µs", "raw µs", "added µs", f"≤ {GOAL_US:g} µs"],
        [[r["route"], r["op"], f"{r['shim_us']:.2f}", f"{r['raw_us']:.2f}", f"{r['added_us']:+.2f}",
          "yes" if r["within_goal"] else "no"] for r in rows],
        text_columns=2,
    ))
    print()
    text = summary(rows, skipped)
    print(text)
    write_json(args.json, {"benchmark": "dispatch_overhead", "environment": environment(), "goal_us": GOAL_US,
                           "shape": [args.size, args.size], "calls_per_batch": calls, "batches": batches,
                           "rows": rows, "skipped": skipped, "summary": text})
    if args.cprofile:
        profile_shim(found, calls, max(1, batches // 4), args.cprofile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
