import ast

from tclint.rules import types as T
from tclint.rules.facts import FrameEffect
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import maybe, short, tensor_confidence


class RequiresGradMutation(Rule):
    """
    ## What it does
    Flags autograd-state mutation of tensors inside compiled code: `t.requires_grad = ...`,
    `t.requires_grad_()`, `t.retain_grad()`, and `t.data = ...` on a tensor computed inside the
    function.

    ## Why is this bad?
    Dynamo traces autograd state, it cannot change it mid-graph: `requires_grad = ...` breaks with
    GB0206, `requires_grad_()` with GB0125 (input) or GB8985 (intermediate), `t.data = ...` on an
    intermediate with GB0056.  `retain_grad()` is worse: Dynamo gives up on the *whole function*
    (GB0108), which then runs eagerly.

    ## Example
    ```python
    @torch.compile
    def probe_grads(x):
        h = x * 2
        h.retain_grad()
        return h.sum()
    ```

    ## Use instead
    Set `requires_grad` on inputs and parameters before calling the compiled function; collect
    intermediate gradients with `register_hook` (traced) instead of `retain_grad`.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0206.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0108.html
    """

    code = "TC118"
    name = "requires-grad-mutation"
    summary = "Autograd state of a tensor is changed inside compiled code"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0206", "GB0125", "GB8985", "GB0108", "GB0056")
    default_severity = Severity.WARNING
    METHODS = frozenset({"requires_grad_", "retain_grad"})

    def check_call(self, node, ctx, qualified, method):
        if not isinstance(node.func, ast.Attribute) or ctx.qualify(node.func) is not None:
            return
        target = node.func.value
        conf = tensor_confidence(ctx.type_of(target))
        if conf is None:
            return
        if method == "retain_grad":
            ctx.report(
                self.code,
                node,
                f"`{short(ctx, node)}` on a {maybe(conf)}tensor: Dynamo gives up on the whole function, which runs eagerly",
                gb_ids=("GB0108",),
                confidence=conf,
                frame=FrameEffect.WHOLE_FRAME,
                help="use t.register_hook(fn) to capture the gradient instead",
            )
            return
        is_input = isinstance(target, ast.Name) and ctx.is_param(target)
        ctx.report(
            self.code,
            node,
            f"`{short(ctx, node)}` changes autograd state inside compiled code: the graph breaks here",
            gb_ids=("GB0125",) if is_input else ("GB8985",),
            confidence=conf,
            help="set requires_grad before calling the compiled function",
        )

    def visit_Assign(self, node, ctx):
        for target in node.targets:
            if not isinstance(target, ast.Attribute) or target.attr not in ("requires_grad", "data"):
                continue
            conf = tensor_confidence(ctx.type_of(target.value))
            if conf is None:
                continue
            if target.attr == "requires_grad":
                ctx.report(
                    self.code,
                    node,
                    f"setting `{short(ctx, target)}` inside compiled code: the graph breaks here",
                    gb_ids=("GB0206",),
                    confidence=conf,
                    help="set requires_grad before calling the compiled function",
                )
            elif (
                isinstance(target.value, ast.Name)
                and not ctx.is_param(target.value)
                and ctx.type_of(target.value).kind == T.TENSOR
                and ctx.self_name != target.value.id
            ):
                ctx.report(
                    self.code,
                    node,
                    f"assigning `{short(ctx, target)}` on a tensor computed here: the graph breaks",
                    gb_ids=("GB0056",),
                    confidence=conf,
                    help="use t.copy_(...) under torch.no_grad() instead of .data",
                )

    invalid = (
        Example(
            """
import torch

@torch.compile
def probe_grads(x: torch.Tensor):
    h = x * 2
    h.retain_grad()  # expect: TC118
    return h.sum()
""",
            run="probe_grads(torch.randn(4, requires_grad=True))",
            gb=("GB0108",),
        ),
        Example(
            """
import torch

@torch.compile
def leafify(x: torch.Tensor):
    y = x * 2
    y.requires_grad = True  # expect: TC118
    return y
""",
            run="leafify(torch.randn(4))",
            gb=("GB0206",),
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def f(x):
    h = x * 2
    h.register_hook(lambda g: g * 1)
    return h.sum()
""",
            run="f(torch.randn(4, requires_grad=True))",
        ),
    )
