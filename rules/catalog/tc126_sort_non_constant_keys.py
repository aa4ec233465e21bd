import ast

from tclint.rules import types as T
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import builtin_call, short

# nn.Module methods that yield parameters, buffers or submodules (alone or in `(name, value)`
# pairs): sorting what they yield compares tensors or modules
MODULE_ITERATORS = frozenset(
    {"parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children",
     "modules", "named_modules"}
)  # fmt: skip
# annotations of `**kwargs` values that keep `kwargs.items()` constant for Dynamo
_CONSTANT_VALUES = frozenset({"int", "float", "str", "bool", "bytes", "None", "complex"})


def _items_confidence(node: ast.expr, ctx) -> tuple[int, str] | None:
    """How sure it is that sorting the items of ``node`` compares tensors or objects (and what
    they are, in words); None when the items are (or may well be) Python constants."""
    ty = ctx.type_of(node)
    if ty.kind in (T.TLIST, T.TENSOR):
        return ty.conf, "tensors"
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)) or node.args:
        return None
    method, receiver = node.func.attr, node.func.value
    if method in MODULE_ITERATORS:
        rty = ctx.type_of(receiver)
        is_self = isinstance(receiver, ast.Name) and receiver.id == ctx.self_name and ctx.cls is not None
        if rty.kind in (T.MODULE, T.ELEM) or is_self:
            return (rty.conf if rty.kind in (T.MODULE, T.ELEM) else T.MEDIUM), "parameters or modules"
        return None
    if method in ("items", "values") and isinstance(receiver, ast.Name):
        param = ctx.scope.params.get(receiver.id)
        if param is None or param.kind != "varkw":
            return None
        ann = (param.annotation or "").strip("'\" ").split("[")[0]
        if ann in _CONSTANT_VALUES:
            return None
        # `**kwargs` holds whatever the callers pass: constants, or tensors and objects
        return (T.MEDIUM if ann else T.LOW), "the keyword arguments' values"
    return None


class SortNonConstantKeys(Rule):
    """
    ## What it does
    Flags `sorted(...)` and `list.sort()` inside compiled code when what is compared is not a
    Python constant: a list of tensors (`sorted(scores)`), a `key=` function that returns a tensor
    (`key=lambda t: t.sum()`), a module's parameters or submodules
    (`sorted(self.named_parameters())`), or the values of `**kwargs`
    (`sorted(kwargs.items())`, which compares `(name, value)` pairs).

    ## Why is this bad?
    Dynamo (torch 2.13) sorts at trace time, and only when every sort key is a Python constant;
    otherwise the graph breaks at the call (GB0207 "sort with non-constant keys").  Comparing
    `(name, value)` pairs counts too, even when the names are all different.

    ## Example
    ```python
    def split(**kwargs):
        return [value for name, value in sorted(kwargs.items())]

    @torch.compile
    def f(x):
        return split(b=x, a=x + 1)[0]
    ```

    ## Use instead
    Sort by a constant: `sorted(kwargs)` (the names) then look the values up,
    `sorted(kwargs.items(), key=lambda kv: kv[0])`, `sorted(self.named_parameters(), key=lambda
    kv: kv[0])`; sort tensors with `torch.sort` / `torch.argsort` on a stacked tensor.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0207.html
    """

    code = "TC126"
    name = "sort-non-constant-keys"
    summary = "`sorted()` / `list.sort()` comparing tensors or objects inside compiled code breaks the graph"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0207",)
    default_severity = Severity.WARNING
    CALLS = frozenset({"builtins.sorted"})
    METHODS = frozenset({"sort"})

    def check_call(self, node, ctx, qualified, method):
        if isinstance(node.func, ast.Name):
            if not builtin_call(node, ctx, "sorted") or not node.args:
                return
            items = node.args[0]
        elif method == "sort" and isinstance(node.func, ast.Attribute) and not node.args:
            items = node.func.value
            if ctx.type_of(items).kind == T.TENSOR:
                return  # Tensor.sort(): a tensor op
        else:
            return
        key = next((k.value for k in node.keywords if k.arg == "key"), None)
        found: tuple[int, str] | None
        if key is None:
            found = _items_confidence(items, ctx)
        elif isinstance(key, ast.Lambda):
            kty = ctx.type_of(key.body)
            found = (kty.conf, "a tensor key") if kty.kind == T.TENSOR else None
        else:
            found = None  # `key=len`, `key=itemgetter(0)`...: constants as a rule
        if found is None:
            return
        conf, what = found
        ctx.report(
            self.code,
            node,
            f"`{short(ctx, node)}` compares {what}, not Python constants: Dynamo cannot sort them and the graph breaks here",
            gb_ids=("GB0207",),
            confidence=conf,
            help="sort by a constant key (`key=lambda kv: kv[0]`, or the names, then look the values up), or use torch.sort / torch.argsort",
        )

    invalid = (
        Example(
            """
import torch


def split(**kwargs):
    return [value for name, value in sorted(kwargs.items())]  # expect: TC126


@torch.compile
def first(x: torch.Tensor) -> torch.Tensor:
    return split(b=x, a=x + 1)[0] * 2
""",
            run="first(torch.randn(3))",
            settings={"min-confidence": "low"},
            title="the values of **kwargs (low confidence: they are what the callers pass)",
        ),
        Example(
            """
import torch


@torch.compile
def smallest(x: torch.Tensor) -> torch.Tensor:
    parts = [x.sin(), x.cos()]
    parts.sort(key=lambda t: t.sum())  # expect: TC126
    return parts[0]
""",
            run="smallest(torch.randn(3))",
            title="a key that returns a tensor",
        ),
        Example(
            """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.b = nn.Linear(3, 3)
        self.a = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _, child in sorted(self.named_children()):  # expect: TC126
            x = child(x)
        return x


net = torch.compile(Net())
""",
            run="net(torch.randn(2, 3))",
            title="a module's (name, submodule) pairs",
        ),
    )
    valid = (
        Example(
            """
import torch


def split(**kwargs):
    return [kwargs[name] for name in sorted(kwargs)]


@torch.compile
def first(x: torch.Tensor) -> torch.Tensor:
    parts = sorted([x.sin(), x.cos()], key=lambda t: t.shape[0])
    return split(b=x, a=x + 1)[0] * 2 + parts[0]
""",
            run="first(torch.randn(3))",
            settings={"min-confidence": "low"},
            title="sorting the names, and a constant key",
        ),
    )
