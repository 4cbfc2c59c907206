"""What the training frameworks that place the model and the batches themselves share: the device they pick
(the machine's accelerator: the world's), the source scan that finds their names, and the batch they hand to
the program (its tensors on that device).

Hugging Face's ``Trainer`` (:mod:`.hf_trainer`) and accelerate's ``Accelerator`` (:mod:`.accelerate_model`)
both pick ``cuda`` where CUDA is available, ``mps`` on a Mac, the CPU otherwise, unless the program asks for
the CPU (``use_cpu=True``, ``cpu=True``): the answers of the torch worlds (:mod:`.torch_worlds`), which a
program naming either framework asks (each model's ``axis_questions``). Where the analysis runs outside a
world (a large program) the device is unknown and so is everything placed on it.
"""

from __future__ import annotations

import ast

from ..domain import DictAtom, Origin, V, Value
from ..torch_domain import CPU, NO_GRAD, TorchDev, TorchTensorAtom
from .base import LibraryModel
from .torch_worlds import CUDA_AVAILABLE, MPS_AVAILABLE


def world_device(model: LibraryModel) -> TorchDev | None:
    """The accelerator a framework picks by itself: ``cuda:0`` where CUDA is available, ``mps`` in the world
    with MPS, else the CPU; ``None`` outside a world (the one place these models read the world)."""
    world = model.assumption(CUDA_AVAILABLE)
    if world is None:
        return None
    if world:
        return TorchDev("cuda", 0)
    return TorchDev("mps") if model.assumption(MPS_AVAILABLE) else CPU


def flag(call: ast.Call, keywords: tuple[str, ...]) -> bool | None:
    """The constant a keyword of ``call`` passes (the first of ``keywords`` given): True/False, ``None`` when it
    is not a constant the source fixes; absent: False."""
    for keyword in call.keywords:
        if keyword.arg in keywords:
            value = keyword.value
            return bool(value.value) if isinstance(value, ast.Constant) else None
        if keyword.arg is None:
            return None  # ``**options``: any of them may be in there
    return False


def batch_on(dev: TorchDev, origin: Origin | None) -> Value:
    """A batch of a structure the analysis does not know, its tensors on ``dev``: a mapping whose every item is a
    tensor there (``batch["labels"]``, ``batch.pop("labels")``; what the collators of these libraries make). Not
    a tensor: a ``BatchEncoding``'s ``batch.to(device)`` moves it in place, a tensor's would be discarded."""
    return V(DictAtom((), V(TorchTensorAtom(dev, NO_GRAD, None, origin=origin))))
