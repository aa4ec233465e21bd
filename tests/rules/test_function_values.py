"""A function picked into a local variable on each branch and called later, or handed to a helper
that calls it (issue 12, found on held-out normflows: ``spline_fn = splines.rational_quadratic_spline``
or ``splines.unconstrained_rational_quadratic_spline`` then ``spline_fn(inputs=...)`` in a compiled
autoregressive flow, GB0036 at splines.py:40; ``estimator_fn = neumann_logdet_estimator`` or
``basic_logdet_estimator`` handed to ``mem_eff_wrapper(estimator_fn, ...)`` and on to
``MemoryEfficientLogDetEstimator.apply(estimator_fn, ...)``, whose forward calls it, GB9186 at
residual.py:373).  The old join of two function references was an unknown callable: neither
function was reached.  The truth is Dynamo's (2.13, CPU, ``backend="eager"``): one break at each
marked line, and no other."""

from __future__ import annotations

import pytest

from tests.helpers.lintutil import lint_main, lint_tree, write_tree

PROGRAM = """
import torch
from torch import nn


def linear_tails(x):
    mask = x > 0
    return x[mask].sum() + x  # break: linear


def circular_tails(x):
    print("circular")  # break: circular
    return x * 2


def neumann(g):
    return g * g.sum().item()  # break: neumann


def basic(g):
    print("basic")  # break: basic
    return g + 1


def run_estimator(fn, g):
    return fn(g)


class Estimator(torch.autograd.Function):
    @staticmethod
    def forward(ctx, fn, g):
        return fn(g)

    @staticmethod
    def backward(ctx, grad):
        return None, grad


class Flow(nn.Module):
    def __init__(self, tails, exact):
        super().__init__()
        self.tails = tails
        self.exact = exact

    def forward(self, x):
        if self.tails == "linear":
            spline_fn = linear_tails
        else:
            spline_fn = circular_tails
        y = spline_fn(x)
        estimator = neumann if self.exact else basic
        z = run_estimator(estimator, x)
        w = Estimator.apply(estimator, x)
        return y + z + w


linear = torch.compile(Flow("linear", True))
circular = torch.compile(Flow("circular", False))


def run():
    x = torch.randn(4)
    linear(x)
    circular(x)
"""

MARKED = ("linear", "circular", "neumann", "basic")


def _marked(tag: str) -> int:
    """The line of PROGRAM marked ``# break: <tag>``."""
    return next(i for i, line in enumerate(PROGRAM.splitlines(), 1) if line.endswith(f"# break: {tag}"))


def test_each_function_a_variable_may_hold_is_reached(tmp_path):
    """Before: only Flow.forward and run_estimator were compiled regions; no finding."""
    regions, found = lint_main(str(tmp_path), PROGRAM)
    assert {"linear_tails", "circular_tails", "neumann", "basic", "Estimator.forward"} <= regions
    assert {line for _code, line in found} == {_marked(t) for t in MARKED}


def test_a_module_attribute_picked_on_each_branch(tmp_path):
    """``fn = splines.a`` / ``fn = splines.b`` from another module of the package (normflows' form)."""
    write_tree(
        str(tmp_path),
        {
            "pkg/__init__.py": "",
            "pkg/splines.py": "def plain(x):\n    print('plain')\n    return x\n\n\ndef masked(x):\n    return x[x > 0]\n",
            "pkg/flow.py": """\
import torch
from torch import nn

from pkg import splines


class Flow(nn.Module):
    def __init__(self, tails=None):
        super().__init__()
        self.tails = tails

    def forward(self, x):
        if self.tails is None:
            spline_fn = splines.plain
        else:
            spline_fn = splines.masked
        return spline_fn(x)
""",
            "run.py": "import torch\nfrom pkg.flow import Flow\n\nstep = torch.compile(Flow())\nstep(torch.randn(4))\n",
        },
    )
    result = lint_tree(str(tmp_path))
    found = {(d.path, d.span.start.line, d.code) for d in result.diagnostics}
    assert {("pkg/splines.py", 2, "TC104"), ("pkg/splines.py", 7, "TC109")} <= found


@pytest.mark.dynamo
def test_dynamo_breaks_at_the_marked_lines(tmp_path):
    """The truth of PROGRAM: one break at each marked line, none elsewhere."""
    from tests.helpers.dynamo_harness import run_example

    path = tmp_path / "flows.py"
    path.write_text(PROGRAM)
    result = run_example(str(path), PROGRAM, "run()")
    assert result.error is None, result.error_text
    assert result.lines_with(()) == {_marked(t) for t in MARKED}
