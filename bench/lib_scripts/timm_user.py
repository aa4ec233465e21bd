"""A user's script for timm: three small random-init image models built by their constructor functions,
each compiled whole for a training step and for evaluation (bench/lib_models.py runs the phases under
Dynamo and lints this file alone with --follow-libraries)."""

import torch
import torch.nn.functional as F
from timm.models.convnext import convnext_atto
from timm.models.resnet import resnet10t
from timm.models.vision_transformer import vit_tiny_patch16_224


def images(size: int, side: int = 32) -> torch.Tensor:
    g = torch.Generator().manual_seed(size * 10 + side)
    return torch.randn(size, 3, side, side, generator=g)


def labels(size: int) -> torch.Tensor:
    return torch.zeros(size, dtype=torch.long)


def resnet_train():
    model = resnet10t(num_classes=4)
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for size in (2, 3):
        F.cross_entropy(step(images(size)), labels(size)).backward()
        opt.step()
        opt.zero_grad()


def resnet_eval():
    model = torch.compile(resnet10t(num_classes=4).eval(), backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(images(size))


def vit_train():
    model = vit_tiny_patch16_224(img_size=32, patch_size=8, num_classes=4, depth=2)
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for size in (2, 3):
        F.cross_entropy(step(images(size)), labels(size)).backward()
        opt.step()
        opt.zero_grad()


def vit_eval():
    model = torch.compile(vit_tiny_patch16_224(img_size=32, patch_size=8, num_classes=4, depth=2).eval(),
                          backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(images(size))


def convnext_train():
    model = convnext_atto(num_classes=4)
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for size in (2, 3):
        F.cross_entropy(step(images(size)), labels(size)).backward()
        opt.step()
        opt.zero_grad()


def convnext_eval():
    model = torch.compile(convnext_atto(num_classes=4).eval(), backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(images(size))


PHASES = [resnet_train, resnet_eval, vit_train, vit_eval, convnext_train, convnext_eval]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
