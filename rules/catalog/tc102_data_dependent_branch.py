import ast
from typing import NamedTuple

from tclint.rules import types as T
from tclint.rules.facts import FrameEffect, Need, Requirement
from tclint.rules.model import Applicability, Edit, Fix, Severity, Span
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import builtin_call, maybe, short, tensor_confidence, torch_name
from tclint.rules.tensor_methods import BOUND_METHOD


class _Why(NamedTuple):
    """Why a condition needs a tensor's value: ``kind`` is "tensor", a data-dependent scalar's
    dtype ("item": a captured ``.item()``, "random": a Python ``random`` draw) or "deferred" (the
    tensor ``ref``, a project function, returns); ``unless``: a project predicate that, when it is
    an ``is_compiling()`` check, keeps the tensor part out of compiled code."""

    kind: str
    ref: str = ""
    unless: str = ""

    def requires(self) -> tuple[Requirement, ...]:
        out = (Requirement(Need.NOT_COMPILING_PREDICATE, self.unless),) if self.unless else ()
        if self.kind == "deferred":
            out = (*out, Requirement(Need.RETURNS_TENSOR, self.ref))
        return out

    def data(self) -> dict[str, bool]:
        """The note ``finalize`` reads: a captured ``.item()`` breaks here only once it is captured."""
        return {"needs_capture": True} if self.kind == "item" else {}


def _condition_confidence(ctx, test: ast.expr) -> tuple[int | None, _Why | None]:
    """How sure we are that Python needs a tensor's *value* to evaluate this condition, and why."""
    if isinstance(test, ast.BoolOp):
        best: tuple[int | None, _Why | None] = (None, None)
        dtype_guard = False
        guard: int | None = None  # the cap that the Python values the tensor part waits on put on it
        unless = ""
        for value in test.values:
            if isinstance(test.op, ast.And):
                which = ctx.compiling_condition(value) or ""
                if which == "eager":
                    break  # `not is_compiling() and t.any()`: false under compile, the rest never runs
                if which.startswith("maybe-eager:") and not unless:
                    unless = which.split(":", 1)[1]
                    continue
            conf, why = _condition_confidence(ctx, value)
            if conf is not None and dtype_guard:
                # `x.dtype == torch.float16 and not torch.isfinite(x).all()`: the tensor part only
                # runs for that dtype (decided while tracing) -- usually not the one in use
                conf = max(conf, T.LOW)
            if conf is not None and guard is not None:
                # `cfg.use_x and t.any()` / `p > 0. and random() < p`: the tensor part only runs
                # when that Python value is true, which the source does not tell
                conf = max(conf, guard)
            if conf is not None and why is not None and (best[0] is None or conf < best[0]):
                best = (conf, why._replace(unless=why.unless or unless))
            if isinstance(test.op, ast.And) and _is_dtype_check(value):
                dtype_guard = True
            if isinstance(test.op, ast.And) and conf is None:
                g = _guard_confidence(ctx, value)
                guard = g if guard is None or g is None else max(guard, g)
        return best
    ty = ctx.type_of(test)
    conf = tensor_confidence(ty)
    if conf is not None:
        return conf, _Why("tensor")
    if ty.kind == T.SCALAR and ty.dtype in T.DATA_DEPENDENT_SCALARS:
        return ty.conf, _Why(ty.dtype)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _condition_confidence(ctx, test.operand)
    if ty.kind == T.DEFERRED and ty.ref:
        return ty.conf, _Why("deferred", ty.ref)
    return None, None


