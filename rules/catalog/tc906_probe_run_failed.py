from tclint.rules.model import Severity
from tclint.rules.rule import Family, Rule


class ProbeRunFailed(Rule):
    """
    ## What it does
    Reported by `tclint probe`: the probed run did not complete normally: it timed out (the
    location is where it was stuck), crashed (a segfault: where it crashed), exceeded the probe's
    memory cap, exited with a non-zero status, or raised an exception that eager code raises too.

    ## Why is this bad?
    The probe can only report what ran: compiles and breaks after the failure point were never
    seen, so the report is partial.  A hang or crash may also be a real bug in the code.

    ## Example
    ```text
    train.py:57:8: TC906 timed out after 120 s; the probe's processes were killed
    ```

    ## Use instead
    Fix the failure, or bound the run (`--max-calls`, a smaller input set, a larger `--timeout` or
    `--memory-limit`) so that it ends normally.

    ## Fix safety
    No fix.

    ## References
    - `tclint probe --help`
    """

    code = "TC906"
    name = "probe-run-failed"
    summary = "The probed run did not complete normally"
    family = Family.PROBE
    region_only = False
    default_severity = Severity.WARNING
