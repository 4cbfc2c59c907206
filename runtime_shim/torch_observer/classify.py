"""Which MV2xx rule a PyTorch failure is: PyTorch's message picks the family, the operands decide.

Pure functions over plain data (no torch import). The operand rules (scalar exemption, module
weights, indexes) are :mod:`runtime_shim.torch_semantics`'s, which the analyzer lifts too.
"""

from __future__ import annotations

import re

from ..torch_semantics import INDEX_ARGS, RULES, Operand, mismatch_code

__all__ = ["INDEX_ARGS", "RULES", "Operand", "classify", "code_for_message", "is_device_mismatch", "mismatch_code"]

# The texts PyTorch raises (CPU builds, CUDA builds and FakeTensorMode word some differently).
_DEVICE_MISMATCH = re.compile(
    r"Expected all tensors to be on the same device"
    r"|found two different devices"
    r"|Expected object of device type"
    r"|Input and parameter tensors are not at the same device"
    r"|Input and hidden tensors are not at the same device"
    r"|Input type \(.*\) and weight type \(.*\) should be the same"
    r"|expected self and mask to be on the same device"
    r"|expects all tensors to have the same device"  # torch.meshgrid
    r"|stft input and window must be on the same device"  # torch.stft / torch.istft
    r"|expected to be in the same device, but got"  # index_add_ (FakeTensorMode's meta check)
    r"|Mismatching aten\.\S+ device between")  # FakeTensorMode's own check (index_put_ values, ...)
_INDEX_DEVICE = re.compile(r"indices should be either on cpu or on the same device as the indexed tensor")
_NUMPY_DEVICE = re.compile(r"can't convert \S+ device type tensor to numpy")
_NUMPY_GRAD = re.compile(r"Can't call numpy\(\) on Tensor that requires grad")
_NON_LEAF_OPTIMIZED = re.compile(r"can't optimize a non-leaf Tensor")
_NON_LEAF_GRAD = re.compile(r"The \.grad attribute of a Tensor that is not a leaf Tensor is being accessed")
_GRAD_FLAG = re.compile(r"you can only change requires_grad flags of leaf variables")
_DLPACK_GRAD = re.compile(r"Can't export tensors that require gradient")
_BAD_FORK = re.compile(r"Cannot re-initialize CUDA in forked subprocess")
_PIN_NOT_CPU = re.compile(r"cannot pin '\S+' only dense CPU tensors can be pinned")
_GENERATOR_DEVICE = re.compile(r"Expected a '\w+' device type for generator but found '\w+'")
_LENGTHS_OFF_CPU = re.compile(r"'lengths' argument should be a 1D CPU int64 tensor, but got \d+D (?!cpu )")
_DATA_PARALLEL = re.compile(r"module must have its parameters and buffers on device \S+ \(device_ids\[0\]\)")
# DistributedDataParallel's constructor: ``device_ids`` given for a module on the CPU, or a module on two device types
_DDP_MODULE = re.compile(r"DistributedDataParallel device_ids and output_device arguments only work with"
                         r"|DistributedDataParallel's input module must be on the same type of devices")

_FIXED: tuple[tuple[re.Pattern[str], str], ...] = (
    (_INDEX_DEVICE, "MV207"),
    (_NUMPY_DEVICE, "MV203"),
    (_NUMPY_GRAD, "MV204"),
    (_NON_LEAF_OPTIMIZED, "MV205"),
    (_NON_LEAF_GRAD, "MV205"),
    (_GRAD_FLAG, "MV205"),
    (_DLPACK_GRAD, "MV208"),
    (_DATA_PARALLEL, "MV202"),  # nn.DataParallel's module is not on device_ids[0]
    (_BAD_FORK, "MV209"),  # CUDA in a DataLoader worker forked after the parent initialised it
    (_PIN_NOT_CPU, "MV210"),  # the DataLoader pins a batch already on the GPU
    (_GENERATOR_DEVICE, "MV211"),  # a sampler's CPU generator under a CUDA default device
    (_LENGTHS_OFF_CPU, "MV212"),  # pack_padded_sequence given lengths on a GPU
    (_DDP_MODULE, "MV202"),  # DistributedDataParallel's module is not on a GPU device_ids names
)

def is_device_mismatch(message: str) -> bool:
    """PyTorch's text says the operands were on different devices (or types that differ in device)."""
    return _DEVICE_MISMATCH.search(message) is not None


def code_for_message(message: str) -> str | None:
    """The rule of a failure whose text alone identifies it (not the device-mismatch family)."""
    for pattern, code in _FIXED:
        if pattern.search(message):
            return code
    return None


def classify(message: str, operands: list[Operand], op: str = "") -> str | None:
    """The rule code of a failure with this text over these operands of ``op``, ``None`` when it is no MV2xx."""
    fixed = code_for_message(message)
    if fixed is not None:
        return fixed
    if is_device_mismatch(message):
        return mismatch_code(operands, op) or mismatch_code(operands) or "MV201"
    return None