def _bound_method_confidence(ctx, test: ast.expr) -> int | None:
    """How sure we are that ``test`` is a tensor method read without the call, on a tensor Dynamo
    has no source for (``x = x.view(-1)``; ``x if x.is_floating_point else x.float()``): Python
    finds it always true; Dynamo cannot take its truth value (GB4841) and, at a jump, gives up on
    the whole function.  On a graph input (measured: a parameter of the compiled function) it
    does not break, so a parameter the function never rebinds is only a low-confidence guess
    (what its callers pass decides); ``self.x.method`` is not reported."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _bound_method_confidence(ctx, test.operand)
    if not isinstance(test, ast.Attribute):
        return None
    ty = ctx.type_of(test)
    if ty.kind != T.FUNC or ty.dtype != BOUND_METHOD:
        return None
    base = test.value
    if isinstance(base, ast.Name):
        if base.id in ctx.scope.env:
            return max(ty.conf, T.MEDIUM)  # bound in this function (a parameter rebound too)
        return max(ty.conf, T.LOW) if ctx.is_param(base) else None
    if isinstance(base, (ast.Call, ast.BinOp, ast.Subscript, ast.UnaryOp)):
        return max(ty.conf, T.MEDIUM)  # `(a + b).is_floating_point`: computed here
    return None


def _guard_confidence(ctx, value: ast.expr) -> int | None:
    """How sure the part after ``value and`` is to run, ``value`` being a Python value: no cap for
    the module mode (``self.training``: true while training, the common compiled case) and for
    ``is None`` checks; medium for another flag (``self.use_x``); low for a rate or count compared
    with zero (``self.p > 0.``, ``layer_dropout != 0``), a switch that is off in many configs."""
    if isinstance(value, ast.Attribute) and value.attr == "training":
        return None
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
        return T.MEDIUM
    if isinstance(value, ast.Compare) and len(value.ops) == 1:
        op, right = value.ops[0], value.comparators[0]
        if isinstance(op, (ast.Is, ast.IsNot)):
            return None
        if _option_off_by_default(ctx, value.left, op, right):
            return T.LOW
        if (
            isinstance(op, (ast.Gt, ast.NotEq))
            and isinstance(right, ast.Constant)
            and isinstance(right.value, (int, float))
            and not isinstance(right.value, bool)
            and right.value == 0
        ):
            return T.LOW
    ty = ctx.type_of(value)
    if ty.kind == T.SCALAR or isinstance(value, (ast.Name, ast.Attribute, ast.Compare)):
        return T.MEDIUM
    return None


def _option_off_by_default(ctx, left: ast.expr, op: ast.cmpop, right: ast.expr) -> bool:
    """``zero_division == "warn" and t.any()`` with ``zero_division=0.0`` by default: the tensor part
    runs only for an option the caller must pass (a parameter compared equal to a string other
    than its default), a path that calls with the default never take (torchmetrics'
    ``_safe_divide``)."""
    if not (
        isinstance(op, ast.Eq)
        and isinstance(left, ast.Name)
        and isinstance(right, ast.Constant)
        and isinstance(right.value, str)
    ):
        return False
    param = ctx.scope.params.get(left.id)
    return param is not None and param.default not in (None, "<expr>") and param.default != repr(right.value)


def _is_dtype_check(node: ast.expr) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in ("dtype", "is_floating_point", "is_cuda", "device"):
            return True
    return False


class DataDependentBranch(Rule):
    """
    ## What it does
    Flags Python control flow decided by a tensor's value inside compiled code: a tensor (or a
    comparison of one) as the condition of `if`, `elif`, `while`, a conditional expression
    (`a if t.any() else b`), `and` / `or` between tensors, `not` of a tensor, and the builtins
    `all()` / `any()` over a tensor or tensors (`all(t > 0)`, `any(p.sum() > 0 for p in parts)`:
    they take each item's truth value, in or out of an `if`).  Also branches
    on Python `random` draws, which Dynamo keeps as run-time values, and (with
    `capture_scalar_outputs`) on captured `.item()` results.

    Also a tensor method read without the call as a condition (`x if x.is_floating_point else
    x.float()`): always true in Python, but Dynamo cannot take its truth value (GB4841) and gives
    up on the whole function; on a parameter of the compiled function itself it does not break,
    so a parameter the function never rebinds is low confidence.

    Conditions on shapes (`x.shape[0] > 1`, `x.dim()`, `x.numel()`, `len(x)`), on `is None`,
    `isinstance`, `self.training` and configuration attributes are decided while tracing and do
    not break; neither does `assert tensor_condition` (it becomes an assertion op in the graph),
    unless the assert's message is computed (`assert (t > 0).all(), "{} must be positive".format(name)`,
    an f-string, `%`): then Dynamo breaks on the condition (GB0170).

    ## Why is this bad?
    The graph cannot contain a Python `if`: Dynamo must stop the graph, compute the condition,
    and continue in a new graph on the branch taken (GB0170 "Data-dependent branching"; `not t`
    as a value is GB0033).  The break costs a round trip on every call, and inside a loop body it
    makes Dynamo give up on the whole function, which then runs eagerly.

    ## Example
    ```python
    @torch.compile
    def relu_or_neg(x):
        if x.sum() > 0:
            return x.relu()
        else:
            return -x
    ```

    ## Use instead
    When both branches are cheap pure tensor code, compute both and select:
    ```python
    @torch.compile
    def relu_or_neg(x):
        return torch.where(x.sum() > 0, x.relu(), -x)
    ```
    `torch.where` evaluates both branches (wrong for side effects, invalid inputs or expensive
    branches); `torch.cond(pred, true_fn, false_fn, operands)` evaluates one, with constraints on
    what the branch functions may do.  Or move the decision out of the compiled region.

    ## Fix safety
    For `if c: return a` / `else: return b`, `if c: y = a` / `else: y = b` and `a if c else b`
    where every part is a tensor expression, tclint offers `torch.where(c, a, b)`.  The fix is
    unsafe: both branches then run on every call (wrong for side effects and inputs only one side
    accepts, slower for expensive branches).  Every tensor `if`/`else` also gets a display-only
    suggestion to rewrite it with `torch.cond`, which runs one side.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html
    - https://docs.pytorch.org/docs/stable/cond.html
    """

    code = "TC102"
    name = "data-dependent-control-flow"
    summary = "Python control flow depends on a tensor's value inside compiled code"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0170", "GB0033", "GB4841")
    default_severity = Severity.WARNING
    fix_applicability = Applicability.UNSAFE

    CALLS = frozenset({"builtins.all", "builtins.any"})

    def check_call(self, node, ctx, qualified, method):
        """``all(t)`` / ``any(t > 0)`` / ``all(y.sum() > 0 for y in ys)``: the builtin iterates
        and takes the truth value of each tensor item (GB0170 at the call, in or out of an ``if``;
        measured under Dynamo 2.13: a 1-d tensor, a list of tensors, a generator of them)."""
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        if len(node.args) != 1 or node.keywords or not builtin_call(node, ctx, name):
            return
        arg = ctx.type_of(node.args[0])
        conf = arg.conf if arg.kind in (T.TENSOR, T.TLIST) else None
        if conf is None:
            return
        ctx.report(
            self.code,
            node,
            f"`{name}()` takes the truth value of each item of a {maybe(conf)}tensor: the graph breaks here",
            gb_ids=("GB0170",),
            confidence=conf,
            help=f"use `{'t.all()' if name == 'all' else 't.any()'}` / torch.stack(...).{name}() to keep it a tensor",
        )

    def _bound_method_condition(self, test: ast.expr, ctx) -> bool:
        """``if t.is_floating_point:`` (no call) on a tensor computed here: reported, True."""
        conf = _bound_method_confidence(ctx, test)
        if conf is None:
            return False
        ctx.report(
            self.code,
            test,
            f"`{short(ctx, test)}` is a tensor method without the call (always true in Python): Dynamo cannot "
            "take its truth value and gives up on the whole function, which runs eagerly",
            gb_ids=("GB4841",),
            confidence=conf,
            help="call it (`t.is_floating_point()`), or test the tensor's attributes (`t.dtype`)",
            frame=FrameEffect.WHOLE_FRAME,
        )
        return True

    def visit_Condition(self, node, ctx):
        test = node.test
        if self._bound_method_condition(test, ctx):
            return
        conf, why = _condition_confidence(ctx, test)
        if conf is None or why is None:
            return
        if why.kind == "item":
            what = "a captured `.item()` value"
        elif why.kind == "random":
            what = "a Python `random` draw"
        elif why.kind == "deferred":
            what = f"the tensor returned by `{why.ref.rsplit('.', 1)[-1]}()`"
        else:
            what = f"a {maybe(conf)}tensor"
        ctx.report(
            self.code,
            test,
            f"`{short(ctx, test)}` branches on {what}: the graph breaks here",
            gb_ids=("GB0170",),
            confidence=conf,
            requires=why.requires(),
            data=why.data(),
            help="use torch.where / torch.cond, or move the decision out of the compiled region",
            fix=None,
        )

    def visit_If(self, node, ctx):
        fix = _branch_fixes(node, ctx)
        if fix is None:
            return
        # attach the fix to the candidate the Condition visit just reported
        cands = ctx.facts.candidates
        if cands and cands[-1].code == self.code and cands[-1].loc.line == node.test.lineno:
            cands[-1].fix = fix

    def visit_IfExp(self, node, ctx):
        if self._bound_method_condition(node.test, ctx):
            return
        conf, why = _condition_confidence(ctx, node.test)
        if conf is None or why is None:
            return
        ctx.report(
            self.code,
            node.test,
            f"`{short(ctx, node.test)}` picks a branch on a {maybe(conf)}tensor value: the graph breaks here",
            gb_ids=("GB0170",),
            confidence=conf,
            requires=why.requires(),
            data=why.data(),
            help="use torch.where(cond, a, b) when both sides are tensors",
            fix=_where_fix_ifexp(node, ctx),
        )

    def visit_BoolOp(self, node, ctx):
        if ctx.in_test:
            return  # conditions are reported whole by visit_Condition
        tys = [ctx.type_of(v) for v in node.values[:-1]]
        confs = [tensor_confidence(t) for t in tys]
        confs = [c for c in confs if c is not None]
        if not confs:
            return
        conf = min(confs)
        op = "and" if isinstance(node.op, ast.And) else "or"
        ctx.report(
            self.code,
            node,
            f"`{op}` needs the truth value of a {maybe(conf)}tensor: the graph breaks here",
            gb_ids=("GB0170",),
            confidence=conf,
            help=f"use `torch.logical_{op}(a, b)` or `a {'&' if op == 'and' else '|'} b` on boolean tensors",
        )

    def visit_UnaryOp(self, node, ctx):
        if not isinstance(node.op, ast.Not) or ctx.in_test:
            return
        conf = tensor_confidence(ctx.type_of(node.operand))
        if conf is None:
            return
        ctx.report(
            self.code,
            node,
            f"`not` of a {maybe(conf)}tensor needs its truth value: Dynamo gives up on the whole function",
            gb_ids=("GB0033",),
            confidence=conf,
            help="use `torch.logical_not(t)` or `~t` on a boolean tensor",
            frame=FrameEffect.WHOLE_FRAME,
        )

    def visit_Assert(self, node, ctx):
        msg = node.msg
        if msg is None or isinstance(msg, ast.Constant):
            return  # becomes torch._assert_async in the graph (truth table a05)
        conf, why = _condition_confidence(ctx, node.test)
        if conf is None or why is None or why.kind != "tensor":
            return
        ctx.report(
            self.code,
            node.test,
            f"`assert {short(ctx, node.test)}` on a {maybe(conf)}tensor with a computed message: the graph breaks here",
            gb_ids=("GB0170",),
            confidence=conf,
            requires=why.requires(),
            help="give the assert a constant message, or check with torch._assert_async(cond) / torch._check",
        )

    def finalize(self, cand, env):
        fullgraph = env.region is not None and env.region.fullgraph
        if cand.data.get("needs_capture") and not (fullgraph or env.flag("capture_scalar_outputs", False)):
            return None  # the `.item()` itself breaks first (TC101)
        return cand

    invalid = (
        Example(
            """
