import ast

from tclint.rules import types as T
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import maybe, short, tensor_confidence


def captured_when_scalars_are(cand) -> bool:
    """Whether this rule's candidate is captured, not a break, under fullgraph=True or
    ``capture_scalar_outputs``: an int or bool tensor's ``.tolist()`` is (measured), a float one
    breaks anyway.  TC307 asks it too."""
    return cand.data.get("dtype") in ("int", "bool")


class TensorToList(Rule):
    """
    ## What it does
    Flags `t.tolist()` inside compiled code.

    ## Why is this bad?
    `.tolist()` turns every element into a Python number, which Dynamo cannot trace.  On a
    floating-point tensor it breaks the graph (GB0109) even with `capture_scalar_outputs = True`
    and under `fullgraph=True`.  On an integer tensor it is a data-dependent operator (GB0033);
    scalar capture avoids that break, but the list's length still comes from the data.  MoE
    routers hit this through `x.split(counts.tolist())`.

    ## Example
    ```python
    @torch.compile
    def route(x, counts):
        return x.split(counts.tolist())
    ```

    ## Use instead
    Keep indices and counts as tensors (`torch.index_select`, `index_add_`, a padded dense
    dispatch), or do the data-dependent bookkeeping in eager code around the compiled blocks.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0109.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0033.html
    """

    code = "TC103"
    name = "tensor-tolist"
    summary = "`.tolist()` copies a tensor into Python inside compiled code"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0109", "GB0033")
    default_severity = Severity.WARNING
    METHODS = frozenset({"tolist"})

    def check_call(self, node, ctx, qualified, method):
        if not isinstance(node.func, ast.Attribute) or node.args:
            return
        recv = ctx.type_of(node.func.value)
        conf = tensor_confidence(recv)
        if conf is None:
            if recv.kind != T.UNKNOWN:
                return
            conf = T.LOW
        dtype = recv.dtype
        if dtype == "float":
            gb, kind = ("GB0109",), "floating-point"
        elif dtype in ("int", "bool"):
            gb, kind = ("GB0033",), "integer"
        else:
            gb, kind = ("GB0109", "GB0033"), ""
        ctx.report(
            self.code,
            node,
            f"`{short(ctx, node)}` copies a {maybe(conf)}{kind + ' ' if kind else ''}tensor into a Python list: the graph breaks here",
            gb_ids=gb,
            confidence=conf,
            data={"dtype": dtype},
            help="keep indices/counts as tensors, or move this bookkeeping out of the compiled region",
        )

    def finalize(self, cand, env):
        fullgraph = env.region is not None and env.region.fullgraph
        if captured_when_scalars_are(cand) and (fullgraph or env.flag("capture_scalar_outputs", False)):
            return None
        return cand

    invalid = (
        Example(
            """
import torch

@torch.compile
def as_list(x: torch.Tensor):
    y = x * 2
    return y.tolist()  # expect: TC103
""",
            run="as_list(torch.randn(4))",
            gb=("GB0109",),
            title="float tensor",
        ),
        Example(
            """
import torch

@torch.compile
def split_by_counts(x, idx):
    counts = torch.bincount(idx, minlength=4)  # expect: TC109
    return x.split(counts.tolist())  # expect: TC103
""",
            run="split_by_counts(torch.randn(8, 2), torch.tensor([0, 1, 1, 2, 3, 3, 3, 0]))",
            title="MoE-style split sizes from a tensor",
        ),
        Example(
            """
import torch

@torch.compile
def rows(x, idx: torch.Tensor):
    picked = idx.long() + 1
    return [x[i] for i in picked.tolist()]  # expect: TC103
""",
            run="rows(torch.randn(8, 2), torch.tensor([0, 1, 2]))",
            gb=("GB0033",),
            title="integer tensor",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def rows(x, idx):
    return x.index_select(0, idx)
""",
            run="rows(torch.randn(8, 2), torch.tensor([0, 1, 2]))",
        ),
    )
