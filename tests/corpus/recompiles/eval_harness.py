"""An evaluation harness written to compile once: the model is put in eval mode once, every batch
is full (drop_last=True), every call runs under inference_mode, and a Dropout-free scorer is
toggled between train and eval without effect on its graph."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.2)
        self.norm = nn.LayerNorm(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.drop(self.proj(x)))


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.fc(h))


def evaluate(encoder: nn.Module, scorer: nn.Module, loader: DataLoader) -> float:
    total = 0.0
    with torch.inference_mode():
        for (x,) in loader:
            total += float(scorer(encoder(x)).mean())
    return total


def run():
    encoder = Encoder()
    encoder.eval()
    enc = torch.compile(encoder)
    base = Scorer()
    score = torch.compile(base)
    loader = DataLoader(TensorDataset(torch.randn(20, 8)), batch_size=4, drop_last=True)
    for _round in range(3):
        base.train()
        evaluate(enc, score, loader)
        base.eval()
        evaluate(enc, score, loader)
