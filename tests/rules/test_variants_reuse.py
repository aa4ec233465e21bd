"""The variant analysis asks each function's call edges once per project (issue 20): every
compiled root's closure (``variants._called_from``, read for a requires_grad change) and every
root asked about the same change share what they found, so a project of many compiled modules
sharing helpers (transformers: 645 compiled forwards) does not walk the helpers once per root.
The answers are those of a walk per root."""

from __future__ import annotations

from collections import Counter

from tclint.rules.project import Project
from tclint.rules.variants import variants

from tests.helpers.lintutil import lint_code

ROOTS = 8


def _program() -> str:
    blocks = "".join(
        f"""
class Block{i}(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return helper_a(self.fc(x))
"""
        for i in range(ROOTS)
    )
    made = "".join(
        f"    b{i} = Block{i}()\n    c{i} = torch.compile(b{i}, backend='eager')\n" for i in range(ROOTS)
    )
    calls = "".join(f"        c{i}(x)\n" for i in range(ROOTS))
    return f"""
import torch
import torch.nn as nn


def helper_c(x):
    return x * 2


def helper_b(x):
    return helper_c(x) + 1


def helper_a(x):
    return helper_b(x) - 1

{blocks}

def main():
{made}    x = torch.randn(2, 4)
    for epoch in range(4):
        if epoch == 2:
            b0.requires_grad_(False)
{calls}"""


def test_each_function_is_asked_once_and_the_answers_stay(tmp_path, monkeypatch):
    result = lint_code(tmp_path, _program())
    project = result.project
    assert project is not None
    before = {k: repr(v) for k, v in variants(project).items()}
    assert len(before) == ROOTS
    first = next(v for k, v in before.items() if k.endswith("::Block0.forward"))
    assert "requires_grad" in first  # the change is read for every root: their closures are walked

    asked: Counter[str] = Counter()
    edge_targets = Project.edge_targets

    def counted(self, ff, fn, edge):  # type: ignore[no-untyped-def]
        asked[fn.qualname] += 1
        return edge_targets(self, ff, fn, edge)

    monkeypatch.setattr(Project, "edge_targets", counted)
    project.memo.clear()  # what the rules derived: computed again, counted
    after = {k: repr(v) for k, v in variants(project).items()}
    assert after == before
    # each root's closure reaches helper_a -> helper_b -> helper_c; a walk per root asked the
    # helpers' edges once per root (8 each)
    assert asked["helper_b"] <= 2, asked
    assert asked["helper_a"] <= 2, asked
