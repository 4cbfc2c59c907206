"""Gradient checkpointing: peak memory and time of ``Balanced`` against ``Disabled`` on a deep chain.

What it measures
    An MLP of ``--depth`` layers (default 48) on ``--batch`` x ``--width`` float32 activations
    (default 1024 x 256: 1 MiB each, four times a weight matrix), each layer one matmul followed
    by memory-bound ops, then ``h.sum().backward()``. Two models (``--model`` picks one):

    * chain:    ``z = h @ W + b;  h = (z.relu() * z.sigmoid()).tanh()``
    * residual: ``z = h @ W + b;  h = (z.relu() * z.sigmoid() + h).tanh()``: the skip
      connection links every layer's memory-bound values to the previous layer's without a
      matmul in between, so recomputation from the nearest checkpoint reaches back further.

    Under ``Balanced`` only the matmul outputs are kept as checkpoints and the memory-bound
    values are recomputed in the backward pass; under ``Disabled`` every op keeps what its
    backward needs. For each model and strategy, on the same parameters:

    * peak memory of forward + backward, above what was allocated before it (parameters and
      input excluded), and the memory the tape still holds when the forward pass ends. On
      ``Flex`` (numpy) with ``tracemalloc``, which sees numpy's array buffers; on ``Cuda(0)``,
      when a CUDA device exists, with ``torch.cuda.reset_peak_memory_stats`` and
      ``max_memory_allocated``;
    * the median wall-clock time of forward + backward over ``--repeats`` runs without
      ``tracemalloc`` (synchronized on CUDA), and ``Gradients.recomputed``;
    * that both strategies give the same gradients for every W and b (``np.allclose``, and
      the largest absolute difference).

    runtime_shim runs in real mode whatever ``RUNTIME_SHIM_VIRTUAL`` says. ``--quick`` is a tiny
    Flex-only run (depth 8, 16 x 32), to test the script without a GPU.

Reproduce
    python bench/checkpointing_memory.py --json bench-results/checkpointing_memory.json
    python bench/checkpointing_memory.py --quick
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: runtime_shim without installing

import numpy as np  # noqa: E402
import torch  # noqa: E402

import runtime_shim as rs  # noqa: E402
from bench.common import cuda_count, environment, markdown_table, write_json  # noqa: E402

MB = 1e6
STRATEGIES = ("Disabled", "Balanced")
#: weight scale (times 1/sqrt(width)) that keeps activations and gradients of each model O(1) at depth 32-64
GAINS = {"chain": 2.5, "residual": 1.0}
RTOL = 1e-5  # and an absolute tolerance of RTOL times the gradient's largest magnitude


@dataclass
class Model:
    """The input and the tracked parameters of the MLP on one autodiff device."""

    residual: bool
    x: rs.Tensor
    weights: list[rs.Tensor]
    biases: list[rs.Tensor]

    def loss(self) -> rs.Tensor:
        h = self.x
        for w, b in zip(self.weights, self.biases, strict=True):
            z = h.matmul(w) + b
            gated = z.relu() * z.sigmoid()
            h = (gated + h if self.residual else gated).tanh()
        return h.sum()

    def gradients(self, grads: rs.Gradients) -> list[np.ndarray]:
        return [p.grad(grads).to_numpy() for p in (*self.weights, *self.biases)]


@dataclass
class Backend:
    """How to build devices and read memory on one backend."""

    name: str
    device: Callable[[], rs.Device]
    sync: Callable[[], None]
    memory: Callable[[], AbstractContextManager[Meter]]


class Meter:
    """Bytes above the start: ``mark()`` records the current level, ``peak`` the highest seen."""

    def __init__(self, current: Callable[[], int], peak: Callable[[], int]) -> None:
        self._current, self._peak = current, peak
        self.base = current()
        self.marked = 0
        self.peak = 0

    def mark(self) -> None:
        self.marked = self._current() - self.base

    def finish(self) -> None:
        self.peak = self._peak() - self.base


@contextmanager
def traced_host_memory() -> Iterator[Meter]:
    """numpy's allocations through tracemalloc (the peak counts from ``start``)."""
    tracemalloc.start()
    try:
        meter = Meter(lambda: tracemalloc.get_traced_memory()[0], lambda: tracemalloc.get_traced_memory()[1])
        yield meter
        meter.finish()
    finally:
        tracemalloc.stop()


