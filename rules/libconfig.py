"""Config-aware library sites (issue 21): which branches of an installed model the user's own code selects.

Many library breaks sit behind a branch that depends on how the user built and calls the model:
``if labels is not None:`` (the loss), ``if self.gradient_checkpointing and self.training:``,
``if use_cache:``, ``if self.config.X:``.  Where the user's script shows the values -- the keyword
arguments of the calls of the compiled model, the mode set at the compile site (``.eval()`` /
``.train()``), the keyword arguments of the config the constructor is given (``BertConfig(...)``,
also through a local variable or a helper of the same file returning it), the config class's
declared defaults (its class body and bases, read from the installed source), and
``gradient_checkpointing_enable()`` -- :func:`judge` evaluates the conditions a library site sits
behind, along its region chain (the site's own statement and each library call leading to it):

* ``False`` for a branch the user's configuration does not take (the site is pruned);
* else the names of the values a condition needs that tclint could not see (a finding that
  depends on them is listed as such and never counted hot);
* else nothing: the site is on the path the user's code takes.

Nothing here runs code: the user's file and the library's files are parsed, never imported.
The evaluation is three-valued and deliberately small (names, attributes, ``not``/``and``/``or``,
``is None``, comparisons with literals); anything else is "could not see".
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from typing import Any

GIVEN = "<given>"  # a value the user passes whose content tclint does not know (not None)
_TREES: dict[str, tuple[tuple[int, int], ast.Module | None]] = {}


class Unseen(Exception):
    """A value the condition needs that tclint could not see (its name is the message)."""


@dataclass
class UserSide:
    """What the user's script shows about one compile site."""

    training: bool | None = True  # None: called in both modes
    kwargs: dict[str, str] = field(default_factory=dict)  # forward parameter -> "given" | "absent" | "both"
    calls_seen: bool = (
        False  # a call of the compiled model was found (else the forward's arguments are unseen)
    )
    extra_kwargs: bool = (
        False  # some call passes a keyword the forward does not name (its **kwargs are not empty)
    )
    config: dict[str, Any] = field(default_factory=dict)  # config keyword -> literal (or GIVEN)
    config_class: str | None = None  # project class key of that config
    config_seen: bool = False
    gradient_checkpointing: bool = False
    model_class: str | None = None  # the class name of the constructor call that built the model


# every path parse() was asked for: what a run's result read (libfollow.dependencies); and the
# sets of the judgements being recorded (libjudged)
PARSED: set[str] = set()
RECORDERS: list[set[str]] = []


def parse(path: str) -> ast.Module | None:
    """The module tree of a file, memoised while its size and mtime are unchanged."""
    PARSED.add(path)
    for seen in RECORDERS:
        seen.add(path)
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (st.st_size, st.st_mtime_ns)
    hit = _TREES.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            tree: ast.Module | None = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        tree = None
    _TREES[path] = (stamp, tree)
    return tree


_PARENTS: dict[int, tuple[ast.AST, dict[int, ast.AST]]] = {}  # id(tree or function) -> (it, child -> parent)
_FUNCTIONS: dict[int, tuple[ast.Module, list[ast.FunctionDef | ast.AsyncFunctionDef]]] = {}
_GUARDS: dict[tuple[str, int], tuple[Any, ...]] = {}
_SELF_CONFIG: dict[int, tuple[ast.AST, dict[str, str]]] = {}


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    """Child id -> parent node, memoised per tree (a library file is asked about many sites)."""
    hit = _PARENTS.get(id(tree))
    if hit is not None and hit[0] is tree:
        return hit[1]
    out: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            out[id(child)] = node
    _PARENTS[id(tree)] = (tree, out)
    return out


def _functions(body: list[ast.stmt]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function defined in these statements, nested ones too, visiting statements only (a
    module's expressions are most of its nodes and hold no ``def``)."""
    out: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    todo = list(body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(stmt)
        for name in ("body", "orelse", "finalbody"):
            todo.extend(s for s in getattr(stmt, name, ()) if isinstance(s, ast.stmt))
        for handler in getattr(stmt, "handlers", ()):
            todo.extend(handler.body)
        for case in getattr(stmt, "cases", ()):
            todo.extend(case.body)
    return out


def _function_at(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    hit = _FUNCTIONS.get(id(tree))
    if hit is None or hit[0] is not tree:
        hit = _FUNCTIONS[id(tree)] = (tree, _functions(tree.body))
    best = None
    for node in hit[1]:
        if node.lineno <= line <= (node.end_lineno or node.lineno) and (
            best is None or node.lineno > best.lineno
        ):
            best = node
    return best


def _statement_at(fn: ast.AST, line: int) -> ast.stmt | None:
    best = None
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.stmt)
            and node is not fn
            and node.lineno <= line <= (node.end_lineno or node.lineno)
        ):
            if best is None or node.lineno >= best.lineno:
                best = node
    return best


def guards(
    path: str, line: int
) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, list[tuple[ast.expr, bool]]]:
    """(the function holding ``path:line``, the conditions that statement sits behind in it:
    (test, the value it must have)), innermost last."""
    tree = parse(path)
    if tree is None:
        return None, []
    memo = _GUARDS.get((path, line))
    if memo is not None and memo[0] is tree:
        return memo[1], memo[2]
    fn, out = _guards(tree, line)
    _GUARDS[(path, line)] = (tree, fn, out)
    return fn, out


def _guards(
    tree: ast.Module, line: int
) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, list[tuple[ast.expr, bool]]]:
    fn = _function_at(tree, line)
    if fn is None:
        return None, []
    stmt = _statement_at(fn, line)
    if stmt is None:
        return fn, []
    parents = _parents(fn)
    out: list[tuple[ast.expr, bool]] = []
    node: ast.AST = stmt
    while node is not fn:
        parent = parents.get(id(node))
        if parent is None:
            break
        if isinstance(parent, ast.If) and node is not parent.test:
            out.append((parent.test, node in parent.body))
        out.extend(reversed(_early_exits(parent, node)))
        node = parent
    out.reverse()
    return fn, out


