"""Train a small text classifier from a DataLoader, the wrong way: the loop moves the labels to the GPU
but feeds the model the batch's token ids as the DataLoader collated them, on the CPU. On a machine with
CUDA the embedding fails: "Expected all tensors to be on the same device" (MV202; on a CPU-only machine the
script runs, which is why devicelint reports it as a warning naming the CUDA case). The fix is
`model(token_ids.to(device))`.
"""
# expect-failure: MV202 at line 42

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

VOCABULARY, LENGTH, CLASSES = 1000, 24, 4


def bag_of_embeddings(vocabulary: int, width: int, classes: int) -> nn.Module:
    return nn.Sequential(
        nn.Embedding(vocabulary, width), nn.Flatten(),
        nn.Linear(width * LENGTH, width), nn.ReLU(), nn.Linear(width, classes),
    )


def synthetic_reviews(count: int) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    token_ids = torch.randint(0, VOCABULARY, (count, LENGTH), generator=generator)
    labels = token_ids[:, 0] % CLASSES
    return TensorDataset(token_ids, labels)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = bag_of_embeddings(VOCABULARY, 32, CLASSES).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(synthetic_reviews(256), batch_size=32, shuffle=True)

for epoch in range(3):
    model.train()
    total = 0.0
    for token_ids, labels in loader:
        labels = labels.to(device)
        optimizer.zero_grad()
        logits = model(token_ids)
        loss = criterion(logits, labels)
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(f"epoch {epoch}: loss {total / len(loader):.3f}")
