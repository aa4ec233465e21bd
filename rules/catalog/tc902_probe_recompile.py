from tclint.rules.model import Severity
from tclint.rules.rule import Rule


class ProbeRecompile(Rule):
    """
    ## What it does
    Reported by `tclint probe`: a compiled function was compiled again because one of the guards
    protecting its cached code failed.  The diagnostic sits on the line the guard is about (the
    parameter, attribute or global whose value, shape, dtype or type changed; or the line whose code
    installed the guard) and gives the guard text and how many recompiles it caused.

    ## Why is this bad?
    Every recompile costs a full trace (and, with Inductor, code generation) in the middle of a run:
    the p99 latency spikes.  A few variants that a warm-up covers (train/eval, two shape buckets)
    are fine; a guard on something that changes with traffic (a step counter, a request id, a
    growing list) recompiles until the recompile limit, after which the function runs eagerly
    (TC903).

    ## Example
    ```text
    train.py:18:4: TC902 `step` recompiled 7 times: guard `self.seen_tokens == 0` failed
    ```

    ## Use instead
    Keep values that change every call out of Python constants: pass them as tensors, make the
    dimension dynamic (`torch._dynamo.mark_dynamic` before the call), bucket lengths, or keep
    counters outside the compiled function.

    ## Fix safety
    No fix.

    ## References
    - https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html
    """

    code = "TC902"
    name = "probe-recompile"
    summary = "The probe saw a function recompile because a guard failed"
    family = "probe"
    region_only = False
    default_severity = Severity.WARNING
