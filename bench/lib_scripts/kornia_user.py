"""A user's script for kornia: a GPU-style augmentation pipeline, a preprocessing module built from
kornia's filters/color/enhance functions, geometry warps and a loss, compiled as users do
(bench/lib_eval.py runs the phases under Dynamo and lints this file)."""

import kornia
import kornia.augmentation as K
import torch
from kornia.filters import GaussianBlur2d, Sobel
from kornia.losses import SSIMLoss
from torch import nn


def images(batch: int, size: int = 32, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed + batch * 100 + size)
    return torch.rand(batch, 3, size, size, generator=g)


class Preprocess(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blur = GaussianBlur2d((5, 5), (1.5, 1.5))
        self.edges = Sobel()

    def forward(self, x):
        x = kornia.color.rgb_to_hsv(x)
        x = kornia.color.hsv_to_rgb(x)
        x = kornia.enhance.adjust_brightness(x, 0.1)
        x = kornia.enhance.normalize(x, torch.tensor([0.5, 0.5, 0.5]), torch.tensor([0.2, 0.2, 0.2]))
        gray = kornia.color.rgb_to_grayscale(self.blur(x))
        return torch.cat([x, self.edges(gray)], 1)


class Warp(nn.Module):
    def forward(self, x, angle):
        center = torch.tensor([[x.shape[-1] / 2, x.shape[-2] / 2]]).expand(x.shape[0], 2)
        mat = kornia.geometry.transform.get_rotation_matrix2d(center, angle, torch.ones(x.shape[0], 2))
        rotated = kornia.geometry.transform.warp_affine(x, mat, dsize=x.shape[-2:])
        return kornia.geometry.transform.resize(rotated, (24, 24))


def augmentation_train():
    aug = K.AugmentationSequential(
        K.RandomHorizontalFlip(),
        K.ColorJitter(0.1, 0.1, 0.1, 0.1, p=1.0),
        K.RandomAffine(degrees=10.0, p=1.0),
        K.RandomGaussianBlur((3, 3), (0.1, 1.0), p=0.5),
    )
    aug = torch.compile(aug, backend="eager")
    for batch in (2, 4):
        aug(images(batch))


def preprocess_eval():
    model = Preprocess().eval()
    model = torch.compile(model, backend="eager")
    for batch, size in ((2, 32), (3, 40)):
        with torch.no_grad():
            model(images(batch, size))


def warp_eval():
    warp = torch.compile(Warp(), backend="eager")
    for batch in (2, 3):
        warp(images(batch), torch.full((batch,), 30.0))


def ssim_train():
    net = nn.Conv2d(3, 3, 3, padding=1)
    loss_fn = SSIMLoss(5)

    @torch.compile(backend="eager")
    def step(x):
        return loss_fn(net(x), x)

    for batch in (2, 3):
        step(images(batch)).backward()


def canny_and_equalize_eval():
    canny = kornia.filters.Canny()
    compiled = torch.compile(canny, backend="eager")
    equalize = torch.compile(kornia.enhance.equalize, backend="eager")
    for batch in (2, 3):
        compiled(images(batch))
        equalize(images(batch))


PHASES = [augmentation_train, preprocess_eval, warp_eval, ssim_train, canny_and_equalize_eval]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
