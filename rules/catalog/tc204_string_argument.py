from tclint.rules import callsites, variants
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule


class StringArgument(Rule):
    """
    ## What it does
    Flags `str` parameters of a compiled function (annotated `str` / `Literal[...]`, or with a
    string default) that the body uses.

    ## Why is this bad?
    Dynamo guards strings by value (`mode == 'train'`) wherever they are used — in control flow,
    as a dict key, even only inside an f-string (measured).  Each distinct value is its own
    compiled variant.  A handful of modes is fine once warmed up; request ids, file names or
    per-call tags recompile on every call until the recompile limit (TC205 flags such call sites).
    An unused string argument is not guarded and not flagged.

    ## Example
    ```python
    @torch.compile
    def head(x, task: str):
        return self.heads[task](x)
    ```

    ## Use instead
    Resolve the string outside the compiled function (look up the head, pass the module or an
    index tensor), or keep the set of values small and warm each one up.

    ## Fix safety
    No automatic fix.

    ## References
    - https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html
    """

    code = "TC204"
    name = "string-argument-specialization"
    summary = "A compiled function's str argument: one compiled variant per distinct value"
    family = Family.RECOMPILE
    default_severity = Severity.INFO
    region_only = False

    def project_check(self, project):
        for key, region, ff, fn in callsites.roots(project):
            if key in variants.dropped_whole(project):
                continue  # Dynamo drops the frame before any graph of it: its arguments guard nothing
            for p in callsites.frame_params(fn):
                guard = callsites.specialisation(p)
                if guard is None or not guard.startswith(f"{p.name} == '") or p.loc is None:
                    continue
                yield self.report(
                    ff.path,
                    p.loc,
                    f"str argument `{p.name}` of compiled `{fn.qualname}`: Dynamo guards its value (`{guard}`), so each distinct value compiles its own variant",
                    project=project,
                    region=region,
                    help="resolve the string in the eager caller, or keep its values few and warm them up",
                )

    invalid = (
        Example(
            """
import torch

@torch.compile
def activate(x, kind: str = "relu"):  # expect: TC204
    if kind == "relu":
        return x.relu()
    return torch.tanh(x)
""",
            run="for k in ['relu', 'tanh', 'a', 'b', 'c']:\n    activate(torch.randn(4), k)",
            compiles=5,
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def activate(x, tag: str = ""):
    return x.relu()
""",
            run="for i in range(10):\n    activate(torch.randn(4), f'req-{i}')",
            compiles=1,
            title="an unused string is not guarded",
        ),
    )
