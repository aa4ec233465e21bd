"""A user's script for Hugging Face transformers: seven tiny random-init models, each compiled whole
for a training step (labels given: the loss runs too) and for evaluation (bench/lib_models.py runs
the phases under Dynamo and lints this file alone with --follow-libraries)."""

import torch
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    CLIPConfig,
    CLIPModel,
    DetrConfig,
    DetrForObjectDetection,
    GPT2Config,
    GPT2LMHeadModel,
    ResNetConfig,
    T5Config,
    T5ForConditionalGeneration,
    ViTConfig,
    ViTForImageClassification,
    WhisperConfig,
    WhisperForConditionalGeneration,
)


def tokens(size: int, length: int = 12) -> torch.Tensor:
    g = torch.Generator().manual_seed(size * 100 + length)
    return torch.randint(3, 256, (size, length), generator=g)


def bert_config() -> BertConfig:
    return BertConfig(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=128, max_position_embeddings=64, num_labels=3, pad_token_id=0)


def bert_train():
    model = BertForSequenceClassification(bert_config())
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for size in (2, 3):
        ids = tokens(size)
        out = step(input_ids=ids, attention_mask=torch.ones_like(ids), labels=torch.zeros(size, dtype=torch.long))
        out.loss.backward()
        opt.step()
        opt.zero_grad()


def bert_eval():
    model = BertForSequenceClassification(bert_config()).eval()
    model = torch.compile(model, backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            ids = tokens(size)
            model(input_ids=ids, attention_mask=torch.ones_like(ids))


def gpt2_config() -> GPT2Config:
    return GPT2Config(vocab_size=256, n_positions=64, n_embd=64, n_layer=2, n_head=4, pad_token_id=0,
                      eos_token_id=1, bos_token_id=2)


def gpt2_train():
    model = GPT2LMHeadModel(gpt2_config())
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for size in (2, 3):
        ids = tokens(size)
        out = step(input_ids=ids, labels=ids)
        out.loss.backward()
        opt.step()
        opt.zero_grad()


def gpt2_eval():
    model = GPT2LMHeadModel(gpt2_config()).eval()
    model = torch.compile(model, backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(input_ids=tokens(size), use_cache=False)


def vit_config() -> ViTConfig:
    return ViTConfig(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, num_labels=3)


def images(size: int, side: int = 32) -> torch.Tensor:
    g = torch.Generator().manual_seed(size * 10 + side)
    return torch.randn(size, 3, side, side, generator=g)


def vit_train():
    model = ViTForImageClassification(vit_config())
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for size in (2, 3):
        out = step(pixel_values=images(size), labels=torch.zeros(size, dtype=torch.long))
        out.loss.backward()
        opt.step()
        opt.zero_grad()


def vit_eval():
    model = ViTForImageClassification(vit_config()).eval()
    model = torch.compile(model, backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(pixel_values=images(size))


def detr_config() -> DetrConfig:
    backbone = ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16, 16, 16], depths=[1, 1, 1, 1],
                            out_features=["stage4"])
    return DetrConfig(backbone_config=backbone, d_model=32, encoder_layers=1, decoder_layers=1,
                      encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
                      num_queries=5, num_labels=3)


def detr_targets(size: int) -> list[dict[str, torch.Tensor]]:
    return [{"class_labels": torch.tensor([1, 2]), "boxes": torch.tensor([[0.5, 0.5, 0.2, 0.2], [0.3, 0.3, 0.1, 0.2]])}
            for _ in range(size)]


def detr_train():
    model = DetrForObjectDetection(detr_config())
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for size in (1, 2):
        out = step(pixel_values=images(size, 64), labels=detr_targets(size))
        out.loss.backward()
        opt.step()
        opt.zero_grad()


def detr_eval():
    model = DetrForObjectDetection(detr_config()).eval()
    model = torch.compile(model, backend="eager")
    with torch.no_grad():
        for size in (1, 2):
            model(pixel_values=images(size, 64))


def t5_config() -> T5Config:
    return T5Config(vocab_size=256, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                    decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)


def t5_train():
    model = T5ForConditionalGeneration(t5_config())
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for size in (2, 3):
        out = step(input_ids=tokens(size), labels=tokens(size, 8))
        out.loss.backward()
        opt.step()
        opt.zero_grad()


def t5_eval():
    model = T5ForConditionalGeneration(t5_config()).eval()
    model = torch.compile(model, backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(input_ids=tokens(size), decoder_input_ids=tokens(size, 8), use_cache=False)


def clip_config() -> CLIPConfig:
    return CLIPConfig(
        text_config={"vocab_size": 256, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "max_position_embeddings": 32,
                     "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2},
        vision_config={"image_size": 32, "patch_size": 8, "hidden_size": 32, "intermediate_size": 64,
                       "num_hidden_layers": 2, "num_attention_heads": 4},
        projection_dim=16)


def clip_train():
    model = CLIPModel(clip_config())
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for size in (2, 3):
        out = step(input_ids=tokens(size), pixel_values=images(size), return_loss=True)
        out.loss.backward()
        opt.step()
        opt.zero_grad()


def clip_eval():
    model = CLIPModel(clip_config()).eval()
    model = torch.compile(model, backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(input_ids=tokens(size), pixel_values=images(size))


def whisper_config() -> WhisperConfig:
    return WhisperConfig(vocab_size=256, num_mel_bins=16, d_model=32, encoder_layers=2, decoder_layers=2,
                         encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                         decoder_ffn_dim=64, max_source_positions=16, max_target_positions=32,
                         pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)


def mel(size: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(size)
    return torch.randn(size, 16, 32, generator=g)


def whisper_train():
    model = WhisperForConditionalGeneration(whisper_config())
    model.train()
    step = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for size in (2, 3):
        out = step(input_features=mel(size), labels=tokens(size, 8))
        out.loss.backward()
        opt.step()
        opt.zero_grad()


def whisper_eval():
    model = WhisperForConditionalGeneration(whisper_config()).eval()
    model = torch.compile(model, backend="eager")
    with torch.no_grad():
        for size in (2, 3):
            model(input_features=mel(size), decoder_input_ids=tokens(size, 8), use_cache=False)


PHASES = [bert_train, bert_eval, gpt2_train, gpt2_eval, vit_train, vit_eval, detr_train, detr_eval,
          t5_train, t5_eval, clip_train, clip_eval, whisper_train, whisper_eval]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
