"""Compile sites in the shapes real scripts use, beyond the corpus-driven idiom matrix: what each
compiles (the regions), and TC311 where tclint cannot tell."""

from __future__ import annotations

from tests.helpers.lintutil import lint_tree, write_tree

MODELS = """
import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x

    def generate(self, x):
        return self(x)

    @classmethod
    def load(cls, path):
        model = cls()
        model.load_state_dict(torch.load(path))
        return model

def build_model(cfg):
    return Net() if cfg else Net()
"""


def _lint(tmp_path, main: str):
    write_tree(str(tmp_path), {"models.py": MODELS, "main.py": main})
    result = lint_tree(str(tmp_path))
    assert result.project is not None
    regions = {key.split("::", 1)[1] for key in result.project.regions}
    tc311 = sorted(
        d.span.start.line for d in result.diagnostics if d.code == "TC311" and d.path.endswith("main.py")
    )
    return regions, tc311


def test_helper_that_compiles_its_parameter_and_returns_it(tmp_path):
    main = """
import torch
from models import Net

def setup(model, mode):
    model = torch.compile(model, mode=mode)
    return model

m = setup(Net.load("x.pt").eval(), "reduce-overhead")
for blk in m.blocks:
    blk.compile()
"""
    assert _lint(tmp_path, main) == ({"Net.forward", "Block.forward"}, [])


def test_regional_compilation_of_a_factory_result_from_another_file(tmp_path):
    main = """
from models import build_model

model = build_model(True).cuda()
for blk in model.blocks:
    blk.compile()
"""
    assert _lint(tmp_path, main) == ({"Block.forward"}, [])


def test_compiling_a_method_of_an_instance(tmp_path):
    main = """
import torch
from models import build_model

model = build_model(None)
gen = torch.compile(model.generate)
"""
    assert _lint(tmp_path, main) == ({"Net.generate", "Net.forward", "Block.forward"}, [])


def test_named_modules_filtered_by_isinstance(tmp_path):
    main = """
from models import Block, Net

model = Net()
for name, module in model.named_modules():
    if isinstance(module, Block):
        module.compile()
"""
    assert _lint(tmp_path, main) == ({"Block.forward"}, [])


def test_what_cannot_be_told_is_a_tc311_at_the_site(tmp_path):
    main = """
import importlib
import torch

def make(name):
    cls = getattr(importlib.import_module("models"), name)
    return cls()

model = torch.compile(make("Net"))
"""
    assert _lint(tmp_path, main) == (set(), [9])


def test_hooks_registered_in_eager_code_run_in_the_compiled_frame(tmp_path):
    main = """
import functools
import torch
from models import Block, Net

def log_hook(mod, args, out):
    print(out.shape)

def make_hook(name):
    def hook(mod, args, out):
        print(name)
    return hook

def tagged(mod, args, out, tag=None):
    print(tag)

model = Net()
model.register_forward_hook(log_hook)
for name, m in model.named_modules():
    if isinstance(m, Block):
        m.register_forward_pre_hook(make_hook(name))
model.register_forward_hook(functools.partial(tagged, tag="x"))
compiled = torch.compile(model)
"""
    regions = {"Net.forward", "Block.forward", "log_hook", "make_hook.<locals>.hook", "tagged"}
    assert _lint(tmp_path, main) == (regions, [])


def test_backward_hooks_run_eagerly_in_the_backward_pass(tmp_path):
    """Measured on torch 2.13: a full backward hook holding a print causes no graph break and runs
    after the compiled forward, so its body is not compiled code."""
    main = """
import torch
from models import Net

def grad_hook(mod, grad_in, grad_out):
    print(grad_out[0].norm())

model = Net()
model.register_full_backward_hook(grad_hook)
compiled = torch.compile(model)
"""
    assert _lint(tmp_path, main) == ({"Net.forward", "Block.forward"}, [])


def test_a_registry_of_classes_and_template_methods(tmp_path):
    """`SOLVERS[method](...)` is one of the registry's classes; `self._step()` in a base class
    whose `_step` is abstract runs the subclasses' overrides (torchdiffeq's shape)."""
    files = {
        "solvers.py": """
import abc
import torch

class Base(abc.ABC):
    def integrate(self, t):
        out = []
        for x in t:
            out.append(self._step(x))
        return out

    @abc.abstractmethod
    def _step(self, x):
        ...

class Euler(Base):
    def _step(self, x):
        return x * 2

class RK4(Base):
    def _step(self, x):
        return x.item()

SOLVERS = {"euler": Euler, "rk4": RK4}

@torch.compile
def solve(t, method: str):
    solver = SOLVERS[method]()
    return solver.integrate(t)
""",
    }
    write_tree(str(tmp_path), files)
    result = lint_tree(str(tmp_path))
    assert result.project is not None
    regions = {key.split("::", 1)[1] for key in result.project.regions}
    # (Base._step itself never runs: self is a Euler or a RK4)
    assert regions == {"solve", "Base.integrate", "Euler._step", "RK4._step"}


