"""What a compiled container holds is what the program that compiles it builds, not what a test file
or another script puts there (issue 12, found on held-out normflows: ``Residual(net)`` stores
``self.nnet = net``; the user's script gives it a ``LipschitzMLP``, only ``residual_test.py`` a
``LipschitzCNN``, yet the old join over every construction of the linted tree put
``InducedNormConv2d``'s branches into the user's regions: 14 findings on lines Dynamo never ran).
A construction counts when its file is one the compile sites' files import, transitively; when no
such file builds the class, every construction still counts (and with ``assume-compiled`` roots,
which name no program).  The truth is Dynamo's (2.13, CPU, ``backend="eager"``): running run.py
breaks at Good's print only."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers.lintutil import lint_tree, write_tree

TREE = {
    "lib/__init__.py": "from .flow import Bad, Flow, Good\n",
    "lib/flow.py": """\
import torch
from torch import nn


class Good(nn.Module):
    def forward(self, z):
        print("good")
        return z * 2


class Bad(nn.Module):
    def forward(self, z):
        return z * z.sum().item()


class Flow(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)

    def forward(self, z):
        for block in self.blocks:
            z = block(z)
        return z
""",
    "lib/flow_test.py": """\
import torch

from lib import Bad, Flow


def test_bad():
    Flow([Bad(), Bad()])(torch.randn(2))
""",
    "run.py": """\
import torch

from lib import Flow, Good

model = torch.compile(Flow([Good(), Good()]), backend="eager")
model(torch.randn(2))
""",
}

GOOD = ("lib/flow.py", 7, "TC104")
BAD = ("lib/flow.py", 13, "TC101")


def _found(tmp_path, settings=None) -> set[tuple[str, int, str]]:
    result = lint_tree(str(tmp_path), settings=settings)
    return {(d.path.replace(os.sep, "/"), d.span.start.line, d.code) for d in result.diagnostics}


def test_a_test_files_construction_does_not_reach_the_programs_regions(tmp_path):
    write_tree(str(tmp_path), TREE)
    found = _found(tmp_path)
    assert GOOD in found
    assert BAD not in found  # the old code: TC101 at Bad.forward, built only by lib/flow_test.py


def test_when_only_another_file_builds_the_class_its_constructions_still_count(tmp_path):
    tree = dict(TREE)
    tree["run.py"] = "import torch\n\nimport lib\n\nmodel = torch.compile(lib.make(), backend='eager')\n"
    tree["lib/__init__.py"] = (
        "from .flow import Bad, Flow, Good\n\n\ndef make():\n    return Flow(BLOCKS)\n\n\nBLOCKS = []\n"
    )
    write_tree(str(tmp_path), tree)
    assert BAD in _found(
        tmp_path
    )  # Flow(BLOCKS) describes nothing: the test file's Flow([Bad(), ...]) is all
    assert BAD in _found(tmp_path, {"assume-compiled": ["lib.flow:Flow.forward"]})


def test_a_script_running_the_packages_compile_site_is_part_of_the_program(tmp_path):
    """``lib/train.py`` compiles what ``fit(model)`` is given; run.py imports it and gives it
    ``Flow([Good()])``, while the package's own ``default()`` builds ``Flow([Other()])``."""
    tree = dict(TREE)
    tree["lib/train.py"] = (
        "import torch\n\nfrom lib.flow import Flow, Good\n\n\n"
        "def fit(model):\n    step = torch.compile(model)\n    return step(torch.randn(2))\n\n\n"
        "def default():\n    return Flow([Good()])\n"
    )
    tree["run.py"] = "from lib.flow import Bad, Flow\nfrom lib.train import fit\n\nfit(Flow([Bad()]))\n"
    del tree["lib/flow_test.py"]
    write_tree(str(tmp_path), tree)
    assert BAD in _found(tmp_path)  # run.py runs lib/train.py's compile site


@pytest.mark.dynamo
def test_dynamo_runs_only_what_the_program_builds(tmp_path):
    write_tree(str(tmp_path), TREE)
    env = {**os.environ, "TORCH_LOGS": "graph_breaks"}
    out = subprocess.run(
        [sys.executable, "run.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    breaks = {line for line in out.stderr.splitlines() if "Graph break in user code at" in line}
    assert breaks and all(line.endswith("lib/flow.py:7") for line in breaks), breaks
