"""Fake mode's stand-ins for the torch calls fake tensors cannot run, each raising first exactly
what real torch raises there (the texts of tensor_numpy.cpp, _tensor.py and the indexing checks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch._subclasses.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    unset_fake_temporarily,
)
from torch.utils._pytree import tree_flatten, tree_map

from ..torch_semantics import EXACT_DEVICE_OPS, generator_message, lengths_message, lengths_outcome, pin_message
from .fake_cuda import FakeCuda, known_value, real_zeros_like, zero_of, zeros_array, zeros_list

Handler = Callable[[Callable[..., Any], tuple, dict], Any]
_PARSE_TO = torch._C._nn._parse_to


def _is_device(value: Any) -> bool:
    return isinstance(value, torch.device) or (isinstance(value, str) and value.split(":")[0] in
                                                ("cpu", "cuda", "meta", "mps", "xpu"))


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def to_moves(args: tuple, kwargs: dict) -> bool:
    """``Tensor.to(...)`` names a device (or a tensor whose device it takes): a move, not a cast."""
    if kwargs.get("device") is not None:
        return True
    return any(_is_device(a) or isinstance(a, torch.Tensor) or (isinstance(a, int) and not isinstance(a, bool))
               for a in args[1:])


def normalize_devices(fake: FakeCuda, func: Callable[..., Any], args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Give ``cuda`` its current index (a CPU build cannot ask a driver for it)."""
    if "device" in kwargs and kwargs["device"] is not None:
        kwargs = {**kwargs, "device": fake.normalize(kwargs["device"])}
    if func is torch.Tensor.to:
        args = (args[0], *(fake.normalize(a) if _is_device(a) or _is_index(a) else a for a in args[1:]))
    elif func is _PARSE_TO:  # ``module.to(rank)``: Module.to parses its arguments first (an int is cuda:int)
        args = tuple(fake.normalize(a) if _is_device(a) or _is_index(a) else a for a in args)
    elif func is torch.Tensor.cuda:
        device = args[1] if len(args) > 1 else kwargs.get("device")
        device = torch.device("cuda", device) if isinstance(device, int) else device
        kwargs = {**{k: v for k, v in kwargs.items() if k != "device"},
                  "device": fake.normalize(device if device is not None else "cuda")}
        args = args[:1]
    return args, kwargs


