"""tclint vs the real TorchDynamo on Hugging Face `transformers` models (dev tool, not run in CI).

One command (about 25 minutes for all 16 models on 2 cores the first time; the Dynamo truth is then
cached in /tmp/hf_eval/dynamic, keyed by torch/transformers versions and the scenario code above the
"static side" marker, so a re-run after a tclint change only re-lints: about 4 minutes for all):

    /tmp/hfvenv/bin/python bench/hf_eval.py                 # all models
    /tmp/hfvenv/bin/python bench/hf_eval.py --models llama,mixtral
    /tmp/hfvenv/bin/python bench/hf_eval.py --fresh         # re-measure Dynamo too

The venv (outside the repo; torch must stay the CPU 2.13.0 wheel):

    python3 -m venv /tmp/hfvenv
    /tmp/hfvenv/bin/pip install torch==2.13.0 transformers   # measured with transformers 5.24.0
    /tmp/hfvenv/bin/pip install -e /work/main                # tclint (libcst only)

Which tclint is measured: the source tree given by ``--tclint-root`` (default: the repository
this file is in, working tree as it is), imported through a ``tclint`` shim on PYTHONPATH so an
editable install elsewhere does not matter.

What it does, per model (tiny random-init model built from its Config, never downloaded):

1. Dynamic truth, in a subprocess: realistic call sequences ("phases": eval forward with varying
   batch/length and padding, a training step with labels and backward, ``generate`` with the
   forward compiled, HF's own static-cache auto-compile in ``generate``) under
   ``torch.compile(..., backend="eager")``.  Every ``dynamo_graph_break_reason`` artifact of the
   structured trace (``torch.__trace``), as in tests/helpers/dynamo_harness.py, attributed to the
   innermost traceback frame inside the installed ``transformers`` package; frame compiles per
   code object from ``get_compilation_metrics()``, per phase (Dynamo is reset between phases).
   Also recorded: every (file, line) Dynamo traced symbolically (a hook on
   ``InstructionTranslatorBase.starts_line``) and every line the same phases execute eagerly
   (``sys.settrace`` on an uncompiled copy), to tell "not a break" from "never executed".
2. tclint, statically, on the transformers files a modeling file can reach (the package's
   top-level modules, utils/, integrations/, generation/, loss/, the model's folder and the model
   folders it imports), with the compiled root configured as a user would:
   ``--assume-compiled "transformers.models.llama.modeling_llama:LlamaForCausalLM.forward"``.
   One ``--min-confidence low`` JSON run; "default" is its medium/high subset.
3. Scores.  A graph-break *site* is a statement: both tclint's row and Dynamo's line are mapped to
   the innermost statement (the header of a compound statement) that contains them, keyed by
   (file, first line).  A static site is
     TP          Dynamo broke there;
     FP          Dynamo traced the function containing it and did not break there ("fp-traced":
                 the statement itself was traced; "fp-compile-dead": the statement runs eagerly
                 but not under Dynamo, e.g. behind ``is_torchdynamo_compiling()``);
     eager-only  its function ran only eagerly, never under Dynamo (reported; counted as FP in the
                 "strict" precision only);
     unexecuted  the statement never ran at all (not counted).
   Recompile hazards: a function is hazardous when one phase compiles its code object >= 4
   times (decorator wrapper frames such as ``deprecate_kwarg``'s ``wrapped_func`` are attributed
   to the compiled root); tclint predicts one with a TC2xx warning/error inside the function.
   Only functions Dynamo compiled as frames (roots and functions entered after a graph break)
   can be hazardous; TC2xx findings elsewhere are listed as "not a frame".

Output: the summary table on stdout, every site in ``--json`` (default /tmp/hf_eval/results.json).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dynamo_truth import (
    LEVELS,
    BreakTrace,
    SourceIndex,
    executed,
    gb_registry,
    parse_break,
    record_eager_lines,
    record_traced_lines,
    score_breaks,
    source_index,
    static_break_sites,
    tclint_shim,
)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_OUT = "/tmp/hf_eval/results.json"
CACHE_DIR = "/tmp/hf_eval/dynamic"
HAZARD_COMPILES = 4

# --------------------------------------------------------------------------------------------
# models: tiny configs, the compiled root, and the phases to run
# --------------------------------------------------------------------------------------------


@dataclass
class ModelSpec:
    name: str
    folder: str  # transformers/models/<folder>
    config_cls: str
    model_cls: str
    config: dict[str, Any]
    kind: str  # "lm" | "seq2seq" | "encoder" | "speech_seq2seq" | "ctc" | "vision" | "clip"
    roots: list[str] = field(default_factory=list)  # --assume-compiled patterns
    static_generate: bool = True  # HF's static-cache auto-compile path
    extra: dict[str, Any] = field(default_factory=dict)


def _lm(name, folder, config_cls, model_cls, config, **kw):
    module = f"transformers.models.{folder}.modeling_{folder}"
    return ModelSpec(
        name, folder, config_cls, model_cls, config, "lm", [f"{module}:{model_cls}.forward"], **kw
    )


_DEC = dict(
    vocab_size=256,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=128,
    pad_token_id=0,
    eos_token_id=1,
    bos_token_id=2,
)

MODELS: dict[str, ModelSpec] = {
    s.name: s
    for s in [
        _lm("llama", "llama", "LlamaConfig", "LlamaForCausalLM", _DEC),
        _lm("mistral", "mistral", "MistralConfig", "MistralForCausalLM", {**_DEC, "sliding_window": 8}),
        _lm(
            "mixtral",
            "mixtral",
            "MixtralConfig",
            "MixtralForCausalLM",
            {
                **_DEC,
                "num_local_experts": 4,
                "num_experts_per_tok": 2,
                "sliding_window": None,
                "output_router_logits": True,
            },
        ),
        _lm(
            "qwen2_moe",
            "qwen2_moe",
            "Qwen2MoeConfig",
            "Qwen2MoeForCausalLM",
            {
                **_DEC,
                "moe_intermediate_size": 32,
                "shared_expert_intermediate_size": 64,
                "num_experts": 4,
                "num_experts_per_tok": 2,
                "decoder_sparse_step": 1,
                "output_router_logits": True,
            },
        ),
        _lm(
            "gpt2",
            "gpt2",
            "GPT2Config",
            "GPT2LMHeadModel",
            dict(
                vocab_size=256,
                n_positions=128,
                n_embd=64,
                n_layer=2,
                n_head=4,
                pad_token_id=0,
                eos_token_id=1,
                bos_token_id=2,
            ),
        ),
        _lm(
            "gpt_neox",
            "gpt_neox",
            "GPTNeoXConfig",
            "GPTNeoXForCausalLM",
            dict(
                vocab_size=256,
                hidden_size=64,
                num_hidden_layers=2,
                num_attention_heads=4,
                intermediate_size=128,
                max_position_embeddings=128,
                pad_token_id=0,
                eos_token_id=1,
                bos_token_id=2,
            ),
        ),
        _lm(
            "phi",
            "phi",
            "PhiConfig",
            "PhiForCausalLM",
            dict(
                vocab_size=256,
                hidden_size=64,
                intermediate_size=128,
                num_hidden_layers=2,
                num_attention_heads=4,
                max_position_embeddings=128,
                pad_token_id=0,
                eos_token_id=1,
                bos_token_id=2,
            ),
        ),
        _lm(
            "falcon",
            "falcon",
            "FalconConfig",
            "FalconForCausalLM",
            dict(
                vocab_size=256,
                hidden_size=64,
                num_hidden_layers=2,
                num_attention_heads=4,
                pad_token_id=0,
                eos_token_id=1,
                bos_token_id=2,
            ),
        ),
        _lm(
            "mamba",
            "mamba",
            "MambaConfig",
            "MambaForCausalLM",
            dict(
                vocab_size=256,
                hidden_size=64,
                state_size=8,
                num_hidden_layers=2,
                expand=2,
                conv_kernel=4,
                pad_token_id=0,
                eos_token_id=1,
                bos_token_id=2,
            ),
            static_generate=False,
        ),
        ModelSpec(
            "bert",
            "bert",
            "BertConfig",
            "BertForSequenceClassification",
            dict(
                vocab_size=256,
                hidden_size=64,
                num_hidden_layers=2,
                num_attention_heads=4,
                intermediate_size=128,
                max_position_embeddings=128,
                num_labels=3,
                pad_token_id=0,
            ),
            "encoder",
            ["transformers.models.bert.modeling_bert:BertForSequenceClassification.forward"],
        ),
        ModelSpec(
            "t5",
            "t5",
            "T5Config",
            "T5ForConditionalGeneration",
            dict(
                vocab_size=256,
                d_model=64,
                d_kv=16,
                d_ff=128,
                num_layers=2,
                num_decoder_layers=2,
                num_heads=4,
                decoder_start_token_id=0,
                pad_token_id=0,
                eos_token_id=1,
            ),
            "seq2seq",
            ["transformers.models.t5.modeling_t5:T5ForConditionalGeneration.forward"],
        ),
        ModelSpec(
            "bart",
            "bart",
            "BartConfig",
            "BartForConditionalGeneration",
            dict(
                vocab_size=256,
                d_model=64,
                encoder_layers=2,
                decoder_layers=2,
                encoder_attention_heads=4,
                decoder_attention_heads=4,
                encoder_ffn_dim=128,
                decoder_ffn_dim=128,
                max_position_embeddings=128,
                pad_token_id=1,
                bos_token_id=0,
                eos_token_id=2,
                decoder_start_token_id=2,
                forced_eos_token_id=2,
            ),
            "seq2seq",
            ["transformers.models.bart.modeling_bart:BartForConditionalGeneration.forward"],
        ),
        ModelSpec(
            "whisper",
            "whisper",
            "WhisperConfig",
            "WhisperForConditionalGeneration",
            dict(
                vocab_size=256,
                num_mel_bins=16,
                encoder_layers=2,
                decoder_layers=2,
                d_model=64,
                encoder_attention_heads=4,
                decoder_attention_heads=4,
                encoder_ffn_dim=128,
                decoder_ffn_dim=128,
                max_source_positions=32,
                max_target_positions=64,
                pad_token_id=0,
                bos_token_id=1,
                eos_token_id=2,
                decoder_start_token_id=3,
                suppress_tokens=None,
                begin_suppress_tokens=None,
            ),
            "speech_seq2seq",
            ["transformers.models.whisper.modeling_whisper:WhisperForConditionalGeneration.forward"],
        ),
        ModelSpec(
            "wav2vec2",
            "wav2vec2",
            "Wav2Vec2Config",
            "Wav2Vec2ForCTC",
            dict(
                vocab_size=32,
                hidden_size=64,
                num_hidden_layers=2,
                num_attention_heads=4,
                intermediate_size=128,
                conv_dim=(32, 32, 32),
                conv_stride=(5, 2, 2),
                conv_kernel=(10, 3, 3),
                num_conv_pos_embeddings=16,
                num_conv_pos_embedding_groups=4,
                mask_time_prob=0.2,
                mask_time_length=2,
                pad_token_id=0,
                ctc_loss_reduction="mean",
            ),
            "ctc",
            ["transformers.models.wav2vec2.modeling_wav2vec2:Wav2Vec2ForCTC.forward"],
        ),
        ModelSpec(
            "vit",
            "vit",
            "ViTConfig",
            "ViTForImageClassification",
            dict(
                image_size=32,
                patch_size=8,
                hidden_size=64,
                num_hidden_layers=2,
                num_attention_heads=4,
                intermediate_size=128,
                num_labels=3,
            ),
            "vision",
            ["transformers.models.vit.modeling_vit:ViTForImageClassification.forward"],
        ),
        ModelSpec(
            "clip",
            "clip",
            "CLIPConfig",
            "CLIPModel",
            dict(
                text_config=dict(
                    vocab_size=256,
                    hidden_size=64,
                    intermediate_size=128,
                    num_hidden_layers=2,
                    num_attention_heads=4,
                    max_position_embeddings=32,
                    pad_token_id=0,
                    bos_token_id=1,
                    eos_token_id=2,
                ),
                vision_config=dict(
                    image_size=32,
                    patch_size=8,
                    hidden_size=64,
                    intermediate_size=128,
                    num_hidden_layers=2,
                    num_attention_heads=4,
                ),
                projection_dim=32,
            ),
            "clip",
            ["transformers.models.clip.modeling_clip:CLIPModel.forward"],
        ),
    ]
}

# --------------------------------------------------------------------------------------------
# dynamic side (runs inside the hf venv, one subprocess per model)
# --------------------------------------------------------------------------------------------


def _tf_dir() -> str:
    import transformers

    return os.path.dirname(os.path.abspath(transformers.__file__))


def _ids(torch, batch, length, vocab, left_pad=True):
    g = torch.Generator().manual_seed(batch * 1000 + length)
    ids = torch.randint(3, vocab, (batch, length), generator=g)
    mask = torch.ones(batch, length, dtype=torch.long)
    if batch > 1:  # the first row is padded by 2 (left for decoders/generation, right for encoders)
        if left_pad:
            ids[0, :2] = 0
            mask[0, :2] = 0
        else:
            ids[0, -2:] = 0
            mask[0, -2:] = 0
    return ids, mask


def build_phases(spec: ModelSpec, model, compile_fn: Callable, torch) -> list[tuple[str, Callable[[], None]]]:  # noqa: C901 - long, not split yet (issue 16)
    """The realistic call sequences of one model: [(phase name, run)], each run does several calls."""
    import transformers

    cfg = model.config
    vocab = getattr(cfg, "vocab_size", None) or getattr(getattr(cfg, "text_config", None), "vocab_size", 256)
    phases: list[tuple[str, Callable[[], None]]] = []

    def fwd_calls(make, shapes, train, extra=None, checkpointing=False):
        def run():
            model.train(train)
            if checkpointing:
                model.gradient_checkpointing_enable()
            cm = compile_fn(model)
            for shape in shapes:
                kwargs = {**make(*shape), **(extra or {})}
                if train:
                    out = cm(**kwargs)
                    out.loss.backward()
                    model.zero_grad(set_to_none=True)
                else:
                    with torch.no_grad():
                        cm(**kwargs)
            if checkpointing:
                model.gradient_checkpointing_disable()
            model.eval()

        return run

    outputs = dict(output_attentions=True, output_hidden_states=True)

    def gen_calls(make, prompts, static=False):
        def run():
            model.eval()
            original = model.forward
            if not static:
                model.forward = compile_fn(model.forward)
            try:
                for shape in prompts:
                    kwargs = make(*shape)
                    extra: dict[str, Any] = dict(max_new_tokens=5, do_sample=False)
                    if getattr(cfg, "output_router_logits", False):
                        # MoE configs set for training: generate with router logits fails even eagerly
                        # (load_balancing_loss_func with a left-padded mask and a cache)
                        extra["output_router_logits"] = False
                    if static:
                        extra.update(
                            cache_implementation="static",
                            compile_config=_compile_config(compile_fn),
                        )
                    with torch.no_grad():
                        model.generate(**kwargs, **extra)
            finally:
                model.forward = original
                for attr in ("_compiled_call", "_last_compile_config"):
                    if attr in model.__dict__:
                        del model.__dict__[attr]

        return run

    if spec.kind == "lm":

        def lm_inputs(b, n, labels=False):
            ids, mask = _ids(torch, b, n, vocab, left_pad=not labels)
            kw = dict(input_ids=ids, attention_mask=mask)
            if labels:
                lab = ids.clone()
                lab[mask == 0] = -100
                kw["labels"] = lab
            return kw

        phases.append(
            ("eval_forward", fwd_calls(lm_inputs, [(2, 8), (2, 11), (3, 14), (1, 6), (4, 9)], False))
        )
        phases.append(
            (
                "train_step",
                fwd_calls(lambda b, n: lm_inputs(b, n, True), [(2, 8), (2, 12), (3, 10), (2, 16)], True),
            )
        )
        phases.append(("eval_outputs", fwd_calls(lm_inputs, [(2, 8), (3, 10)], False, outputs)))
        phases.append(
            (
                "train_checkpointing",
                fwd_calls(lambda b, n: lm_inputs(b, n, True), [(2, 8), (3, 10)], True, checkpointing=True),
            )
        )
        phases.append(("generate", gen_calls(lm_inputs, [(1, 5), (2, 7), (3, 9)])))
        if spec.static_generate:
            phases.append(("generate_static", gen_calls(lm_inputs, [(1, 5), (2, 7)], static=True)))
    elif spec.kind == "encoder":

        def enc_inputs(b, n, labels=False):
            ids, mask = _ids(torch, b, n, vocab, left_pad=False)
            kw = dict(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids))
            if labels:
                kw["labels"] = torch.arange(b) % cfg.num_labels
            return kw

        phases.append(
            ("eval_forward", fwd_calls(enc_inputs, [(2, 8), (2, 11), (3, 14), (1, 6), (4, 9)], False))
        )
        phases.append(
            (
                "train_step",
                fwd_calls(lambda b, n: enc_inputs(b, n, True), [(2, 8), (2, 12), (3, 10), (2, 16)], True),
            )
        )
        phases.append(("eval_outputs", fwd_calls(enc_inputs, [(2, 8), (3, 10)], False, outputs)))
        phases.append(
            (
                "train_checkpointing",
                fwd_calls(lambda b, n: enc_inputs(b, n, True), [(2, 8), (3, 10)], True, checkpointing=True),
            )
        )
    elif spec.kind == "seq2seq":

        def s2s_inputs(b, n, labels=False, gen=False):
            ids, mask = _ids(torch, b, n, vocab, left_pad=False)
            kw = dict(input_ids=ids, attention_mask=mask)
            if gen:
                return kw
            dec, _ = _ids(torch, b, max(2, n // 2), vocab)
            if labels:
                kw["labels"] = dec
            else:
                kw["decoder_input_ids"] = dec
            return kw

        phases.append(
            ("eval_forward", fwd_calls(s2s_inputs, [(2, 8), (2, 11), (3, 14), (1, 6), (4, 9)], False))
        )
        phases.append(
            (
                "train_step",
                fwd_calls(lambda b, n: s2s_inputs(b, n, True), [(2, 8), (2, 12), (3, 10), (2, 16)], True),
            )
        )
        phases.append(("eval_outputs", fwd_calls(s2s_inputs, [(2, 8), (3, 10)], False, outputs)))
        phases.append(
            (
                "train_checkpointing",
                fwd_calls(lambda b, n: s2s_inputs(b, n, True), [(2, 8), (3, 10)], True, checkpointing=True),
            )
        )
        phases.append(
            ("generate", gen_calls(lambda b, n: s2s_inputs(b, n, gen=True), [(1, 5), (2, 7), (3, 9)]))
        )
        if spec.static_generate:
            phases.append(
                (
                    "generate_static",
                    gen_calls(lambda b, n: s2s_inputs(b, n, gen=True), [(1, 5), (2, 7)], static=True),
                )
            )
    elif spec.kind == "speech_seq2seq":
        frames = 2 * cfg.max_source_positions

        def sp_inputs(b, n, labels=False, gen=False):
            g = torch.Generator().manual_seed(b * 100 + n)
            kw = dict(input_features=torch.randn(b, cfg.num_mel_bins, frames, generator=g))
            if gen:
                return kw
            dec, _ = _ids(torch, b, n, vocab)
            if labels:
                kw["labels"] = dec
            else:
                kw["decoder_input_ids"] = dec
            return kw

        phases.append(("eval_forward", fwd_calls(sp_inputs, [(2, 4), (2, 7), (3, 9), (1, 3), (4, 6)], False)))
        phases.append(
            (
                "train_step",
                fwd_calls(lambda b, n: sp_inputs(b, n, True), [(2, 4), (2, 8), (3, 6), (2, 10)], True),
            )
        )
        phases.append(("eval_outputs", fwd_calls(sp_inputs, [(2, 4), (3, 6)], False, outputs)))
        phases.append(
            (
                "train_checkpointing",
                fwd_calls(lambda b, n: sp_inputs(b, n, True), [(2, 4), (3, 6)], True, checkpointing=True),
            )
        )
        phases.append(
            ("generate", gen_calls(lambda b, n: sp_inputs(b, n, gen=True), [(1, 0), (2, 0), (3, 0)]))
        )
    elif spec.kind == "ctc":

        def ctc_inputs(b, n, labels=False):
            g = torch.Generator().manual_seed(b * 100 + n)
            x = torch.randn(b, n, generator=g)
            mask = torch.ones(b, n, dtype=torch.long)
            if b > 1:
                mask[0, -n // 4 :] = 0
                x[0, -n // 4 :] = 0
            kw = dict(input_values=x, attention_mask=mask)
            if labels:
                lab = torch.randint(3, cfg.vocab_size, (b, 5), generator=g)
                lab[0, -1] = -100
                kw["labels"] = lab
            return kw

        phases.append(
            (
                "eval_forward",
                fwd_calls(ctc_inputs, [(2, 1600), (2, 2000), (3, 2400), (1, 1200), (4, 1800)], False),
            )
        )
        phases.append(
            (
                "train_step",
                fwd_calls(
                    lambda b, n: ctc_inputs(b, n, True), [(2, 1600), (2, 2000), (3, 1800), (2, 2400)], True
                ),
            )
        )
        phases.append(("eval_outputs", fwd_calls(ctc_inputs, [(2, 1600), (3, 2000)], False, outputs)))
        phases.append(
            (
                "train_checkpointing",
                fwd_calls(
                    lambda b, n: ctc_inputs(b, n, True), [(2, 1600), (3, 2000)], True, checkpointing=True
                ),
            )
        )
    elif spec.kind == "vision":

        def vis_inputs(b, size, labels=False):
            g = torch.Generator().manual_seed(b * 100 + size)
            kw = dict(pixel_values=torch.randn(b, 3, size, size, generator=g))
            if size != cfg.image_size:
                kw["interpolate_pos_encoding"] = True
            if labels:
                kw["labels"] = torch.arange(b) % cfg.num_labels
            return kw

        phases.append(
            ("eval_forward", fwd_calls(vis_inputs, [(2, 32), (3, 32), (1, 32), (4, 32), (2, 48)], False))
        )
        phases.append(
            (
                "train_step",
                fwd_calls(lambda b, s: vis_inputs(b, s, True), [(2, 32), (3, 32), (4, 32), (2, 32)], True),
            )
        )
        phases.append(("eval_outputs", fwd_calls(vis_inputs, [(2, 32), (3, 32)], False, outputs)))
        phases.append(
            (
                "train_checkpointing",
                fwd_calls(lambda b, s: vis_inputs(b, s, True), [(2, 32), (3, 32)], True, checkpointing=True),
            )
        )
    elif spec.kind == "clip":
        tv = cfg.text_config.vocab_size
        isz = cfg.vision_config.image_size

        def clip_inputs(b, n, loss=False):
            ids, mask = _ids(torch, b, n, tv, left_pad=False)
            ids[:, -1] = cfg.text_config.eos_token_id
            g = torch.Generator().manual_seed(b * 100 + n)
            return dict(
                input_ids=ids,
                attention_mask=mask,
                pixel_values=torch.randn(b, 3, isz, isz, generator=g),
                return_loss=loss,
            )

        phases.append(
            ("eval_forward", fwd_calls(clip_inputs, [(2, 8), (2, 11), (3, 14), (1, 6), (4, 9)], False))
        )
        phases.append(
            (
                "train_step",
                fwd_calls(lambda b, n: clip_inputs(b, n, True), [(2, 8), (2, 12), (3, 10), (2, 16)], True),
            )
        )
        phases.append(("eval_outputs", fwd_calls(clip_inputs, [(2, 8), (3, 10)], False, outputs)))
        phases.append(
            (
                "train_checkpointing",
                fwd_calls(lambda b, n: clip_inputs(b, n, True), [(2, 8), (3, 10)], True, checkpointing=True),
            )
        )
    else:
        raise ValueError(spec.kind)
    del transformers
    return phases


def _compile_config(compile_fn):
    from transformers import CompileConfig

    cc = CompileConfig(backend="eager", fullgraph=False, dynamic=None)
    cc.mode = None
    cc._compile_all_devices = compile_fn is not _identity  # eager coverage: no compilation at all
    return cc


def _identity(m):
    return m


def build_model(spec: ModelSpec, torch):
    import transformers

    torch.manual_seed(0)
    config = getattr(transformers, spec.config_cls)(**spec.config)
    if hasattr(config, "_attn_implementation"):
        pass
    model = getattr(transformers, spec.model_cls)(config)
    model.eval()
    return model


def dynamic_one(name: str) -> dict[str, Any]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import warnings

    warnings.filterwarnings("ignore")
    import torch
    import torch._dynamo
    import transformers
    from torch._dynamo.utils import clear_compilation_metrics, counters, get_compilation_metrics

    transformers.logging.set_verbosity_error()
    torch.set_num_threads(1)
    with contextlib.suppress(Exception):
        torch._dynamo.utils.set_compilation_metrics_limit(100000)
    gb_by_type = gb_registry()
    tf = _tf_dir()
    base = os.path.dirname(tf)
    spec = MODELS[name]

    def compile_fn(m):
        return torch.compile(m, backend="eager")

    result: dict[str, Any] = {
        "model": name,
        "phases": {},
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }
    traced: set[tuple[str, int]] = set()
    model = build_model(spec, torch)
    for phase, run in build_phases(spec, model, compile_fn, torch):
        torch._dynamo.reset()
        counters.clear()
        clear_compilation_metrics()
        t0 = time.time()
        error = None
        with BreakTrace() as handler, record_traced_lines([tf], traced):
            try:
                run()
            except Exception as exc:  # a failing phase is a result
                error = f"{type(exc).__name__}: {exc}"[:2000] + "\n" + "".join(traceback.format_exc()[-3000:])
        breaks = [parse_break(p, [tf], base, gb_by_type) for p in handler.payloads]
        frames: dict[str, dict[str, Any]] = {}
        for m in get_compilation_metrics():
            fn = os.path.abspath(m.co_filename or "")
            key = f"{os.path.relpath(fn, base) if fn.startswith(tf) else fn}:{m.co_firstlineno}:{m.co_name}"
            rec = frames.setdefault(key, {"compiles": 0, "reasons": [], "fail": []})
            rec["compiles"] += 1
            if m.recompile_reason:
                rec["reasons"].append(m.recompile_reason.splitlines()[0][:300])
            if m.fail_type:
                rec["fail"].append(f"{m.fail_type}: {(m.fail_reason or '')[:200]}")
        limit_hits = sum(v for k, v in counters["unimplemented"].items() if "recompile limit" in k.lower())
        result["phases"][phase] = {
            "seconds": round(time.time() - t0, 1),
            "error": error,
            "breaks": breaks,
            "frames": frames,
            "limit_hits": limit_hits,
        }
    torch._dynamo.reset()
    # eager coverage: the same phases, uncompiled, on a fresh copy of the model
    eager: set[tuple[str, int]] = set()
    model = build_model(spec, torch)
    for phase, run in build_phases(spec, model, _identity, torch):
        with record_eager_lines([tf], eager):
            try:
                run()
            except Exception as exc:
                result["phases"].setdefault(phase, {})["eager_error"] = f"{type(exc).__name__}: {exc}"[:500]
    result["traced"] = sorted([os.path.relpath(f, base), ln] for f, ln in traced)
    result["eager"] = sorted([os.path.relpath(f, base), ln] for f, ln in eager)
    return result


# --------------------------------------------------------------------------------------------
# static side
# --------------------------------------------------------------------------------------------


def transformers_dir(python: str) -> str:
    out = subprocess.run(
        [python, "-c", "import transformers, os; print(os.path.dirname(transformers.__file__))"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    return out.stdout.strip().splitlines()[-1]


def lint_paths(tf: str, spec: ModelSpec) -> list[str]:
    """The files a modeling file can reach: package top level, shared folders, the model's folder
    and every model folder it imports (transitively)."""
    paths = sorted(os.path.join(tf, f) for f in os.listdir(tf) if f.endswith(".py"))
    for d in ("utils", "integrations", "generation", "loss"):
        paths.append(os.path.join(tf, d))
    paths.append(os.path.join(tf, "models", "__init__.py"))
    seen: set[str] = set()
    todo = [spec.folder]
    pat = re.compile(r"from \.\.(\w+)(?:\.| import)")
    while todo:
        folder = todo.pop()
        if folder in seen or not os.path.isdir(os.path.join(tf, "models", folder)):
            continue
        seen.add(folder)
        for f in os.listdir(os.path.join(tf, "models", folder)):
            if f.startswith("modeling_") and f.endswith(".py"):
                with open(os.path.join(tf, "models", folder, f)) as fh:
                    todo.extend(pat.findall(fh.read()))
    paths.extend(os.path.join(tf, "models", f) for f in sorted(seen))
    return paths


def run_tclint(python: str, tclint_root: str, tf: str, spec: ModelSpec) -> dict[str, Any]:
    out_json = os.path.join(tempfile.gettempdir(), f"hf_eval_{spec.name}.json")
    cmd = [
        python,
        "-m",
        "tclint.rules",
        "check",
        *lint_paths(tf, spec),
        "--isolated",
        "--no-cache",
        "--output-format",
        "json",
        "-o",
        out_json,
        "--exit-zero",
        "-q",
        "--min-confidence",
        "low",
    ]
    for root in spec.roots:
        cmd += ["--assume-compiled", root]
    env = {**os.environ, "PYTHONPATH": tclint_shim(tclint_root)}
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    secs = time.time() - t0
    if proc.returncode not in (0, 1) or not os.path.exists(out_json):
        raise RuntimeError(f"tclint failed ({proc.returncode}): {proc.stderr[-3000:]}")
    with open(out_json) as fh:
        diags = json.load(fh)
    os.remove(out_json)
    regions = subprocess.run(
        [
            python,
            "-m",
            "tclint.rules",
            "regions",
            *lint_paths(tf, spec),
            "--output-format",
            "json",
            *[a for r in spec.roots for a in ("--assume-compiled", r)],
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),
    )
    reg = None
    with contextlib.suppress(Exception):
        reg = json.loads(regions.stdout)
    return {"diagnostics": diags, "stderr": proc.stderr[-3000:], "seconds": round(secs, 1), "regions": reg}


# --------------------------------------------------------------------------------------------
# scoring
# --------------------------------------------------------------------------------------------


_GUARD_SITE = re.compile(r"#\s+(transformers/[^\s:]+):(\d+) in ")


def _reason_kind(reason: str) -> str:
    """A coarse kind of one recompile reason (guard failure text)."""
    r = reason.split(": ", 1)[-1]
    if (
        "size mismatch" in r
        or "stride mismatch" in r
        or ".size()[" in r
        or "<= " in r.split("#")[0]
        and "size" in r
    ):
        return "shape"
    if "dtype mismatch" in r or "device mismatch" in r or "requires_grad" in r:
        return "tensor-meta"
    if "len(" in r.split("#")[0]:
        return "container-length"
    if "training" in r.split("#")[0] or "grad_mode" in r or "GLOBAL_STATE" in r:
        return "mode"
    if "___check_obj_id" in r or "___check_type_id" in r or "ID_MATCH" in r or "type(" in r:
        return "identity/type"
    if "==" in r.split("#")[0] or "<=" in r.split("#")[0] or ">=" in r.split("#")[0]:
        return "value"
    return "other"


WRAPPER_FRAMES = {
    ("utils/deprecation.py", "wrapped_func"),
    ("utils/generic.py", "wrapper"),
    ("utils/output_capturing.py", "wrapper"),
}


def score_model(spec: ModelSpec, dyn: dict[str, Any], stat: dict[str, Any], base: str) -> dict[str, Any]:  # noqa: C901 - long, not split yet (issue 16)
    """base: the folder that holds the transformers package (site-packages)."""

    def rel(p: str) -> str:
        return os.path.relpath(os.path.abspath(p), base)

    def idx(relpath: str) -> SourceIndex:
        return source_index(os.path.join(base, relpath))

    # ---- dynamic sites
    actual: dict[tuple[str, int], list[dict[str, Any]]] = {}
    unattributed: list[dict[str, Any]] = []
    for phase, pr in dyn["phases"].items():
        for b in pr.get("breaks", []):
            where, _, num = b["reported_at"].rpartition(":")
            if (
                where.startswith("transformers/")
                and num.isdigit()
                and (b["file"], b["line"]) != (where, int(num))
            ):
                # "Graph break in user code at" is the innermost user frame: when it is in the package it
                # is the site (older cached results took provenance lines for frames, see dynamo_truth.parse_break)
                b = {**b, "file": where, "line": int(num)}
            if b["file"] is None:
                unattributed.append({**b, "phase": phase})
                continue
            key = (b["file"], idx(b["file"]).stmt(b["line"]))
            actual.setdefault(key, []).append({**b, "phase": phase})
    ran = executed(dyn["traced"], dyn["eager"], idx)

    # ---- static sites
    def family(code: str) -> str | None:
        return {"TC1": "break", "TC2": "recompile"}.get(code[:3])

    static = static_break_sites(stat["diagnostics"], rel, idx)
    recompile_static: dict[str, list[dict[str, Any]]] = {"default": [], "low": []}
    for d in stat["diagnostics"]:
        if family(d["code"]) != "recompile" or d["severity"] not in ("warning", "error"):
            continue
        f = rel(d["filename"])
        row = d["location"]["row"]
        ix = idx(f)
        fn = ix.func(row)
        if fn is None:
            continue
        item = {
            "code": d["code"],
            "row": row,
            "severity": d["severity"],
            "confidence": d["confidence"],
            "message": d["message"],
            "region": d.get("region"),
            "source": ix.source(row),
        }
        for lv in ["low"] + (["default"] if d["confidence"] in ("medium", "high") else []):
            recompile_static[lv].append({**item, "file": f, "function": fn[1], "fkey": (f, fn[0])})

    out: dict[str, Any] = {
        "model": spec.name,
        "roots": spec.roots,
        "errors": {},
        "breaks": {},
        "recompiles": {},
    }
    for phase, pr in dyn["phases"].items():
        if pr.get("error"):
            out["errors"][phase] = pr["error"]
        if pr.get("eager_error"):
            out["errors"][phase + " (eager coverage)"] = pr["eager_error"]
    for lv in LEVELS:
        out["breaks"][lv] = score_breaks(static[lv], actual, ran, idx)
    out["unattributed_breaks"] = unattributed

    # ---- recompile hazards
    root_funcs = []
    for pat in spec.roots:
        mod, _, qual = pat.partition(":")
        path = os.path.join(*mod.split(".")) + ".py"
        ix = idx(path)
        for _d, _e, first, q in ix.funcs:
            if q == qual:
                root_funcs.append((path, first))
    hazardous: dict[tuple[str, int], list[dict[str, Any]]] = {}
    frames_compiled: dict[tuple[str, int], int] = {}
    for phase, pr in dyn["phases"].items():
        for key, rec in pr.get("frames", {}).items():
            f, first, name = key.rsplit(":", 2)
            if name.startswith("torch_dynamo_resume") or f.startswith("/") or first == "None":
                continue
            targets = [(f, int(first))]
            shared = any(
                re.search(r"___check_(type|obj)_id\(args\[0\]|len\(args\)|: not args", r)
                for r in rec["reasons"]
            )
            if (f.split("transformers/", 1)[-1], name) in WRAPPER_FRAMES and not shared:
                # a decorator's wrapper entered only by the compiled root: it stands for the root.
                # (Once a graph break makes other decorated functions frames too, the wrapper's one
                # code object is guarded on which function it wraps: then it is its own hazard.)
                targets = root_funcs or targets
            for t in targets:
                frames_compiled[t] = max(frames_compiled.get(t, 0), rec["compiles"])
                if rec["compiles"] >= HAZARD_COMPILES:
                    guards = []
                    for r in rec["reasons"]:
                        m = _GUARD_SITE.search(r)
                        guards.append(
                            {
                                "reason": r,
                                "kind": _reason_kind(r),
                                "site": f"{m.group(1)}:{m.group(2)}" if m else None,
                            }
                        )
                    hazardous.setdefault(t, []).append(
                        {"phase": phase, "frame": key, "compiles": rec["compiles"], "guards": guards}
                    )
    root_pats = [r.split(":")[0] for r in spec.roots]
    for lv in ("default", "low"):
        pred: dict[tuple[str, int], list[dict[str, Any]]] = {}
        not_frame: list[dict[str, Any]] = []
        for item in recompile_static[lv]:
            g = item["fkey"]
            if g in frames_compiled:
                pred.setdefault(g, []).append({**item, "attributed": "in-function"})
            elif (
                root_funcs and item.get("region") and any(p in item["region"] for p in spec.roots + root_pats)
            ):
                for r in root_funcs:
                    pred.setdefault(r, []).append({**item, "attributed": "in the root's region"})
            else:
                not_frame.append(item)
        funcs = []
        tp = [k for k in pred if k in hazardous]
        fp = [k for k in pred if k not in hazardous]
        fn_ = [k for k in hazardous if k not in pred]

        def shape_only(
            k,
        ):  # every phase's recompiles are tensor size/stride changes (the dynamic-shape ladder)
            return all(g["kind"] == "shape" for h in hazardous[k] for g in h["guards"])

        def cause_matched(k, pred=pred):  # a TC2xx finding on the statement a guard failure points at
            sites = set()
            for h in hazardous.get(k, []):
                for g in h["guards"]:
                    if g["site"]:
                        gf, gl = g["site"].rsplit(":", 1)
                        with contextlib.suppress(OSError, SyntaxError):
                            sites.add((gf, idx(gf).stmt(int(gl))))
            return any((i["file"], idx(i["file"]).stmt(i["row"])) in sites for i in pred.get(k, []))

        for status, keys in (("tp", tp), ("fp", fp), ("fn", fn_)):
            for k in keys:
                ix = idx(k[0])
                fn = ix.func(ix.def_line(k[1]))
                funcs.append(
                    {
                        "file": k[0],
                        "line": ix.def_line(k[1]),
                        "function": fn[1] if fn else None,
                        "status": status,
                        "max_compiles": frames_compiled.get(k, 0),
                        "shape_only": shape_only(k) if k in hazardous else None,
                        "cause_matched": cause_matched(k) if k in hazardous else None,
                        "static": pred.get(k, []),
                        "dynamic": hazardous.get(k, []),
                    }
                )
        ns = [k for k in hazardous if not shape_only(k)]
        out["recompiles"][lv] = {
            "counts": {
                "tp": len(tp),
                "fp": len(fp),
                "not-a-frame": len(not_frame),
                "fn": len(fn_),
                "hazards_not_shape_only": len(ns),
                "tp_not_shape_only": len([k for k in ns if k in pred]),
                "tp_cause_matched": len([k for k in tp if cause_matched(k)]),
            },
            "precision": len(tp) / (len(tp) + len(fp)) if tp or fp else None,
            "recall": len(tp) / len(hazardous) if hazardous else None,
            "functions": funcs,
            "not_a_frame": not_frame,
        }
    # ---- regions: functions Dynamo traced vs functions tclint thinks are compiled
    region_funcs: dict[tuple[str, int], str] = {}
    for reg in (stat.get("regions") or {}).get("regions", []):
        path = reg["path"] if os.path.isabs(reg["path"]) else os.path.join(tempfile.gettempdir(), reg["path"])
        f = rel(path)
        if f.startswith(".."):
            continue
        fn = idx(f).func(reg["line"])
        if fn:
            region_funcs[(f, fn[0])] = reg.get("via", "")
    missed_funcs, extra_funcs = [], []
    for key in sorted(ran.traced_funcs):
        if key not in region_funcs:
            missed_funcs.append(
                {
                    "file": key[0],
                    "line": idx(key[0]).def_line(key[1]),
                    "function": idx(key[0]).func(idx(key[0]).def_line(key[1]))[1],
                }
            )
    for key, via in sorted(region_funcs.items()):
        if (
            key not in ran.traced_funcs
            and key in ran.eager_funcs
            and any(r.split(":")[0] in via for r in spec.roots)
        ):
            extra_funcs.append(
                {
                    "file": key[0],
                    "line": idx(key[0]).def_line(key[1]),
                    "function": idx(key[0]).func(idx(key[0]).def_line(key[1]))[1],
                    "via": via,
                }
            )
    out["regions_vs_traced"] = {
        "traced_functions": len(ran.traced_funcs),
        "traced_in_region": len(ran.traced_funcs) - len(missed_funcs),
        "traced_not_in_region": missed_funcs,
        "region_eager_only": extra_funcs,
    }
    out["frame_compiles"] = {
        ph: {k: v["compiles"] for k, v in pr.get("frames", {}).items()} for ph, pr in dyn["phases"].items()
    }
    out["recompile_reasons"] = {
        ph: {k: v["reasons"] for k, v in pr.get("frames", {}).items() if v["reasons"]}
        for ph, pr in dyn["phases"].items()
    }
    out["phase_seconds"] = {ph: pr.get("seconds") for ph, pr in dyn["phases"].items()}
    out["static_seconds"] = stat["seconds"]
    out["tclint_stderr"] = stat["stderr"]
    if stat.get("regions") is not None:
        out["regions"] = stat["regions"]
    return out


# --------------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------------


def _fmt(x: float | None) -> str:
    return "  -  " if x is None else f"{x:.3f}"


def _dyn_cache_key(python: str) -> str:
    with open(os.path.abspath(__file__), "rb") as fh:
        own = fh.read()
    # only the model/scenario part of this file and the recorders of dynamo_truth matter for the truth
    own = own.split(b"# static side")[0]
    with open(os.path.join(HERE, "dynamo_truth.py"), "rb") as fh:
        own += fh.read().split(b"# scoring side")[0]
    ver = subprocess.run(
        [python, "-c", "import torch, transformers; print(torch.__version__, transformers.__version__)"],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    ).stdout.strip()
    return hashlib.sha1(own + ver.encode()).hexdigest()[:12]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated: " + ",".join(MODELS))
    ap.add_argument("--json", default=DEFAULT_OUT, help="where to write every site (default %(default)s)")
    ap.add_argument("--fresh", action="store_true", help="re-measure Dynamo even if a cached result exists")
    ap.add_argument("--tclint-root", default=REPO, help="tclint source tree to measure (default: this repo)")
    ap.add_argument("--python", default=sys.executable, help="the venv's python (torch + transformers)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per model's dynamic run")
    ap.add_argument("--dynamic-one", help=argparse.SUPPRESS)
    ap.add_argument("--dynamic-out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.dynamic_one:
        res = dynamic_one(args.dynamic_one)
        with open(args.dynamic_out, "w") as fh:
            json.dump(res, fh)
        return 0
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error(f"unknown models {unknown}; known: {','.join(MODELS)}")
    tf = transformers_dir(args.python)
    base = os.path.dirname(tf)
    key = _dyn_cache_key(args.python)
    os.makedirs(CACHE_DIR, exist_ok=True)
    results = {}
    for name in names:
        spec = MODELS[name]
        cache = os.path.join(CACHE_DIR, f"{name}-{key}.json")
        t0 = time.time()
        if args.fresh or not os.path.exists(cache):
            tmp = cache + ".tmp"
            try:
                subprocess.run(
                    [args.python, os.path.abspath(__file__), "--dynamic-one", name, "--dynamic-out", tmp],
                    check=True,
                    timeout=args.timeout,
                    env={**os.environ, "HF_HUB_OFFLINE": "1"},
                    stdout=subprocess.DEVNULL,
                    stderr=open(cache + ".stderr", "w"),
                )
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
                print(f"{name}: dynamic run failed: {exc} (see {cache}.stderr)", file=sys.stderr)
                continue
            os.replace(tmp, cache)
        with open(cache) as fh:
            dyn = json.load(fh)
        t1 = time.time()
        stat = run_tclint(args.python, os.path.abspath(args.tclint_root), tf, spec)
        results[name] = score_model(spec, dyn, stat, base)
        print(
            f"{name}: dynamic {t1 - t0:.0f}s (cached)" if t1 - t0 < 2 else f"{name}: dynamic {t1 - t0:.0f}s",
            f"static {stat['seconds']:.0f}s",
            file=sys.stderr,
        )
    summary = summarize(results)
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump(
            {
                "summary": summary,
                "models": results,
                "tclint_root": args.tclint_root,
                "tclint_commit": _git_head(args.tclint_root),
            },
            fh,
            indent=1,
            default=list,
        )
    print_table(summary)
    report = os.path.splitext(args.json)[0] + ".md"
    write_report(report, summary, results, _git_head(args.tclint_root))
    print(f"\nall sites: {args.json}\nreadable listing: {report}")
    return 0


def write_report(path: str, summary: dict[str, Any], results: dict[str, Any], commit: str) -> None:  # noqa: C901 - long, not split yet (issue 16)
    """Markdown listing of every site (distinct over models), for notes and for the lead."""
    lines = [f"# hf_eval sites (tclint {commit})", ""]
    for lv in ("default", "low"):
        o = summary[lv]["overall"]
        d = o["distinct_breaks"]
        lines += [
            f"## min-confidence {'medium (default)' if lv == 'default' else 'low'}",
            "",
            "| model | break sites (Dynamo) | TP | FP traced | FP compile-dead | eager-only | unexecuted | FN |"
            " precision | strict | recall | hazard fns TP | FP | FN | rc precision | rc recall |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, r in list(summary[lv]["models"].items()) + [("**overall (sum)**", o)]:
            bb, rr = r["breaks"], r["recompiles"]
            lines.append(
                f"| {name} | {bb['actual']} | {bb['tp']} | {bb['fp-traced']} | {bb['fp-compile-dead']} |"
                f" {bb['eager-only']} | {bb['unexecuted']} | {bb['fn']} | {_fmt(bb['precision'])} |"
                f" {_fmt(bb['strict_precision'])} | {_fmt(bb['recall'])} | {rr['tp']} | {rr['fp']} |"
                f" {rr['fn']} | {_fmt(rr['precision'])} | {_fmt(rr['recall'])} |"
            )
        lines += [
            "",
            f"Distinct (file, statement) break sites over all models: TP {d['tp']}, FP {d['fp']}, "
            f"FN {d['fn']}, eager-only {d['eager-only']}, unexecuted {d['unexecuted']}; precision "
            f"{_fmt(d['precision'])}, recall {_fmt(d['recall'])}",
            "",
        ]
        sites: dict[tuple[str, int], dict[str, Any]] = {}
        for name, r in results.items():
            for site in r["breaks"][lv]["sites"]:
                e = sites.setdefault((site["file"], site["line"]), {"site": site, "models": {}})
                e["models"][name] = site["status"]
        for title, want in (
            ("Missed graph-break sites (FN)", {"fn"}),
            ("False positives", {"fp-traced", "fp-compile-dead"}),
            ("Eager-only (function ran, never under Dynamo)", {"eager-only"}),
            ("True positives", {"tp"}),
            ("Unexecuted static findings", {"unexecuted"}),
        ):
            chosen = [
                (k, e)
                for k, e in sorted(sites.items())
                if set(e["models"].values()) & want
                and not ("tp" in e["models"].values() and "tp" not in want)
            ]
            lines += [f"### {title} ({len(chosen)})", ""]
            for (f, ln), e in chosen:
                site = e["site"]
                lines.append(f"- `{f}:{ln}` in `{site['function']}`: `{site['source'][:100]}`  ")
                lines.append(f"  models: {', '.join(f'{m} ({st})' for m, st in e['models'].items())}  ")
                for item in {(i["code"], i["confidence"], i["message"][:160]) for i in site["static"]}:
                    lines.append(f"  tclint {item[0]} ({item[1]}): {item[2]}  ")
                seen = set()
                for ev in site["dynamic"]:
                    k = (ev["gb_id"], ev["gb_type"], ev["phase"])
                    if k in seen:
                        continue
                    seen.add(k)
                    lines.append(
                        f"  Dynamo {ev['gb_id']} `{ev['gb_type'][:80]}` in phase {ev['phase']}, reported at "
                        f"`{ev['reported_at']}`  "
                    )
            lines.append("")
        lines += ["### Recompile-hazard functions", ""]
        for name, r in results.items():
            for fn in r["recompiles"][lv]["functions"]:
                tags = ("; shape ladder only" if fn.get("shape_only") else "") + (
                    "; a TC2xx names a guard statement" if fn.get("cause_matched") else ""
                )
                lines.append(
                    f"- {name}: **{fn['status']}** `{fn['file']}:{fn['line']}` `{fn['function']}` "
                    f"(max {fn['max_compiles']} compiles in one phase{tags})  "
                )
                for dd in fn["dynamic"]:
                    kinds: dict[str, int] = {}
                    for g in dd["guards"]:
                        kinds[g["kind"]] = kinds.get(g["kind"], 0) + 1
                    gsites = sorted({g["site"] for g in dd["guards"] if g["site"]})
                    lines.append(
                        f"  {dd['phase']}: {dd['compiles']} compiles of `{dd['frame']}`; guard kinds {kinds};"
                        f" guard sites {gsites}  "
                    )
                for st in fn["static"]:
                    lines.append(
                        f"  tclint {st['code']} at `{st['file']}:{st['row']}` ({st['attributed']}): {st['message'][:140]}  "
                    )
            for st in r["recompiles"][lv]["not_a_frame"]:
                lines.append(
                    f"- {name}: TC2xx not in a compiled frame: {st['code']} `{st['file']}:{st['row']}` "
                    f"`{st['function']}`: {st['message'][:140]}  "
                )
        lines.append("")
    lines += ["## Regions: functions Dynamo traced that tclint does not consider compiled", ""]
    miss: dict[tuple[str, str], list[str]] = {}
    for name, r in results.items():
        rv = r["regions_vs_traced"]
        lines.append(
            f"- {name}: Dynamo traced {rv['traced_functions']} transformers functions, "
            f"{rv['traced_in_region']} of them in tclint's regions"
        )
        for m in rv["traced_not_in_region"]:
            miss.setdefault((m["file"], m["function"]), []).append(name)
    lines += ["", "Distinct functions traced but outside every region (models):", ""]
    for (f, fn), models in sorted(miss.items()):
        lines.append(f"- `{f}` `{fn}`: {len(models)} models")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def _git_head(root: str) -> str:
    try:
        head = subprocess.run(
            ["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", root, "status", "--porcelain", "--untracked-files=no", "rules"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        return head + ("+dirty rules/" if dirty else "")
    except OSError:
        return "?"


def summarize(results: dict[str, Any]) -> dict[str, Any]:
    rows = {}
    for lv in ("default", "low"):
        tot = {
            "tp": 0,
            "fp-traced": 0,
            "fp-compile-dead": 0,
            "eager-only": 0,
            "unexecuted": 0,
            "fn": 0,
            "actual": 0,
        }
        rt = {
            "tp": 0,
            "fp": 0,
            "not-a-frame": 0,
            "fn": 0,
            "hazards_not_shape_only": 0,
            "tp_not_shape_only": 0,
            "tp_cause_matched": 0,
        }
        per = {}
        for name, r in results.items():
            b, rc = r["breaks"][lv], r["recompiles"][lv]
            for k, v in b["counts"].items():
                tot[k] += v
            tot["actual"] += b["actual"]
            for k, v in rc["counts"].items():
                rt[k] += v
            per[name] = {
                "breaks": {
                    **b["counts"],
                    "actual": b["actual"],
                    "precision": b["precision"],
                    "strict_precision": b["strict_precision"],
                    "recall": b["recall"],
                },
                "recompiles": {**rc["counts"], "precision": rc["precision"], "recall": rc["recall"]},
                "errors": list(r["errors"]),
            }
        tp, fp = tot["tp"], tot["fp-traced"] + tot["fp-compile-dead"]
        overall = {
            "breaks": {
                **tot,
                "precision": tp / (tp + fp) if tp + fp else None,
                "strict_precision": tp / (tp + fp + tot["eager-only"])
                if tp + fp + tot["eager-only"]
                else None,
                "recall": tp / tot["actual"] if tot["actual"] else None,
            },
            "recompiles": {
                **rt,
                "precision": rt["tp"] / (rt["tp"] + rt["fp"]) if rt["tp"] + rt["fp"] else None,
                "recall": rt["tp"] / (rt["tp"] + rt["fn"]) if rt["tp"] + rt["fn"] else None,
            },
        }
        # the same shared helper (utils/output_capturing.py, ...) breaks in every model: also count
        # each (file, statement) once over all models
        status: dict[tuple[str, int], set[str]] = {}
        for r in results.values():
            for site in r["breaks"][lv]["sites"]:
                status.setdefault((site["file"], site["line"]), set()).add(site["status"])
        d = {"tp": 0, "fp": 0, "eager-only": 0, "unexecuted": 0, "fn": 0}
        for st in status.values():
            if "tp" in st:
                d["tp"] += 1
            elif "fn" in st:
                d["fn"] += 1
            elif st & {"fp-traced", "fp-compile-dead"}:
                d["fp"] += 1
            elif "eager-only" in st:
                d["eager-only"] += 1
            else:
                d["unexecuted"] += 1
        overall["distinct_breaks"] = {
            **d,
            "precision": d["tp"] / (d["tp"] + d["fp"]) if d["tp"] + d["fp"] else None,
            "recall": d["tp"] / (d["tp"] + d["fn"]) if d["tp"] + d["fn"] else None,
        }
        rows[lv] = {"models": per, "overall": overall}
    return rows


def print_table(summary: dict[str, Any]) -> None:
    for lv in ("default", "low"):
        print(f"\n== min-confidence {'medium (default)' if lv == 'default' else 'low'} ==")
        print(
            f"{'model':<10} | {'brk: actual':>11} {'TP':>3} {'FP':>3} {'dead':>4} {'eagr':>4} {'unex':>4} {'FN':>3}"
            f" {'prec':>6} {'strict':>6} {'recall':>6} | {'rc: TP':>6} {'FP':>3} {'nafr':>4} {'FN':>3} {'prec':>6} {'recall':>6} | errors"
        )
        rows = list(summary[lv]["models"].items()) + [("OVERALL", summary[lv]["overall"])]
        for name, r in rows:
            b, rc = r["breaks"], r["recompiles"]
            print(
                f"{name:<10} | {b['actual']:>11} {b['tp']:>3} {b['fp-traced']:>3} {b['fp-compile-dead']:>4}"
                f" {b['eager-only']:>4} {b['unexecuted']:>4} {b['fn']:>3} {_fmt(b['precision']):>6}"
                f" {_fmt(b['strict_precision']):>6} {_fmt(b['recall']):>6} | {rc['tp']:>6} {rc['fp']:>3}"
                f" {rc['not-a-frame']:>4} {rc['fn']:>3} {_fmt(rc['precision']):>6} {_fmt(rc['recall']):>6} |"
                f" {','.join(r.get('errors', []))}"
            )
        rc = summary[lv]["overall"]["recompiles"]
        print(
            f"recompile hazards: {rc['tp'] + rc['fn']} hazardous functions, {rc['hazards_not_shape_only']} of them"
            f" not only from the dynamic-shape ladder (tclint finds {rc['tp_not_shape_only']});"
            f" {rc['tp_cause_matched']} of the {rc['tp']} TPs have a TC2xx on a statement a guard failure names"
        )
        d = summary[lv]["overall"]["distinct_breaks"]
        print(
            f"distinct (file, statement) sites over all models: TP {d['tp']}, FP {d['fp']}, FN {d['fn']},"
            f" eager-only {d['eager-only']}, unexecuted {d['unexecuted']}; precision {_fmt(d['precision'])},"
            f" recall {_fmt(d['recall'])}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
