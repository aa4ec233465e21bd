from tclint.rules.model import Severity
from tclint.rules.rule import Family, Rule


class ProbeGraphBreak(Rule):
    """
    ## What it does
    Reported by `tclint probe`: TorchDynamo really broke the graph at this line while the probed
    code ran.  The message gives PyTorch's graph-break id and type, how many times execution passed
    the break in compiled code, and whether Dynamo gave up on the whole frame (a break inside a loop
    body, a user context manager, ...: then the function runs eagerly on every call and the break
    is an error).  The location is the innermost frame in your own files; the call stack that led
    there is attached as related locations.

    ## Why is this bad?
    Each break ends one FX graph and starts another: the code around it runs as ordinary Python on
    every call, and nothing fuses across the boundary.  The hit count says whether it matters: a
    break hit once per training step inside every layer does, one on a start-up path may not.

    When a static rule predicted the same break at the same line, the static finding is marked
    *confirmed* instead of repeating it; a probe break that no static rule predicted is flagged
    *unpredicted*.

    ## Example
    ```text
    model.py:42:0: TC901 Graph break GB0124 (Unsupported Tensor.item() call with
    capture_scalar_outputs=False), hit 1,000 times
    ```

    ## Use instead
    Follow the hint in the message and PyTorch's page for the GB id (linked); the static rule for
    the same pattern (`tclint rule TC1xx`) shows the usual rewrites.

    ## Fix safety
    No fix: the probe reports what happened, the rewrite depends on the code.

    ## References
    - https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html
    - https://meta-pytorch.github.io/compile-graph-break-site/
    """

    code = "TC901"
    name = "probe-graph-break"
    summary = "The probe saw TorchDynamo break the graph here"
    family = Family.PROBE
    region_only = False
    default_severity = Severity.WARNING
    torch_versions = ">=2.6 (GB ids: >=2.8)"