@contextmanager
def cuda_memory() -> Iterator[Meter]:
    """torch's CUDA allocator statistics on device 0."""
    torch.cuda.synchronize(0)
    torch.cuda.reset_peak_memory_stats(0)
    meter = Meter(lambda: torch.cuda.memory_allocated(0), lambda: torch.cuda.max_memory_allocated(0))
    yield meter
    torch.cuda.synchronize(0)
    meter.finish()


def build(model: str, device: rs.Device, depth: int, batch: int, width: int, seed: int) -> Model:
    rng = np.random.default_rng(seed)
    scale = GAINS[model] / np.sqrt(width)
    x = rs.Tensor.from_data(rng.standard_normal((batch, width), dtype=np.float32), device)
    weights = [rs.Tensor.from_data((rng.standard_normal((width, width)) * scale).astype(np.float32), device)
               .require_grad() for _ in range(depth)]
    biases = [rs.Tensor.from_data((rng.standard_normal((1, width)) * 0.1).astype(np.float32), device)
              .require_grad() for _ in range(depth)]
    return Model(model == "residual", x, weights, biases)


def run_strategy(backend: Backend, name: str, strategy: str,
                 args: argparse.Namespace) -> tuple[dict[str, Any], list[np.ndarray]]:
    """Time, then measure memory of, forward + backward under one strategy; returns the row and gradients."""
    plain = backend.device().autodiff()
    device = plain.gradient_checkpointing() if strategy == "Balanced" else plain
    model = build(name, device, args.depth, args.batch, args.width, args.seed)
    times = []
    for _ in range(args.repeats + 1):  # the first run warms up
        backend.sync()
        start = time.perf_counter()
        grads = model.loss().backward()
        backend.sync()
        times.append(time.perf_counter() - start)
    recomputed = grads.recomputed
    del grads
    with backend.memory() as meter:
        loss = model.loss()
        meter.mark()
        grads = loss.backward()
    gradients = model.gradients(grads)
    row = {"backend": backend.name, "model": name, "strategy": strategy, "peak_mb": meter.peak / MB,
           "after_forward_mb": meter.marked / MB, "time_s": statistics.median(times[1:]),
           "recomputed": recomputed, "repr": repr(device)}
    return row, gradients


def close(a: np.ndarray, b: np.ndarray) -> bool:
    return np.allclose(a, b, rtol=RTOL, atol=RTOL * float(np.max(np.abs(a))))


