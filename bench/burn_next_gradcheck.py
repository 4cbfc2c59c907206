"""Profile burn-next: gradients through cross-backend autodiff moves, checked against torch autograd.

What it checks
    One three-stage program, each stage on its own backend's autodiff device::

        stage 0:  h1 = tanh(x @ w1)                      -> moved to stage 1
        stage 1:  h2 = sigmoid(h1 @ w2) * h1             -> moved to stage 2
        stage 2:  out = exp(h2 @ w3).mean()              -> moved back to stage 0
        stage 0:  loss = out + 0.01 * (x * x).sum()

    x and w1 live on stage 0, w2 on stage 1, w3 on stage 2; every move is an autodiff move between
    backends (profile ``burn-next``), re-tagged with the target stage's checkpointing strategy. For
    each chain, float dtype and strategy combination, one backward pass, then per tracked tensor:
    its gradient's device and dtype must be the tensor's own, and its values must match

    * torch autograd of the same program (torch tensors on the stages' torch devices, moved with
      ``.to()`` where the program moves),
    * the same program with every stage on Flex (one backend, same strategies),
    * for float64, central finite differences of the program on the stages' plain devices,

    (max Δ: the largest absolute difference over every element of every gradient)
    within float tolerance (float32: rtol 1e-4, float64: rtol 1e-7; atol that times the largest
    gradient). The chains: Flex -> Cuda(0) -> LibTorch-cuda(0) and its reverse, on real CUDA; and
    Flex -> Cpu -> LibTorch (CPU), which always runs. Without CUDA the CUDA chains are skipped with
    a line saying so, so the script also runs on CPU-only machines. runtime_shim runs in real mode
    whatever ``RUNTIME_SHIM_VIRTUAL`` says.

Reproduce
    python bench/burn_next_gradcheck.py
    python bench/burn_next_gradcheck.py --quick --json bench-results/burn_next_gradcheck.json
    python bench/burn_next_gradcheck.py --virtual     # the CUDA chains on virtual devices: tests the script
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: runtime_shim without installing

import numpy as np  # noqa: E402
import torch  # noqa: E402

import runtime_shim as rs  # noqa: E402
from bench.common import cuda_count, environment, markdown_table, write_json  # noqa: E402
from runtime_shim import CheckpointingStrategy, Device, Tensor  # noqa: E402

PROFILE = "burn-next"
SHAPES: Mapping[str, tuple[int, ...]] = {"x": (4, 5), "w1": (5, 6), "w2": (6, 6), "w3": (6, 3)}
STAGE_OF: Mapping[str, int] = {"x": 0, "w1": 0, "w2": 1, "w3": 2}
RTOL = {"float32": 1e-4, "float64": 1e-7}
FD_EPS = 1e-6
DISABLED, BALANCED = CheckpointingStrategy.DISABLED, CheckpointingStrategy.BALANCED
STRATEGY_LETTERS = {"D": DISABLED, "B": BALANCED}


@dataclass(frozen=True)
class Chain:
    """Three stages' plain devices and the torch devices that run the same stages."""

    name: str
    stages: tuple[Callable[[], Device], Callable[[], Device], Callable[[], Device]]
    places: tuple[str, str, str]
    needs_cuda: bool


CHAINS = (
    Chain("Flex → Cuda(0) → LibTorch(Cuda(0))", (Device.flex, lambda: Device.cuda(0), lambda: Device.libtorch_cuda(0)),
          ("cpu", "cuda:0", "cuda:0"), True),
    Chain("LibTorch(Cuda(0)) → Cuda(0) → Flex", (lambda: Device.libtorch_cuda(0), lambda: Device.cuda(0), Device.flex),
          ("cuda:0", "cuda:0", "cpu"), True),
    Chain("Flex → Cpu → LibTorch(Cpu)", (Device.flex, Device.cpu, Device.libtorch), ("cpu", "cpu", "cpu"), False),
)
ONE_BACKEND = (Device.flex, Device.flex, Device.flex)


def autodiff_device(plain: Device, strategy: CheckpointingStrategy) -> Device:
    device = plain.autodiff()
    return device.gradient_checkpointing() if strategy is BALANCED else device