def _early_exits(parent: ast.AST, node: ast.AST) -> list[tuple[ast.expr, bool]]:
    """The conditions of the ``if`` statements before ``node`` in its block that leave the function
    (a branch ending in ``return`` or ``raise``): ``if labels is None: return logits`` above a site
    means the site runs only when ``labels is None`` is False.  (test, the value it must have to go
    on), in order."""
    out: list[tuple[ast.expr, bool]] = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(parent, name, None)
        if not isinstance(block, list) or not any(s is node for s in block):
            continue
        for stmt in block:
            if stmt is node:
                break
            if isinstance(stmt, ast.If):
                leaves_body, leaves_else = _leaves(stmt.body), bool(stmt.orelse) and _leaves(stmt.orelse)
                if leaves_body != leaves_else:
                    out.append((stmt.test, leaves_else))
    return out


def _raise_guard(test: ast.expr, wanted: bool, fn: ast.AST) -> bool:
    """Is the site behind this condition only because the other branch raises (``if not
    (boxes >= 0).all(): raise ValueError(...)`` above it, or around it with the site in ``else``)?"""
    parent = _parents(fn).get(id(test))
    if not isinstance(parent, ast.If) or parent.test is not test:
        return False
    other = parent.orelse if wanted else parent.body
    return bool(other) and isinstance(other[-1], ast.Raise)


def _leaves(block: list[ast.stmt]) -> bool:
    """Does this block always end the function (its last statement a ``return`` or ``raise``)?"""
    return bool(block) and isinstance(block[-1], (ast.Return, ast.Raise))


def in_handler(path: str, line: int) -> bool:
    """Is the statement at ``path:line`` inside an ``except`` clause of its function (it runs only
    when something raised, not at every call)?"""
    fn, _conds = guards(path, line)
    if fn is None:
        return False
    hit = _HANDLERS.get(id(fn))
    if hit is None or hit[0] is not fn:
        spans = [
            (n.lineno, n.end_lineno or n.lineno) for n in ast.walk(fn) if isinstance(n, ast.ExceptHandler)
        ]
        hit = _HANDLERS[id(fn)] = (fn, spans)
    return any(start <= line <= end for start, end in hit[1])


_HANDLERS: dict[int, tuple[ast.AST, list[tuple[int, int]]]] = {}  # id(function) -> (it, except-clause spans)


# --------------------------------------------------------------------------------------------
# the user's side
# --------------------------------------------------------------------------------------------


def user_side(project: Any, path: str, line: int, col: int, root_params: list[str]) -> UserSide:
    """What the user's file shows about the compile call at ``path:line:col``."""
    side = UserSide()
    tree = parse(path)
    if tree is None:
        return side
    calls = [
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == line and n.col_offset <= col
    ]
    if not calls:
        return side
    call = max(calls, key=lambda n: n.col_offset)  # the innermost call starting at or before the site
    parents = _parents(tree)
    scope: ast.AST = call
    while scope is not tree and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        scope = parents.get(id(scope), tree)
    compiled = (
        call.args[0] if call.args else (call.func.value if isinstance(call.func, ast.Attribute) else None)
    )
    assign = parents.get(id(call))
    names = {t.id for t in getattr(assign, "targets", []) if isinstance(t, ast.Name)}
    model_names = set(names)
    base = compiled
    while isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute):  # Model(cfg).eval().to(dev)
        base = base.func.value
    if isinstance(base, ast.Name):
        model_names.add(base.id)
    modes = _modes(scope, model_names, compiled)
    side.training = True if not modes else (modes.pop() if len(modes) == 1 else None)
    side.gradient_checkpointing = any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "gradient_checkpointing_enable"
        for n in ast.walk(scope)
    )
    _call_kwargs(side, scope, names or model_names, root_params)
    ctor = _constructor(scope, tree, base, call.lineno)
    if ctor is not None:
        side.model_class = (_dotted(ctor.func) or "").rpartition(".")[2] or None
        _config_of(project, path, side, ctor, scope, tree)
    return side


