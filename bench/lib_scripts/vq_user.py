"""A user's script for vector-quantize-pytorch: a VQ-VAE style bottleneck trained and evaluated
compiled, with the quantizers the README shows (bench/lib_eval.py runs the phases under Dynamo and
lints this file)."""

import torch
from torch import nn
from vector_quantize_pytorch import FSQ, LFQ, ResidualVQ, VectorQuantize


class Bottleneck(nn.Module):
    def __init__(self, quantizer: nn.Module) -> None:
        super().__init__()
        self.enc = nn.Linear(8, 16)
        self.quantizer = quantizer
        self.dec = nn.Linear(16, 8)

    def forward(self, x):
        quantized, indices, aux_loss = self.quantizer(self.enc(x))
        return self.dec(quantized), indices, aux_loss


def batch(size: int, length: int = 10) -> torch.Tensor:
    g = torch.Generator().manual_seed(size * 100 + length)
    return torch.randn(size, length, 8, generator=g)


def vq_train():
    model = Bottleneck(VectorQuantize(dim=16, codebook_size=32, decay=0.8, commitment_weight=1.0, kmeans_init=True))
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for size in (2, 3):
        x = batch(size)
        out, _, aux = step(x)
        ((out - x).pow(2).mean() + aux.sum()).backward()
        opt.step()
        opt.zero_grad()


def residual_vq_eval():
    model = Bottleneck(ResidualVQ(dim=16, num_quantizers=2, codebook_size=32)).eval()
    model = torch.compile(model, backend="eager")
    for size in (2, 3):
        with torch.no_grad():
            model(batch(size))


def fsq_and_lfq():
    fsq = torch.compile(FSQ(levels=[4, 4, 4], dim=16), backend="eager")
    lfq = LFQ(dim=16, codebook_size=16, entropy_loss_weight=0.1)
    lfq.train()
    lfq = torch.compile(lfq, backend="eager")
    for size in (2, 3):
        fsq(torch.randn(size, 10, 16))
        lfq(torch.randn(size, 10, 16))


PHASES = [vq_train, residual_vq_eval, fsq_and_lfq]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
