from tclint.rules.model import Severity
from tclint.rules.rule import Family, Rule


class EagerCompiledMismatch(Rule):
    """
    ## What it does
    Reported by `tclint probe FILE::FUNCTION`: for at least one probed call the compiled function's
    result differs from the eager one beyond the dtype's tolerance (float64 1e-7, float32 1e-5,
    float16 1e-3, bfloat16 1.6e-2 relative), an input mutated in place differs, or only one side
    raised (or they raised different exceptions).  Both sides run on copies of the same inputs and
    module state with the same RNG seed.

    ## Why is this bad?
    Correctness comes first in the diagnosis order: a fast compiled model that computes something
    else is a bug, and performance work on it is wasted.

    ## Example
    ```text
    model.py:8:0: TC905 eager and compiled results differ for call #2 (dtype=bfloat16): ...
    ```

    ## Use instead
    Reduce the failing call to a minimal repro; check random ops (Inductor has its own RNG unless
    `torch._inductor.config.fallback_random = True`), in-place mutation of inputs, and code that
    depends on Python side effects inside the compiled region.

    ## Fix safety
    No fix.

    ## References
    - https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html
    """

    code = "TC905"
    name = "eager-compiled-mismatch"
    summary = "Eager and compiled results differ"
    family = Family.PROBE
    region_only = False
    default_severity = Severity.ERROR