def input_arrays(dtype: str, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: (0.5 * rng.standard_normal(shape)).astype(dtype) for name, shape in SHAPES.items()}


# --- the program, on runtime_shim and on torch -------------------------------------------------------

def to_stage(h: Tensor, device: Device) -> Tensor:
    """Move to a stage; on an autodiff device, take the stage's strategy (a move keeps the tensor's own)."""
    moved = h.to_device(device)
    if device.is_autodiff():
        moved = moved.with_gradient_checkpointing_strategy(device.gradient_checkpointing_strategy())
    return moved


def shim_program(stages: Sequence[Device], leaves: Mapping[str, Tensor]) -> Tensor:
    x, w1, w2, w3 = (leaves[name] for name in SHAPES)
    h1 = to_stage((x @ w1).tanh(), stages[1])
    h2 = to_stage((h1 @ w2).sigmoid() * h1, stages[2])
    out = to_stage((h2 @ w3).exp().mean(), stages[0])
    return out + (x * x).sum() * 0.01


def torch_program(places: Sequence[str], leaves: Mapping[str, torch.Tensor]) -> torch.Tensor:
    x, w1, w2, w3 = (leaves[name] for name in SHAPES)
    h1 = torch.tanh(x @ w1).to(places[1])
    h2 = (torch.sigmoid(h1 @ w2) * h1).to(places[2])
    out = torch.exp(h2 @ w3).mean().to(places[0])
    return out + (x * x).sum() * 0.01


@dataclass
class ShimGradients:
    values: dict[str, np.ndarray]
    devices: dict[str, str]  # repr of each gradient's device
    dtypes: dict[str, str]
    recomputed: int


def shim_gradients(stages: Sequence[Device], arrays: Mapping[str, np.ndarray]) -> ShimGradients:
    """One backward pass of the program on autodiff ``stages``: every tracked tensor's gradient."""
    leaves = {name: Tensor.from_data(value, stages[STAGE_OF[name]]).require_grad() for name, value in arrays.items()}
    grads = shim_program(stages, leaves).backward()
    result = ShimGradients({}, {}, {}, grads.recomputed)
    for name, leaf in leaves.items():
        grad = leaf.grad(grads)
        if grad is None:
            raise AssertionError(f"no gradient reached {name}")
        result.values[name], result.devices[name] = grad.to_numpy(), repr(grad.device())
        result.dtypes[name] = grad.dtype
    return result


