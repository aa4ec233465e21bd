from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import short

# torch.nn modules that create Parameters in __init__ (constructing one in compiled code breaks)
PARAM_MODULES = frozenset(
    f"torch.nn.{n}" for n in (
        "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
        "ConvTranspose2d", "ConvTranspose3d", "Embedding", "EmbeddingBag", "LayerNorm", "GroupNorm",
        "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "RMSNorm",
        "LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell", "MultiheadAttention", "PReLU",
        "Transformer", "TransformerEncoderLayer", "TransformerDecoderLayer",
    )
)  # fmt: skip


class ParameterCreatedInCompiledCode(Rule):
    """
    ## What it does
    Flags `nn.Parameter(...)` and construction of parameterised `torch.nn` modules
    (`nn.Linear(...)`, `nn.LayerNorm(...)`, ...) inside compiled code, typically in `forward`.
    Parameter-free modules (`nn.ReLU()`, `nn.Dropout(p)`, `nn.GELU()`) are traced and not flagged.

    ## Why is this bad?
    Dynamo cannot create Parameters while tracing (GB0264; for torch modules the break is reported
    inside `torch/nn/modules/*.py`, tclint points at your call).  Beyond the break, a module built
    in `forward` gets fresh random weights on every call and is invisible to the optimizer: almost
    always a bug.

    ## Example
    ```python
    class Head(nn.Module):
        def forward(self, x):
            proj = nn.Linear(x.shape[-1], 10)
            return proj(x)
    ```

    ## Use instead
    Build submodules and parameters in `__init__` (or use `nn.LazyLinear` there).

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0264.html
    """

    code = "TC116"
    name = "parameter-created-in-compiled-code"
    summary = "`nn.Parameter` or a parameterised nn module is created inside compiled code"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0264",)
    default_severity = Severity.WARNING
    CALLS = frozenset({"torch.nn.Parameter", *PARAM_MODULES})

    def check_call(self, node, ctx, qualified, method):
        fn = ctx.function
        if fn is not None and fn.name == "__init__":
            return  # __init__ is where parameters belong (only traced if the module is built in compiled code)
        what = (
            "`nn.Parameter(...)`"
            if qualified == "torch.nn.Parameter"
            else f"`{short(ctx, node, 40)}` creates Parameters"
        )
        ctx.report(
            self.code,
            node,
            f"{what} inside compiled code: the graph breaks here (and the weights are new on every call)",
            help="create parameters and submodules in __init__",
        )

    invalid = (
        Example(
            """
import torch
import torch.nn as nn

class Head(nn.Module):
    def forward(self, x):
        proj = nn.Linear(x.shape[-1], 3)  # expect: TC116
        return proj(x)

head = torch.compile(Head())
""",
            run="head(torch.randn(2, 4))",
        ),
        Example(
            """
import torch
import torch.nn as nn

@torch.compile
def scaled(x):
    y = x * 2
    s = nn.Parameter(torch.ones(4))  # expect: TC116
    return y * s
""",
            run="scaled(torch.randn(4))",
        ),
    )
    valid = (
        Example(
            """
import torch
import torch.nn as nn

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 3)

    def forward(self, x):
        return nn.functional.gelu(self.proj(nn.Dropout(0.1)(x)))

head = torch.compile(Head())
""",
            run="head(torch.randn(2, 4))",
        ),
    )
