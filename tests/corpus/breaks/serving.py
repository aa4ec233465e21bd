"""A serving path: a compiled scorer called per request, with formatting and logging around it."""

import json
import logging

import torch
import torch.nn as nn

logger = logging.getLogger("serve")


class Scorer(nn.Module):
    def __init__(self, vocab: int = 50, dim: int = 16):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim)
        self.out = nn.Linear(dim, 1)

    def forward(self, tokens: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return self.out(self.emb(tokens, offsets)).squeeze(-1).sigmoid()


scorer = torch.compile(Scorer().eval())


@torch.compile
def rank(scores: torch.Tensor, k: int = 3):
    values, idx = scores.topk(k)
    return idx.tolist(), values


@torch.compile
def explain(scores: torch.Tensor) -> str:
    summary = {"max": float(scores.max()), "n": int(scores.numel())}
    return json.dumps(summary)


def handle(request: dict) -> dict:
    tokens = torch.tensor(request["tokens"])
    offsets = torch.tensor(request["offsets"])
    with torch.no_grad():
        scores = scorer(tokens, offsets)
    ids, values = rank(scores)
    logger.info("request %s: best %s", request["id"], ids[0])
    return {"id": request["id"], "ranking": ids, "scores": values.tolist(), "explain": explain(scores)}


def run():
    req = {"id": "r1", "tokens": list(range(20)), "offsets": [0, 4, 9, 13, 17]}
    handle(req)
