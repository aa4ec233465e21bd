"""A training script with validation: teacher forcing drawn at random, a DataLoader that keeps its
last partial batch, train/eval toggles and a no_grad validation pass around one compiled model."""

import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Seq2Seq(nn.Module):
    def __init__(self, vocab: int = 16, hidden: int = 8):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.encoder = nn.Linear(hidden, hidden)
        self.drop = nn.Dropout(0.1)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor, teacher_forcing: bool = False) -> torch.Tensor:
        h = torch.tanh(self.encoder(self.drop(self.embed(src))))
        if teacher_forcing:
            h = h + self.embed(tgt)
        return self.out(h)


@torch.compile
def token_loss(logits: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.flatten(0, 1), tgt.flatten())


def make_loader(n: int, batch_size: int) -> DataLoader:
    src = torch.randint(0, 16, (n, 5))
    return DataLoader(TensorDataset(src, src.flip(1)), batch_size=batch_size)


def run(epochs: int = 2, p: float = 0.5):
    random.seed(0)
    torch.manual_seed(0)
    model = Seq2Seq()
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(torch.randint(0, 16, (10, 5)), torch.randint(0, 16, (10, 5))), batch_size=4)
    xv, yv = torch.randint(0, 16, (4, 5)), torch.randint(0, 16, (4, 5))
    for _epoch in range(epochs):
        model.train()
        for src, tgt in loader:
            logits = compiled(src, tgt, teacher_forcing=random.random() < p)
            loss = F.cross_entropy(logits.flatten(0, 1), tgt.flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            val = compiled(xv, yv, teacher_forcing=False)
            token_loss(val, yv)
