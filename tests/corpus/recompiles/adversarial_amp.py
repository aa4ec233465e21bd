"""Adversarial fine-tuning with mixed precision on some steps: the compiled model is called under
autocast for the clean pass, in full precision for the attack pass, and with grad mode off to
score the perturbed batch; the step counter reaches a compiled schedule as a range() bound."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


@torch.compile
def smooth_schedule(lr: torch.Tensor, warmup_steps: int) -> torch.Tensor:
    for _ in range(warmup_steps):
        lr = lr * 1.01
    return lr


def run(steps: int = 10):
    torch.manual_seed(0)
    net = Net()
    model = torch.compile(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x, y = torch.randn(4, 8), torch.randint(0, 3, (4,))
    lr = torch.tensor(0.01)
    for step in range(1, steps):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            clean = model(x)
        loss = F.cross_entropy(clean.float(), y)
        adv = x.clone()
        adv_logits = model(adv)
        delta = 0.01 * torch.sign(adv_logits.sum()) * torch.ones_like(x)
        with torch.no_grad():
            model(x + delta)
        opt.zero_grad()
        loss.backward()
        opt.step()
        lr = smooth_schedule(lr, step)