def compare(rows: dict[str, dict[str, Any]], grads: dict[str, list[np.ndarray]]) -> dict[str, Any]:
    disabled, balanced = rows["Disabled"], rows["Balanced"]
    pairs = list(zip(grads["Disabled"], grads["Balanced"], strict=True))
    return {
        "backend": disabled["backend"],
        "model": disabled["model"],
        "peak_ratio": balanced["peak_mb"] / disabled["peak_mb"],
        "after_forward_ratio": balanced["after_forward_mb"] / disabled["after_forward_mb"],
        "time_ratio": balanced["time_s"] / disabled["time_s"],
        "grads_allclose": all(close(a, b) for a, b in pairs),
        "grads_identical": all(np.array_equal(a, b) for a, b in pairs),
        "grads_max_abs_diff": max(float(np.max(np.abs(a - b))) for a, b in pairs),
        "grads_max_abs": max(float(np.max(np.abs(g))) for g in grads["Disabled"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=(*GAINS, "both"), default="both", help="which MLP (default both)")
    parser.add_argument("--depth", type=int, default=48, help="layers (default 48)")
    parser.add_argument("--batch", type=int, default=1024, help="rows of the activations (default 1024)")
    parser.add_argument("--width", type=int, default=256, help="features per layer (default 256)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per strategy, after one warm-up (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the parameters and input (default 0)")
    parser.add_argument("--quick", action="store_true", help="tiny Flex-only run: depth 8, 16 x 32, 1 repeat")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    if args.quick:
        args.depth, args.batch, args.width, args.repeats = 8, 16, 32, 1
    models = list(GAINS) if args.model == "both" else [args.model]
    rs.set_virtual(False)  # real devices only: a virtual Cuda(0) would be a CPU
    backends = [Backend("Flex", rs.Device.flex, lambda: None, traced_host_memory)]
    skipped = []
    if args.quick:
        skipped.append("Cuda(0): --quick runs Flex only")
    elif cuda_count() > 0:
        backends.append(Backend("Cuda(0)", lambda: rs.Device.cuda(0), lambda: torch.cuda.synchronize(0), cuda_memory))
    else:
        skipped.append("Cuda(0): no CUDA device (torch.cuda.is_available() is False)")
    print(f"# Gradient checkpointing: Balanced vs Disabled, MLP depth {args.depth}, "
          f"activations {args.batch} x {args.width} float32 ({args.batch * args.width * 4 / MB:.2f} MB each)")
    print("chain: z = h @ W + b; h = (z.relu() * z.sigmoid()).tanh(). residual: the same with h = (... + h).tanh(). "
          "Loss h.sum(), forward + backward.")
    rows, comparisons = [], []
    for backend in backends:
        for name in models:
            per_strategy, grads = {}, {}
            for strategy in STRATEGIES:
                per_strategy[strategy], grads[strategy] = run_strategy(backend, name, strategy, args)
                print(f"  measured {backend.name} {name} {strategy}", file=sys.stderr)
            rows += per_strategy.values()
            comparisons.append(compare(per_strategy, grads))
    for reason in skipped:
        print(f"skipped {reason}")
    print()
    print(markdown_table(
        ["backend", "model", "strategy", "peak MB", "after forward MB", "fwd+bwd ms", "recomputed"],
        [[r["backend"], r["model"], r["strategy"], f"{r['peak_mb']:.1f}", f"{r['after_forward_mb']:.1f}",
          f"{r['time_s'] * 1e3:.1f}", r["recomputed"]] for r in rows],
        text_columns=3,
    ))
    print()
    print(markdown_table(
        ["backend", "model", "peak B/D", "after forward B/D", "time B/D", "same gradients", "max |Δgrad|"],
        [[c["backend"], c["model"], f"{c['peak_ratio']:.2f}", f"{c['after_forward_ratio']:.2f}",
          f"{c['time_ratio']:.2f}",
          ("identical" if c["grads_identical"] else "allclose") if c["grads_allclose"] else "NO",
          f"{c['grads_max_abs_diff']:.2e}"] for c in comparisons],
        text_columns=2,
    ))
    print()
    text = f"checkpointing, depth {args.depth}, {args.batch}x{args.width}, Balanced/Disabled: " + "; ".join(
        f"{c['backend']} {c['model']} peak {c['peak_ratio']:.2f}x, time {c['time_ratio']:.2f}x, "
        f"gradients {'equal' if c['grads_allclose'] else 'DIFFER'}" for c in comparisons)
    print(text)
    write_json(args.json, {"benchmark": "checkpointing_memory", "environment": environment(),
                           "config": {"depth": args.depth, "batch": args.batch, "width": args.width,
                                      "seed": args.seed, "repeats": args.repeats, "gains": GAINS},
                           "rows": rows, "comparisons": comparisons, "skipped": skipped, "summary": text})
    return 0 if all(c["grads_allclose"] for c in comparisons) else 1


if __name__ == "__main__":
    sys.exit(main())
