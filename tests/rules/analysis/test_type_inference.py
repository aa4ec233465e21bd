"""Type inference, table-driven: an expression in a context -> the ``Ty`` the walk infers for it.

Each row places ``probe(EXPR)`` in a small program (at module level, in a plain function or in a
module's ``forward``), walks it with a real ``Analyzer`` and an empty rule set, and asks
``type_of`` for the probed expression: the inference is called directly, in the scope the walker
gave it, not through a rule's findings.  The pure helpers (``binop_type``, ``element_type``) have
their own rows.
"""

from __future__ import annotations

import ast

import pytest
from tclint.rules import types as T
from tclint.rules.analysis import Analyzer, RuleSet
from tclint.rules.analysis.types_infer import binop_type, element_type
from tclint.rules.types import Ty

PRELUDE = """\
import copy, logging, math, random
import numpy as np
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from typing import List, Optional
x = torch.randn(3)
xs = [torch.randn(2), torch.randn(2)]
def helper(a):
    return a
class Model(nn.Module):
    def __init__(self, cfg=None):
        super().__init__()
        self.proj = nn.Linear(2, 2)
        self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
        self.steps = 0
    @classmethod
    def from_config(cls, cfg):
        return cls(cfg)
"""
MODULE = "{probe}"  # at module level, after the prelude
FORWARD = """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(2, 2)
        self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
        self.register_buffer("scale", torch.ones(1))
    def forward(self, h, use_cache=None, mask: Optional[torch.Tensor] = None, n: int = 3):
        {probe}
"""
FUNCTION = """\
def f(t: torch.Tensor, ts: List[torch.Tensor], k: int, flag=False, name="a", other=None):
    {probe}
"""
LOOP = """\
def f(m: Model):
    for i in range(3):
        for j, blk in enumerate(m.layers):
            {probe}
"""

ZIP = """\
def f(t: torch.Tensor, names: List[str]):
    for i, (a, b) in enumerate(zip(t[:-1], t[1:])):
        for name, u in zip(names, t):
            {probe}
"""
ZIP_COMPREHENSION = """\
def f(t: torch.Tensor, names: List[str]):
    return [{probe} for name, u in zip(names, t)]
"""
CLASSMETHOD = """\
class Built(Model):
    @classmethod
    def load(cls, path=None):
        {probe}
"""
METHOD = """\
class Built(Model):
    def clone(self):
        {probe}
"""
CHILDREN = """\
def f(m: Model):
    for name, child in m.named_children():
        for sub in m.modules():
            {probe}
"""

