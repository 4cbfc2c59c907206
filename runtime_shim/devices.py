"""Burn's dispatch devices and the backends behind them.

A :class:`Device` is a value: a backend variant (``Cuda(0)``, ``Flex``, ...),
optionally wrapped in autodiff with a checkpointing strategy. Equality is
hardware identity (section 1 of ``dispatch-semantics.md``): the autodiff
wrapper and the strategy are ignored.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from functools import cache

from . import recorder as recording
from .errors import BackendUnavailable, error_for
from .modes import SETTINGS
from .semantics import (
    MSG_BACKEND_UNAVAILABLE,
    MSG_UNKNOWN_BURN_DEVICE,
    CheckpointingStrategy,
    Fail,
    cell,
    has_tensor_method,
)
from .texts import device_text, plain_device_text
from .validation import check_device_index, type_name


@dataclass(frozen=True)
class BackendSpec:
    """How a backend executes: ``family`` numpy/torch/none; ``hardware`` host/cuda/declared."""

    name: str
    family: str
    hardware: str


BACKENDS: dict[str, BackendSpec] = {
    spec.name: spec
    for spec in (
        BackendSpec("Cpu", "torch", "host"),
        BackendSpec("Cuda", "torch", "cuda"),
        BackendSpec("Rocm", "numpy", "declared"),
        BackendSpec("Wgpu", "numpy", "declared"),
        BackendSpec("Vulkan", "numpy", "declared"),
        BackendSpec("Metal", "numpy", "declared"),
        BackendSpec("WebGpu", "numpy", "declared"),
        BackendSpec("Flex", "numpy", "host"),
        BackendSpec("NdArray", "numpy", "host"),
        BackendSpec("LibTorch", "torch", "host"),
        BackendSpec("Capture", "none", "host"),
    )
}

# LibTorch's own device kinds: which hardware each needs.
LIBTORCH_KINDS = {"Cpu": "host", "Cuda": "cuda", "Mps": "declared", "Vulkan": "declared"}

TORCH_INSTALL_HINT = "install torch (pip install 'devicelint[torch]', CPU build: pip install torch==2.13.0)"

_capture_ids = itertools.count(1)


class UnknownDevice(BackendUnavailable, ValueError):
    """``BURN_DEVICE`` names no backend: Burn panics, and no backend can run (MV112)."""


@cache
def _torch_installed() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):  # a blocked or half-imported torch counts as missing
        return False


def _cuda_count() -> int:
    import torch  # only reached for CUDA devices in real mode

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def availability_problem(backend: str, sub: str | None, index: int, virtual: bool) -> str | None:
    """Why this machine cannot run the device now, or ``None`` if it can."""
    spec = BACKENDS[backend]
    hardware = LIBTORCH_KINDS[sub] if sub else spec.hardware
    if spec.family == "torch" and not _torch_installed():
        return f": it executes with torch, which is not installed; {TORCH_INSTALL_HINT}"
    if virtual:
        return None
    if hardware == "declared":
        return ": no such hardware here (set RUNTIME_SHIM_VIRTUAL=1 for virtual devices)"
    if hardware == "cuda":
        count = _cuda_count()
        if index >= count:
            return (f": cuda:{index} does not exist (torch sees {count} CUDA device(s); "
                    "set RUNTIME_SHIM_VIRTUAL=1 for virtual devices)")
    return None


class Device:
    """A Burn dispatch device. Build one with the class methods (``Device.cuda(0)``)."""

    __slots__ = ("_backend", "_sub", "_index", "_ad", "_strategy", "_key", "_inner")

    def __init__(self, backend: str, index: int = 0, sub: str | None = None, *,
                 _autodiff: bool = False, _strategy: CheckpointingStrategy | None = None,
                 _check: bool = True) -> None:
        if not isinstance(backend, str):
            raise TypeError(f"Device: backend must be a backend name (str), got {type_name(backend)}")
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}")
        if _check and backend != "Capture":  # unchecked devices (the analyzer's, for repr) may hold "?"
            index = check_device_index(f"Device.{backend.lower()}", index)
        if _check and backend != "Capture":
            problem = availability_problem(backend, sub, index, SETTINGS.virtual)
            if problem is not None:
                name = f"{backend}({sub})" if sub else backend
                error = BackendUnavailable(MSG_BACKEND_UNAVAILABLE.format(backend=name, reason=problem))
                recording.record_failure(f"Device.{backend.lower()}", error)
                raise error
            if recording.ACTIVE:  # a success too: confirm needs to know the call executed
                recording.record_ok(f"Device.{backend.lower()}")
        self._backend = backend
        self._sub = sub
        self._index = index
        self._ad = _autodiff
        self._strategy = _strategy
        self._key = (backend, sub, index)
        self._inner = None  # inner() of a plain device is itself (not stored: a self-reference is a cycle)

    # --- constructors (the contract's names) -----------------------------------
    @classmethod
    def cpu(cls) -> Device:
        return cls("Cpu")

    @classmethod
    def cuda(cls, index: int = 0) -> Device:
        return cls("Cuda", check_device_index("Device.cuda", index))

    @classmethod
    def rocm(cls, index: int = 0) -> Device:
        return cls("Rocm", check_device_index("Device.rocm", index))

    @classmethod
    def wgpu(cls) -> Device:
        return cls("Wgpu")

    @classmethod
    def vulkan(cls) -> Device:
        return cls("Vulkan")

    @classmethod
    def metal(cls) -> Device:
        return cls("Metal")

    @classmethod
    def webgpu(cls) -> Device:
        return cls("WebGpu")

    @classmethod
    def flex(cls) -> Device:
        return cls("Flex")

    @classmethod
    def ndarray(cls) -> Device:
        return cls("NdArray")

    @classmethod
    def libtorch(cls) -> Device:
        return cls("LibTorch", 0, "Cpu")

    @classmethod
    def libtorch_cuda(cls, index: int = 0) -> Device:
        return cls("LibTorch", check_device_index("Device.libtorch_cuda", index), "Cuda")

    @classmethod
    def libtorch_mps(cls) -> Device:
        return cls("LibTorch", 0, "Mps")

    @classmethod
    def libtorch_vulkan(cls) -> Device:
        return cls("LibTorch", 0, "Vulkan")

    @classmethod
    def capture(cls) -> Device:
        """A new capture device: two captures are never equal."""
        return cls("Capture", next(_capture_ids))

    @classmethod
    def default(cls) -> Device:
        """``BURN_DEVICE`` if set (burn-dispatch device.rs ``Default``), else Flex.

        Burn's priority list (cuda > metal > ... > flex) ranges over the backends a build
        enables, and Burn's default features enable Flex only, so a default build picks Flex
        on every machine (device.rs ``#[cfg(any(feature = "flex", default_backend))]``).
        """
        wanted = os.environ.get("BURN_DEVICE")
        if wanted is not None:  # set, even to "": Burn matches `Ok(device_str)`
            factory = DEFAULT_NAMES.get(wanted.lower())
            if factory is None:
                raise UnknownDevice(MSG_UNKNOWN_BURN_DEVICE.format(value=wanted))
            return factory()
        return cls.flex()

    # --- autodiff wrapper -------------------------------------------------------
    def autodiff(self) -> Device:
        """The autodiff device wrapping this one (strategy ``Disabled``); on an autodiff device, where
        the profile's Burn allows it, the device itself (its strategy kept)."""
        _check_device_call("autodiff", self)
        return self if self._ad else self._wrapped(CheckpointingStrategy.DISABLED)

    def gradient_checkpointing(self) -> Device:
        """The same autodiff device with strategy ``Balanced``."""
        _check_device_call("gradient_checkpointing", self)
        return self.inner()._wrapped(CheckpointingStrategy.BALANCED)

    def gradient_checkpointing_strategy(self) -> CheckpointingStrategy | None:
        """The strategy; on a plain device an error, or ``None`` where the profile's Burn returns an
        ``Option``."""
        _check_device_call("gradient_checkpointing_strategy", self)
        return self._strategy

    def _wrapped(self, strategy: CheckpointingStrategy) -> Device:
        wrapped = Device.__new__(Device)
        wrapped._backend, wrapped._sub, wrapped._index = self._backend, self._sub, self._index
        wrapped._ad, wrapped._strategy, wrapped._key = True, strategy, self._key
        wrapped._inner = self
        return wrapped

    def inner(self) -> Device:
        """The wrapped device (the identity on a plain device)."""
        return self._inner if self._inner is not None else self

    def without_autodiff(self) -> Device:
        """Burn's later name of :meth:`inner`, in the profiles whose Burn has it."""
        if not has_tensor_method(SETTINGS.profile, "without_autodiff"):  # the same change renamed both
            raise AttributeError(f"Device.without_autodiff does not exist in profile {SETTINGS.profile}'s Burn")
        return self.inner()

    def is_autodiff(self) -> bool:
        return self._ad

    @property
    def backend(self) -> str:
        return self._backend

    @property
    def index(self) -> int:
        return self._index

    @property
    def is_capture(self) -> bool:
        return self._backend == "Capture"

    # --- identity ---------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if isinstance(other, Device):
            return self._key == other._key
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return device_text(plain_device_text(self._backend, self._sub, self._index), self._ad, self._strategy)

    def capture_scope(self, fn):  # noqa: ANN001, ANN201 - see capture.open_scope
        """Run ``fn(scope)`` in a capture scope; returns a ``Graph`` or a ``CaptureError``."""
        from .capture import run_scope

        if not callable(fn):
            raise TypeError(f"Device.capture_scope: fn must be callable (it gets the scope), got {type_name(fn)}")
        return run_scope(self, fn)


def _check_device_call(call: str, device: Device) -> None:
    row, outcome = cell("device", SETTINGS.profile, call=call, ad=device._ad)
    if isinstance(outcome, Fail):
        error = error_for(outcome.code, outcome.render())
        recording.record_failure(f"Device.{call}", error)
        raise error
    if recording.ACTIVE:
        recording.record_ok(f"Device.{call}")


DEFAULT_NAMES = {
    "cuda": Device.cuda, "metal": Device.metal, "rocm": Device.rocm, "vulkan": Device.vulkan,
    "webgpu": Device.webgpu, "wgpu": Device.wgpu, "cpu": Device.cpu, "tch": Device.libtorch,
    "libtorch": Device.libtorch, "flex": Device.flex, "ndarray": Device.ndarray,
}


def executor_place(device: Device, virtual: bool) -> tuple[str, str]:
    """(executor family, place) that runs ``device``'s tensors in the current mode."""
    spec = BACKENDS[device._backend]
    hardware = LIBTORCH_KINDS[device._sub] if device._sub else spec.hardware
    if spec.family == "numpy":
        return "numpy", "host"
    if hardware == "cuda" and not virtual:
        return "torch", f"cuda:{device._index}"
    return "torch", "cpu"
