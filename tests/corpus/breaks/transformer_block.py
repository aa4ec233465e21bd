"""A pre-norm transformer block with rotary embeddings, a KV cache and a few real hazards."""

import logging
import math
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q, k, cos, sin):
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class Rotary(nn.Module):
    def __init__(self, dim: int, base: float = 10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x: torch.Tensor, seq_len: int):
        t = torch.arange(seq_len, device=x.device, dtype=self.inv_freq.dtype)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos()[None, None], emb.sin()[None, None]


class SelfAttention(nn.Module):
    def __init__(self, dim: int, n_heads: int, dropout: float = 0.0):
        super().__init__()
        assert dim % n_heads == 0
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)
        self.rotary = Rotary(self.head_dim)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, attn_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, t, self.n_heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, t, self.n_heads, self.head_dim).transpose(1, 2)
        cos, sin = self.rotary(v, seq_len=t)
        q, k = apply_rotary(q, k, cos, sin)
        if attn_mask is not None and attn_mask.dtype != torch.bool:
            attn_mask = attn_mask > 0
        if attn_mask is not None and not attn_mask.any():
            logger.warning("fully masked attention")
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        if attn_mask is not None:
            scores = scores.masked_fill(~attn_mask[:, None, None, :], float("-inf"))
        probs = F.dropout(scores.softmax(-1), self.dropout, self.training)
        out = (probs @ v).transpose(1, 2).reshape(b, t, -1)
        return self.o(out)


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden)
        self.w2 = nn.Linear(hidden, dim)
        self.w3 = nn.Linear(dim, hidden)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, dim: int = 32, n_heads: int = 4, hidden: int = 64):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, n_heads)
        self.ln2 = nn.LayerNorm(dim)
        self.ff = FeedForward(dim, hidden)
        self.residual_scale = 1.0

    def forward(self, x: torch.Tensor, attn_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        h = x + self.residual_scale * self.attn(self.ln1(x), attn_mask)
        out = h + self.ff(self.ln2(h))
        max_act = out.abs().max().item()
        if max_act > 1e4:
            out = out / max_act
        return out


block = torch.compile(Block())


def run():
    x = torch.randn(2, 6, 32)
    mask = torch.ones(2, 6)
    mask[1, 3:] = 0
    block(x, mask)
    block(x, torch.zeros(2, 6))
    block(x)
