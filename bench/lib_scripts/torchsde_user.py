"""A user's script for torchsde: SDEs written as torchsde's README writes them (an ``nn.Module`` with
``noise_type``/``sde_type`` and ``f``/``g`` methods), solved with ``torchsde.sdeint`` inside a compiled
module and by a compiled function (bench/lib_eval.py runs the phases under Dynamo and lints this file)."""

import torch
import torchsde
from torch import nn


class SDE(nn.Module):
    noise_type = "diagonal"
    sde_type = "ito"

    def __init__(self, state: int = 3) -> None:
        super().__init__()
        self.mu = nn.Linear(state, state)
        self.sigma = nn.Linear(state, state)

    def f(self, t, y):  # drift
        return self.mu(y)

    def g(self, t, y):  # diffusion
        return torch.sigmoid(self.sigma(y))


class Generator(nn.Module):
    """A neural SDE: solves the SDE from a learned initial state and reads out its last state."""

    def __init__(self) -> None:
        super().__init__()
        self.init = nn.Linear(2, 3)
        self.sde = SDE()
        self.readout = nn.Linear(3, 1)

    def forward(self, noise, ts):
        y0 = self.init(noise)
        ys = torchsde.sdeint(self.sde, y0, ts, method="euler", dt=0.25)
        return self.readout(ys[-1])


def euler_train():
    model = Generator()
    model = torch.compile(model, backend="eager")
    ts = torch.linspace(0, 1, 3)
    for n in (4, 6):
        model(torch.randn(n, 2), ts).mean().backward()


class Stratonovich(SDE):
    sde_type = "stratonovich"


def midpoint_eval():
    sde = Stratonovich()
    solve = torch.compile(torchsde.sdeint, backend="eager")
    ts = torch.linspace(0, 1, 3)
    with torch.no_grad():
        for n in (4, 6):
            solve(sde, torch.full((n, 3), 0.1), ts, method="midpoint", dt=0.25)


def brownian_sample():
    bm = torchsde.BrownianInterval(t0=0.0, t1=1.0, size=(4, 3))

    @torch.compile(backend="eager")
    def increments(ts):
        return torch.stack([bm(ts[i], ts[i + 1]) for i in range(len(ts) - 1)])

    increments(torch.linspace(0, 1, 4))


PHASES = [euler_train, midpoint_eval, brownian_sample]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