def _modes(scope: ast.AST, model_names: set[str], compiled: ast.expr | None) -> set[bool]:
    """The modes set on the compiled model in the compile site's function: ``.eval()``/``.train()`` in
    the compiled expression, on the model's names, or in the value assigned to one of them."""
    modes: set[bool] = set()
    assigned = [
        n.value
        for n in ast.walk(scope)
        if isinstance(n, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id in model_names for t in n.targets)
    ]
    for n in ast.walk(scope):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("eval", "train"):
            target = n.func.value
            while isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute):
                target = target.func.value
            inside = any(n is m for e in (compiled, *assigned) if e is not None for m in ast.walk(e))
            if inside or (isinstance(target, ast.Name) and target.id in model_names):
                flag = n.func.attr == "train" and not (
                    n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value is False
                )
                modes.add(flag)
    return modes


def _call_kwargs(side: UserSide, scope: ast.AST, names: set[str], root_params: list[str]) -> None:
    seen: list[set[str]] = []
    for n in ast.walk(scope):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names:
            if any(k.arg is None for k in n.keywords) or any(isinstance(a, ast.Starred) for a in n.args):
                return  # **kwargs / *args: the arguments are not visible
            given = {k.arg for k in n.keywords if k.arg}
            side.extra_kwargs |= bool(given - set(root_params))
            given |= set(root_params[: len(n.args)])
            seen.append(given)
    if not seen:
        return
    side.calls_seen = True
    for p in root_params:
        count = sum(1 for g in seen if p in g)
        side.kwargs[p] = "given" if count == len(seen) else "absent" if count == 0 else "both"


def _constructor(scope: ast.AST, tree: ast.Module, base: ast.expr | None, line: int) -> ast.Call | None:
    """The call that built the compiled model (``Model(config)``), through one local name."""
    if isinstance(base, ast.Call):
        return base
    if isinstance(base, ast.Name):
        return _assigned_call(scope, base.id, line)
    return None


def _assigned_call(scope: ast.AST, name: str, before: int) -> ast.Call | None:
    found = None
    for n in ast.walk(scope):
        if (
            isinstance(n, ast.Assign)
            and n.lineno <= before
            and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
        ):
            value = n.value
            while (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute)
                and value.func.attr in ("eval", "train", "to", "cuda")
            ):
                value = value.func.value
            if isinstance(value, ast.Call) and (found is None or n.lineno > found[0]):
                found = (n.lineno, value)
    return found[1] if found else None


def _config_of(
    project: Any, path: str, side: UserSide, ctor: ast.Call, scope: ast.AST, tree: ast.Module
) -> None:
    arg = ctor.args[0] if ctor.args else next((k.value for k in ctor.keywords if k.arg == "config"), None)
    call = None
    if isinstance(arg, ast.Call):
        call = arg
    elif isinstance(arg, ast.Name):
        call = _assigned_call(scope, arg.id, ctor.lineno)
    if call is not None and isinstance(call.func, ast.Name) and not call.args and not call.keywords:
        helper = next(
            (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == call.func.id), None
        )
        returned = (
            [n.value for n in ast.walk(helper) if isinstance(n, ast.Return)] if helper is not None else []
        )
        call = returned[-1] if returned and isinstance(returned[-1], ast.Call) else call
    if call is None or not isinstance(call.func, (ast.Name, ast.Attribute)):
        return
    for k in call.keywords:
        if k.arg:
            try:
                side.config[k.arg] = ast.literal_eval(k.value)
            except ValueError:
                side.config[k.arg] = GIVEN
    ff = next((f for f in project.files.values() if os.path.abspath(f.path) == os.path.abspath(path)), None)
    name = _dotted(call.func)
    if ff is None or name is None:
        return
    head, _, rest = name.partition(".")
    ref = ff.aliases.get(head, f"{ff.module}.{head}" if ff.module else head) + (f".{rest}" if rest else "")
    side.config_class = ref  # read from the installed source when asked (no region needs its facts)
    side.config_seen = not any(k.arg is None for k in call.keywords) and not call.args


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def config_default(project: Any, cls_ref: str, attr: str) -> Any:
    """A config class's declared default for ``attr`` (class body, dataclass field or ``__init__``
    parameter, along its bases), the class found by its qualified name in the installed sources;
    raises :class:`Unseen` when none is written as a literal."""
    todo = [cls_ref]
    seen: set[str] = set()
    while todo:
        ref = todo.pop(0)
        if ref in seen or len(seen) > 12:
            continue
        seen.add(ref)
        found = _find_class(project, ref)
        if found is None:
            continue
        node, module, is_package = found
        value = _declared(node, attr)
        if value is not _NOTHING:
            return value
        todo += [_qualify(b, module, is_package, found_tree=_MODULE_TREES.get(module)) for b in node.bases]
    raise Unseen(f"config.{attr}")


_NOTHING = object()
_MODULE_TREES: dict[str, ast.Module] = {}


