import ast

from tclint.rules import types as T
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import maybe, short

# Constructors of sparse tensors (torch 2.13: `torch.sparse_coo_tensor` is a function Dynamo
# skips, GB0007; the compressed layouts are GB0374 "Sparse tensor creation not supported").
SPARSE_CONSTRUCTORS = frozenset(
    f"torch.{name}"
    for name in (
        "sparse_coo_tensor",
        "sparse_csr_tensor",
        "sparse_csc_tensor",
        "sparse_bsr_tensor",
        "sparse_bsc_tensor",
        "sparse_compressed_tensor",
    )
)
# Tensor methods whose result is a sparse tensor (GB0277 "Attempted to wrap sparse Tensor").
SPARSE_METHODS = frozenset(
    {"to_sparse", "to_sparse_coo", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc"}
)


class SparseTensor(Rule):
    """
    ## What it does
    Flags code that makes a sparse tensor inside compiled code: `torch.sparse_coo_tensor(...)`,
    `torch.sparse_csr_tensor(...)` and the other sparse constructors, and the conversions
    `t.to_sparse()`, `t.to_sparse_coo()`, `t.to_sparse_csr()`, `t.to_sparse_csc()`,
    `t.to_sparse_bsr()`, `t.to_sparse_bsc()`.

    ## Why is this bad?
    Dynamo (torch 2.13) does not trace sparse tensors.  Making one breaks the graph
    (`to_sparse*()`: GB0277 "Attempted to wrap sparse Tensor with VariableTracker";
    `torch.sparse_coo_tensor`: GB0007, a function Dynamo skips; the compressed layouts: GB0374
    "Sparse tensor creation not supported"), and the resumed frame breaks again where the sparse
    value is next used or returned (GB0015 "Attempted to wrap sparse Tensor").

    ## Example
    ```python
    @torch.compile
    def propagate(adj, x):
        a = adj.to_sparse()
        return torch.sparse.mm(a, x)
    ```

    ## Use instead
    Build sparse tensors in eager code and keep the compiled function dense (`torch.mm` on the
    dense adjacency, `index_add_` / `scatter_add_` over an edge list), or compile only the dense
    parts around the sparse operation.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0277.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0374.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0015.html
    """

    code = "TC124"
    name = "sparse-tensor"
    summary = "A sparse tensor is made inside compiled code: Dynamo does not trace sparse tensors"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0277", "GB0007", "GB0374", "GB0015")
    default_severity = Severity.WARNING
    CALLS = SPARSE_CONSTRUCTORS
    METHODS = SPARSE_METHODS

    def check_call(self, node, ctx, qualified, method):
        if qualified in SPARSE_CONSTRUCTORS:
            ctx.report(
                self.code,
                node,
                f"`{qualified.split('.', 1)[1]}(...)` makes a sparse tensor, which Dynamo does not trace: the graph breaks here",
                gb_ids=("GB0007",) if qualified == "torch.sparse_coo_tensor" else ("GB0374",),
                help="build the sparse tensor in eager code, or keep the compiled code dense",
            )
            return
        if method not in SPARSE_METHODS or not isinstance(node.func, ast.Attribute):
            return
        receiver = ctx.type_of(node.func.value)
        if receiver.kind == T.TENSOR:
            conf = receiver.conf
        elif receiver.kind == T.UNKNOWN:
            conf = T.MEDIUM  # `to_sparse*()` is a tensor method
        else:
            return
        ctx.report(
            self.code,
            node,
            f"`{short(ctx, node)}` makes a sparse tensor from a {maybe(conf)}tensor, which Dynamo does not trace: the graph breaks here",
            gb_ids=("GB0277",),
            confidence=conf,
            help="convert in eager code, or keep the compiled code dense",
        )

    invalid = (
        Example(
            """
import torch

@torch.compile
def propagate(adj: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    a = adj.to_sparse()  # expect: TC124
    return a.to_dense() @ x
""",
            run="propagate(torch.eye(3), torch.randn(3, 2))",
            gb=("GB0277",),
        ),
        Example(
            """
import torch

@torch.compile
def from_edges(index: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    s = torch.sparse_coo_tensor(index, values, (3, 3))  # expect: TC124
    return s.to_dense() * 2
""",
            run="from_edges(torch.tensor([[0, 1], [1, 2]]), torch.tensor([1.0, 2.0]))",
            gb=("GB0007",),
            title="a sparse constructor",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def propagate(adj: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return adj @ x
""",
            run="propagate(torch.eye(3), torch.randn(3, 2))",
        ),
    )
