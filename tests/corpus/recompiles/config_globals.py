"""Module-level state read and written by compiled code."""

import torch

CALLS = 0
SCALE = 1.0
HISTORY = []


@torch.compile
def counted(x: torch.Tensor) -> torch.Tensor:
    global CALLS
    CALLS += 1
    return x * 2


@torch.compile
def scaled(x: torch.Tensor) -> torch.Tensor:
    return x * SCALE


@torch.compile
def remembered(x: torch.Tensor) -> torch.Tensor:
    y = x.sin()
    HISTORY.append(y.mean())
    return y


def run():
    global SCALE
    x = torch.randn(4)
    for i in range(10):
        counted(x)
        SCALE = 1.0 + i / 10
        scaled(x)
        remembered(x)
