"""Variable batches: lists of tensors, static shapes, and the default dynamic policy."""

import torch
import torch.nn as nn

proj = nn.Linear(8, 8)


@torch.compile
def pool(chunks: list[torch.Tensor]) -> torch.Tensor:
    return torch.stack([proj(c).mean(0) for c in chunks]).mean(0)


def encode(x: torch.Tensor) -> torch.Tensor:
    return proj(x).relu().sum(0)


static_encode = torch.compile(encode, dynamic=False)
dynamic_encode = torch.compile(encode)


@torch.compile
def padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    mask = torch.arange(x.shape[1])[None, :] < lengths[:, None]
    return (proj(x) * mask[..., None]).sum(1)


def run():
    for n in range(1, 11):
        pool([torch.randn(3, 8) for _ in range(n)])
        static_encode(torch.randn(n * 4, 8))
        dynamic_encode(torch.randn(n * 4, 8))
        padded(torch.randn(2, 5, 8), torch.tensor([n % 5 + 1, 5]))
