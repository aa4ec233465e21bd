"""A small CNN full of code that looks suspicious but traces cleanly."""

from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int = 1):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn = nn.BatchNorm2d(c_out)
        self.skip = nn.Identity() if c_in == c_out and stride == 1 else nn.Conv2d(c_in, c_out, 1, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 4:
            raise ValueError(f"expected NCHW input, got shape {tuple(x.shape)}")
        return F.relu(self.bn(self.conv(x)) + self.skip(x))


class Net(nn.Module):
    def __init__(self, n_classes: int = 10):
        super().__init__()
        self.stem = ConvBlock(3, 8)
        self.stages = nn.Sequential(ConvBlock(8, 16, 2), ConvBlock(16, 16), ConvBlock(16, 32, 2))
        self.head = nn.Linear(32, n_classes)
        self.use_aux = False

    def forward(self, x: torch.Tensor, target_size: Optional[int] = None) -> torch.Tensor:
        assert x.shape[1] == 3, "RGB input expected"
        if target_size is not None and x.shape[-1] != target_size:
            x = F.interpolate(x, size=(target_size, target_size), mode="bilinear", align_corners=False)
        x = self.stem(x)
        feats = []
        for stage in self.stages:
            x = stage(x)
            feats.append(x.mean((2, 3)))
        if isinstance(x, torch.Tensor) and self.use_aux:
            x = x * 2
        pooled = feats[-1]
        logits = self.head(pooled)
        logits = torch.where(torch.isfinite(logits), logits, torch.zeros_like(logits))
        assert torch.isfinite(logits).all()
        n = int(x.shape[0])
        return logits[:n]


net = torch.compile(Net().eval())


def run():
    with torch.no_grad():
        net(torch.randn(2, 3, 16, 16))
        net(torch.randn(2, 3, 12, 12), target_size=16)
