"""Attributes ``__init__`` stores through a setter method, with a default (issue 12: held-out
libraries).

pytorch-metric-learning's losses call ``self.set_reducer(reducer)`` in ``__init__`` and the setter
stores ``self.reducer = self.get_default_reducer() if reducer is None else reducer``; the compiled
``forward`` calls ``self.reducer(x)``.  What runs there is the reducer the constructions pass and,
for a construction passing none, the default the factory method returns: both reducers' breaks
count.  The truth is Dynamo 2.13 (CPU, ``backend="eager"``): the Dynamo test runs the program.
"""

from __future__ import annotations

import pytest

from tests.helpers.lintutil import lint_main

SETTER = """
import torch
from torch import nn


class MeanReducer(nn.Module):
    def forward(self, x):
        print("mean")
        return x.mean()


class ThresholdReducer(nn.Module):
    def __init__(self, low=0.0):
        super().__init__()
        self.low = low

    def forward(self, x):
        return x[x > self.low].sum()


class Loss(nn.Module):
    def __init__(self, reducer=None):
        super().__init__()
        self.set_reducer(reducer)

    def get_default_reducer(self):
        return MeanReducer()

    def set_reducer(self, reducer):
        self.reducer = self.get_default_reducer() if reducer is None else reducer

    def forward(self, x):
        return self.reducer(x * 2)


given = torch.compile(Loss(ThresholdReducer(0.5)), backend="eager")
default = torch.compile(Loss(), backend="eager")


def run():
    given(torch.randn(8))
    default(torch.randn(8))
"""
PRINT_LINE = 8  # MeanReducer.forward: `print("mean")`, the default's break
MASK_LINE = 18  # ThresholdReducer.forward: `x[x > self.low]`, the passed reducer's break


def test_a_reducer_stored_by_a_setter_init_calls(tmp_path):
    """``self.set_reducer(reducer)`` in ``__init__``, the setter storing the argument or the
    factory's default: both reducers' forwards run.  Before: the attribute was a plain value,
    neither was reached (no finding)."""
    regions, found = lint_main(str(tmp_path), SETTER)
    assert {"ThresholdReducer.forward", "MeanReducer.forward"} <= regions
    assert ("TC109", MASK_LINE) in found
    assert ("TC104", PRINT_LINE) in found


def test_a_default_join_in_init_itself(tmp_path):
    """The same join written in ``__init__`` (``self.reducer = Default() if reducer is None else
    reducer``, a class constructed there rather than a factory method): both classes run.
    Before: only the default's class was kept (the passed reducer was not reached)."""
    code = SETTER.replace(
        "        self.set_reducer(reducer)\n",
        "        self.reducer = MeanReducer() if reducer is None else reducer\n",
    )
    regions, found = lint_main(str(tmp_path), code)
    assert {"ThresholdReducer.forward", "MeanReducer.forward"} <= regions
    assert ("TC109", MASK_LINE) in found


def test_a_setter_given_something_else_is_not_the_constructor_argument(tmp_path):
    """A setter ``__init__`` calls with a value of its own (not one of its parameters): what the
    setter stores is not the constructor's argument, so the passed reducer is not followed."""
    code = SETTER.replace("self.set_reducer(reducer)", "self.set_reducer(None)")
    regions, found = lint_main(str(tmp_path), code)
    assert "ThresholdReducer.forward" not in regions
    assert ("TC109", MASK_LINE) not in found


@pytest.mark.dynamo
def test_the_setter_program_breaks_where_tclint_says(tmp_path):
    """The truth of the program above: the passed reducer breaks at its mask, the default one at
    its print."""
    from tests.helpers.dynamo_harness import run_example

    path = str(tmp_path / "setter.py")
    (tmp_path / "setter.py").write_text(SETTER)
    result = run_example(path, SETTER, "run()")
    assert result.error is None, result.error_text
    assert result.lines_with(()) == {PRINT_LINE, MASK_LINE}


SUBCLASS = SETTER.replace(
    'given = torch.compile(Loss(ThresholdReducer(0.5)), backend="eager")',
    """class MarginLoss(Loss):
    def __init__(self, margin=0.1, **kwargs):
        super().__init__(**kwargs)
        self.margin = margin


given = torch.compile(MarginLoss(margin=0.2, reducer=ThresholdReducer(0.5)), backend="eager")""",
)


def test_a_keyword_a_subclass_hands_on_through_its_kwargs(tmp_path):
    """``MarginLoss(margin=0.2, reducer=r)``, ``MarginLoss.__init__(self, margin, **kwargs)``
    calling ``super().__init__(**kwargs)``: ``reducer`` reaches the base's ``__init__`` and its
    setter, so the passed reducer runs (pytorch-metric-learning's losses).  Before: a subclass
    with its own constructor was never taken for a construction of the base."""
    assert "MarginLoss(margin=0.2" in SUBCLASS
    regions, found = lint_main(str(tmp_path), SUBCLASS)
    assert "ThresholdReducer.forward" in regions
    assert ("TC109", MASK_LINE) in found


def test_a_subclass_keeping_the_keyword_does_not_hand_it_on(tmp_path):
    """A subclass whose own ``__init__`` has the parameter (``reducer=None``) and does not pass
    it on: the base is given its default, not the construction's reducer."""
    code = SUBCLASS.replace(
        "def __init__(self, margin=0.1, **kwargs):", "def __init__(self, margin=0.1, reducer=None, **kwargs):"
    )
    regions, found = lint_main(str(tmp_path), code)
    assert "ThresholdReducer.forward" not in regions
