"""Array executors: one instance per (family, place).

torch is imported only when a torch executor is first asked for, so the
numpy-only parts of the shim work where torch is not installed.
"""

from __future__ import annotations

import importlib.util
import threading

from runtime_shim.executors.base import (
    BOOL_DTYPES,
    DEFAULT_FLOAT,
    DEFAULT_INT,
    FLOAT_DTYPES,
    INT_DTYPES,
    Executor,
    Prim,
    Scalar,
)

__all__ = [
    "BOOL_DTYPES",
    "DEFAULT_FLOAT",
    "DEFAULT_INT",
    "FLOAT_DTYPES",
    "INT_DTYPES",
    "Executor",
    "Prim",
    "Scalar",
    "get_executor",
    "torch_available",
]

_executors: dict[tuple[str, str], Executor] = {}
_lock = threading.Lock()


def torch_available() -> bool:
    """Whether torch is installed, without importing it."""
    return importlib.util.find_spec("torch") is not None


def get_executor(family: str, place: str) -> Executor:
    """The executor of ``family`` ("numpy" or "torch") at ``place``, created once.

    numpy's place is "host"; torch's is "cpu" or "cuda:<index>". Raises
    ModuleNotFoundError, as raised, when torch is asked for but not installed.
    """
    key = (family, place)
    with _lock:
        executor = _executors.get(key)
        if executor is None:
            executor = _create(family, place)
            _executors[key] = executor
        return executor


def _create(family: str, place: str) -> Executor:
    if family == "numpy":
        if place != "host":
            raise ValueError(f"the numpy executor's place is 'host', got {place!r}")
        from runtime_shim.executors.numpy_executor import NumpyExecutor

        return NumpyExecutor()
    if family == "torch":
        from runtime_shim.executors.torch_executor import TorchExecutor

        return TorchExecutor(place)
    raise ValueError(f"unknown executor family {family!r}; expected 'numpy' or 'torch'")
