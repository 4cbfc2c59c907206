"""Throwaway diagnostics of the upload path on the H200 host (run 1): where the staged upload's time goes.

python3 docs/results/2026-12-04-h200-dataplane/diag.py   (from the repository root, on a CUDA machine)
"""

from __future__ import annotations

import ctypes
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import runtime_shim as rs  # noqa: E402

MIB = 1 << 20
libc = ctypes.CDLL("libc.so.6", use_errno=True)
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def sh(cmd: str) -> None:
    out = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    print(f"$ {cmd}\n{(out.stdout + out.stderr).strip()}")


def thp_kib(ptr: int, n: int) -> int:
    """AnonHugePages (KiB) of the mappings overlapping [ptr, ptr + n)."""
    total, hit = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            lo, hi = (int(x, 16) for x in head.split("-"))
            hit = lo < ptr + n and hi > ptr
        elif hit and line.startswith("AnonHugePages:"):
            total += int(line.split()[1])
    return total


def ptr_of(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def sync() -> None:
    torch.cuda.synchronize(0)


def med(fn, k: int, before=None) -> float:
    out = []
    for _ in range(k):
        if before is not None:
            before()
        sync()
        t = time.perf_counter()
        r = fn()
        sync()
        out.append(time.perf_counter() - t)
        del r
    return statistics.median(out)


def memmove_threads(dst: int, src: int, n: int, threads: int, piece: int = 4 * MIB) -> None:
    pieces = list(range(0, n, piece))
    it = iter(pieces)
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                lo = next(it, None)
            if lo is None:
                return
            ctypes.memmove(dst + lo, src + lo, min(piece, n - lo))

    ts = [threading.Thread(target=work) for _ in range(threads - 1)]
    for t in ts:
        t.start()
    work()
    for t in ts:
        t.join()


def main() -> None:
    for cmd in ("uname -r", "nproc", "cat /sys/kernel/mm/transparent_hugepage/enabled",
                "cat /sys/kernel/mm/transparent_hugepage/defrag", "grep -E 'MemTotal|MemFree|Huge|AnonHuge' /proc/meminfo",
                "lscpu | grep -iE 'model name|cache|numa|mhz'", "ldd --version | head -1",
                "/lib64/ld-linux-x86-64.so.2 --list-tunables 2>&1 | grep -iE 'non_temporal|rep_movsb|shared'",
                "nvidia-smi -q | grep -iE 'Link|Gen|Width' | head -12"):
        sh(cmd)
    try:
        from numpy._core.multiarray import _get_madvise_hugepage
        print("numpy madvise hugepage:", _get_madvise_hugepage())
    except Exception as exc:  # noqa: BLE001
        print("numpy madvise hugepage: ?", exc)
    rs.set_virtual(False)
    cuda0, cpu, flex = rs.Device.cuda(0), rs.Device.cpu(), rs.Device.flex()
    cudart = torch.cuda.cudart()
    side = torch.cuda.Stream()
    for mb in (64, 256, 1024):
        n = mb * MIB
        k = 15 if mb < 1024 else 7
        host = np.arange(n // 4, dtype=np.float32)
        tsrc = torch.arange(n // 4, dtype=torch.float32) + 0  # torch's CPU allocator, as an op's result
        pinned = torch.empty(n // 4, dtype=torch.float32, pin_memory=True)
        pinned.copy_(tsrc)
        print(f"\n## {mb} MiB: THP KiB numpy src {thp_kib(ptr_of(host), n)}, torch src {thp_kib(tsrc.data_ptr(), n)}")
        on_flex = rs.Tensor.from_data(host, flex)
        on_cpu = rs.Tensor.from_data(host, cpu) + 0.0  # an op's result: torch's CPU allocator

        def shim_np():
            return on_flex.to_device(cuda0)

        def shim_t():
            return on_cpu.to_device(cuda0)

        def raw_pinned():
            return pinned.to("cuda:0", non_blocking=True)

        def raw_pageable():
            return torch.from_numpy(host).to("cuda:0")

        def touch_free():
            a = np.ones(n // 4, dtype=np.float32)
            del a

        for f in (shim_np, shim_t, raw_pinned):
            med(f, 2)
        ceiling = med(raw_pinned, k)
        print(f"pinned ceiling {n / ceiling / 1e9:.2f} GB/s ({ceiling * 1e3:.3f} ms)")
        for name, fn in (("numpy src", shim_np), ("op result", shim_t)):
            for label, before in (("alone", None), ("after pinned DMA", lambda: (raw_pinned(), sync())),
                                  ("after raw pageable upload", lambda: (raw_pageable(), sync())),
                                  ("after alloc+touch+free", touch_free)):
                s = med(fn, k, before)
                print(f"  shim {name} {label}: {s * 1e3:.3f} ms, {ceiling / s:.2f} of ceiling")
        print(f"THP KiB after: numpy src {thp_kib(ptr_of(host), n)}, op result {thp_kib(on_cpu._prim.data_ptr(), n)}")
        # host copy rates, with and without a DMA running
        ring = torch.empty(n, dtype=torch.uint8, pin_memory=True)
        gpu_dst = torch.empty(n, dtype=torch.uint8, device="cuda:0")
        pin_bytes = pinned.view(torch.uint8)
        for threads in (8, 12, 16):
            for piece in (4 * MIB, 32 * MIB):
                def cp():
                    memmove_threads(ring.data_ptr(), ptr_of(host), n, threads, piece)  # noqa: B023
                alone = med(cp, 5)

                def cp_dma():
                    with torch.cuda.stream(side):
                        for _ in range(3):
                            gpu_dst.copy_(pin_bytes, non_blocking=True)
                    t0 = time.perf_counter()
                    cp()
                    return time.perf_counter() - t0
                under = statistics.median(cp_dma() for _ in range(3))
                side.synchronize()
                print(f"  memmove {threads} threads, {piece // MIB} MiB pieces: {n / alone / 1e9:.1f} GB/s alone, "
                      f"{n / under / 1e9:.1f} GB/s under DMA")
        # torch's own copy
        for threads in (8, 16):
            torch.set_num_threads(threads)
            s = med(lambda: ring.copy_(tsrc.view(torch.uint8)), 5)
            print(f"  torch copy_ {threads} threads: {n / s / 1e9:.1f} GB/s")
        # registration of populated memory, THP and 4 KiB pages
        for label, adv in (("THP", 14), ("4K", 15)):
            buf = np.empty(n + 2 * MIB, dtype=np.uint8)
            base = (ptr_of(buf) + 2 * MIB - 1) & ~(2 * MIB - 1)
            libc.madvise(base, n, adv)
            view = np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(base))
            view[:] = 1
            t = time.perf_counter()
            code = cudart.cudaHostRegister(base, n, 0)
            reg = time.perf_counter() - t
            d = torch.empty(n, dtype=torch.uint8, device="cuda:0")
            src_t = torch.from_numpy(view)
            dma = med(lambda: d.copy_(src_t, non_blocking=True), 5)  # noqa: B023
            cp = med(lambda: memmove_threads(base, ptr_of(host), n, 16), 3)  # noqa: B023
            t = time.perf_counter()
            cudart.cudaHostUnregister(base)
            unreg = time.perf_counter() - t
            print(f"  register {label} (THP KiB {thp_kib(base, n)}): code {int(code)}, {reg * 1e3:.2f} ms, "
                  f"unregister {unreg * 1e3:.2f} ms, DMA from it {n / dma / 1e9:.1f} GB/s, memmove into it "
                  f"{n / cp / 1e9:.1f} GB/s")
            del d, src_t, view, buf
        del ring, gpu_dst, pinned, host, tsrc, on_flex, on_cpu
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
