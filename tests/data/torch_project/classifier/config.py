"""Where training runs: one place for the whole project."""

import torch

DEVICE = torch.device("cuda")
BATCH_SIZE = 8
EMBEDDING_DIM = 16
VOCABULARY = 100
