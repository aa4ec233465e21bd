"""A user's script for torchvision: three classifiers from torchvision.models, random init
(weights=None), each compiled whole for a training step and for evaluation (bench/lib_models.py runs the
phases under Dynamo and lints this file alone with --follow-libraries)."""

import torch
import torch.nn.functional as F
from torchvision.models import mobilenet_v3_small, resnet18, swin_t


def images(size: int, side: int = 64) -> torch.Tensor:
    g = torch.Generator().manual_seed(size * 10 + side)
    return torch.randn(size, 3, side, side, generator=g)


def labels(size: int) -> torch.Tensor:
    return torch.zeros(size, dtype=torch.long)


def resnet_train():
    model = resnet18(weights=None, num_classes=4)
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for size in (2, 3):
        F.cross_entropy(step(images(size)), labels(size)).backward()
        opt.step()
        opt.zero_grad()


def resnet_eval():
    model = torch.compile(resnet18(weights=None, num_classes=4).eval(), backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(images(size))


def mobilenet_train():
    model = mobilenet_v3_small(weights=None, num_classes=4)
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for size in (2, 3):
        F.cross_entropy(step(images(size)), labels(size)).backward()
        opt.step()
        opt.zero_grad()


def mobilenet_eval():
    model = torch.compile(mobilenet_v3_small(weights=None, num_classes=4).eval(), backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(images(size))


def swin_train():
    model = swin_t(weights=None, num_classes=4)
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for size in (2, 3):
        F.cross_entropy(step(images(size, 32)), labels(size)).backward()
        opt.step()
        opt.zero_grad()


def swin_eval():
    model = torch.compile(swin_t(weights=None, num_classes=4).eval(), backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(images(size, 32))


PHASES = [resnet_train, resnet_eval, mobilenet_train, mobilenet_eval, swin_train, swin_eval]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
