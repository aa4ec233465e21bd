import ast
import textwrap

from tclint.rules import types as T
from tclint.rules.facts import FrameEffect
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

    After a graph break the rest of the function is compiled as a frame of its own (a resume
    function).  When that rest does no tensor work (`self.steps += 1; return logits` after an
    `if t.mean() < 0.3:` or an `.item()`), Dynamo compiles no graph for it and runs it eagerly
    from then on: the counter guards nothing and nothing recompiles (measured, torch 2.13).  tclint
    then reports at low confidence; if the `if` body does tensor work, only the calls that take
    that branch recompile (medium confidence).

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
            after = _after_break(node, ctx)
            torch_name = ctx.local_name_for("torch")
            fix = None
            if isinstance(node, ast.AugAssign) and torch_name is not None:
                fix = Fix(
                    f"Keep `self.{path}` in a non-persistent 0-d buffer registered in `__init__`",
                    (),
                    Applicability.UNSAFE,
                    codemod=("int-counter-to-buffer", cls.name, path, torch_name),
                )
            message = f"`{short(ctx, node)}` changes an int attribute inside compiled code: Dynamo guards `{guard}`, so every call recompiles until the recompile limit, then runs eagerly"
            confidence = T.HIGH
            if after is not None:
                message, confidence = _after_break_message(short(ctx, node), guard, *after)
            ctx.report(
                self.code,
                node,
                message,
                data={"self_attr": True, "name": path},
                fix=fix,
                confidence=confidence,
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


def _after_break(node: ast.stmt, ctx) -> tuple[int, str | None] | None:  # type: ignore[no-untyped-def]
    """``(break line, branch line or None)`` when ``node`` is a statement of its function's own
    body that comes after a graph break reported earlier in that body (a resumable one, outside
    loops), and nothing from the breaking statement on does tensor work except, perhaps, the
    body of the ``if`` whose test breaks (then its line is the second item): the resume function
    Dynamo makes for the rest of the frame has no graph, so it is run eagerly and guards nothing.
    None otherwise (the counter is traced and recompiles every call)."""
    fn = ctx.function
    if fn is None or ctx.in_loop:
        return None
    breaks = sorted(
        c.loc.line
        for c in ctx.facts.candidates
        if c.func == fn.qualname
        and c.code.startswith("TC1")
        and c.loop_line is None
        and c.frame is FrameEffect.RESUMES
        and c.confidence < T.LOW
        and c.loc.line < node.lineno
    )
    if not breaks:
        return None
    lines = [ctx.index.line(i) for i in range(fn.loc.line, fn.loc.end_line + 1)]
    try:
        tree = ast.parse(textwrap.dedent("\n".join(lines)))
    except SyntaxError:
        return None
    if not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    offset = fn.loc.line - tree.body[0].lineno
    body = tree.body[0].body
    at = [i for i, st in enumerate(body) if st.lineno + offset == node.lineno]
    if not at:
        return None  # nested in a block: not the shape measured
    first = None
    for i, st in enumerate(body[: at[0]]):
        if any(st.lineno + offset <= line <= (st.end_lineno or st.lineno) + offset for line in breaks):
            first = i
    if first is None:
        return None
    stmt = body[first]
    rest = body[first + 1 :]
    if not all(_no_tensor_work(st) for st in rest):
        return None
    line = stmt.lineno + offset
    if isinstance(stmt, ast.If):
        test_lines = range(stmt.test.lineno + offset, (stmt.test.end_lineno or stmt.test.lineno) + offset + 1)
        if not any(b in test_lines for b in breaks):
            return None  # a break inside the branch: another resume point
        inner = [*stmt.body, *stmt.orelse]
        if all(_no_tensor_work(st) for st in inner):
            return line, None
        return line, str(line)
    if isinstance(stmt, (ast.Assign, ast.Expr, ast.AnnAssign)):
        return line, None  # `v = t.sum().item()`: the break is the statement's own last step
    return None


def _after_break_message(text: str, guard: str, line: int, branch: str | None) -> tuple[str, int]:
    if branch is None:
        return (
            f"`{text}` changes an int attribute, but after the graph break at line {line} the rest of the function does no tensor work: "
            f"Dynamo compiles no graph for it and runs it eagerly, so `{guard}` is never guarded (measured: no recompile); "
            "a tensor operation added after the break makes every call recompile",
            T.LOW,
        )
    return (
        f"`{text}` changes an int attribute after the graph break at line {line}: Dynamo compiles the rest of the function as a frame of its own "
        f"guarded by `{guard}`, so every call that takes the `if` at line {branch} (whose body does tensor work) recompiles until the recompile limit; "
        "the calls that skip it run the rest eagerly",
        T.MEDIUM,
    )


def _no_tensor_work(stmt: ast.stmt) -> bool:
    """A statement with nothing Dynamo would put in a graph: ``self.n += 1``, ``self.flag = True``,
    ``return h`` (names, attributes, constants; no call, operator or subscript beyond ``+=``)."""
    if isinstance(stmt, ast.AugAssign):
        return _no_tensor_work_expr(stmt.value) and isinstance(stmt.target, (ast.Name, ast.Attribute))
    if isinstance(stmt, ast.Assign):
        return _no_tensor_work_expr(stmt.value) and all(
            isinstance(t, (ast.Name, ast.Attribute)) for t in stmt.targets
        )
    if isinstance(stmt, ast.Return):
        return stmt.value is None or _no_tensor_work_expr(stmt.value)
    return isinstance(stmt, ast.Pass)


def _no_tensor_work_expr(expr: ast.expr) -> bool:
    return all(
        isinstance(n, (ast.Name, ast.Attribute, ast.Constant, ast.Tuple, ast.Load, ast.expr_context))
        for n in ast.walk(expr)
    )


def _mentions(value: ast.expr, target: ast.expr) -> bool:
    """Whether ``value`` reads ``target`` (same dump, the target's Store read as Load).  Only the
    sub-nodes of the target's own type (and name / attribute) can dump the same: the others are
    not dumped."""
    kind = type(target)
    field = "id" if kind is ast.Name else "attr" if kind is ast.Attribute else None
    key = getattr(target, field) if field else None
    text = None
    for sub in ast.walk(value):
        if type(sub) is not kind or (field is not None and getattr(sub, field) != key):
            continue
        if text is None:
            text = ast.dump(target, annotate_fields=False).replace("Store()", "Load()")
        if ast.dump(sub, annotate_fields=False) == text:
            return True
    return False