def move(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """Fake mode runs ops on constants it knows (``torch.tensor(0.5)``) for real, and a real op to
    CUDA cannot run here: move the shape, not the constant."""
    t = args[0]
    constant = getattr(t, "constant", None)
    if constant is None:
        return func(*args, **kwargs)
    t.constant = None
    try:
        return func(*args, **kwargs)
    finally:
        t.constant = constant


# --- reading values back ------------------------------------------------------------------------

def _numpy_checks(t: torch.Tensor) -> None:
    if t.device.type != "cpu":
        raise TypeError(f"can't convert {t.device} device type tensor to numpy. "
                        "Use Tensor.cpu() to copy the tensor to host memory first.")
    if torch.is_grad_enabled() and t.requires_grad:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")


def _values(t: torch.Tensor) -> Any:
    """The tensor's values when the observer knows them (:func:`known_value`), else zeros."""
    known = known_value(t)
    if known is not None:
        with unset_fake_temporarily():
            return known.numpy().copy()
    return zeros_array(t)


def _known_scalar(t: torch.Tensor) -> Any:
    """A one-element fake's value when the observer knows it (read back by ``torch.load``), else zero."""
    known = known_value(t)
    if known is None:
        return zero_of(t.dtype)
    with unset_fake_temporarily():
        return known.item()


def numpy(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    t = args[0]
    if not kwargs.get("force", False):
        _numpy_checks(t)
    return _values(t)


def array(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    t, dtype = args[0], (args[1] if len(args) > 1 else kwargs.get("dtype"))
    _numpy_checks(t)
    values = _values(t)
    return values if dtype is None else values.astype(dtype, copy=False)


def _known(stand_in: Handler) -> Handler:
    """Fake mode answers for constants it propagated (an optimizer's step count); the stand-in
    answers where the value depends on data fake tensors do not have."""
    def handler(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        try:
            return func(*args, **kwargs)
        except DataDependentOutputException:
            return stand_in(func, args, kwargs)
    return handler


def _one_element(t: torch.Tensor, message: str) -> None:
    if t.numel() != 1:
        raise RuntimeError(message.format(n=t.numel()))


def item(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    _one_element(args[0], "a Tensor with {n} elements cannot be converted to Scalar")
    return _known_scalar(args[0])


def boolean(func: Callable[..., Any], args: tuple, kwargs: dict) -> bool:
    t = args[0]
    if t.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    if t.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    return False


def _scalar(kind: type) -> Handler:
    def convert(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        _one_element(args[0], "only one element tensors can be converted to Python scalars")
        return kind(_known_scalar(args[0]))
    return convert


def tolist(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    return zeros_list(args[0])


def format_(func: Callable[..., Any], args: tuple, kwargs: dict) -> str:
    """``f"{loss:.3f}"``: a 0-dim tensor formats its value (Tensor.__format__ skips subclasses)."""
    t, spec = args[0], (args[1] if len(args) > 1 else "")
    if t.dim() != 0:
        return object.__format__(t, spec)
    return format(_known(item)(torch.Tensor.item, (t,), {}), spec)


def dlpack(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    t = args[0]
    if t.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    return real_zeros_like(t).__dlpack__()  # fake tensors have no memory to share: zeros on the host


# --- indexing and backward ------------------------------------------------------------------------

def index(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """FakeTensor lets a CPU tensor be indexed by a CUDA index; real indexing does not."""
    t = args[0]
    for idx in tree_flatten(args[1] if len(args) > 1 else None)[0]:
        if isinstance(idx, torch.Tensor) and idx.dim() > 0 and idx.device.type != "cpu" and idx.device != t.device:
            raise RuntimeError(
                f"indices should be either on cpu or on the same device as the indexed tensor ({t.device})")
    try:
        return func(*args, **kwargs)
    except DynamicOutputShapeException:
        return masked_index(t, args[1], args[2] if len(args) > 2 else None, func is torch.Tensor.__setitem__)
    except DataDependentOutputException:
        # A 0-dim integer tensor used as an index is read as a Python int: fake mode has no value,
        # so it reads 0, like .item() does here (and like numpy's slicing of it, through ``__index__``);
        # a slice's bounds too (``data[i:i + block]`` of a sampled ``i``: an empty slice, which runs on)
        def as_int(value: Any) -> Any:
            if isinstance(value, torch.Tensor) and value.dim() == 0 and not value.is_floating_point():
                return zero_of(value.dtype)
            if isinstance(value, slice):
                step = as_int(value.step)
                return slice(as_int(value.start), as_int(value.stop), step if step != 0 else None)
            return value
        return func(args[0], tree_map(as_int, args[1]), *args[2:], **kwargs)


def backward(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """Backward over fake CUDA tensors: the engine wants a real accelerator, so when it refuses,
    give every leaf the graph reaches a zero gradient (what fake gradients would hold anyway)."""
    try:
        return func(*args, **kwargs)
    except RuntimeError as error:
        if "Cannot access accelerator device" not in str(error):
            raise
    nodes, seen = [args[0].grad_fn], set()
    while nodes:
        node = nodes.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        leaf = getattr(node, "variable", None)
        if isinstance(leaf, torch.Tensor) and leaf.grad is None:
            leaf.grad = torch.zeros_like(leaf)
        nodes.extend(n for n, _ in node.next_functions)
    return None


def new_tensor(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``torch.tensor(data, device="cuda:i")`` copies host data to the device outside fake dispatch:
    build it on the host and move it, keeping it a leaf."""
    device = kwargs.get("device")
    if device is None:  # ``torch.set_default_device("cuda")``: made there, as real torch does
        device = _default_device()
    data = args[0] if args else kwargs.get("data")
    if isinstance(data, list | tuple) and any(isinstance(leaf, torch.Tensor) for leaf in tree_flatten(data)[0]):
        # Real torch reads each element tensor's value (on the host); fake ones have none: zeros.
        data = tree_map(_element_value, data)
        args, kwargs = ((data, *args[1:]), kwargs) if args else ((), {**kwargs, "data": data})
    if device is None or torch.device(device).type == "cpu" or isinstance(data, torch.Tensor):
        return func(*args, **kwargs)  # (a tensor's own move is fake dispatch's)
    requires_grad = kwargs.get("requires_grad", False)
    host_kwargs = {**kwargs, "device": "cpu"}
    if "requires_grad" in kwargs:  # (``torch.as_tensor`` takes none)
        host_kwargs["requires_grad"] = False
    host = func(*args, **host_kwargs)
    return move(torch.Tensor.to, (host, device), {}).detach().requires_grad_(requires_grad)


def _element_value(value: Any) -> Any:
    if not isinstance(value, torch.Tensor):
        return value
    _one_element(value, "only one element tensors can be converted to Python scalars")
    return _known(item)(torch.Tensor.item, (value,), {})


def legacy_new(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``t.new(data)`` (legacy): a tensor of ``t``'s dtype on ``t``'s device; fake mode cannot copy the data
    there. ``t.new(sizes...)`` and ``t.new()`` need no data: fake dispatch runs them."""
    t, rest = args[0], args[1:]
    if len(rest) == 1 and isinstance(rest[0], list | tuple) and not isinstance(rest[0], torch.Size):
        return new_tensor(torch.tensor, (rest[0],), {"dtype": t.dtype, "device": kwargs.get("device", t.device)})
    return func(*args, **kwargs)


def new_data_tensor(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``t.new_tensor(data)``: ``torch.tensor(data)`` with ``t``'s dtype and device unless given; fake mode cannot
    copy the data to a fake device (as for ``torch.tensor``)."""
    t, data = args[0], args[1] if len(args) > 1 else kwargs["data"]
    options = {"dtype": kwargs.get("dtype") or t.dtype, "device": kwargs.get("device") or t.device}
    made = new_tensor(torch.tensor, (data,), options)
    return made.requires_grad_() if kwargs.get("requires_grad") else made


# --- what CUDA checks that fake mode does not --------------------------------------------------------

_LEGACY_TYPE_NAMES = {
    torch.float32: "FloatTensor", torch.float64: "DoubleTensor", torch.float16: "HalfTensor",
    torch.bfloat16: "BFloat16Tensor", torch.int64: "LongTensor", torch.int32: "IntTensor",
    torch.int16: "ShortTensor", torch.int8: "CharTensor", torch.uint8: "ByteTensor", torch.bool: "BoolTensor",
}


def _legacy_type(t: torch.Tensor) -> str:
    name = _LEGACY_TYPE_NAMES.get(t.dtype, f"{t.dtype}Tensor")
    return f"torch.cuda.{name}" if t.device.type == "cuda" else f"torch.{name}"


def convolution(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """Convolutions check their input against the weight by tensor type, before any device check (fake
    mode's meta kernels check neither): CUDA's text, from aten/src/ATen/native/Convolution.cpp."""
    data, weight = (args[0] if args else kwargs.get("input")), (args[1] if len(args) > 1 else kwargs.get("weight"))
    if isinstance(data, torch.Tensor) and isinstance(weight, torch.Tensor) and data.device != weight.device:
        message = f"Input type ({_legacy_type(data)}) and weight type ({_legacy_type(weight)}) should be the same"
        if data.device.type == "cpu":
            message += " or input should be a MKLDNN tensor and weight is a dense tensor"
        raise RuntimeError(message)
    return func(*args, **kwargs)


def exact_devices(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """Ops whose CUDA wrapper checks every tensor argument's device, a 0-dim CPU one too (fake mode lets a CPU
    scalar through, as element-wise ops do): the wrapper's words (``check_and_update_common_device``), as an
    H200 raises them (docs/results/2026-12-04-h200-zero-dim)."""
    named = [(f"arg{i}", a) for i, a in enumerate(args)] + list(kwargs.items())
    tensors = [(name, t) for name, value in named for t in tree_flatten(value)[0] if isinstance(t, torch.Tensor)]
    # (other mismatches fake mode raises itself, in the words it always used)
    if any(t.device.type == "cpu" and t.dim() == 0 for _name, t in tensors) \
            and any(t.device.type != "cpu" for _name, t in tensors):
        first = next(t.device for _name, t in tensors if not (t.device.type == "cpu" and t.dim() == 0))
        for name, t in tensors:
            if t.device != first:
                op = getattr(func, "__name__", "op")
                argument = _ARGUMENT_NAMES.get(op, {}).get(name, name)
                method = "_index_select" if op == "embedding" else op  # (an embedding looks its rows up so)
                raise RuntimeError(f"Expected all tensors to be on the same device, but got {argument} is on "
                                   f"{t.device}, different from other tensors on {first} (when checking argument "
                                   f"in method wrapper_CUDA_{method})")
    return func(*args, **kwargs)


#: the argument names the CUDA wrappers print, by position (``arg2`` of ``index_add_`` is its index)
_ARGUMENT_NAMES: dict[str, dict[str, str]] = {
    **dict.fromkeys(("index_select", "gather", "take"), {"arg1": "index", "arg2": "index"}),
    **dict.fromkeys(("scatter", "scatter_", "scatter_add", "scatter_add_", "index_add", "index_add_", "index_copy",
                     "index_copy_", "index_fill", "index_fill_"), {"arg2": "index", "arg3": "src"}),
    "embedding": {"arg0": "index"},
}


def masked_fill(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``masked_fill`` checks its mask's device first, in its own words (TensorAdvancedIndexing.cpp)."""
    t, mask = args[0], (args[1] if len(args) > 1 else kwargs.get("mask"))
    if isinstance(mask, torch.Tensor) and mask.device != t.device:
        raise RuntimeError(f"expected self and mask to be on the same device, but got mask on {mask.device} "
                           f"and self on {t.device}")
    return func(*args, **kwargs)


def _random(output_device: Callable[[tuple, dict], str]) -> Handler:
    """A random op given a generator of another device type fails (CUDA's check in check_generator)."""
    def handler(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        generator = kwargs.get("generator")
        if isinstance(generator, torch._C.Generator):  # (``torch.Generator`` is the fake one while faking)
            device = output_device(args, kwargs)
            if device != generator.device.type:
                raise RuntimeError(generator_message(device, generator.device.type))
            if generator.device.type != "cpu":  # a fake CUDA generator draws on the host: fake values need none
                kwargs = {k: v for k, v in kwargs.items() if k != "generator"}
        return func(*args, **kwargs)
    return handler


def _default_device() -> Any:
    """``torch.set_default_device``'s device, or None (``torch.get_default_device()`` would build a tensor to
    learn its index, outside fake dispatch here)."""
    context = getattr(getattr(torch, "_GLOBAL_DEVICE_CONTEXT", None), "device_context", None)
    return context.device if context is not None else None


def _default_device_type() -> str:
    """The type of ``torch.set_default_device``'s device."""
    device = _default_device()
    return torch.device(device).type if device is not None else "cpu"


def _created_on(args: tuple, kwargs: dict) -> str:
    device = kwargs.get("device")
    return torch.device(device).type if device is not None else _default_device_type()


def _on_first(args: tuple, kwargs: dict) -> str:
    return args[0].device.type if args and isinstance(args[0], torch.Tensor) else _default_device_type()


# --- data-dependent shapes -------------------------------------------------------------------------
# Fake tensors have no values, so an op whose output size depends on them cannot size its result. The
# observer follows devices, not values: it takes every element as selected (the largest result, so no
# program stops on an empty one), on the device the real op would give.

def _selected(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    try:
        return func(*args, **kwargs)
    except DynamicOutputShapeException:
        t = args[0]
        as_tuple = kwargs.get("as_tuple", False)
        if func in (torch.masked_select, torch.Tensor.masked_select):
            mask = args[1] if len(args) > 1 else kwargs["mask"]
            size = torch.broadcast_shapes(t.shape, mask.shape).numel()
            return torch.zeros(size, dtype=t.dtype, device=t.device)
        if as_tuple:
            return tuple(torch.zeros(t.numel(), dtype=torch.long, device=t.device) for _ in range(max(t.dim(), 1)))
        return torch.zeros((t.numel(), t.dim()), dtype=torch.long, device=t.device)


def _mask_of(key: Any) -> torch.Tensor | None:
    """The boolean mask of ``t[mask]`` (alone, or alone in a tuple)."""
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    if isinstance(key, torch.Tensor) and key.dtype == torch.bool:
        return key
    return None


def masked_index(t: torch.Tensor, key: Any, value: Any, setting: bool) -> Any:
    """``t[mask]`` / ``t[mask] = value`` when fake mode cannot size the selection (see above)."""
    mask = _mask_of(key)
    if mask is None:
        raise DynamicOutputShapeException(torch.ops.aten.nonzero.default)
    if setting:  # values are zeros: writing changes nothing a fake tensor holds
        return None
    return torch.zeros((mask.numel(), *t.shape[mask.dim():]), dtype=t.dtype, device=t.device)


def grad(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``torch.autograd.grad`` over fake CUDA tensors: zero gradients, as for backward."""
    try:
        return func(*args, **kwargs)
    except RuntimeError as error:
        if "Cannot access accelerator device" not in str(error):
            raise
    inputs = args[1] if len(args) > 1 else kwargs["inputs"]
    inputs = (inputs,) if isinstance(inputs, torch.Tensor) else tuple(inputs)
    return tuple(torch.zeros_like(t) for t in inputs)


def pin_memory(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """Pinned host memory needs a driver; for devices it is the same host tensor. A tensor on a GPU cannot be
    pinned: ``is_pinned`` answers False for it and ``_pin_memory`` checks (aten/src/ATen/native/Memory.cpp)."""
    t = args[0]
    if isinstance(t, torch.Tensor) and t.device.type != "cpu":
        raise RuntimeError(pin_message(_legacy_type(t)))
    return t


def pack_padded(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``_pack_padded_sequence(input, lengths, batch_first)``: ATen checks ``lengths`` first (a CPU int64 tensor),
    then sizes its results by their values, which fake mode cannot: the packed data of the real sizes (the
    lengths are host values, read as a real run reads them) on the input's device, the batch sizes on the CPU."""
    input_, lengths = args[0], args[1]
    if lengths_outcome(str(lengths.device)) is not None:  # (the message as ATen words it: this tensor's dim and type)
        raise RuntimeError(lengths_message(lengths.dim(), str(lengths.device), _scalar_name(lengths)))
    try:
        return func(*args, **kwargs)
    except DynamicOutputShapeException:
        batch_first = args[2] if len(args) > 2 else kwargs.get("batch_first", False)
        steps, batch = (input_.shape[1], input_.shape[0]) if batch_first else (input_.shape[0], input_.shape[1])
        # lengths fake mode propagated are read as they are; others as full (the largest result, as for masks)
        known = getattr(lengths, "constant", None) is not None
        counts = [int(n) for n in _values(lengths).reshape(-1).tolist()] if known else [steps] * batch
        batch_sizes = torch.tensor([sum(1 for n in counts if n > t) for t in range(max(counts, default=0))],
                                   dtype=torch.int64)
        return torch.zeros((sum(counts), *input_.shape[2:]), dtype=input_.dtype, device=input_.device), batch_sizes


def _scalar_name(t: torch.Tensor) -> str:
    return {torch.int64: "Long", torch.int32: "Int", torch.float32: "Float", torch.float64: "Double"}.get(
        t.dtype, str(t.dtype).removeprefix("torch."))


def _exact_device_functions() -> list[Callable[..., Any]]:
    """The torch functions and tensor methods of :data:`EXACT_DEVICE_OPS` (``torch.gather``, ``Tensor.gather``)."""
    found = []
    for name in sorted(EXACT_DEVICE_OPS):
        for owner in (torch, torch.Tensor, torch.nn.functional):
            function = getattr(owner, name, None)
            if callable(function) and function not in found:
                found.append(function)
    return found


HANDLERS: dict[Callable[..., Any], Handler] = {
    torch._VF._pack_padded_sequence: pack_padded,  # type: ignore[attr-defined]
    torch.autograd.grad: grad, torch.Tensor.pin_memory: pin_memory,
    torch.tensor: new_tensor, torch.as_tensor: new_tensor,
    torch.Tensor.to: move, torch.Tensor.cuda: move,
    torch.Tensor.numpy: numpy, torch.Tensor.__array__: array,
    torch.Tensor.item: _known(item), torch.Tensor.tolist: _known(tolist), torch.Tensor.__bool__: _known(boolean),
    torch.Tensor.__int__: _known(_scalar(int)), torch.Tensor.__index__: _known(_scalar(int)),
    torch.Tensor.__float__: _known(_scalar(float)), torch.Tensor.__complex__: _known(_scalar(complex)),
    torch.Tensor.__format__: format_, torch.Tensor.__dlpack__: dlpack,
    torch.Tensor.__getitem__: index, torch.Tensor.__setitem__: index,
    torch.Tensor.backward: backward, torch.Tensor.new: legacy_new, torch.Tensor.new_tensor: new_data_tensor,
    **dict.fromkeys((torch.conv1d, torch.conv2d, torch.conv3d, torch.conv_transpose1d, torch.conv_transpose2d,
                     torch.conv_transpose3d), convolution),
    **dict.fromkeys((torch.masked_fill, torch.Tensor.masked_fill, torch.Tensor.masked_fill_), masked_fill),
    **dict.fromkeys(_exact_device_functions(), exact_devices),
    **dict.fromkeys((torch.nonzero, torch.Tensor.nonzero, torch.masked_select, torch.Tensor.masked_select), _selected),
    **dict.fromkeys((torch.randperm, torch.randint, torch.rand, torch.randn), _random(_created_on)),
    **dict.fromkeys((torch.multinomial, torch.Tensor.multinomial, torch.bernoulli, torch.Tensor.random_,
                     torch.Tensor.uniform_, torch.Tensor.normal_, torch.Tensor.bernoulli_), _random(_on_first)),
}