import torch

def check_positive(x, name="x"):
    assert (x > 0).all(), "{} must be positive".format(name)  # expect: TC102
    return x

@torch.compile
def log_of(x):
    return check_positive(x).log()
""",
            run="log_of(torch.rand(8) + 0.1)",
            title="assert with a computed message in a callee",
        ),
        Example(
            """
import torch

@torch.compile
def relu_or_neg(x: torch.Tensor) -> torch.Tensor:
    if x.sum() > 0:  # expect: TC102
        return x.relu()
    else:
        return -x
""",
            run="out = relu_or_neg(torch.randn(8))",
            fixed="""
import torch

@torch.compile
def relu_or_neg(x: torch.Tensor) -> torch.Tensor:
    return torch.where(x.sum() > 0, x.relu(), -x)  # expect: TC102
""",
        ),
        Example(
            """
import torch

@torch.compile
def clip_or_scale(x: torch.Tensor) -> torch.Tensor:
    if x.max() > 1:  # expect: TC102
        y = x.clamp(max=1)
    else:
        y = x * 2
    return y + 1
""",
            run="out = [clip_or_scale(torch.randn(8) * s) for s in (0.1, 10.0)]",
            title="a two-branch assignment",
            fixed="""
import torch

@torch.compile
def clip_or_scale(x: torch.Tensor) -> torch.Tensor:
    y = torch.where(x.max() > 1, x.clamp(max=1), x * 2)  # expect: TC102
    return y + 1
