"""A collection of bound methods of a module container's elements handed to a helper that iterates
it and calls each item (issue 12, found on nflows: ``CompositeTransform.inverse`` does ``funcs =
(transform.inverse for transform in self._transforms[::-1])`` then ``self._cascade(inputs, funcs,
context)``, whose ``for func in funcs: func(outputs, context)`` runs each transform's ``inverse``;
``autoregressive.py:46`` breaks there).  Before, the generator was an unknown container, so no
element's method was reached.  What runs is that method of each element, not its ``forward``.
The truth is Dynamo's (2.13, CPU, ``backend="eager"``): one break at each marked line, none
elsewhere (the ``forward`` methods never run)."""

from __future__ import annotations

import pytest

from tests.helpers.lintutil import lint_main

PROGRAM = """
import torch
from torch import nn


class Scale(nn.Module):
    def forward(self, x, context=None):
        print("forward")  # never run
        return x * 2

    def inverse(self, x, context=None):
        print("inverse")  # break: scale-inverse
        return x / 2


class Shift(nn.Module):
    def forward(self, x, context=None):
        print("forward")  # never run
        return x + 1

    def inverse(self, x, context=None):
        if x.sum() > 0:  # break: shift-inverse
            return x - 1
        return x

    def encode(self, x):
        print("encode")  # break: shift-encode
        return x


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

    def inverse(self, inputs, context=None):
        funcs = (transform.inverse for transform in self._transforms[::-1])
        return self._cascade(inputs, funcs, context)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Shift()])

    def run(self, x, steps):
        for step in steps:
            x = step(x)
        return x

    def forward(self, x):
        return self.run(x, [b.encode for b in self.blocks])


def run():
    composite = Composite([Scale(), Shift()])
    torch.compile(composite.inverse)(torch.ones(3))
    torch.compile(Encoder())(torch.randn(3))
"""

MARKED = ("scale-inverse", "shift-inverse", "shift-encode")


def _marked(tag: str) -> int:
    """The line of PROGRAM marked ``# break: <tag>``."""
    return next(i for i, line in enumerate(PROGRAM.splitlines(), 1) if line.endswith(f"# break: {tag}"))


def test_the_bound_method_of_each_element_is_reached(tmp_path):
    """Before: Composite.inverse/_cascade and Encoder.forward/run were regions, no element's method."""
    regions, found = lint_main(str(tmp_path), PROGRAM)
    assert {"Scale.inverse", "Shift.inverse", "Shift.encode"} <= regions
    assert not {"Scale.forward", "Shift.forward"} & regions
    assert {line for _code, line in found} == {_marked(t) for t in MARKED}


@pytest.mark.dynamo
def test_dynamo_breaks_at_the_marked_lines(tmp_path):
    """The truth of PROGRAM: one break at each marked line, none elsewhere."""
    from tests.helpers.dynamo_harness import run_example

    path = tmp_path / "bound.py"
    path.write_text(PROGRAM)
    result = run_example(str(path), PROGRAM, "run()")
    assert result.error is None, result.error_text
    assert result.lines_with(()) == {_marked(t) for t in MARKED}
