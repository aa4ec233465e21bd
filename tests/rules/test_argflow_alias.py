"""Types flow into helpers (issue 12 item 2) through a parameter annotated with a type alias of
another file: ``t0: Optional[Scalar]`` with ``Scalar = Union[float, Tensor]`` in ``types.py``, as
torchsde's ``BrownianInterval.__init__`` has it.  One file's walk types ``Scalar`` as an instance of a
class of that name; the project knows it is a module variable, so the parameter takes the type of
the arguments the compiled region passes (here to a constructor and to the instance's ``__call__``).

Dynamo (2.13, backend "eager", TORCH_LOGS=graph_breaks) on PROGRAM, run as ``python main.py``:
graph breaks at pkg/interval.py:10 (GB0170, ``if t0 > t1``), :12 (GB0124, ``float(t0)``) and :16
(GB0170, ``if ta > tb``); the constructor and ``__call__`` are traced inline in ``solve``.
"""

from __future__ import annotations

from tclint.rules import types as T
from tclint.rules.argflow import _seedable
from tclint.rules.types import Ty

from tests.helpers.lintutil import lint_tree, write_tree

PROGRAM = {
    "pkg/__init__.py": "",
    "pkg/types.py": """\
from typing import Union

import torch

Scalar = Union[float, torch.Tensor]
""",
    "pkg/interval.py": """\
from typing import Optional

import torch

from pkg.types import Scalar


class Interval:
    def __init__(self, t0: Optional[Scalar] = 0.0, t1: Optional[Scalar] = 1.0, size=(3,)):
        if t0 > t1:
            raise ValueError("t0 > t1")
        self.start = float(t0)
        self.size = size

    def __call__(self, ta, tb=None):
        if ta > tb:
            raise ValueError("ta > tb")
        return torch.zeros(self.size)


class Clock:
    pass
""",
    "main.py": """\
import torch

from pkg.interval import Interval


def solve(y):
    ts = y.cumsum(0)
    bm = Interval(t0=ts[0], t1=ts[-1])
    return y + bm(ts[0], ts[1])


compiled = torch.compile(solve, backend="eager")

if __name__ == "__main__":
    compiled(torch.rand(3))
""",
}


def _lint(tmp_path):
    write_tree(str(tmp_path), PROGRAM)
    return lint_tree(str(tmp_path), sorted(PROGRAM))


def test_an_alias_annotated_parameter_takes_the_tensor_a_constructor_is_given(tmp_path):
    result = _lint(tmp_path)
    found = {(d.path.rsplit("/", 1)[-1], d.span.start.line, d.code) for d in result.diagnostics}
    # the old code: only line 16 (`__call__`'s parameters were untyped, so they were seeded)
    assert found == {("interval.py", 10, "TC102"), ("interval.py", 12, "TC101"), ("interval.py", 16, "TC102")}


def test_only_an_alias_or_nothing_is_seedable(tmp_path):
    project = _lint(tmp_path).project
    ff = next(f for f in project.files.values() if f.path.endswith("interval.py"))
    assert _seedable(project, ff, T.T_UNKNOWN)
    assert _seedable(project, ff, Ty(T.INSTANCE, T.HIGH, None, "pkg.types.Scalar"))
    # a class of the project, a class outside it, a name nowhere: the annotation stands
    assert not _seedable(project, ff, Ty(T.INSTANCE, T.HIGH, None, "pkg.interval.Clock"))
    assert not _seedable(project, ff, Ty(T.INSTANCE, T.HIGH, None, "numpy.ndarray"))
    assert not _seedable(project, ff, Ty(T.INSTANCE, T.HIGH, None, "pkg.types.Missing"))
    assert not _seedable(project, ff, T.T_TENSOR)


# A root takes the arguments of the eager calls into its compiled frame: a decorated nested
# function called where it is defined, and a function compiled by `torch.compile(f)` called by name.
# Dynamo (2.13, eager, `python main.py`): graph breaks at pkg/interval.py:12 (GB0124, `float(tb)`,
# in `__call__` inlined into `increments`) and main.py:7 (GB0124, `float(w)`, in `scale`).
ROOTS = {
    "pkg/__init__.py": "",
    "pkg/interval.py": """\
import torch


class Interval:
    def __init__(self, start=0.0, size=(3,)):
        self.start = start
        self.size = size

    def __call__(self, ta, tb=None):
        if tb is None:
            ta, tb = self.start, ta
        tb = float(tb)
        return torch.full(self.size, tb)
""",
    "main.py": """\
import torch

from pkg.interval import Interval


def scale(h, w, k):
    return h * float(w) * k


step = torch.compile(scale, backend="eager")


def sample(k):
    bm = Interval()

    @torch.compile(backend="eager")
    def increments(ts):
        return torch.stack([bm(ts[i], ts[i + 1]) for i in range(len(ts) - 1)])

    increments(torch.linspace(0, 1, 4))
    step(torch.rand(3), torch.rand(()), k)


if __name__ == "__main__":
    sample(2)
""",
}


def test_a_root_takes_the_arguments_of_the_eager_calls_into_it(tmp_path):
    write_tree(str(tmp_path), ROOTS)
    result = lint_tree(str(tmp_path), sorted(ROOTS))
    found = {(d.path.rsplit("/", 1)[-1], d.span.start.line, d.code) for d in result.diagnostics}
    assert {("interval.py", 12, "TC101"), ("main.py", 7, "TC101")} <= found
    project = result.project
    # the root's own parameters, from what the eager calls pass (the old code: none; `k` is
    # unknown at its only call: no seed)
    params = {
        qual: {p.name: (p.ty.kind, p.ty.conf) for p in fn.params}
        for ff in project.files.values()
        if ff.path.endswith("main.py")
        for qual, fn in ff.functions.items()
    }
    assert params["sample.<locals>.increments"]["ts"] == (T.TENSOR, T.MEDIUM)
    assert params["scale"]["w"] == (T.TENSOR, T.MEDIUM)
    assert params["scale"]["k"][0] == T.UNKNOWN
