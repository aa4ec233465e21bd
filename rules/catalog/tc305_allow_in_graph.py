import ast

from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Lifecycle, Rule


class AllowInGraphOnUserCode(Rule):
    """
    ## What it does
    Flags `torch.compiler.allow_in_graph` (decorator or call) applied to the project's own
    functions.

    ## Why is this bad?
    `allow_in_graph` tells Dynamo to put the function into the graph as one opaque call *without
    tracing it* and without its safety checks.  If the function has Python side effects, depends
    on global state or does data-dependent control flow, the result is silently wrong instead of a
    visible graph break.  It exists for a few framework-level functions, not to silence breaks.

    ## Example
    ```python
    @torch.compiler.allow_in_graph
    def gate(x):
        return x if x.sum() > 0 else -x
    ```

    ## Use instead
    Fix the break (TC1xx rules say how), use `torch.compiler.disable` to keep a function eager
    on purpose, or register a proper `torch.library.custom_op` with a fake implementation.

    ## Fix safety
    No automatic fix.

    ## References
    - https://docs.pytorch.org/docs/stable/generated/torch.compiler.allow_in_graph.html
    """

    code = "TC305"
    name = "allow-in-graph-on-user-code"
    summary = "`allow_in_graph` on project code skips Dynamo's safety checks"
    family = Family.COMPILE_API
    default_severity = Severity.WARNING
    region_only = False
    lifecycle = Lifecycle.PREVIEW  # a correctness hazard with nothing to observe on a correct function
    CALLS = frozenset({"torch.compiler.allow_in_graph"})

    def visit_FunctionDef(self, node, ctx):
        for dec in node.decorator_list:
            if ctx.qualify(dec) == "torch.compiler.allow_in_graph":
                ctx.report(
                    self.code,
                    dec,
                    f"`allow_in_graph` on `{node.name}`: Dynamo will not trace or check it; side effects and data-dependent branches become silent errors",
                    help="fix the graph break instead, or use torch.compiler.disable / a custom op",
                )

    def check_call(self, node, ctx, qualified, method):
        if not node.args or not isinstance(node.args[0], (ast.Name, ast.Attribute)):
            return
        q = ctx.qualify(node.args[0])
        if q is None or q.startswith("torch."):
            return
        ctx.report(
            self.code,
            node,
            f"`allow_in_graph({ctx.segment(node.args[0])})`: Dynamo will not trace or check it; side effects and data-dependent branches become silent errors",
            help="fix the graph break instead, or use torch.compiler.disable / a custom op",
        )

    invalid = (
        Example(
            """
import torch

@torch.compiler.allow_in_graph  # expect: TC305
def gate(x):
    return x * 2
""",
            proof=False,
            title="a hazard of correctness, not a break: nothing to observe on a correct function",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compiler.disable
def report(x):
    print(x.mean())
""",
            proof=False,
        ),
    )
