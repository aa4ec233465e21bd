from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule


class CompiledGeneratorFunction(Rule):
    """
    ## What it does
    Flags `torch.compile` applied to a generator function (one that contains `yield`).

    ## Why is this bad?
    Dynamo cannot compile a generator's own frame ("Attempt to trace generator", GB0003).  Without
    `fullgraph=True` it says nothing: the function silently runs eagerly and returns a generator,
    so the compile does nothing at all.  (Generators *called from* compiled code are inlined and
    fine.)

    ## Example
    ```python
    @torch.compile
    def chunks(x):
        for c in x.split(4):
            yield c * 2
    ```

    ## Use instead
    Compile the per-item work and keep the generator in eager code:
    ```python
    @torch.compile
    def work(c):
        return c * 2

    def chunks(x):
        for c in x.split(4):
            yield work(c)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0003.html
    """

    code = "TC117"
    name = "compiled-generator-function"
    summary = "torch.compile applied to a generator function runs it eagerly"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0003",)
    default_severity = Severity.ERROR
    region_only = False

    def project_check(self, project):
        for site_id, keys in project.site_targets.items():
            ff, site = project.sites[site_id]
            for key in keys:
                _tff, fn = project.functions[key]
                if not fn.is_generator:
                    continue
                yield self.report(
                    ff.path,
                    site.loc,
                    f"`{site.text}` compiles generator function `{fn.qualname}`: Dynamo cannot trace a generator's frame, so it silently runs eagerly",
                    gb_ids=self.gb_ids,
                    help="compile the per-item work instead and keep the generator eager",
                )

    invalid = (
        Example(
            """
import torch

@torch.compile  # expect: TC117
def chunks(x):
    for c in x.split(2):
        yield c * 2
""",
            run="list(chunks(torch.randn(4)))",
            proof=False,
            title="no break event is logged (the frame is refused); the probe reports it as a skipped frame",
        ),
    )
    valid = (
        Example(
            """
import torch

def gen(x):
    for i in range(3):
        yield x * i

@torch.compile
def total(x):
    return sum(gen(x))
""",
            run="total(torch.randn(4))",
            title="generators called from compiled code are inlined",
        ),
    )
