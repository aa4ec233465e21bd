"""Attention, feed-forward and mixture-of-experts layers."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from tinylm.config import LMConfig
from tinylm.utils import causal_mask, entropy, log_router_stats, rms


class RMSNorm(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * rms(x) * self.weight


class Attention(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.head_dim = cfg.dim // cfg.n_heads
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim, bias=False)
        self.out = nn.Linear(cfg.dim, cfg.dim, bias=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        b, t, d = x.shape
        if d != self.n_heads * self.head_dim:  # a shape check: decided while tracing
            raise ValueError(f"expected width {self.n_heads * self.head_dim}, got {d}")
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, self.head_dim).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is None:
            mask = causal_mask(t, x.device)
        scores = scores.masked_fill(mask, float("-inf"))
        attn = scores.softmax(-1)
        assert attn.dim() == 4
        y = (attn @ v).transpose(1, 2).reshape(b, t, d)
        return self.out(y)


class MLP(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.up = nn.Linear(cfg.dim, 4 * cfg.dim)
        self.down = nn.Linear(4 * cfg.dim, cfg.dim)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.down(F.gelu(self.up(x))))


class MoE(nn.Module):
    """Top-k routed experts, written the way many model zoos write them."""

    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.router = nn.Linear(cfg.dim, cfg.n_experts, bias=False)
        self.experts = nn.ModuleList([MLP(cfg) for _ in range(cfg.n_experts)])
        self.n_experts = cfg.n_experts
        self.top_k = cfg.top_k

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        flat = x.reshape(-1, d)
        probs = self.router(flat).softmax(-1)
        weights, selected = torch.topk(probs, self.top_k, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        if entropy(probs) < 0.05:
            # router collapse: every token goes to the same experts
            weights = torch.full_like(weights, 1.0 / self.top_k)
        out = torch.zeros_like(flat)
        expert_mask = F.one_hot(selected, self.n_experts).permute(2, 1, 0)
        for e in range(self.n_experts):
            slot, token = torch.where(expert_mask[e])
            out.index_add_(0, token, self.experts[e](flat[token]) * weights[token, slot, None])
        if self.training:
            log_router_stats(expert_mask.sum((1, 2)))
        return out.reshape(b, t, d)
