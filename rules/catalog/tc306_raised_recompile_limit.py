import ast

from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule

LIMITS = {
    "recompile_limit": 8,
    "cache_size_limit": 8,
    "accumulated_recompile_limit": 256,
    "accumulated_cache_size_limit": 256,
}


class RaisedRecompileLimit(Rule):
    """
    ## What it does
    Flags raising Dynamo's recompile limits: assignments to `torch._dynamo.config.recompile_limit`
    (`cache_size_limit` in releases up to 2.6), `accumulated_recompile_limit`, the same keys in
    `torch._dynamo.config.patch(...)`, and `torch.compile(..., recompile_limit=N)` above the
    defaults (8 and 256 in torch 2.13).

    ## Why is this bad?
    Hitting the limit is a symptom: some guard fails on every call (an int attribute that
    changes, a growing list, an unbounded argument).  Raising the limit hides it: the process keeps
    compiling new variants (seconds each, memory for each) instead of running the cached graph.
    Find the failing guard instead (`TORCH_LOGS=recompiles`, or `tclint probe`), and make the set
    of variants bounded.

    ## Example
    ```python
    torch._dynamo.config.cache_size_limit = 64
    ```

    ## Use instead
    Keep the default and fix what recompiles (TC2xx rules point at the usual causes).

    ## Fix safety
    No automatic fix.

    ## References
    - https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html
    """

    code = "TC306"
    name = "raised-recompile-limit"
    summary = "Raising the recompile limit hides the guard failures behind it"
    family = Family.COMPILE_API
    default_severity = Severity.WARNING
    region_only = False

    def visit_Assign(self, node, ctx):
        for target in node.targets:
            q = ctx.qualify(target) or ""
            key = q.rsplit(".", 1)[-1]
            if q.startswith("torch._dynamo.config.") and key in LIMITS:
                self._check_value(node, key, node.value, ctx)

    def visit_Call(self, node, ctx):
        q = ctx.qualify(node.func)
        if q == "torch.compile":
            for kw in node.keywords:
                if kw.arg == "recompile_limit":
                    self._check_value(kw, "recompile_limit", kw.value, ctx)
        elif q == "torch._dynamo.config.patch":
            for kw in node.keywords:
                if kw.arg in LIMITS:
                    self._check_value(kw, kw.arg, kw.value, ctx)

    def _check_value(self, node, key, value, ctx):
        try:
            v = ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError):
            v = None
        if isinstance(v, int) and not isinstance(v, bool) and v <= LIMITS[key]:
            return
        shown = ctx.segment(value) or "?"
        ctx.report(
            self.code,
            node,
            f"raising `{key}` to {shown} (default {LIMITS[key]}) hides the guard failures that cause recompiles",
            help="find the failing guard (TORCH_LOGS=recompiles or `tclint probe`) and bound the variants instead",
        )

    invalid = (
        Example(
            """
import torch

torch._dynamo.config.recompile_limit = 64  # expect: TC306

@torch.compile
def unroll(x, n: int):  # expect: TC203
    for _ in range(n):
        x = x.sin()
    return x
""",
            run="for n in range(1, 21):\n    unroll(torch.randn(4), n)",
            compiles=20,
            title="the raised limit lets the recompiles run on (20 compiles instead of stopping at 8)",
        ),
    )
    valid = (
        Example(
            """
import torch

torch._dynamo.config.recompile_limit = 4

@torch.compile
def scale(x, k: float):
    return x * k
""",
            run="for k in range(1, 21):\n    scale(torch.randn(4), k / 10)",
            compiles=2,
            title="lowering the limit is fine",
        ),
    )
