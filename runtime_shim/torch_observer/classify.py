"""Which MV2xx rule a PyTorch failure is: PyTorch's message picks the family, the operands decide.

Pure functions over plain data (no torch import), so the classifier is unit-testable and the
analyzer's rule docs can cite the same texts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Rule code -> short name (the MV2xx block of /work/shared/rule-codes.md, issue 6).
RULES: dict[str, str] = {
    "MV201": "operands-on-different-devices",
    "MV202": "module-and-input-on-different-devices",
    "MV203": "numpy-of-cuda-tensor",
    "MV204": "numpy-of-grad-tensor",
    "MV205": "moved-leaf-optimized",
    "MV206": "move-result-discarded",
    "MV207": "index-on-other-device",
    "MV208": "dlpack-of-grad-tensor",
}

# The texts PyTorch raises (CPU builds, CUDA builds and FakeTensorMode word some differently).
_DEVICE_MISMATCH = re.compile(
    r"Expected all tensors to be on the same device"
    r"|found two different devices"
    r"|Expected object of device type"
    r"|Input and parameter tensors are not at the same device"
    r"|Input type \(.*\) and weight type \(.*\) should be the same")
_INDEX_DEVICE = re.compile(r"indices should be either on cpu or on the same device as the indexed tensor")
_NUMPY_DEVICE = re.compile(r"can't convert \S+ device type tensor to numpy")
_NUMPY_GRAD = re.compile(r"Can't call numpy\(\) on Tensor that requires grad")
_NON_LEAF_OPTIMIZED = re.compile(r"can't optimize a non-leaf Tensor")
_NON_LEAF_GRAD = re.compile(r"The \.grad attribute of a Tensor that is not a leaf Tensor is being accessed")
_DLPACK_GRAD = re.compile(r"Can't export tensors that require gradient")

_FIXED: tuple[tuple[re.Pattern[str], str], ...] = (
    (_INDEX_DEVICE, "MV207"),
    (_NUMPY_DEVICE, "MV203"),
    (_NUMPY_GRAD, "MV204"),
    (_NON_LEAF_OPTIMIZED, "MV205"),
    (_NON_LEAF_GRAD, "MV205"),
    (_DLPACK_GRAD, "MV208"),
)

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


@dataclass(frozen=True)
class Operand:
    """What the classifier needs of one tensor operand."""

    device: str
    ndim: int
    in_module: bool = False  # a parameter or buffer of the nn.Module whose forward is running
    is_index: bool = False  # the op's index argument


def is_device_mismatch(message: str) -> bool:
    """PyTorch's text says the operands were on different devices (or types that differ in device)."""
    return _DEVICE_MISMATCH.search(message) is not None


def code_for_message(message: str) -> str | None:
    """The rule of a failure whose text alone identifies it (not the device-mismatch family)."""
    for pattern, code in _FIXED:
        if pattern.search(message):
            return code
    return None


def mismatch_code(operands: list[Operand]) -> str | None:
    """MV202, MV207 or MV201 for operands on unequal devices; ``None`` when they agree.

    A CPU 0-dim tensor joins any device (PyTorch's scalar exemption). Precedence: when one operand
    is a parameter or buffer of the running module, MV202 (the fix is moving the input or the
    module); else when an index is on a device none of the data is on, MV207; else MV201.
    """
    accelerated = any(o.device != "cpu" for o in operands)
    relevant = [o for o in operands if not (accelerated and o.device == "cpu" and o.ndim == 0)]
    if len({o.device for o in relevant}) < 2:
        return None

    if any(o.in_module for o in relevant):
        return "MV202"
    data_devices = {o.device for o in relevant if not o.is_index}
    if any(o.is_index and o.device not in data_devices for o in relevant):
        return "MV207"
    return "MV201"


def classify(message: str, operands: list[Operand]) -> str | None:
    """The rule code of a failure with this text over these operands, ``None`` when it is no MV2xx."""
    fixed = code_for_message(message)
    if fixed is not None:
        return fixed
    if is_device_mismatch(message):
        return mismatch_code(operands) or "MV201"
    return None
