from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule


class CudaSyncInCompiledCode(Rule):
    """
    ## What it does
    Flags `torch.cuda.synchronize()` (and `torch.cuda.current_stream().synchronize()`) inside
    compiled code that is not guarded by `if torch.cuda.is_available():`.

    ## Why is this bad?
    Dynamo traces the synchronize *into the graph* as a device-sync op.  On a machine without
    CUDA the compiled call raises `RuntimeError: Accelerator expected` — even inside
    `try/except`, which catches the eager error but not the one raised from the graph (measured).
    On GPU it also stalls the graph for nothing: compiled code already orders its own work.

    ## Example
    ```python
    @torch.compile
    def step(x):
        y = x * 2
        try:
            torch.cuda.synchronize()
        except Exception:
            pass
        return y
    ```

    ## Use instead
    Synchronise in the eager caller (for timing), or guard it: `if torch.cuda.is_available():`
    (folded away while tracing on CPU).

    ## Fix safety
    No automatic fix.

    ## References
    - https://docs.pytorch.org/docs/stable/generated/torch.cuda.synchronize.html
    """

    code = "TC308"
    name = "cuda-sync-in-compiled-code"
    summary = "An unguarded CUDA synchronize inside compiled code fails on machines without CUDA"
    family = Family.COMPILE_API
    default_severity = Severity.WARNING
    CALLS = frozenset({"torch.cuda.synchronize"})

    def check_call(self, node, ctx, qualified, method):
        if any("is_available" in t and not t.startswith("not ") for t in ctx.scope.tests):
            return
        ctx.report(
            self.code,
            node,
            "`torch.cuda.synchronize()` is traced into the graph: without CUDA the compiled call raises RuntimeError (try/except does not catch it)",
            help="synchronise in the eager caller, or guard with `if torch.cuda.is_available():`",
        )

    invalid = (
        Example(
            """
import torch

@torch.compile
def step(x):
    y = x * 2
    try:
        torch.cuda.synchronize()  # expect: TC308
    except Exception:
        pass
    return y
""",
            run="step(torch.randn(4))",
            raises="RuntimeError",
            title="raises on a machine without CUDA (the test is skipped where CUDA exists)",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def step(x):
    y = x * 2
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return y
""",
            run="step(torch.randn(4))",
            raises="never",
        ),
    )