def test_compile_sites_inside_library_classes(tmp_path):
    """Shapes from kornia: compiling an attribute holding a function (or None), `self` in a base
    class whose subclasses define forward, a closure a factory returns, and a method of a
    container's elements."""
    files = {
        "lib.py": """
import torch
import torch.nn as nn

def blur(x):
    return x * 2

def build_program(k):
    def program(x):
        return x + k
    return program

class Layer(nn.Module):
    def forward(self, x):
        return x

    def masked_forward(self, x, mask):
        return x * mask

class Augment(nn.Module):
    def __init__(self, order=None):
        super().__init__()
        self._fn = blur if order is None else None
        self.layers = nn.ModuleList([Layer(), Layer()])

    def compile_parts(self):
        self._fn = torch.compile(self._fn)
        for i in range(len(self.layers)):
            self.layers[i].masked_forward = torch.compile(self.layers[i].masked_forward)

class ModelBase(nn.Module):
    def compile(self, **kw):
        return torch.compile(self, **kw)

class Detector(ModelBase):
    def forward(self, x):
        return x

program = torch.compile(build_program(3))
""",
    }
    write_tree(str(tmp_path), files)
    result = lint_tree(str(tmp_path))
    assert result.project is not None
    regions = {key.split("::", 1)[1] for key in result.project.regions}
    assert regions == {"blur", "Layer.masked_forward", "Detector.forward", "build_program.<locals>.program"}
    assert [d for d in result.diagnostics if d.code == "TC311"] == []


def test_a_loop_over_classes_and_a_callable_attribute_from_a_factory(tmp_path):
    """pyg's `for cls in (GCN, GIN): model = torch.compile(cls(...).eval())`, and torchdiffeq's
    `self.grid = self._grid_from(step)` (a closure) called in a compiled method."""
    files = {
        "m.py": """
import torch
import torch.nn as nn

class GCN(nn.Module):
    def forward(self, x):
        return x

class GIN(nn.Module):
    def forward(self, x):
        return x

class Solver:
    def __init__(self, step):
        self.grid = self._grid_from(step)

    @staticmethod
    def _grid_from(step):
        def grid(t):
            return t * step
        return grid

    def integrate(self, t):
        return self.grid(t)

for cls in (GCN, GIN):
    model = torch.compile(cls().eval())

@torch.compile
def solve(t):
    return Solver(0.1).integrate(t)
""",
    }
    write_tree(str(tmp_path), files)
    result = lint_tree(str(tmp_path))
    assert result.project is not None
    regions = {key.split("::", 1)[1] for key in result.project.regions}
    assert regions == {
        "GCN.forward",
        "GIN.forward",
        "solve",
        "Solver.__init__",
        "Solver.integrate",
        "Solver._grid_from",
        "Solver._grid_from.<locals>.grid",
    }
    assert not result.project.unresolved


def test_self_calls_dispatch_on_the_compiled_subclass(tmp_path):
    """kornia's shape: a base class's forward calls `self.apply_transform(x)`, which the compiled
    subclass overrides; the base version does not run, the override does."""
    files = {
        "m.py": """
import torch
import torch.nn as nn

class Augmentation(nn.Module):
    def forward(self, x):
        return self.apply_transform(x)

    def apply_transform(self, x):
        return x

class ColorJitter(Augmentation):
    def apply_transform(self, x):
        return x * 2

class Flip(Augmentation):
    def apply_transform(self, x):
        return x.flip(-1)

jitter = torch.compile(ColorJitter())
seq = torch.compile(nn.Sequential(Flip()))
""",
    }
    write_tree(str(tmp_path), files)
    result = lint_tree(str(tmp_path))
    assert result.project is not None
    regions = {key.split("::", 1)[1] for key in result.project.regions}
    assert regions == {"Augmentation.forward", "ColorJitter.apply_transform", "Flip.apply_transform"}


def test_a_wrapper_module_holding_its_constructor_argument(tmp_path):
    """x-transformers' `wrapper = AutoregressiveWrapper(TransformerWrapper(...))` with
    `self.net = net`: `torch.compile(wrapper.net)` and `torch.compile(wrapper)` reach the wrapped
    model's forward."""
    files = {
        "lib.py": """
import torch.nn as nn

class TransformerWrapper(nn.Module):
    def forward(self, x):
        return x

class AutoregressiveWrapper(nn.Module):
    def __init__(self, net, pad_value=0):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)
""",
        "main.py": """
import torch
from lib import AutoregressiveWrapper, TransformerWrapper

wrapper = AutoregressiveWrapper(TransformerWrapper())
wrapper.net = torch.compile(wrapper.net)
""",
        "train.py": """
import torch
from lib import AutoregressiveWrapper, TransformerWrapper

model = torch.compile(AutoregressiveWrapper(TransformerWrapper()))
""",
    }
    write_tree(str(tmp_path), files)
    result = lint_tree(str(tmp_path))
    assert result.project is not None
    regions = {key.split("::", 1)[1] for key in result.project.regions}
    assert regions == {"TransformerWrapper.forward", "AutoregressiveWrapper.forward"}
    assert not result.project.unresolved
