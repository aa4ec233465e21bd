from tclint.rules.model import Severity
from tclint.rules.rule import Family, Rule


class ProbeRecompile(Rule):
    """
    ## What it does
    Reported by `tclint probe`: a compiled function was compiled again because one of the guards
    protecting its cached code failed.  The diagnostic names the function with its class
    (`Block.forward`), says what changed in your terms (train/eval mode, grad mode, autocast,
    `requires_grad`, a dtype, a size, an int, string or bool argument, a module attribute, a global,
    a value carried across a graph break) and sits on the line the guard is about (the parameter,
    attribute or global; the line whose code installed the guard; for a value carried across a
    break, the break), with how many recompiles it caused; Dynamo's own guard text is kept in the
    JSON report (`guards`).  When the run shows where the mode is switched (a `.eval()` call, a
    `with torch.no_grad()`), that line is a related location.  A continuation after a graph break
    that recompiled because of the same call is counted in the finding, not reported apart; a first
    size change after which Dynamo compiles the dimension as dynamic is reported at info severity.

    ## Why is this bad?
    Every recompile costs a full trace (and, with Inductor, code generation) in the middle of a run:
    the p99 latency spikes.  A few variants that a warm-up covers (train/eval, two shape buckets)
    are fine; a guard on something that changes with traffic (a step counter, a request id, a
    growing list) recompiles until the recompile limit, after which the function runs eagerly
    (TC903).

    ## Example
    ```text
    train.py:18:4: TC902 `Decoder.step` recompiled 7 times: module attribute `self.seen_tokens` changed (compiled for 0) (int module attributes are static: each value compiles anew) (`self.seen_tokens` is read here)
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
    family = Family.PROBE
    region_only = False
    default_severity = Severity.WARNING