""",
        ),
        Example(
            """
import torch

@torch.compile
def settle(x):
    while (x > 1).any():  # expect: TC102
        x = x / 2
    return x
""",
            run="settle(torch.rand(8) * 8)",
            title="while on a tensor",
        ),
        Example(
            """
import torch

@torch.compile
def scale_if_positive(x, parts):
    if all(p.sum() > 0 for p in parts):  # expect: TC102
        x = x * 2
    return x
""",
            run="scale_if_positive(torch.randn(4), [torch.rand(3), torch.rand(3)])",
            title="all() / any() of tensors takes each one's truth value",
        ),
        Example(
            """
import torch
import torch.nn as nn

class LayerDropStack(nn.Module):
    def __init__(self, n=4, p=0.5):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(n)])
        self.p = p

    def forward(self, x):
        for layer in self.layers:
            if self.training and torch.rand([]) < self.p:  # expect: TC102
                continue
            x = layer(x)
        return x

model = torch.compile(LayerDropStack())
""",
            run="model(torch.randn(2, 8))",
            title="LayerDrop: inside the loop the whole forward runs eagerly",
        ),
        Example(
            """
import random
import torch

@torch.compile
def maybe_drop(x, p: float = 0.1):
    if random.uniform(0, 1) < p:  # expect: TC102
        return x * 0
    return x
