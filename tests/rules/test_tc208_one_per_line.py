"""TC208 says each line that makes a variant once, and a guessed requires_grad change stays quiet.

Found on transformers (``assume-compiled = ["transformers.models.*:*.forward"]``): the exporter's
``def prepare_for_xnnpack(model: PreTrainedModel, ...): model.requires_grad_(False)`` (with another
change to True elsewhere) names no module tclint can tell, so the change counts for every compiled module method, as a guess, and
TC208 reported it once per compiled callable: 6,728 findings on that one line of the package.
Now the line is reported once, naming the callables it affects, and a finding whose only source
is such a guess is low confidence (shown with ``min-confidence = "low"``)."""

from __future__ import annotations

from tests.helpers.lintutil import lint_tree, write_tree

MODELS = """
from torch import nn


class Base(nn.Module):
    pass


class A(Base):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 4)

    def forward(self, x):
        return self.l(x)


class B(Base):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 4)

    def forward(self, x):
        return self.l(x) * 2


class C(Base):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 4)

    def forward(self, x):
        return self.l(x) - 1
"""

EXPORT = """
from pkg.models import Base


def prepare(model: Base, trainable: bool):
    model.requires_grad_(trainable)
    return model.to(device="cpu")
"""

ASSUME = {"assume-compiled": ["pkg.models:*.forward"]}

# A known module: the two compiled methods that read it are named by one finding.
TRAIN = """
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)

    def score(self, x):
        return self.fc(x).sum(-1)


def main():
    enc = Encoder()
    run = torch.compile(enc.forward)
    score = torch.compile(enc.score)
    x = torch.randn(2, 4)
    for epoch in range(4):
        enc.requires_grad_(epoch < 2)
        run(x).sum().backward()
        score(x).sum().backward()


main()
"""


def _tc208(result):
    return [d for d in result.diagnostics if d.code == "TC208"]


def test_a_guessed_freeze_is_one_low_confidence_finding(tmp_path):
    write_tree(str(tmp_path), {"pkg/__init__.py": "", "pkg/models.py": MODELS, "pkg/export.py": EXPORT})
    assert _tc208(lint_tree(str(tmp_path), ["."], ASSUME)) == []
    low = _tc208(lint_tree(str(tmp_path), ["."], {**ASSUME, "min-confidence": "low"}))
    assert [(d.path.replace("\\", "/").rsplit("pkg/", 1)[-1], d.span.start.line) for d in low] == [
        ("export.py", 6)
    ]
    assert "and 2 more compiled callables get another variant here" in low[0].message
    assert sorted(t.rsplit("::", 1)[-1] for t in low[0].extra["targets"]) == [
        "A.forward",
        "B.forward",
        "C.forward",
    ]


def test_a_known_freeze_names_every_callable_it_affects_once(tmp_path):
    write_tree(str(tmp_path), {"train.py": TRAIN})
    found = _tc208(lint_tree(str(tmp_path), ["train.py"]))
    assert len(found) == 1, [d.message for d in found]
    assert found[0].span.start.line == 24
    assert len(found[0].extra["targets"]) == 2
    assert "and 1 more compiled callable get another variant here" in found[0].message
