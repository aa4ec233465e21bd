"""Helpers shared by the model and the scripts."""

import logging

import numpy as np
import torch

logger = logging.getLogger(__name__)


def rms(x: torch.Tensor) -> torch.Tensor:
    return x.pow(2).mean(-1, keepdim=True).add(1e-6).rsqrt()


def entropy(probs: torch.Tensor) -> torch.Tensor:
    return -(probs * probs.clamp_min(1e-9).log()).sum(-1).mean()


def causal_mask(seq_len: int, device: torch.device) -> torch.Tensor:
    # a boolean mask used with masked_fill: static shape, no graph break
    return torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool, device=device), diagonal=1)


def percentile(x: torch.Tensor, q: float) -> torch.Tensor:
    # NumPy on tensors is traced by Dynamo in torch 2.13 (trace_numpy): no break here
    return torch.as_tensor(np.percentile(x.detach().numpy(), q))


@torch.compiler.disable
def log_router_stats(counts: torch.Tensor) -> None:
    """Kept eager on purpose: calling it from compiled code is a graph break (TC110)."""
    logger.info("tokens per expert: %s", counts.tolist())
