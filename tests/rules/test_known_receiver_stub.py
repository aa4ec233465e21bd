"""A placeholder method inherited by a receiver whose class is known runs that placeholder, not
every subclass's override (issue 12, found on held-out normflows: ``self.flows =
nn.ModuleList(flows)`` holds the classes the constructions pass, ``Radial`` has no ``inverse``,
so ``flow.inverse(z)`` runs ``Flow.inverse``, a ``raise NotImplementedError``; fanning out to all
of ``Flow``'s overrides put 18 findings on lines Dynamo never ran).  The overrides of a base's
placeholder are still followed when only the base is known (zuko's ``transform: Transform``:
tests/rules/test_libfollow.py, the abstract-dispatch tests).  The truth is Dynamo's (2.13, CPU,
``backend="eager"``): the marked ``print`` breaks, the stub's ``raise`` breaks (tclint does not
report a raise), the never-constructed ``Never.inverse`` is never traced."""

from __future__ import annotations

import pytest

from tests.helpers.lintutil import lint_main

PROGRAM = """
import torch
from torch import nn


class Flow(nn.Module):
    def inverse(self, z):
        raise NotImplementedError("no inverse")  # dynamo: stub


class Planar(Flow):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2))

    def inverse(self, z):
        print("planar inverse")  # break: planar
        return z * self.w


class Radial(Flow):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.ones(2))


class Never(Flow):
    def inverse(self, z):
        if z.sum().item() > 0:  # never run
            return z
        return -z


class Model(nn.Module):
    def __init__(self, flows):
        super().__init__()
        self.flows = nn.ModuleList(flows)

    def forward(self, z):
        for flow in self.flows:
            z = flow.inverse(z)
        return z


model = Model([Planar(), Radial()])
compiled = torch.compile(model, backend="eager")


def run():
    try:
        compiled(torch.ones(2))
    except NotImplementedError:
        pass
"""


def _marked(tag: str) -> int:
    """The line of PROGRAM ending with ``# <tag>``."""
    return next(i for i, line in enumerate(PROGRAM.splitlines(), 1) if line.endswith(f"# {tag}"))


def test_an_inherited_stub_does_not_dispatch_to_unrelated_overrides(tmp_path):
    """Before: ``Never.inverse`` (never constructed, never run) was a region and its ``.item()``
    a finding, reached through ``Flow.inverse``'s overrides for the element ``Radial``."""
    regions, found = lint_main(str(tmp_path), PROGRAM)
    assert ("TC104", _marked("break: planar")) in found
    assert {line for _code, line in found} == {_marked("break: planar")}
    assert {"Planar.inverse", "Flow.inverse"} <= regions
    assert "Never.inverse" not in regions


@pytest.mark.dynamo
def test_dynamo_never_runs_the_unconstructed_override(tmp_path):
    from tests.helpers.dynamo_harness import run_example

    path = tmp_path / "flows.py"
    path.write_text(PROGRAM)
    result = run_example(str(path), PROGRAM, "run()")
    assert result.error is None, result.error_text
    assert result.lines_with(()) == {_marked("break: planar"), _marked("dynamo: stub")}
