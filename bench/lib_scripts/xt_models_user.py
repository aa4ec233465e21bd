"""A user's script for x-transformers: three tiny models (a decoder language model, an encoder
classifier with a padding mask, a ViT), each compiled whole for a training step and for evaluation
(bench/lib_models.py runs the phases under Dynamo and lints this file alone with --follow-libraries)."""

import torch
import torch.nn.functional as F
from x_transformers import Decoder, Encoder, TransformerWrapper, ViTransformerWrapper


def tokens(size: int, length: int = 12) -> torch.Tensor:
    g = torch.Generator().manual_seed(size * 100 + length)
    return torch.randint(0, 256, (size, length), generator=g)


def images(size: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(size)
    return torch.randn(size, 3, 32, 32, generator=g)


def decoder() -> TransformerWrapper:
    return TransformerWrapper(num_tokens=256, max_seq_len=64,
                              attn_layers=Decoder(dim=32, depth=2, heads=2, rotary_pos_emb=True))


def decoder_train():
    model = decoder()
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for size in (2, 3):
        ids = tokens(size)
        logits = step(ids[:, :-1])
        F.cross_entropy(logits.transpose(1, 2), ids[:, 1:]).backward()
        opt.step()
        opt.zero_grad()


def decoder_eval():
    model = torch.compile(decoder().eval(), backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(tokens(size))


def encoder() -> TransformerWrapper:
    return TransformerWrapper(num_tokens=256, max_seq_len=64, logits_dim=3, use_cls_token=True,
                              attn_layers=Encoder(dim=32, depth=2, heads=2))


def encoder_train():
    model = encoder()
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for size in (2, 3):
        ids = tokens(size)
        mask = torch.ones_like(ids, dtype=torch.bool)
        F.cross_entropy(step(ids, mask=mask), torch.zeros(size, dtype=torch.long)).backward()
        opt.step()
        opt.zero_grad()


def encoder_eval():
    model = torch.compile(encoder().eval(), backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            ids = tokens(size)
            model(ids, mask=torch.ones_like(ids, dtype=torch.bool))


def vit() -> ViTransformerWrapper:
    return ViTransformerWrapper(image_size=32, patch_size=8, num_classes=4,
                                attn_layers=Encoder(dim=32, depth=2, heads=2))


def vit_train():
    model = vit()
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for size in (2, 3):
        F.cross_entropy(step(images(size)), torch.zeros(size, dtype=torch.long)).backward()
        opt.step()
        opt.zero_grad()


def vit_eval():
    model = torch.compile(vit().eval(), backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(images(size))


PHASES = [decoder_train, decoder_eval, encoder_train, encoder_eval, vit_train, vit_eval]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
