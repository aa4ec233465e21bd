import ast

from tclint.rules import types as T
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import short

GROW = frozenset({"append", "extend", "insert", "add", "appendleft", "setdefault", "update"})


class GrowingContainer(Rule):
    """
    ## What it does
    Flags compiled code that grows Python state kept across calls: `self.cache.append(y)`, a
    module-level or closure list appended to, a dict attribute filled with new keys
    (`self.cache[layer_idx] = k`), and a registered buffer re-assigned with `torch.cat` of itself.
    Appending to a *local* list is fine and not flagged.

    ## Why is this bad?
    Nothing breaks, so `explain()` shows a clean graph, but Dynamo guards the container's length
    (`len(self.cache) == 4`) or the buffer's size.  Each call changes it, so each call recompiles,
    until the recompile limit (8); after that the function runs eagerly for good.  Growing KV
    caches and metric lists are the usual source.

    ## Example
    ```python
    class Tracker(nn.Module):
        def __init__(self):
            super().__init__()
            self.history = []

        def forward(self, x):
            y = x.relu()
            self.history.append(y.mean())
            return y
    ```

    ## Use instead
    Return the values and accumulate them in the eager caller; for caches, preallocate a tensor
    of the maximum size and write into it with an index (static shapes), or keep the cache
    outside the compiled region.

    ## Fix safety
    No automatic fix.

    ## References
    - https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html
    """

    code = "TC202"
    name = "growing-container-in-compiled-code"
    summary = "Compiled code grows a list/dict/buffer kept across calls: a recompile on every call"
    family = Family.RECOMPILE
    default_severity = Severity.WARNING
    METHODS = GROW

    def check_call(self, node, ctx, qualified, method):
        if qualified is not None or not isinstance(node.func, ast.Attribute):
            return
        owner = node.func.value
        what = self._persistent(owner, ctx)
        if what is None:
            return
        ctx.report(
            self.code,
            node,
            f"`{short(ctx, node)}` grows {what} kept across calls: Dynamo guards its length (`len({short(ctx, owner, 30)}) == <n>`), so every call recompiles until the recompile limit",
            help="return the value and accumulate it in the eager caller",
        )

    def visit_Assign(self, node, ctx):
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                what = self._persistent(target.value, ctx, dict_only=True)
                if what is not None and not _fixed_key(target.slice, ctx):
                    ctx.report(
                        self.code,
                        node,
                        f"`{short(ctx, target)} = ...` adds keys to {what} kept across calls: each new key changes the guarded length and recompiles",
                        confidence=T.MEDIUM,
                        help="use a fixed set of keys, or keep the cache outside the compiled region",
                    )
            elif isinstance(target, ast.Attribute):
                path = ctx.is_self_attr(target)
                cls = ctx.cls
                if path is None or cls is None or "." in path:
                    continue
                spec = cls.attrs.get(path)
                if (
                    spec is None
                    or spec.kind != "tensor"
                    or "buffer" not in spec.refs
                    or not isinstance(node.value, ast.Call)
                ):
                    continue
                if _cat_of_itself(node.value, target, ctx):
                    ctx.report(
                        self.code,
                        node,
                        f"`{short(ctx, node)}` grows the registered buffer `{path}`: its size is guarded, so every call recompiles until the recompile limit",
                        help="preallocate the buffer at its maximum size and write into it with index_copy_ / slicing",
                    )

    def _persistent(self, owner, ctx, dict_only: bool = False):
        path = ctx.is_self_attr(owner) if isinstance(owner, ast.Attribute) else None
        if path is not None:
            cls = ctx.cls
            if cls is None or "." in path:
                return None
            spec = cls.attrs.get(path)
            if spec is None:
                return None
            if spec.kind == "listattr" and not dict_only:
                return f"the list `self.{path}`"
            if spec.kind == "dictattr":
                return f"the dict `self.{path}`"
            return None
        if isinstance(owner, ast.Name):
            ty = ctx.type_of(owner)
            if ty.kind != T.CONTAINER:
                return None
            if ctx.is_global_name(owner.id):
                return f"the global `{owner.id}`"
            if ctx.is_closure_name(owner.id):
                return f"the closure variable `{owner.id}`"
        return None

    invalid = (
        Example(
            """
import torch
import torch.nn as nn

class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.history = []

    def forward(self, x):
        y = x.relu()
        self.history.append(y.mean())  # expect: TC202
        return y

tracker = torch.compile(Tracker())
""",
            run="for _ in range(10):\n    tracker(torch.randn(4))",
            compiles=8,
        ),
        Example(
            """
import torch

SEEN = []

@torch.compile
def remember(x):
    SEEN.append(x.sum())  # expect: TC202
    return x * 2
""",
            run="for _ in range(10):\n    remember(torch.randn(4))",
            compiles=8,
            title="a global list",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def collect(x):
    parts = []
    for i in range(3):
        parts.append(x * i)
    return torch.stack(parts)
""",
            run="for _ in range(10):\n    collect(torch.randn(4))",
            compiles=1,
            title="a local list",
        ),
    )


def _fixed_key(key: ast.expr, ctx) -> bool:
    """A key that is the same on every call of this function: a constant, or a variable of an
    enclosing function (``make_hook(name)`` returning a hook that stores ``stats[name] = ...``:
    each hook adds its one key once; measured, the dict does not grow after the first step)."""
    if isinstance(key, ast.Constant):
        return True
    return isinstance(key, ast.Name) and ctx.is_closure_name(key.id) and not ctx.is_global_name(key.id)


def _cat_of_itself(value: ast.expr, target: ast.Attribute, ctx) -> bool:
    if not isinstance(value, ast.Call):
        return False
    q = ctx.qualify(value.func)
    if q not in (
        "torch.cat",
        "torch.concat",
        "torch.concatenate",
        "torch.stack",
        "torch.hstack",
        "torch.vstack",
    ):
        return False
    want = ast.dump(target, annotate_fields=False).replace("Store()", "Load()")
    return any(ast.dump(sub, annotate_fields=False) == want for sub in ast.walk(value))