def _declared(node: ast.ClassDef, attr: str) -> Any:
    for stmt in node.body:
        target = (
            stmt.target
            if isinstance(stmt, ast.AnnAssign)
            else (stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None)
        )
        value = getattr(stmt, "value", None)  # an Assign or AnnAssign
        if isinstance(target, ast.Name) and target.id == attr and value is not None:
            return _literal(value, attr)
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
            args = stmt.args.args[len(stmt.args.args) - len(stmt.args.defaults) :]
            pairs = [
                *zip(args, stmt.args.defaults, strict=True),
                *(
                    (a, d)
                    for a, d in zip(stmt.args.kwonlyargs, stmt.args.kw_defaults, strict=True)
                    if d is not None
                ),
            ]
            for a, d in pairs:
                if a.arg == attr:
                    return _literal(d, attr)
    return _NOTHING


def _literal(node: ast.expr, attr: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError as exc:
        raise Unseen(f"config.{attr}") from exc


def _find_class(project: Any, ref: str, depth: int = 0) -> tuple[ast.ClassDef, str, bool] | None:
    """(the class statement, its module, is that a package) for a qualified class name, following
    imports and star re-exports of the installed sources (nothing is imported)."""
    from tclint.rules.libfollow import Environment, StarExports

    env = project.memo.get("libconfig-env")
    if env is None:
        env = project.memo["libconfig-env"] = Environment.for_python(
            (project.settings.probe or {}).get("python")
        )
    module, _, name = ref.rpartition(".")
    located = env.locate(module) if module and depth < 8 else None
    tree = parse(located[0]) if located is not None else None
    if tree is None or located is None:
        return None
    _MODULE_TREES[module] = tree
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == name:
            return stmt, module, located[1]
    target = _qualify(ast.Name(id=name), module, located[1], tree)
    if target != f"{module}.{name}":
        return _find_class(project, target, depth + 1)
    stars = project.memo.setdefault("libconfig-stars", StarExports(env))
    source = stars.source_of(module, name)
    return _find_class(project, f"{source}.{name}", depth + 1) if source else None


def _qualify(node: ast.expr, module: str, is_package: bool, found_tree: ast.Module | None = None) -> str:
    """A base class or name as a qualified reference, through the module's imports."""
    from tclint.rules.names import resolve_relative

    text = _dotted(node) or ""
    head, _, rest = text.partition(".")
    for stmt in ast.walk(found_tree) if found_tree is not None else ():
        if isinstance(stmt, ast.ImportFrom):
            for a in stmt.names:
                if (a.asname or a.name) == head and a.name != "*":
                    base = resolve_relative(module, is_package, stmt.level or 0, stmt.module)
                    return f"{base}.{a.name}" + (f".{rest}" if rest else "")
        elif isinstance(stmt, ast.Import):
            for a in stmt.names:
                if (a.asname or a.name.split(".", 1)[0]) == head:
                    return (a.name if a.asname else head) + (f".{rest}" if rest else "")
    return f"{module}.{text}"


# --------------------------------------------------------------------------------------------
# evaluation
# --------------------------------------------------------------------------------------------


@dataclass
class Context:
    """The values one library function's conditions can be judged on."""

    project: Any
    side: UserSide
    fn: ast.FunctionDef | ast.AsyncFunctionDef
    is_root: bool  # the compiled function itself: its parameters are the user's call arguments
    self_config: dict[str, str] = field(default_factory=dict)  # self.attr -> config attr (from __init__)
    # a callee's parameters: the argument expressions of the call on the chain, judged in the caller's
    # context (a parameter the call does not pass has its default); None: the call is not visible
    bindings: dict[str, tuple[ast.expr, Context]] | None = None
    kwargs_empty: bool = False  # its ``**kwargs`` parameter is known to hold nothing
    at_line: int = 1 << 30  # the line being judged: a parameter bound again above it is not the argument
    self_is_model: bool = False  # its ``self`` is the compiled model (the root, or reached by self.f())
    path: str = ""  # the file holding ``fn``
    depth: int = 0  # locals followed to their one assignment so far (bounded)


def judge(
    project: Any, side: UserSide, steps: list[tuple[str, int, bool]]
) -> tuple[bool, set[str], list[str], set[str], bool]:
    """(taken, the values it depends on that tclint could not see, why it is not taken -- or, when it
    is, the config flags that would skip it: ``["check_finite=False"]`` --, which of the unseen
    values the function derives from settings (:func:`derived_from_settings`), and whether the site
    runs at every call of the compiled model: every condition on its chain known and the same at
    all of the user's calls, no statement on it in an ``except`` clause) for a site reached through
    ``steps``: (path, line, is the compiled root function) per function on its chain, from the
    site's own statement up to the compiled function."""
    every_call = bool(steps) and steps[-1][2] and not any(in_handler(p, ln) for p, ln, _r in steps)
    unseen: set[str] = set()
    settings: set[str] = set()
    flags: list[str] = []  # taken because of a config flag: the value that would skip the site
    contexts: list[tuple[str, Context, list[tuple[ast.expr, bool]], int]] = []
    caller: tuple[Context, int] | None = (
        None  # the context of the function calling the next one, the call's line
    )
    for path, line, is_root in reversed(steps):  # from the compiled function down to the site
        fn, conds = guards(path, line)
        if fn is None:
            caller = None
            every_call = False
            continue
        ctx = Context(project, side, fn, is_root, _self_config(path, fn), at_line=line, path=path)
        if is_root:
            ctx.kwargs_empty = side.calls_seen and not side.extra_kwargs
            ctx.self_is_model = True
        elif caller is not None:
            ctx.bindings, ctx.kwargs_empty = _bind(caller[0], caller[1], fn)
            ctx.self_is_model = caller[0].self_is_model and _self_call(caller[0].fn, caller[1], fn.name)
        contexts.append((path, ctx, conds, line))
        caller = (ctx, line)
    for path, ctx, conds, _line in reversed(contexts):
        for test, wanted in conds:
            ctx.at_line = test.lineno
            try:
                value = _truth(_eval(test, ctx))
            except Unseen as exc:
                if _raise_guard(test, wanted, ctx.fn):
                    continue  # `if bad: raise ...`: a step that raises is no step; on at every one
                unseen.add(str(exc))
                if derived_from_settings(test, ctx):
                    settings.add(str(exc))
                continue
            if value is not None and value != wanted:
                text = ast.unparse(test)
                return (
                    False,
                    set(),
                    [f"`{text}` is {value} here ({os.path.basename(path)}:{test.lineno})"],
                    set(),
                    False,
                )
            if value is None:  # true at some of the user's calls only
                every_call = False
            flag = _config_flag(test, ctx)
            if value is not None and flag is not None:
                flags.append(f"{flag}={not (value if not isinstance(test, ast.UnaryOp) else not value)!r}")
    return True, unseen, flags, settings, every_call and not unseen


def derived_from_settings(test: ast.expr, ctx: Context, depth: int = 4) -> bool:
    """Does a condition tclint could not evaluate read the model's settings, directly or through the
    function's own local variables: a config attribute (``self.config.X``, ``config.X``,
    ``getattr(self.config, ...)``, an attribute ``__init__`` stores from the config) or the
    function's ``**kwargs``?  transformers' output capture computes ``collected_outputs`` from
    ``kwargs.get("output_x", getattr(self.config, "output_x", False))`` and branches on
    ``len(collected_outputs) > 0``: whether that branch runs is the user's setting, not a property of
    the inputs, so a site behind it may be off for this user (never hot).  Locals are followed
    through their assignments above the condition (``depth`` levels); a parameter is an input."""
    kwarg = ctx.fn.args.kwarg.arg if ctx.fn.args.kwarg is not None else None
    params = {a.arg for a in (*ctx.fn.args.posonlyargs, *ctx.fn.args.args, *ctx.fn.args.kwonlyargs)}
    seen: set[str] = set()
    todo: list[tuple[ast.AST, int]] = [(test, depth)]
    while todo:
        node, left = todo.pop()
        for n in ast.walk(node):
            if isinstance(n, ast.Attribute):
                text = _dotted(n) or ""
                if text.startswith(("self.config.", "config.")) or text == "self.config":
                    return True
                if text.startswith("self.") and text[5:].split(".", 1)[0] in ctx.self_config:
                    return True
            if not isinstance(n, ast.Name) or not isinstance(n.ctx, ast.Load):
                continue
            if n.id in (kwarg, "config"):
                return True
            if n.id in params or n.id in seen or left <= 0:
                continue
            seen.add(n.id)
            todo.extend((value, left - 1) for value in _local_values(ctx.fn, n.id, test.lineno))
    return False


def _local_values(fn: ast.AST, name: str, before: int) -> list[ast.expr]:
    """The expressions a local variable is assigned above ``before`` in the function (plain and
    annotated assignments; augmented ones add their operand)."""
    out: list[ast.expr] = []
    for n in ast.walk(fn):
        if (
            not isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            or n.lineno >= before
            or n.value is None
        ):
            continue
        targets = n.targets if isinstance(n, ast.Assign) else [n.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            out.append(n.value)
    return out


def _config_flag(test: ast.expr, ctx: Context) -> str | None:
    """The config attribute a condition is (``self.config.X``, ``not self.X`` with ``self.X =
    config.X``): a flag of the library's configuration that selects the branch."""
    node = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    text = _dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    if text is None:
        return None
    if text.startswith(("self.config.", "config.")):
        return text.split("config.", 1)[1]
    if text.startswith("self.") and text[5:] in ctx.self_config:
        return ctx.self_config[text[5:]]
    return None


def _truth(value: Any) -> bool | None:
    if value is GIVEN:
        raise Unseen("an argument's value")
    if value is BOTH:
        return None
    return bool(value)


BOTH = object()  # a condition true at some of the user's calls and false at others


def _self_config(path: str, fn: ast.AST) -> dict[str, str]:
    """``self.attr = config.X`` (or ``self.config.X``) in the ``__init__`` of the method's class."""
    hit = _SELF_CONFIG.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    tree = parse(path)
    found = _self_config_of(tree, fn) if tree is not None else {}
    _SELF_CONFIG[id(fn)] = (fn, found)
    return found


def _self_config_of(tree: ast.Module, fn: ast.AST) -> dict[str, str]:
    for cls in tree.body:  # a method of a module-level class (nested classes: no config map)
        if isinstance(cls, ast.ClassDef) and fn in cls.body:
            init = next(
                (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
            )
            out = {}
            for n in ast.walk(init) if init is not None else ():
                if (
                    isinstance(n, ast.Assign)
                    and len(n.targets) == 1
                    and isinstance(n.targets[0], ast.Attribute)
                    and isinstance(n.targets[0].value, ast.Name)
                    and n.targets[0].value.id == "self"
                ):
                    src = n.value
                    if isinstance(src, ast.Attribute) and _dotted(src.value) in ("config", "self.config"):
                        out[n.targets[0].attr] = src.attr
            return out
    return {}


def _eval(node: ast.expr, ctx: Context) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        value = _eval(node.operand, ctx)
        return value if value is BOTH else not _truth(value)
    if isinstance(node, ast.BoolOp):
        return _bool_op(node, ctx)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return _compare(node, ctx)
    if isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
        return _container(node)
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        name = _dotted(node.func) or ""
        if name in _UNDER_COMPILE:
            return _UNDER_COMPILE[name]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return _dict_get(node, ctx)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
        return _getattr(node, ctx)
    text = _dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    if text is None:
        raise Unseen(ast.unparse(node))
    return _value(text, ctx)


def _compare(node: ast.Compare, ctx: Context) -> Any:
    """One comparison: ``is (not) None``, ``in`` / ``not in`` a known container or dispatch table,
    ``==`` / ``!=`` of known values, ``<`` ``<=`` ``>`` ``>=`` of known numbers."""
    left = _eval(node.left, ctx)
    op = node.ops[0]
    if (
        isinstance(op, (ast.Is, ast.IsNot))
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value is None
    ):
        if left is BOTH:
            return BOTH
        result = left is None
        return result if isinstance(op, ast.Is) else not result
    if isinstance(op, (ast.In, ast.NotIn)):
        keys = _members(node.comparators[0], ctx)
        if left is GIVEN or left is BOTH or not isinstance(left, (str, int, float, bool, type(None))):
            raise Unseen(ast.unparse(node))
        return (left in keys) is isinstance(op, ast.In)
    right = _eval(node.comparators[0], ctx)
    if GIVEN in (left, right) or BOTH in (left, right):
        raise Unseen("an argument's value")
    if isinstance(op, ast.Eq):
        return left == right
    if isinstance(op, ast.NotEq):
        return left != right
    order = _ORDER.get(type(op))
    if order is not None and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)
    ):
        return order(left, right)  # self.layerdrop > 0.0 with layerdrop from the config
    raise Unseen(ast.unparse(node))


_ORDER = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}


