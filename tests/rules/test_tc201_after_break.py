"""TC201 on a counter after a graph break (issue 12): Dynamo compiles the rest of the frame after a
break as a resume function of its own.  When that rest does no tensor work Dynamo makes no graph
for it, runs it eagerly from then on and the counter guards nothing.  Measured with torch 2.13,
backend eager, 6 calls each (compiles per shape): counter-after-if-no-tensor-work 2,
counter-after-item 2, branch-taken 7, then-tensor-work 7, counter-before-break 7."""

from __future__ import annotations

import textwrap

import pytest
from tclint.rules.model import Confidence
from tclint.rules.variants import variants

from tests.helpers.lintutil import lint_code

MODULE = """
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.steps = 0

    def forward(self, x):
{body}

model = torch.compile(Net())
"""

ROWS = [
    # (id, forward body, TC201 confidence, variants unbounded)
    (
        "no-tensor-work-after-the-if",
        "h = self.fc(x)\nif h.mean() > -100:\n    self.flag = True\nself.steps += 1\nreturn h",
        Confidence.LOW,
        False,
    ),
    ("after-item", "h = self.fc(x)\nv = h.sum().item()\nself.steps += 1\nreturn h", Confidence.LOW, False),
    (
        "branch-with-tensor-work",
        "h = self.fc(x)\nif h.mean() > -100:\n    h = h * 2\nself.steps += 1\nreturn h",
        Confidence.MEDIUM,
        True,
    ),
    (
        "tensor-work-after-the-counter",
        "h = self.fc(x)\nif h.mean() < -100:\n    h = h * 2\nself.steps += 1\nreturn h + 1",
        Confidence.HIGH,
        True,
    ),
    (
        "counter-before-the-break",
        "self.steps += 1\nh = self.fc(x)\nif h.mean() < -100:\n    h = h * 2\nreturn h",
        Confidence.HIGH,
        True,
    ),
]


@pytest.mark.parametrize(("body", "confidence", "unbounded"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_counter_after_a_break_recompiles_only_when_the_rest_has_a_graph(
    tmp_path, body, confidence, unbounded
):
    code = MODULE.format(body=textwrap.indent(body, " " * 8))
    result = lint_code(tmp_path, code, settings={"min-confidence": "low"})
    (diag,) = [d for d in result.diagnostics if d.code == "TC201"]
    assert diag.confidence == confidence, diag.message
    (v,) = variants(result.project).values()
    assert (not v.bounded) == unbounded
