"""Bad arguments are refused up front, by runtime_shim's own checks, with every operand left as it was.

1. The cases people write by mistake, each with the error type and the words of its message.
2. A property test: every public function and method of the API gets random wrong-typed or
   out-of-range values in one argument slot (the others valid). A value the slot's
   description (``Slot.accepts``, written here independently of ``runtime_shim.validation``)
   refuses must raise TypeError, ValueError, IndexError or a DispatchError whose innermost
   frame is runtime_shim code other than an executor (so: checked before the executor, not
   failing inside numpy or torch); an operator may instead return NotImplemented, so that
   Python raises its own ``unsupported operand`` TypeError. Values a slot may or may not take
   must succeed or raise one of those errors from runtime_shim. Afterwards, every tensor
   involved has the same values, shape, dtype and dispatch state as before.
"""

from __future__ import annotations

import math
import operator
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from conftest import device_available_here
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import runtime_shim as rs
from runtime_shim import CheckpointingStrategy, Device, DispatchError, Gradients, Tensor, reveal_device

SHIM_DIR = Path(rs.__file__).resolve().parent
EXECUTORS_DIR = SHIM_DIR / "executors"
ALLOWED = (TypeError, ValueError, IndexError, DispatchError)
INT64_MAX = 2**63 - 1


# --- 1. the common mistakes -----------------------------------------------------------------------

def flex_tensor() -> Tensor:
    return Tensor.from_floats([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], Device.flex())


