"""A user's script for torchdiffeq: neural-ODE blocks that call ``odeint`` inside a compiled model,
as in the library's examples (bench/lib_eval.py runs the phases under Dynamo and lints this file)."""

import torch
from torch import nn
from torchdiffeq import odeint, odeint_adjoint, odeint_event


class ODEFunc(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 16), nn.Tanh(), nn.Linear(16, dim))

    def forward(self, t, y):
        return self.net(y)


class ODEBlock(nn.Module):
    def __init__(self, dim: int, method: str, adjoint: bool = False) -> None:
        super().__init__()
        self.func = ODEFunc(dim)
        self.method = method
        self.adjoint = adjoint
        self.register_buffer("times", torch.tensor([0.0, 1.0]))

    def forward(self, x):
        options = {"step_size": 0.25} if self.method in ("rk4", "euler", "midpoint") else None
        if self.adjoint:
            out = odeint_adjoint(self.func, x, self.times, rtol=1e-3, atol=1e-4, method=self.method, options=options)
        else:
            out = odeint(self.func, x, self.times, rtol=1e-3, atol=1e-4, method=self.method, options=options)
        return out[-1]


class Classifier(nn.Module):
    def __init__(self, method: str, adjoint: bool = False) -> None:
        super().__init__()
        self.inp = nn.Linear(4, 6)
        self.ode = ODEBlock(6, method, adjoint)
        self.out = nn.Linear(6, 3)

    def forward(self, x):
        return self.out(self.ode(self.inp(x)))


def adaptive_eval():
    for method in ("dopri5", "bosh3"):
        model = Classifier(method).eval()
        model = torch.compile(model, backend="eager")
        for batch in (4, 6):
            with torch.no_grad():
                model(torch.randn(batch, 4))


def fixed_grid_train():
    model = Classifier("rk4")
    compiled = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for batch in (4, 8):
        loss = compiled(torch.randn(batch, 4)).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()


def adjoint_train():
    model = Classifier("dopri5", adjoint=True)
    model.train()
    compiled = torch.compile(model, backend="eager")
    loss = compiled(torch.randn(4, 4)).pow(2).mean()
    loss.backward()


class Bounce(nn.Module):
    """Falls until the height crosses zero (an event), as in the library's bouncing-ball example."""

    def __init__(self) -> None:
        super().__init__()
        self.gravity = nn.Parameter(torch.tensor(9.8))

    def forward(self, t, state):
        pos, vel = state
        return vel, -self.gravity.expand_as(pos)

    def event(self, t, state):
        return state[0]

    def first_bounce(self, height):
        state = (height, torch.zeros_like(height))
        t0 = torch.tensor(0.0)
        return odeint_event(self, state, t0, event_fn=self.event, reverse_time=False, atol=1e-6, rtol=1e-6)


def event_eval():
    system = Bounce()
    first_bounce = torch.compile(system.first_bounce, backend="eager")
    with torch.no_grad():
        first_bounce(torch.tensor([1.0]))


PHASES = [adaptive_eval, fixed_grid_train, adjoint_train, event_eval]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
