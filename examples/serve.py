"""Serve tinylm: a decoding step compiled on its own, called per request."""

import torch
import torch.nn.functional as F

from tinylm import LMConfig, TinyLM

MODEL = TinyLM(LMConfig(use_moe=False)).eval()


@torch.compile
def decode_step(tokens: torch.Tensor, temperature: float, sampling: str = "greedy") -> torch.Tensor:
    logits = MODEL(tokens)[:, -1, :] / temperature
    if sampling == "greedy":
        return logits.argmax(-1, keepdim=True)
    probs = F.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1)


def generate(prompt: torch.Tensor, max_new_tokens: int, eos: int = 0, sampling: str = "greedy") -> torch.Tensor:
    tokens = prompt
    for _ in range(max_new_tokens):
        nxt = decode_step(tokens, 0.8, sampling)
        tokens = torch.cat([tokens, nxt], dim=1)
        if (nxt == eos).all().item():  # eager: stopping early is fine here
            break
    return tokens


@torch.compile
def score(tokens: torch.Tensor, request_id: str) -> torch.Tensor:
    logits = MODEL(tokens)
    ranked = logits.softmax(-1).max(-1).values
    best = ranked.mean().item()
    return ranked / best


def serve(requests: list[torch.Tensor]) -> list[torch.Tensor]:
    out = []
    for i, prompt in enumerate(requests):
        out.append(generate(prompt, 4, sampling="greedy" if i % 2 else "sample"))
        score(prompt, f"req-{i}")
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    reqs = [torch.randint(0, 64, (1, 5)) for _ in range(3)]
    for r in serve(reqs):
        print(r.tolist())
