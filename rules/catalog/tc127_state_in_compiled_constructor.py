import ast

from tclint.rules import types as T
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import short

# What each constructor does when a module's `__init__` runs under Dynamo 2.13 (measured with
# torch.compile, backend "eager"): `nn.Parameter(...)` cannot be traced (GB0264), and
# `nn.Buffer(...)` assigned in the constructor of an nn.Module breaks inside the module's
# `__setattr__` (GB0116 "Unexpected type in sourceless builder", reported in `inspect`).  After
# either break Dynamo traces the constructor as its own frame and breaks again at
# `super().__init__()` (GB0119 "Uninitialized nn.Module").  `self.register_buffer(name, t)` and a
# plain tensor attribute do not break; nor does `nn.Buffer` in the constructor of a plain class.
_STATE_CALLS = {
    "torch.nn.Parameter": ("GB0264", "`nn.Parameter(...)`"),
    "torch.nn.parameter.Parameter": ("GB0264", "`nn.Parameter(...)`"),
    "torch.nn.Buffer": ("GB0116", "`nn.Buffer(...)`"),
    "torch.nn.parameter.Buffer": ("GB0116", "`nn.Buffer(...)`"),
}


def _module_confidence(ctx) -> int | None:
    """How sure tclint is that the class being constructed is an ``nn.Module`` (None: it has no
    base class, so it is a plain class)."""
    cls = ctx.cls
    if cls is None or not cls.bases:
        return None
    if any(b.startswith("torch.nn.") for b in cls.bases):
        return T.HIGH
    return T.MEDIUM  # a project or library base class: a module when it derives from one


def _own_calls(fn: ast.AST):
    """The calls in ``fn``'s body, in source order, not those of nested functions or classes."""
    todo = list(reversed(getattr(fn, "body", [])))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Call):
            yield node
        todo.extend(reversed(list(ast.iter_child_nodes(node))))


def _is_super_init(call: ast.Call) -> bool:
    f = call.func
    return (
        isinstance(f, ast.Attribute)
        and f.attr == "__init__"
        and isinstance(f.value, ast.Call)
        and isinstance(f.value.func, ast.Name)
        and f.value.func.id == "super"
    )


