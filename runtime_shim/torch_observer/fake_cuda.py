"""Fake mode: CUDA devices on a CPU-only machine, through FakeTensorMode (shapes, dtypes and
devices, no kernels, no data).

FakeTensorMode already creates ``cuda:i`` tensors and checks devices op by op. What it cannot do on
a CPU build is patched here, each for a reason named below: the CUDA device guard (guard_ext), the
``torch.cuda`` queries programs branch on, module moves (``swap_tensors`` refuses memoised fakes),
backward over CUDA tensors (the engine wants a real accelerator) and the values programs read
back (``.item()``, ``.numpy()``), which are zeros unless known (:func:`known_value`).
"""

from __future__ import annotations

import contextlib
import gc
import os
import types
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
import torch.utils
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode, unset_fake_temporarily
from torch.utils._pytree import tree_map
from torch.utils.weak import WeakIdRef

from . import guard_ext

DEFAULT_DEVICE_COUNT = 2


def device_count() -> int:
    """How many fake CUDA devices exist (``RUNTIME_SHIM_TORCH_CUDA_DEVICES``, default 2)."""
    return int(os.environ.get("RUNTIME_SHIM_TORCH_CUDA_DEVICES", DEFAULT_DEVICE_COUNT))


#: ``torch.cuda.<name>`` legacy typed constructors and their dtypes.
_LEGACY_DTYPES = {
    "FloatTensor": torch.float32, "DoubleTensor": torch.float64, "HalfTensor": torch.float16,
    "BFloat16Tensor": torch.bfloat16, "LongTensor": torch.int64, "IntTensor": torch.int32,
    "ShortTensor": torch.int16, "CharTensor": torch.int8, "ByteTensor": torch.uint8, "BoolTensor": torch.bool,
}


