"""A user's script for MONAI: medical-imaging networks, losses and inferers compiled as MONAI's
tutorials use them (``model = UNet(...).to(device)``, ``torch.compile(model)``, a compiled training step
with ``DiceLoss``, ``sliding_window_inference`` over a compiled network, ``DiceMetric`` after it)
(bench/lib_eval.py runs the phases under Dynamo and lints this file).  A held-out library (issue 12):
tclint was measured on it before any change."""

import torch
from monai.inferers import sliding_window_inference
from monai.losses import DiceCELoss, DiceLoss, FocalLoss
from monai.metrics import DiceMetric, compute_dice
from monai.networks.nets import UNETR, AttentionUnet, BasicUNet, DynUNet, SegResNet, SwinUNETR, UNet, ViT
from torch import nn


def volume(n: int, size: int = 16, channels: int = 1, dims: int = 2) -> torch.Tensor:
    g = torch.Generator().manual_seed(n)
    return torch.rand(n, channels, *([size] * dims), generator=g)


def labels(n: int, size: int = 16, classes: int = 2, dims: int = 2) -> torch.Tensor:
    g = torch.Generator().manual_seed(n + 1)
    return torch.randint(0, classes, (n, 1, *([size] * dims)), generator=g)


def unet_train():
    device = torch.device("cpu")
    model = UNet(
        spatial_dims=2, in_channels=1, out_channels=2, channels=(4, 8, 16), strides=(2, 2), num_res_units=1
    ).to(device)
    loss_function = DiceLoss(to_onehot_y=True, softmax=True)
    optimizer = torch.optim.Adam(model.parameters(), 1e-3)

    @torch.compile(backend="eager")
    def train_step(x, y):
        optimizer.zero_grad()
        loss = loss_function(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    for n in (2, 3):
        train_step(volume(n), labels(n))


def basic_unet_eval():
    model = BasicUNet(spatial_dims=2, in_channels=1, out_channels=3, features=(4, 4, 8, 8, 16, 4)).eval()
    model = torch.compile(model, backend="eager")
    with torch.no_grad():
        for n in (1, 2):
            model(volume(n, size=32))


def sliding_window_eval():
    model = SegResNet(
        spatial_dims=2, init_filters=8, in_channels=1, out_channels=2, blocks_down=(1, 1, 1), blocks_up=(1, 1)
    )
    model.eval()
    model = torch.compile(model, backend="eager")
    dice_metric = DiceMetric(include_background=False, reduction="mean")
    with torch.no_grad():
        for n in (1, 2):
            pred = sliding_window_inference(volume(n, size=24), (16, 16), 2, model, overlap=0.25)
            onehot = torch.nn.functional.one_hot(pred.argmax(1), 2).movedim(-1, 1)
            target = torch.nn.functional.one_hot(labels(n, size=24)[:, 0], 2).movedim(-1, 1)
            dice_metric(y_pred=onehot, y=target)
        dice_metric.aggregate()
        dice_metric.reset()


def compiled_inferer():
    model = AttentionUnet(spatial_dims=2, in_channels=1, out_channels=2, channels=(4, 8, 16), strides=(2, 2))
    model.eval()
    infer = torch.compile(
        lambda x: sliding_window_inference(x, roi_size=(16, 16), sw_batch_size=1, predictor=model),
        backend="eager",
    )
    with torch.no_grad():
        for n in (1, 2):
            infer(volume(n, size=20))


def swin_unetr_train():
    model = SwinUNETR(
        in_channels=1,
        out_channels=2,
        feature_size=12,
        depths=(1, 1, 1, 1),
        num_heads=(1, 1, 1, 1),
        spatial_dims=2,
    ).train()
    model = torch.compile(model, backend="eager")
    loss_function = DiceCELoss(to_onehot_y=True, softmax=True)
    for n in (1, 2):
        loss_function(model(volume(n, size=64)), labels(n, size=64)).backward()


def unetr_eval():
    model = UNETR(
        in_channels=1,
        out_channels=2,
        img_size=(16, 16, 16),
        feature_size=4,
        hidden_size=32,
        mlp_dim=64,
        num_heads=2,
        proj_type="conv",
        norm_name="instance",
    ).eval()
    model = torch.compile(model, backend="eager")
    with torch.no_grad():
        for n in (1, 2):
            model(volume(n, dims=3))


def vit_classify():
    net = ViT(
        in_channels=1,
        img_size=(16, 16),
        patch_size=(4, 4),
        hidden_size=32,
        mlp_dim=64,
        num_layers=2,
        num_heads=2,
        spatial_dims=2,
        classification=True,
        num_classes=3,
    )
    net.eval()
    net = torch.compile(net, backend="eager")
    with torch.no_grad():
        for n in (1, 2):
            net(volume(n))


class DeepSupervisionLoss(nn.Module):
    """What a user writes around DynUNet's deep supervision: the focal loss of every head's output."""

    def __init__(self) -> None:
        super().__init__()
        self.loss = FocalLoss(to_onehot_y=True, gamma=2.0)

    def forward(self, outputs: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        heads = torch.unbind(outputs, dim=1)
        return sum(self.loss(h, y) for h in heads) / len(heads)


def dynunet_deep_supervision():
    model = DynUNet(
        spatial_dims=2,
        in_channels=1,
        out_channels=2,
        kernel_size=[3, 3, 3],
        strides=[1, 2, 2],
        upsample_kernel_size=[2, 2],
        filters=[4, 8, 16],
        deep_supervision=True,
        deep_supr_num=1,
    ).train()
    model = torch.compile(model, backend="eager")
    criterion = torch.compile(DeepSupervisionLoss(), backend="eager")
    for n in (2, 3):
        criterion(model(volume(n)), labels(n)).backward()


def dice_score():
    score = torch.compile(compute_dice, backend="eager")
    for n in (2, 3):
        y = torch.nn.functional.one_hot(labels(n, classes=3)[:, 0], 3).movedim(-1, 1)
        pred = y.flip(-1)
        score(pred, y, include_background=True)


PHASES = [
    unet_train,
    basic_unet_eval,
    sliding_window_eval,
    compiled_inferer,
    swin_unetr_train,
    unetr_eval,
    vit_classify,
    dynunet_deep_supervision,
    dice_score,
]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