""",
            run="maybe_drop(torch.randn(4))",
            title="a Python random draw is a run-time value too",
        ),
        Example(
            """
import torch

@torch.compile
def pick(x, y):
    return x if x.mean() > y.mean() else y  # expect: TC102
""",
            run="pick(torch.randn(4), torch.randn(4))",
            title="conditional expression",
        ),
        Example(
            """
import torch

@torch.compile
def clip_positive(x):
    s = x.sum().item()
    if s > 0:  # expect: TC102
        return x.clamp(min=0)
    return x
""",
            run="clip_positive(torch.randn(4))",
            settings={"dynamo": {"capture_scalar_outputs": True}},
            title="with scalar capture the break moves to the branch",
        ),
        Example(
            """
import torch
import torch.nn as nn

def first_after(t, t0):
    if t[0] > t0:  # expect: TC102
        return t[1:]
    return t

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return first_after(self.lin(x), 0.5)

model = torch.compile(Net())
""",
            run="model(torch.randn(2, 4))",
            title="an unannotated helper takes the types of its arguments at the compiled call site",
        ),
        Example(
            """
import torch

def flat_float(preds, target):
    preds = preds.view(-1)
    target = target.view(-1)
    preds = preds if preds.is_floating_point else preds.float()  # expect: TC102
    target = target if target.is_floating_point else target.float()
    return (preds - target).abs().sum()

@torch.compile
def mae(preds, target):
    return flat_float(preds * 2, target)
""",
            run="mae(torch.randn(4), torch.randn(4))",
            gb=("GB4841",),
            title="a tensor method without the call: the whole function runs eagerly (the second is shadowed)",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def f(x, mask=None):
    if mask is not None:
        x = x * mask
    if x.shape[0] > 1 and x.dim() == 2:
        x = x[1:]
    assert x.sum() > -1e9
    return x
""",
            run="f(torch.randn(4, 3))",
            title="shape checks, None checks and assert on a tensor do not break",
        ),
        Example(
            """
from collections.abc import Callable

import torch


def fall_back(user, default, func: Callable = lambda v: v and v > 0):
    return tuple(u if func(u) else d for d, u in zip(default, user))


@torch.compile
def pad(x, roi):
    return x.new_zeros(fall_back(roi, x.shape[1:]))
""",
            run="pad(torch.randn(2, 3, 4), (0, 2))",
            title="a parameter annotated `Callable` is not a module: calling it is not a tensor",
        ),
        Example(
            """
import torch

@torch.compile
def relu_or_neg(x):
    return torch.where(x.sum() > 0, x.relu(), -x)
""",
            run="relu_or_neg(torch.randn(8))",
        ),
        Example(
            """
import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)
        self.use_bias = True

    def forward(self, x):
        if self.training:
            x = self.drop(x)
        if self.use_bias:
            x = x + 1
        return x

block = torch.compile(Block())
""",
            run="block(torch.randn(4))",
            title="module flags are Python values",
        ),
        Example(
            """
import torch

def check_positive(x):
    assert (x > 0).all(), "x must be positive"
    return x

@torch.compile
def log_of(x):
    assert x.dim() == 1, "expected a vector, got {} dims".format(x.dim())
    return check_positive(x).log()
""",
            run="log_of(torch.rand(8) + 0.1)",
            title="assert on a tensor with a constant message; a computed one on a shape",
        ),
    )


