import ast

from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Lifecycle, Rule

OPAQUE_HINTS = (
    "numpy",
    "cpu",
    "tolist",
    "item",
    "data_ptr",
    "ctypes",
    "triton",
    "cuda",
    "_C",
    "ops",
    "extension",
    "load",
)


class CustomOpPlainTensorBody(Rule):
    """
    ## What it does
    Points out a `torch.library.custom_op` whose body is only ordinary torch tensor code (no
    NumPy, no C++/CUDA extension, no `torch.ops` kernel, no Triton launch).

    ## Why is this bad?
    A custom op is an opaque box for the compiler: Inductor cannot fuse across it or into it, and
    it needs a fake implementation and `opcheck` tests to stay correct.  Wrapping plain tensor
    code in one buys nothing and costs fusion; Dynamo would trace that code directly.

    ## Example
    ```python
    @torch.library.custom_op("mylib::gelu_scale", mutates_args=())
    def gelu_scale(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x) * 2
    ```

    ## Use instead
    A plain function (decorate with nothing): Dynamo traces it and Inductor fuses it.

    ## Fix safety
    No automatic fix.

    ## References
    - https://docs.pytorch.org/tutorials/advanced/custom_ops_landing_page.html
    """

    code = "TC303"
    name = "custom-op-plain-tensor-body"
    summary = "A custom op wraps plain tensor code: an opaque fusion boundary for nothing"
    family = Family.COMPILE_API
    default_severity = Severity.HINT
    lifecycle = Lifecycle.PREVIEW
    region_only = False

    def visit_FunctionDef(self, node, ctx):
        is_op = any(
            (ctx.qualify(d.func if isinstance(d, ast.Call) else d) or "") == "torch.library.custom_op"
            for d in node.decorator_list
        )
        if not is_op:
            return
        calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
        if not calls:
            return
        for call in calls:
            q = ctx.qualify(call.func) or ""
            text = ctx.segment(call.func)
            if not q.startswith("torch.") and not isinstance(call.func, ast.Attribute):
                return  # calls a project or external function: assume real work
            if q.startswith(("torch.ops.", "torch._C")) or any(h in text for h in OPAQUE_HINTS):
                return
            if q and not q.startswith("torch."):
                return
        ctx.report(
            self.code,
            node.decorator_list[0],
            f"custom op `{node.name}` only runs plain torch code: an opaque fusion boundary; Dynamo could trace it directly",
            help="make it a plain function",
        )

    invalid = (
        Example(
            """
import torch

@torch.library.custom_op("tclint_ex::gelu_scale", mutates_args=())  # expect: TC303
def gelu_scale(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x) * 2

@gelu_scale.register_fake
def _(x):
    return torch.empty_like(x)

def test_gelu_scale():
    torch.library.opcheck(gelu_scale, (torch.randn(4),))
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

@torch.library.custom_op("tclint_ex::np_sort", mutates_args=())
def np_sort(x: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.sort(x.cpu().numpy()))

@np_sort.register_fake
def _(x):
    return torch.empty_like(x)

def test_np_sort():
    torch.library.opcheck(np_sort, (torch.randn(4),))
""",
            proof=False,
            title="real opaque work (NumPy)",
        ),
    )
