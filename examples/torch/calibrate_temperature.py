"""Temperature scaling of a trained classifier's logits, the wrong way: the temperature is created as a
CPU leaf that requires grad and then moved, `torch.ones(1, requires_grad=True).to(device)`. The moved copy
is not a leaf, so the optimizer refuses it: "can't optimize a non-leaf Tensor" (MV205). The fix is to
create it on the device: `torch.ones(1, device=device, requires_grad=True)`.
"""
# expect-failure: MV205 at line 24

import torch
from torch import nn

device = torch.device("cuda")
classifier = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)).to(device).eval()

features = torch.randn(200, 20, device=device)
labels = torch.randint(0, 5, (200,), device=device)
with torch.no_grad():
    logits = classifier(features)

temperature = torch.ones(1, requires_grad=True).to(device)
criterion = nn.CrossEntropyLoss()


def calibrate(steps: int = 50) -> float:
    optimizer = torch.optim.LBFGS([temperature], lr=0.01, max_iter=steps)

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = criterion(logits / temperature, labels)
        loss.backward()
        return loss

    optimizer.step(closure)
    return temperature.item()


print("temperature", calibrate())
