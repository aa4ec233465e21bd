from tclint.rules.model import Severity
from tclint.rules.rule import Family, Rule


class RecompileLimitHit(Rule):
    """
    ## What it does
    Reported by `tclint probe`: a function hit Dynamo's recompile limit
    (`torch._dynamo.config.recompile_limit`, 8 by default; `cache_size_limit` in older releases)
    and Dynamo refused to compile it again (GB0039).

    ## Why is this bad?
    Past the limit the cached variants are still used, but every new input runs *eagerly*, with no
    warning beyond one log line: the model silently loses compilation for exactly the inputs that
    keep changing.  Raising the limit only hides the cause.

    ## Example
    ```text
    model.py:12:0: TC903 `forward` reached the recompile limit after 8 compiles
    ```

    ## Use instead
    Find the guard that keeps failing (the TC902 diagnostics of the same function) and bound the
    variant set: make the changing value a tensor or a dynamic dimension, or bucket it.

    ## Fix safety
    No fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0039.html
    - https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html
    """

    code = "TC903"
    name = "recompile-limit-hit"
    summary = "The probe saw a function exceed the recompile limit and fall back to eager"
    family = Family.PROBE
    region_only = False
    gb_ids = ("GB0039",)
    default_severity = Severity.ERROR
