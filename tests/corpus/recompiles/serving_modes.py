"""An inference server: a warm-up pass under no_grad, requests served under inference_mode, and a
bf16 autocast path for requests that ask for it.  The post-processing helper is called the same
way every time (under inference_mode, on a float32 tensor)."""

import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.backbone(x)


@torch.compile
def postprocess(logits: torch.Tensor) -> torch.Tensor:
    return logits.softmax(-1).argmax(-1)


class Server:
    def __init__(self):
        self.model = Classifier().eval()
        self.fast = torch.compile(self.model)

    def warmup(self, x: torch.Tensor) -> None:
        with torch.no_grad():
            self.fast(x)

    def handle(self, request: dict) -> torch.Tensor:
        x = request["x"]
        with torch.inference_mode():
            if request.get("bf16"):
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    logits = self.fast(x)
            else:
                logits = self.fast(x)
            return postprocess(logits.float())


def run():
    server = Server()
    x = torch.randn(4, 8)
    server.warmup(x)
    for i in range(8):
        server.handle({"x": x, "bf16": i % 3 == 0})
