import ast

from tclint.rules import types as T
from tclint.rules.model import Applicability, Fix, Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import short


class IntStateMutatedInCompiledCode(Rule):
    """
    ## What it does
    Flags compiled code that changes a Python `int` stored on the module (`self.step += 1`,
    `self.seen_tokens += x.shape[1]`) or in a module global (`global STEP; STEP += 1`).

    ## Why is this bad?
    Dynamo specialises on `int` attributes of `nn.Module`s and on `int` globals: the compiled
    graph is guarded by `self.step == 3`.  Changing the value inside the compiled function means
    the guard fails on the *next* call, every call: a recompile per call until the recompile limit
    (8 in torch 2.13), after which the function runs eagerly for good.  The p50 looks fine while
    the first steps and every new process pay full compile time.

    With `torch._dynamo.config.allow_unspec_int_on_nn_module = True` module attributes are treated
    as dynamic (2 compiles) and tclint does not flag them.

    ## Example
    ```python
    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.seen_tokens = 0

        def forward(self, x):
            self.seen_tokens += x.shape[1]
            return self.proj(x)
    ```

    ## Use instead
    Keep counters in a tensor buffer (its *value* is not guarded):
    ```python
    self.register_buffer("seen_tokens", torch.zeros((), dtype=torch.long))
    ...
    self.seen_tokens += x.shape[1]
    ```
    or count in the eager caller, or set `allow_unspec_int_on_nn_module`.

    ## Fix safety
    An unsafe fix (a libcst codemod, for `self.x += ...` on an int set in the class's own
    `__init__`): the assignment in `__init__` becomes
    `self.register_buffer("x", torch.zeros((), dtype=torch.long), persistent=False)`, other
    `self.x = <int>` in the class become `self.x.fill_(<int>)`, and `self.x += ...` then updates the
    buffer in place (one compile).  Unsafe because `self.x` is now a 0-d tensor: code that needs a
    Python int (`range(self.x)`, formatting, JSON) must call `int(...)`; the fix's message lists
    every other read of `self.x` in the class for review.  Non-persistent: the state dict is
    unchanged.

    ## References
    - https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html
    """

    code = "TC201"
    name = "int-state-mutated-in-compiled-code"
    summary = "Compiled code changes an int attribute or global: a recompile on every call"
    family = Family.RECOMPILE
    default_severity = Severity.WARNING
    fix_applicability = Applicability.UNSAFE

    def visit_AugAssign(self, node, ctx):
        self._check(node, node.target, ctx)

    def visit_Assign(self, node, ctx):
        if ctx.function is None:
            return
        for target in node.targets:
            if (
                isinstance(target, ast.Attribute)
                and ctx.is_self_attr(target) is not None
                or (isinstance(target, ast.Name) and target.id in ctx.scope.globals)
            ):
                if _mentions(node.value, target):
                    self._check(node, target, ctx)

    def _check(self, node, target, ctx):
        fn = ctx.function
        if fn is None or fn.name == "__init__":
            return
        if isinstance(target, ast.Attribute):
            path = ctx.is_self_attr(target)
            cls = ctx.cls
            if path is None or "." in path or cls is None:
                return
            spec = cls.attrs.get(path)
            if spec is None or spec.kind != "int":
                return
            guard = f"self.{path} == <value>"
            torch_name = ctx.local_name_for("torch")
            fix = None
            if isinstance(node, ast.AugAssign) and torch_name is not None:
                fix = Fix(
                    f"Keep `self.{path}` in a non-persistent 0-d buffer registered in `__init__`",
                    (),
                    Applicability.UNSAFE,
                    codemod=("int-counter-to-buffer", cls.name, path, torch_name),
                )
            ctx.report(
                self.code,
                node,
                f"`{short(ctx, node)}` changes an int attribute inside compiled code: Dynamo guards `{guard}`, so every call recompiles until the recompile limit, then runs eagerly",
                data={"self_attr": True, "name": path},
                fix=fix,
                help="keep the counter in a tensor buffer (register_buffer), count in the eager caller, or set allow_unspec_int_on_nn_module",
            )
        elif isinstance(target, ast.Name) and target.id in ctx.scope.globals:
            ty = ctx._a.module_scope.env.get(target.id)
            if ty is None or not (ty.kind == T.SCALAR and ty.dtype == "int"):
                return
            ctx.report(
                self.code,
                node,
                f"`{short(ctx, node)}` changes the int global `{target.id}` inside compiled code: guard `G['{target.id}'] == <value>` fails on every call, recompiling until the limit",
                data={"self_attr": False, "name": target.id},
                help="keep the counter in a tensor, or count in the eager caller",
            )

    def finalize(self, cand, env):
        if cand.data.get("self_attr") and env.flag("allow_unspec_int_on_nn_module", False):
            return None
        return cand

    invalid = (
        Example(
            """
import torch
import torch.nn as nn

class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.seen_tokens = 0

    def forward(self, x):
        self.seen_tokens += x.shape[0]  # expect: TC201
        return self.proj(x)

decoder = torch.compile(Decoder())
""",
            run="for _ in range(12):\n    out = decoder(torch.randn(2, 4))\nseen = int(decoder.seen_tokens)",
            compiles=8,
            fixed="""
import torch
import torch.nn as nn

class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.register_buffer("seen_tokens", torch.zeros((), dtype=torch.long), persistent=False)

    def forward(self, x):
        self.seen_tokens += x.shape[0]  # expect: TC201
        return self.proj(x)

decoder = torch.compile(Decoder())
""",
        ),
    )
    valid = (
        Example(
            """
import torch
import torch.nn as nn

class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.register_buffer("seen_tokens", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.seen_tokens += x.shape[0]
        return self.proj(x)

decoder = torch.compile(Decoder())
""",
            run="for _ in range(12):\n    decoder(torch.randn(2, 4))",
            compiles=1,
            title="a tensor buffer: one compile",
        ),
    )


def _mentions(value: ast.expr, target: ast.expr) -> bool:
    text = ast.dump(target, annotate_fields=False).replace("Store()", "Load()")
    return any(ast.dump(sub, annotate_fields=False) == text for sub in ast.walk(value))
