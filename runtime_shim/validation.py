"""Argument checks for the public API, run before any dispatch decision or executor call.

Every check raises ``TypeError`` (wrong kind of argument), ``ValueError`` (a
value no tensor can have: a negative size, a shape that does not broadcast) or
``IndexError`` (a dim outside the tensor's rank), naming the call and the
argument in the project's words. Nothing here touches a tensor's data, so a
failed check leaves every operand as it was.

Conventions (``docs/runtime_shim.md``): dims may be negative and count from
the end, Python-style (``-1`` is the last dim); sizes and device indices are
non-negative ints (``bool`` is not an int here); scalars are ``int``,
``float``, ``bool`` or numpy's numeric scalars, and ints must fit in int64.

Pure Python at import time: ``runtime_shim.devices`` (which the analyzer
imports) uses the device-index check; numpy is imported only by the data checks.
"""

from __future__ import annotations

import functools
import math
import operator
import os
from collections.abc import Iterable, Sequence
from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# numpy's dtype kinds each creation accepts: b bool, i signed, u unsigned, f float
_DATA_KINDS = {"float": "biuf", "int": "biu", "bool": "b"}
_EMPTY_DTYPES = {"float": "float32", "int": "int64", "bool": "bool"}
_SUPPORTED_DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")


def type_name(value: object) -> str:
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _is_int(value: object) -> bool:
    """An int-like index (int, numpy integer), but not a bool."""
    if type(value) is int:
        return True
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return False
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def check_int(call: str, name: str, value: object, *, minimum: int | None = None) -> int:
    """``value`` as an int; TypeError if it is not one, ValueError below ``minimum``."""
    if not _is_int(value):
        raise TypeError(f"{call}: {name} must be an int, got {type_name(value)} {value!r}")
    number = operator.index(value)
    if minimum is not None and number < minimum:
        raise ValueError(f"{call}: {name} must be >= {minimum}, got {number}")
    if not INT64_MIN <= number <= INT64_MAX:
        raise ValueError(f"{call}: {name} {number} does not fit in a 64-bit int")
    return number


def check_bool(call: str, name: str, value: object) -> bool:
    if not isinstance(value, bool) and type(value).__name__ != "bool_":
        raise TypeError(f"{call}: {name} must be a bool, got {type_name(value)} {value!r}")
    return bool(value)


# --- devices -------------------------------------------------------------------------

def check_device_index(call: str, index: object) -> int:
    """A device index: a non-negative int (whether that device exists is the backend's question)."""
    return check_int(call, "index", index, minimum=0)


def check_device(call: str, name: str, device: object, *, optional: bool = False) -> None:
    if optional and device is None:
        return
    if not isinstance(device, _device_class()):
        expected = "a runtime_shim.Device (or None for Device.default())" if optional else "a runtime_shim.Device"
        raise TypeError(f"{call}: {name} must be {expected}, got {type_name(device)}")


# --- scalars and operands --------------------------------------------------------------

def is_scalar(value: object) -> bool:
    """Whether ``value`` is a scalar operand: a Python or numpy bool, int or float (not complex)."""
    if type(value) in (int, float, bool):
        return True
    module = type(value).__module__
    if module != "numpy":
        return False
    import numpy as np

    return isinstance(value, (np.bool_, np.integer, np.floating))


def check_scalar(call: str, name: str, value: object) -> int | float | bool:
    """A scalar operand as a Python value; ints outside int64 are refused (Burn's scalars are 64-bit)."""
    if not is_scalar(value):
        raise TypeError(f"{call}: {name} must be a Tensor or a scalar (int, float, bool), got {type_name(value)}"
                        + ("; wrap arrays with Tensor.from_data" if _looks_like_array(value) else ""))
    return _python_scalar(call, name, value)


def check_value(call: str, name: str, value: object) -> int | float | bool:
    """A scalar argument that cannot be a tensor (a fill value)."""
    if not is_scalar(value):
        raise TypeError(f"{call}: {name} must be a scalar (int, float, bool), got {type_name(value)}")
    return _python_scalar(call, name, value)


