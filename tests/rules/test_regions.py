"""Compiled-region inference: every entry form, how regions follow calls, where they stop.

Each test writes a small project and asserts the exact set of functions tclint believes
torch.compile will trace (``tclint regions`` prints the same thing).
"""

from __future__ import annotations

import pytest

from tests.helpers.lintutil import lint_tree, write_tree


def regions(tmp_path, files: dict[str, str], settings=None, paths=None) -> set[str]:
    write_tree(str(tmp_path), files)
    result = lint_tree(str(tmp_path), paths, settings)
    assert result.project is not None
    out = set()
    for key in result.project.regions:
        path, _, qual = key.partition("::")
        out.add(path.replace("\\", "/") + ":" + qual)
    return out


MODEL = """
import torch
import torch.nn as nn

def helper(x):
    return x * 2

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return helper(self.lin(x))

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(3)])

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return x

def unrelated(x):
    return x + 1
"""
COMPILED = {"model.py:Model.forward", "model.py:Block.forward", "model.py:helper"}


@pytest.mark.parametrize(
    "entry",
    [
        "m = torch.compile(Model())",
        "model = Model()\nm = torch.compile(model)",
        "model = Model()\nmodel.compile()",
        "model = Model()\nm = torch.compile(model, mode='max-autotune', fullgraph=False)",
        "model = Model()\nm = torch.compile(model.forward)",
        "import functools\ncompile_fn = functools.partial(torch.compile, backend='eager')\nm = compile_fn(Model())",
        "m = torch._dynamo.optimize('eager')(Model())",
    ],
)
def test_module_entry_forms(tmp_path, entry):
    got = regions(
        tmp_path, {"model.py": MODEL, "train.py": f"import torch\nfrom model import Model\n{entry}\n"}
    )
    assert got == COMPILED


@pytest.mark.parametrize(
    "imports,compile_expr",
    [
        ("import torch as t", "t.compile"),
        ("from torch import compile as tc", "tc"),
        ("import torch", "torch.compile"),
    ],
)
def test_aliases(tmp_path, imports, compile_expr):
    code = f"""
{imports}

def body(x):
    return x.sin()

@{compile_expr}
def f(x):
    return body(x)

def g(x):
    return x.cos()

h = {compile_expr}(g)

def not_compiled(x):
    return x
"""
    assert regions(tmp_path, {"m.py": code}) == {"m.py:f", "m.py:body", "m.py:g"}


def test_decorator_with_arguments_and_optimize_decorator(tmp_path):
    code = """
import torch

@torch.compile(fullgraph=True, dynamic=False)
def a(x):
    return x

@torch._dynamo.optimize("eager")
def b(x):
    return x
"""
    assert regions(tmp_path, {"m.py": code}) == {"m.py:a", "m.py:b"}


def test_regional_compilation_forms(tmp_path):
    code = """
import torch
import torch.nn as nn

class Block(nn.Module):
    def forward(self, x):
        return x * 2

class Head(nn.Module):
    def forward(self, x):
        return x

class Stem(nn.Module):
    def forward(self, x):
        return x

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block() for _ in range(4)])
        self.head = torch.compile(Head())
        self.stem = Stem()

    def compile_blocks(self):
        for blk in self.layers:
            blk.compile()

    def forward(self, x):
        x = self.stem(x)
        for blk in self.layers:
            x = blk(x)
        return self.head(x)
"""
    assert regions(tmp_path, {"m.py": code}) == {"m.py:Block.forward", "m.py:Head.forward"}


def test_torch_compile_in_loop_over_submodules(tmp_path):
    files = {
        "m.py": MODEL,
        "run.py": "import torch\nfrom m import Model\nmodel = Model()\nfor i, layer in enumerate(model.blocks):\n    model.blocks[i] = torch.compile(layer)\n",
    }
    got = regions(tmp_path, files)
    assert got == {"m.py:Block.forward", "m.py:helper"}


def test_sequential_and_moduledict_elements(tmp_path):
    code = """
import torch
import torch.nn as nn

class A(nn.Module):
    def forward(self, x):
        return x

class B(nn.Module):
    def forward(self, x):
        return x

class C(nn.Module):
    def forward(self, x):
        return x

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(A(), B())
        self.heads = nn.ModuleDict({"c": C()})

    def forward(self, x):
        return self.heads["c"](self.seq(x))

m = torch.compile(M())
"""
    assert regions(tmp_path, {"m.py": code}) == {
        "m.py:M.forward",
        "m.py:A.forward",
        "m.py:B.forward",
        "m.py:C.forward",
    }


