from tclint.rules.model import Applicability, Fix, Severity, Span
from tclint.rules.rule import Example, Family, Rule


class MethodOnCompiledWrapper(Rule):
    """
    ## What it does
    Flags calls of a module's own methods other than `forward` through the wrapper returned by
    `torch.compile(model)`: `compiled = torch.compile(model); compiled.loss(x)`,
    `compiled.generate(...)`, `compiled.encode(...)`.

    ## Why is this bad?
    `torch.compile(model)` returns a wrapper whose *call* (`compiled(x)`, i.e. `forward`) is
    compiled.  Other attributes are forwarded to the original module: `compiled.loss(x)` runs
    `TinyLM.loss` on the original module, and the `self(...)` inside it calls the *uncompiled*
    module.  Nothing is compiled at all (measured: zero frame compiles), silently.

    ## Example
    ```python
    model = torch.compile(TinyLM(cfg))
    loss = model.loss(tokens)        # runs eagerly
    ```

    ## Use instead
    Call the wrapper (`logits = model(tokens)`) and compute the rest outside, compile the module
    in place (`model.compile()`, after which `self(...)` inside its methods is compiled), or
    compile the method itself (`torch.compile(model.loss)`).

    ## Fix safety
    A fix (a libcst codemod) when the wrapper comes from `NAME = torch.compile(TARGET, ...)` in the
    same file: the statement becomes `NAME.compile(...)` (TARGET is NAME) or `NAME = TARGET`
    followed by `NAME.compile(...)`, with the same options.  Safe where no other name holds the
    wrapper or the module: NAME is only called or has its attributes used, and TARGET is NAME or a
    fresh construction (`Net()`).  Unsafe otherwise (another name would now see a module compiled
    in place; `isinstance(NAME, OptimizedModule)` changes).  Not offered where the code unwraps
    the wrapper (`NAME._orig_mod`).

    ## References
    - https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.compile
    """

    code = "TC310"
    name = "method-call-on-compiled-wrapper"
    summary = "A method other than forward called on a torch.compile wrapper runs eagerly"
    family = Family.COMPILE_API
    default_severity = Severity.WARNING
    region_only = False
    fix_applicability = Applicability.SAFE

    def project_check(self, project):
        for ff in project.files.values():
            for edge, _owner in project._all_edges(ff):
                if edge.kind != "compiled" or edge.method in ("__call__", "forward"):
                    continue
                entry = project.sites.get(edge.target)
                if entry is None:
                    continue
                _sff, site = entry
                if site.how not in ("call", "partial", "optimize"):
                    continue
                for key in project.site_targets.get(site.id, ()):
                    fff, fwd = project.functions[key]
                    if fwd.cls is None:
                        continue
                    cls_key = f"{fff.path}::{fwd.cls}"
                    method = project.find_method(cls_key, edge.method)
                    if method is None:
                        continue
                    _mff, mfn = project.functions[method]
                    loc = edge.loc
                    fix = None
                    if site.how == "call" and _sff.path == ff.path:
                        fix = Fix(
                            "Compile the module in place with `.compile()`",
                            (),
                            Applicability.SAFE,
                            codemod=(
                                "compile-in-place",
                                Span.of(site.loc.line, site.loc.col, site.loc.end_line, site.loc.end_col),
                            ),
                        )
                    yield self.report(
                        ff.path,
                        loc,
                        (
                            f"`.{edge.method}()` on the torch.compile wrapper runs `{mfn.qualname}` on the original module: "
                            f"only `forward` (calling the wrapper) is compiled, so this call and the `self(...)` inside it run eagerly"
                        ),
                        help="call the wrapper and compute the rest outside, or use model.compile() to compile in place",
                        fix=fix,
                    )
                    break

    invalid = (
        Example(
            """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)

    def loss(self, x):
        return self(x).pow(2).mean()

model = torch.compile(Net())
value = model.loss(torch.randn(2, 4))  # expect: TC310
""",
            compiles=0,
            title="nothing is compiled (the proof counts zero frame compiles)",
            fixed="""
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)

    def loss(self, x):
        return self(x).pow(2).mean()

model = Net()
model.compile()
value = model.loss(torch.randn(2, 4))  # expect: TC310
""",
        ),
    )
    valid = (
        Example(
            """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)

    def loss(self, x):
        return self(x).pow(2).mean()

model = Net()
model.compile()
value = model.loss(torch.randn(2, 4))
""",
            compiles=1,
            title="in-place model.compile() compiles what self(...) calls",
        ),
    )