def check_number(call: str, name: str, value: object) -> float:
    """A real exponent or similar: int or float, not bool."""
    if isinstance(value, bool) or type(value).__name__ == "bool_" or not is_scalar(value):
        raise TypeError(f"{call}: {name} must be an int or a float, got {type_name(value)}")
    return _python_scalar(call, name, value)


def _python_scalar(call: str, name: str, value: Any) -> int | float | bool:
    if type(value) not in (int, float, bool):
        value = value.item()
    if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"{call}: {name} {value} does not fit in a 64-bit int")
    return value


def is_array(value: object) -> bool:
    """A numpy array or another object numpy would turn into one (not a scalar, not a Tensor)."""
    return not _is_tensor(value) and (hasattr(value, "__array__") or hasattr(value, "__array_interface__"))


def _looks_like_array(value: object) -> bool:
    return is_array(value) or isinstance(value, (list, tuple))


def check_tensor(call: str, name: str, value: object, what: str = "a Tensor") -> None:
    if not isinstance(value, _tensor_class()):
        raise TypeError(f"{call}: {name} must be {what}, got {type_name(value)}")


def check_gradients(call: str, grads: object) -> None:
    from .autodiff import Gradients

    if not isinstance(grads, Gradients):
        raise TypeError(f"{call}: grads must be the Gradients that backward() returned, got {type_name(grads)}")


