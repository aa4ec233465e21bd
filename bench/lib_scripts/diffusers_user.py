"""A user's script for diffusers: three tiny random-init models (a UNet, a VAE, a DiT), each compiled
whole for a training step (a denoising or reconstruction loss) and for evaluation (bench/lib_models.py
runs the phases under Dynamo and lints this file alone with --follow-libraries)."""

import torch
import torch.nn.functional as F
from diffusers import AutoencoderKL, DiTTransformer2DModel, UNet2DModel


def images(size: int, channels: int = 3, side: int = 16) -> torch.Tensor:
    g = torch.Generator().manual_seed(size * 10 + side)
    return torch.randn(size, channels, side, side, generator=g)


def timesteps(size: int) -> torch.Tensor:
    return torch.arange(size) * 10 + 1


def unet() -> UNet2DModel:
    return UNet2DModel(sample_size=16, in_channels=3, out_channels=3, layers_per_block=1,
                       block_out_channels=(16, 32), down_block_types=("DownBlock2D", "AttnDownBlock2D"),
                       up_block_types=("AttnUpBlock2D", "UpBlock2D"), norm_num_groups=8)


def unet_train():
    model = unet()
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for size in (2, 3):
        noise = images(size)
        pred = step(images(size) + noise, timesteps(size)).sample
        F.mse_loss(pred, noise).backward()
        opt.step()
        opt.zero_grad()


def unet_eval():
    model = torch.compile(unet().eval(), backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(images(size), timesteps(size))


def vae() -> AutoencoderKL:
    return AutoencoderKL(in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
                         up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"), block_out_channels=(16, 32),
                         latent_channels=4, norm_num_groups=8, sample_size=16)


def vae_train():
    model = vae()
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for size in (2, 3):
        x = images(size)
        F.mse_loss(step(x, sample_posterior=True).sample, x).backward()
        opt.step()
        opt.zero_grad()


def vae_eval():
    model = torch.compile(vae().eval(), backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(images(size))


def dit() -> DiTTransformer2DModel:
    return DiTTransformer2DModel(num_attention_heads=2, attention_head_dim=16, in_channels=4, out_channels=4,
                                 num_layers=2, sample_size=8, patch_size=2, num_embeds_ada_norm=10,
                                 norm_num_groups=8)


def dit_train():
    model = dit()
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for size in (2, 3):
        noise = images(size, channels=4, side=8)
        labels = torch.zeros(size, dtype=torch.long)
        pred = step(noise, timestep=timesteps(size), class_labels=labels).sample
        F.mse_loss(pred, noise).backward()
        opt.step()
        opt.zero_grad()


def dit_eval():
    model = torch.compile(dit().eval(), backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(images(size, channels=4, side=8), timestep=timesteps(size), class_labels=torch.zeros(size, dtype=torch.long))


PHASES = [unet_train, unet_eval, vae_train, vae_eval, dit_train, dit_eval]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
