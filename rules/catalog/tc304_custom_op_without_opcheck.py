from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Lifecycle, Rule


class CustomOpWithoutOpcheck(Rule):
    """
    ## What it does
    Points out a `torch.library.custom_op` that no `torch.library.opcheck(...)` call in the
    linted project exercises.

    ## Why is this bad?
    A custom op's fake implementation, schema (mutations, aliasing) and autograd registration are
    promises the compiler trusts.  `opcheck` tests them against the real kernel; without it, a
    wrong fake shape or an undeclared mutation shows up as silent wrong results under compile.

    ## Example
    ```python
    @torch.library.custom_op("mylib::scale", mutates_args=())
    def scale(x: torch.Tensor, k: float) -> torch.Tensor: ...
    # (no opcheck anywhere in the tests)
    ```

    ## Use instead
    ```python
    def test_scale_op():
        torch.library.opcheck(scale, (torch.randn(4), 2.0))
    ```
    on every supported device, dtype, edge shape and non-contiguous layout.

    ## Fix safety
    No automatic fix.

    ## References
    - https://docs.pytorch.org/docs/stable/library.html#torch.library.opcheck
    """

    code = "TC304"
    name = "custom-op-without-opcheck"
    summary = "A custom op that no torch.library.opcheck call tests"
    family = Family.COMPILE_API
    default_severity = Severity.HINT
    lifecycle = Lifecycle.PREVIEW
    region_only = False

    def project_check(self, project):
        checked = set()
        for ff in project.files.values():
            for ref in ff.api_calls.get("torch.library.opcheck", ()):
                checked.add(ref.rsplit(".", 1)[-1])
        for ff in project.files.values():
            for qual, loc in ff.custom_ops.items():
                name = qual.rsplit(".", 1)[-1]
                if name in checked:
                    continue
                yield self.report(
                    ff.path,
                    loc,
                    f"custom op `{name}` is not exercised by any torch.library.opcheck call in the project",
                    help=f"add a test calling torch.library.opcheck({name}, args)",
                )

    invalid = (
        Example(
            """
import torch

@torch.library.custom_op("tclint_ex::scale_unchecked", mutates_args=())  # expect: TC303 TC304
def scale(x: torch.Tensor, k: float) -> torch.Tensor:
    return x * k

@scale.register_fake
def _(x, k):
    return torch.empty_like(x)
""",
            proof=False,
            title="an advisory hint: nothing breaks",
        ),
    )
    valid = (
        Example(
            """
import numpy as np
import torch

@torch.library.custom_op("tclint_ex::np_sort2", mutates_args=())
def np_sort(x: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.sort(x.cpu().numpy()))

@np_sort.register_fake
def _(x):
    return torch.empty_like(x)

def test_np_sort():
    torch.library.opcheck(np_sort, (torch.randn(4),))
""",
            proof=False,
        ),
    )
