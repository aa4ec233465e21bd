from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule


class WarningsInCompiledCode(Rule):
    """
    ## What it does
    Flags `warnings.warn(...)` (and `warnings.warn_explicit`) inside compiled code.

    ## Why is this bad?
    Dynamo marks `warnings.warn` as skipped: the graph breaks at the call (GB0007) every time the
    line runs, and the warning is still emitted.  Deprecation shims inside `forward` are a common
    source.

    ## Example
    ```python
    @torch.compile
    def forward(x, legacy=False):
        warnings.warn("forward() is deprecated")
        return x * 2
    ```

    ## Use instead
    Warn once at construction time or in the eager caller; inside compiled code, guard it with a
    Python flag that is False in production (`if legacy:` is decided while tracing).

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0007.html
    """

    code = "TC106"
    name = "warnings-in-compiled-code"
    summary = "`warnings.warn` inside compiled code breaks the graph"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0007",)
    default_severity = Severity.WARNING
    CALLS = frozenset({"warnings.warn", "warnings.warn_explicit"})

    def check_call(self, node, ctx, qualified, method):
        ctx.report(
            self.code,
            node,
            f"`{qualified}(...)` inside compiled code: the graph breaks here (the warning is still emitted)",
            help="warn in __init__ or the eager caller instead",
        )

    invalid = (
        Example(
            """
import warnings
import torch

@torch.compile
def step(x):
    y = x * 2
    warnings.warn("step() is deprecated", DeprecationWarning)  # expect: TC106
    return y
""",
            run="step(torch.randn(4))",
        ),
    )
    valid = (
        Example(
            """
import warnings
import torch

@torch.compile
def step(x):
    return x * 2

def legacy_step(x):
    warnings.warn("legacy_step() is deprecated; use step()", DeprecationWarning)
    return step(x)
""",
            run="legacy_step(torch.randn(4))",
            title="warn in the eager wrapper",
        ),
    )
