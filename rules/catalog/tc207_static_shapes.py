from tclint.rules.model import Severity
from tclint.rules.rule import Example, Rule


class StaticShapes(Rule):
    """
    ## What it does
    Flags settings that make every new input shape compile a new variant:
    `torch.compile(..., dynamic=False)` and `torch._dynamo.config.automatic_dynamic_shapes =
    False` (or `assume_static_by_default = True` together with it).

    ## Why is this bad?
    By default Dynamo compiles the first shape statically, then makes a changing dimension
    dynamic: a batch size that varies costs 2 compiles.  With `dynamic=False` or automatic dynamic
    shapes turned off, each distinct size is its own compile (measured: 5 sizes, 5 compiles) until
    the recompile limit (8), after which the function runs eagerly.  Right for a fixed-shape
    CUDA-graph deployment, wrong for variable sequence lengths.

    ## Example
    ```python
    encoder = torch.compile(Encoder(), dynamic=False)
    for batch in loader:          # variable sequence lengths
        encoder(batch.tokens)
    ```

    ## Use instead
    Keep the default (`dynamic=None`), or bucket/pad lengths to a few sizes and warm them up, or
    mark the varying dimension with `torch._dynamo.mark_dynamic(x, 1, min=..., max=...)` *before*
    the call.

    ## Fix safety
    No automatic fix.

    ## References
    - https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html
    """

    code = "TC207"
    name = "static-shape-recompiles"
    summary = "Static shapes requested: every new input size compiles a new variant"
    family = "recompile"
    default_severity = Severity.INFO
    region_only = False

    def visit_Call(self, node, ctx):
        q = ctx.qualify(node.func)
        if q != "torch.compile":
            return
        for kw in node.keywords:
            if kw.arg == "dynamic" and getattr(kw.value, "value", None) is False:
                ctx.report(
                    self.code, kw,
                    "`dynamic=False`: every distinct input shape compiles a new variant (up to the recompile limit, then eager)",
                    help="keep dynamic=None unless shapes are fixed; bucket lengths, or mark_dynamic before the call",
                )

    def visit_Assign(self, node, ctx):
        for target in node.targets:
            q = ctx.qualify(target)
            if q == "torch._dynamo.config.automatic_dynamic_shapes" and getattr(node.value, "value", None) is False:
                ctx.report(
                    self.code, node,
                    "automatic dynamic shapes are off: every distinct input shape compiles a new variant, up to the recompile limit",
                    help="leave automatic_dynamic_shapes on, or bucket input shapes",
                )

    invalid = (
        Example(
            """
import torch

def encode(x):
    return x.cumsum(0) * 2

encoder = torch.compile(encode, dynamic=False)  # expect: TC207
""",
            run="for n in (8, 16, 32, 64, 128):\n    encoder(torch.randn(n))",
            compiles=5,
        ),
    )
    valid = (
        Example(
            """
import torch

def encode(x):
    return x.cumsum(0) * 2

encoder = torch.compile(encode)
""",
            run="for n in (8, 16, 32, 64, 128):\n    encoder(torch.randn(n))",
            compiles=2,
        ),
    )
