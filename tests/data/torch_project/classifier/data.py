"""Synthetic reviews, batched on the host as a data loader makes them."""

import torch

from .config import BATCH_SIZE, VOCABULARY


def batches(count: int, length: int = 12) -> list[tuple[torch.Tensor, torch.Tensor]]:
    out = []
    for _ in range(count):
        token_ids = torch.randint(0, VOCABULARY, (BATCH_SIZE, length))
        labels = torch.randint(0, 2, (BATCH_SIZE,))
        out.append((token_ids, labels))
    return out
