"""A user's script for zuko: normalizing flows trained and sampled compiled, as zuko's README shows
(``flow(c).log_prob(x)``, ``flow(c).sample(...)``) (bench/lib_eval.py runs the phases under Dynamo
and lints this file)."""

import torch
import zuko
from torch import nn


def data(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(n)
    return torch.randn(n, 3, generator=g), torch.randn(n, 2, generator=g)


def nll(flow: nn.Module, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    return -flow(c).log_prob(x).mean()


def maf_train():
    flow = zuko.flows.MAF(3, 2, transforms=2, hidden_features=[16, 16])
    flow.train()
    opt = torch.optim.Adam(flow.parameters(), lr=1e-3)
    step = torch.compile(nll, backend="eager")
    for n in (8, 12):
        x, c = data(n)
        loss = step(flow, x, c)
        loss.backward()
        opt.step()
        opt.zero_grad()


class Density(nn.Module):
    """A module that wraps a flow: the log-density of x given a context."""

    def __init__(self, flow: nn.Module) -> None:
        super().__init__()
        self.flow = flow

    def forward(self, x, c):
        return self.flow(c).log_prob(x)


def nsf_eval():
    model = Density(zuko.flows.NSF(3, 2, transforms=2, hidden_features=[16, 16])).eval()
    model = torch.compile(model, backend="eager")
    for n in (8, 12):
        x, c = data(n)
        with torch.no_grad():
            model(x, c)


def realnvp_sample():
    flow = zuko.flows.RealNVP(3, 2, transforms=2, hidden_features=[16])
    sample = torch.compile(lambda c: flow(c).rsample((4,)), backend="eager")
    for n in (2, 3):
        _, c = data(n)
        sample(c)


class Unconditional(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.flow = zuko.flows.NAF(2, transforms=1, signal=4, hidden_features=[8])

    def forward(self, x):
        return self.flow().log_prob(x).mean()


def naf_train():
    model = Unconditional()
    compiled = torch.compile(model, backend="eager")
    for n in (8, 12):
        x, _ = data(n)
        compiled(x[:, :2]).backward()


def cnf_logprob():
    flow = zuko.flows.CNF(3, 2, hidden_features=[16])
    flow.eval()
    model = torch.compile(Density(flow), backend="eager")
    x, c = data(4)
    with torch.no_grad():
        model(x, c)


PHASES = [maf_train, nsf_eval, realnvp_sample, naf_train, cnf_logprob]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
