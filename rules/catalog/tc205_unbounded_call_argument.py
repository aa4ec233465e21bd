from tclint.rules import callsites, variants
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule


class UnboundedCallArgument(Rule):
    """
    ## What it does
    Flags call sites of a compiled function that pass a value varying without bound — a loop
    counter or step number, `len(batch)`, a timestamp, an f-string id — to a parameter Dynamo
    specialises on (an int used in `range()` or as an index, a list whose length is used, a str
    used at all; under `dynamic=False` every int).

    ## Why is this bad?
    Every new value fails the guard and compiles another variant: a recompile per step until the
    recompile limit (8 in torch 2.13), after which the function runs eagerly for the rest of the
    process.  Typical shape: a healthy p50 with a bad p99 in serving, or slow first epochs.

    ## Example
    ```python
    @torch.compile
    def rollout(x, n_steps: int):
        for _ in range(n_steps):
            x = policy(x)
        return x

    for step in range(1000):
        rollout(obs, step)
    ```

    ## Use instead
    Pass a bounded set of values (bucket lengths to a few sizes), make the value a tensor, or move
    the varying part out of the compiled function.

    ## Fix safety
    No automatic fix.

    ## References
    - https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html
    """

    code = "TC205"
    name = "unbounded-argument-at-call-site"
    summary = "A call site passes an unbounded value to a specialised argument of a compiled function"
    family = Family.RECOMPILE
    default_severity = Severity.ERROR
    region_only = False

    def project_check(self, project):
        seen = set()
        whole = variants.dropped_whole(project)
        for call in callsites.calls_into_roots(project):
            if call.root_key in whole:
                continue  # Dynamo drops the frame before any graph of it: its arguments guard nothing
            region = project.regions[call.root_key]
            _rff, fn = project.functions[call.root_key]
            dynamic_false = region.options.get("dynamic") is False
            for param, kind in callsites.map_args(call):
                why = callsites.UNBOUNDED.get(kind)
                if why is None:
                    continue
                guard = callsites.specialisation(param, dynamic_false)
                if guard is None or "True/False" in guard:
                    continue
                if kind == "fstring" and not guard.startswith(f"{param.name} == '"):
                    continue
                loc = call.edge.loc
                key = (call.caller_file.path, loc.line, loc.col, param.name)
                if key in seen:
                    continue
                seen.add(key)
                yield self.report(
                    call.caller_file.path,
                    loc,
                    (
                        f"`{param.name}` gets {why} here: compiled `{fn.qualname}` is specialised on it "
                        f"(guard `{guard}`), so each new value compiles another variant; the 9th new value hits the recompile limit (8) "
                        f"and from then on `{fn.qualname}` runs eagerly"
                    ),
                    project=project,
                    region=region,
                    extra={"target": call.root_key, "parameter": param.name},
                    help="bucket the value to a few sizes, pass it as a tensor, or keep it out of the compiled function",
                )

    invalid = (
        Example(
            """
import torch

@torch.compile
def rollout(x, n_steps: int):  # expect: TC203
    for _ in range(n_steps):
        x = torch.tanh(x)
    return x

def train(x):
    for step in range(1, 100):
        x = rollout(x, step)  # expect: TC205
    return x
""",
            run="train(torch.randn(4))",
            compiles=8,
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def scaled(x, step: int):
    return x * step

def train(x):
    for step in range(1, 100):
        x = scaled(x, step)
    return x
""",
            run="train(torch.randn(4))",
            compiles=2,
            settings={"ignore": ["TC208"]},
            title="an int used as a value becomes dynamic: 2 compiles (bounded: TC208 reports the second)",
        ),
    )