HIGH, MEDIUM, LOW = T.HIGH, T.MEDIUM, T.LOW
ROWS: list[tuple[str, str, Ty]] = [
    # (context, expression, expected type)
    # literals and builtins
    (MODULE, "1", T.T_INT),
    (MODULE, "1.5", T.T_FLOAT),
    (MODULE, "True", T.T_BOOL),
    (MODULE, "'s'", T.T_STR),
    (MODULE, "None", T.T_NONE),
    (MODULE, "f'{x}'", T.T_STR),
    (MODULE, "len(xs)", T.T_INT),
    (MODULE, "(1, 2)", T.T_SIZE),
    (MODULE, "{}", T.T_DICT),  # a dict: indexing it with a tensor is a lookup (TC101 not)
    (MODULE, "not x", T.T_BOOL),
    # torch calls and tensor operations
    (MODULE, "torch.randn(3)", Ty(T.TENSOR, HIGH, "float")),
    (MODULE, "torch.arange(3)", Ty(T.TENSOR, HIGH, "int")),
    (MODULE, "torch.zeros(3, dtype=torch.long)", Ty(T.TENSOR, HIGH, "int")),
    (MODULE, "torch.where(x > 0)", Ty(T.TLIST, HIGH, "int")),
    (MODULE, "torch.float16", Ty(T.SCALAR, HIGH, "dtype")),
    (MODULE, "x + 1", Ty(T.TENSOR, HIGH, "float")),
    (MODULE, "torch.arange(3) / 2", Ty(T.TENSOR, HIGH, "float")),
    (MODULE, "x.sum() > 0", Ty(T.TENSOR, HIGH, "bool")),
    (MODULE, "(x > 0) & (x < 1)", Ty(T.TENSOR, HIGH, "bool")),
    (MODULE, "x.float().mean(-1)", Ty(T.TENSOR, HIGH, "float")),
    (MODULE, "x[0]", Ty(T.TENSOR, HIGH, "float")),
    # values leaving the graph
    (MODULE, "x.item()", Ty(T.SCALAR, HIGH, "item")),
    (MODULE, "int(x)", Ty(T.SCALAR, HIGH, "item")),
    (MODULE, "math.sqrt(x.item())", Ty(T.SCALAR, HIGH, "item")),
    (MODULE, "x.tolist()", Ty(T.CONTAINER, HIGH, "tolist")),
    (MODULE, "random.random()", T.T_FLOAT),
    (MODULE, "random.uniform(0, 1)", Ty(T.SCALAR, HIGH, "random")),
    (MODULE, "math.sqrt(2)", T.T_FLOAT),
    # shapes
    (MODULE, "x.shape", T.T_SIZE),
    (MODULE, "x.shape[0]", T.T_INT),
    (MODULE, "x.shape[1:]", T.T_SIZE),
    (MODULE, "x.dtype", Ty(T.SCALAR, HIGH, "other")),
    (MODULE, "x.requires_grad", T.T_BOOL),
    # containers of tensors
    (MODULE, "[x, x]", Ty(T.TLIST, HIGH)),
    (MODULE, "[t * 2 for t in xs]", Ty(T.TLIST, HIGH)),
    (MODULE, "xs[0]", Ty(T.TENSOR, HIGH)),
    (MODULE, "x if x is not None else None", Ty(T.TENSOR, HIGH, "float")),
    # other libraries
    # a NumPy function of Python values: a traced ndarray in compiled code (range() of it breaks)
    (MODULE, "np.zeros(3)", Ty(T.TENSOR, MEDIUM)),
    (MODULE, "np.shape(x)", T.T_OTHER),
    (MODULE, "np.finfo(np.float32)", T.T_OTHER),
    (MODULE, "np.random.rand(3)", T.T_OTHER),
    (MODULE, "logging.getLogger(__name__)", Ty(T.INSTANCE, HIGH, None, "logging.Logger")),
    # project code: classes, factories, functions, compile
    (MODULE, "nn.Linear(2, 2)", Ty(T.MODULE, HIGH, None, "torch.nn.Linear")),
    (MODULE, "Model(1)", Ty(T.INSTANCE, HIGH, None, "pkg.mod.Model")),
    (MODULE, "Model.from_config(1)", Ty(T.INSTANCE, HIGH, None, "pkg.mod.Model")),
    (MODULE, "helper(x)", Ty(T.DEFERRED, MEDIUM, None, "pkg.mod.helper")),
    (MODULE, "helper", Ty(T.FUNC, HIGH, None, "pkg.mod.helper")),
    (MODULE, "torch.compile(Model())", Ty(T.COMPILED, HIGH, None, "pkg.mod#1")),
    # what a compile site may compile: self-returning nn.Module methods (table from torch's source)
    (MODULE, "Model().to('cpu').eval()", Ty(T.INSTANCE, HIGH, None, "pkg.mod.Model")),
    (
        MODULE,
        "Model().float().train(False).requires_grad_(False)",
        Ty(T.INSTANCE, HIGH, None, "pkg.mod.Model"),
    ),
    (MODULE, "nn.Linear(2, 2).half()", Ty(T.MODULE, HIGH, None, "torch.nn.Linear")),
    (MODULE, "helper(x).cuda()", Ty(T.DEFERRED, MEDIUM, None, "pkg.mod.helper")),
    (MODULE, "Model().zero_grad()", T.T_UNKNOWN),
    # ... wrappers and copies stand for the module they hold
    (MODULE, "copy.deepcopy(Model())", Ty(T.INSTANCE, HIGH, None, "pkg.mod.Model")),
    (MODULE, "DDP(Model().to('cpu'))", Ty(T.INSTANCE, HIGH, None, "pkg.mod.Model")),
    # ... either class of a conditional construction
    (
        MODULE,
        "Model() if x is None else nn.Identity()",
        Ty(T.INSTANCE, HIGH, None, "pkg.mod.Model;torch.nn.Identity"),
    ),
    # ... local containers of modules name their element classes
    (MODULE, "[Model(), Model()]", Ty(T.MODLIST, HIGH, "list", "@pkg.mod.Model")),
    (MODULE, "nn.Sequential(Model(), nn.ReLU())", Ty(T.MODLIST, HIGH, "seq", "@pkg.mod.Model;torch.nn.ReLU")),
    (MODULE, "nn.ModuleList([Model().eval()])[0]", Ty(T.ELEM, HIGH, None, "@pkg.mod.Model")),
    (
        MODULE,
        "nn.ModuleList(torch.compile(b) for b in [Model()])",
        Ty(T.MODLIST, HIGH, "list", "@pkg.mod.Model"),
    ),
    (MODULE, "Model().layers", Ty(T.MODLIST, HIGH, "list", "pkg.mod.Model|layers")),
    (MODULE, "[torch.compile(helper)][0]", Ty(T.COMPILED, HIGH, None, "pkg.mod#1")),
    (MODULE, "{'f': torch.compile(helper)}['f']", Ty(T.COMPILED, HIGH, None, "pkg.mod#1")),
    (MODULE, "{'m': Model, 'h': helper}", T.T_DICT),
    (MODULE, "{'m': Model}['m']", Ty(T.FUNC, MEDIUM, None, "pkg.mod.Model")),
    (
        MODULE,
        "{'m': Model, 'l': nn.Linear}['m'](1)",
        Ty(T.INSTANCE, MEDIUM, None, "pkg.mod.Model;torch.nn.Linear"),
    ),
    (CLASSMETHOD, "cls()", Ty(T.INSTANCE, HIGH, None, "pkg.mod.Built")),
    (METHOD, "self.__class__()", Ty(T.INSTANCE, HIGH, None, "pkg.mod.Built")),
    (METHOD, "type(self)()", Ty(T.INSTANCE, HIGH, None, "pkg.mod.Built")),
    (CHILDREN, "child", Ty(T.ELEM, MEDIUM, None, "pkg.mod.Model|*")),
    (CHILDREN, "sub", Ty(T.ELEM, MEDIUM, None, "pkg.mod.Model|**")),
    # inside forward: parameters by name and annotation, submodules, buffers
    (FORWARD, "h", Ty(T.TENSOR, MEDIUM)),
    (FORWARD, "use_cache", T.T_UNKNOWN),
    (FORWARD, "mask", T.T_TENSOR),
    (FORWARD, "n", T.T_INT),
    (FORWARD, "self.proj(h)", Ty(T.TENSOR, HIGH)),
    (FORWARD, "self.layers", Ty(T.MODLIST, HIGH, "list", "pkg.mod.Net|layers")),
    (FORWARD, "self.layers[0]", Ty(T.ELEM, HIGH, None, "pkg.mod.Net|layers")),
    (FORWARD, "self.scale", T.T_TENSOR),
    (FORWARD, "self.training", T.T_BOOL),
    (FORWARD, "self.helper(h)", Ty(T.DEFERRED, MEDIUM, None, "pkg.mod.Net.helper")),
    # a forward parameter called with a dict/list/str method is a Python container, not a tensor:
    # `{k: v for k, v in outputs.items() if k != "aux"}` (transformers' DETR loss) does not break
    (FORWARD, "h.items()", T.T_UNKNOWN),
    (FORWARD, "h.keys()", T.T_UNKNOWN),
    (FORWARD, "h.get('logits')", T.T_UNKNOWN),
    (FORWARD, "h.values()", Ty(T.TENSOR, MEDIUM)),  # a sparse tensor's values
    # a plain function: annotations and defaults
    (FUNCTION, "t", T.T_TENSOR),
    (FUNCTION, "ts", Ty(T.TLIST, HIGH)),
    (FUNCTION, "ts[0]", Ty(T.TENSOR, HIGH)),
    (FUNCTION, "k", T.T_INT),
    (FUNCTION, "flag", T.T_BOOL),
    (FUNCTION, "name", T.T_STR),
    (FUNCTION, "other", T.T_UNKNOWN),
    (FUNCTION, "other.float()", Ty(T.TENSOR, MEDIUM, "float")),
    (FUNCTION, "t @ other", Ty(T.TENSOR, HIGH)),
    # loop variables
    # zip / enumerate yield their iterables' elements item by item (a tensor yields tensors)
    (ZIP, "a", Ty(T.TENSOR, HIGH)),
    (ZIP, "b", Ty(T.TENSOR, HIGH)),
    (ZIP, "i", T.T_INT),
    (ZIP, "u", Ty(T.TENSOR, HIGH)),
    (ZIP, "name", T.T_UNKNOWN),
    (ZIP_COMPREHENSION, "u", Ty(T.TENSOR, HIGH)),
    (LOOP, "i", T.T_INT),
    (LOOP, "j", T.T_INT),
    (LOOP, "blk", Ty(T.ELEM, HIGH, None, "pkg.mod.Model|layers")),
]


