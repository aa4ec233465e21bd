import ast

from tclint.rules import types as T
from tclint.rules.facts import FrameEffect
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import short

# The recurrent modules Dynamo refuses to trace unless torch._dynamo.config.allow_rnn is set
# (GB0014 "Attempted to wrap RNN, GRU, or LSTM"); the cells (RNNCell, GRUCell, LSTMCell) trace.
RNN_CLASSES = frozenset(
    {"torch.nn.RNN", "torch.nn.GRU", "torch.nn.LSTM"}
    | {f"torch.nn.modules.rnn.{c}" for c in ("RNN", "GRU", "LSTM")}
)


class RnnModuleCall(Rule):
    """
    ## What it does
    Flags a call of an `nn.RNN`, `nn.GRU` or `nn.LSTM` module inside compiled code (a submodule
    `self.rnn(x)` or a local module).  The cells (`nn.GRUCell`, `nn.LSTMCell`, `nn.RNNCell`)
    are traced and not flagged.

    ## Why is this bad?
    Dynamo does not trace the fused recurrent modules unless `torch._dynamo.config.allow_rnn` is
    set: it breaks the graph at the call (GB0014 "Attempted to wrap RNN, GRU, or LSTM").  Called
    as a submodule from a module's `forward` (measured, torch 2.13) it cannot resume after the
    break: the whole `forward` runs eagerly ("Skipping the function and falling back to eager").

    ## Example
    ```python
    class Encoder(nn.Module):
        def forward(self, x):
            out, _ = self.rnn(self.emb(x))
            return out
    ```

    ## Use instead
    Compile the code around the recurrent module (the embedding, the heads) and call the RNN from
    eager code, write the loop with a cell (`nn.GRUCell`) so Dynamo traces it, or set
    `torch._dynamo.config.allow_rnn = True` (experimental) and check the result with `tclint probe`.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0014.html
    """

    code = "TC123"
    name = "rnn-module-call"
    summary = "A call of nn.RNN / nn.GRU / nn.LSTM inside compiled code breaks the graph"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0014",)
    default_severity = Severity.WARNING

    def visit_Call(self, node, ctx):
        ty = ctx.type_of(node.func)
        if ty.kind != T.MODULE or ty.ref not in RNN_CLASSES:
            return
        kind = ty.ref.rsplit(".", 1)[-1]
        on_self = (
            isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == ctx.self_name
        )
        if on_self:
            ctx.report(
                self.code,
                node,
                f"`{short(ctx, node)}` calls an nn.{kind}, which Dynamo does not trace: the graph breaks here and the whole function runs eagerly",
                frame=FrameEffect.WHOLE_FRAME,
                help="call the recurrent module from eager code, or use a cell (nn.GRUCell / nn.LSTMCell) in a loop",
            )
        else:
            ctx.report(
                self.code,
                node,
                f"`{short(ctx, node)}` calls an nn.{kind}, which Dynamo does not trace: the graph breaks here",
                help="call the recurrent module from eager code, or use a cell (nn.GRUCell / nn.LSTMCell) in a loop",
            )

    def finalize(self, cand, env):
        if env.flag("allow_rnn", False):
            return None
        return cand

    invalid = (
        Example(
            """
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 8)
        self.rnn = nn.GRU(8, 8, batch_first=True)

    def forward(self, tokens):
        out, h = self.rnn(self.emb(tokens))  # expect: TC123
        return out.mean(1)


encoder = torch.compile(Encoder())
""",
            run="encoder(torch.randint(0, 50, (2, 5)))",
            title="a GRU submodule in forward",
        ),
    )
    valid = (
        Example(
            """
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 8)
        self.out = nn.Linear(8, 50)

    def forward(self, h):
        logits = []
        for _ in range(4):
            h = self.cell(h, h)
            logits.append(self.out(h))
        return torch.stack(logits, 1)


decoder = torch.compile(Decoder())
""",
            run="decoder(torch.randn(2, 8))",
            title="a GRUCell loop is traced",
        ),
    )
