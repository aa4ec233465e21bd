from tclint.rules import variants
from tclint.rules.model import Applicability, Fix, Severity
from tclint.rules.rule import Example, Family, Rule

HOIST = Fix(
    "Hoist `torch.compile` out of the loop and reuse one compiled module (the module is built from loop values, "
    "so its parameter shapes differ per iteration: use one module of the largest shape, sliced)",
    (),
    Applicability.DISPLAY_ONLY,
)


class UnboundedVariants(Rule):
    """
    ## What it does
    Reports, at the line that makes it, each guard of a compiled callable that the eager code
    around it changes without bound: a module global (or a flag dict) read inside the compiled
    code and rebound to a new int or string between calls (`STEP = step` in the training loop),
    and `torch.compile` of a new module instance built from loop values (`torch.compile(Head(n))`
    per episode: other parameter shapes, or int attributes, each time).  `tclint variants` lists
    the whole variant set of each compiled callable.

    ## Why is this bad?
    Dynamo specialises int globals and int module attributes, and guards on the shapes of a new
    instance's parameters: every new value compiles another variant.  After 8 compiles the
    recompile limit is hit (the 9th new value) and the function runs eagerly for the rest of the
    process, silently: the first steps are slow, and then the speed-up is gone.

    ## Example
    ```python
    STEP = 0

    @torch.compile
    def scale(x):
        return x * STEP

    def train(x):
        global STEP
        for step in range(100):
            STEP = step          # a new int each step: a recompile per step
            scale(x)
    ```

    ## Use instead
    Keep the value in a tensor (`STEP = torch.tensor(step)`, or pass it as an argument of the
    compiled function), and compile one module and reuse it (one head with the largest shape,
    sliced, instead of a new head per episode).

    ## Fix safety
    For `torch.compile` of a new instance per iteration, a display-only suggestion: hoist the
    compile out of the loop and reuse one compiled module.  It is not applied because the module
    is built from loop values, so its parameter shapes truly differ between iterations: the
    rewrite needs one module of the largest shape (sliced), which tclint does not write.  A
    `torch.compile` of a callable the loop does not change (`torch.compile(model)` per batch)
    compiles once and is TC313's, whose fix hoists the call.

    ## References
    - https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html
    """

    code = "TC209"
    fix_applicability = Applicability.DISPLAY_ONLY
    name = "unbounded-variants"
    summary = (
        "Eager code rebinds a guarded global or compiles a new instance per iteration: unbounded variants"
    )
    family = Family.RECOMPILE
    default_severity = Severity.ERROR
    region_only = False

    KINDS = ("global", "instance")  # the unbounded dimensions no other rule reports

    def project_check(self, project):
        for key, v in sorted(variants.variants(project).items()):
            for dim in v.dims:
                if dim.bounded or dim.kind not in self.KINDS or not dim.sources:
                    continue
                first = dim.sources[0]
                what = (
                    "rebinds a guarded global" if dim.kind == "global" else "compiles a new module instance"
                )
                yield self.report(
                    first.path,
                    first.loc,
                    (
                        f"{first.note}: compiled `{v.qualname}` is guarded on it (`{dim.guard}`), so each new value compiles "
                        f"another variant; the {variants.RECOMPILE_LIMIT + 1}th new value hits the recompile limit "
                        f"({variants.RECOMPILE_LIMIT}) and from then on `{v.qualname}` runs eagerly"
                    ),
                    project=project,
                    extra={"target": key, "dimension": dim.kind, "variants": None, "why": what},
                    help=dim.advice,
                    fix=HOIST if dim.kind == "instance" else None,
                )
        for path, loc, text in variants.unrooted_fresh_sites(project):
            yield self.report(
                path,
                loc,
                (
                    f"compiles a new `{text}` per iteration: its parameter shapes are guarded, so each new shape compiles "
                    f"another variant; the {variants.RECOMPILE_LIMIT + 1}th hits the recompile limit ({variants.RECOMPILE_LIMIT}) "
                    "and from then on it runs eagerly"
                ),
                extra={"dimension": "instance", "variants": None},
                help="compile one module and reuse it (one head with the largest shape, sliced; sizes kept in tensors)",
                fix=HOIST,
            )

    invalid = (
        Example(
            """
import torch

STEP = 0

@torch.compile
def scale(x):
    return x * STEP

def train(x):
    global STEP
    for step in range(12):
        STEP = step  # expect: TC209
        scale(x)
""",
            run="train(torch.randn(4))",
            compiles=8,
            guard="G['STEP']",
            title="an int global rebound every step: a recompile per value until the limit",
        ),
        Example(
            """
import torch
import torch.nn as nn

class Head(nn.Module):
    def __init__(self, n_actions):
        super().__init__()
        self.fc = nn.Linear(8, n_actions)

    def forward(self, x):
        return self.fc(x).softmax(-1)

def episodes(x):
    for episode in range(12):
        head = Head(2 + episode)
        policy = torch.compile(head)  # expect: TC209
        policy(x)
""",
            run="episodes(torch.randn(2, 8))",
            compiles=8,
            guard="size mismatch",
            title="a new head with another output size compiled per episode",
        ),
    )
    valid = (
        Example(
            """
import torch

SCALE = 1.0

@torch.compile
def scale(x):
    return x * SCALE

def train(x):
    global SCALE
    for step in range(12):
        SCALE = 1.0 + step / 10
        scale(x)
""",
            run="train(torch.randn(4))",
            compiles=2,
            settings={"ignore": ["TC208"]},
            title="a float global becomes dynamic after its second value: 2 compiles (bounded: TC208 reports the second)",
        ),
        Example(
            """
import torch
import torch.nn as nn

class Head(nn.Module):
    def __init__(self, n_actions):
        super().__init__()
        self.fc = nn.Linear(8, n_actions)

    def forward(self, x):
        return self.fc(x).softmax(-1)

def episodes(x):
    for episode in range(12):
        policy = torch.compile(Head(4))
        policy(x)
""",
            run="episodes(torch.randn(2, 8))",
            compiles=1,
            title="a new instance of the same shape per episode: one compile (parameters are not id-guarded)",
        ),
    )