def test_methods_super_and_nested_functions(tmp_path):
    code = """
import torch
import torch.nn as nn

class Base(nn.Module):
    def forward(self, x):
        return self.prepare(x)

    def prepare(self, x):
        return x

class Child(Base):
    def forward(self, x):
        def inner(y):
            return y + 1
        return inner(super().forward(x))

    def unused(self):
        return 1

c = torch.compile(Child())
"""
    assert regions(tmp_path, {"m.py": code}) == {
        "m.py:Child.forward",
        "m.py:Child.forward.<locals>.inner",
        "m.py:Base.forward",
        "m.py:Base.prepare",
    }


def test_cross_file_packages_and_relative_imports(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": "def gelu2(x):\n    return x * 2\n",
        "pkg/layers.py": "import torch.nn as nn\nfrom .ops import gelu2\n\nclass MLP(nn.Module):\n    def forward(self, x):\n        return gelu2(x)\n",
        "pkg/model.py": "import torch.nn as nn\nfrom pkg.layers import MLP\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.mlp = MLP()\n\n    def forward(self, x):\n        return self.mlp(x)\n",
        "scripts/train.py": "import torch\nfrom pkg.model import Net\n\ndef build():\n    return Net()\n\nmodel = torch.compile(build())\n",
    }
    assert regions(tmp_path, files) == {
        "pkg/model.py:Net.forward",
        "pkg/layers.py:MLP.forward",
        "pkg/ops.py:gelu2",
    }


def test_disable_ends_the_region_and_is_reported(tmp_path):
    code = """
import torch

def deep(x):
    return x

@torch.compiler.disable
def eager_only(x):
    return deep(x)

def also_eager(x):
    return x

also_eager = torch._dynamo.disable(also_eager)

@torch.compile
def f(x):
    return also_eager(eager_only(x))
"""
    write_tree(str(tmp_path), {"m.py": code})
    result = lint_tree(str(tmp_path))
    assert {k.split("::")[1] for k in result.project.regions} == {"f"}
    assert sorted((d.line, d.code) for d in result.diagnostics) == [(18, "TC110"), (18, "TC110")] or sorted(
        {(d.line, d.code) for d in result.diagnostics}
    ) == [(18, "TC110")]


def test_configured_roots(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/models/__init__.py": "",
        "pkg/models/llama.py": "import torch.nn as nn\n\nclass LlamaModel(nn.Module):\n    def forward(self, x):\n        return x\n\n    def other(self, x):\n        return x\n",
        "pkg/models/gpt.py": "import torch.nn as nn\n\nclass GPT(nn.Module):\n    def forward(self, x):\n        return x\n",
        "pkg/util.py": "def forward(x):\n    return x\n",
    }
    assert regions(tmp_path, files, {"assume-compiled": ["pkg.models.llama:LlamaModel.forward"]}) == {
        "pkg/models/llama.py:LlamaModel.forward"
    }
    assert regions(tmp_path, files, {"assume-compiled": ["pkg.models.*:*.forward"]}) == {
        "pkg/models/llama.py:LlamaModel.forward",
        "pkg/models/gpt.py:GPT.forward",
    }
    assert regions(tmp_path, files, {"assume-compiled-forward": True}) == {
        "pkg/models/llama.py:LlamaModel.forward",
        "pkg/models/gpt.py:GPT.forward",
    }


def test_inline_marker(tmp_path):
    code = """
def compiled_elsewhere(x):  # tclint: compiled
    return x

# tclint: compiled
def also(x):
    return x

def plain(x):
    return x
"""
    assert regions(tmp_path, {"m.py": code}) == {"m.py:compiled_elsewhere", "m.py:also"}


def test_compile_wrappers(tmp_path):
    code = """
import torch

def maybe_compile(fn):
    return torch.compile(fn, mode="reduce-overhead")

def work(x):
    return x

@maybe_compile
def decorated(x):
    return x

w = maybe_compile(work)
"""
    assert regions(tmp_path, {"m.py": code}) == {"m.py:work", "m.py:decorated"}


def test_is_compiling_branches_are_resolved(tmp_path):
    code = """
import torch

def eager_path(x):
    return x

def compiled_path(x):
    return x

def is_torchdynamo_compiling():
    return torch.compiler.is_compiling()

@torch.compile
def f(x):
    if torch.compiler.is_compiling():
        x = compiled_path(x)
    else:
        print("eager")
        x = eager_path(x)
    if not is_torchdynamo_compiling():
        print("never traced")
    if torch._dynamo.is_compiling():
        return x
    print("after an early return under compile: not traced")
    return x
"""
    write_tree(str(tmp_path), {"m.py": code})
    result = lint_tree(str(tmp_path))
    # the wrapper is traced (inlined), the eager-only helper is not
    assert {k.split("::")[1] for k in result.project.regions} == {
        "f",
        "compiled_path",
        "is_torchdynamo_compiling",
    }
    assert result.diagnostics == []


