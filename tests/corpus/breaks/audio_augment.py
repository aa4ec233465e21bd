"""SpecAugment-style masking and mixing in a compiled augmentation function."""

import random

import numpy as np
import torch
import torch.nn as nn


class SpecAugment(nn.Module):
    def __init__(self, freq_mask: int = 4, time_mask: int = 6, n_masks: int = 2, p_mix: float = 0.5):
        super().__init__()
        self.freq_mask = freq_mask
        self.time_mask = time_mask
        self.n_masks = n_masks
        self.p_mix = p_mix

    def forward(self, spec: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        b, f, t = spec.shape
        spec = spec.clone()
        width = torch.randint(0, self.freq_mask + 1, (1,)).item()
        start = torch.randint(0, f - width + 1, (1,)).item()
        spec[:, start : start + width, :] = 0
        valid = torch.arange(t)[None, :] < lengths[:, None]
        spec = spec * valid[:, None, :]
        gain = np.random.uniform(0.8, 1.2)
        spec = spec * gain
        return spec


def mixup(x: torch.Tensor, y: torch.Tensor, alpha: float = 0.2):
    lam = torch.distributions.Beta(alpha, alpha).sample()
    perm = torch.randperm(x.shape[0])
    return lam * x + (1 - lam) * x[perm], lam * y + (1 - lam) * y[perm]


def time_stretch(spec: torch.Tensor, rate: float) -> torch.Tensor:
    t = spec.shape[-1]
    new_t = max(1, int(t * rate))
    return torch.nn.functional.interpolate(spec, size=new_t, mode="linear", align_corners=False)


augment = torch.compile(SpecAugment())
compiled_stretch = torch.compile(time_stretch)


def run():
    spec = torch.randn(2, 16, 20)
    augment(spec, torch.tensor([20, 15]))
    compiled_stretch(spec, 0.5)
