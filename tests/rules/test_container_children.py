"""Children given to a container subclass through its constructor's ``*args`` (kornia's
``AugmentationSequential(Flip(), Jitter())`` over two bases down to ``nn.Sequential``), iterated
in its ``forward`` by ``self``, ``self.children()``, ``self.named_children()`` +
``self.get_submodule(name)``, ``self._modules.values()`` or ``self.modules()``: the children's
forwards run compiled.  The truth in each docstring is what Dynamo 2.13 (CPU, ``backend="eager"``)
reported running the program; ``test_dynamo_truth`` re-runs it where torch is installed."""

from __future__ import annotations

import os
import runpy

import pytest

from tests.helpers.lintutil import lint_main

PROGRAM = """
import torch
from torch import nn


class Flip(nn.Module):
    def forward(self, x):
        return x.flip(-1)


class Jitter(nn.Module):
    def forward(self, x):
        if (x.mean() > 0.5).any():
            x = x * 0.9
        return x


class Base(nn.Sequential):
    def __init__(self, *args):
        super().__init__(*args)


class Pipeline(Base):
    def __init__(self, *augs, keepdim=False):
        super().__init__(*augs)
        self.keepdim = keepdim

    def forward(self, x):
        for ITER:
            x = CALL(x)
        return x


model = torch.compile(Pipeline(Flip(), Jitter()), backend="eager")
model(torch.rand(2, 3))
"""

# how forward iterates its children -> (loop head, call of the child)
ITERATIONS = {
    "self": ("m in self", "m"),
    "children": ("m in self.children()", "m"),
    "named_children-get_submodule": ("name, _m in self.named_children()", "self.get_submodule(name)"),
    "modules-values": ("m in self._modules.values()", "m"),
    "enumerate-self": ("_i, m in enumerate(self)", "m"),
}
JITTER_IF = 13  # `if (x.mean() > 0.5).any():` in Jitter.forward


def program(how: str) -> str:
    head, call = ITERATIONS[how]
    return PROGRAM.replace("ITER", head).replace("CALL", call)


@pytest.mark.parametrize("how", sorted(ITERATIONS))
def test_children_given_through_varargs_run_compiled(tmp_path, how):
    """Dynamo: GB0170 (data-dependent branching) at line 13 in ``Jitter.forward``, reached from
    ``Pipeline.forward``'s loop (GB7000: that frame is skipped, Jitter's frame compiled on its
    own), for every iteration form."""
    regions, found = lint_main(str(tmp_path), program(how))
    assert {"Jitter.forward", "Flip.forward"} <= regions
    assert ("TC102", JITTER_IF) in found


NOT_CHILDREN = """
import torch
from torch import nn


class Jitter(nn.Module):
    def forward(self, x):
        if (x.mean() > 0.5).any():
            x = x * 0.9
        return x


class Holder(nn.Module):
    def __init__(self, *fns):
        super().__init__()
        self.count = len(fns)


class Compose(Holder):
    def __init__(self, *fns):
        super().__init__(*fns)

    def forward(self, x):
        for m in self.children():
            x = m(x)
        return x


model = torch.compile(Compose(Jitter()), backend="eager")
model(torch.rand(2, 3))
"""


def test_varargs_handed_to_a_base_that_is_no_container_are_not_children(tmp_path):
    """``super().__init__(*fns)`` into a base that only counts them: they are no children (Dynamo:
    no graph break, ``Jitter.forward`` never runs)."""
    regions, found = lint_main(str(tmp_path), NOT_CHILDREN)
    assert "Compose.forward" in regions
    assert "Jitter.forward" not in regions
    assert ("TC102", 9) not in found


