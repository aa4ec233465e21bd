import ast

from tclint.rules.facts import FrameEffect
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import short


def _data_ptr_call(node: ast.expr) -> ast.expr | None:
    """The tensor expression of ``t.data_ptr()``, or None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "data_ptr"
        and not node.args
    ):
        return node.func.value
    return None


class DataPtrUse(Rule):
    """
    ## What it does
    Flags arithmetic on `t.data_ptr()` (alignment checks like `x.data_ptr() % 16`) and comparisons
    of data pointers of different tensors inside compiled code.  Reading `data_ptr()` without using
    it, returning it, or comparing a tensor's pointer with its own is traced and not flagged.

    ## Why is this bad?
    Arithmetic on the pointer raises inside Dynamo ("Observed exception", GB0088) and Dynamo then
    runs the *whole function* eagerly, with no error and no sign.  Comparing two tensors' pointers
    is a separate break (GB5976).

    ## Example
    ```python
    @torch.compile
    def kernel_path(x):
        if x.data_ptr() % 16 == 0:
            return x * 2
        return x.contiguous() * 2
    ```

    ## Use instead
    Check alignment in the eager caller and pass the decision in as a Python bool (or compile
    one function per path).

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0088.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb5976.html
    """

    code = "TC114"
    name = "data-ptr-use"
    summary = "Arithmetic on or comparison of tensor data pointers inside compiled code"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0088", "GB5976")
    default_severity = Severity.ERROR

    def visit_BinOp(self, node, ctx):
        if _data_ptr_call(node.left) is not None or _data_ptr_call(node.right) is not None:
            ctx.report(
                self.code,
                node,
                f"`{short(ctx, node)}`: arithmetic on a data pointer makes Dynamo raise internally and run the whole function eagerly",
                gb_ids=("GB0088",),
                frame=FrameEffect.WHOLE_FRAME,
                help="check pointers in the eager caller and pass a Python bool in",
            )

    def visit_Compare(self, node, ctx):
        ptrs = [_data_ptr_call(x) for x in (node.left, *node.comparators)]
        ptrs = [p for p in ptrs if p is not None]
        if len(ptrs) >= 2 and len({ast.dump(_strip(p)) for p in ptrs}) > 1:
            ctx.report(
                self.code,
                node,
                f"`{short(ctx, node)}` compares data pointers of different tensors: the graph breaks here",
                gb_ids=("GB5976",),
                help="compare in the eager caller",
            )

    invalid = (
        Example(
            """
import torch

@torch.compile
def aligned(x: torch.Tensor):
    y = x * 2
    return y + (x.data_ptr() % 2)  # expect: TC114
""",
            run="aligned(torch.randn(4))",
        ),
        Example(
            """
import torch

@torch.compile
def same_storage(x: torch.Tensor, z: torch.Tensor):
    y = x * 2
    if x.data_ptr() == z.data_ptr():  # expect: TC114
        return y
    return y + 1
""",
            run="same_storage(torch.randn(4), torch.randn(4))",
            gb=("GB5976",),
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def f(x):
    same = x.data_ptr() == x.detach().data_ptr()
    return x * 2 if same else x
""",
            run="f(torch.randn(4))",
        ),
    )


def _strip(node: ast.expr) -> ast.expr:
    """`x.detach()` / `x.view(...)` share storage with `x`: compare the base names."""
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("detach", "view", "view_as", "reshape")
    ):
        node = node.func.value
    return node
