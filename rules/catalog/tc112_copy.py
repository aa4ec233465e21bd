import ast

from tclint.rules import types as T
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import short


class CopyInCompiledCode(Rule):
    """
    ## What it does
    Flags `copy.deepcopy` of a tensor or module and `copy.copy` of a tensor or list inside compiled
    code.

    ## Why is this bad?
    `copy.deepcopy` of a tensor (or of a module, which holds tensors) breaks the graph inside
    `copy.py` (GB4198); `copy.copy` of a tensor fails as a non-tensor result (GB0208) and of a
    list reaches a skipped `list.copy` (GB0007).  Deep copies of plain dicts and dataclasses are
    traced and not flagged.

    ## Example
    ```python
    @torch.compile
    def ema_step(x, buf):
        snapshot = copy.deepcopy(buf)
        return x + snapshot
    ```

    ## Use instead
    `t.clone()` (or `t.detach().clone()`) for tensors, `list(xs)` / `xs[:]` for lists; copy
    modules outside the compiled region.

    ## Fix safety
    No automatic fix (`clone()` keeps autograd history where `deepcopy` does not).

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb4198.html
    """

    code = "TC112"
    name = "copy-in-compiled-code"
    summary = "`copy.deepcopy` / `copy.copy` of tensors, modules or lists inside compiled code"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB4198", "GB0208", "GB0007")
    default_severity = Severity.WARNING
    CALLS = frozenset({"copy.deepcopy", "copy.copy"})

    def check_call(self, node, ctx, qualified, method):
        if not node.args:
            return
        arg = node.args[0]
        ty = ctx.type_of(arg)
        deep = qualified == "copy.deepcopy"
        if ty.kind == T.TENSOR:
            gb, what = ("GB4198",) if deep else ("GB0208",), "a tensor"
        elif ty.kind in (T.MODULE, T.MODLIST) or (isinstance(arg, ast.Name) and arg.id == ctx.self_name):
            gb, what = ("GB4198",), "a module (it holds tensors)"
        elif ty.kind == T.TLIST:
            gb, what = ("GB4198",) if deep else ("GB0007",), "a list of tensors"
        elif not deep and ty.kind in (T.CONTAINER,) and isinstance(arg, (ast.Name, ast.Attribute)):
            gb, what = ("GB0007",), "a list"
        else:
            return
        ctx.report(
            self.code,
            node,
            f"`{short(ctx, node)}` copies {what} inside compiled code: the graph breaks here",
            gb_ids=gb,
            confidence=ty.conf if ty.kind == T.TENSOR else T.MEDIUM,
            help="use t.clone() for tensors / list(xs) for lists, or copy outside the compiled region",
        )

    invalid = (
        Example(
            """
import copy
import torch

@torch.compile
def snapshot(x: torch.Tensor):
    y = x * 2
    return copy.deepcopy(y)  # expect: TC112
""",
            run="snapshot(torch.randn(4))",
        ),
    )
    valid = (
        Example(
            """
import copy
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = {"scale": 2.0}

    def forward(self, x):
        cfg = copy.deepcopy(self.cfg)
        return x.clone() * cfg["scale"]

net = torch.compile(Net())
""",
            run="net(torch.randn(4))",
            title="deepcopy of a plain dict; clone for tensors",
        ),
    )
