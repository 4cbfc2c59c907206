"""The observer's stand-in for ``torchvision.models`` (see :mod:`.stand_ins`): every classifier builder
(``resnet18``, ``vgg16``, ``efficientnet_b0``...; ``pretrained=``/``weights=`` accepted and ignored) returns a small
classifier whose weights are on the CPU, as torchvision's are when built or loaded. Its last layer is where the
family keeps it (``fc``: ResNet; ``classifier``, a ``Sequential`` ending in a ``Linear``: VGG, MobileNet,
EfficientNet, DenseNet, seven layers for VGG and AlexNet; ``heads``: ViT; ``head``: Swin) and its first conv too
(``conv1``: ResNet; ``features[0]``: the others), so the usual head and input-layer replacements run; the weight
enums are plain names."""

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


#: the families whose first conv is ``conv1`` (the others': ``features[0]``)
_STEMS = ("resnet", "resnext", "wide_resnet", "googlenet", "inception_v3")


class _Classifier(nn.Module):
    def __init__(self, num_classes: int, head: str, stem: bool, deep: bool) -> None:
        super().__init__()
        conv = nn.Conv2d(3, _WIDTH, 3, padding=1)
        self.stem = stem
        if stem:
            self.conv1 = conv
        self.features = nn.Sequential(*([] if stem else [conv]), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head_name = head
        last = nn.Linear(_WIDTH, num_classes)
        # VGG's and AlexNet's classifier has seven layers (``classifier[6]`` is the last), the others' two
        hidden = [layer for _ in range(2) for layer in (nn.Linear(_WIDTH, _WIDTH), nn.ReLU(), nn.Dropout(0.5))] \
            if deep else [nn.Dropout(0.2)]
        setattr(self, head, nn.Sequential(*hidden, last) if head == "classifier" else last)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.stem:
            x = self.conv1(x)
        return getattr(self, self.head_name)(torch.flatten(self.features(x), 1))


class _Weights:
    """``ResNet18_Weights.DEFAULT`` and the like: a name only."""

    def __getattr__(self, name: str) -> str:
        return name


def __getattr__(name: str) -> Any:
    if name.startswith(_FAMILIES) and name.islower():
        def build(*args: Any, num_classes: int = 1000, **kwargs: Any) -> nn.Module:
            head = next((h for family, h in _HEADS.items() if name.startswith(family)), "classifier")
            return _Classifier(num_classes, head, name.startswith(_STEMS), name.startswith(("vgg", "alexnet")))
        build.__name__ = name
        return build
    if name.endswith("_Weights"):
        return _Weights()
    raise AttributeError(f"module 'torchvision.models' has no attribute {name!r} (the observer's stand-in)")
