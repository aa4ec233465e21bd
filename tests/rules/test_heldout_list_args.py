"""Modules handed to a constructor in a list, and stored in a container it fills from it (issue 12,
found on held-out normflows: ``flows = [nf.flows.Planar(...) for _ in range(k)]; model =
nf.NormalizingFlow(q0, flows)`` with ``self.flows = nn.ModuleList(flows)``, then ``for flow in
self.flows: z = flow(z)`` in the compiled ``log_prob``).  What runs there is what the caller put in
the list: a list literal, a comprehension, ``a + b``, a local list filled by ``append`` / ``+=``, a
keyword argument, ``*args`` (``Compose(A(), B())`` storing ``self.transforms = transforms``) and
``nn.Sequential(*layers)`` of a parameter.  The truth is Dynamo's (2.13, CPU, ``backend="eager"``):
one break at each marked line, and no other."""

from __future__ import annotations

import pytest

from tests.helpers.lintutil import lint_main

PROGRAM = """
import torch
from torch import nn


class Planar(nn.Module):
    def forward(self, z):
        if z.sum() > 0:  # break: planar
            z = z * 2
        return z

    def inverse(self, z):
        return z / 2


class Radial(nn.Module):
    def forward(self, z):
        n = z.nonzero()  # break: radial
        return z + n.sum()

    def inverse(self, z):
        return z - 1


class Affine(nn.Module):
    def forward(self, z):
        return z * 3

    def inverse(self, z):
        return z / z.max().item()  # break: affine


class Spline(nn.Module):
    def forward(self, z):
        return z + 2

    def inverse(self, z):
        print("spline")  # break: spline
        return z - 2


class Shift(nn.Module):
    def forward(self, z):
        k = torch.nonzero(z > 0)  # break: shift
        return z + k.numel()


class Scale(nn.Module):
    def forward(self, z):
        return z * z.mean().item()  # break: scale


class Flow(nn.Module):
    def __init__(self, q0, flows):
        super().__init__()
        self.q0 = q0
        self.flows = nn.ModuleList(flows)

    def log_prob(self, x):
        for flow in self.flows:
            x = flow(x)
        return x.sum()

    def sample(self, z):
        for i in range(len(self.flows) - 1, -1, -1):
            z = self.flows[i].inverse(z)
        return z


class Compose(nn.Module):
    def __init__(self, *transforms):
        super().__init__()
        self.transforms = transforms

    def forward(self, x):
        for t in self.transforms:
            x = t(x)
        return x


class Stack(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(x)


def build_flow():
    flows = []
    for _ in range(2):
        flows.append(Affine())
    flows += [Spline()]
    return Flow(None, flows)


flow_a = Flow(None, [Planar() for _ in range(2)] + [Radial()])
flow_b = build_flow()
log_prob = torch.compile(flow_a.log_prob)
sample = torch.compile(flow_b.sample)
composed = torch.compile(Compose(Shift(), Shift()))
stacked = torch.compile(Stack(layers=[Scale(), Scale()]))


def run():
    x = torch.randn(4, 2)
    log_prob(x)
    sample(x)
    composed(x)
    stacked(x)
"""


def _marked(tag: str) -> int:
    """The line of PROGRAM marked ``# break: <tag>``."""
    return next(i for i, line in enumerate(PROGRAM.splitlines(), 1) if line.endswith(f"# break: {tag}"))


@pytest.mark.parametrize(
    ("tag", "code", "how"),
    [
        ("planar", "TC102", "a comprehension + a list literal, by position"),
        ("radial", "TC109", "a comprehension + a list literal, by position"),
        ("affine", "TC101", "a local list filled by append, through a factory; an element's method"),
        ("spline", "TC104", "a local list extended with +="),
        ("shift", "TC109", "modules given to a *args parameter stored as a tuple"),
        ("scale", "TC101", "a keyword list spread into nn.Sequential(*layers)"),
    ],
)
def test_modules_given_in_a_list_run_where_the_container_is_called(tmp_path, tag, code, how):
    """Before: none of these forwards was reached from its compile site (no finding at all)."""
    _regions, found = lint_main(str(tmp_path), PROGRAM)
    assert (code, _marked(tag)) in found, how


def test_only_the_marked_lines_are_found(tmp_path):
    regions, found = lint_main(str(tmp_path), PROGRAM)
    assert {line for _code, line in found} == {
        _marked(t) for t in ("planar", "radial", "affine", "spline", "shift", "scale")
    }
    assert {
        "Flow.log_prob",
        "Planar.forward",
        "Radial.forward",
        "Affine.inverse",
        "Spline.inverse",
    } <= regions
    assert {"Compose.forward", "Shift.forward", "Stack.forward", "Scale.forward"} <= regions


@pytest.mark.dynamo
def test_dynamo_breaks_at_the_marked_lines(tmp_path):
    """The truth of PROGRAM: one break at each marked line (each callee frame compiled on its own
    once the loop's frame is dropped), none elsewhere."""
    from tests.helpers.dynamo_harness import run_example

    path = tmp_path / "flows.py"
    path.write_text(PROGRAM)
    result = run_example(str(path), PROGRAM, "run()")
    assert result.error is None, result.error_text
    assert result.lines_with(()) == {
        _marked(t) for t in ("planar", "radial", "affine", "spline", "shift", "scale")
    }
