"""A user's script for julius: DSP blocks (sinc resampling, FIR low/high/band-pass filters, mel band
splitting, FFT convolutions) used the way audio models and data pipelines use them (a front end
module inside a model compiled after ``.train()`` / ``.eval()``, a compiled augmentation function, a
compiled training step), on tiny CPU signals (bench/lib_eval.py runs the phases under Dynamo and
lints this file)."""

import julius
import torch
from torch import nn


def noise(batch: int, length: int, channels: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(batch * 1000 + length)
    return torch.randn(batch, channels, length, generator=g)


class Resampled(nn.Module):
    """A small classifier that resamples its 16 kHz input to 8 kHz before a conv stack."""

    def __init__(self) -> None:
        super().__init__()
        self.resample = julius.ResampleFrac(16_000, 8_000, zeros=8)
        self.conv = nn.Conv1d(1, 4, 5, stride=2)
        self.head = nn.Linear(4, 3)

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        x = self.resample(wav)
        x = torch.relu(self.conv(x))
        return self.head(x.mean(-1))


def resample_train():
    model = Resampled().train()
    model = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for length in (400, 480):
        opt.zero_grad()
        model(noise(2, length)).logsumexp(-1).mean().backward()
        opt.step()


@torch.compile(backend="eager")
def augment(wav: torch.Tensor) -> torch.Tensor:
    """Filter augmentations: a low-pass, a high-pass and a band-pass version of the signal, mixed."""
    low = julius.lowpass_filter(wav, 0.2)
    high = julius.highpass_filter(wav, 0.05, zeros=4)
    band = julius.bandpass_filter(wav, 0.05, 0.2)
    return (low + high + band) / 3


def augment_batches():
    for length in (256, 320):
        augment(noise(2, length))


class BandEncoder(nn.Module):
    """Splits the waveform into mel-spaced bands (julius.SplitBands) and mixes them with a 1x1 conv."""

    def __init__(self, sample_rate: int = 8_000, n_bands: int = 4) -> None:
        super().__init__()
        self.bands = julius.SplitBands(sample_rate, n_bands=n_bands)
        self.mix = nn.Conv1d(n_bands, 2, 1)

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        bands = self.bands(wav.squeeze(1))  # (n_bands, batch, time)
        return self.mix(bands.transpose(0, 1))


def bands_eval():
    model = torch.compile(BandEncoder().eval(), backend="eager")
    with torch.no_grad():
        for length in (300, 360):
            model(noise(2, length))


def fftconv_train():
    net = nn.Sequential(julius.FFTConv1d(1, 4, 64, stride=2), nn.ReLU(), julius.FFTConv1d(4, 1, 32))
    net.train()
    opt = torch.optim.Adam(net.parameters())

    @torch.compile(backend="eager")
    def step(x):
        return net(x).pow(2).mean()

    for length in (512, 640):
        opt.zero_grad()
        step(noise(2, length)).backward()
        opt.step()


def lowpass_bank():
    bank = julius.LowPassFilters([0.05, 0.1, 0.25], stride=2, pad=True).eval()
    compiled = torch.compile(bank, backend="eager")
    with torch.no_grad():
        for length in (200, 260):
            compiled(noise(3, length))


def resample_function():
    resample = torch.compile(julius.resample_frac, backend="eager")
    for length in (300, 330):
        resample(noise(1, length), 3, 2, zeros=8)
    # fixed output length, as when aligning two streams
    resample(noise(1, 300), 3, 2, output_length=190, zeros=8)


PHASES = [resample_train, augment_batches, bands_eval, fftconv_train, lowpass_bank, resample_function]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
