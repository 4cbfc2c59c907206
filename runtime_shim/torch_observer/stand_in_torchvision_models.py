"""The observer's stand-in for ``torchvision.models`` (see :mod:`.stand_ins`): every classifier builder
(``resnet18``, ``vgg16``, ``efficientnet_b0``...; ``pretrained=``/``weights=`` accepted and ignored) returns a small
classifier whose weights are on the CPU, as torchvision's are when built or loaded. Its last layer is where the
family keeps it (``fc``: ResNet; ``classifier``, a ``Sequential`` ending in a ``Linear``: VGG, MobileNet,
EfficientNet, DenseNet; ``heads``: ViT; ``head``: Swin), so the usual head replacements run; the weight enums are
plain names."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

__path__: list[str] = []
_FAMILIES = ("alexnet", "convnext_", "densenet", "efficientnet_", "googlenet", "inception_v3", "maxvit_", "mnasnet",
             "mobilenet_v", "regnet_", "resnet", "resnext", "shufflenet_v2_", "squeezenet1_", "swin_", "vgg", "vit_",
             "wide_resnet")
_WIDTH = 8


#: the attribute holding each family's last layer (the others': ``classifier``, a ``Sequential``)
_HEADS = {"resnet": "fc", "resnext": "fc", "wide_resnet": "fc", "googlenet": "fc", "inception_v3": "fc",
          "regnet_": "fc", "shufflenet_v2_": "fc", "vit_": "heads", "swin_": "head"}


class _Classifier(nn.Module):
    def __init__(self, num_classes: int, head: str) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, _WIDTH, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head_name = head
        last = nn.Linear(_WIDTH, num_classes)
        setattr(self, head, nn.Sequential(nn.Dropout(0.2), last) if head == "classifier" else last)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return getattr(self, self.head_name)(torch.flatten(self.features(x), 1))


class _Weights:
    """``ResNet18_Weights.DEFAULT`` and the like: a name only."""

    def __getattr__(self, name: str) -> str:
        return name


def __getattr__(name: str) -> Any:
    if name.startswith(_FAMILIES) and name.islower():
        def build(*args: Any, num_classes: int = 1000, **kwargs: Any) -> nn.Module:
            head = next((h for family, h in _HEADS.items() if name.startswith(family)), "classifier")
            return _Classifier(num_classes, head)
        build.__name__ = name
        return build
    if name.endswith("_Weights"):
        return _Weights()
    raise AttributeError(f"module 'torchvision.models' has no attribute {name!r} (the observer's stand-in)")
