import ast

from tclint.rules import types as T
from tclint.rules.model import Applicability, Fix, Severity, Span
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import builtin_call, maybe, short, tensor_confidence


def _guessed(node: ast.expr, ctx) -> bool:
    """``node`` is a parameter without annotation (a tensor only by the ``forward(self, x, start)``
    guess): slice bounds such as ``x[:, start:]`` are Python ints far more often than not."""
    if not isinstance(node, ast.Name):
        return False
    param = ctx.scope.params.get(node.id)
    return param is not None and param.annotation is None and param.ty.conf != T.HIGH


class TensorToScalar(Rule):
    """
    ## What it does
    Flags a tensor's value moving into a Python number inside compiled code: `t.item()`,
    `float(t)`, `int(t)`, `bool(t)`, `math` functions applied to a tensor (`math.sqrt(t)`), and
    `range(t)` (a loop count taken from a tensor, `range(n.long())`), and slice bounds taken from a
    tensor or a NumPy array (`x[lo:hi]`, `slice(s, s + n)`).  `int()` / `float()` of a float NumPy
    function of Python numbers (`int(np.ceil(h / w))`) is not flagged: Dynamo folds it.

    ## Why is this bad?
    Dynamo traces tensors symbolically: it does not know their values.  To hand Python a real
    number it must stop the graph, run what came before, read the value and start a new graph
    after it (GB0124; `math.*` on a tensor is GB0033; `range()` of a tensor is GB0059, "builtin
    `range` with argument types ['Tensor']").  Each break costs a Python round trip and
    blocks fusion across it, on every call.

    With `capture_scalar_outputs = True` (config or `[tool.tclint.dynamo]`) `.item()`, `float()` and
    `int()` stay in the graph as symbolic scalars; the break then moves to wherever the value
    decides Python control flow (reported by TC102).  `math.*` on a tensor still breaks.

    ## Example
    ```python
    @torch.compile
    def scale(x):
        m = x.abs().max().item()
        return x / m
    ```

    ## Use instead
    Keep the value a tensor:
    ```python
    @torch.compile
    def scale(x):
        m = x.abs().max()
        return x / m
    ```

    ## Fix safety
    An unsafe fix (a libcst codemod) for `t.item()` whose value only feeds arithmetic: an operand of
    `+ - * / // % **`, or assigned to a name whose every use in the function is such an operand.
    The fix drops `.item()`, so the value stays a 0-d tensor in the graph.  Unsafe: where the
    other operand was a Python number too, the result is now a 0-d tensor, not a number (and
    float64 arithmetic on Python floats becomes the tensor's dtype).  Not offered where the value
    decides control flow, is passed to a call, returned or formatted; `float()`/`int()`/`math.*`
    get no fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html
    - https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html
    """

    code = "TC101"
    name = "tensor-to-python-scalar"
    summary = "A tensor's value is turned into a Python number inside compiled code"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0124", "GB0033", "GB0059")
    default_severity = Severity.WARNING
    fix_applicability = Applicability.UNSAFE
    METHODS = frozenset({"item", *T.TENSOR_COMPARE_TO_BOOL})
    CALLS = frozenset(
        {
            "builtins.float",
            "builtins.int",
            "builtins.bool",
            "math.sqrt",
            "math.exp",
            "math.log",
            "math.floor",
            "math.ceil",
            "math.isnan",
            "math.isinf",
            "math.isfinite",
            "math.fabs",
            "math.pow",
            "math.log2",
            "math.log10",
            "math.tanh",
            "math.sin",
            "math.cos",
            "builtins.range",
            "builtins.slice",
            "torch.equal",
            "torch.allclose",
        }
    )

    def check_call(self, node, ctx, qualified, method):
        if method == "item" and isinstance(node.func, ast.Attribute) and not node.args:
            recv = ctx.type_of(node.func.value)
            conf = tensor_confidence(recv)
            if conf is None:
                if recv.kind != T.UNKNOWN:
                    return
                conf = T.MEDIUM  # `.item()` is (almost) only a tensor / ndarray method
            ctx.report(
                self.code,
                node,
                f"`{short(ctx, node)}` copies a {maybe(conf)}tensor's value into Python: the graph breaks here",
                gb_ids=("GB0124",),
                confidence=conf,
                help="keep the value as a 0-d tensor, or set torch._dynamo.config.capture_scalar_outputs = True",
                data={"capturable": True},
            )
            return
        if qualified in ("torch.equal", "torch.allclose") or (
            qualified is None
            and method in T.TENSOR_COMPARE_TO_BOOL
            and isinstance(node.func, ast.Attribute)
            and len(node.args) >= 1
        ):
            self._compare_to_bool(node, ctx, qualified, method)
            return
        if qualified is None and isinstance(node.func, ast.Name) and node.func.id in ("float", "int", "bool"):
            if builtin_call(node, ctx, node.func.id) and len(node.args) == 1:
                self._to_number(node, ctx)
            return
        if qualified is None and isinstance(node.func, ast.Name) and node.func.id == "slice":
            if builtin_call(node, ctx, "slice") and not node.keywords:
                self._slice_bounds(node, node.args, ctx)
            return
        if qualified is None and isinstance(node.func, ast.Name) and node.func.id == "range":
            if not builtin_call(node, ctx, "range") or node.keywords:
                return
            confs = [c for c in (tensor_confidence(ctx.type_of(a)) for a in node.args) if c is not None]
            if not confs:
                return
            conf = min(confs)
            ctx.report(
                self.code,
                node,
                f"`{short(ctx, node)}` takes a loop count from a {maybe(conf)}tensor: the graph breaks here",
                gb_ids=("GB0059",),
                confidence=conf,
                help="loop over a Python int known while tracing, or keep the computation in tensors",
                data={"capturable": False},
            )
            return
        if qualified and qualified.startswith("math.") and node.args:
            conf = tensor_confidence(ctx.type_of(node.args[0]))
            if conf is None:
                return
            fn = qualified.split(".", 1)[1]
            ctx.report(
                self.code,
                node,
                f"`math.{fn}()` on a {maybe(conf)}tensor converts it to a Python float: the graph breaks here",
                gb_ids=("GB0033",),
                confidence=conf,
                help=f"use `torch.{fn}` on the tensor instead",
                data={"capturable": False},
            )

    def _compare_to_bool(self, node, ctx, qualified, method):
        """``torch.equal(a, b)`` / ``a.allclose(b)``: a Python bool computed from tensor values
        (Dynamo: GB0033, data-dependent operator, at the call)."""
        if qualified:
            conf = T.HIGH  # torch.equal / torch.allclose take tensors only
        else:
            recv = ctx.type_of(node.func.value)
            conf = tensor_confidence(recv)
            if conf is None:
                if recv.kind != T.UNKNOWN:
                    return
                conf = T.MEDIUM  # like `.item()`: (almost) only a tensor's method
        ctx.report(
            self.code,
            node,
            f"`{short(ctx, node)}` compares {maybe(conf)}tensor values into a Python bool: the graph breaks here",
            gb_ids=("GB0033",),
            confidence=conf,
            help="keep the comparison a tensor (`(a == b).all()`, `torch.isclose(a, b).all()`) and branch with torch.where, or compare outside the compiled code",
            data={"capturable": False},
        )

    def visit_BinOp(self, node, ctx):
        """`... / t.item()`: the value only feeds arithmetic, the fix can keep it a tensor (the
        walk is post-order, so the call's candidate is already reported)."""
        if type(node.op).__name__ in ("Add", "Sub", "Mult", "Div", "FloorDiv", "Mod", "Pow"):
            for operand in (node.left, node.right):
                self._offer_item_fix(operand, ctx)

    def visit_Assign(self, node, ctx):
        """`m = t.item()`: the codemod checks that every use of `m` is arithmetic."""
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self._offer_item_fix(node.value, ctx)

    def _offer_item_fix(self, expr, ctx):
        if not (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and expr.func.attr == "item"
            and not expr.args
            and not expr.keywords
        ):
            return
        loc = ctx.loc(expr)
        for cand in reversed(ctx.facts.candidates[-8:]):
            if cand.code == self.code and cand.loc == loc:
                cand.fix = Fix(
                    "Keep the value a 0-d tensor (drop `.item()`)",
                    (),
                    Applicability.UNSAFE,
                    codemod=("item-as-tensor", Span.of(loc.line, loc.col, loc.end_line, loc.end_col)),
                )
                return

    def _to_number(self, node, ctx):
        """`float(t)` / `int(t)` / `bool(t)` of one argument."""
        ty = ctx.type_of(node.args[0])
        if ty.ref == T.NUMPY_SCALAR and ty.dtype == "float" and node.func.id != "bool":
            return  # `int(np.ceil(h / w))`: Dynamo knows the value and folds it
        conf = tensor_confidence(ty)
        if conf is None:
            return
        name = node.func.id
        ctx.report(
            self.code,
            node,
            f"`{name}()` of a {maybe(conf)}tensor copies its value into Python: the graph breaks here",
            gb_ids=("GB0124",),
            confidence=conf,
            help="keep the value as a tensor (`t.to(torch.float32)`), or set capture_scalar_outputs",
            data={"capturable": True},
        )

    def _slice_bounds(self, node, bounds, ctx):
        """`slice(s, s + n)` / `x[a:b]` whose start, stop or step is a tensor (or a NumPy value):
        a slice holds Python ints, so Dynamo reads the value out (GB0124; GB0033 for an ndarray)."""
        confs = [
            c
            for c in (
                tensor_confidence(ctx.type_of(b)) for b in bounds if b is not None and not _guessed(b, ctx)
            )
            if c is not None
        ]
        if not confs:
            return
        conf = min(confs)
        ctx.report(
            self.code,
            node,
            f"`{short(ctx, node)}` takes slice bounds from a {maybe(conf)}tensor: Python needs ints, the graph breaks here",
            gb_ids=("GB0124", "GB0033"),
            confidence=conf,
            help="compute the bounds as Python ints (from shapes or Python lists), or index with torch.narrow / a tensor of indices",
            data={"capturable": False},
        )

    def visit_Subscript(self, node, ctx):
        """`self.experts[idx]` / `python_list[idx]` with a tensor index: Python needs an int;
        `x[a:b]` with tensor bounds likewise."""
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        slices = [p for p in parts if isinstance(p, ast.Slice)]
        if slices:  # x[lo:hi], x[:, lo:hi]
            self._slice_bounds(node, [b for s in slices for b in (s.lower, s.upper, s.step)], ctx)
            return
        base = ctx.type_of(node.value)
        if base.kind not in (T.MODLIST, T.CONTAINER, T.TLIST) or isinstance(node.slice, ast.Slice):
            return
        if base.kind == T.CONTAINER and base.dtype in ("dictattr", "dict"):
            return  # a dict hashes its key: `weights[k]` with a tensor k is a lookup, not an int()
        idx = ctx.type_of(node.slice)
        conf = tensor_confidence(idx)
        if conf is None:
            return
        ctx.report(
            self.code,
            node,
            f"`{short(ctx, node)}` indexes a Python container with a {maybe(conf)}tensor: Python converts it to an int, the graph breaks here",
            gb_ids=("GB0124",),
            confidence=conf,
            help="index with a Python int (e.g. iterate range(len(...))), or keep the data in one stacked tensor",
            data={"capturable": False},
        )

    def finalize(self, cand, env):
        fullgraph = env.region is not None and env.region.fullgraph
        if cand.data.get("capturable") and (fullgraph or env.flag("capture_scalar_outputs", False)):
            return None  # captured as a symbolic scalar; TC102 reports where it decides control flow
        return cand

    invalid = (
        Example(
            """
import torch

@torch.compile
def repeat_double(x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    for _ in range(n.long()):  # expect: TC101
        x = x * 2
    return x
""",
            run="repeat_double(torch.ones(3), torch.tensor(3.0))",
            title="range() of a tensor",
        ),
        Example(
            """
import torch

@torch.compile
def scale(x: torch.Tensor) -> torch.Tensor:
    m = x.abs().max().item()  # expect: TC101
    return x / m
""",
            run="out = scale(torch.randn(8))",
            fixed="""
import torch

@torch.compile
def scale(x: torch.Tensor) -> torch.Tensor:
    m = x.abs().max()  # expect: TC101
    return x / m
""",
        ),
        Example(
            """
import torch

@torch.compile
def mean_as_float(x):
    y = x * 2
    return y / float(y.mean())  # expect: TC101
""",
            run="mean_as_float(torch.randn(8))",
            title="float() of a tensor",
        ),
        Example(
            """
import torch
import torch.nn as nn

class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x, idx: torch.Tensor):
        y = x * 2
        return self.experts[idx[0]](y)  # expect: TC101

experts = torch.compile(Experts())
""",
            run="experts(torch.randn(2, 4), torch.tensor([1]))",
            title="indexing a ModuleList with a tensor",
        ),
        Example(
            """
import math
import torch

@torch.compile
def norm(x):
    y = x * x
    return x / math.sqrt(y.sum())  # expect: TC101
""",
            run="norm(torch.randn(8))",
            gb=("GB0033",),
            title="math on a tensor",
        ),
        Example(
            """
import numpy as np
import torch

@torch.compile
def pad_to(x, k: int):
    n = int(np.maximum(x.shape[1], k))  # expect: TC101
    m = int(np.prod(x.shape))  # expect: TC101
    return x.new_zeros(n) + m
""",
            run="pad_to(torch.randn(2, 3), 4)",
            gb=("GB0208", "GB0033"),
            title="int() of an integer NumPy value, even of Python numbers",
        ),
        Example(
            """
import numpy as np
import torch


def windows(starts, size: int):
    out = np.asarray([v.flatten() for v in np.meshgrid(*starts, indexing="ij")]).T
    return [tuple(slice(s, s + size) for s in row) for row in out]  # expect: TC101


@torch.compile
def crop(x, bounds: torch.Tensor):
    lo = bounds[0]
    y = x[lo : lo + 2]  # expect: TC101
    return y, windows([[0, 1], [0, 2]], 2)
""",
            run="crop(torch.randn(4, 4), torch.tensor([1, 3]))",
            gb=("GB0124", "GB0033"),
            title="slice bounds from a tensor or a NumPy array",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def scale(x):
    m = x.abs().max()
    return x / m
""",
            run="scale(torch.randn(8))",
        ),
        Example(
            """
import torch

@torch.compile
def scale(x):
    n = int(x.shape[0])
    return x / n
""",
            run="scale(torch.randn(8))",
            title="int() of a shape is a Python int already",
        ),
        Example(
            """
import numpy as np
import torch

@torch.compile
def pad_windows(x, window: tuple):
    b, c, h, w = x.shape
    hp = int(np.ceil(h / window[0])) * window[0]
    n = w * 2
    wp = int(2 * (n + np.floor(np.sqrt(40.0 * n))))
    return x.new_zeros(hp, wp) + float(np.log2(c))
""",
            run="pad_windows(torch.randn(1, 2, 7, 5), (4, 4))",
            title="int() / float() of a float NumPy function of Python numbers: Dynamo folds it",
        ),
        Example(
            """
import torch
from torch import nn

class Crop(nn.Module):
    def forward(self, x, start, stop=None):
        return x[:, start:stop]

crop = torch.compile(Crop())
""",
            run="crop(torch.randn(2, 8), 2, 6)",
            title="slice bounds from forward parameters that callers pass as ints",
        ),
        Example(
            """
import torch

@torch.compile
def scale(x):
    s = x.sum().item()
    return x * s
""",
            run="scale(torch.randn(8))",
            settings={"dynamo": {"capture_scalar_outputs": True}},
            title="captured scalar not used in control flow",
        ),
        Example(
            """
import torch

def report(x):
    return x.sum().item()
""",
            run="report(torch.randn(8))",
            title="not compiled",
        ),
    )
