import ast

from tclint.rules import types as T
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import short

# What each kind of value makes of `assert value` under Dynamo 2.13 (measured): Dynamo rewrites an
# assert with a constant (or no) message into `torch._assert_async(torch.scalar_tensor(value))`
# whenever the value is neither a Python constant nor a tensor nor a shape expression, and
# `torch.scalar_tensor` of an object cannot be traced.
_OBJECT_KINDS = {
    T.MODULE: ("GB0055", "an nn.Module"),
    T.MODLIST: ("GB0055", "a module container"),
    T.ELEM: ("GB0055", "an nn.Module"),
    T.INSTANCE: ("GB0055", "an object"),
    T.TLIST: ("GB0112", "a list or tuple of tensors"),
}


# annotations of `*args` items that keep the tuple a constant for Dynamo
_CONSTANT_ITEMS = frozenset({"int", "float", "str", "bool", "bytes", "None", "complex"})


def _varargs_confidence(ctx, name: str) -> int | None:
    """How likely the current function's ``*name`` tuple holds tensors or objects (None: ``name``
    is not its ``*args``, or its items are annotated as Python constants)."""
    param = ctx.scope.params.get(name)
    if param is None or param.kind != "varargs":
        return None
    if param.annotation is None:
        return T.LOW  # whatever the callers pass: a constant tuple when they pass constants
    if param.annotation.strip("'\" ").split("[")[0] in _CONSTANT_ITEMS:
        return None
    return T.MEDIUM


class AssertOnObject(Rule):
    """
    ## What it does
    Flags an `assert` whose condition is an object rather than a test: an `nn.Module`
    (`assert self.encoder`), an instance of a class (`assert self.config`), a list or tuple of
    tensors, or the `*args` tuple of a function called with tensors or objects
    (`assert parts, "parts cannot be empty"`), when the assert has no message or a constant one.

    ## Why is this bad?
    Dynamo (torch 2.13) turns an `assert` with a constant message into a graph assertion:
    `torch._assert_async(torch.scalar_tensor(value))` for any value that is neither a Python
    constant nor a tensor.  `torch.scalar_tensor` of a module, an object or a tuple of tensors
    cannot be traced, so the graph breaks at the assert (GB0055 "Failed to convert args/kwargs to
    proxy" for modules and objects, GB0112 "TypeError when making fake tensor call" for containers
    of tensors); in a helper the break is repeated when Dynamo compiles the helper as its own
    frame.  An `if parts:` on the same value, or an assert with a computed message, does not break
    (Dynamo takes the truth value of the container or module then), nor does an assert on a test
    (`len(parts) > 0`, `x is not None`, `isinstance(...)`).

    ## Example
    ```python
    class Composed:
        def __init__(self, *parts):
            assert parts, "parts cannot be empty"
            self.parts = parts

    @torch.compile
    def both(x):
        return Composed(x.sin(), x.cos()).parts
    ```

    ## Use instead
    Assert a test: `assert len(parts) > 0, "..."`, `assert self.encoder is not None, "..."`.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0055.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0112.html
    """

    code = "TC125"
    name = "assert-on-object"
    summary = "`assert obj` on a module, object or tuple of tensors breaks the graph: assert a test"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0055", "GB0112")
    default_severity = Severity.WARNING

    def visit_Assert(self, node, ctx):
        if node.msg is not None and not isinstance(node.msg, ast.Constant):
            return  # Dynamo takes the plain truth value: a container's or module's is known
        test = node.test
        ty = ctx.type_of(test)
        found = _OBJECT_KINDS.get(ty.kind)
        conf = ty.conf
        if found is not None and ty.kind == T.INSTANCE and (ty.ref or "").startswith("torch."):
            return  # torch.device / dtype / Size are constants to Dynamo
        if found is None and isinstance(test, ast.Name):
            star = _varargs_confidence(ctx, test.id)
            if star is None:
                return
            found, conf = ("GB0055", "the `*args` tuple"), star
        if found is None:
            return
        gb, what = found
        ctx.report(
            self.code,
            test,
            f"`assert {short(ctx, test)}` on {what}: Dynamo cannot make a graph assertion of it, the graph breaks here",
            gb_ids=(gb,),
            confidence=conf,
            help=f"assert a test instead: `assert len({short(ctx, test)}) > 0` or `assert {short(ctx, test)} is not None`",
        )

    invalid = (
        Example(
            """
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert self.proj, "no projection"  # expect: TC125
        return self.proj(x)


enc = torch.compile(Encoder())
""",
            run="enc(torch.randn(2, 4))",
            gb=("GB0055",),
        ),
        Example(
            """
import torch


def first(parts: list[torch.Tensor]) -> torch.Tensor:
    assert parts, "parts cannot be empty"  # expect: TC125
    return parts[0]


@torch.compile
def head(x: torch.Tensor) -> torch.Tensor:
    return first([x.sin(), x.cos()]) + 1
""",
            run="head(torch.randn(3))",
            gb=("GB0112",),
            title="a list of tensors in a helper",
        ),
        Example(
            """
import torch


class Shift:
    def __init__(self, by: torch.Tensor) -> None:
        self.by = by


class Chain:
    def __init__(self, *steps: Shift) -> None:
        assert steps, "a chain needs steps"  # expect: TC125
        self.steps = steps


@torch.compile
def apply(x: torch.Tensor) -> torch.Tensor:
    chain = Chain(Shift(x.mean()), Shift(x.std()))
    return x - chain.steps[0].by
""",
            run="apply(torch.randn(8))",
            gb=("GB0055",),
            title="the `*args` tuple of objects (medium confidence: from its annotation)",
        ),
    )
    valid = (
        Example(
            """
import torch


def first(parts: list[torch.Tensor]) -> torch.Tensor:
    assert len(parts) > 0, "parts cannot be empty"
    if parts:
        return parts[0]
    return torch.zeros(())


@torch.compile
def head(x: torch.Tensor) -> torch.Tensor:
    return first([x.sin(), x.cos()]) + 1
""",
            run="head(torch.randn(3))",
            title="an assert on a test, and `if` on the list",
        ),
    )
