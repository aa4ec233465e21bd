"""A module container handed to a helper that iterates it and calls each element (issue 12, found
on held-out nflows: ``CompositeTransform.forward`` does ``funcs = self._transforms`` then
``self._cascade(inputs, funcs, context)``, and the staticmethod ``_cascade`` runs ``for func in
funcs: outputs, logabsdet = func(outputs, context)``; every graph break of nflows' transforms was
outside the regions).  Before, the loop variable over a parameter was an unknown value and the
local holding the container was not a passed module, so no element's ``forward`` was reached.
The truth is Dynamo's (2.13, CPU, ``backend="eager"``): one break at each marked line."""

from __future__ import annotations

import pytest

from tests.helpers.lintutil import lint_main

PROGRAM = """
import torch
from torch import nn


class Gate(nn.Module):
    def forward(self, x, context=None):
        if x.sum() > 0:  # break: gate
            return x * 2
        return x


class Shout(nn.Module):
    def forward(self, x, context=None):
        print("shout")  # break: shout
        return x + 1


class Composite(nn.Module):
    def __init__(self, transforms):
        super().__init__()
        self._transforms = nn.ModuleList(transforms)

    @staticmethod
    def _cascade(inputs, funcs, context):
        outputs = inputs
        for func in funcs:
            outputs = func(outputs, context)
        return outputs

    def forward(self, inputs, context=None):
        funcs = self._transforms
        return self._cascade(inputs, funcs, context)


class Chain(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)

    def run(self, x, mods):
        for m in mods:
            x = m(x)
        return x

    def forward(self, x):
        return self.run(x, self.blocks)


class Tail(nn.Module):
    def forward(self, x):
        return x[x > 0]  # break: tail


def run():
    layers = []
    for _ in range(2):
        layers.append(Gate())
    layers.append(Shout())
    composite = torch.compile(Composite(layers))
    composite(torch.ones(3))
    chain = Chain([Tail()])
    torch.compile(chain)(torch.randn(3))
"""

MARKED = ("gate", "shout", "tail")


def _marked(tag: str) -> int:
    """The line of PROGRAM marked ``# break: <tag>``."""
    return next(i for i, line in enumerate(PROGRAM.splitlines(), 1) if line.endswith(f"# break: {tag}"))


def test_each_element_of_a_container_a_helper_iterates_is_reached(tmp_path):
    """Before: Composite.forward/_cascade and Chain.forward/run were regions, no element's forward."""
    regions, found = lint_main(str(tmp_path), PROGRAM)
    assert {"Gate.forward", "Shout.forward", "Tail.forward"} <= regions
    assert {line for _code, line in found} == {_marked(t) for t in MARKED}


@pytest.mark.dynamo
def test_dynamo_breaks_at_the_marked_lines(tmp_path):
    """The truth of PROGRAM: one break at each marked line, none elsewhere."""
    from tests.helpers.dynamo_harness import run_example

    path = tmp_path / "composite.py"
    path.write_text(PROGRAM)
    result = run_example(str(path), PROGRAM, "run()")
    assert result.error is None, result.error_text
    assert result.lines_with(()) == {_marked(t) for t in MARKED}
