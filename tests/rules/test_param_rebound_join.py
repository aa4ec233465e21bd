"""A parameter rebound on some paths of an ``if`` only keeps, on the other paths, the type it was
given (issue 12, found on torchsde: ``BrownianInterval.__call__(self, ta, tb=None)`` does ``if tb is
None: ta, tb = self._start, ta`` and then ``ta = float(ta)``; the compiled caller passes tensors, so
``float(ta)`` breaks).  Before, the join after the ``if`` took the rebinding's type alone (the
parameter was not in the environment of the path that kept it), so ``float(ta)`` was a float of a
float.  A test of the parameter's own type (``if torch.is_tensor(t): t = float(t)``) still leaves
it a number after the ``if``.  The truth is Dynamo's (2.13, CPU, ``backend="eager"``): one break at
each marked line, none elsewhere."""

from __future__ import annotations

import pytest

from tests.helpers.lintutil import lint_main

PROGRAM = """
import torch


class Interval:
    def __init__(self, t0):
        self._start = 0.0

    def __call__(self, ta, tb=None):
        if tb is None:
            ta, tb = self._start, ta
        ta = float(ta)  # break: tuple-rebound
        return torch.zeros(3) * ta


def scaled(x, scale, shift=None):
    if shift is None:
        scale = 0.5
    return x * float(scale)  # break: rebound


def clamp(x, t):
    if torch.is_tensor(t):
        t = float(t)  # break: type-tested
    if t > 0:
        return x * t
    return x


interval = Interval(0.0)


@torch.compile(backend="eager")
def step(x, ts):
    y = interval(ts[0], ts[1])
    y = y + scaled(x, ts[1], ts[0])
    return y + clamp(x, ts[2])


def run():
    step(torch.ones(3), torch.linspace(0, 1, 4))
"""

MARKED = ("tuple-rebound", "rebound", "type-tested")


def _marked(tag: str) -> int:
    """The line of PROGRAM marked ``# break: <tag>``."""
    return next(i for i, line in enumerate(PROGRAM.splitlines(), 1) if line.endswith(f"# break: {tag}"))


def test_a_parameter_rebound_on_one_path_keeps_its_type_on_the_others(tmp_path):
    """Before: only `type-tested` was found (the two rebound parameters were taken as floats)."""
    _regions, found = lint_main(str(tmp_path), PROGRAM)
    assert {line for _code, line in found} == {_marked(t) for t in MARKED}


@pytest.mark.dynamo
def test_dynamo_breaks_at_the_marked_lines(tmp_path):
    """The truth of PROGRAM: one break at each marked line, none elsewhere."""
    from tests.helpers.dynamo_harness import run_example

    path = tmp_path / "rebound.py"
    path.write_text(PROGRAM)
    result = run_example(str(path), PROGRAM, "run()")
    assert result.error is None, result.error_text
    assert result.lines_with(()) == {_marked(t) for t in MARKED}