def _pure_tensor(ctx, node: ast.expr) -> bool:
    if tensor_confidence(ctx.type_of(node)) != T.HIGH:
        return False
    for sub in ast.walk(node):
        if isinstance(sub, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda)):
            return False
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr.endswith("_"):
            return False  # in-place ops are side effects
    return True


def _where_fix_if(node: ast.If, ctx) -> Fix | None:
    """`if c: return a` + `else: return b` -> `return torch.where(c, a, b)`, and `if c: y = a` +
    `else: y = b` -> `y = torch.where(c, a, b)` (unsafe: both sides run).  A comment on the `if`
    line is kept after the new statement; None when any other line has one, or for an `elif`."""
    tname = torch_name(ctx)
    if tname is None or len(node.body) != 1 or len(node.orelse) != 1:
        return None
    a, b = node.body[0], node.orelse[0]
    if (
        isinstance(a, ast.Return)
        and isinstance(b, ast.Return)
        and a.value is not None
        and b.value is not None
    ):
        head, left, right = "return ", a.value, b.value
    elif (
        isinstance(a, ast.Assign)
        and isinstance(b, ast.Assign)
        and len(a.targets) == len(b.targets) == 1
        and isinstance(a.targets[0], ast.Name)
        and isinstance(b.targets[0], ast.Name)
        and a.targets[0].id == b.targets[0].id
    ):
        head, left, right = f"{a.targets[0].id} = ", a.value, b.value
    else:
        return None
    if not (
        tensor_confidence(ctx.type_of(node.test)) == T.HIGH
        and _pure_tensor(ctx, left)
        and _pure_tensor(ctx, right)
    ):
        return None
    loc = ctx.loc(node)
    first = ctx.index.line(node.lineno)
    if first[: loc.col].strip() or not first[loc.col :].startswith("if"):
        return None  # not a statement of its own, or an `elif`
    test = ctx.loc(node.test)
    if test.end_line != node.lineno:
        return None
    tail = first[test.end_col :].lstrip()
    comment = tail[1:].strip() if tail.startswith(":") else "?"
    if comment and not comment.startswith("#"):
        return None  # `if c: return a` on one line, or a parenthesised test
    rest = [ctx.index.line(n) for n in range(node.lineno + 1, (node.end_lineno or node.lineno) + 1)]
    if any("#" in line for line in rest):
        return None  # would drop comments
    text = f"{head}{tname}.where({ctx.segment(node.test)}, {ctx.segment(left)}, {ctx.segment(right)})"
    if comment:
        text += "  " + comment
    return Fix(
        "Replace the branch with torch.where (both sides are then computed)",
        (Edit(Span.of(loc.line, loc.col, loc.end_line, loc.end_col), text),),
        Applicability.UNSAFE,
    )


COND_HINT = (
    "Rewrite the branch with torch.cond(pred, true_fn, false_fn, operands): one side runs; "
    "both functions must return tensors of the same shape and dtype"
)


def _branch_fixes(node: ast.If, ctx) -> tuple[Fix, ...] | None:
    """The fixes for a tensor `if`/`else`: torch.where when it fits, and the torch.cond rewrite
    as a display-only suggestion (tclint does not write the branch functions)."""
    where = _where_fix_if(node, ctx)
    cond = (
        Fix(COND_HINT, (), Applicability.DISPLAY_ONLY)
        if node.orelse and not isinstance(node.orelse[0], ast.If)
        else None
    )
    found = tuple(f for f in (where, cond) if f is not None)
    return found or None


def _where_fix_ifexp(node: ast.IfExp, ctx) -> Fix | None:
    tname = torch_name(ctx)
    if tname is None:
        return None
    if not (
        tensor_confidence(ctx.type_of(node.test)) == T.HIGH
        and _pure_tensor(ctx, node.body)
        and _pure_tensor(ctx, node.orelse)
    ):
        return None
    loc = ctx.loc(node)
    text = f"{tname}.where({ctx.segment(node.test)}, {ctx.segment(node.body)}, {ctx.segment(node.orelse)})"
    return Fix(
        "Replace with torch.where (both sides are then computed)",
        (Edit(Span.of(loc.line, loc.col, loc.end_line, loc.end_col), text),),
        Applicability.UNSAFE,
    )
