from tclint.rules import model
from tclint.rules.model import Applicability
from tclint.rules.rule import Example, Family, Rule


class UnusedSuppression(Rule):
    """
    ## What it does
    Reports `# noqa: TCxxx` comments, file-level `# tclint: noqa: TCxxx` comments and
    `# tclint: disable[TCxxx]` ranges that suppress nothing, and tclint codes in them that do not
    exist.  Codes of other tools (`# noqa: E501`) and bare `# noqa` comments are left alone.

    ## Why is this bad?
    A suppression outlives the hazard it silenced: after a refactor it hides the next, different
    finding on the same line.  Removing stale ones keeps suppressions meaningful.

    ## Example
    ```python
    y = x * 2  # noqa: TC101
    ```

    ## Use instead
    ```python
    y = x * 2
    ```

    ## Fix safety
    Safe: removes the unused codes, or the whole comment when none remain.

    ## References
    - https://docs.astral.sh/ruff/rules/unused-noqa/
    """

    code = model.UNUSED_SUPPRESSION
    name = "unused-suppression"
    summary = "A suppression comment suppresses nothing"
    family = Family.TCLINT
    region_only = False
    fix_applicability = Applicability.SAFE
    valid = (
        Example(
            """
import torch

@torch.compile
def f(x):
    print(x)  # noqa: TC104
    return x
""",
            proof=False,
        ),
    )
    invalid = (
        Example(
            """
import torch

@torch.compile
def f(x):
    y = x * 2  # noqa: TC104  # expect: TC012
    return y
""",
            proof=False,
            fixed="""
import torch

@torch.compile
def f(x):
    y = x * 2  # expect: TC012
    return y
""",
        ),
    )
