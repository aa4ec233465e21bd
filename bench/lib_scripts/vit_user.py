"""A user's script for vit-pytorch (lucidrains): image classifiers from its README built tiny and
compiled as users do -- ViT and SimpleViT in eval, CaiT with layer dropout in a training step,
ATS-ViT (adaptive token sampling) and NaViT on images of different sizes (bench/lib_eval.py runs the phases under Dynamo and lints this file).

vit_pytorch/__init__.py imports its Dino module, which imports torchvision's transforms; torchvision's
wheels do not load next to the CPU build of torch here, so a stand-in ``torchvision`` module (never
called: no phase builds Dino) is put in ``sys.modules`` when the real one cannot be imported."""

import sys
import types

import torch

try:
    import torchvision  # noqa: F401
except Exception:  # only Dino uses it, for augmentations at construction time
    _tv = types.ModuleType("torchvision")
    _tv.transforms = types.ModuleType("torchvision.transforms")
    sys.modules["torchvision"] = _tv
    sys.modules["torchvision.transforms"] = _tv.transforms

from vit_pytorch import SimpleViT, ViT
from vit_pytorch.ats_vit import ViT as ATSViT
from vit_pytorch.cait import CaiT
from vit_pytorch.na_vit import NaViT


def images(batch: int, size: int = 32, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed + batch * 100 + size)
    return torch.rand(batch, 3, size, size, generator=g)


def vit_eval():
    model = ViT(image_size=32, patch_size=8, num_classes=10, dim=32, depth=2, heads=2, mlp_dim=64).eval()
    model = torch.compile(model, backend="eager")
    simple = torch.compile(SimpleViT(image_size=32, patch_size=8, num_classes=10, dim=32, depth=2, heads=2,
                                     mlp_dim=64).eval(), backend="eager")
    for batch in (2, 3):
        with torch.no_grad():
            model(images(batch))
            simple(images(batch))


def cait_train():
    model = CaiT(image_size=32, patch_size=8, num_classes=10, dim=32, depth=2, cls_depth=1, heads=2, mlp_dim=64,
                 dropout=0.1, emb_dropout=0.1, layer_dropout=0.05)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    @torch.compile(backend="eager")
    def step(x, y):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss

    for batch in (2, 3):
        step(images(batch), torch.arange(batch) % 10)
        opt.step()
        opt.zero_grad()


def ats_eval():
    model = ATSViT(image_size=32, patch_size=8, num_classes=10, dim=32, depth=2, max_tokens_per_depth=(12, 8),
                   heads=2, mlp_dim=64).eval()
    model = torch.compile(model, backend="eager")
    for batch in (2, 3):
        with torch.no_grad():
            model(images(batch))


def navit_eval():
    model = NaViT(image_size=32, patch_size=8, num_classes=10, dim=32, depth=2, heads=2, mlp_dim=64,
                  token_dropout_prob=0.1).eval()
    model = torch.compile(model, backend="eager")
    with torch.no_grad():
        model([[images(1, 32)[0], images(1, 16)[0]], [images(1, 24)[0]]])


PHASES = [vit_eval, cait_train, ats_eval, navit_eval]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