class FakeCuda:
    """The state of fake CUDA: the current device, and the patches that stand in for a driver."""

    def __init__(self, count: int | None = None) -> None:
        self.count = device_count() if count is None else count
        self.current = 0
        self.mode = FakeTensorMode(allow_non_fake_inputs=True)
        self._undo: list[Callable[[], None]] = []

    # --- devices -----------------------------------------------------------------------------
    def normalize(self, device: Any) -> Any:
        """``"cuda"`` -> ``cuda:<current>`` (CPU builds cannot ask a driver), an int ``i`` -> ``cuda:i`` (as on a
        CUDA build: the accelerator's index); bad ordinals fail as CUDA does."""
        if isinstance(device, int) and not isinstance(device, bool):
            device = torch.device("cuda", device)
        if isinstance(device, str) and device.startswith("cuda"):
            device = torch.device(device)
        if isinstance(device, torch.device) and device.type == "cuda":
            if device.index is None:
                return torch.device("cuda", self.current)
            if device.index >= self.count:
                raise RuntimeError("CUDA error: invalid device ordinal")
        return device

    def _cuda_api(self) -> dict[str, Any]:
        fake = self

        class device:  # noqa: N801 - stands in for torch.cuda.device
            def __init__(self, index: Any) -> None:
                self.index = torch.device(index).index if isinstance(index, str | torch.device) else index
                self.previous = -1

            def __enter__(self) -> None:
                self.previous, fake.current = fake.current, (fake.current if self.index is None else self.index)

            def __exit__(self, *exc: object) -> None:
                fake.current = self.previous

        def set_device(index: Any) -> None:
            index = torch.device(index).index if isinstance(index, str | torch.device) else index
            fake.current = fake.current if index is None else int(index)

        properties = types.SimpleNamespace(name="runtime_shim fake CUDA device", major=8, minor=0,
                                           total_memory=80 * 2**30, multi_processor_count=108)
        return {
            "is_available": lambda: True, "device_count": lambda: fake.count, "is_initialized": lambda: True,
            "current_device": lambda: fake.current, "set_device": set_device, "device": device,
            "_lazy_init": lambda: None, "init": lambda: None, "synchronize": lambda device=None: None,
            "empty_cache": lambda: None, "ipc_collect": lambda: None,
            "manual_seed": lambda seed: None, "manual_seed_all": lambda seed: None, "seed": lambda: None,
            "seed_all": lambda: None, "is_current_stream_capturing": lambda: False,
            "get_device_name": lambda device=None: properties.name,
            "get_device_capability": lambda device=None: (properties.major, properties.minor),
            "get_device_properties": lambda device=None: properties,
            "is_bf16_supported": lambda including_emulation=True: True,
            "memory_allocated": lambda device=None: 0, "max_memory_allocated": lambda device=None: 0,
            "memory_reserved": lambda device=None: 0, "reset_peak_memory_stats": lambda device=None: None,
        }

    def _legacy_types(self) -> dict[str, Any]:
        """``torch.cuda.FloatTensor(...)`` and its siblings (not available on a CPU build): a tensor on the current
        device, of sizes (``FloatTensor(2, 3)``) or of data (``FloatTensor([1, 2])``)."""
        fake = self

        class LegacyType(type):
            def __instancecheck__(cls, obj: object) -> bool:
                return isinstance(obj, torch.Tensor) and obj.is_cuda and obj.dtype == cls.dtype  # type: ignore

        def make(name: str, dtype: torch.dtype) -> Any:
            def new(cls: type, *args: Any, device: Any = None) -> torch.Tensor:
                dev = fake.normalize("cuda" if device is None else device)
                if len(args) == 1 and not isinstance(args[0], int | torch.Size):
                    return torch.tensor(args[0], dtype=dtype, device=dev)
                sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], torch.Size) else args or (0,)
                return torch.empty(*sizes, dtype=dtype, device=dev)
            return LegacyType(name, (), {"dtype": dtype, "is_cuda": True, "__new__": new, "__module__": "torch.cuda"})

        return {name: make(name, dtype) for name, dtype in _LEGACY_DTYPES.items()}

    def _patch(self, owner: Any, name: str, value: Any) -> None:
        missing = object()
        old = owner.__dict__.get(name, missing) if isinstance(owner, type) else getattr(owner, name, missing)
        setattr(owner, name, value)
        self._undo.append(lambda: delattr(owner, name) if old is missing else setattr(owner, name, old))

    def _set_default_tensor_type(self, original: Callable[[Any], None]) -> Callable[[Any], None]:
        """``torch.set_default_tensor_type(torch.cuda.FloatTensor)`` (or ``"torch.cuda.FloatTensor"``) needs the
        CUDA library: what it does to devices, factories allocating on the current CUDA device, is the default
        device ``cuda`` with that dtype; a CPU type goes back to the CPU."""
        def set_default_tensor_type(t: Any) -> None:
            name = t if isinstance(t, str) else f"{getattr(t, '__module__', '')}.{getattr(t, '__name__', '')}"
            kind = name.rpartition(".")[2]
            if name.startswith("torch.cuda.") and kind in _LEGACY_DTYPES:
                torch.set_default_dtype(_LEGACY_DTYPES[kind])
                torch.set_default_device(self.normalize("cuda"))
                return
            torch.set_default_device(None)
            original(t)
        return set_default_tensor_type

    def _generator(self) -> type:
        """``torch.Generator(device="cuda")`` needs the CUDA library: a host generator that names the fake device
        (the random ops' handler checks its device type as CUDA does, then draws without it)."""
        fake = self

        class Generator(torch._C.Generator):
            def __new__(cls, device: Any = "cpu") -> Generator:
                return super().__new__(cls, "cpu")

            def __init__(self, device: Any = "cpu") -> None:
                self._fake_device = torch.device(fake.normalize(device))

            @property
            def device(self) -> torch.device:  # type: ignore[override]
                return self._fake_device

        Generator.__qualname__ = Generator.__name__ = "Generator"
        return Generator

    def _swap_tensors(self, original: Callable[..., None]) -> Callable[..., None]:
        memo = self.mode.fake_tensor_converter.tensor_memo

        def swap_tensors(t1: torch.Tensor, t2: torch.Tensor) -> None:
            # Module moves swap fake parameters in place; fake mode's memos hold weak references to
            # them, which swap_tensors refuses. Forget those entries (only a later conversion of the
            # same real tensor would use them, and there is none).
            for key in [k for k, v in list(memo.items()) if v is t1 or v is t2]:
                del memo[key]
            for t in (t1, t2):
                _forget_weak_values(t)
            original(t1, t2)
        return swap_tensors

    def _save(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> Any:
            # Fake tensors do not pickle: checkpoints hold zeros of their shape and dtype, on the host.
            def real(value: Any) -> Any:
                if not isinstance(value, FakeTensor):
                    return value
                known = known_value(value)
                data = real_zeros_like(value) if known is None else known
                return torch.nn.Parameter(data, value.requires_grad) if isinstance(value, torch.nn.Parameter) \
                    else data
            with unset_fake_temporarily():
                return original(tree_map(real, obj), f, *args, **kwargs)
        return save

    def _load(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def load(f: Any, map_location: Any = None, *args: Any, **kwargs: Any) -> Any:
            # Load on the host for real, then make fakes on the device map_location names (a CUDA
            # copy cannot run here); without one, tensors come back on the host.
            with unset_fake_temporarily():
                obj = original(f, "cpu", *args, **kwargs)
            # a device (an int ``i`` is ``cuda:i``); a dict or a function: the host, where the fakes were saved
            target = map_location if isinstance(map_location, str | torch.device | int) \
                and not isinstance(map_location, bool) else "cpu"

            def fake(value: Any) -> Any:
                if not isinstance(value, torch.Tensor) or isinstance(value, FakeTensor):
                    return value
                moved = self.mode.from_tensor(value).to(self.normalize(target))
                made = torch.nn.Parameter(moved, value.requires_grad) if isinstance(value, torch.nn.Parameter) \
                    else moved
                if value.numel() == 1:  # an optimizer's step count: resumed Adam divides by ``1 - beta ** step``
                    with unset_fake_temporarily():
                        setattr(made, LOADED_VALUE, value.detach().clone())
                return made
            return tree_map(fake, obj)
        return load

    @contextlib.contextmanager
    def active(self) -> Iterator[FakeCuda]:
        # Without the guard the first autograd op on a fake CUDA tensor aborts the process (a C++
        # terminate, no traceback): stop first, with the one-line GuardUnavailable saying what to install.
        guard_ext.load()
        _register_missing_meta_kernels()
        for name, value in {**self._cuda_api(), **self._legacy_types()}.items():
            self._patch(torch.cuda, name, value)
        # distributions check their parameters' values (``scale > 0``): fake tensors read back zeros
        self._patch(torch.distributions.Distribution, "_validate_args", False)
        self._patch(torch.utils, "swap_tensors", self._swap_tensors(torch.utils.swap_tensors))
        self._patch(torch, "save", self._save(torch.save))
        self._patch(torch, "Generator", self._generator())
        self._patch(torch, "set_default_tensor_type", self._set_default_tensor_type(torch.set_default_tensor_type))
        self._patch(torch, "load", self._load(torch.load))
        try:
            with self.mode:
                yield self
        finally:
            while self._undo:
                self._undo.pop()()


_META_KERNELS: list[Any] = []  # the library holding them (registered once per process, kept alive)


def _gru_cell_meta(input_gates: torch.Tensor, hidden_gates: torch.Tensor, hx: torch.Tensor,
                   input_bias: torch.Tensor | None = None,
                   hidden_bias: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    # the new hidden state, and the workspace the backward reads (five gates' worth per unit)
    return torch.empty_like(hx), hx.new_empty((hx.size(0), hx.size(1) * 5))


def _register_missing_meta_kernels() -> None:
    """Shapes for the CUDA kernels an op runs on a CUDA build that have no Meta kernel, so fake mode can run
    them: ``nn.GRU``/``nn.GRUCell`` on CUDA use the fused GRU cell (the LSTM's has one)."""
    if _META_KERNELS:
        return
    library = torch.library.Library("aten", "IMPL", "Meta")
    library.impl("_thnn_fused_gru_cell", _gru_cell_meta)
    _META_KERNELS.append(library)


def _forget_weak_values(t: torch.Tensor) -> None:
    """Drop ``t`` from every weak dictionary holding it (the memos of other converters: deepcopy's,
    the meta describer's): values of a WeakValueDictionary, keys of a WeakIdKeyDictionary."""
    for ref in weakref.getweakrefs(t):
        key = getattr(ref, "key", None)  # a KeyedRef: the value reference of a WeakValueDictionary
        for holder in gc.get_referrers(ref):
            if not isinstance(holder, dict):
                continue
            if key is not None and holder.get(key) is ref:
                del holder[key]
            elif isinstance(ref, WeakIdRef) and any(k is ref for k in holder):
                del holder[ref]


# --- the values a program reads back (fake tensors have none: zeros of the right kind) ----------

def zero_of(dtype: torch.dtype) -> bool | int | float | complex:
    if dtype == torch.bool:
        return False
    if dtype.is_complex:
        return 0j
    return 0.0 if dtype.is_floating_point else 0


def numpy_dtype(dtype: torch.dtype) -> np.dtype:
    with unset_fake_temporarily():
        return torch.empty((), dtype=dtype, device="cpu").numpy().dtype  # raises as torch does for bfloat16


def zeros_array(t: torch.Tensor) -> np.ndarray:
    return np.zeros(tuple(t.shape), dtype=numpy_dtype(t.dtype))


def zeros_list(t: torch.Tensor) -> Any:
    value = zero_of(t.dtype)

    def build(shape: tuple[int, ...]) -> Any:
        return value if not shape else [build(shape[1:]) for _ in range(shape[0])]
    return build(tuple(t.shape))


#: the attribute on a fake made by ``torch.load`` that keeps a one-element tensor's loaded value (a real host tensor)
LOADED_VALUE = "_observer_loaded_value"


def known_value(t: torch.Tensor) -> torch.Tensor | None:
    """A fake's value where the observer knows it, as a real host tensor: a constant fake mode propagated (an
    optimizer's step count) or a one-element value ``torch.load`` read. In-place updates of a loaded value are not
    followed: it reads as loaded (a step count stays non-zero, which is what programs divide by)."""
    constant = getattr(t, "constant", None)
    if constant is None:
        constant = getattr(t, LOADED_VALUE, None)
    if constant is None:
        return None
    with unset_fake_temporarily():
        return constant.detach().clone().reshape(tuple(t.shape)).to("cpu")


def real_zeros_like(t: torch.Tensor) -> torch.Tensor:
    """A real CPU tensor of ``t``'s shape and dtype (for exports that need memory: DLPack)."""
    with unset_fake_temporarily():
        return torch.zeros(tuple(t.shape), dtype=t.dtype, device="cpu")
