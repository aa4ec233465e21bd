"""Members of ``self`` picked by a name built from a string (issue 12: held-out libraries).

``getattr(self, "{}_reduction".format(kind))`` returned by a helper method and called by the base
class (pytorch-metric-learning's reducers), ``getattr(self, f"{mode}_step")(x)``, and
``getattr(self, "layer%d" % i)(x)`` over numbered submodules (ResNet-style code) run the members
whose names match: each may run, as each branch of an ``if kind == ...`` chain may.  The truth is
Dynamo 2.13 (CPU, ``backend="eager"``): the Dynamo test runs the first program.
"""

from __future__ import annotations

import ast

import pytest
from tclint.rules.analysis.types_infer import name_pattern

from tests.helpers.lintutil import lint_main

REDUCER = """
import torch
from torch import nn


class BaseReducer(nn.Module):
    def forward(self, losses, reduction_type):
        reduction_func = self.get_reduction_func(reduction_type)
        return reduction_func(losses)

    def get_reduction_func(self, reduction_type):
        return getattr(self, "{}_reduction".format(reduction_type))

    def element_reduction(self, losses):
        raise NotImplementedError

    def triplet_reduction(self, losses):
        raise NotImplementedError


class ThresholdReducer(BaseReducer):
    def __init__(self, low=0.1):
        super().__init__()
        self.low = low

    def element_reduction(self, losses):
        return self.element_reduction_helper(losses)

    def triplet_reduction(self, losses):
        return self.element_reduction_helper(losses)

    def element_reduction_helper(self, losses):
        low_condition = losses > self.low
        losses = losses[low_condition]
        return losses.sum()

    def unrelated(self, losses):
        return losses.nonzero()


reducer = torch.compile(ThresholdReducer())


def run():
    reducer(torch.randn(16), "triplet")
"""
MASK_LINE = 34  # `losses = losses[low_condition]`
UNRELATED_LINE = 38  # `losses.nonzero()` in a method no name pattern matches


def test_a_method_picked_by_a_formatted_name_returned_by_a_helper(tmp_path):
    """``reduction_func = self.get_reduction_func(t); reduction_func(losses)`` with ``return
    getattr(self, "{}_reduction".format(t))``: the subclass's ``*_reduction`` methods run (the
    receiver is the compiled ``ThresholdReducer``), so the boolean mask in their helper breaks.
    Dynamo: GB0036 at line 34.  Before: neither method was reached (no finding)."""
    regions, found = lint_main(str(tmp_path), REDUCER)
    assert {"ThresholdReducer.triplet_reduction", "ThresholdReducer.element_reduction_helper"} <= regions
    assert ("TC109", MASK_LINE) in found
    assert "ThresholdReducer.unrelated" not in regions
    assert all(line != UNRELATED_LINE for _code, line in found)


@pytest.mark.dynamo
def test_the_reducer_breaks_where_tclint_says(tmp_path):
    """The truth of the program above: Dynamo breaks at the boolean mask only."""
    from tests.helpers.dynamo_harness import run_example

    path = str(tmp_path / "reducer.py")
    (tmp_path / "reducer.py").write_text(REDUCER)
    result = run_example(path, REDUCER, "run()")
    assert result.error is None, result.error_text
    assert result.lines_with(()) == {MASK_LINE}


DIRECT = """
import torch
from torch import nn


class Stepper(nn.Module):
    def __init__(self, mode="train"):
        super().__init__()
        self.mode = mode

    def forward(self, x):
        return getattr(self, f"{self.mode}_step")(x)

    def train_step(self, x):
        if x.sum() > 0:
            return x
        return -x

    def eval_step(self, x):
        return x.item()


model = torch.compile(Stepper())
"""


def test_a_method_picked_by_an_f_string_and_called_at_once(tmp_path):
    """``getattr(self, f"{self.mode}_step")(x)``: either ``*_step`` method runs compiled."""
    regions, found = lint_main(str(tmp_path), DIRECT)
    assert {"Stepper.train_step", "Stepper.eval_step"} <= regions
    assert ("TC102", 15) in found
    assert ("TC101", 20) in found


NUMBERED = """
import torch
from torch import nn


class Block(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = Block()
        self.layer2 = Block()

    def forward(self, x):
        for i in range(1, 3):
            x = getattr(self, "layer%d" % i)(x)
        return x


model = torch.compile(Net())
"""


def test_numbered_submodules_picked_by_a_percent_format(tmp_path):
    """``getattr(self, "layer%d" % i)(x)`` over ``self.layer1``, ``self.layer2``: their forward runs."""
    regions, found = lint_main(str(tmp_path), NUMBERED)
    assert "Block.forward" in regions
    assert ("TC102", 8) in found


@pytest.mark.parametrize(
    ("expr", "pattern"),
    [
        ('"layer1"', "layer1"),
        ('f"{kind}_reduction"', "*_reduction"),
        ('"{}_reduction".format(kind)', "*_reduction"),
        ('"{0}_{1}_loss".format(a, b)', "*_*_loss"),
        ('"conv%d" % i', "conv*"),
        ('"act_" + name', "act_*"),
        ('f"{a}{b}"', None),  # nothing written: any attribute could match
        ('f"x{a}"', None),  # too little written
        ("name", None),
        ('"not a name"', None),
    ],
)
def test_name_pattern(expr, pattern):
    node = ast.parse(expr, mode="eval").body
    assert name_pattern(node) == pattern
