"""PyTorch's device and autograd rules for MV201-MV211: one table the observer and the analyzer share.

Pure data and functions over plain values (no torch import): the observer
(:mod:`runtime_shim.torch_observer`) classifies the failures real PyTorch
raises with them, and the analyzer (:mod:`analyzer.models.torch_model`) lifts
them to sets of abstract states. A device is its string form (``"cpu"``,
``"cuda:0"``); PyTorch's own texts are rendered here, once.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Rule code -> short name (the MV2xx block of the rule codes).
RULES: dict[str, str] = {
    "MV201": "operands-on-different-devices",
    "MV202": "module-and-input-on-different-devices",
    "MV203": "numpy-of-cuda-tensor",
    "MV204": "numpy-of-grad-tensor",
    "MV205": "moved-leaf-optimized",
    "MV206": "move-result-discarded",
    "MV207": "index-on-other-device",
    "MV208": "dlpack-of-grad-tensor",
    "MV209": "cuda-in-forked-loader-worker",
    "MV210": "pinned-cuda-batch",
    "MV211": "generator-device",
    "MV212": "lengths-on-gpu",
}

# --- PyTorch's texts ----------------------------------------------------------------------------------


def mismatch_message(first: str, second: str) -> str:
    return (f"Expected all tensors to be on the same device, but found at least two devices, "
            f"{first} and {second}!")


def numpy_device_message(device: str) -> str:
    return (f"can't convert {device} device type tensor to numpy. "
            "Use Tensor.cpu() to copy the tensor to host memory first.")


NUMPY_GRAD_MESSAGE = "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
NON_LEAF_OPTIMIZED_MESSAGE = "can't optimize a non-leaf Tensor"
NON_LEAF_GRAD_MESSAGE = ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                         "attribute won't be populated during autograd.backward().")
GRAD_FLAG_MESSAGE = "you can only change requires_grad flags of leaf variables."
DLPACK_GRAD_MESSAGE = "Can't export tensors that require gradient, use tensor.detach()"
#: torch/cuda/__init__.py ``_lazy_init`` in a process forked after the parent initialised CUDA (a forked
#: DataLoader worker whose dataset, transform or collate_fn makes a CUDA tensor)
BAD_FORK_MESSAGE = ("Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
                    "the 'spawn' start method")


def worker_message(text: str, where: str = "DataLoader worker process 0", kind: str = "RuntimeError") -> str:
    """What the main process raises for a failure in a DataLoader worker or its pin-memory thread
    (``ExceptionWrapper.reraise``: ``Caught RuntimeError in DataLoader worker process 0. Original ...``)."""
    return f"Caught {kind} in {where}.\nOriginal Traceback (most recent call last):\n{kind}: {text}"


def pin_message(legacy_type: str) -> str:
    """``Tensor.pin_memory()`` of a tensor not on the CPU (aten/src/ATen/native/Memory.cpp ``_pin_memory``;
    ``is_pinned`` answers False for it, so the DataLoader's pinning reaches the check)."""
    return f"cannot pin '{legacy_type}' only dense CPU tensors can be pinned"


def lengths_message(dim: int, device: str, scalar_type: str = "Long") -> str:
    """``pack_padded_sequence`` given ``lengths`` off the CPU (aten/src/ATen/native/PackedSequence.cpp
    ``checkLongTensor``; torch/nn/utils/rnn.py has made them int64 first: ``Long``)."""
    return f"'lengths' argument should be a 1D CPU int64 tensor, but got {dim}D {device} {scalar_type} tensor"


def generator_message(device_type: str, generator_type: str) -> str:
    """A random op (``torch.randperm`` in ``RandomSampler.__iter__``) given a generator of another device type
    than its output (aten/src/ATen/core/Generator.h ``check_generator``)."""
    return f"Expected a '{device_type}' device type for generator but found '{generator_type}'"


DISCARDED_MOVE_MESSAGE = ("the result of Tensor.{op}() is discarded: a tensor does not move in place "
                          "(assign it: x = x.{op}(...))")

# --- which operands are indexes ------------------------------------------------------------------------

#: Ops whose index operand(s) sit at these positions (or keyword names); ``self``/``input`` is 0.
INDEX_ARGS: dict[str, tuple[int, str]] = {
    "index_select": (2, "index"), "index_select_": (2, "index"),
    "gather": (2, "index"), "scatter": (2, "index"), "scatter_": (2, "index"),
    "scatter_add": (2, "index"), "scatter_add_": (2, "index"),
    "scatter_reduce": (2, "index"), "scatter_reduce_": (2, "index"),
    "index_add": (2, "index"), "index_add_": (2, "index"),
    "index_copy": (2, "index"), "index_copy_": (2, "index"),
    "index_fill": (2, "index"), "index_fill_": (2, "index"),
    "take": (1, "index"), "take_along_dim": (1, "indices"),
    "index_put": (1, "indices"), "index_put_": (1, "indices"),
    "__getitem__": (1, "indices"), "__setitem__": (1, "indices"),
    "embedding": (0, "input"),
}

#: Indexing (``t[i]``, ``t[i] = v``) accepts a CPU index on any device; others check like any op.
CPU_INDEX_ALWAYS_OK = frozenset({"__getitem__", "__setitem__", "index_put", "index_put_"})

#: Ops that refuse a 0-dim CPU tensor beside CUDA ones (``wrapper_CUDA_<op>``'s check of every argument): an index
#: (``gather``, ``index_select``, ``scatter_add_``, ``index_add_``, ``take``, ``embedding``), ``clamp``'s tensor bounds,
#: ``mse_loss``'s target, ``bucketize``/``searchsorted``'s boundaries or values.
EXACT_DEVICE_OPS = frozenset({
    "index_select", "gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "index_add", "index_add_",
    "index_copy", "index_copy_", "index_fill", "index_fill_", "take", "embedding", "clamp", "clip", "mse_loss",
    "bucketize", "searchsorted"})

#: Ops that check every tensor's device, a CPU 0-dim one too: the scalar exemption is element-wise ops'
#: (PyTorch's TensorIterator). Concatenating or stacking (``torch.stack([cuda_0dim, torch.tensor(0.)])`` fails on
#: an H200, docs/gpu-runs.md) and a layer's forward (a matmul, a convolution, an embedding lookup) do not take it.
NO_SCALAR_EXEMPTION = frozenset({"forward", "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack",
                                 "column_stack", "autograd.grad",
                                 # matrix products refuse an operand without dimensions whatever its device
                                 "mm", "bmm", "mv", "matmul", "addmm", "baddbmm", "addmv", "dot", "vdot", "outer",
                                 "ger", "solve", "solve_triangular", "cholesky_solve",
                                 # ops whose generated CUDA wrapper checks every tensor argument's device (measured
                                 # on an H200 with 0-dim CPU operands: docs/results/2026-12-04-h200-zero-dim)
                                 *EXACT_DEVICE_OPS})


def scalar_exempt(op: str) -> bool:
    """Does ``op`` take a CPU 0-dim tensor operand as a number, on any device?"""
    return op not in NO_SCALAR_EXEMPTION


@dataclass(frozen=True)
class Operand:
    """What the rules need of one tensor operand."""

    device: str
    ndim: int  # 0 for a 0-dim tensor (any other value: not 0-dim)
    in_module: bool = False  # a parameter or buffer of the nn.Module whose forward is running
    is_index: bool = False  # the op's index argument


def checked_operands(operands: list[Operand], op: str = "") -> list[Operand]:
    """The operands whose devices ``op`` compares: not a CPU 0-dim one beside an accelerator's, where the op
    takes it as a number (:func:`scalar_exempt`)."""
    if not scalar_exempt(op) or all(o.device == "cpu" for o in operands):
        return list(operands)
    return [o for o in operands if not (o.device == "cpu" and o.ndim == 0)]


def mismatch_code(operands: list[Operand], op: str = "") -> str | None:
    """MV202, MV207 or MV201 for operands on unequal devices; ``None`` when the op accepts them.

    A CPU 0-dim tensor joins any device (PyTorch's scalar exemption); indexing accepts a CPU index
    on any device. Precedence: a parameter or buffer of the running module among them, MV202 (the
    fix is moving the input or the module); else an index on a device no data operand is on,
    MV207; else MV201.
    """
    relevant = checked_operands(operands, op)
    if op in CPU_INDEX_ALWAYS_OK:
        relevant = [o for o in relevant if not (o.is_index and o.device == "cpu")]
    if len({o.device for o in relevant}) < 2:
        return None
    if any(o.in_module for o in relevant):
        return "MV202"
    data_devices = {o.device for o in relevant if not o.is_index}
    if any(o.is_index and o.device not in data_devices for o in relevant):
        return "MV207"
    return "MV201"


def failure_message(operands: list[Operand], op: str = "") -> str:
    """What PyTorch says for operands :func:`mismatch_code` rejects: indexing (``t[i]``, ``t[i] = v``) with an
    index on another GPU than the indexed tensor, or a GPU index into a CPU tensor, names the indexed tensor's
    device (``index`` in aten's ``TensorAdvancedIndexing``); every other mismatch is the common message."""
    relevant = checked_operands(operands, op) or operands
    if op in CPU_INDEX_ALWAYS_OK and relevant and not relevant[0].is_index:
        indexed = relevant[0].device
        if any(o.is_index and o.device != "cpu" and o.device != indexed for o in relevant):
            return ("indices should be either on cpu or on the same device as the indexed tensor "
                    f"({indexed})")
    return mismatch_message(*mismatch_devices(relevant))


def mismatch_devices(operands: list[Operand]) -> tuple[str, str]:
    """The two devices PyTorch names in its message (the first operand's, then another one)."""
    first = operands[0].device
    second = next((o.device for o in operands if o.device != first), first)
    return first, second


# --- host and DLPack exports, optimizers, .grad ------------------------------------------------------


def numpy_outcome(device: str, requires_grad: bool, grad_enabled: bool) -> tuple[str, str] | None:
    """``t.numpy()`` / ``np.asarray(t)``: the device is checked first, then the graph (not under no_grad)."""
    if device != "cpu":
        return "MV203", numpy_device_message(device)
    if requires_grad and grad_enabled:
        return "MV204", NUMPY_GRAD_MESSAGE
    return None


def dlpack_outcome(requires_grad: bool) -> tuple[str, str] | None:
    """``t.__dlpack__()`` (``np.from_dlpack(t)``, other libraries' ``from_dlpack``): refused under no_grad too."""
    return ("MV208", DLPACK_GRAD_MESSAGE) if requires_grad else None


def generator_outcome(device_type: str, generator_type: str) -> tuple[str, str] | None:
    """A random op drawing a tensor of ``device_type`` with a generator of ``generator_type``
    (``check_generator``): the types must agree."""
    return ("MV211", generator_message(device_type, generator_type)) if device_type != generator_type else None


def lengths_outcome(device: str) -> tuple[str, str] | None:
    """``pack_padded_sequence``'s ``lengths`` on ``device`` (a tensor; a list is made on the CPU)."""
    return ("MV212", lengths_message(1, device)) if device != "cpu" else None


def optimize_outcome(requires_grad: bool, is_leaf: bool) -> tuple[str, str] | None:
    """A tensor in an optimizer's parameter list."""
    return ("MV205", NON_LEAF_OPTIMIZED_MESSAGE) if requires_grad and not is_leaf else None


def grad_read_outcome(requires_grad: bool, is_leaf: bool) -> tuple[str, str] | None:
    """Reading ``t.grad``: a non-leaf's stays ``None`` (PyTorch warns)."""
    return ("MV205", NON_LEAF_GRAD_MESSAGE) if requires_grad and not is_leaf else None


def grad_flag_outcome(is_leaf: bool, flag: bool, method: bool) -> tuple[str, str] | None:
    """``t.requires_grad = flag`` (``method`` False) refuses any non-leaf; ``t.requires_grad_(flag)`` only
    ``False`` (``True`` on a non-leaf, which requires grad already, does nothing)."""
    return ("MV205", GRAD_FLAG_MESSAGE) if not is_leaf and (not method or not flag) else None


def move_keeps_leaf(source: str, target: str) -> bool:
    """``t.to(target)`` returns ``t`` itself when it is already there: a leaf stays a leaf; a real
    move is recorded by autograd, so the result is a non-leaf."""
    return source == target


#: Methods that move a tensor (``to`` with a device or a tensor; ``to(dtype)`` is a cast).
MOVE_METHODS = frozenset({"to", "cuda", "cpu"})

# --- library modules ---------------------------------------------------------------------------------

#: ``torch.nn`` layers that own parameters or buffers (their input must be on their device: MV202).
LAYERS_WITH_WEIGHTS = frozenset({
    "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LayerNorm", "GroupNorm",
    "RMSNorm", "Embedding", "EmbeddingBag", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "PReLU",
    "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
    "TransformerDecoderLayer",
})
#: ``torch.nn`` layers without weights: the output is on the input's device.
LAYERS_WITHOUT_WEIGHTS = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Hardtanh",
    "Hardswish", "Hardsigmoid", "Softplus", "Softsign", "Tanhshrink", "Threshold", "Softmax", "LogSoftmax",
    "Softmin", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Identity", "Flatten",
    "Unflatten", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d", "Upsample", "PixelShuffle", "PixelUnshuffle", "ZeroPad2d", "ConstantPad1d",
    "ConstantPad2d", "ReflectionPad2d", "ReplicationPad2d", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d",
})
#: ``torch.nn`` losses: ``loss(input, target)`` checks the two like any op (MV201).
LOSSES = frozenset({
    "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
    "BCEWithLogitsLoss", "KLDivLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "TripletMarginLoss",
    "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss", "MultiLabelSoftMarginLoss", "SoftMarginLoss",
})
#: Containers whose children are the layers given to them.
CONTAINERS = frozenset({"Sequential", "ModuleList"})

# --- nn.DataParallel ---------------------------------------------------------------------------------------


def data_parallel_message(expected: str, found: str) -> str:
    """``nn.DataParallel``'s check, before it scatters the inputs: the module must be on ``device_ids[0]``."""
    return (f"module must have its parameters and buffers on device {expected} (device_ids[0]) but found one of "
            f"them on device: {found}")


# --- nn.parallel.DistributedDataParallel ----------------------------------------------------------------


def ddp_device_ids_message(device_ids: str, output_device: str, devices: str) -> str:
    """``DistributedDataParallel(module, device_ids=[...])`` of a module on the CPU: the constructor's check
    (``torch/nn/parallel/distributed.py``; ``devices`` is the set of its parameters' devices, as Python prints
    it: ``{device(type='cpu')}``)."""
    return ("DistributedDataParallel device_ids and output_device arguments only work with single-device/"
            "multiple-device GPU modules or CPU modules, but got device_ids "
            f"{device_ids}, output_device {output_device}, and module parameters {devices}.")