MISTAKES: list[tuple[str, Callable[[Tensor], object], type[Exception], str]] = [
    ("add None", lambda t: t.add(None), TypeError, "Tensor.add: other must be a Tensor or a scalar"),
    ("sub str", lambda t: t.sub("x"), TypeError, "Tensor.sub: other must be"),
    ("mul list", lambda t: t.mul([1.0]), TypeError, "Tensor.mul: other must be"),
    ("div array", lambda t: t.div(np.ones(3)), TypeError, "wrap arrays with Tensor.from_data"),
    ("greater None", lambda t: t.greater(None), TypeError, "Tensor.greater: other must be"),
    ("matmul scalar", lambda t: t.matmul(2.0), TypeError, "Tensor.matmul: other must be a Tensor"),
    ("mask_fill int mask", lambda t: t.mask_fill(5, 1.0), TypeError, "Tensor.mask_fill: mask must be a bool Tensor"),
    ("mask_fill bad value", lambda t: t.mask_fill(t.greater(2.0), None), TypeError, "Tensor.mask_fill: value must"),
    ("mask_where None", lambda t: t.mask_where(None, t), TypeError, "Tensor.mask_where: mask must be"),
    ("to_device None", lambda t: t.to_device(None), TypeError,
     "Tensor.to_device: device must be a runtime_shim.Device"),
    ("to_device str", lambda t: t.to_device("cuda"), TypeError, "Tensor.to_device: device must be"),
    ("tensor + array", lambda t: t + np.ones(3), TypeError, "'Tensor' and 'numpy.ndarray'"),
    ("array + tensor", lambda t: np.ones(3) + t, TypeError, "'numpy.ndarray' and 'Tensor'"),
    ("array * tensor", lambda t: np.ones((2, 3)) * t, TypeError, "wrap arrays with Tensor.from_data"),
    ("sum_dim 5", lambda t: t.sum_dim(5), IndexError, "Tensor.sum_dim: dim=5 is out of range for a 2-d tensor"),
    ("sum_dim -3", lambda t: t.sum_dim(-3), IndexError, "(valid: -2..1)"),
    ("sum_dim float", lambda t: t.sum_dim(1.0), TypeError, "Tensor.sum_dim: dim must be an int"),
    ("argmax bool", lambda t: t.argmax(True), TypeError, "Tensor.argmax: dim must be an int"),
    ("swap_dims", lambda t: t.swap_dims(0, 2), IndexError, "Tensor.swap_dims: dim1=2"),
    ("transpose 1-d", lambda t: t.sum_dim(0).reshape((3,)).transpose(), ValueError, "at least 2 dims"),
    ("cat dim 9", lambda t: Tensor.cat([t, t], 9), IndexError, "Tensor.cat: dim=9"),
    ("cat one tensor", lambda t: Tensor.cat(t, 0), TypeError, "Tensor.cat: tensors must be a list or tuple"),
    ("cat empty", lambda t: Tensor.cat([], 0), ValueError, "at least one tensor"),
    ("cat shapes", lambda t: Tensor.cat([t, t.reshape((3, 2))], 0), ValueError, "outside dim 0"),
    ("cat ranks", lambda t: Tensor.cat([t, t.reshape((6,))], 0), ValueError, "rank"),
    ("reshape count", lambda t: t.reshape((4,)), ValueError, "Tensor.reshape: cannot reshape"),
    ("reshape two -1", lambda t: t.reshape((-1, -1)), ValueError, "only one size may be -1"),
    ("add shapes", lambda t: t + t.reshape((3, 2)), ValueError, "Tensor.add: shapes (2, 3), (3, 2) do not broadcast"),
    ("matmul shapes", lambda t: t @ t, ValueError, "Tensor.matmul: shapes (2, 3) and (2, 3) do not multiply"),
    ("powf str", lambda t: t.powf_scalar("2"), TypeError, "Tensor.powf_scalar: p must be an int or a float"),
    ("one_hot 0", lambda t: t.int().one_hot(0), ValueError, "Tensor.one_hot: num_classes must be >= 1"),
    ("one_hot float", lambda t: t.int().one_hot(2.5), TypeError, "Tensor.one_hot: num_classes must be an int"),
    ("add huge int", lambda t: t.add(2**70), ValueError, "does not fit in a 64-bit int"),
    ("set_require_grad int", lambda t: t.set_require_grad(1), TypeError, "flag must be a bool"),
    ("grad None", lambda t: t.grad(None), TypeError, "Tensor.grad: grads must be the Gradients"),
    ("from_inner list", lambda t: Tensor.from_inner([t]), TypeError, "Tensor.from_inner: tensor must be a Tensor"),
    ("from_floats None", lambda t: Tensor.from_floats(None, Device.flex()), TypeError, "Tensor.from_floats: data"),
    ("from_floats str", lambda t: Tensor.from_floats(["1.0"], Device.flex()), TypeError, "got strings"),
    ("from_floats ragged", lambda t: Tensor.from_floats([[1.0], [1.0, 2.0]], Device.flex()), ValueError,
     "not a rectangular array"),
    ("from_floats tensors", lambda t: Tensor.from_floats([t, t], Device.flex()), TypeError, "t.to_data()"),
    ("from_ints floats", lambda t: Tensor.from_ints([1.5], Device.flex()), TypeError, "int data expected"),
    ("from_ints huge", lambda t: Tensor.from_ints([2**70], Device.flex()), ValueError, "must fit in int64"),
    ("from_bools ints", lambda t: Tensor.from_bools([1, 0], Device.flex()), TypeError, "bool data expected"),
    ("from_data complex", lambda t: Tensor.from_data(np.ones(2, complex), Device.flex()), TypeError, "complex"),
    ("from_data uint32", lambda t: Tensor.from_data(np.ones(2, np.uint32), Device.flex()), TypeError,
     "unsupported dtype uint32"),
    ("device str", lambda t: Tensor.zeros((2,), "flex"), TypeError, "Tensor.zeros: device must be"),
    ("zeros 2**63", lambda t: Tensor.zeros((2**63,), Device.flex()), ValueError, "does not fit in a 64-bit int"),
    ("zeros 2**64 elements", lambda t: Tensor.zeros((2**32, 2**32), Device.flex()), ValueError,
     "more than a 64-bit count"),
    ("zeros too big", lambda t: Tensor.zeros((2**40, 2**20), Device.flex()), ValueError, "bytes of memory"),
    ("zeros size 2**70", lambda t: Tensor.zeros((2**70, 0), Device.flex()), ValueError, "does not fit in a 64-bit"),
    ("zeros negative", lambda t: Tensor.zeros((2, -1), Device.flex()), ValueError, "sizes must be >= 0"),
    ("zeros float size", lambda t: Tensor.ones((2.0,), Device.flex()), TypeError, "shape[0] must be an int"),
    ("zeros int shape", lambda t: Tensor.zeros(3, Device.flex()), TypeError, "shape must be a list or tuple"),
    ("full None", lambda t: Tensor.full((2,), None, Device.flex()), TypeError, "Tensor.full: value must be"),
    ("arange str", lambda t: Tensor.arange(0, "3", Device.flex()), TypeError, "Tensor.arange: end must be an int"),
    ("len 0-d", lambda t: len(t.sum().reshape(())), TypeError, "0-d tensor"),
    ("capture_scope", lambda t: Device.capture().capture_scope(None), TypeError, "fn must be callable"),
    ("set_virtual str", lambda t: rs.set_virtual("no"), TypeError, "set_virtual: enabled must be a bool"),
]


