from tclint.rules.model import Severity
from tclint.rules.rule import Family, Rule


class ProbeHardError(Rule):
    """
    ## What it does
    Reported by `tclint probe`: compiling or running the code under `torch.compile` raised an
    error that is not a graph break: a custom operator without a fake (meta) implementation
    (`TorchRuntimeError`, GB4315), a forbidden callable traced inside compiled code
    (`torch._dynamo.mark_dynamic`, `torch.compiler.set_stance`), a backend failure, or code that
    needs a device this machine does not have.

    ## Why is this bad?
    Unlike a graph break, a hard error stops the program (or, caught somewhere, silently changes
    what runs).  Eager runs may not show it at all.

    ## Example
    ```text
    ops.py:30:4: TC904 TorchRuntimeError: There was no fake impl registered for research::nofake
    ```

    ## Use instead
    Register a fake implementation for custom ops (`@my_op.register_fake`) and check it with
    `torch.library.opcheck`; call `mark_dynamic` / `set_stance` outside compiled code; run the probe
    on the device the code needs (or with `--map-cuda-to-cpu`).

    ## Fix safety
    No fix.

    ## References
    - https://docs.pytorch.org/tutorials/advanced/custom_ops_landing_page.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb4315.html
    """

    code = "TC904"
    name = "probe-hard-error"
    summary = "The probe saw torch.compile raise an error (not a graph break)"
    family = Family.PROBE
    region_only = False
    default_severity = Severity.ERROR
