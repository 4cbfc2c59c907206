"""torchvision's pretrained classifiers and box ops, as the torch model sees them.

``torchvision.models.resnet18(weights=...)`` (and every classifier builder of ``torchvision.models``) returns a
module whose weights are on the CPU, however they were loaded; its forward is one image batch in, logits out, on
the weights' device. So it is a library layer, like ``nn.Linear``: ``model(images.cuda())`` before
``model.cuda()`` fails ("Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the
same"), and ``model.to(device)`` moves it. The detection, segmentation and video builders take other inputs
(lists of images, targets) and return dicts: they stay unknown.

``torchvision.ops``' box functions need their tensors on one device (``nms(boxes, scores, 0.5)`` with the scores
on the CPU: "Expected all tensors to be on the same device"); ``nms``/``batched_nms`` return indices (never in
the graph), the IoU matrices a float tensor on that device.

Everything else of torchvision is a name of a library the analysis does not read (:mod:`.library_refs`).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

from ..domain import TOP, V, Value
from ..engine.flow_state import Frame, State
from ..torch_domain import CPU, TorchLayerAtom
from .layer_items import is_part
from .library_refs import LibraryRef

ROOT = "torchvision"
#: Where the classifier builders are (``torchvision.models.resnet.resnet18`` is the same function).
_MODELS = "torchvision.models"
#: The families of classifier builders (``resnet18``, ``vit_b_16``, ``efficientnet_v2_s``...): a builder's name
#: starts with one of these; the submodules (``detection``, ``segmentation``...) and helpers do not.
CLASSIFIER_FAMILIES = ("alexnet", "convnext_", "densenet", "efficientnet_", "googlenet", "inception_v3",
                       "maxvit_", "mnasnet", "mobilenet_v", "regnet_", "resnet", "resnext", "shufflenet_v2_",
                       "squeezenet1_", "swin_", "vgg", "vit_", "wide_resnet")
#: The attributes that hold a classifier's last layer (``fc``: ResNet; ``classifier``: VGG, MobileNet, DenseNet,
#: EfficientNet; ``head``/``heads``: Swin, ViT); replacing one gives a new head, run after the rest.
HEADS = frozenset({"fc", "classifier", "head", "heads"})
#: Each box op's tensor parameters (all on one device) and whether it returns indices.
BOX_OPS: dict[str, tuple[tuple[str, ...], bool]] = {
    "nms": (("boxes", "scores"), True),
    "batched_nms": (("boxes", "scores", "idxs"), True),
    "box_iou": (("boxes1", "boxes2"), False),
    "generalized_box_iou": (("boxes1", "boxes2"), False),
    "distance_box_iou": (("boxes1", "boxes2"), False),
    "complete_box_iou": (("boxes1", "boxes2"), False),
    "sigmoid_focal_loss": (("inputs", "targets"), False),
}
#: Their signatures, for binding the call's arguments.
_SIGNATURES = {
    "nms": ("boxes", "scores", "iou_threshold"),
    "batched_nms": ("boxes", "scores", "idxs", "iou_threshold"),
    "box_iou": ("boxes1", "boxes2"),
    "generalized_box_iou": ("boxes1", "boxes2"),
    "distance_box_iou": ("boxes1", "boxes2", "eps"),
    "complete_box_iou": ("boxes1", "boxes2", "eps"),
    "sigmoid_focal_loss": ("inputs", "targets", "alpha", "gamma", "reduction"),
}


def classifier_name(path: str) -> str | None:
    """``resnet18`` for ``torchvision.models.resnet18`` or ``torchvision.models.resnet.resnet18``."""
    module, _, name = path.rpartition(".")
    if module != _MODELS and module.rpartition(".")[0] != _MODELS:
        return None
    if module != _MODELS and module.rpartition(".")[2] in ("detection", "segmentation", "video", "optical_flow",
                                                            "quantization"):
        return None
    return name if name.startswith(CLASSIFIER_FAMILIES) and name.islower() else None


def is_classifier(value: Value) -> bool:
    """Does ``value`` hold torchvision classifiers only?"""
    return bool(value.atoms) and not value.top and all(
        isinstance(a, TorchLayerAtom) and a.name.startswith(_MODELS + ".") for a in value.atoms)


def with_head(classifier: Value, head: Value) -> Value | None:
    """``model.fc = nn.Linear(...)``: the classifier with its new last layer (a library layer), wherever that
    layer is (a head built after the model moved stays on the CPU); None when the head is not known."""
    if not is_classifier(classifier) or head.top or not head.atoms \
            or not all(isinstance(h, TorchLayerAtom) for h in head.atoms):
        return None
    # (its other replaced layers stay: :func:`.layer_items.with_part`)
    return Value(frozenset(replace(c, children=(*(p for p in c.children if is_part(p)), h))
                           for c in classifier.atoms if isinstance(c, TorchLayerAtom) for h in head.atoms))


def box_op_name(path: str) -> str | None:
    """``nms`` for ``torchvision.ops.nms`` or ``torchvision.ops.boxes.nms``."""
    module, _, name = path.rpartition(".")
    if name in BOX_OPS and (module == "torchvision.ops" or module.startswith("torchvision.ops.")):
        return name
    return None


def torchvision_call(model: Any, ref: LibraryRef, args: list[Value], kwargs: dict[str, Value], node: ast.AST,
                     st: State, fr: Frame) -> Value | None:
    """A call of a torchvision name the torch model knows; None for the others."""
    name = classifier_name(ref.path)
    if name is not None:
        # pretrained or not, the weights are loaded on the CPU
        return V(TorchLayerAtom(f"{_MODELS}.{name}", CPU, True, (), model.origin(node, fr, f"{name} created")))
    name = box_op_name(ref.path)
    if name is None:
        return None
    params, indices = BOX_OPS[name]
    bound = _bind(name, args, kwargs)
    if bound is None:
        return TOP
    api = f"torchvision.ops.{name}"
    operands = [(param, bound.get(param, TOP), False, False) for param in params]
    result = model.checked_op(api, operands, node, st, fr, op=name, zero_dim=None if name.endswith("loss") else False)
    return model.same_device_result(result, node, st, fr, False, detach=True) if indices and not st.dead else result


def _bind(name: str, args: list[Value], kwargs: dict[str, Value]) -> dict[str, Value] | None:
    names = _SIGNATURES[name]
    if len(args) > len(names) or any(k not in names for k in kwargs):
        return None
    bound = dict(zip(names, args, strict=False))
    bound.update(kwargs)
    return bound

