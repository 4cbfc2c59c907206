"""Where a small op's dispatch time goes: cProfile over a loop of add, matmul, sum, exp, reshape and
to_device on (8, 8) float32 tensors of one route, after a timeit of each op (min of 5 x 2,000 calls).

    python docs/results/2026-12-04-cpu-overhead/profile_ops.py flex       # Device.flex()
    python docs/results/2026-12-04-cpu-overhead/profile_ops.py autodiff   # Device.cpu().autodiff(), tracked leaves
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import timeit

import numpy as np

import runtime_shim as rs


def main(route: str) -> None:
    x = np.random.default_rng(0).random((8, 8), dtype=np.float32)
    device = {"flex": rs.Device.flex, "autodiff": lambda: rs.Device.cpu().autodiff()}[route]()
    a, b = rs.Tensor.from_data(x, device), rs.Tensor.from_data(x, device)
    if device.is_autodiff():
        a, b = a.require_grad(), b.require_grad()
    ops = {"add": lambda: a.add(b), "matmul": lambda: a.matmul(b), "sum": lambda: a.sum(), "exp": lambda: a.exp(),
           "reshape": lambda: a.reshape([64]), "to_device": lambda: a.to_device(device)}
    for name, call in ops.items():
        print(f"{name}: {min(timeit.repeat(call, number=2000, repeat=5)) / 2000 * 1e6:.2f} µs")
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(3000):
        for call in ops.values():
            call()
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "flex")