def _getattr(node: ast.Call, ctx: Context) -> Any:
    """``getattr(self, "loss_type", None)``, ``getattr(self.config, "x", d)``: the attribute, when
    tclint knows its value."""
    args = node.args
    owner = _dotted(args[0]) if args and isinstance(args[0], (ast.Name, ast.Attribute)) else None
    if (
        owner is not None
        and len(args) in (2, 3)
        and not node.keywords
        and isinstance(args[1], ast.Constant)
        and isinstance(args[1].value, str)
    ):
        try:  # getattr(self.config, "apply_spec_augment", True): the config's value or default
            return _value(f"{owner}.{args[1].value}", ctx)
        except Unseen:
            pass
    raise Unseen(ast.unparse(node))


def _container(node: ast.expr) -> Any:
    """A literal dict / list / tuple / set (``x if x is not None else {}``: empty, and not None)."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise Unseen(ast.unparse(node)) from None


def _dict_get(node: ast.Call, ctx: Context) -> Any:
    """``kwargs.get("scale", None)`` on a dict whose content tclint knows (a literal, a default)."""
    try:
        if not 1 <= len(node.args) <= 2 or node.keywords:
            raise Unseen("")
        owner = _eval(node.func.value, ctx) if isinstance(node.func, ast.Attribute) else None
        key = _eval(node.args[0], ctx)
        default = _eval(node.args[1], ctx) if len(node.args) == 2 else None
    except Unseen:
        raise Unseen(ast.unparse(node)) from None
    if isinstance(owner, dict) and isinstance(key, (str, int, float, bool, type(None))):
        return owner.get(key, default)
    raise Unseen(ast.unparse(node))


# what these calls return inside a region torch.compile traces
_UNDER_COMPILE = {
    "torch.jit.is_scripting": False,
    "torch.jit.is_tracing": False,
    "torch.compiler.is_compiling": True,
    "torch.compiler.is_dynamo_compiling": True,
    "torch._dynamo.is_compiling": True,
    "is_torchdynamo_compiling": True,
}


def _bool_op(node: ast.BoolOp, ctx: Context) -> Any:
    """``and``/``or`` over three values: a definite operand decides even when another is unseen."""
    is_and = isinstance(node.op, ast.And)
    pending: Unseen | None = None
    both = False
    for operand in node.values:
        try:
            value = _eval(operand, ctx)
            truth = _truth(value)
        except Unseen as exc:
            pending = pending or exc
            continue
        if truth is None:
            both = True
        elif truth is not is_and:
            return truth  # False decides `and`, True decides `or`
    if pending is not None:
        raise pending
    return BOTH if both else is_and


def _value(text: str, ctx: Context) -> Any:
    side = ctx.side
    if text == "self.training":
        return BOTH if side.training is None else side.training
    if text == "self.gradient_checkpointing":
        return side.gradient_checkpointing
    attr = None
    if text.startswith(("self.config.", "config.")):
        attr = text.split("config.", 1)[1]
    elif text.startswith("self.") and text[5:] in ctx.self_config:
        attr = ctx.self_config[text[5:]]
    if attr is not None and "." not in attr:
        return _config_value(attr, ctx)
    if "." not in text:
        return _name_value(text, ctx)
    if text.startswith("self.") and ctx.self_is_model and side.model_class:
        for table in _dispatch_tables(ctx, key_attr=text[5:]):
            return table[1]
    raise Unseen(text)


# The attribute a library's model constructor stores the key of a dispatch table in
# (rules.libfollow.DISPATCH_TABLES: package, the method that indexes the table -> attribute):
# transformers' ``PreTrainedModel.__init__`` sets ``self.loss_type`` to the class name when it is a
# key of ``LOSS_MAPPING``, else the first key found in the class name, else None; its
# ``loss_function`` warns when ``loss_type is None or loss_type not in LOSS_MAPPING``.
DISPATCH_KEYS = {("transformers", "loss_function"): "loss_type"}


def _dispatch_tables(
    ctx: Context, key_attr: str | None = None, name: str | None = None
) -> list[tuple[set[str], Any]]:
    """(the table's keys, the key the compiled model's class gives) for each dispatch table of the
    function's library, chosen by the attribute holding the key or by the table's name."""
    from tclint.rules.libfollow import DISPATCH_TABLES, Dispatch, Environment, _dispatch_key

    out = []
    for pkg, method, module, table, _fallback in DISPATCH_TABLES:
        if key_attr is not None and DISPATCH_KEYS.get((pkg, method)) != key_attr:
            continue
        if name is not None and name != table:
            continue
        env = ctx.project.memo.get("libconfig-env")
        if env is None:
            env = ctx.project.memo["libconfig-env"] = Environment.for_python(
                (ctx.project.settings.probe or {}).get("python")
            )
        located = env.locate(pkg)
        if located is None or not os.path.abspath(ctx.path).startswith(
            os.path.dirname(os.path.abspath(located[0])) + os.sep
        ):
            continue  # the function is not the table's library's
        dispatch = ctx.project.memo.setdefault("libconfig-dispatch", Dispatch(env))
        mapping = dispatch.table(module, table)
        if not mapping:
            continue
        key = _dispatch_key(ctx.side.model_class or "", list(mapping), "") if ctx.side.model_class else ""
        out.append((set(mapping), key or None))
    return out


def _members(node: ast.expr, ctx: Context) -> Any:
    """What ``x in NODE`` tests against: a literal container, or a dispatch table named by its
    module-level name (its keys)."""
    if isinstance(node, ast.Name) and node.id not in _params(ctx.fn):
        for keys, _key in _dispatch_tables(ctx, name=node.id):
            return keys
    value = _eval(node, ctx)
    if isinstance(value, (dict, list, tuple, set, frozenset, str)):
        return value
    raise Unseen(ast.unparse(node))


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    return {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}


def _self_call(fn: ast.AST, line: int, name: str) -> bool:
    """Is the call at ``line`` of ``fn`` that reaches ``name`` made on ``self`` (``self.name(...)``)?"""
    return any(
        isinstance(n, ast.Attribute)
        and n.attr == name
        and isinstance(n.value, ast.Name)
        and n.value.id == "self"
        and n.lineno == line
        for n in ast.walk(fn)
    )


def _config_value(attr: str, ctx: Context) -> Any:
    side = ctx.side
    if attr.lstrip("_") in side.config or attr in side.config:
        return side.config.get(attr, side.config.get(attr.lstrip("_")))
    if side.config_class is None:
        raise Unseen(f"config.{attr}")
    return config_default(ctx.project, side.config_class, attr)


def _bind(
    caller: Context,
    line: int,
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
) -> tuple[dict[str, tuple[ast.expr, Context]] | None, bool]:
    """(the arguments the call at ``line`` of the caller passes to ``fn``'s parameters, whether
    ``fn``'s ``**kwargs`` is then empty).  None when that call is not one plain call (several
    candidates, ``*args``, ``**something`` other than the caller's own empty ``**kwargs``)."""
    calls = [n for n in ast.walk(caller.fn) if isinstance(n, ast.Call) and n.lineno == line]
    named = [
        c
        for c in calls
        if (isinstance(c.func, ast.Attribute) and c.func.attr == fn.name)
        or (isinstance(c.func, ast.Name) and c.func.id == fn.name)
    ]
    call = named[0] if len(named) == 1 else calls[0] if len(calls) == 1 else None
    own_kwargs = caller.fn.args.kwarg.arg if caller.fn.args.kwarg is not None else None
    if call is None or any(isinstance(a, ast.Starred) for a in call.args):
        return None, False
    for k in call.keywords:  # `**kwargs` passing on the caller's own, known-empty **kwargs adds nothing
        if k.arg is None and not (
            caller.kwargs_empty and isinstance(k.value, ast.Name) and k.value.id == own_kwargs
        ):
            return None, False
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    out = {p: (a, caller) for p, a in zip(params, call.args, strict=False)}
    out.update((k.arg, (k.value, caller)) for k in call.keywords if k.arg)
    named_params = set(params) | {a.arg for a in fn.args.kwonlyargs}
    return out, not any(k.arg and k.arg not in named_params for k in call.keywords)


def _reassigned(fn: ast.AST, name: str, before: int) -> bool:
    """Is the parameter bound again in the body above line ``before`` (or in a loop), other than by
    ``x = x if x is not None else ...``?"""
    loops = [
        n
        for n in ast.walk(fn)
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While))
        and n.lineno <= before <= (n.end_lineno or n.lineno)
    ]
    for n in ast.walk(fn):
        if not isinstance(n, ast.stmt) or (
            n.lineno >= before
            and not any(lp.lineno <= n.lineno <= (lp.end_lineno or lp.lineno) for lp in loops)
        ):
            continue
        targets = (
            n.targets
            if isinstance(n, ast.Assign)
            else [n.target]
            if isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor))
            else []
        )
        for t in targets:
            if any(
                isinstance(x, ast.Name) and x.id == name and isinstance(x.ctx, ast.Store) for x in ast.walk(t)
            ):
                if not (
                    isinstance(n, ast.Assign) and isinstance(t, ast.Name) and isinstance(n.value, ast.IfExp)
                ):
                    return True
    return False


