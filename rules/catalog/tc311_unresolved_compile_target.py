from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule


class UnresolvedCompileTarget(Rule):
    """
    ## What it does
    Reports a compile site (`torch.compile(x)`, `x.compile()`, `torch._dynamo.optimize(...)(x)`)
    whose target tclint cannot resolve to functions of the linted project: a module or function
    that comes from a parameter, a registry, `getattr`, another library's factory, or a shape of
    code tclint does not follow.

    ## Why is this bad?
    tclint reports hazards only in code it knows is compiled.  When it cannot tell what a compile
    site compiles, the code it compiles is not checked at all: the run says `All checks passed!`
    although that code may hold graph breaks and recompile hazards.  This finding makes the gap
    visible where the other findings are (terminal, CI, editors), not only in `tclint regions`.

    ## Example
    ```python
    model = registry.build(cfg.model_name)   # what class is it?
    model = torch.compile(model)             # TC311
    ```

    ## Use instead
    Tell tclint what is compiled: `assume-compiled = ["pkg.models.*:*.forward"]` in
    `[tool.tclint]` (or `--assume-compiled`), or a `# tclint: compiled` comment on the `def` line
    of the compiled function (for a module, its `forward`).  Then its body is linted as compiled
    code.

    ## Fix safety
    No automatic fix.

    ## References
    - https://docs.pytorch.org/docs/stable/generated/torch.compile.html
    """

    code = "TC311"
    name = "compile-target-not-resolved"
    summary = "tclint cannot tell what a compile site compiles, so that code is not checked"
    family = Family.TCLINT
    default_severity = Severity.INFO
    region_only = False

    def project_check(self, project):
        # (torch.compile(nn.Linear(4, 4)), torch.compile(torch.sin) compile no project code: they
        # are Project.torch_only, not unresolved)
        for unresolved in project.unresolved:
            site = unresolved.site
            loc = site.loc
            yield self.report(
                unresolved.path,
                loc,
                f"tclint cannot tell what `{site.text}` compiles, so the code it compiles is not checked",
                help='declare what is compiled: `assume-compiled = ["MODULE:QUALNAME"]` in [tool.tclint] '
                '(e.g. "pkg.models.*:*.forward"), or `# tclint: compiled` on the compiled function\'s def line',
            )

    invalid = (
        Example(
            """
import torch

def compile_any(module_factory):
    model = module_factory()
    return torch.compile(model)  # expect: TC311
""",
            proof=False,
            title="static: the target comes from a parameter",
        ),
    )
    valid = (
        Example(
            """
import torch
import torch.nn as nn

class Net(nn.Module):
    def forward(self, x):
        return x * 2

model = torch.compile(Net().to("cpu").eval())
""",
            proof=False,
            title="static: a module built and moved in one chain resolves",
        ),
        Example(
            """
import torch
import torch.nn as nn

layer = torch.compile(nn.Linear(4, 4))
fast_sin = torch.compile(torch.sin)
""",
            proof=False,
            title="static: torch's own modules and functions hold no project code to check",
        ),
    )