class StateCreatedInCompiledConstructor(Rule):
    """
    ## What it does
    Flags `nn.Parameter(...)` and `nn.Buffer(...)` in the `__init__` of a module that is built
    inside compiled code (a loss or a helper module constructed in `forward` or in a compiled
    function), and the `super().__init__()` of that constructor.  A constructor only called
    from eager code (the normal case: the model is built, then compiled) is never flagged.

    ## Why is this bad?
    Dynamo 2.13 traces the constructor of a module built in compiled code.  `nn.Parameter(...)`
    cannot be traced (GB0264), and `nn.Buffer(...)` assigned to the module breaks inside the
    module's attribute setter (GB0116, reported in `inspect`).  After that break Dynamo traces
    the constructor again as its own frame and breaks a second time at `super().__init__()`
    (GB0119 "Uninitialized nn.Module").  On every call the module is built again: a new graph
    piece on each side of the breaks, and new Parameters the optimizer never sees.
    `self.register_buffer("w", t)` and a plain tensor attribute do not break.  When the class's
    base is not visibly `torch.nn.*` (a project or library base class), the `nn.Buffer` finding
    is at medium confidence: the break needs the class to be an `nn.Module`.

    ## Example
    ```python
    class WeightedLoss(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.weight = nn.Buffer(torch.ones(n))

    @torch.compile
    def step(x):
        return (x * WeightedLoss(x.shape[-1]).weight).sum()
    ```

    ## Use instead
    Build the module once, outside the compiled code (in the model's `__init__`), or register
    the tensor with `self.register_buffer("weight", torch.ones(n))`.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0264.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0116.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0119.html
    """

    code = "TC127"
    name = "state-created-in-compiled-constructor"
    summary = "A module built in compiled code creates a Parameter or Buffer in its `__init__`"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0264", "GB0116", "GB0119")
    default_severity = Severity.WARNING
    CALLS = frozenset(_STATE_CALLS)

    def _breaking(self, call: ast.Call, ctx) -> tuple[str, str, int] | None:
        """(GB id, what, confidence) when ``call`` breaks in a compiled constructor."""
        found = _STATE_CALLS.get(ctx.qualify(call.func) or "")
        if found is None:
            return None
        gb, what = found
        if gb == "GB0264":
            return gb, what, T.HIGH  # breaks in any class (and outside __init__: TC116)
        conf = _module_confidence(ctx)
        return None if conf is None else (gb, what, conf)

    def check_call(self, node, ctx, qualified, method):
        fn = ctx.function
        if fn is None or fn.name != "__init__" or ctx.cls is None:
            return  # outside a constructor: TC116 flags `nn.Parameter(...)`
        found = self._breaking(node, ctx)
        if found is None:
            return
        gb, what, conf = found
        why = "" if conf == T.HIGH else f" (if `{ctx.cls.name}` is an nn.Module)"
        ctx.report(
            self.code,
            node,
            f"{what} in the constructor of `{ctx.cls.name}`, built inside compiled code: "
            f"the graph breaks here{why}, and again at its `super().__init__()`",
            gb_ids=(gb,),
            confidence=conf,
            help="build the module once outside the compiled code, or use `self.register_buffer(...)` for a buffer",
        )

    def visit_FunctionDef(self, node, ctx):
        if node.name != "__init__" or ctx.cls is None or _module_confidence(ctx) is None:
            return
        sup = None
        for call in _own_calls(node):
            if sup is None:
                if _is_super_init(call):
                    sup = call
                continue
            found = self._breaking(call, ctx)
            if found is None:
                continue
            line = call.lineno
            ctx.report(
                self.code,
                sup,
                f"`{ctx.cls.name}` is built inside compiled code and its constructor breaks at "
                f"line {line} ({short(ctx, call, 30)}): Dynamo then traces the constructor as its "
                "own frame and breaks here on an uninitialized nn.Module",
                gb_ids=("GB0119",),
                confidence=min(found[2], _module_confidence(ctx) or T.LOW),
                help="build the module once outside the compiled code",
            )
            return

    invalid = (
        Example(
            """
import torch
import torch.nn as nn

class WeightedLoss(nn.Module):
    def __init__(self, n):
        super().__init__()  # expect: TC127
        weight = torch.ones(n)
        weight[-1] = 0.1
        self.weight = nn.Buffer(weight)  # expect: TC127

@torch.compile
def step(x):
    return (x * WeightedLoss(x.shape[-1]).weight).sum()
""",
            run="step(torch.randn(4)); step(torch.randn(4))",
        ),
        Example(
            """
import torch
import torch.nn as nn

class Scale(nn.Module):
    def __init__(self, n):
        super().__init__()  # expect: TC127
        self.scale = nn.Parameter(torch.ones(n))  # expect: TC127

class Head(nn.Module):
    def forward(self, x):
        return x * Scale(x.shape[-1]).scale

head = torch.compile(Head())
""",
            run="head(torch.randn(2, 4))",
        ),
    )
    valid = (
        Example(
            """
import torch
import torch.nn as nn

class WeightedLoss(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("weight", torch.ones(n))

@torch.compile
def step(x):
    return (x * WeightedLoss(x.shape[-1]).weight).sum()
""",
            run="step(torch.randn(4))",
        ),
        Example(
            """
import torch
import torch.nn as nn

class WeightedLoss(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Buffer(torch.ones(n))
        self.scale = nn.Parameter(torch.ones(n))

    def forward(self, x):
        return (x * self.weight * self.scale).sum()

loss = torch.compile(WeightedLoss(4))
""",
            run="loss(torch.randn(4))",
        ),
    )