def check_tensors(call: str, name: str, values: object, *, allow_empty: bool = False) -> list:
    """A non-empty list (or tuple, or other iterable) of tensors."""
    Tensor = _tensor_class()  # noqa: N806 - the class
    if isinstance(values, (Tensor, str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{call}: {name} must be a list or tuple of Tensors, got {type_name(values)}")
    values = list(values)
    if not values and not allow_empty:
        raise ValueError(f"{call}: {name} must hold at least one tensor")
    for i, value in enumerate(values):
        if not isinstance(value, Tensor):
            raise TypeError(f"{call}: {name}[{i}] must be a Tensor, got {type_name(value)}")
    return list(values)


# --- shapes and dims ------------------------------------------------------------------------

def check_shape(call: str, shape: object, *, allow_infer: bool = False) -> tuple[int, ...]:
    """A shape: a list or tuple (or 1-d array) of non-negative ints (``-1`` once, to infer, where ``allow_infer``)."""
    if type(shape) is not tuple and type(shape) is not list and is_array(shape) and getattr(shape, "ndim", None) == 1:
        shape = shape.tolist()  # (plain lists and tuples are never arrays: no attribute probes for them)
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{call}: shape must be a list or tuple of ints, got {type_name(shape)}")
    if all(type(size) is int and 0 <= size <= INT64_MAX for size in shape):  # the common case, fast
        return tuple(shape)
    sizes = []
    for i, size in enumerate(shape):
        if not _is_int(size):
            raise TypeError(f"{call}: shape[{i}] must be an int, got {type_name(size)} {size!r}")
        sizes.append(operator.index(size))
    inferred = [i for i, size in enumerate(sizes) if size == -1] if allow_infer else []
    if len(inferred) > 1:
        raise ValueError(f"{call}: only one size may be -1 (inferred), got shape {tuple(sizes)}")
    for i, size in enumerate(sizes):
        if size < 0 and i not in inferred:
            raise ValueError(f"{call}: sizes must be >= 0{' (or -1 once)' if allow_infer else ''}, "
                             f"got {size} at shape[{i}]")
        if size > INT64_MAX:
            raise ValueError(f"{call}: size {size} at shape[{i}] does not fit in a 64-bit int")
    return tuple(sizes)


def check_creation_shape(call: str, shape: object, itemsize: int) -> tuple[int, ...]:
    """A creation's shape, refused when its elements could never be allocated on this machine."""
    sizes = check_shape(call, shape)
    _check_allocatable(call, sizes, itemsize)
    return sizes


def _check_allocatable(call: str, sizes: tuple[int, ...], itemsize: int) -> None:
    count = math.prod(sizes)
    if count > INT64_MAX:
        raise ValueError(f"{call}: shape {sizes} has {count} elements, more than a 64-bit count can hold")
    limit = _memory_bytes()
    if limit is not None and count * itemsize > limit:
        raise ValueError(f"{call}: shape {sizes} needs {count * itemsize} bytes, "
                         f"more than this machine's {limit} bytes of memory")


@functools.cache
def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # not POSIX: leave it to the allocator
        return None


def check_dim(call: str, name: str, dim: object, rank: int) -> int:
    """A dim of a rank-``rank`` tensor, normalised to 0..rank-1 (negative dims count from the end)."""
    if not _is_int(dim):
        raise TypeError(f"{call}: {name} must be an int, got {type_name(dim)} {dim!r}")
    number = operator.index(dim)
    if rank == 0:
        raise IndexError(f"{call}: a 0-d tensor has no dims, got {name}={number}")
    if not -rank <= number < rank:
        raise IndexError(f"{call}: {name}={number} is out of range for a {rank}-d tensor "
                         f"(valid: {-rank}..{rank - 1})")
    return number % rank


def check_rank(call: str, shape: tuple[int, ...], minimum: int) -> None:
    if len(shape) < minimum:
        raise ValueError(f"{call}: needs a tensor with at least {minimum} dims, got shape {shape}")


def check_reshape(call: str, shape: object, old: tuple[int, ...]) -> tuple[int, ...]:
    """The new shape of a reshape: as many elements as ``old`` (one ``-1`` is inferred)."""
    sizes = check_shape(call, shape, allow_infer=True)
    count = math.prod(old)
    if -1 in sizes:
        known = math.prod(size for size in sizes if size != -1)
        if known == 0 or count % known:
            raise ValueError(f"{call}: cannot reshape a tensor of shape {old} into {sizes}")
        sizes = tuple(count // known if size == -1 else size for size in sizes)
    if math.prod(sizes) != count:
        raise ValueError(f"{call}: cannot reshape a tensor of shape {old} ({count} elements) "
                         f"into {sizes} ({math.prod(sizes)} elements)")
    return sizes


def broadcast_shape(call: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy's broadcast of ``shapes`` (the executors broadcast alike), or ValueError."""
    rank = max(len(shape) for shape in shapes)
    result = []
    for axis in range(rank):
        sizes = {shape[axis - rank + len(shape)] for shape in shapes if axis - rank + len(shape) >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(f"{call}: shapes {', '.join(str(s) for s in shapes)} do not broadcast "
                             f"(dim {axis} of the result has sizes {sorted(sizes)})")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def check_matmul(call: str, lhs: tuple[int, ...], rhs: tuple[int, ...]) -> None:
    """Matrix product shapes: contracted sizes equal, batch dims broadcast (numpy's matmul rules)."""
    if not lhs or not rhs:
        raise ValueError(f"{call}: both operands need at least one dim, got shapes {lhs} and {rhs}")
    inner = rhs[-2] if len(rhs) >= 2 else rhs[0]
    if lhs[-1] != inner:
        raise ValueError(f"{call}: shapes {lhs} and {rhs} do not multiply "
                         f"(lhs's last dim {lhs[-1]} != rhs's {'second-to-last' if len(rhs) >= 2 else 'only'} "
                         f"dim {inner})")
    if len(lhs) > 2 and len(rhs) > 2:
        broadcast_shape(call + " (batch dims)", lhs[:-2], rhs[:-2])


def check_cat(call: str, shapes: Sequence[tuple[int, ...]], dim: object) -> int:
    """Tensors joined along ``dim``: one rank, equal sizes in every other dim. Returns dim (normalised)."""
    rank = len(shapes[0])
    axis = check_dim(call, "dim", dim, rank)
    for i, shape in enumerate(shapes[1:], 1):
        if len(shape) != rank:
            raise ValueError(f"{call}: tensors[{i}] has rank {len(shape)}, tensors[0] has rank {rank}")
        if any(a != b for k, (a, b) in enumerate(zip(shape, shapes[0], strict=True)) if k != axis):
            raise ValueError(f"{call}: tensors[{i}] has shape {shape}, which differs from tensors[0]'s "
                             f"{shapes[0]} outside dim {axis}")
    return axis


# --- creation data ------------------------------------------------------------------------------

def creation_array(call: str, data: object, kind: str | None) -> Any:
    """``data`` as a numpy array whose values a ``kind`` tensor can hold (any supported kind if None).

    Accepts a number, nested lists/tuples of numbers, a numpy array or a TensorData; refuses
    None, strings, ragged nesting, objects (tensors included) and values that do not fit.
    """
    import numpy as np

    value = getattr(data, "value", data) if type(data).__name__ == "TensorData" else data
    if value is None or isinstance(value, (str, bytes, dict, set, _tensor_class())):
        raise TypeError(f"{call}: data must be a number, a (nested) list of numbers or a numpy array, "
                        f"got {type_name(value)}" + ("; use t.to_data()" if _is_tensor(value) else ""))
    try:
        array = np.asarray(value)
    except (ValueError, TypeError, OverflowError):
        raise ValueError(f"{call}: data is not a rectangular array of numbers "
                         "(lists nested to different depths or lengths)") from None
    if array.dtype.kind == "O" and not isinstance(value, np.ndarray):
        array = _python_ints(call, kind, array)
    dtype = array.dtype  # (dtype.name is slow: only error paths ask for it)
    if dtype.kind not in "biuf" or dtype.itemsize > 8:
        raise TypeError(f"{call}: data must hold numbers of a supported dtype ({', '.join(_SUPPORTED_DTYPES)}), "
                        f"got {_describe_dtype(array)}")
    if array.size == 0 and not isinstance(value, np.ndarray) and kind is not None:
        return array.astype(_EMPTY_DTYPES[kind])  # `[]` has no element type: it is whatever was asked for
    allowed = _DATA_KINDS[kind] if kind is not None else "biuf"
    if array.dtype.kind not in allowed:
        found = {"b": "bool", "i": "int", "u": "int", "f": "float"}[array.dtype.kind]
        hint = {"int": "; use from_floats and .int() to cast", "bool": "; compare to build a mask"}.get(kind or "", "")
        raise TypeError(f"{call}: {kind} data expected, got {found} data{hint}")
    if (kind != "float" and array.dtype.kind == "u" and array.dtype.itemsize == 8 and array.size
            and int(array.max()) > INT64_MAX):
        raise ValueError(f"{call}: int data must fit in int64, got {int(array.max())}")
    if kind is None and dtype.kind == "u" and dtype.itemsize > 1:  # from_data keeps the dtype: it must exist
        raise TypeError(f"{call}: unsupported dtype {array.dtype.name}; supported: {', '.join(_SUPPORTED_DTYPES)}")
    return array


def _python_ints(call: str, kind: str | None, array: Any) -> Any:
    """An object array from Python data: ints beyond int64 (numpy's fallback), or non-numbers."""
    import numpy as np

    items = array.ravel().tolist()
    bad = next((item for item in items if type(item) not in (int, float, bool)), None)
    if bad is not None:
        raise TypeError(f"{call}: data must hold numbers only, found {type_name(bad)}"
                        + ("; use t.to_data()" if _is_tensor(bad) else ""))
    huge = next((item for item in items if type(item) is int and not INT64_MIN <= item <= INT64_MAX), None)
    if kind != "float" and huge is not None:
        raise ValueError(f"{call}: int data must fit in int64, got {huge}")
    return np.asarray(items, dtype=np.float64 if huge is not None else None).reshape(array.shape)


def _describe_dtype(array: Any) -> str:
    names = {"U": "strings", "S": "bytes", "c": "complex numbers", "O": "Python objects", "M": "datetimes",
             "m": "timedeltas", "V": "structured records"}
    return names.get(array.dtype.kind, array.dtype.name)


_CLASSES: dict[str, type] = {}


def _tensor_class() -> type:
    """``Tensor``, imported on first use (this module loads before it)."""
    cls = _CLASSES.get("Tensor")
    if cls is None:
        from .tensor import Tensor

        cls = _CLASSES["Tensor"] = Tensor
    return cls


def _device_class() -> type:
    cls = _CLASSES.get("Device")
    if cls is None:
        from .devices import Device

        cls = _CLASSES["Device"] = Device
    return cls


def _is_tensor(value: object) -> bool:
    return isinstance(value, _tensor_class())
