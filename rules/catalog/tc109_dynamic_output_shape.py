import ast

from tclint.rules import types as T
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import maybe, short, tensor_confidence

FUNCS = frozenset(
    {
        "torch.nonzero",
        "torch.argwhere",
        "torch.unique",
        "torch.unique_consecutive",
        "torch.bincount",
        "torch.masked_select",
        "torch.repeat_interleave",
        "torch.where",
    }
)
METHODS = frozenset(
    {"nonzero", "argwhere", "unique", "unique_consecutive", "bincount", "masked_select", "repeat_interleave"}
)
# NumPy's twins: in compiled code Dynamo traces NumPy as tensor ops (trace_numpy, the default), so
# they break alike (``np.where(t.cpu().numpy() > 1)``, ``np.unique(np.array([3, 1, 3]))``: GB0036).
NUMPY_FUNCS = frozenset(
    {"numpy.nonzero", "numpy.argwhere", "numpy.flatnonzero", "numpy.unique", "numpy.where", "numpy.extract"}
)
SUGGEST = {
    "nonzero": "torch.nonzero_static(x, size=K) or keep a boolean mask and use torch.where / masked ops",
    "argwhere": "torch.nonzero_static, or keep the boolean mask",
    "where": "torch.where(cond, a, b) (three arguments), or torch.nonzero_static",
    "unique": "a fixed-size alternative (e.g. torch.bincount with minlength on a known range is also dynamic: sort + mask instead)",
    "unique_consecutive": "a mask of changes (x[1:] != x[:-1]) kept as a tensor",
    "bincount": "one_hot(...).sum(0) or scatter_add_ into a zeros tensor of known size",
    "masked_select": "torch.where(mask, x, 0) or x * mask, keeping the shape",
    "repeat_interleave": "an integer `repeats` (static), or pad to a maximum and mask",
    "mask": "masked assignment (x[mask] = v) or torch.where(mask, x, fill), keeping the shape",
}


