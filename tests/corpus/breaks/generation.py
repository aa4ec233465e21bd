"""Autoregressive generation with a compiled step and a compiled loop."""

import torch
import torch.nn as nn


class TinyDecoder(nn.Module):
    def __init__(self, vocab: int = 20, dim: int = 16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.GRUCell(dim, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tok: torch.Tensor, h: torch.Tensor):
        h = self.rnn(self.emb(tok), h)
        return self.head(h), h


decoder = TinyDecoder()


@torch.compile
def step(tok: torch.Tensor, h: torch.Tensor, temperature: float = 1.0):
    logits, h = decoder(tok, h)
    probs = (logits / temperature).softmax(-1)
    return probs.argmax(-1), h


@torch.compile
def generate(start: torch.Tensor, max_len: int = 6, eos: int = 0):
    h = torch.zeros(start.shape[0], 16)
    tok = start
    out = [tok]
    finished = torch.zeros_like(start, dtype=torch.bool)
    for _ in range(max_len):
        logits, h = decoder(tok, h)
        tok = logits.argmax(-1)
        finished = finished | (tok == eos)
        out.append(tok)
        if finished.all():
            break
    return torch.stack(out, 1)


def greedy(start: torch.Tensor, max_len: int = 5):
    h = torch.zeros(start.shape[0], 16)
    tok = start
    toks = []
    for _ in range(max_len):
        tok, h = step(tok, h)
        toks.append(tok)
    return torch.stack(toks, 1)


def run():
    start = torch.tensor([1, 2])
    greedy(start)
    generate(start)
