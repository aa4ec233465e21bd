import ast

from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import maybe, short, tensor_confidence


class NumpyWithoutTraceNumpy(Rule):
    """
    ## What it does
    Flags `t.numpy()` inside compiled code when the project turns NumPy tracing off
    (`torch._dynamo.config.trace_numpy = False`, or `[tool.tclint.dynamo] trace_numpy = false`).
    With the default (`trace_numpy = True`) NumPy code on tensors is traced as torch operations and
    nothing is reported.

    ## Why is this bad?
    Without NumPy tracing, `Tensor.numpy()` breaks the graph (GB0105) and the NumPy calls on its
    result break again in the resumed frame (GB0293).

    ## Example
    ```python
    torch._dynamo.config.trace_numpy = False

    @torch.compile
    def total(x):
        return np.sum(x.numpy())
    ```

    ## Use instead
    Leave `trace_numpy` on, or write the computation with torch operations.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0105.html
    """

    code = "TC122"
    name = "numpy-without-trace-numpy"
    summary = "`.numpy()` in compiled code with NumPy tracing turned off"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0105",)
    default_severity = Severity.WARNING
    METHODS = frozenset({"numpy"})

    def check_call(self, node, ctx, qualified, method):
        if not isinstance(node.func, ast.Attribute) or qualified is not None:
            return
        conf = tensor_confidence(ctx.type_of(node.func.value))
        if conf is None:
            return
        ctx.report(
            self.code,
            node,
            f"`{short(ctx, node)}` on a {maybe(conf)}tensor with trace_numpy off: the graph breaks here",
            confidence=conf,
            help="turn torch._dynamo.config.trace_numpy back on, or use torch operations",
        )

    def finalize(self, cand, env):
        return cand if env.flag("trace_numpy", True) is False else None

    invalid = (
        Example(
            """
import numpy as np
import torch

@torch.compile
def total(x: torch.Tensor):
    y = x * 2
    return torch.as_tensor(np.sum(y.numpy()))  # expect: TC122
""",
            run="total(torch.randn(4))",
            settings={"dynamo": {"trace_numpy": False}},
        ),
    )
    valid = (
        Example(
            """
import numpy as np
import torch

@torch.compile
def total(x: torch.Tensor):
    y = x * 2
    return torch.as_tensor(np.sum(y.numpy()))
""",
            run="total(torch.randn(4))",
            title="NumPy tracing is on by default",
        ),
    )
