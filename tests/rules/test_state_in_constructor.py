"""TC127: a module built inside compiled code creates a Parameter / Buffer in its ``__init__``.

The constructor of an nn.Module built in compiled code is part of the region (Dynamo traces it);
the same constructor called in eager code (the model built, then compiled) is never flagged."""

from __future__ import annotations

from tests.helpers.lintutil import found, lint_code, lint_tree, write_tree

LOSS = """
import torch
import torch.nn as nn

class Matcher(nn.Module):
    def __init__(self, cost):
        super().__init__()
        self.cost = cost

class ImageLoss(nn.Module):
    def __init__(self, matcher, num_classes):
        super().__init__()
        self.matcher = matcher
        empty_weight = torch.ones(num_classes + 1)
        empty_weight[-1] = 0.1
        self.empty_weight = nn.Buffer(empty_weight)
        self.scale = nn.Parameter(torch.ones(1))
        self.register_buffer("other", torch.zeros(1))
"""


def _tc127(result) -> set[int]:
    return {line for line, code in found(result) if code == "TC127"}


def test_constructor_called_in_eager_code_is_not_flagged(tmp_path):
    code = (
        LOSS
        + """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = ImageLoss(Matcher(1.0), 3)

    def forward(self, x):
        return (x * self.loss.empty_weight).sum()

model = torch.compile(Model())
eager_loss = ImageLoss(Matcher(1.0), 3)
"""
    )
    assert _tc127(lint_code(tmp_path, code)) == set()


def test_constructor_reached_from_compiled_code_is_flagged(tmp_path):
    code = (
        LOSS
        + """
@torch.compile
def step(x):
    loss = ImageLoss(Matcher(1.0), x.shape[-1] - 1)
    return (x * loss.empty_weight * loss.scale).sum()
"""
    )
    # super().__init__() (GB0119), nn.Buffer (GB0116), nn.Parameter (GB0264); not register_buffer
    assert _tc127(lint_code(tmp_path, code)) == {12, 16, 17}


def test_plain_class_buffer_is_not_flagged_and_unknown_base_is_medium(tmp_path):
    write_tree(
        str(tmp_path),
        {
            "base.py": "import torch.nn as nn\n\nclass Base(nn.Module):\n    pass\n",
            "main.py": """
import torch
import torch.nn as nn
from base import Base

class Plain:
    def __init__(self, n):
        self.b = nn.Buffer(torch.ones(n))

class Derived(Base):
    def __init__(self, n):
        super().__init__()
        self.b = nn.Buffer(torch.ones(n))

@torch.compile
def step(x):
    return x * Plain(3).b * Derived(3).b
""",
        },
    )
    result = lint_tree(str(tmp_path), ["main.py"], {"min-confidence": "low"})
    got = {(d.span.start.line, d.confidence.value) for d in result.diagnostics if d.code == "TC127"}
    assert got == {(12, "medium"), (13, "medium")}
