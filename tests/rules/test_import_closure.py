"""A script and its local package in a folder with no project marker (no pyproject.toml, setup file
or repository): ``tclint check run.py`` indexes the modules run.py imports, as Python finds them
from the script's folder, and ``tclint check models/seq.py`` the scripts beside the package that
import it, so the compile site resolves and the model is linted; nothing else is read, nothing is
imported.  The old code indexed only the given files: TC311 on run.py, nothing on models/seq.py."""

from __future__ import annotations

import os

from tclint.rules.config import ConfigResolver
from tclint.rules.engine import Linter
from tclint.rules.import_closure import import_closure

from tests.helpers.lintutil import write_tree

TRAP = "raise SystemExit('imported: linting must never run project code')\n"

TREE = {
    "run.py": """\
import torch
from models import Seq2Seq
from . import nothing_here  # a relative import beyond any package: ignored

net = Seq2Seq().eval()
fwd = torch.compile(net.forward, dynamic=False)
for n in range(3, 12):
    fwd(torch.randn(2, n, 8))
""",
    "models/__init__.py": TRAP + "from .seq import Seq2Seq\n",
    "models/seq.py": """\
import torch
from torch import nn

from .layers import Norm


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = Norm()

    def forward(self, x):
        h = self.norm(x)
        if h.sum().item() > 0:
            return h
        return -h
""",
    "models/layers.py": """\
from torch import nn


class Norm(nn.Module):
    def forward(self, x):
        print(x.shape)
        return x
""",
    "unrelated.py": "import os\nprint('not imported by anything linted')\n",
    "other/big.py": TRAP,
}


def _lint(root: str, paths: list[str]):
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return Linter(ConfigResolver(None), cache=None, jobs=1).lint_paths(paths)
    finally:
        os.chdir(cwd)


def test_the_closure_is_what_python_would_import_from_the_scripts_folder(tmp_path):
    write_tree(str(tmp_path), TREE)
    found = {os.path.relpath(p, tmp_path) for p in import_closure([str(tmp_path / "run.py")])}
    assert found == {"models/__init__.py", "models/seq.py", "models/layers.py"}
    beside = {os.path.relpath(p, tmp_path) for p in import_closure([str(tmp_path / "models" / "layers.py")])}
    assert beside == {"run.py", "models/__init__.py", "models/seq.py"}  # the script importing its package


def test_a_script_without_a_project_marker_is_linted_with_its_local_package(tmp_path):
    write_tree(str(tmp_path), TREE)
    run = _lint(str(tmp_path), ["run.py"])
    codes = {(d.path, d.code) for d in run.diagnostics}
    assert ("run.py", "TC311") not in codes
    (tc207,) = [d for d in run.diagnostics if d.code == "TC207"]
    assert "Seq2Seq.forward" in tc207.message and tc207.extra["looped"]
    assert {d.path for d in run.diagnostics} == {"run.py"}  # only the given file is reported
    model = _lint(str(tmp_path), [os.path.join("models", "seq.py")])
    assert [(d.line, d.code) for d in model.diagnostics] == [(14, "TC101")]
    layers = _lint(str(tmp_path), [os.path.join("models", "layers.py")])
    assert [(d.line, d.code) for d in layers.diagnostics] == [(6, "TC104")]


# A library given beside a script from a folder of installed distributions (how bench/lib_eval.py
# lints normflows: `tclint check user.py .../site-packages/normflows`, no project marker above
# both).  The old closure followed the library's imports from site-packages and indexed 2,069
# files for normflows' 69 (torch's 1,251, numpy, sympy, jinja2, ...): two minutes to list them,
# eight to lint, and with torch's own classes read as the project's, normflows'
# MemoryEfficientLogDetEstimator.forward (an autograd.Function run through `.apply`, GB9186 at
# `torch.autograd.grad` there) left the regions.
INSTALLED = {
    "site-packages/flowlib/__init__.py": TRAP + "from .core import Flow\nimport numpy\n",
    "site-packages/flowlib/core.py": """\
import torch
from torch import nn


class Estimator(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.detach().requires_grad_(True)
        return torch.autograd.grad(y.sum(), y)[0]

    @staticmethod
    def backward(ctx, g):
        return g


class Flow(nn.Module):
    def forward(self, x):
        return Estimator.apply(x)
""",
    "site-packages/torch/__init__.py": TRAP + "from . import autograd, nn\n",
    "site-packages/torch/autograd/__init__.py": TRAP
    + "class Function:\n    @classmethod\n    def apply(cls, *args):\n        return cls.forward(None, *args)\n",
    "site-packages/torch/nn/__init__.py": TRAP + "class Module:\n    pass\n",
    "site-packages/numpy/__init__.py": TRAP,
    "site-packages/helper.py": "import flowlib\n",  # another distribution's module, not a script
    "work/user.py": """\
import torch
import flowlib

model = flowlib.Flow()
step = torch.compile(model)
step(torch.randn(4, 2))
""",
}


def test_a_library_given_from_site_packages_is_indexed_without_the_distributions_it_imports(tmp_path):
    write_tree(str(tmp_path), INSTALLED)
    lib = tmp_path / "site-packages" / "flowlib"
    given = [str(tmp_path / "work" / "user.py"), str(lib / "__init__.py"), str(lib / "core.py")]
    assert import_closure(given) == []  # torch, numpy and helper.py are other distributions
    paths = [os.path.join("work", "user.py"), str(lib)]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        _report, index = Linter(ConfigResolver(None), cache=None, jobs=1).collect(paths)
    finally:
        os.chdir(cwd)
    assert sorted(os.path.relpath(os.path.abspath(os.path.join(tmp_path, p)), tmp_path) for p in index) == [
        "site-packages/flowlib/__init__.py",
        "site-packages/flowlib/core.py",
        "work/user.py",
    ]
    run = _lint(str(tmp_path), paths)
    found = sorted(
        (os.path.basename(d.path), d.line, d.code) for d in run.diagnostics if d.path != "work/user.py"
    )
    assert ("core.py", 9, "TC115") in found  # in Estimator.forward, reached through Estimator.apply
