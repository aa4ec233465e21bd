from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule


class CallToDisabledFunction(Rule):
    """
    ## What it does
    Flags calls from compiled code into a function wrapped in `torch.compiler.disable` (or
    `torch._dynamo.disable`), across files.  tclint's compiled regions stop at such functions.

    ## Why is this bad?
    Disabling is often the right tool, but it is not free: the graph breaks at the call (GB0098;
    GB0099 for `disable(recursive=False)`, whose callees are compiled as separate frames), on every
    call.  A disabled helper called in every layer splits every layer's graph.

    ## Example
    ```python
    @torch.compiler.disable
    def log_stats(x):
        print(x.mean())

    @torch.compile
    def forward(x):
        y = x * 2
        log_stats(y)
        return y
    ```

    ## Use instead
    Call the disabled function from eager code (around the compiled region), or make it
    traceable.  Keep it where it is when the break is intended and cold; suppress with
    `# noqa: TC110`.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0098.html
    - https://docs.pytorch.org/docs/stable/generated/torch.compiler.disable.html
    """

    code = "TC110"
    name = "call-to-disabled-function"
    summary = "Compiled code calls a function wrapped in torch.compiler.disable"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0098", "GB0099")
    default_severity = Severity.WARNING

    def project_check(self, project):
        seen = set()
        for call in project.disabled_calls:
            region = project.regions.get(call.caller_key)
            if region is None:
                continue
            ff, _fn = project.functions[call.caller_key]
            _cff, callee = project.functions[call.callee_key]
            key = (ff.path, call.edge.loc.line, call.edge.loc.col)
            if key in seen:
                continue
            seen.add(key)
            gb = "GB0098" if call.recursive else "GB0099"
            name = callee.qualname.replace(".<locals>.", ".")
            how = "torch.compiler.disable" + ("" if call.recursive else "(recursive=False)")
            message = f"call to `{name}`, which is wrapped in `{how}`: the graph breaks here"
            if call.edge.in_loop:
                message += " (inside a loop: all of the calling function runs eagerly)"
            yield self.report(
                ff.path,
                call.edge.loc,
                message,
                project=project,
                region=region,
                hot=True,
                severity=Severity.ERROR if call.edge.in_loop else None,
                gb_ids=(gb,),
                help="call it from the eager caller, or make it traceable",
            )

    invalid = (
        Example(
            """
import torch

@torch.compiler.disable
def log_stats(x):
    print(x.mean())

@torch.compile
def forward(x):
    y = x * 2
    log_stats(y)  # expect: TC110
    return y + 1
""",
            run="forward(torch.randn(4))",
        ),
        Example(
            """
import torch

def helper(x):
    return x + 1

helper = torch._dynamo.disable(helper, recursive=False)

@torch.compile
def forward(x):
    y = x * 2
    return helper(y)  # expect: TC110
""",
            run="forward(torch.randn(4))",
            gb=("GB0099",),
            title="disable(recursive=False)",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compiler.disable
def log_stats(x):
    print(x.mean())

@torch.compile
def forward(x):
    return x * 2

y = forward(torch.randn(4))
log_stats(y)
""",
            title="called from eager code; its print is not compiled either",
        ),
    )
