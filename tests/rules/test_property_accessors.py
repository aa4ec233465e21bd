"""Property accessors (issue 12, found on fresh user programs): a ``@x.setter`` keeps the getter's
facts, and a root whose frame Dynamo drops gets no variants when no frame below it is traced
again (a ``cached_property`` getter runs on the first read only).  Truth: ``tclint probe``,
torch 2.13 CPU, eager (given per case)."""

from __future__ import annotations

import textwrap

import pytest
from tclint.rules.variants import variants

from tests.helpers.lintutil import lint_code, lint_main

SETTER = """
import torch
from torch import nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self._gain = 1.0

    @property
    def scale(self):
        return self.lin.weight.abs().mean().item() * self._gain

    @scale.setter
    def scale(self, value):
        self._gain = value

    def forward(self, x):
        y = self.lin(x)
        z = y * self.scale
        print("after")
        return z + 1


model = torch.compile(Scaled())
"""


def test_a_setter_keeps_the_getters_facts(tmp_path):
    """Python defines ``@scale.setter`` under the getter's name; the getter is what a read runs
    (its ``.item()`` breaks and drops the reading ``forward``, so the ``print`` never breaks)."""
    _regions, found = lint_main(str(tmp_path), SETTER)
    assert ("TC101", 14) in found
    assert ("TC104", 23) not in found


DROPPED = """
import functools
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.temp = nn.Parameter(torch.ones(()))

    @{decorator}
    def gain(self):
        return self.temp.item()

    def forward(self, h):
        return self.lin(h) * self.gain


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(2)])
        self.out = nn.Linear(8, 4)

    def forward(self, h):
        for blk in self.blocks:
            h = blk(h)
        return self.out(h)


model = torch.compile(TinyLM())


def main():
    x = torch.randn(2, 8)
    model(x).sum().backward()
    with torch.no_grad():
        model(x)
    model(x)
"""


@pytest.mark.parametrize(
    ("decorator", "count"),
    [
        ("property", 2),  # measured: `Block.gain` recompiled 1 time (grad mode), compiled again on every read
        ("functools.cached_property", 1),  # measured: no recompile (the getter runs on the first read only)
    ],
)
def test_a_dropped_root_gets_variants_only_where_a_frame_is_traced_again(tmp_path, decorator, count):
    result = lint_code(tmp_path, textwrap.dedent(DROPPED).replace("{decorator}", decorator))
    (v,) = [v for k, v in variants(result.project).items() if k.endswith("TinyLM.forward")]
    assert v.runs_eagerly_from is not None
    assert v.count == count
    tc208 = [d for d in result.diagnostics if d.code == "TC208"]
    assert bool(tc208) == (count > 1)
