"""Evaluate an image classifier on the GPU, with metrics written for CPU runs: `predictions.numpy()` of a
CUDA tensor fails, "can't convert cuda:0 device type tensor to numpy" (MV203). The fix is
`predictions.cpu().numpy()`.
"""
# expect-failure: MV203 at line 36

import numpy as np
import torch
from torch import nn


def build_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 8, kernel_size=3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(8, 10),
    )


def confusion_matrix(predicted: np.ndarray, actual: np.ndarray, classes: int) -> np.ndarray:
    matrix = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(matrix, (actual, predicted), 1)
    return matrix


device = torch.device("cuda")
model = build_model().to(device).eval()
images = torch.rand(64, 3, 16, 16)
labels = torch.randint(0, 10, (64,))

all_predictions, all_labels = [], []
with torch.no_grad():
    for start in range(0, len(images), 16):
        batch = images[start:start + 16].to(device)
        predictions = model(batch).argmax(dim=1)
        all_labels.append(labels[start:start + 16].numpy())
        all_predictions.append(predictions.numpy())

matrix = confusion_matrix(np.concatenate(all_predictions), np.concatenate(all_labels), 10)
print("accuracy", np.trace(matrix) / matrix.sum())
