"""A user's script for nflows: flows built as nflows' README builds them (a base distribution, a
CompositeTransform of permutations and autoregressive / coupling layers, ``Flow(transform, base)``),
trained and sampled compiled (bench/lib_eval.py runs the phases under Dynamo and lints this file)."""

import torch
from nflows import transforms
from nflows.distributions.normal import ConditionalDiagonalNormal, StandardNormal
from nflows.flows.base import Flow
from nflows.flows.realnvp import SimpleRealNVP
from nflows.nn.nets import ResidualNet
from torch import nn


def moons(n: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(n)
    t = torch.rand(n, generator=g) * 3.14159
    return torch.stack([torch.cos(t), torch.sin(t)], 1) + 0.1 * torch.randn(n, 2, generator=g)


def maf_train():
    layers = []
    for _ in range(2):
        layers.append(transforms.ReversePermutation(features=2))
        layers.append(transforms.MaskedAffineAutoregressiveTransform(features=2, hidden_features=8))
    flow = Flow(transforms.CompositeTransform(layers), StandardNormal(shape=[2]))
    opt = torch.optim.Adam(flow.parameters())
    log_prob = torch.compile(flow.log_prob, backend="eager")
    for n in (16, 24):
        opt.zero_grad()
        loss = -log_prob(inputs=moons(n)).mean()
        loss.backward()
        opt.step()


def nsf_train():
    layers = []
    for _ in range(2):
        layers.append(transforms.RandomPermutation(features=2))
        layers.append(
            transforms.MaskedPiecewiseRationalQuadraticAutoregressiveTransform(
                features=2, hidden_features=8, num_bins=4, tails="linear", tail_bound=3.0
            )
        )
    flow = Flow(transforms.CompositeTransform(layers), StandardNormal(shape=[2]))
    flow.train()

    @torch.compile(backend="eager")
    def step(x):
        return -flow.log_prob(x).mean()

    for n in (16, 24):
        step(moons(n)).backward()


def coupling_flow() -> Flow:
    def net(in_features, out_features):
        return ResidualNet(in_features, out_features, hidden_features=8, num_blocks=1)

    mask = torch.tensor([1, 0])
    layers = [
        transforms.PiecewiseRationalQuadraticCouplingTransform(
            mask=mask, transform_net_create_fn=net, num_bins=4, tails="linear", tail_bound=3.0
        ),
        transforms.LULinear(2, identity_init=True),
        transforms.AffineCouplingTransform(mask=1 - mask, transform_net_create_fn=net),
        transforms.ActNorm(2),
    ]
    return Flow(transforms.CompositeTransform(layers), StandardNormal(shape=[2]))


def coupling_sample():
    flow = coupling_flow().eval()
    sample = torch.compile(flow.sample, backend="eager")
    with torch.no_grad():
        for n in (8, 12):
            sample(n)


class Density(nn.Module):
    """A module around a flow: the log-density of squashed data (a Sigmoid/Logit pre-processing)."""

    def __init__(self) -> None:
        super().__init__()
        self.flow = SimpleRealNVP(features=2, hidden_features=8, num_layers=2, num_blocks_per_layer=1)
        self.squash = transforms.CompositeTransform([transforms.Sigmoid(), transforms.Logit()])

    def forward(self, x):
        z, logabsdet = self.squash(x)
        return self.flow.log_prob(z) + logabsdet


def realnvp_eval():
    model = Density().eval()
    model = torch.compile(model, backend="eager")
    with torch.no_grad():
        for n in (8, 12):
            model(moons(n))


def conditional_train():
    layers = [
        transforms.MaskedAffineAutoregressiveTransform(features=2, hidden_features=8, context_features=1),
        transforms.ReversePermutation(features=2),
        transforms.MaskedPiecewiseRationalQuadraticAutoregressiveTransform(
            features=2, hidden_features=8, context_features=1, num_bins=4, tails="linear", tail_bound=3.0
        ),
    ]
    flow = Flow(
        transforms.CompositeTransform(layers),
        ConditionalDiagonalNormal(shape=[2], context_encoder=nn.Linear(1, 4)),
    )
    step = torch.compile(lambda x, c: -flow.log_prob(x, context=c).mean(), backend="eager")
    for n in (8, 12):
        x = moons(n)
        step(x, x[:, :1] ** 2).backward()
    with torch.no_grad():
        torch.compile(flow.sample, backend="eager")(3, context=torch.ones(2, 1))


PHASES = [maf_train, nsf_train, coupling_sample, realnvp_eval, conditional_train]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
