"""A user's script for x-transformers: a tiny decoder LM, an encoder, a ViT and an encoder-decoder,
compiled as users do (bench/lib_eval.py runs the phases under Dynamo and lints this file)."""

import torch
from x_transformers import (
    AutoregressiveWrapper,
    Decoder,
    Encoder,
    TransformerWrapper,
    ViTransformerWrapper,
    XTransformer,
)


def tokens(batch: int, length: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed + 100 * batch + length)
    return torch.randint(0, 256, (batch, length), generator=g)


def decoder_lm_eval():
    lm = TransformerWrapper(num_tokens=256, max_seq_len=64,
                            attn_layers=Decoder(dim=32, depth=2, heads=2, rotary_pos_emb=True, ff_glu=True))
    lm = torch.compile(lm.eval(), backend="eager")
    for batch, length in ((2, 8), (3, 12)):
        with torch.no_grad():
            lm(tokens(batch, length))


def encoder_with_mask_eval():
    enc = TransformerWrapper(num_tokens=256, max_seq_len=64,
                             attn_layers=Encoder(dim=32, depth=2, heads=2, rel_pos_bias=True))
    enc.eval()
    enc = torch.compile(enc, backend="eager")
    for batch, length in ((2, 10), (3, 14)):
        mask = torch.ones(batch, length, dtype=torch.bool)
        mask[0, -3:] = False
        with torch.no_grad():
            enc(tokens(batch, length), mask=mask, return_embeddings=True)


def lm_train_step():
    model = AutoregressiveWrapper(TransformerWrapper(num_tokens=256, max_seq_len=64,
                                                     attn_layers=Decoder(dim=32, depth=2, heads=2, alibi_pos_bias=True)))
    step = torch.compile(model, backend="eager")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for batch, length in ((2, 17), (2, 25)):
        loss = step(tokens(batch, length))
        loss.backward()
        opt.step()
        opt.zero_grad()


def generate_with_compiled_net():
    wrapper = AutoregressiveWrapper(TransformerWrapper(num_tokens=256, max_seq_len=64,
                                                       attn_layers=Decoder(dim=32, depth=1, heads=2)))
    wrapper.eval()
    wrapper.net = torch.compile(wrapper.net, backend="eager")
    with torch.no_grad():
        wrapper.generate(tokens(2, 4), 4, cache_kv=False)


def vit_eval():
    vit = ViTransformerWrapper(image_size=32, patch_size=8, num_classes=10,
                               attn_layers=Encoder(dim=32, depth=2, heads=2))
    vit = torch.compile(vit.eval(), backend="eager")
    for batch in (2, 3):
        with torch.no_grad():
            vit(torch.randn(batch, 3, 32, 32))


def encoder_decoder_eval():
    model = XTransformer(dim=32, enc_num_tokens=256, enc_depth=1, enc_heads=2, enc_max_seq_len=32,
                         dec_num_tokens=256, dec_depth=1, dec_heads=2, dec_max_seq_len=32, tie_token_emb=True)
    model.eval()
    compiled = torch.compile(model, backend="eager")
    src, tgt = tokens(2, 10), tokens(2, 9, seed=1)
    src_mask = torch.ones_like(src).bool()
    with torch.no_grad():
        compiled(src, tgt, mask=src_mask)


PHASES = [decoder_lm_eval, encoder_with_mask_eval, lm_train_step, generate_with_compiled_net, vit_eval,
          encoder_decoder_eval]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