@pytest.mark.dynamo
@pytest.mark.parametrize("how", sorted(ITERATIONS))
def test_dynamo_truth(tmp_path, how):
    """The docstrings' truth: under Dynamo (eager backend) each program breaks with GB0170 once
    per compiled Jitter frame and skips the looping frame; the negative program does not break."""
    torch = pytest.importorskip("torch")
    from torch._dynamo.utils import counters

    for source, breaks in ((program(how), True), (NOT_CHILDREN, False)):
        path = os.path.join(tmp_path, "prog.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(source)
        torch._dynamo.reset()
        counters.clear()
        runpy.run_path(path, run_name="__main__")
        reasons = " ".join(counters["unimplemented"])
        assert ("gb0170" in reasons) is breaks, reasons


HANDED_TO_HELPERS = """
import torch
from torch import nn


class Base(nn.Module):
    def forward(self, x):
        return self.apply_transform(x)

    def apply_transform(self, x):
        return x


class Flip(Base):
    def apply_transform(self, x):
        return x.flip(-1)


class Jitter(Base):
    def apply_transform(self, x):
        if (x.mean() > 0.5).any():
            x = x * 0.9
        return x


class Unused(nn.Module):
    def forward(self, x):
        print("never compiled")
        return x


class InputOps:
    @classmethod
    def transform(cls, x, module: nn.Module):
        return module(x)


class MaskOps:
    @classmethod
    def transform(cls, x, module):
        return x


class Ops:
    def _get_op(self, key):
        if key == "input":
            return InputOps
        return MaskOps

    def transform(self, x, module):
        op = self._get_op("input")
        return op.transform(x, module)


class Pipeline(nn.Sequential):
    def __init__(self, *args):
        super().__init__(*args)
        self.ops = Ops()

    def forward(self, x):
        for name, _m in self.named_children():
            module = self.get_submodule(name)
            x = self.ops.transform(x, module=module)
        return x


model = torch.compile(Pipeline(Flip(), Jitter()), backend="eager")
model(torch.rand(2, 3))
InputOps.transform(torch.rand(2, 3), Unused())
"""


def test_module_handed_to_helpers_and_a_classmethod_of_a_returned_class(tmp_path):
    """kornia's ``AugmentationSequential.forward``: ``module = self.get_submodule(name)`` handed to
    a helper object's method (``self.ops.transform(x, module=module)``), which hands it on to a
    classmethod of a class a method returns (``op = self._get_op(key); op.transform(x, module)``),
    which calls it; the child's inherited ``forward`` calls the subclass's ``apply_transform``.
    Dynamo: GB0170 at line 21 (``Jitter.apply_transform``), frames InputOps.transform, Flip's and
    Jitter's forward traced; ``Unused`` is only handed over by eager code (never compiled)."""
    regions, found = lint_main(str(tmp_path), HANDED_TO_HELPERS)
    assert {"InputOps.transform", "Jitter.apply_transform", "Flip.apply_transform"} <= regions
    assert "MaskOps.transform" in regions  # either class `_get_op` returns
    assert ("TC102", 21) in found
    assert "Unused.forward" not in regions
    assert ("TC104", 28) not in found


@pytest.mark.dynamo
def test_dynamo_truth_handed_to_helpers(tmp_path):
    """The truth of ``test_module_handed_to_helpers_and_a_classmethod_of_a_returned_class``."""
    torch = pytest.importorskip("torch")
    from torch._dynamo.utils import counters

    path = os.path.join(tmp_path, "prog.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(HANDED_TO_HELPERS)
    torch._dynamo.reset()
    counters.clear()
    runpy.run_path(path, run_name="__main__")
    reasons = " ".join(counters["unimplemented"])
    assert "gb0170" in reasons


FACTORY_METHOD = """
import torch
from torch import nn


class ConvA(nn.Module):
    def forward(self, x):
        return x[x > 0]


class ConvB(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x


class BasicNet(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.convs = nn.ModuleList()
        for _ in range(layers):
            self.convs.append(self.init_conv())

    def init_conv(self):
        raise NotImplementedError

    def forward(self, x):
        for conv in self.convs:
            x = conv(x)
        return x


class NetA(BasicNet):
    def init_conv(self):
        return ConvA()


class NetB(BasicNet):
    def init_conv(self):
        return ConvB()


for cls in (NetA, NetB):
    model = torch.compile(cls(2), backend="eager")
    model(torch.randn(6))
"""


def test_container_filled_by_an_overridden_factory_method_of_each_compiled_class(tmp_path):
    """torch_geometric's ``BasicGNN``: the base ``__init__`` fills ``self.convs`` with
    ``self.init_conv(...)``, which each subclass overrides; one compile site compiles each class in
    turn (``for cls in (GCN, GAT): torch.compile(cls(...))``), so the shared ``forward`` runs with
    each class as ``self``, and each one's convolutions run compiled.  Dynamo: GB0036 (dynamic
    shape operator) at line 8 (``ConvA``), GB0170 at line 13 (``ConvB``)."""
    regions, found = lint_main(str(tmp_path), FACTORY_METHOD)
    assert {"ConvA.forward", "ConvB.forward"} <= regions
    assert ("TC109", 8) in found
    assert ("TC102", 13) in found


@pytest.mark.dynamo
def test_dynamo_truth_factory_method(tmp_path):
    """The truth of ``test_container_filled_by_an_overridden_factory_method_of_each_compiled_class``."""
    torch = pytest.importorskip("torch")
    from torch._dynamo.utils import counters

    path = os.path.join(tmp_path, "prog.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(FACTORY_METHOD)
    torch._dynamo.reset()
    counters.clear()
    runpy.run_path(path, run_name="__main__")
    reasons = " ".join(counters["unimplemented"])
    assert "gb0036" in reasons and "gb0170" in reasons, reasons
