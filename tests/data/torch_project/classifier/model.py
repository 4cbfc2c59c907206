"""The model, built on the training device."""

import torch
from torch import nn

from .config import DEVICE, EMBEDDING_DIM, VOCABULARY


class BagOfWords(nn.Module):
    def __init__(self, classes: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCABULARY, EMBEDDING_DIM)
        self.head = nn.Linear(EMBEDDING_DIM, classes)

    def forward(self, token_ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(token_ids).mean(dim=1))


def build_model() -> BagOfWords:
    return BagOfWords().to(DEVICE)