def _name_value(name: str, ctx: Context) -> Any:
    params = [a.arg for a in (*ctx.fn.args.posonlyargs, *ctx.fn.args.args, *ctx.fn.args.kwonlyargs)]
    if name not in params:
        return _local_value(name, ctx)
    if _reassigned(ctx.fn, name, ctx.at_line):
        raise Unseen(name)
    if not ctx.is_root:
        if ctx.bindings is None:
            raise Unseen(name)
        rebound = _rebinding(ctx.fn, name, ctx.at_line)
        if name in ctx.bindings:
            expr, outer = ctx.bindings[name]
            value = _eval(expr, outer)
        else:
            value = _default(ctx.fn, name)
        if rebound is not None and value is None:
            return _eval(rebound, ctx)
        return value
    rebound = _rebinding(ctx.fn, name, ctx.at_line)
    how = ctx.side.kwargs.get(name) if ctx.side.calls_seen else None
    if how is None:
        raise Unseen(name)
    if rebound is not None:  # `x = x if x is not None else self.config.x`
        if how == "given":
            return GIVEN
        fallback = _eval(rebound, ctx)
        return fallback if how == "absent" else BOTH
    if how == "both":
        return BOTH
    if how == "given":
        return GIVEN
    return _default(ctx.fn, name)


