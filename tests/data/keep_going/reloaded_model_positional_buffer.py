"""A classifier rebuilt from a `map_location="cpu"` checkpoint for evaluation and never moved: its token embedding
refuses the GPU ids. The positional encoding (a buffer, on the CPU with the model) added to what it would have
returned, and the padding mask applied after, are not more findings of the same cause."""
import math
import os
import tempfile

import torch
from torch import nn


class TokenClassifier(nn.Module):
    def __init__(self, vocab=50, d_model=16, max_len=32, n_classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        position = torch.arange(max_len).unsqueeze(1)
        freq = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * freq)
        pe[:, 1::2] = torch.cos(position * freq)
        self.register_buffer("pe", pe)
        self.head = nn.Linear(d_model, n_classes)

    def forward(self, ids, mask):
        x = self.embed(ids) * 4.0
        x = x + self.pe[: ids.shape[1]]
        x = x.masked_fill(~mask.unsqueeze(-1), 0.0)
        return self.head(x.sum(1) / mask.sum(1, keepdim=True))


def evaluate(model, batches, device):
    model.eval()
    correct = 0
    with torch.no_grad():
        for ids, mask, labels in batches:
            ids, mask, labels = ids.to(device), mask.to(device), labels.to(device)
            correct += (model(ids, mask).argmax(-1) == labels).sum().item()
    return correct


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = TokenClassifier().to(device)
    path = os.path.join(tempfile.mkdtemp(), "best.pt")
    torch.save(model.state_dict(), path)
    best = TokenClassifier()
    best.load_state_dict(torch.load(path, map_location="cpu"))
    batches = [(torch.randint(0, 50, (4, 10)), torch.ones(4, 10, dtype=torch.bool), torch.randint(0, 3, (4,)))]
    print(evaluate(best, batches, device))


if __name__ == "__main__":
    main()
