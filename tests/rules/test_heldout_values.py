"""Value and type idioms found measuring held-out libraries (issue 12 point 6: pytorch-metric-
learning, torchmetrics; bench/lib_eval.py).  Each program is small and of our own; the truth in
each docstring is what Dynamo 2.13 (CPU, ``backend="eager"``) reported running it, re-checked by the
``dynamo``-marked test beside it."""

from __future__ import annotations

import os

import pytest

from tests.helpers.lintutil import lint_main, lint_tree, write_tree

# pytorch-metric-learning's miners: `ModuleWithRecordsAndDistance.__init__` (a base class, another
# file) stores `self.distance = self.get_default_distance() if distance is None else distance`, and
# `TripletMarginMiner.mine` computes `mat = self.distance(embeddings, ref_emb)`, then indexes with
# a mask built from it.
DISTANCES = """
import torch
from torch import nn


class Dist(nn.Module):
    def forward(self, a, b):
        mat = self.compute(a, b)
        return mat

    def compute(self, a, b):
        raise NotImplementedError


class Cos(Dist):
    def compute(self, a, b):
        return a @ b.t()


class Lp(Dist):
    def compute(self, a, b):
        return torch.cdist(a, b)
"""

BASE = """
from torch import nn

from .distances import Lp


class WithDistance(nn.Module):
    def __init__(self, distance=None, **kwargs):
        super().__init__()
        self.distance = self.default_distance() if distance is None else distance

    def default_distance(self):
        return Lp()
"""

MINER = """
from .base import WithDistance


class Miner(WithDistance):
    def __init__(self, margin=0.2, **kwargs):
        super().__init__(**kwargs)
        self.margin = margin

    def forward(self, emb, idx_a, idx_b):
        mat = self.distance(emb, emb)
        d = mat[idx_a, idx_b]
        cond = d <= self.margin
        return idx_a[cond]
"""

USER = """
import torch

from mlib.distances import Cos
from mlib.miner import Miner

miner = Miner(margin=0.2, distance=Cos())


@torch.compile(backend="eager")
def step(emb, a, b):
    return miner(emb, a, b)
"""

RUN = "step(torch.randn(6, 4), torch.arange(6), torch.arange(6).flip(0))"


def _one_file() -> str:
    """The four files as one module (the same lines for the miner's body: it comes last)."""
    body = "\n".join(
        part.replace("from .distances import Lp\n", "").replace("from .base import WithDistance\n", "")
        for part in (DISTANCES, BASE, MINER)
    )
    return body + USER.replace("from mlib.distances import Cos\nfrom mlib.miner import Miner\n", "")


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_call_result_of_an_attribute_a_base_init_stores(tmp_path):
    """``self.distance(emb, emb)`` where a base class of another file stores ``self.distance``
    (a constructor argument, or a default module): the call runs a module's forward, so its result
    is a tensor and the mask built from it selects a data-dependent size.  Dynamo: GB0036 at
    ``return idx_a[cond]`` (miner.py:13)."""
    write_tree(
        str(tmp_path),
        {
            "mlib/__init__.py": "",
            "mlib/distances.py": DISTANCES,
            "mlib/base.py": BASE,
            "mlib/miner.py": MINER,
            "user.py": USER,
        },
    )
    result = lint_tree(str(tmp_path))
    found = {(os.path.basename(d.path), d.code, d.span.start.line) for d in result.diagnostics}
    assert ("miner.py", "TC109", _line_of(MINER, "return idx_a[cond]")) in found


def test_call_result_of_an_inherited_attribute_in_one_file(tmp_path):
    source = _one_file()
    _regions, found = lint_main(str(tmp_path), source)
    assert ("TC109", _line_of(source, "return idx_a[cond]")) in found


@pytest.mark.dynamo
def test_dynamo_breaks_where_the_attribute_call_result_is_masked(tmp_path):
    from tests.helpers.dynamo_harness import run_example

    source = _one_file()
    path = os.path.join(str(tmp_path), "example.py")
    with open(path, "w") as fh:
        fh.write(source)
    result = run_example(path, source, RUN)
    assert result.error is None, result.error_text
    assert _line_of(source, "return idx_a[cond]") in result.lines_with(("GB0036",))
