"""A user's script for normflows: normalizing flows built, trained and sampled compiled, as normflows'
README shows (``nf.NormalizingFlow(base, flows)``, ``model.forward_kld(x)``, ``model.sample(n)``,
``model.log_prob(x)``, ``model.reverse_kld(n)``) (bench/lib_eval.py runs the phases under Dynamo and
lints this file).  A held-out library (issue 12): tclint was measured on it before any change."""

import normflows as nf
import torch
from torch import nn


def data(n: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(n)
    return torch.randn(n, 2, generator=g)


def real_nvp(layers: int = 2) -> nf.NormalizingFlow:
    base = nf.distributions.base.DiagGaussian(2)
    flows = []
    for _ in range(layers):
        param_map = nf.nets.MLP([1, 16, 16, 2], init_zeros=True)
        flows.append(nf.flows.AffineCouplingBlock(param_map))
        flows.append(nf.flows.Permute(2, mode="swap"))
    return nf.NormalizingFlow(base, flows)


def train_step(model, opt, x):
    loss = model.forward_kld(x)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


def realnvp_train():
    model = real_nvp()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    step = torch.compile(train_step, backend="eager")
    for n in (8, 12):
        step(model, opt, data(n))


def nsf_logprob():
    flows = []
    for _ in range(2):
        flows += [nf.flows.AutoregressiveRationalQuadraticSpline(2, 1, 16), nf.flows.LULinearPermute(2)]
    model = nf.NormalizingFlow(nf.distributions.DiagGaussian(2, trainable=False), flows).eval()
    log_prob = torch.compile(model.log_prob, backend="eager")
    with torch.no_grad():
        for n in (8, 12):
            log_prob(data(n))


def coupled_spline_sample():
    flows = [nf.flows.CoupledRationalQuadraticSpline(2, 1, 16), nf.flows.Permute(2, mode="swap")]
    model = nf.NormalizingFlow(nf.distributions.DiagGaussian(2), flows)
    model.eval()
    sample = torch.compile(model.sample, backend="eager")
    with torch.no_grad():
        for n in (4, 6):
            sample(n)


def planar_reverse_kld():
    flows = [nf.flows.Planar((2,)) for _ in range(2)] + [nf.flows.Radial((2,))]
    model = nf.NormalizingFlow(nf.distributions.DiagGaussian(2), flows, p=nf.distributions.TwoMoons())
    loss_fn = torch.compile(lambda n: model.reverse_kld(num_samples=n), backend="eager")
    for n in (8, 16):
        loss_fn(n).backward()


class Density(nn.Module):
    """A module a user writes around a flow: the mean negative log-likelihood of a batch."""

    def __init__(self, flow: nf.NormalizingFlow) -> None:
        super().__init__()
        self.flow = flow

    def forward(self, x):
        return -self.flow.log_prob(x).mean()


def maf_actnorm_train():
    flows = []
    for _ in range(2):
        flows += [nf.flows.MaskedAffineAutoregressive(2, 16, num_blocks=1), nf.flows.ActNorm(2)]
    model = Density(nf.NormalizingFlow(nf.distributions.DiagGaussian(2), flows)).train()
    model = torch.compile(model, backend="eager")
    for n in (8, 12):
        model(data(n)).backward()


def conditional_train():
    encoder = nf.nets.MLP([1, 8, 4])
    base = nf.distributions.base.ConditionalDiagGaussian(2, encoder)
    flows = [nf.flows.MaskedAffineAutoregressive(2, 16, context_features=1), nf.flows.LULinearPermute(2)]
    model = nf.ConditionalNormalizingFlow(base, flows)

    @torch.compile(backend="eager")
    def step(x, c):
        return model.forward_kld(x, c)

    for n in (8, 12):
        x = data(n)
        step(x, x[:, :1] ** 2).backward()


def residual_train():
    flows = []
    for _ in range(2):
        net = nf.nets.LipschitzMLP([2, 16, 2], init_zeros=True, lipschitz_const=0.9)
        flows += [nf.flows.Residual(net, reduce_memory=True), nf.flows.ActNorm(2)]
    model = nf.NormalizingFlow(nf.distributions.DiagGaussian(2), flows)
    step = torch.compile(model.forward_kld, backend="eager")
    for n in (8, 12):
        step(data(n)).backward()
        nf.utils.update_lipschitz(model, 5)


def glow(levels: int = 2, channels: int = 1, size: int = 8, classes: int = 3) -> nf.MultiscaleFlow:
    q0, merges, flows = [], [], []
    for i in range(levels):
        block = [
            nf.flows.GlowBlock(channels * 2 ** (levels + 1 - i), 8, split_mode="channel") for _ in range(2)
        ]
        flows.append([*block, nf.flows.Squeeze()])
        if i > 0:
            merges.append(nf.flows.Merge())
            side = size // 2 ** (levels - i)
            latent = (channels * 2 ** (levels - i), side, side)
        else:
            side = size // 2**levels
            latent = (channels * 2 ** (levels + 1), side, side)
        q0.append(nf.distributions.ClassCondDiagGaussian(latent, classes))
    return nf.MultiscaleFlow(q0, flows, merges)


def glow_train():
    model = glow()
    step = torch.compile(model.forward_kld, backend="eager")
    for n in (4, 6):
        x = torch.rand(n, 1, 8, 8)
        y = torch.arange(n) % 3
        step(x, y).backward()
    sample = torch.compile(model.sample, backend="eager")
    with torch.no_grad():
        sample(4, y=torch.arange(4) % 3)


PHASES = [
    realnvp_train,
    nsf_logprob,
    coupled_spline_sample,
    planar_reverse_kld,
    maf_actnorm_train,
    conditional_train,
    residual_train,
    glow_train,
]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
