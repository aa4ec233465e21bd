"""A request loop: per-request values reach compiled functions."""

import time

import torch
import torch.nn as nn

head = nn.Linear(8, 8)


@torch.compile
def predict(x: torch.Tensor, request_id: str) -> torch.Tensor:
    tag = f"req:{request_id}"
    return head(x) * len(tag)


@torch.compile
def decode(x: torch.Tensor, max_new_tokens: int) -> torch.Tensor:
    for _ in range(max_new_tokens):
        x = torch.tanh(head(x))
    return x


@torch.compile
def calibrate(x: torch.Tensor, temperature: float, started: float) -> torch.Tensor:
    return (head(x) / temperature).softmax(-1)


@torch.compile
def route(x: torch.Tensor, mode: str = "fast") -> torch.Tensor:
    if mode == "fast":
        return head(x)
    return head(head(x))


def serve(n_requests: int = 12):
    x = torch.randn(2, 8)
    for i in range(n_requests):
        predict(x, f"{i:04d}")
        decode(x, i + 1)
        calibrate(x, 0.5 + i / 10, time.time())
        route(x, "fast" if i % 2 else "accurate")


def run():
    serve()
