import ast

from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import short, tensor_confidence


class AutogradInCompiledCode(Rule):
    """
    ## What it does
    Flags `loss.backward()`, `torch.autograd.backward(...)` and `torch.autograd.grad(...)` inside
    compiled code.

    ## Why is this bad?
    Dynamo does not trace the backward call of a compiled function: `.backward()` breaks the graph
    (GB0123), and `torch.autograd.grad` breaks unless
    `torch._dynamo.config.trace_autograd_ops = True` (GB9186).  Compiling a whole training step
    including `backward` therefore yields a forward graph, a break, and eager backward glue; the
    backward of the forward graph is still compiled by AOTAutograd.

    ## Example
    ```python
    @torch.compile
    def train_step(model, x, y):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        return loss
    ```

    ## Use instead
    Compile the model (or the loss computation) and call `backward()` in eager code; the backward
    pass of the compiled forward is compiled too.  For the whole step, try
    `torch._dynamo.config.compiled_autograd`.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0123.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb9186.html
    """

    code = "TC115"
    name = "autograd-in-compiled-code"
    summary = "`backward()` / `torch.autograd.grad` inside compiled code"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0123", "GB9186")
    default_severity = Severity.WARNING
    METHODS = frozenset({"backward"})
    CALLS = frozenset({"torch.autograd.grad", "torch.autograd.backward"})

    def check_call(self, node, ctx, qualified, method):
        if qualified == "torch.autograd.grad":
            ctx.report(
                self.code,
                node,
                "`torch.autograd.grad(...)` inside compiled code: the graph breaks here",
                gb_ids=("GB9186",),
                data={"grad": True},
                help="compute gradients in the eager caller",
            )
            return
        if qualified == "torch.autograd.backward":
            ctx.report(
                self.code,
                node,
                "`torch.autograd.backward(...)` inside compiled code: the graph breaks here",
                gb_ids=("GB0123",),
                help="call backward in the eager caller",
            )
            return
        if method == "backward" and isinstance(node.func, ast.Attribute) and ctx.qualify(node.func) is None:
            conf = tensor_confidence(ctx.type_of(node.func.value))
            if conf is None:
                return
            ctx.report(
                self.code,
                node,
                f"`{short(ctx, node)}` inside compiled code: the graph breaks here",
                gb_ids=("GB0123",),
                confidence=conf,
                help="compile the forward/loss and call backward() in eager code",
            )

    def finalize(self, cand, env):
        if cand.data.get("grad") and env.flag("trace_autograd_ops", False):
            return None
        return cand

    invalid = (
        Example(
            """
import torch

@torch.compile
def step(w: torch.Tensor, x: torch.Tensor):
    loss = (w * x).sum()
    loss.backward()  # expect: TC115
    return loss.detach()
""",
            run="step(torch.randn(4, requires_grad=True), torch.randn(4))",
        ),
        Example(
            """
import torch

@torch.compile
def grads(w: torch.Tensor, x: torch.Tensor):
    loss = (w * x).sum()
    (g,) = torch.autograd.grad(loss, [w])  # expect: TC115
    return g
""",
            run="grads(torch.randn(4, requires_grad=True), torch.randn(4))",
            gb=("GB9186",),
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def loss_fn(w, x):
    return (w * x).sum()

w = torch.randn(4, requires_grad=True)
loss = loss_fn(w, torch.randn(4))
loss.backward()
""",
            title="backward in eager code",
        ),
    )