def infer(context: str, expr: str) -> Ty:
    """Walk PRELUDE + context with ``probe(expr)`` in it; the type inferred for ``expr`` there."""
    src = PRELUDE + context.format(probe=f"probe({expr})")
    tree = ast.parse(src)
    probes = [
        n.args[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "probe"
    ]
    assert len(probes) == 1
    analyzer = Analyzer(src, "pkg/mod.py", "pkg.mod", False, "/r", RuleSet([]))
    analyzer.run(tree)
    return analyzer.type_of(probes[0])  # memoised when the walk reached it, in its scope


@pytest.mark.parametrize(("context", "expr", "expected"), ROWS, ids=[f"{r[1]}" for r in ROWS])
def test_inferred_type(context: str, expr: str, expected: Ty) -> None:
    assert infer(context, expr) == expected


@pytest.mark.parametrize(
    ("left", "right", "op", "expected"),
    [
        (T.T_INT, T.T_INT, ast.Add(), T.T_INT),
        (T.T_INT, T.T_FLOAT, ast.Mult(), T.T_FLOAT),
        (T.T_INT, T.T_INT, ast.Div(), T.T_FLOAT),
        (T.T_STR, T.T_INT, ast.Mult(), T.T_STR),
        (T.T_SIZE, T.T_SIZE, ast.Add(), T.T_SIZE),
        (T.T_SIZE, T.T_INT, ast.Mult(), T.T_INT),
        (Ty(T.TENSOR, HIGH, "int"), T.T_INT, ast.Add(), Ty(T.TENSOR, HIGH, "int")),
        (Ty(T.TENSOR, HIGH, "int"), T.T_FLOAT, ast.Add(), Ty(T.TENSOR, HIGH, "float")),
        (Ty(T.TENSOR, MEDIUM, "bool"), Ty(T.TENSOR, HIGH, "bool"), ast.BitOr(), Ty(T.TENSOR, HIGH, "bool")),
        (Ty(T.SCALAR, HIGH, "item"), T.T_INT, ast.Add(), Ty(T.SCALAR, HIGH, "item")),
        (T.T_UNKNOWN, T.T_UNKNOWN, ast.MatMult(), Ty(T.TENSOR, MEDIUM)),
        (T.T_UNKNOWN, T.T_INT, ast.Add(), T.T_UNKNOWN),
    ],
)
def test_binop_type(left: Ty, right: Ty, op: ast.operator, expected: Ty) -> None:
    assert binop_type(left, right, op) == expected


@pytest.mark.parametrize(
    ("iterated", "iter_src", "expected"),
    [
        (Ty(T.TLIST, HIGH, "float"), "xs", Ty(T.TENSOR, HIGH, "float")),
        (Ty(T.MODLIST, HIGH, "list", "m.M|layers"), "self.layers", Ty(T.ELEM, HIGH, None, "m.M|layers")),
        (T.T_SIZE, "x.shape", T.T_INT),
        (T.T_UNKNOWN, "range(3)", T.T_INT),
        (T.T_UNKNOWN, "items", T.T_UNKNOWN),
    ],
)
def test_element_type(iterated: Ty, iter_src: str, expected: Ty) -> None:
    assert element_type(iterated, ast.parse(iter_src, mode="eval").body) == expected


# -- what the project pass learns across files (``analysis.seeds``, ``rules.argflow``), and
# isinstance narrowing (``analysis.narrowing``): (context, expression, seeds, returns, expected)
HELPER_FN = """\
def g(h, k=2, n: int = 0):
    {probe}
"""
NARROW_SCALAR = """\
def f(v: "float | torch.Tensor"):
    if isinstance(v, (int, float)):
        {probe}
"""
NARROW_TENSOR = """\
def f(e, flag: bool):
    if flag:
        e = (e, e)
    if not flag and isinstance(e, torch.Tensor):
        {probe}
"""
PAIR = """\
def g():
    a, b = helper(x)
    {probe}
"""
SEEDED = {"g": {"h": Ty(T.TENSOR, MEDIUM), "n": Ty(T.TENSOR, MEDIUM)}}
SEEDED_ROWS: list[tuple[str, str, dict, dict, Ty]] = [
    (HELPER_FN, "h", {}, {}, T.T_UNKNOWN),
    (HELPER_FN, "h", SEEDED, {}, Ty(T.TENSOR, MEDIUM)),
    (HELPER_FN, "h[0] > k", {}, {}, T.T_UNKNOWN),
    (HELPER_FN, "h[0] > k", SEEDED, {}, Ty(T.TENSOR, MEDIUM, "bool")),
    (HELPER_FN, "n", SEEDED, {}, T.T_INT),  # an annotation wins over a seed
    (MODULE, "helper(x)", {}, {}, Ty(T.DEFERRED, MEDIUM, None, "pkg.mod.helper")),
    (MODULE, "helper(x)", {}, {"pkg.mod.helper": Ty(T.TENSOR, MEDIUM)}, Ty(T.TENSOR, MEDIUM)),
    (
        MODULE,
        "helper(x)[0]",
        {},
        {"pkg.mod.helper": Ty(T.TENSOR, HIGH, "float")},
        Ty(T.TENSOR, HIGH, "float"),
    ),
    (PAIR, "a", {}, {}, Ty(T.DEFERRED, MEDIUM, None, "pkg.mod.helper[0]")),
    (PAIR, "a", {}, {"pkg.mod.helper[0]": Ty(T.TENSOR, MEDIUM)}, Ty(T.TENSOR, MEDIUM)),
    (NARROW_SCALAR, "v", {}, {}, Ty(T.SCALAR, HIGH, "number")),
    (NARROW_TENSOR, "e", {}, {}, Ty(T.TENSOR, HIGH)),
]


def infer_with(context: str, expr: str, seeds: dict, returns: dict) -> Ty:
    src = PRELUDE + context.format(probe=f"probe({expr})")
    tree = ast.parse(src)
    (probe,) = [
        n.args[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "probe"
    ]
    analyzer = Analyzer(
        src,
        "pkg/mod.py",
        "pkg.mod",
        False,
        "/r",
        RuleSet([]),
        seeds=seeds or None,
        returns_of=returns.get if returns else None,
    )
    analyzer.run(tree)
    return analyzer.type_of(probe)


@pytest.mark.parametrize(
    ("context", "expr", "seeds", "returns", "expected"),
    SEEDED_ROWS,
    ids=[
        f"{r[1]}-{'seeded' if r[2] else 'returns' if r[3] else 'plain'}-{i}"
        for i, r in enumerate(SEEDED_ROWS)
    ],
)
def test_inferred_type_with_project_knowledge(
    context: str, expr: str, seeds: dict, returns: dict, expected: Ty
) -> None:
    assert infer_with(context, expr, seeds, returns) == expected
