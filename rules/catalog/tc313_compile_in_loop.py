from tclint.rules.model import Applicability, Fix, Severity, Span
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.variants import _loc_of


class CompileInLoop(Rule):
    """
    ## What it does
    Flags `torch.compile(f)` called on every iteration of a `for` / `while` loop with a callable
    (and options) the loop does not change: `for batch in loader: out = torch.compile(model)(batch)`,
    or `f = torch.compile(fn)` re-made per step.  A new module instance per iteration is TC209's.

    ## Why is this bad?
    Dynamo caches compiled code on the code object, so it still compiles once (measured on torch
    2.13: 1 frame compile for 10 iterations), but every `torch.compile(...)` call builds a new
    wrapper and Dynamo keeps its backend alive for the rest of the process
    (`torch._dynamo.eval_frame.cached_backends` grows by one per iteration), and the call itself
    costs about 0.4 ms (measured: 0.5 ms per iteration compiling in the loop against 0.14 ms
    calling one wrapper made before it, backend "eager", CPU).

    ## Example
    ```python
    def train(model, batches):
        for batch in batches:
            out = torch.compile(model)(batch)
    ```

    ## Use instead
    Compile once, before the loop, and call the wrapper in it.
    ```python
    def train(model, batches):
        compiled_model = torch.compile(model)
        for batch in batches:
            out = compiled_model(batch)
    ```

    ## Fix safety
    A libcst codemod moves the `torch.compile(...)` call before the outermost enclosing loop that
    binds none of the names it reads, into a fresh name (`compiled_<target>`, clashing with no
    identifier of the file), and the loop uses that name.  Safe when the wrapper is only called
    (`torch.compile(m)(x)`, or `f = torch.compile(fn)` with `f` only called) and the compiled
    callable and option values are names bound once (a parameter or one assignment of the
    function, or one module-level binding): nothing can rebind them between iterations.  Unsafe
    when it compiles an attribute (`self.net`: a method the loop calls could rebind it) or the
    wrapper is kept or passed on (it is now one object instead of one per iteration).  Errors
    `torch.compile` raises for its arguments now happen before the loop, also when it runs no
    iteration.

    ## References
    - https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html
    """

    code = "TC313"
    name = "compile-in-loop"
    summary = "`torch.compile` re-made on every iteration of a loop: a new wrapper (and backend kept alive) each time"
    family = Family.COMPILE_API
    default_severity = Severity.WARNING
    fix_applicability = Applicability.SAFE
    region_only = False

    def project_check(self, project):
        for ff in project.files.values():
            vf = ff.variant_facts
            for item in vf.loop_compiles if vf is not None else ():
                pos, _, text = item.partition("|")
                loc = _loc_of(pos)
                yield self.report(
                    ff.path,
                    loc,
                    f"`torch.compile({text})` runs on every iteration of the loop: Dynamo compiles the code once, but each "
                    "call builds a new wrapper and Dynamo keeps its backend alive for the rest of the process",
                    help="compile once before the loop and call the wrapper in it",
                    fix=Fix(
                        "Compile once before the loop and reuse the wrapper",
                        (),
                        Applicability.SAFE,
                        codemod=("hoist-compile", Span.of(loc.line, loc.col, loc.end_line, loc.end_col)),
                    ),
                )

    invalid = (
        Example(
            """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(x).relu()

model = Net()

def train(batches):
    outs = []
    for batch in batches:
        step = torch.compile(model)  # expect: TC313
        outs.append(step(batch))
    return outs
""",
            run="outs = train([torch.randn(2, 8) for _ in range(10)])",
            compiles=1,
            wrappers=10,
            title="the same model compiled again for every batch",
            fixed="""
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(x).relu()

model = Net()

def train(batches):
    outs = []
    compiled_model = torch.compile(model)
    for batch in batches:
        step = compiled_model  # expect: TC313
        outs.append(step(batch))
    return outs
""",
        ),
        Example(
            """
import torch

def scale(x):
    return x.sin() * 2

def run(batches):
    total = torch.zeros(8)
    for batch in batches:
        f = torch.compile(scale)  # expect: TC313
        total = total + f(batch)
    return total
""",
            run="total = run([torch.randn(8) for _ in range(10)])",
            compiles=1,
            wrappers=10,
            title="a wrapper re-made per step and bound to a name",
            fixed="""
import torch

def scale(x):
    return x.sin() * 2

def run(batches):
    total = torch.zeros(8)
    compiled_scale = torch.compile(scale)
    for batch in batches:
        f = compiled_scale  # expect: TC313
        total = total + f(batch)
    return total
""",
        ),
    )
    valid = (
        Example(
            """
import torch

def scale(x):
    return x.sin() * 2

def run(batches):
    f = torch.compile(scale)
    total = torch.zeros(8)
    for batch in batches:
        total = total + f(batch)
    return total
""",
            run="total = run([torch.randn(8) for _ in range(10)])",
            compiles=1,
            title="compiled once before the loop",
        ),
        Example(
            """
import torch

def scale(x):
    return x.sin() * 2

def shift(x):
    return x.cos() + 1

def run(batches):
    total = torch.zeros(8)
    fn = scale
    for batch in batches:
        f = torch.compile(fn)
        total = total + f(batch)
        fn = shift if fn is scale else scale
    return total
""",
            run="total = run([torch.randn(8) for _ in range(10)])",
            compiles=2,
            title="the loop rebinds what it compiles (after the call, for the next iteration): nothing to hoist",
        ),
    )
