import ast

from tclint.rules import types as T
from tclint.rules.facts import FrameEffect
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import short

# measured on torch 2.13: GB0208 then GB0142 on the `with` line; the body and the rest of the
# function run eagerly.
UNSUPPORTED = frozenset(
    {
        "torch.backends.cudnn.flags",
        "torch.backends.cuda.sdp_kernel",
        "torch.random.fork_rng",
        "torch.backends.mkldnn.flags",
        "torch.backends.mkl.verbose",
        "torch.backends.mkldnn.verbose",
    }
)


class UnsupportedContextManager(Rule):
    """
    ## What it does
    Flags context managers Dynamo cannot trace inside compiled code: `torch.backends.cudnn.flags`,
    `torch.backends.cuda.sdp_kernel` (deprecated), `torch.random.fork_rng`, and entering a
    *pre-existing* instance of a project's own context-manager class (a module global or
    `self.ctx`).  Supported ones are not flagged: `torch.no_grad`, `enable_grad`,
    `set_grad_enabled`, `torch.autocast` / `torch.amp.autocast`, `torch.nn.attention.sdpa_kernel`,
    `record_function`, `contextlib.nullcontext` / `suppress`, and user context managers
    constructed in the `with` statement itself.

    ## Why is this bad?
    For the torch ones Dynamo breaks twice on the `with` line (GB0208, then GB0142
    "Unsupported context manager") and gives up on the rest of the function after it: the body
    and everything that follows run eagerly.  Entering an existing user context-manager object
    breaks with GB0142 and drops the *whole* function to eager.

    ## Example
    ```python
    @torch.compile
    def attend(q, k, v):
        with torch.backends.cuda.sdp_kernel(enable_flash=False):
            return F.scaled_dot_product_attention(q, k, v)
    ```

    ## Use instead
    `torch.nn.attention.sdpa_kernel(...)` instead of `sdp_kernel`; set backend flags or fork RNG
    state in the eager caller; construct user context managers in the `with` statement.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0142.html
    """

    code = "TC119"
    name = "unsupported-context-manager"
    summary = "A context manager Dynamo cannot trace inside compiled code"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0208", "GB0142")
    default_severity = Severity.WARNING

    def visit_With(self, node, ctx):
        for item in node.items:
            expr = item.context_expr
            target = expr.func if isinstance(expr, ast.Call) else None
            q = ctx.qualify(target) if target is not None else None
            if q in UNSUPPORTED:
                ctx.report(
                    self.code,
                    expr,
                    f"`{short(ctx, expr)}` cannot be traced: the graph breaks here and the rest of the function runs eagerly",
                    gb_ids=("GB0208", "GB0142"),
                    help="use torch.nn.attention.sdpa_kernel for SDPA backends; set flags in the eager caller",
                )
                continue
            if isinstance(expr, (ast.Name, ast.Attribute)) and ctx.qualify(expr) is None:
                ty = ctx.type_of(expr)
                existing = (
                    isinstance(expr, ast.Attribute)
                    and ctx.is_self_attr(expr) is not None
                    or (isinstance(expr, ast.Name) and ctx.is_global_name(expr.id))
                )
                if (
                    existing
                    and ty.kind == T.INSTANCE
                    and ty.ref
                    and not ty.ref.startswith(("torch.", "<", "contextlib."))
                ):
                    ctx.report(
                        self.code,
                        expr,
                        f"entering the existing context-manager object `{short(ctx, expr)}`: Dynamo gives up on the whole function, which runs eagerly",
                        gb_ids=("GB0142",),
                        frame=FrameEffect.WHOLE_FRAME,
                        help="construct the context manager in the `with` statement instead",
                    )

    invalid = (
        Example(
            """
import torch

@torch.compile
def matmul_no_cudnn(x):
    y = x * 2
    with torch.backends.cudnn.flags(enabled=False):  # expect: TC119
        y = y @ y.T
    return y
""",
            run="matmul_no_cudnn(torch.randn(4, 4))",
        ),
        Example(
            """
import torch

class Timer:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

TIMER = Timer()

@torch.compile
def step(x):
    with TIMER:  # expect: TC119
        return x * 2
""",
            run="step(torch.randn(4))",
            gb=("GB0142",),
            title="a pre-existing user context-manager object",
        ),
    )
    valid = (
        Example(
            """
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

@torch.compile
def attend(q, k, v):
    with torch.no_grad(), torch.autocast("cpu", enabled=False), sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(q, k, v)
""",
            run="attend(torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8))",
        ),
    )
