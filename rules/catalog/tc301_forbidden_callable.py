from tclint.rules.model import Applicability, Fix, Severity, Span
from tclint.rules.rule import Example, Family, Rule

FORBIDDEN = {
    "torch._dynamo.mark_dynamic": "mark_dynamic",
    "torch._dynamo.maybe_mark_dynamic": "maybe_mark_dynamic",
    "torch._dynamo.mark_static": "mark_static",
    "torch._dynamo.mark_unbacked": "mark_unbacked",
    "torch.compiler.set_stance": "set_stance",
    "torch._dynamo.reset": "reset",
    "torch.compiler.reset": "reset",
}


class ForbiddenCallableInCompiledCode(Rule):
    """
    ## What it does
    Flags compile-control APIs called *inside* compiled code: `torch._dynamo.mark_dynamic`,
    `maybe_mark_dynamic`, `mark_static`, `mark_unbacked`, `torch.compiler.set_stance` and
    `torch.compiler.reset` / `torch._dynamo.reset`.

    ## Why is this bad?
    These configure the compiler for the *next* compilation; Dynamo refuses to trace them.  It is
    not a graph break but a hard error: the compiled call raises `AssertionError: Attempt to trace
    forbidden callable <function mark_dynamic>`.

    ## Example
    ```python
    @torch.compile
    def encode(x):
        torch._dynamo.mark_dynamic(x, 0)
        return x.cumsum(0)
    ```

    ## Use instead
    Call them before the compiled function, in eager code:
    ```python
    torch._dynamo.mark_dynamic(x, 0, min=2, max=4096)
    encode(x)
    ```

    ## Fix safety
    An unsafe fix (a libcst codemod) for `mark_dynamic` / `maybe_mark_dynamic` / `mark_static` /
    `mark_unbacked` on a parameter at the top of the compiled function: the call is removed from
    the function and written before every call of the function in the same file, on the argument
    passed there.  Offered only where every such call passes a plain name and is a simple
    statement.  Unsafe: calls from other files no longer raise, and get no mark.  No fix for
    `set_stance` and `reset` (moving global compiler state changes every later call).

    ## References
    - https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html
    """

    code = "TC301"
    name = "forbidden-callable-in-compiled-code"
    summary = "A compile-control API is called inside compiled code: a hard error"
    family = Family.COMPILE_API
    default_severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    CALLS = frozenset(FORBIDDEN)

    def check_call(self, node, ctx, qualified, method):
        name = FORBIDDEN[qualified]
        fix = None
        if name.startswith(("mark_", "maybe_mark_")) and ctx.function is not None:
            loc = ctx.loc(node)
            fix = Fix(
                f"Move `{name}` before the calls of the compiled function",
                (),
                Applicability.UNSAFE,
                codemod=("mark-before-call", Span.of(loc.line, loc.col, loc.end_line, loc.end_col)),
            )
        ctx.report(
            self.code,
            node,
            f"`{qualified}(...)` inside compiled code: Dynamo refuses to trace it (AssertionError: Attempt to trace forbidden callable `{name}`)",
            help="call it in eager code before the compiled function",
            fix=fix,
        )

    invalid = (
        Example(
            """
import torch

@torch.compile
def encode(x):
    torch._dynamo.mark_dynamic(x, 0)  # expect: TC301
    return x.cumsum(0)

def run(x):
    return encode(x)
""",
            run="out = run(torch.arange(8.0))",
            raises="Attempt to trace forbidden callable",
            fixed="""
import torch

@torch.compile
def encode(x):
    return x.cumsum(0)

def run(x):
    torch._dynamo.mark_dynamic(x, 0)
    return encode(x)
""",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def encode(x):
    return x.cumsum(0)

x = torch.randn(8)
torch._dynamo.mark_dynamic(x, 0)
encode(x)
""",
            raises="never",
        ),
    )