class DynamicOutputShape(Rule):
    """
    ## What it does
    Flags operators whose output *size* depends on tensor values: `nonzero`, `argwhere`,
    one-argument `torch.where(cond)`, `unique`, `unique_consecutive`, `bincount` (even with
    `minlength`), `masked_select`, `repeat_interleave` with tensor repeats, and boolean-mask
    indexing `x[mask]`.  Typical in MoE routing, detection post-processing and masking.  NumPy's
    twins too (`np.nonzero`, `np.argwhere`, `np.flatnonzero`, `np.unique`, `np.extract`,
    one-argument `np.where`): in compiled code Dynamo traces NumPy as tensor ops, so
    `np.where(t.cpu().numpy() > 1)` breaks like `torch.nonzero`.

    ## Why is this bad?
    Dynamo cannot give the result a shape while tracing, so it breaks the graph at the operator
    (GB0036 "Dynamic shape operator").  Inside a loop body (the classic per-expert MoE loop) the
    whole function then runs eagerly.  With
    `torch._dynamo.config.capture_dynamic_output_shape_ops = True` (or
    `[tool.tclint.dynamo] capture_dynamic_output_shape_ops = true`) these are captured with
    unbacked symbolic sizes instead, and tclint stays quiet; `fullgraph=True` turns that capture on
    too.

    ## Example
    ```python
    @torch.compile
    def keep_confident(boxes, scores):
        return boxes[scores > 0.5]
    ```

    ## Use instead
    Keep shapes static: masked assignment (`x[mask] = 0`), `torch.where(mask, x, fill)`,
    `torch.nonzero_static(x, size=K)`, top-k instead of thresholding; or enable
    `capture_dynamic_output_shape_ops`.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0036.html
    """

    code = "TC109"
    name = "data-dependent-output-shape"
    summary = "An operator whose output size depends on tensor values"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0036",)
    default_severity = Severity.WARNING
    CALLS = FUNCS | NUMPY_FUNCS
    METHODS = METHODS

    def check_call(self, node, ctx, qualified, method):
        if qualified in NUMPY_FUNCS:
            op = qualified.rsplit(".", 1)[-1]
            if op == "where" and (len(node.args) != 1 or node.keywords):
                return
            if not node.args:
                return
            # an array made from a tensor for sure; anything else is traced too (measured:
            # np.unique(np.array([3, 1, 3])) breaks), but its origin is a guess
            conf = tensor_confidence(ctx.type_of(node.args[0])) or T.MEDIUM
            ctx.report(
                self.code,
                node,
                f"`{short(ctx, node)}` has an output size that depends on {maybe(conf)}array values (Dynamo traces NumPy as tensor ops): the graph breaks here",
                confidence=conf,
                help="do it in the eager caller on the returned tensor, or keep a boolean mask and use torch.where",
            )
            return
        elif qualified in FUNCS:
            op = qualified.rsplit(".", 1)[-1]
            if op == "where" and (len(node.args) != 1 or node.keywords):
                return
            if op == "repeat_interleave" and not _tensor_repeats(node, ctx, 1):
                return
            conf = T.HIGH
        elif method in METHODS and isinstance(node.func, ast.Attribute) and ctx.qualify(node.func) is None:
            op = method
            recv = ctx.type_of(node.func.value)
            conf = tensor_confidence(recv)
            if conf is None:
                return
            if op == "repeat_interleave" and not _tensor_repeats(node, ctx, 0):
                return
        else:
            return
        ctx.report(
            self.code,
            node,
            f"`{short(ctx, node)}` has an output size that depends on {maybe(conf)}tensor values: the graph breaks here",
            confidence=conf,
            help="use " + SUGGEST.get(op, SUGGEST["nonzero"]),
        )

    def visit_Subscript(self, node, ctx):
        if not isinstance(node.ctx, ast.Load):
            return  # x[mask] = v is an index_put: static shape, no break
        base = ctx.type_of(node.value)
        base_conf = tensor_confidence(base)
        if base_conf is None and base.kind not in (T.UNKNOWN, T.DEFERRED):
            return
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        for part in parts:
            ty = ctx.type_of(part)
            if ty.kind == T.TENSOR and ty.dtype == "bool":
                # what a boolean tensor indexes is a tensor (or an array) as a rule, even when its
                # own type is unknown or a helper's return (`a, n = helper(labels)`; `a[cond]`)
                conf = max(ty.conf, T.MEDIUM) if base_conf is None else min(ty.conf, base_conf)
                if conf == T.LOW and base_conf is None:
                    return
                ctx.report(
                    self.code,
                    node,
                    f"`{short(ctx, node)}` selects with a {maybe(conf)}boolean mask: the result's size depends on the data and the graph breaks here",
                    confidence=conf,
                    help="use " + SUGGEST["mask"],
                )
                return

    def finalize(self, cand, env):
        if env.flag("capture_dynamic_output_shape_ops", False) or (
            env.region is not None and env.region.fullgraph
        ):
            return None
        return cand

    invalid = (
        Example(
            """
import torch

@torch.compile
def keep_confident(boxes: torch.Tensor, scores: torch.Tensor):
    boxes = boxes * 2
    return boxes[scores > 0.5]  # expect: TC109
""",
            run="keep_confident(torch.randn(8, 4), torch.rand(8))",
            title="boolean-mask indexing",
        ),
        Example(
            """
import torch


def pairs(labels: torch.Tensor):
    return torch.where(labels[:, None] != labels[None, :])  # expect: TC109


@torch.compile
def close_pairs(x: torch.Tensor, labels: torch.Tensor, margin: float = 2.0):
    a, n = pairs(labels)
    gap = torch.cdist(x, x)[a, n]
    close = gap <= margin
    return a[close], n[close]  # expect: TC109
""",
            run="close_pairs(torch.randn(6, 3), torch.arange(6) % 2)",
            title="a boolean mask on what a helper returned (medium confidence)",
        ),
        Example(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

class SparseMoE(nn.Module):
    def __init__(self, dim=8, n_experts=4, top_k=2):
        super().__init__()
        self.router = nn.Linear(dim, n_experts)
        self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n_experts)])
        self.n_experts = n_experts
        self.top_k = top_k

    def forward(self, x):
        weights, selected = torch.topk(self.router(x).softmax(-1), self.top_k)
        out = torch.zeros_like(x)
        expert_mask = F.one_hot(selected, self.n_experts).permute(2, 1, 0)
        for e in range(self.n_experts):
            idx, top = torch.where(expert_mask[e])  # expect: TC109
            out.index_add_(0, top, self.experts[e](x[top]) * weights[top, idx, None])
        return out

moe = torch.compile(SparseMoE())
""",
            run="moe(torch.randn(6, 8))",
            title="the HF Mixtral routing loop: the whole forward runs eagerly",
        ),
        Example(
            """
import torch

@torch.compile
def active(x):
    y = x.relu()
    return y.nonzero()  # expect: TC109
""",
            run="active(torch.randn(8))",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def zero_negatives(x):
    x = x.clone()
    x[x < 0] = 0
    return torch.where(x > 1, x, torch.zeros_like(x))
""",
            run="zero_negatives(torch.randn(8))",
            title="masked assignment and three-argument where keep shapes",
        ),
        Example(
            """
import torch

@torch.compile
def keep_confident(boxes, scores):
    return boxes[scores > 0.5]
""",
            run="keep_confident(torch.randn(8, 4), torch.rand(8))",
            settings={"dynamo": {"capture_dynamic_output_shape_ops": True}},
            title="captured with capture_dynamic_output_shape_ops",
        ),
    )


def _tensor_repeats(node: ast.Call, ctx, position: int) -> bool:
    arg = (
        node.args[position]
        if len(node.args) > position
        else next((k.value for k in node.keywords if k.arg == "repeats"), None)
    )
    return arg is not None and ctx.type_of(arg).kind == T.TENSOR