@pytest.mark.parametrize(("name", "call", "error", "words"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_a_common_mistake_gets_a_clear_error(name: str, call: Callable, error: type, words: str) -> None:
    t = flex_tensor()
    before = snapshot(t)
    with pytest.raises(error) as info:
        call(t)
    assert words in str(info.value)
    assert_raised_by_runtime_shim(info.value, operator_call=False)
    assert snapshot(t) == before


@pytest.mark.parametrize("factory", [Device.cuda, Device.rocm, Device.libtorch_cuda])
@pytest.mark.parametrize(("index", "error"), [(-1, ValueError), (None, TypeError), (1.5, TypeError),
                                              ("0", TypeError), (True, TypeError), (2**64, ValueError)])
def test_device_indices_are_non_negative_ints(factory: Callable, index: object, error: type) -> None:
    with pytest.raises(error, match=rf"Device\.{factory.__name__}: index"):
        factory(index)


def test_device_indices_accept_numpy_ints_and_real_mode_bounds_them_by_the_gpus_there() -> None:
    with rs.virtual_devices():
        assert Device.cuda(np.int64(3)) == Device.cuda(3)
        assert Device.cuda(7).index == 7  # virtual mode: every index exists
    if device_available_here("cpu"):  # torch is installed: real mode asks it how many GPUs there are
        import torch

        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        with rs.virtual_devices(False), pytest.raises(rs.BackendUnavailable, match=f"cuda:{count} does not exist"):
            Device.cuda(count)


def test_operators_return_not_implemented_and_named_methods_raise() -> None:
    t = flex_tensor()
    for method in ("__add__", "__sub__", "__mul__", "__truediv__", "__matmul__", "__radd__", "__rsub__",
                   "__rmul__", "__rtruediv__"):
        assert getattr(t, method)(None) is NotImplemented
        assert getattr(t, method)("x") is NotImplemented
    with pytest.raises(TypeError, match="unsupported operand"):
        t + None  # noqa: B018
    with pytest.raises(TypeError, match="unsupported operand"):
        None * t  # noqa: B018


def test_numpy_scalars_still_work_on_either_side_and_valid_calls_are_unchanged() -> None:
    t = flex_tensor()
    assert (np.float32(2.0) * t).to_list() == (t * 2.0).to_list()
    assert (t - np.int64(1)).to_list() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert t.sum_dim(-1).to_list() == [[6.0], [15.0]]  # negative dims count from the end
    assert t.swap_dims(-1, 0).shape == (3, 2)
    assert Tensor.cat([t, t], -1).shape == (2, 6)
    assert t.reshape([-1]).shape == (6,)
    assert Tensor.arange(5, 2, Device.flex()).shape == (0,)  # an empty range
    assert Tensor.from_floats([1, 2**70], Device.flex()).to_list() == [1.0, float(2**70)]
    assert Tensor.from_data(np.array([1, 2], np.uint8), Device.flex()).dtype == "uint8"
    assert Tensor.zeros([np.int64(2), 0], Device.flex()).shape == (2, 0)
    assert t.reshape(np.array([3, 2])).shape == (3, 2)


# --- 2. the property test ------------------------------------------------------------------------

def snapshot(t: Tensor) -> tuple:
    return t.id, t.shape, t.dtype, reveal_device(t), t.to_numpy().tobytes()


def raising_frame(error: BaseException) -> Path:
    return Path(traceback.extract_tb(error.__traceback__)[-1].filename).resolve()


def assert_raised_by_runtime_shim(error: BaseException, *, operator_call: bool, before_executor: bool = True) -> None:
    frame = raising_frame(error)
    frames = [Path(f.filename).resolve() for f in traceback.extract_tb(error.__traceback__)]
    if operator_call and isinstance(error, TypeError) and not any(f.is_relative_to(SHIM_DIR) for f in frames):
        return  # our operator returned NotImplemented: Python (or a list, str, ...) raised its own TypeError
    assert frame.is_relative_to(SHIM_DIR), f"{type(error).__name__} raised in {frame}: {error}"
    if before_executor:
        assert not frame.is_relative_to(EXECUTORS_DIR), f"reached the executor: {frame}: {error}"


def _int_like(value: object) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _int_in(value: object, low: int, high: int) -> bool:
    return _int_like(value) and low <= operator.index(value) <= high


def _scalar(value: object) -> bool:
    if isinstance(value, (bool, float, np.bool_, np.floating)):
        return True
    return _int_in(value, -(2**63), INT64_MAX)


def _leaves(value: object) -> list | None:
    """The leaves of nested lists/tuples (or of an array), or None where it is not such a nesting."""
    if isinstance(value, np.ndarray):
        return value.ravel().tolist() if value.dtype.kind in "biuf" else [object()]
    if isinstance(value, (list, tuple)):
        out: list = []
        for item in value:
            inner = _leaves(item) if isinstance(item, (list, tuple, np.ndarray)) else [item]
            if inner is None:
                return None
            out.extend(inner)
        return out
    return [value]


def _data(kind: str | None) -> Callable[[object], bool | None]:
    """Creation data: False when some leaf is not a number the kind holds; None (either) otherwise."""
    def accepts(value: object) -> bool | None:
        if value is None or isinstance(value, (str, bytes, dict, set, Tensor, Device)):
            return False
        if isinstance(value, range):
            return None  # numpy reads a range as a list
        leaves = _leaves(value)
        if leaves is None:
            return None
        for leaf in leaves:
            if isinstance(leaf, (bool, np.bool_)):
                continue
            if kind == "bool" or not isinstance(leaf, (int, float, np.integer, np.floating)):
                return False
            if isinstance(leaf, (float, np.floating)) and kind == "int":
                return False
            if isinstance(leaf, int) and kind != "float" and not -(2**63) <= leaf <= INT64_MAX:
                return False
        return None  # ragged nesting, 0-d data, float16 ranges...: the runtime decides
    return accepts


def _shape(value: object) -> bool | None:
    if not isinstance(value, (list, tuple)) or not all(_int_like(v) for v in value):
        return False
    sizes = [operator.index(v) for v in value]
    if any(not 0 <= s <= INT64_MAX for s in sizes) or math.prod(sizes) * 8 > 2**60:
        return False
    return True if math.prod(sizes) <= 2**16 else None


def _reshape_to(count: int) -> Callable[[object], bool | None]:
    def accepts(value: object) -> bool | None:
        if not isinstance(value, (list, tuple)) or not all(_int_like(v) for v in value):
            return False
        sizes = [operator.index(v) for v in value]
        if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
            return False
        known = math.prod(s for s in sizes if s != -1)
        if -1 in sizes:
            return known != 0 and count % known == 0
        return known == count
    return accepts


@dataclass
class World:
    """The tensors of one example: ``t`` is the source every call starts from."""

    t: Tensor
    i: Tensor
    mask: Tensor
    ad: Tensor
    grads: Gradients
    specials: dict[str, object]

    def tensors(self) -> list[Tensor]:
        return [self.t, self.i, self.mask, self.ad]


def build_world(device_name: str) -> World:
    device = {"flex": Device.flex, "cpu": Device.cpu, "ndarray": Device.ndarray}[device_name]()
    t = Tensor.from_floats([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device)
    ad = Tensor.from_floats([1.0, 2.0], Device.flex().autodiff()).require_grad()
    other = Device.ndarray() if device_name != "ndarray" else Device.flex()
    specials = {
        "array": np.ones(3), "float array": np.ones((2, 3)), "object array": np.array([1, None], dtype=object),
        "np float": np.float64(1.5), "np int": np.int64(-1), "np bool": np.bool_(True), "np str": np.str_("1"),
        "complex": 1j, "device": Device.flex(), "ad device": Device.flex().autodiff(), "object": object(),
        "dict": {}, "set": {1}, "slice": slice(1), "strategy": CheckpointingStrategy.BALANCED, "range": range(3),
        "tensor": t, "int tensor": Tensor.from_ints([[1, 2, 3], [4, 5, 6]], device),
        "bool tensor": Tensor.from_bools([[True, False, True], [False, True, False]], device),
        "wrong shape": Tensor.from_floats([1.0, 2.0], device), "0-d tensor": Tensor.from_floats(1.0, device),
        "other backend": Tensor.from_floats([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], other),
        "bool other shape": Tensor.from_bools([True, False], device),
        "tensor list": [t, Tensor.from_floats([1.0], device)], "mixed list": [t, 1.0], "empty": [],
        "huge shape": (2**40, 2**40), "2**63 shape": (2**63,), "negative shape": (2, -3), "huge int": 2**80,
        "huge empty shape": (2**70, 0),
    }
    return World(t, Tensor.from_ints([0, 1], device), t.greater(2.0), ad, (ad * 2.0).sum().backward(), specials)


@dataclass(frozen=True)
class Slot:
    """One argument of one API call: ``call(world, value)`` makes it; ``accepts`` says which values it takes.

    accepts: True (valid, not run here), False (must be refused), None (either).
    """

    name: str
    call: Callable[[World, object], object]
    accepts: Callable[[object], bool | None]
    operator: bool = False


def _is(*types: type) -> Callable[[object], bool]:
    return lambda v: isinstance(v, types)


def _operand(v: object) -> bool | None:
    """A scalar, or a tensor: one of another kind, or of a shape that does not broadcast, is refused."""
    if isinstance(v, Tensor):
        return None if v.kind == "float" and v.shape in ((2, 3), (3,), (1,), ()) else False
    return _scalar(v)


def _tensor_or_none(v: object) -> bool | None:
    """Only a tensor can be right here; which tensors are is the dispatch table's business."""
    return None if isinstance(v, Tensor) else False


def _dim(rank: int) -> Callable[[object], bool]:
    return lambda v: _int_in(v, -rank, rank - 1)


def _never(v: object) -> bool:
    """For slots whose every drawn value is wrong (the pool holds no valid one)."""
    return False


def _device_opt(v: object) -> bool:
    return v is None or isinstance(v, Device)


SLOTS: list[Slot] = [
    # devices
    Slot("Device.cuda(index)", lambda w, v: Device.cuda(v), lambda v: _int_in(v, 0, INT64_MAX)),
    Slot("Device.rocm(index)", lambda w, v: Device.rocm(v), lambda v: _int_in(v, 0, INT64_MAX)),
    Slot("Device.libtorch_cuda(index)", lambda w, v: Device.libtorch_cuda(v), lambda v: _int_in(v, 0, INT64_MAX)),
    Slot("Device.capture_scope(fn)", lambda w, v: Device.capture().capture_scope(v), callable),
    Slot("Scope.complete(inputs)", lambda w, v: Device.capture().capture_scope(lambda scope: scope.complete(v, [])),
         lambda v: isinstance(v, (list, tuple, dict)) and not v or False),  # only capture tensors, or none
    # creation
    Slot("Tensor.from_floats(data)", lambda w, v: Tensor.from_floats(v, Device.flex()), _data("float")),
    Slot("Tensor.from_ints(data)", lambda w, v: Tensor.from_ints(v, Device.flex()), _data("int")),
    Slot("Tensor.from_bools(data)", lambda w, v: Tensor.from_bools(v, Device.flex()), _data("bool")),
    Slot("Tensor.from_data(data)", lambda w, v: Tensor.from_data(v, Device.flex()), _data(None)),
    Slot("Tensor.from_floats(device)", lambda w, v: Tensor.from_floats([1.0], v), _device_opt),
    Slot("Tensor.from_data(device)", lambda w, v: Tensor.from_data([1], v), _device_opt),
    *(Slot(f"Tensor.{name}(shape)", lambda w, v, name=name: getattr(Tensor, name)(v, Device.flex()), _shape)
      for name in ("zeros", "ones", "random", "empty", "empty_bool")),
    Slot("Tensor.zeros(device)", lambda w, v: Tensor.zeros((2,), v), _device_opt),
    Slot("Tensor.full(shape)", lambda w, v: Tensor.full(v, 1.0, Device.flex()), _shape),
    Slot("Tensor.full(value)", lambda w, v: Tensor.full((2,), v, Device.flex()), _scalar),
    Slot("Tensor.arange(start)", lambda w, v: Tensor.arange(v, 3, Device.flex()),
         lambda v: _int_in(v, -(2**63), INT64_MAX)),
    Slot("Tensor.arange(end)", lambda w, v: Tensor.arange(0, v, Device.flex()),
         lambda v: _int_in(v, -(2**63), INT64_MAX)),
    # moves
    Slot("t.to_device(device)", lambda w, v: w.t.to_device(v), _is(Device)),
    # two-input ops and operators
    *(Slot(f"t.{name}(other)", lambda w, v, name=name: getattr(w.t, name)(v), _operand)
      for name in ("add", "sub", "mul", "div", "equal", "not_equal", "greater", "greater_equal", "lower",
                   "lower_equal")),
    Slot("t.matmul(other)", lambda w, v: w.t.matmul(v), _never),
    *(Slot(f"t {symbol} other", lambda w, v, fn=fn: fn(w.t, v), _operand, operator=True)
      for symbol, fn in (("+", operator.add), ("-", operator.sub), ("*", operator.mul), ("/", operator.truediv))),
    *(Slot(f"other {symbol} t", lambda w, v, fn=fn: fn(v, w.t), _operand, operator=True)
      for symbol, fn in (("+", operator.add), ("-", operator.sub), ("*", operator.mul), ("/", operator.truediv))),
    Slot("t @ other", lambda w, v: w.t @ v, _never, operator=True),
    # unary ops with arguments
    Slot("t.powf_scalar(p)", lambda w, v: w.t.powf_scalar(v),
         lambda v: not isinstance(v, (bool, np.bool_)) and _scalar(v)),
    Slot("t.sum_dim(dim)", lambda w, v: w.t.sum_dim(v), _dim(2)),
    Slot("t.argmax(dim)", lambda w, v: w.t.argmax(v), _dim(2)),
    Slot("t.swap_dims(dim0)", lambda w, v: w.t.swap_dims(v, 0), _dim(2)),
    Slot("t.swap_dims(dim1)", lambda w, v: w.t.swap_dims(1, v), _dim(2)),
    Slot("t.reshape(shape)", lambda w, v: w.t.reshape(v), _reshape_to(6)),
    Slot("i.one_hot(num_classes)", lambda w, v: w.i.one_hot(v), lambda v: _int_in(v, 2, INT64_MAX) or (
        None if _int_in(v, 1, 1) else False)),
    # masks
    Slot("t.mask_fill(mask)", lambda w, v: w.t.mask_fill(v, 0.0), _tensor_or_none),
    Slot("t.mask_fill(value)", lambda w, v: w.t.mask_fill(w.mask, v), _scalar),
    Slot("t.mask_where(mask)", lambda w, v: w.t.mask_where(v, w.t), _tensor_or_none),
    Slot("t.mask_where(value)", lambda w, v: w.t.mask_where(w.mask, v), _tensor_or_none),
    # cat
    Slot("Tensor.cat(tensors)", lambda w, v: Tensor.cat(v, 0), _never),
    Slot("Tensor.cat(dim)", lambda w, v: Tensor.cat([w.t, w.t], v), _dim(2)),
    Slot("Tensor.cat(tensors[1])", lambda w, v: Tensor.cat([w.t, v], 1), _tensor_or_none),
    # the autodiff API
    Slot("t.set_require_grad(flag)", lambda w, v: w.ad.set_require_grad(v), _is(bool, np.bool_)),
    Slot("t.with_gradient_checkpointing_strategy(strategy)",
         lambda w, v: w.t.with_gradient_checkpointing_strategy(v), _is(CheckpointingStrategy)),
    Slot("t.grad(grads)", lambda w, v: w.ad.grad(v), _is(Gradients)),
    Slot("t.grad_remove(grads)", lambda w, v: w.ad.grad_remove(v), _is(Gradients)),
    Slot("t.grad_replace(grads)", lambda w, v: w.ad.grad_replace(v, w.ad.inner()), _is(Gradients)),
    Slot("t.grad_replace(gradient)", lambda w, v: w.ad.grad_replace(w.grads, v),
         _tensor_or_none),
    Slot("Tensor.from_inner(tensor)", lambda w, v: Tensor.from_inner(v), lambda v: isinstance(v, Tensor) or False),
    # module functions
    Slot("reveal_device(x)", lambda w, v: reveal_device(v), _is(Tensor, Device)),
    Slot("set_profile(name)", lambda w, v: rs.set_profile(v), lambda v: isinstance(v, str) and v in rs.PROFILES),
    Slot("set_virtual(enabled)", lambda w, v: rs.set_virtual(v), _is(bool, np.bool_)),
    Slot("virtual_devices(enabled)", lambda w, v: rs.virtual_devices(v).__enter__(), _is(bool, np.bool_)),
]

BASIC = st.one_of(
    st.none(), st.booleans(), st.integers(-8, 8), st.integers(-(2**80), 2**80), st.floats(),
    st.text(max_size=3), st.binary(max_size=2), st.complex_numbers(max_magnitude=4),
    st.lists(st.one_of(st.integers(-3, 3), st.floats(-4, 4), st.text(max_size=1), st.none()), max_size=3),
    st.tuples(st.integers(-3, 3), st.integers(-3, 3)),
    st.tuples(st.integers(-3, 3), st.one_of(st.floats(-4, 4), st.text(max_size=1), st.integers(-(2**80), 2**80))),
)
SPECIAL_NAMES = list(build_world("flex").specials)
DEVICE_NAMES = [name for name in ("flex", "ndarray", "cpu") if device_available_here(name)]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(slot=st.sampled_from(SLOTS), device_name=st.sampled_from(DEVICE_NAMES),
       value=st.one_of(BASIC, st.sampled_from(SPECIAL_NAMES).map(lambda name: ("special", name))))
def test_wrong_arguments_are_refused_by_runtime_shim_and_change_nothing(slot: Slot, device_name: str,
                                                                         value: object) -> None:
    with rs.virtual_devices(), rs.profile(rs.current_profile()):
        world = build_world(device_name)
        if isinstance(value, tuple) and value[:1] == ("special",):
            value = world.specials[value[1]]
        verdict = slot.accepts(value)
        if verdict is True:
            return  # a valid value: the other runtime tests cover what it does
        involved = world.tensors() + [v for v in (value, *(value if isinstance(value, list) else ()))
                                      if isinstance(v, Tensor)]
        before = [snapshot(t) for t in involved]
        try:
            slot.call(world, value)
        except ALLOWED as error:
            assert_raised_by_runtime_shim(error, operator_call=slot.operator, before_executor=verdict is False)
        except Exception as error:  # noqa: BLE001 - the point: nothing else may escape
            pytest.fail(f"{slot.name} with {value!r}: {type(error).__name__} ({error}) is not a refusal")
        else:
            assert verdict is None, f"{slot.name} accepted {value!r}"
        assert [snapshot(t) for t in involved] == before, f"{slot.name} with {value!r} changed a tensor"
