import ast

from tclint.rules import types as T
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import short

HOOKS = frozenset(
    {"register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
     "register_full_backward_pre_hook", "register_backward_hook"}
)  # fmt: skip


class HookRegistrationInCompiledCode(Rule):
    """
    ## What it does
    Flags registering module hooks inside compiled code: `module.register_forward_hook(fn)`,
    `register_forward_pre_hook`, `register_full_backward_hook` (and the handle's `.remove()` that
    usually follows).  Hooks registered once, outside the compiled function, are fine: Dynamo traces
    them when the module runs.

    ## Why is this bad?
    Registering a hook mutates the module's hook dictionaries, which Dynamo cannot do while
    tracing: the graph breaks at the registration (GB0467 "setattr() on unsupported type") and
    again where the returned `RemovableHandle` is used (GB0013).  Output-capturing code that adds
    hooks per forward call (to collect attentions or hidden states) pays this on every call.

    ## Example
    ```python
    @torch.compile
    def forward_with_features(model, x):
        feats = []
        handle = model.block.register_forward_hook(lambda m, i, o: feats.append(o))
        y = model(x)
        handle.remove()
        return y, feats
    ```

    ## Use instead
    Register hooks once, before compiling (they are traced when the module runs), or return the
    intermediate values from `forward` directly.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0467.html
    """

    code = "TC121"
    name = "hook-registration-in-compiled-code"
    summary = "A module hook is registered inside compiled code"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0467", "GB0013")
    default_severity = Severity.WARNING
    METHODS = HOOKS

    def check_call(self, node, ctx, qualified, method):
        if not isinstance(node.func, ast.Attribute) or qualified is not None:
            return
        recv = ctx.type_of(node.func.value)
        if recv.kind == T.TENSOR:
            return  # tensor.register_hook is a gradient hook: traced
        conf = (
            T.HIGH
            if recv.kind in (T.MODULE, T.ELEM, T.MODLIST) or ctx.is_self_attr(node.func.value) is not None
            else T.MEDIUM
        )
        ctx.report(
            self.code,
            node,
            f"`{short(ctx, node.func)}(...)` registers a hook inside compiled code: the graph breaks here (and where the handle is used)",
            gb_ids=("GB0467",),
            confidence=conf,
            help="register hooks once, before compiling, or return the values from forward",
        )

    invalid = (
        Example(
            """
import torch
import torch.nn as nn

lin = nn.Linear(4, 4)

def double(mod, inp, out):
    return out * 2

@torch.compile
def f(x):
    y = x + 1
    handle = lin.register_forward_hook(double)  # expect: TC121
    return lin(y), handle
""",
            run="f(torch.randn(2, 4))",
        ),
    )
    valid = (
        Example(
            """
import torch
import torch.nn as nn

lin = nn.Linear(4, 4)

def double(mod, inp, out):
    return out * 2

lin.register_forward_hook(double)

@torch.compile
def f(x):
    return lin(x) + 1
""",
            run="f(torch.randn(2, 4))",
            title="a hook registered before compiling is traced",
        ),
    )
