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

    ``--base DIR`` also measures the runtime_shim of another checkout (DIR holds its
    ``runtime_shim/``, e.g. ``git archive <commit> runtime_shim | tar -x -C DIR``), loaded beside
    this one as ``runtime_shim_base``; its batches alternate with this tree's and the raw ones, so
    a loaded or shared machine slows all three alike. The table then shows both trees' added µs.

Reproduce
    python bench/dispatch_overhead.py --json bench-results/dispatch_overhead.json
    python bench/dispatch_overhead.py --quick            # a few seconds, CPU routes
    python bench/dispatch_overhead.py --cprofile 25      # hot spots of the dispatch path
    python bench/dispatch_overhead.py --base /tmp/base   # this tree against another checkout's
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import pstats
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
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
    base: Calls | None = None  # the same calls on the --base checkout's runtime_shim


def operands(size: int) -> tuple[np.ndarray, np.ndarray]:
    data = np.random.default_rng(0).random((2, size, size), dtype=np.float32)
    return data[0], data[1]


def load_base(root: Path) -> ModuleType:
    """The runtime_shim of the checkout at ``root``, imported as ``runtime_shim_base`` from a copy
    whose absolute imports of runtime_shim name the copy (relative imports need no change)."""
    source = root / "runtime_shim"
    if not (source / "__init__.py").is_file():
        raise SystemExit(f"--base {root}: no runtime_shim/__init__.py there")
    target = Path(tempfile.mkdtemp(prefix="dispatch-base-")) / "runtime_shim_base"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    for path in target.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r"^(\s*)(from|import) runtime_shim\b", r"\1\2 runtime_shim_base", text,
                               flags=re.MULTILINE), encoding="utf-8")
    sys.path.insert(0, str(target.parent))
    return importlib.import_module("runtime_shim_base")


def shim_calls(device: Any, size: int, lib: Any = rs) -> Calls:
    x, y = operands(size)
    a, b = lib.Tensor.from_data(x, device), lib.Tensor.from_data(y, device)
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


def base_calls(route: str, base: ModuleType | None, size: int) -> Calls | None:
    """The route's calls on the base checkout's runtime_shim, if there is one."""
    if base is None:
        return None
    devices = {"Cpu": lambda: base.Device.cpu(), "Flex": lambda: base.Device.flex(),
               "Cuda(0)": lambda: base.Device.cuda(0), "Cuda(0) virtual": lambda: base.Device.cuda(0),
               "Autodiff(Cpu)": lambda: base.Device.cpu().autodiff()}
    return shim_calls(devices[route](), size, base)


def routes(size: int, base: ModuleType | None = None) -> tuple[list[Route], list[str]]:
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
    for route in found:
        route.base = base_calls(route.name, base, size)
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
    sides = {"shim": route.shim[op], "raw": route.raw[op]}
    if route.base is not None:
        sides["base"] = route.base[op]
    for _ in range(WARMUP_BATCHES):
        for fn in sides.values():
            batch_ns(fn, calls, route.sync)
    samples: dict[str, list[float]] = {side: [] for side in sides}
    for _ in range(batches):
        for side, fn in sides.items():
            samples[side].append(batch_ns(fn, calls, route.sync))
    row: dict[str, Any] = {"route": route.name, "baseline": route.baseline, "op": op}
    for side, values in samples.items():
        row[f"{side}_us"] = statistics.median(values) / 1e3
        row[f"{side}_min_us"] = min(values) / 1e3
    row["added_us"] = row["shim_us"] - row["raw_us"]
    row["within_goal"] = row["added_us"] <= GOAL_US
    if "base" in sides:
        row["base_added_us"] = row["base_us"] - row["raw_us"]
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
    base_route: dict[str, list[float]] = {}
    for row in rows:
        per_route.setdefault(row["route"], []).append(row["added_us"])
        if "base_added_us" in row:
            base_route.setdefault(row["route"], []).append(row["base_added_us"])
    worst = max(rows, key=lambda r: r["added_us"])
    within = sum(r["within_goal"] for r in rows)
    medians = ", ".join(f"{name} {statistics.median(v):.1f}" for name, v in per_route.items())
    text = (f"dispatch overhead, median added µs/op: {medians}; {within}/{len(rows)} ops within the "
            f"{GOAL_US:g} µs goal; worst {worst['route']} {worst['op']} +{worst['added_us']:.1f} µs")
    if base_route:
        text += "; base tree: " + ", ".join(f"{name} {statistics.median(v):.1f}" for name, v in base_route.items())
    return text + "".join(f"; skipped {s.split(':')[0]}" for s in skipped)


def table(rows: list[dict[str, Any]]) -> str:
    with_base = any("base_added_us" in r for r in rows)
    head = ["route", "op", "shim µs", "raw µs", "added µs", f"≤ {GOAL_US:g} µs"]
    if with_base:
        head[2:2] = ["base µs"]
        head.insert(-1, "base added µs")
    body = []
    for r in rows:
        line = [r["route"], r["op"], f"{r['shim_us']:.2f}", f"{r['raw_us']:.2f}", f"{r['added_us']:+.2f}",
                "yes" if r["within_goal"] else "no"]
        if with_base:
            line[2:2] = [f"{r['base_us']:.2f}"]
            line.insert(-1, f"{r['base_added_us']:+.2f}")
        body.append(line)
    return markdown_table(head, body, text_columns=2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=8, help="tensors are size x size float32 (default 8)")
    parser.add_argument("--batch", type=int, default=100, help="calls per timed batch (default 100)")
    parser.add_argument("--batches", type=int, default=200, help="timed batches per op and side (default 200)")
    parser.add_argument("--quick", action="store_true", help="a few seconds: 20 batches of 20 calls")
    parser.add_argument("--virtual", action="store_true", help="virtual mode: every device exists, on the CPU")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N",
                        help="profile runtime_shim's calls once more and print the top N functions to stderr")
    parser.add_argument("--base", metavar="DIR", type=Path,
                        help="also measure the runtime_shim/ under DIR (another checkout), interleaved")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    calls, batches = (20, 20) if args.quick else (args.batch, args.batches)
    base = load_base(args.base) if args.base else None
    rs.set_virtual(args.virtual)
    if base is not None:
        base.set_virtual(args.virtual)
    found, skipped = routes(args.size, base)
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
    print(table(rows))
    print()
    text = summary(rows, skipped)
    print(text)
    write_json(args.json, {"benchmark": "dispatch_overhead", "environment": environment(), "goal_us": GOAL_US,
                           "shape": [args.size, args.size], "calls_per_batch": calls, "batches": batches,
                           "rows": rows, "skipped": skipped, "summary": text,
                           "base": str(args.base) if args.base else None})
    if args.cprofile:
        profile_shim(found, calls, max(1, batches // 4), args.cprofile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
