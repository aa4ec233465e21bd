"""A compiled training step with the logging and bookkeeping real loops carry."""

import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("trainer")


class Classifier(nn.Module):
    def __init__(self, dim: int = 16, n_classes: int = 4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, n_classes))

    def forward(self, x):
        return self.body(x)


model = Classifier()
opt = torch.optim.SGD(model.parameters(), lr=0.1)


@torch.compile
def compute_loss(x: torch.Tensor, y: torch.Tensor, step: int):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    acc = (logits.argmax(-1) == y).float().mean()
    if step % 100 == 0:
        log.info("step %d loss %.4f acc %.3f", step, loss.item(), acc)
    return loss, acc


@torch.compile
def grad_norm(parameters: list[torch.Tensor]) -> torch.Tensor:
    norms = [p.grad.norm() for p in parameters if p.grad is not None]
    total = torch.stack(norms).norm()
    if torch.isfinite(total):
        return total
    return torch.zeros(())


@torch.compile
def timed_eval(x: torch.Tensor):
    start = time.perf_counter()
    with torch.no_grad():
        out = model(x).softmax(-1)
    return out, time.perf_counter() - start


def train(steps: int = 3):
    for step in range(steps):
        x = torch.randn(8, 16)
        y = torch.randint(0, 4, (8,))
        loss, acc = compute_loss(x, y, step)
        opt.zero_grad()
        loss.backward()
        gn = grad_norm([p for p in model.parameters()])
        opt.step()
        if step % 2 == 0:
            print(f"step {step}: loss={loss.item():.3f} grad_norm={gn.item():.3f}")


def run():
    train(3)
    timed_eval(torch.randn(4, 16))
