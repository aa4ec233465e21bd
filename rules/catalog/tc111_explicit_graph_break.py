from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule


class ExplicitGraphBreak(Rule):
    """
    ## What it does
    Flags `torch._dynamo.graph_break()` inside compiled code.

    ## Why is this bad?
    It is a break on purpose (GB0025), usually left over from debugging.  Inside a loop body it
    makes Dynamo give up on the whole function.

    ## Example
    ```python
    @torch.compile
    def f(x):
        y = x.sin()
        torch._dynamo.graph_break()
        return y.cos()
    ```

    ## Use instead
    Remove it; if the split is intended, keep it and say why with `# noqa: TC111`.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0025.html
    """

    code = "TC111"
    name = "explicit-graph-break"
    summary = "`torch._dynamo.graph_break()` splits the graph on purpose"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0025",)
    default_severity = Severity.INFO
    CALLS = frozenset({"torch._dynamo.graph_break"})

    def check_call(self, node, ctx, qualified, method):
        ctx.report(
            self.code,
            node,
            "explicit `torch._dynamo.graph_break()`: the graph breaks here",
            help="remove it unless the split is intended",
        )

    invalid = (
        Example(
            """
import torch

@torch.compile
def f(x):
    y = x.sin()
    torch._dynamo.graph_break()  # expect: TC111
    return y.cos()
""",
            run="f(torch.randn(4))",
        ),
    )
    valid = (
        Example(
            """
import torch

def f(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y.cos()
""",
            run="f(torch.randn(4))",
            title="not compiled",
        ),
    )
