"""A user's script for asteroid-filterbanks: encoder/decoder pairs as asteroid's separation models
build them (``make_enc_dec("stft" | "free" | "param_sinc", ...)``, a masker between ``Encoder`` and
``Decoder``, the ``transforms`` helpers for magnitudes and masks), mel and PCEN front ends and the
Griffin-Lim phase estimate, compiled the usual ways (a separation model after ``.train()`` /
``.eval()``, a compiled training step, a compiled function), on tiny CPU signals
(bench/lib_eval.py runs the phases under Dynamo and lints this file)."""

import torch
from asteroid_filterbanks import STFTFB, Encoder, ParamSincFB, griffin_lim, make_enc_dec, transforms
from asteroid_filterbanks.pcen import PCEN
from torch import nn


def mixture(batch: int, length: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(batch * 1000 + length)
    return torch.randn(batch, length, generator=g)


class MaskSeparator(nn.Module):
    """A two-source STFT masking separator (an asteroid-style encoder / masker / decoder)."""

    def __init__(self, n_src: int = 2, n_filters: int = 64, kernel_size: int = 64) -> None:
        super().__init__()
        self.n_src = n_src
        self.encoder, self.decoder = make_enc_dec(
            "stft", n_filters=n_filters, kernel_size=kernel_size, stride=16
        )
        n_bins = n_filters // 2 + 1
        self.masker = nn.Sequential(nn.Conv1d(n_bins, 32, 1), nn.ReLU(), nn.Conv1d(32, n_src * n_bins, 1))

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        tf_rep = self.encoder(wav.unsqueeze(1))  # (batch, 1, n_filters, frames)
        mag = transforms.mag(tf_rep.squeeze(1))
        masks = torch.sigmoid(self.masker(mag)).view(wav.shape[0], self.n_src, -1, mag.shape[-1])
        masked = transforms.apply_mag_mask(tf_rep, masks)
        return self.decoder(masked, length=wav.shape[-1])


def separator_train():
    model = MaskSeparator().train()
    model = torch.compile(model, backend="eager")
    opt = torch.optim.Adam(model.parameters())
    for length in (512, 640):
        mix = mixture(2, length)
        opt.zero_grad()
        est = model(mix)
        (est.sum(1) - mix).pow(2).mean().backward()
        opt.step()


def free_encdec_step():
    enc, dec = make_enc_dec("free", n_filters=32, kernel_size=16, stride=8)
    net = nn.Sequential(enc, nn.ReLU(), dec)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)

    @torch.compile(backend="eager")
    def step(wav):
        return (net(wav.unsqueeze(1)).squeeze(1)[..., : wav.shape[-1]] - wav).abs().mean()

    for length in (256, 320):
        opt.zero_grad()
        step(mixture(2, length)).backward()
        opt.step()


class SincFrontEnd(nn.Module):
    """A SincNet-style speaker embedding: learnable sinc band-pass filters, pooling, a projection."""

    def __init__(self) -> None:
        super().__init__()
        self.sinc = Encoder(ParamSincFB(n_filters=16, kernel_size=65, stride=8, sample_rate=8000.0))
        self.proj = nn.Linear(16, 8)

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        feats = torch.log1p(self.sinc(wav.unsqueeze(1)).abs())
        return self.proj(feats.mean(-1))


def sinc_eval():
    model = torch.compile(SincFrontEnd().eval(), backend="eager")
    with torch.no_grad():
        for length in (400, 480):
            model(mixture(2, length))


class MelPCEN(nn.Module):
    """A keyword-spotting front end: an STFT magnitude, a learned 16-band projection, trainable PCEN
    (MelGramFB is left out: it needs librosa)."""

    def __init__(self) -> None:
        super().__init__()
        self.stft = Encoder(STFTFB(n_filters=64, kernel_size=64, stride=16))
        self.bands = nn.Conv1d(33, 16, 1, bias=False)
        self.pcen = PCEN(n_channels=16, trainable=True)

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        mag = transforms.mag(self.stft(wav.unsqueeze(1)))
        return self.pcen(self.bands(mag).abs())


def mel_pcen_train():
    model = MelPCEN()
    model.train()
    compiled = torch.compile(model, backend="eager")
    for length in (512, 576):
        compiled(mixture(2, length)).mean().backward()


def phase_recovery():
    stft = Encoder(STFTFB(n_filters=64, kernel_size=64, stride=16))

    def recover(wav):
        mag = transforms.mag(stft(wav.unsqueeze(1)))
        return griffin_lim(mag, stft, n_iter=2)

    recover = torch.compile(recover, backend="eager")
    with torch.no_grad():
        for length in (512, 640):
            recover(mixture(1, length))


PHASES = [separator_train, free_encdec_step, sinc_eval, mel_pcen_train, phase_recovery]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
