"""Top-k MoE routing with capacity and an auxiliary load-balancing loss."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Expert(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Router(nn.Module):
    def __init__(self, dim: int, n_experts: int, top_k: int = 2, capacity_factor: float = 1.25):
        super().__init__()
        self.gate = nn.Linear(dim, n_experts, bias=False)
        self.n_experts = n_experts
        self.top_k = top_k
        self.capacity_factor = capacity_factor
        self.aux_history = []

    def forward(self, x: torch.Tensor):
        logits = self.gate(x)
        probs = logits.softmax(-1)
        weights, experts = probs.topk(self.top_k, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        counts = torch.bincount(experts.flatten(), minlength=self.n_experts)
        frac = counts.float() / experts.numel()
        aux = (frac * probs.mean(0)).sum() * self.n_experts
        return weights, experts, aux


class MoELayer(nn.Module):
    def __init__(self, dim: int = 16, n_experts: int = 4):
        super().__init__()
        self.router = Router(dim, n_experts)
        self.experts = nn.ModuleList([Expert(dim) for _ in range(n_experts)])

    def forward(self, x: torch.Tensor):
        shape = x.shape
        flat = x.reshape(-1, shape[-1])
        weights, experts, aux = self.router(flat)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            token_idx, slot = (experts == e).nonzero(as_tuple=True)
            if token_idx.numel() == 0:
                continue
            out[token_idx] += weights[token_idx, slot, None] * expert(flat[token_idx])
        return out.reshape(shape), aux


def dense_dispatch(x: torch.Tensor, weights: torch.Tensor, experts: torch.Tensor, n_experts: int) -> torch.Tensor:
    # static-shape alternative: one-hot combine weights, no data-dependent shapes
    combine = (F.one_hot(experts, n_experts).float() * weights[..., None]).sum(-2)
    return combine


def split_by_expert(x: torch.Tensor, experts: torch.Tensor, n_experts: int):
    order = experts.argsort()
    counts = torch.bincount(experts, minlength=n_experts)
    return x[order].split(counts.tolist())


moe = torch.compile(MoELayer())
compiled_dense = torch.compile(dense_dispatch)
compiled_split = torch.compile(split_by_expert)


def run():
    x = torch.randn(3, 5, 16)
    moe(x)
    compiled_dense(torch.randn(6, 16), torch.rand(6, 2), torch.randint(0, 4, (6, 2)), 4)
    compiled_split(torch.randn(6, 16), torch.randint(0, 4, (6,)), 4)