def test_no_region_no_diagnostics(tmp_path):
    """Hazards in code no compile site reaches are never reported (not even at low confidence)."""
    code = """
import logging
import time
import torch

logger = logging.getLogger(__name__)

def train_step(model, x, step):
    loss = model(x).sum()
    if loss > 0:
        print(loss.item(), float(loss), x.tolist())
    logger.info("step %d took %.2f", step, time.time())
    mask = x > 0
    return x[mask].nonzero(), copy_list([1])

def copy_list(xs):
    import copy
    return copy.deepcopy(xs)
"""
    write_tree(str(tmp_path), {"m.py": code})
    result = lint_tree(str(tmp_path), None, {"min-confidence": "low"})
    assert result.diagnostics == []
    assert result.project.regions == {}


def test_region_chain_is_attached_to_diagnostics(tmp_path):
    files = {
        "model.py": MODEL.replace("return x * 2", "print(x)\n    return x * 2"),
        "train.py": "import torch\nfrom model import Model\nm = torch.compile(Model())\n",
    }
    write_tree(str(tmp_path), files)
    result = lint_tree(str(tmp_path))
    (diag,) = [d for d in result.diagnostics if d.code == "TC104"]
    assert diag.extra["region"].startswith("compiled via `torch.compile(Model())` at train.py:3")
    assert (
        "Model.forward" in diag.extra["region"]
        and "Block.forward" in diag.extra["region"]
        and "helper()" in diag.extra["region"]
    )
    assert [r.path for r in diag.related] == ["train.py", "model.py", "model.py", "model.py"]
    assert "each of 3 blocks" in diag.message


def test_decorator_wrappers_run_inside_the_compiled_frame(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/deco.py": """
import functools

def can_return_tuple(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        return func(self, *args, **kwargs)
    return wrapper

def deprecate_kwarg(old, new):
    def decorator(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            kwargs.pop(old, None)
            return func(*args, **kwargs)
        return wrapped
    return decorator
""",
        "pkg/model.py": """
import torch.nn as nn
from pkg.deco import can_return_tuple, deprecate_kwarg

class Model(nn.Module):
    @deprecate_kwarg("past", "cache")
    @can_return_tuple
    def forward(self, x):
        return x
""",
    }
    got = regions(tmp_path, files, {"assume-compiled": ["pkg.model:Model.forward"]})
    assert got == {
        "pkg/model.py:Model.forward",
        "pkg/deco.py:can_return_tuple.<locals>.wrapper",
        "pkg/deco.py:deprecate_kwarg.<locals>.decorator.<locals>.wrapped",
    }


def test_linting_a_library_package_follows_its_own_imports(tmp_path):
    """Packages named like well-known libraries (transformers, timm, ...) are projects too."""
    files = {
        "transformers/__init__.py": "",
        "transformers/masking.py": "def create_causal_mask(x):\n    return x\n",
        "transformers/model.py": "import torch.nn as nn\nfrom transformers.masking import create_causal_mask\n\nclass M(nn.Module):\n    def forward(self, x):\n        return create_causal_mask(x)\n",
    }
    got = regions(tmp_path, files, {"assume-compiled": ["transformers.model:M.forward"]})
    assert got == {"transformers/model.py:M.forward", "transformers/masking.py:create_causal_mask"}


def test_project_predicates_that_delegate_to_is_compiling(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/utils.py": """
import torch

def is_torchdynamo_compiling():
    return torch.compiler.is_compiling()

def is_jit_tracing():
    return torch.jit.is_tracing()

def is_tracing():
    return is_jit_tracing() or is_torchdynamo_compiling()
""",
        "pkg/model.py": """
import torch
from pkg.utils import is_tracing

def eager_check(x):
    return x

@torch.compile
def f(x):
    if not is_tracing():
        print("only in eager")
        eager_check(x)
    return x * 2
""",
    }
    write_tree(str(tmp_path), files)
    result = lint_tree(str(tmp_path))
    assert result.diagnostics == []
    # the predicates themselves are traced (inlined); the eager-only helper is not
    assert {k.split("::")[1] for k in result.project.regions} == {
        "f",
        "is_tracing",
        "is_jit_tracing",
        "is_torchdynamo_compiling",
    }


def test_predicate_with_arguments_in_a_short_circuit(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/utils.py": """
import torch

def is_tracing(tensor=None):
    _is = torch.compiler.is_compiling() or torch.jit.is_tracing()
    return _is
""",
        "pkg/model.py": """
import torch
from pkg.utils import is_tracing

@torch.compile
def f(x: torch.Tensor):
    if not is_tracing(x) and (x[:, -1] == 0).all():
        return x
    return x * 2
""",
    }
    write_tree(str(tmp_path), files)
    result = lint_tree(str(tmp_path))
    assert result.diagnostics == []
