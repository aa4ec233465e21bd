"""A training loop with a step counter on the module, and train/eval toggles."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.drop = nn.Dropout(0.1)
        self.num_updates = 0

    def forward(self, x):
        self.num_updates += 1
        return self.fc(self.drop(x))


class WarmupScaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.register_buffer("step", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.step += 1
        scale = torch.clamp(self.step.float() / 100, max=1.0)
        return self.fc(x) * scale


net = torch.compile(Net())
warm = torch.compile(WarmupScaled())


@torch.compile
def loss_fn(logits: torch.Tensor, y: torch.Tensor, step: int) -> torch.Tensor:
    smoothing = 0.1 if step > 5 else 0.0
    return F.cross_entropy(logits, y, label_smoothing=smoothing) + 0 * step


def run():
    for step in range(12):
        net.train(step % 4 != 3)
        x, y = torch.randn(4, 8), torch.randint(0, 4, (4,))
        loss_fn(net(x), y, step)
        warm(x)
