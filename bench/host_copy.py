"""Host-side ceilings of the staged data plane: how fast this machine copies between ordinary
and pinned host memory, by thread count, and what pinning memory in place costs.

What it measures (one 1 GiB populated numpy source unless ``--mb`` says otherwise; median of
``--repeats``; GB/s = 10^9 bytes per second):

* ``memmove into pinned``: the staging copy alone, pageable -> a pinned buffer, cut into 2 MiB
  pieces shared by N threads (``runtime_shim.staging.CopyThreads``, glibc ``memmove``);
* ``torch copy_ into pinned``: the same copy by torch's own intra-op threads;
* ``memmove into fresh``: pinned -> a new ``np.empty`` array each time (first-touch page faults
  included, spread over the threads), what a staged download into ordinary memory pays;
* the machine's transparent huge page setting, the first (cold) pinned allocation of that size,
  and ``cudaHostRegister``/``cudaHostUnregister`` of the populated source (GPU only).

Reproduce
    python bench/host_copy.py --json bench-results/host_copy.json
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: runtime_shim without installing

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bench.common import cuda_count, environment, markdown_table, write_json  # noqa: E402
from runtime_shim import staging  # noqa: E402

MIB = 1 << 20
THREADS = (1, 2, 4, 8, 12, 16)


def median_seconds(fn: Callable[[], Any], repeats: int) -> float:
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def piecewise_copy(dst_ptr: Callable[[], int], src_ptr: int, total: int, threads: int) -> Callable[[], None]:
    plan = staging.Plan(total, total, staging.PIECE_BYTES)
    pool = staging.CopyThreads(threads)

    def run() -> None:
        pieces = iter(plan.pieces())
        target = dst_ptr()

        def work() -> None:
            for _, lo, hi in pieces:  # a shared iterator: each piece is taken once
                ctypes.memmove(target + lo, src_ptr + lo, hi - lo)

        pool.run(work)

    return run


def thp_setting() -> str:
    try:
        return Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text().strip()
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=1024, help="bytes copied per measurement, in MiB (default 1024)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    total = args.mb * MIB
    gpu = cuda_count() > 0
    src = np.frombuffer(np.random.default_rng(0).bytes(total), dtype=np.uint8).copy()
    src_ptr = src.__array_interface__["data"][0]
    payload: dict[str, Any] = {"benchmark": "host_copy", "environment": environment(), "bytes": total,
                               "transparent_hugepage": thp_setting()}
    if gpu:
        start = time.perf_counter()
        pinned = torch.empty(total, dtype=torch.uint8, pin_memory=True)
        payload["first_pinned_alloc_s"] = time.perf_counter() - start
    else:
        pinned = torch.empty(total, dtype=torch.uint8)
    pinned_ptr = pinned.data_ptr()
    fresh: list[np.ndarray] = []

    def new_target() -> int:
        fresh.append(np.empty(total, dtype=np.uint8))
        return int(fresh[-1].__array_interface__["data"][0])

    rows = []
    for threads in THREADS:
        into_pinned = median_seconds(piecewise_copy(lambda: pinned_ptr, src_ptr, total, threads), args.repeats)
        if not np.array_equal(pinned.numpy()[:: 1 << 16], src[:: 1 << 16]):
            raise AssertionError("memmove copied wrong values")
        into_fresh = median_seconds(piecewise_copy(new_target, pinned_ptr, total, threads), args.repeats)
        fresh.clear()  # freed outside the timed copies
        torch.set_num_threads(threads)
        src_t = torch.from_numpy(src)
        torch_copy = median_seconds(lambda: pinned.copy_(src_t), args.repeats)  # noqa: B023 - run at once
        rows.append({"threads": threads, "memmove_into_pinned_gbps": total / into_pinned / 1e9,
                     "torch_copy_into_pinned_gbps": total / torch_copy / 1e9,
                     "memmove_into_fresh_gbps": total / into_fresh / 1e9})
        print(f"  measured {threads} threads", file=sys.stderr)
    payload["rows"] = rows
    if gpu:
        cudart = torch.cuda.cudart()
        start = time.perf_counter()
        code = cudart.cudaHostRegister(src_ptr, total, 0)
        registered = time.perf_counter() - start
        start = time.perf_counter()
        cudart.cudaHostUnregister(src_ptr)
        payload["host_register"] = {"status": int(code), "register_s": registered,
                                    "unregister_s": time.perf_counter() - start}
    print(f"# Host copy rates, {args.mb} MiB, THP: {payload['transparent_hugepage']}")
    print(markdown_table(["threads", "memmove into pinned GB/s", "torch copy_ into pinned GB/s",
                          "memmove into fresh np.empty GB/s"],
                         [[r["threads"], f"{r['memmove_into_pinned_gbps']:.1f}",
                           f"{r['torch_copy_into_pinned_gbps']:.1f}", f"{r['memmove_into_fresh_gbps']:.1f}"]
                          for r in rows]))
    for key in ("first_pinned_alloc_s", "host_register"):
        if key in payload:
            print(f"{key}: {payload[key]}")
    best = max(rows, key=lambda r: r["memmove_into_pinned_gbps"])
    payload["summary"] = (f"host copy, {args.mb} MiB: memmove into pinned memory "
                          f"{best['memmove_into_pinned_gbps']:.1f} GB/s at best ({best['threads']} threads), "
                          "into a fresh array "
                          f"{max(r['memmove_into_fresh_gbps'] for r in rows):.1f} GB/s")
    print(payload["summary"])
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
