"""Training and evaluation: the inputs are moved to the model's device, the labels are not."""

import torch
from torch.nn import functional as F

from .config import DEVICE
from .data import batches
from .model import build_model


def train(epochs: int = 2) -> torch.nn.Module:
    model = build_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        for token_ids, labels in batches(4):
            logits = model(token_ids.to(DEVICE))
            loss = F.cross_entropy(logits, labels.to(DEVICE))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model


def accuracy(model: torch.nn.Module) -> float:
    correct = 0
    total = 0
    with torch.no_grad():
        for token_ids, labels in batches(2):
            predictions = model(token_ids.to(DEVICE)).argmax(dim=1)
            correct += int((predictions == labels).sum())  # expect: MV201
            total += labels.numel()
    return correct / total


def main() -> None:
    print(f"accuracy: {accuracy(train()):.2f}")
