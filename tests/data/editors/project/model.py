"""A small model with torch.compile hazards, for the editor and integration tests."""

import torch


@torch.compile
def step(x: torch.Tensor) -> torch.Tensor:
    y = x.relu()
    print("activations:", y.shape)
    scale = y.max().item()
    return y / scale


def helper(x):
    return x + 1  # noqa: TC101


def clean(x: torch.Tensor) -> torch.Tensor:
    return torch.where(x > 0, x, -x)
