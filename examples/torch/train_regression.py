"""A small regression model trained and evaluated on whichever device the machine has, the right way:
the model and every batch are moved to one device, the loss is read with `.item()`, and the predictions
leave the graph and the GPU (`.detach().cpu()`) before numpy sees them. devicelint reports nothing here.
"""

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_data(count: int) -> TensorDataset:
    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(count, 8, generator=generator)
    targets = inputs @ torch.linspace(-1.0, 1.0, 8) + 0.1 * torch.randn(count, generator=generator)
    return TensorDataset(inputs, targets.unsqueeze(1))


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.MSELoss()
train = DataLoader(make_data(512), batch_size=64, shuffle=True)
test = DataLoader(make_data(128), batch_size=64)

for epoch in range(5):
    model.train()
    for inputs, targets in train:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")

model.eval()
errors = []
with torch.no_grad():
    for inputs, targets in test:
        predictions = model(inputs.to(device))
        errors.append((predictions - targets.to(device)).abs().detach().cpu().numpy())
print("mean absolute error", float(np.concatenate(errors).mean()))
