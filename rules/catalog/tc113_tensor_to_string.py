import ast

from tclint.rules.facts import FrameEffect
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import builtin_call, maybe, short, tensor_confidence


class TensorToString(Rule):
    """
    ## What it does
    Flags a tensor's *contents* turned into text inside compiled code: `str(t)`, `repr(t)`,
    `format(t)`, and the length of an f-string that embeds a tensor (`len(f"{t}")`).  Strings of
    shapes and dtypes (`str(x.shape)`, `f"{x.dtype}"`) are fine and not flagged; an f-string of a
    tensor that is only built (or returned) is lazy and does not break either.

    ## Why is this bad?
    Printing a tensor needs its values.  `str(t)` fails on the builtin (GB0059), `repr(t)` has its
    own break (GB0569).  Consuming an f-string of a tensor (`len(f"{t}")`) raises inside Dynamo
    ("Observed exception", GB0088) and Dynamo then silently runs the *whole function* eagerly.

    ## Example
    ```python
    @torch.compile
    def step(x):
        tag = str(x.mean())
        return x * 2, tag
    ```

    ## Use instead
    Format values in the eager caller, from the returned tensors.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0569.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0088.html
    """

    code = "TC113"
    name = "tensor-to-string"
    summary = "A tensor's values are turned into text inside compiled code"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0059", "GB0569", "GB0088")
    default_severity = Severity.WARNING
    CALLS = frozenset({"builtins.str", "builtins.repr", "builtins.format", "builtins.len"})

    def check_call(self, node, ctx, qualified, method):
        func = node.func
        if not isinstance(func, ast.Name) or not node.args or not builtin_call(node, ctx, func.id):
            return
        arg = node.args[0]
        if func.id == "len":
            if isinstance(arg, ast.JoinedStr):
                conf = _fstring_tensor(arg, ctx)
                if conf is not None:
                    ctx.report(
                        self.code,
                        node,
                        f"`{short(ctx, node)}` consumes an f-string of a {maybe(conf)}tensor: Dynamo raises internally and runs the whole function eagerly",
                        gb_ids=("GB0088",),
                        confidence=conf,
                        frame=FrameEffect.WHOLE_FRAME,
                        help="format tensors in the eager caller",
                    )
            return
        conf = tensor_confidence(ctx.type_of(arg))
        if conf is None:
            return
        gb = "GB0569" if func.id == "repr" else "GB0059"
        ctx.report(
            self.code,
            node,
            f"`{func.id}()` of a {maybe(conf)}tensor needs its values: the graph breaks here",
            gb_ids=(gb,),
            confidence=conf,
            help="format tensors in the eager caller",
        )

    invalid = (
        Example(
            """
import torch

@torch.compile
def tagged(x: torch.Tensor):
    y = x * 2
    tag = str(y)  # expect: TC113
    return y, tag
""",
            run="tagged(torch.randn(4))",
        ),
        Example(
            """
import torch

@torch.compile
def tagged(x: torch.Tensor):
    y = x * 2
    n = len(f"{y}")  # expect: TC113
    return y + n
""",
            run="tagged(torch.randn(4))",
            gb=("GB0088",),
            title="an f-string of a tensor, consumed",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def tagged(x):
    tag = f"{x.shape} {x.dtype}"
    return x * 2, str(x.shape), tag
""",
            run="tagged(torch.randn(4))",
        ),
    )


def _fstring_tensor(node: ast.JoinedStr, ctx) -> int | None:
    best = None
    for value in node.values:
        if isinstance(value, ast.FormattedValue):
            conf = tensor_confidence(ctx.type_of(value.value))
            if conf is not None and (best is None or conf < best):
                best = conf
    return best
