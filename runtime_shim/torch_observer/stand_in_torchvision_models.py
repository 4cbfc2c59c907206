"""The observer's stand-in for ``torchvision.models`` (see :mod:`.stand_ins`): every classifier builder
(``resnet18``, ``vgg16``, ``efficientnet_b0``...; ``pretrained=``/``weights=`` accepted and ignored) returns a small
classifier whose weights are on the CPU, as torchvision's are when built or loaded. Its last layer is ``fc``
(the ResNet family's name) and ``classifier`` (a ``Sequential`` ending in a ``Linear``: VGG, MobileNet,
EfficientNet, DenseNet), so the usual head replacements run; the weight enums are plain names."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

__path__: list[str] = []
_FAMILIES = ("alexnet", "convnext_", "densenet", "efficientnet_", "googlenet", "inception_v3", "maxvit_", "mnasnet",
             "mobilenet_v", "regnet_", "resnet", "resnext", "shufflenet_v2_", "squeezenet1_", "swin_", "vgg", "vit_",
             "wide_resnet")
_WIDTH = 8


class _Classifier(nn.Module):
    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, _WIDTH, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(_WIDTH, num_classes)
        self.classifier = nn.Sequential(nn.Identity())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.fc(torch.flatten(self.features(x), 1)))


class _Weights:
    """``ResNet18_Weights.DEFAULT`` and the like: a name only."""

    def __getattr__(self, name: str) -> str:
        return name


def __getattr__(name: str) -> Any:
    if name.startswith(_FAMILIES) and name.islower():
        def build(*args: Any, num_classes: int = 1000, **kwargs: Any) -> nn.Module:
            return _Classifier(num_classes)
        build.__name__ = name
        return build
    if name.endswith("_Weights"):
        return _Weights()
    raise AttributeError(f"module 'torchvision.models' has no attribute {name!r} (the observer's stand-in)")
