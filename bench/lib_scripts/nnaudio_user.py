"""A user's script for nnAudio: spectrogram front ends (STFT, MelSpectrogram, MFCC, CQT,
Gammatonegram, iSTFT; Griffin_Lim is left out: it calls torch.istft
on a real tensor, which torch 2.13 refuses eagerly too) used the way nnAudio's README uses them (a layer inside a model
compiled after ``.train()`` / ``.eval()``, a compiled feature-extraction function, a compiled
STFT -> iSTFT round trip), on tiny CPU signals (bench/lib_eval.py runs the phases under Dynamo and
lints this file)."""

import torch
from nnAudio import features
from torch import nn

SR = 8_000


def noise(batch: int, length: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(batch * 1000 + length)
    return torch.randn(batch, length, generator=g)


class MelClassifier(nn.Module):
    """A keyword-spotting style model: a (trainable) mel front end, log compression, a conv, a head."""

    def __init__(self, n_classes: int = 3) -> None:
        super().__init__()
        self.spec = features.MelSpectrogram(
            sr=SR, n_fft=128, n_mels=16, hop_length=32, trainable_mel=True, verbose=False
        )
        self.conv = nn.Conv1d(16, 8, 3)
        self.head = nn.Linear(8, n_classes)

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        x = torch.log(self.spec(wav) + 1e-6)
        x = torch.relu(self.conv(x))
        return self.head(x.mean(-1))


def mel_train():
    model = torch.compile(MelClassifier().train(), backend="eager")
    opt = torch.optim.Adam(model.parameters())
    for length in (400, 480):
        opt.zero_grad()
        model(noise(2, length)).logsumexp(-1).mean().backward()
        opt.step()


def stft_features():
    stft = features.STFT(n_fft=64, hop_length=16, output_format="Magnitude", verbose=False)

    @torch.compile(backend="eager")
    def extract(wav):
        return torch.log1p(stft(wav))

    with torch.no_grad():
        for length in (256, 320):
            extract(noise(2, length))


def roundtrip():
    stft = features.STFT(n_fft=64, hop_length=16, iSTFT=True, verbose=False).eval()

    def denoise(wav):
        spec = stft(wav, output_format="Complex")
        return stft.inverse(spec * 0.5, length=wav.shape[-1])

    denoise = torch.compile(denoise, backend="eager")
    with torch.no_grad():
        for length in (256, 288):
            denoise(noise(1, length))


def mfcc_eval():
    mfcc = features.MFCC(sr=SR, n_mfcc=8, n_fft=128, n_mels=16, hop_length=32, verbose=False).eval()
    mfcc = torch.compile(mfcc, backend="eager")
    with torch.no_grad():
        for length in (400, 440):
            mfcc(noise(2, length))


def cqt_eval():
    cqt = features.CQT1992v2(sr=SR, hop_length=64, fmin=440, n_bins=12, bins_per_octave=12, verbose=False)
    cqt = torch.compile(cqt.eval(), backend="eager")
    with torch.no_grad():
        for length in (1024, 1200):
            cqt(noise(1, length))


def gammatone_eval():
    gt = features.Gammatonegram(sr=SR, n_fft=128, n_bins=16, hop_length=32, verbose=False)
    gt.eval()
    compiled = torch.compile(gt, backend="eager")
    with torch.no_grad():
        for length in (300, 360):
            compiled(noise(2, length))


def istft_layer():
    stft = features.STFT(n_fft=64, hop_length=16, freq_bins=None, verbose=False)
    inv = features.iSTFT(n_fft=64, hop_length=16, verbose=False)
    inv = torch.compile(inv, backend="eager")
    with torch.no_grad():
        for length in (256, 320):
            inv(stft(noise(1, length)), onesided=True, length=length)


PHASES = [mel_train, stft_features, roundtrip, mfcc_eval, cqt_eval, gammatone_eval, istft_layer]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