def torch_gradients(places: Sequence[str], arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    leaves = {name: torch.tensor(value, device=places[STAGE_OF[name]], requires_grad=True)
              for name, value in arrays.items()}
    torch_program(places, leaves).backward()
    return {name: leaf.grad.detach().cpu().numpy() for name, leaf in leaves.items()}


def numeric_gradients(stages: Sequence[Device], arrays: Mapping[str, np.ndarray],
                      eps: float = FD_EPS) -> dict[str, np.ndarray]:
    """Central differences of the program's loss on plain ``stages`` (no autodiff anywhere)."""
    def loss(values: Mapping[str, np.ndarray]) -> float:
        leaves = {name: Tensor.from_data(v, stages[STAGE_OF[name]]) for name, v in values.items()}
        return float(shim_program(stages, leaves).into_scalar())

    result = {}
    for name, value in arrays.items():
        grad = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            shifted = {**arrays, name: value.copy()}
            shifted[name][index] = value[index] + eps
            up = loss(shifted)
            shifted[name][index] = value[index] - eps
            grad[index] = (up - loss(shifted)) / (2 * eps)
        result[name] = grad
    return result


def max_diff(got: Mapping[str, np.ndarray], want: Mapping[str, np.ndarray]) -> float:
    return max(float(np.max(np.abs(got[n].astype(np.float64) - want[n].astype(np.float64)))) for n in SHAPES)


def close(got: Mapping[str, np.ndarray], want: Mapping[str, np.ndarray], dtype: str) -> bool:
    rtol = RTOL[dtype]
    return all(np.allclose(got[n], want[n], rtol=rtol, atol=rtol * max(1.0, float(np.max(np.abs(want[n])))))
               for n in SHAPES)


# --- the check ------------------------------------------------------------------------------------

def check_case(chain: Chain, letters: str, dtype: str) -> dict:
    strategies = [STRATEGY_LETTERS[letter] for letter in letters]
    plain = [make() for make in chain.stages]
    stages = [autodiff_device(d, s) for d, s in zip(plain, strategies, strict=True)]
    arrays = input_arrays(dtype)
    got = shim_gradients(stages, arrays)
    reference = torch_gradients(chain.places, arrays)
    one = shim_gradients([autodiff_device(make(), s) for make, s in zip(ONE_BACKEND, strategies, strict=True)],
                         arrays).values
    devices_ok = all(got.devices[n] == repr(plain[STAGE_OF[n]]) for n in SHAPES)
    dtypes_ok = all(got.dtypes[n] == dtype for n in SHAPES)
    row = {"chain": chain.name, "strategies": "/".join(str(s) for s in strategies), "dtype": dtype,
           "devices_ok": devices_ok, "dtypes_ok": dtypes_ok,
           "vs_torch": max_diff(got.values, reference), "vs_one_backend": max_diff(got.values, one),
           "torch_ok": close(got.values, reference, dtype), "one_backend_ok": close(got.values, one, dtype),
           "vs_fd": None, "fd_ok": True, "recomputed": got.recomputed}
    if dtype == "float64":
        numeric = numeric_gradients(plain, arrays)
        row["vs_fd"], row["fd_ok"] = max_diff(got.values, numeric), close(got.values, numeric, "float64")
    row["ok"] = all(row[k] for k in ("devices_ok", "dtypes_ok", "torch_ok", "one_backend_ok", "fd_ok"))
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="strategies Disabled everywhere and Balanced everywhere only (default: four mixes)")
    parser.add_argument("--virtual", action="store_true",
                        help="run the CUDA chains on virtual devices (torch on the CPU): tests the script, not the GPU")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    rs.set_virtual(args.virtual)  # real devices unless asked: a virtual Cuda(0) runs on the CPU
    rs.set_profile(PROFILE)
    mixes = ("DDD", "BBB") if args.quick else ("DDD", "BBB", "BDD", "DBB")
    chains, skipped = [], []
    for chain in CHAINS:
        if args.virtual:
            chains.append(replace(chain, name=f"{chain.name} (virtual)", places=("cpu", "cpu", "cpu")))
        elif chain.needs_cuda and cuda_count() == 0:
            skipped.append(f"{chain.name}: no CUDA device (torch.cuda.is_available() is False)")
        else:
            chains.append(chain)
    print(f"# Profile {PROFILE}: gradients through cross-backend autodiff moves vs torch autograd")
    print("stages: tanh(x @ w1) -> sigmoid(h1 @ w2) * h1 -> exp(h2 @ w3).mean() -> back to stage 0, "
          "+ 0.01 * (x * x).sum(); strategies per stage (D = Disabled, B = Balanced)")
    for reason in skipped:
        print(f"skipped {reason}")
    rows = []
    for chain, letters, dtype in itertools.product(chains, mixes, ("float32", "float64")):
        rows.append(check_case(chain, letters, dtype))
        print(f"  checked {chain.name} {letters} {dtype}", file=sys.stderr)
    print()
    print(markdown_table(
        ["chain", "strategies", "dtype", "grad device/dtype", "max Δ torch", "max Δ one backend",
         "max Δ finite diff", "recomputed", "ok"],
        [[r["chain"], r["strategies"], r["dtype"], "ok" if r["devices_ok"] and r["dtypes_ok"] else "WRONG",
          f"{r['vs_torch']:.1e}", f"{r['vs_one_backend']:.1e}",
          "—" if r["vs_fd"] is None else f"{r['vs_fd']:.1e}", r["recomputed"], "ok" if r["ok"] else "FAIL"]
         for r in rows],
        text_columns=4,
    ))
    print()
    failed = [r for r in rows if not r["ok"]]
    text = (f"{PROFILE} gradcheck: {len(rows) - len(failed)}/{len(rows)} cases match torch autograd, one backend"
            f" and finite differences ({', '.join(c.name for c in chains)}"
            f"{'; CUDA chains skipped' if skipped else ''})")
    print(text)
    write_json(args.json, {"benchmark": "burn_next_gradcheck", "environment": environment(),
                           "rows": rows, "skipped": skipped, "summary": text})
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
