"""Idioms found measuring tclint on normflows, a library nobody here had tuned it on (issue 12
point 6, bench/lib_eval.py).  Each program is small and of our own; the truth in each docstring is
what Dynamo 2.13 (CPU, ``backend="eager"``) reported running it."""

from __future__ import annotations

from tests.helpers.lintutil import lint_main

NUMPY_OF_PYTHON_VALUES = """
import numpy as np
import torch
from torch import nn


class Autoregressive(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)

    def forward(self, x):
        steps = np.prod(x.shape[1:])
        out = torch.zeros_like(x)
        for _ in range(steps):
            out = self.lin(out) + x
        scale = np.log(np.exp(1.0) - 1)
        return out * scale


def flatten(x):
    return x.reshape(len(x), -1)[:, : int(np.sum([1, 2]))]


model = torch.compile(Autoregressive())
compiled = torch.compile(flatten)
"""


def test_numpy_function_of_python_values_is_a_traced_array(tmp_path):
    """``range(np.prod(x.shape[1:]))``: Dynamo traces the NumPy call on a shape (Python ints) as
    an ndarray, and ``range()`` of it breaks (GB0059, line 15; normflows' autoregressive
    ``inverse``); ``int(np.sum([1, 2]))`` copies it out (GB0124-like data-dependent operator, line
    22).  ``np.log(np.exp(1.0) - 1)`` used as a factor does not break: no finding on line 17."""
    regions, found = lint_main(str(tmp_path), NUMPY_OF_PYTHON_VALUES)
    assert {"Autoregressive.forward", "flatten"} <= regions
    assert {("TC101", 15), ("TC101", 22)} <= found
    assert not {f for f in found if f[1] == 17}
