"""Train tinylm on random tokens: the whole model is compiled once."""

import argparse
import logging
import time

import torch
import torch.nn.functional as F

from tinylm import LMConfig, TinyLM

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("train")


def batches(cfg: LMConfig, batch_size: int, steps: int):
    g = torch.Generator().manual_seed(0)
    for _ in range(steps):
        yield torch.randint(0, cfg.vocab_size, (batch_size, 17), generator=g)


def lm_loss(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()

    torch.manual_seed(0)
    cfg = LMConfig()
    model = TinyLM(cfg)
    model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    start = time.perf_counter()
    for step, tokens in enumerate(batches(cfg, args.batch_size, args.steps)):
        loss = lm_loss(model(tokens[:, :-1]), tokens)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            # .item() and logging in the eager loop are fine: nothing here is compiled
            log.info("step %d loss %.3f (%.1fs)", step, loss.item(), time.perf_counter() - start)
    with torch.no_grad():
        eval_loss = model.loss(next(batches(cfg, 4, 1)))
    print(f"final loss {loss.item():.3f}, eval loss {eval_loss.item():.3f}")


if __name__ == "__main__":
    main()
