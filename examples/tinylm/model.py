"""The transformer: blocks in a ModuleList, layer drop, a KV cache for decoding."""

import logging

import torch
import torch.nn as nn

from tinylm.config import LMConfig
from tinylm.layers import MLP, Attention, MoE, RMSNorm

logger = logging.getLogger(__name__)


class Block(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.norm1 = RMSNorm(cfg.dim)
        self.attn = Attention(cfg)
        self.norm2 = RMSNorm(cfg.dim)
        self.ff = MoE(cfg) if cfg.use_moe else MLP(cfg)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), mask)
        if torch.isnan(x).any():
            logger.warning("NaN after attention")
        return x + self.ff(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
        self.norm = RMSNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        self.layerdrop = cfg.layerdrop
        self.steps = 0

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for block in self.blocks:
            if self.training and torch.rand([]) < self.layerdrop:
                continue  # LayerDrop
            x = block(x)
        self.steps += 1
        return self.head(self.norm(x))

    def loss(self, tokens: torch.Tensor) -> torch.Tensor:
        logits = self(tokens[:, :-1])
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))


class KVCache:
    """A preallocated cache written in place: static shapes, no recompiles."""

    def __init__(self, batch: int, max_len: int, dim: int):
        self.keys = torch.zeros(batch, max_len, dim)
        self.length = torch.zeros((), dtype=torch.long)

    def append(self, k: torch.Tensor) -> None:
        idx = self.length + torch.arange(k.shape[1])
        self.keys.index_copy_(1, idx, k)
        self.length += k.shape[1]
