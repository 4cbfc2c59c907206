"""A character LM trained from a hydra entry: the model is built inside the entry, moved in place by the trainer."""
import os
from dataclasses import dataclass

import hydra
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


class EmbeddingStem(nn.Module):
    def __init__(self, vocab_size, n_embd, device="cpu"):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, n_embd, device=device)
        self.pos_emb = nn.Parameter(torch.zeros(1, 64, n_embd, device=device))

    def forward(self, idx):
        t = idx.size(1)
        return self.tok_emb(idx) + self.pos_emb[:, :t, :]


class TinyGPT(nn.Module):
    def __init__(self, vocab_size=65, n_embd=32):
        super().__init__()
        self.emb_stem = EmbeddingStem(vocab_size, n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        logits = self.head(self.emb_stem(idx))
        loss = None if targets is None else F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss


@dataclass
class TrainerConfig:
    steps: int = 10
    snapshot_path: str | None = None


class Trainer:
    def __init__(self, config, model, optimizer):
        self.config = config
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.model = model.to(self.local_rank)
        self.optimizer = optimizer
        self.steps = config.steps
        if self.config.snapshot_path is None:
            self.config.snapshot_path = "snapshot.pt"
        self._load_snapshot()
        self.model = DDP(self.model, device_ids=[self.local_rank])

    def _load_snapshot(self):
        if not os.path.exists(self.config.snapshot_path):
            return
        snapshot = torch.load(self.config.snapshot_path, map_location="cpu")
        self.model.load_state_dict(snapshot["model_state"])
        self.optimizer.load_state_dict(snapshot["optimizer_state"])

    def train(self):
        for _ in range(self.steps):
            idx = torch.randint(0, 65, (4, 16), device=self.local_rank)
            _, loss = self.model(idx, idx)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


def get_train_objs(lr):
    model = TinyGPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    return model, optimizer


@hydra.main(version_base=None, config_path=".", config_name="config")
def main(cfg):
    torch.distributed.init_process_group(backend="nccl")
    model, optimizer = get_train_objs(cfg.lr)
    Trainer(TrainerConfig(**cfg.trainer), model, optimizer).train()
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