def _local_value(name: str, ctx: Context) -> Any:
    """A local variable bound once above the line judged, by a plain assignment
    (``loss_type = getattr(self, "loss_type", None)``; a binding further down, outside a loop around
    the line, does not change what the line sees): the value of that expression."""
    bindings = [
        n
        for n in ast.walk(ctx.fn)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del))
    ]
    assign = next(
        (
            n
            for n in ast.walk(ctx.fn)
            if isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and n.targets[0].id == name
        ),
        None,
    )
    before = [b for b in bindings if b.lineno < ctx.at_line]
    loops = [
        n
        for n in ast.walk(ctx.fn)
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While))
        and n.lineno <= ctx.at_line <= (n.end_lineno or n.lineno)
    ]
    again = any(  # bound again further down in a loop around the line: another value next time
        lp.lineno <= b.lineno <= (lp.end_lineno or lp.lineno)
        for lp in loops
        for b in bindings
        if b not in before
    )
    if len(before) != 1 or assign is None or assign.targets[0] is not before[0] or again or ctx.depth >= 4:
        raise Unseen(name)
    inner = Context(**{**ctx.__dict__, "at_line": assign.lineno, "depth": ctx.depth + 1})
    try:
        return _eval(assign.value, inner)
    except Unseen:
        raise Unseen(name) from None


def _rebinding(fn: ast.AST, name: str, before: int) -> ast.expr | None:
    """The fallback of ``name = name if name is not None else FALLBACK`` above line ``before`` (one
    further down does not change the value a condition above it sees)."""
    for n in ast.walk(fn):
        if (
            isinstance(n, ast.Assign)
            and n.lineno < before
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and n.targets[0].id == name
            and isinstance(n.value, ast.IfExp)
        ):
            test = n.value.test
            if (
                isinstance(test, ast.Compare)
                and isinstance(test.left, ast.Name)
                and test.left.id == name
                and isinstance(test.ops[0], ast.IsNot)
            ):
                return n.value.orelse
    return None


def _default(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> Any:
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    pairs = [
        *zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True),
        *zip(args.kwonlyargs, args.kw_defaults, strict=True),
    ]
    for a, d in pairs:
        if a.arg == name:
            if d is None:
                raise Unseen(name)
            try:
                return ast.literal_eval(d)
            except ValueError as exc:
                raise Unseen(name) from exc
    raise Unseen(name)  # **kwargs-only or required without a value
