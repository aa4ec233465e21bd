from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule


class CustomOpWithoutFake(Rule):
    """
    ## What it does
    Flags a `torch.library.custom_op` whose project registers no fake (meta) implementation with
    `@op.register_fake` (or the older `impl_abstract`).

    ## Why is this bad?
    To trace a custom op, the compiler runs its fake implementation to learn output shapes and
    dtypes.  Without one, calling the op from compiled code is a hard error, with or without
    `fullgraph`: `TorchRuntimeError: There was no fake impl registered for <CustomOpDef(...)>`
    (GB4315).

    ## Example
    ```python
    @torch.library.custom_op("mylib::scale", mutates_args=())
    def scale(x: torch.Tensor, k: float) -> torch.Tensor:
        return x * k
    ```

    ## Use instead
    ```python
    @scale.register_fake
    def _(x, k):
        return torch.empty_like(x)
    ```
    and check it with `torch.library.opcheck`.

    ## Fix safety
    No automatic fix.

    ## References
    - https://docs.pytorch.org/tutorials/advanced/python_custom_ops.html
    """

    code = "TC302"
    name = "custom-op-without-fake"
    summary = "A custom op without a fake implementation cannot be compiled"
    family = Family.COMPILE_API
    gb_ids = ("GB4315",)
    default_severity = Severity.ERROR
    region_only = False

    def project_check(self, project):
        registered = set()
        for ff in project.files.values():
            registered.update(ff.fake_registrations)
        for ff in project.files.values():
            for qual, loc in ff.custom_ops.items():
                name = qual.rsplit(".", 1)[-1]
                if name in registered or qual in registered:
                    continue
                yield self.report(
                    ff.path,
                    loc,
                    f"custom op `{name}` has no fake implementation (`@{name}.register_fake`): calling it from compiled code raises TorchRuntimeError",
                    gb_ids=self.gb_ids,
                    url=self.doc_url(),
                    help=f"add `@{name}.register_fake` returning empty tensors of the output shapes",
                )

    invalid = (
        Example(
            """
import torch

@torch.library.custom_op("tclint_ex::scale_nofake", mutates_args=())  # expect: TC302
def scale(x: torch.Tensor, k: float) -> torch.Tensor:
    return x * k

@torch.compile
def f(x):
    return scale(x, 2.0)
""",
            run="f(torch.randn(4))",
            raises="no fake impl",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.library.custom_op("tclint_ex::scale_fake", mutates_args=())
def scale(x: torch.Tensor, k: float) -> torch.Tensor:
    return x * k

@scale.register_fake
def _(x, k):
    return torch.empty_like(x)

@torch.compile
def f(x):
    return scale(x, 2.0)
""",
            run="f(torch.randn(4))",
            raises="never",
        ),
    )
