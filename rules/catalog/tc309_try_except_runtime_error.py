import ast

from tclint.rules import types as T
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule

CATCH_ALL = frozenset({"RuntimeError", "Exception", "BaseException"})


class TryExceptAroundTensorOps(Rule):
    """
    ## What it does
    Flags `try: ... except RuntimeError` (or `except Exception`, or a bare `except`) around tensor
    operations inside compiled code.

    ## Why is this bad?
    In eager mode the handler catches a failing op (a shape mismatch, say).  Under compile, the
    failure is found while *tracing* with fake tensors and surfaces as
    `torch._dynamo.exc.TorchRuntimeError` from the compiled call, outside your handler (GB4315):
    code that silently recovered in eager now crashes.  (try/except on Python exceptions raised
    and caught inside the region is traced fine.)

    ## Example
    ```python
    @torch.compile
    def safe_project(x, w):
        try:
            return x @ w
        except RuntimeError:
            return x
    ```

    ## Use instead
    Check shapes explicitly (`if x.shape[-1] == w.shape[0]:` is decided while tracing), or catch
    around the compiled call in eager code.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb4315.html
    """

    code = "TC309"
    name = "try-except-around-tensor-ops"
    summary = "try/except RuntimeError around tensor ops behaves differently under compile"
    family = Family.COMPILE_API
    gb_ids = ("GB4315",)
    default_severity = Severity.WARNING

    def visit_Try(self, node, ctx):
        catches = False
        for handler in node.handlers:
            if handler.type is None:
                catches = True
            else:
                names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                if any(isinstance(n, ast.Name) and n.id in CATCH_ALL for n in names):
                    catches = True
        if not catches:
            return
        tensor_op = False
        for stmt in node.body:
            for sub in ast.walk(stmt):
                if (
                    isinstance(sub, (ast.BinOp, ast.Call))
                    and ctx.type_of(sub).kind == T.TENSOR
                    and ctx.type_of(sub).conf == T.HIGH
                ):
                    tensor_op = True
                    break
        if not tensor_op:
            return
        first = node.handlers[0]
        ctx.report(
            self.code,
            first,
            "this handler catches tensor-op errors in eager mode only: under compile they are raised while tracing, as TorchRuntimeError from the compiled call",
            confidence=T.MEDIUM,
            help="check shapes explicitly, or catch around the compiled call",
        )

    invalid = (
        Example(
            """
import torch

@torch.compile
def safe_project(x: torch.Tensor, w: torch.Tensor):
    try:
        return x @ w
    except RuntimeError:  # expect: TC309
        return x
""",
            run="safe_project(torch.randn(2, 3), torch.randn(4, 5))",
            raises="TorchRuntimeError",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def parse_scale(x):
    try:
        k = float("2.5")
    except ValueError:
        k = 1.0
    return x * k
""",
            run="parse_scale(torch.randn(4))",
            raises="never",
        ),
    )
