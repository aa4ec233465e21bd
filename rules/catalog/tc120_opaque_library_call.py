from typing import ClassVar

from tclint.rules import types as T
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule

# Libraries whose functions Dynamo cannot see into (C extensions, I/O, serialisation).
# Measured: scipy.special.expit, json.dumps, ctypes -> GB0156; scipy.ndimage -> many breaks
# inside scipy.  numpy itself is traced (trace_numpy) and einops is supported: not listed.
OPAQUE_ROOTS = {
    "scipy": "GB0156", "sklearn": "GB0156", "ctypes": "GB0156", "json": "GB0156", "pickle": "GB0156",
    "pandas": "GB0156", "cv2": "GB0156", "PIL": "GB0156", "requests": "GB0156", "h5py": "GB0156",
    "yaml": "GB0156", "skimage": "GB0156", "numba": "GB0156", "cupy": "GB0156", "sympy": "GB0156",
}  # fmt: skip
MEASURED = frozenset({"scipy", "json", "ctypes"})


class OpaqueLibraryCall(Rule):
    """
    ## What it does
    Flags calls into libraries Dynamo cannot trace from compiled code: SciPy, scikit-learn,
    ctypes, json/pickle/yaml, pandas, OpenCV, PIL, h5py, numba, CuPy and similar.  NumPy is
    traced by Dynamo (as torch ops) and einops is supported; neither is flagged.

    ## Why is this bad?
    Dynamo cannot see into C extensions or serialisation code: the graph breaks at the call
    (measured: `scipy.special.expit`, `json.dumps` and `ctypes` give GB0156 "Unsupported method
    call"), and for pure-Python libraries such as `scipy.ndimage` Dynamo follows the call into the
    library and breaks there many times over.

    ## Example
    ```python
    @torch.compile
    def smooth(x):
        return torch.from_numpy(scipy.ndimage.gaussian_filter(x.numpy(), 1.0))
    ```

    ## Use instead
    Use a torch equivalent (`torch.special.expit` = `torch.sigmoid`, `F.conv1d` with a Gaussian
    kernel, ...), or call the library from eager code; for a hot custom kernel, register a
    `torch.library.custom_op` with a fake implementation.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0156.html
    - https://docs.pytorch.org/tutorials/advanced/custom_ops_landing_page.html
    """

    code = "TC120"
    name = "opaque-library-call"
    summary = "A call into a library Dynamo cannot trace"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0156",)
    default_severity = Severity.WARNING

    def visit_Call(self, node, ctx):
        q = ctx.qualify(node.func)
        if q is None:
            self._context_var(node, ctx)
            return
        root = q.split(".", 1)[0]
        gb = OPAQUE_ROOTS.get(root)
        if gb is None or q.count(".") == 0:
            return
        last = q.rsplit(".", 1)[-1]
        if last[:1].isupper() and root not in ("ctypes", "PIL"):
            return  # exception classes, dtypes used in isinstance checks, ...
        conf = T.HIGH if root in MEASURED else T.MEDIUM
        ctx.report(
            self.code,
            node,
            f"`{q}(...)` calls into {root}, which Dynamo cannot trace: the graph breaks here",
            gb_ids=(gb,),
            confidence=conf,
            help="use a torch equivalent, or call it from eager code",
        )

    def _context_var(self, node, ctx):
        """`ContextVar.get()` / `.set()` are C methods Dynamo cannot trace (measured: GB0156)."""
        import ast

        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in ("get", "set", "reset"):
            return
        ty = ctx.type_of(func.value)
        if ty.kind == T.INSTANCE and ty.ref == "contextvars.ContextVar":
            ctx.report(
                self.code,
                node,
                f"`{ctx.segment(node.func)}()` on a contextvars.ContextVar cannot be traced: the graph breaks here",
                gb_ids=("GB0156",),
                confidence=T.HIGH,
                help="read the context variable in the eager caller and pass the value in",
            )

    invalid: ClassVar[tuple[Example, ...]] = (
        Example(
            """
import scipy.special
import torch

@torch.compile
def squash(x: torch.Tensor):
    y = x * 2
    z = scipy.special.expit(y.numpy())  # expect: TC120
    return torch.as_tensor(z)
""",
            run="squash(torch.randn(4))",
        ),
    )
    invalid = (
        *invalid,
        Example(
            """
import contextvars
import torch

SCALE = contextvars.ContextVar("scale", default=2.0)

@torch.compile
def scaled(x: torch.Tensor):
    y = x * 2
    return y * SCALE.get()  # expect: TC120
""",
            run="scaled(torch.randn(4))",
            title="a context variable",
        ),
    )
    valid = (
        Example(
            """
import numpy as np
import torch

@torch.compile
def squash(x):
    return torch.from_numpy(np.tanh(x.numpy())) * 2
""",
            run="squash(torch.randn(4))",
            title="NumPy is traced",
        ),
    )
