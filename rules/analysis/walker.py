"""The statement walker: one pass over a file in statement order.

``Walker.stmt`` and ``Walker.expr`` visit every node once (expressions iteratively, post-order),
keep each scope's abstract environment up to date (assignments, loops, ``if`` joins, function and
class definitions, parameters and their uses), dispatch the rules' ``visit_*`` hooks, and hand
calls to the call graph.  It also tracks what only runs in eager mode (``if is_compiling():
return``, ``torch.jit.is_scripting()`` branches), cold paths, enclosing tests and user context
managers, which ``Analyzer.add_candidate`` stamps on every candidate.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Any, cast

from tclint.rules import types as T
from tclint.rules.analysis.api import Condition, Scope
from tclint.rules.analysis.common import (
    COLD_NAME,
    COMPILE_FUNCS,
    COMPILING_NAME,
    COMPILING_PREDICATES,
    NON_TENSOR_PARAM,
    NOT_TRACED_PREDICATES,
    UNEVALUABLE,
    AnalyzerBase,
    chained_module_root,
    is_external,
    is_library,
    literal,
    module_only_chain,
    node_loc,
    walk_statements,
)
from tclint.rules.analysis.records import fields_of, is_record
from tclint.rules.analysis.submodules import defaulted_param, param_fed_spec, setter_params, spec_from_type
from tclint.rules.analysis.types_infer import binop_type, element_type
from tclint.rules.facts import ClassFacts, FunctionFacts, Loc, Param, SubmoduleSpec
from tclint.rules.names import AliasTable, dotted, self_path
from tclint.rules.types import Ty

if TYPE_CHECKING:
    from tclint.rules.analysis.analyzer import Analyzer

# annotations that say only "a module" (`quantizer: nn.Module`): what runs comes from the callers
_GENERIC_MODULES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


class _ModeMark(ast.AST):
    """A marker on the expression walk's stack: from here on the operands run in ``mode``
    (``self.training and f(x)``: ``f`` only runs in train mode), or, with ``mode`` None, the
    last such mode ends."""

    def __init__(self, mode: str | None) -> None:
        super().__init__()
        self.mode = mode


class _GuardMark(ast.AST):
    """A marker on the expression walk's stack: from here on the operands run only when
    ``guard`` (an earlier operand of an ``and``) was true; with ``guard`` None, the last ends."""

    def __init__(self, guard: ast.expr | None) -> None:
        super().__init__()
        self.guard = guard


_END_MODE = _ModeMark(None)
_END_GUARD = _GuardMark(None)


class Walker(AnalyzerBase):
    """Statements, expressions, scopes and definitions (a mixin of ``Analyzer``)."""

    def _dispatch(self, node: ast.AST) -> None:
        visitors = self.ruleset.visitors.get(type(node))
        if visitors:
            for visit in visitors:
                visit(node, self.ctx)

    # ------------------------------------------------------------------ expressions
    def expr(self, node: ast.expr | None) -> Ty:
        """Walk an expression: types for its sub-expressions, rules for every node, facts for calls."""
        if node is None:
            return T.T_UNKNOWN
        stack: list[tuple[ast.AST, bool]] = [(node, False)]
        modes, guards = self.scope.modes, self.scope.guards
        depth, guarded = len(modes), len(guards)
        # Iterative post-order walk: deeply nested expressions (fuzzed or generated code) must not
        # exhaust the interpreter's recursion limit.
        try:
            self._walk_expr(stack, modes, guards)
        finally:
            del modes[depth:]
            del guards[guarded:]
        return self.type_of(node)

    def _walk_expr(
        self, stack: list[tuple[ast.AST, bool]], modes: list[str | None], guards: list[ast.expr]
    ) -> None:
        while stack:
            current, visited = stack.pop()
            if isinstance(current, _ModeMark):
                if current is _END_MODE:
                    modes.pop()
                else:
                    modes.append(current.mode)
                continue
            if isinstance(current, _GuardMark):
                if current.guard is None:
                    guards.pop()
                else:
                    guards.append(current.guard)
                continue
            if visited:
                self._finish_expr(current)
                continue
            if isinstance(current, (ast.BoolOp, ast.IfExp)):
                stack.append((current, True))
                stack.extend(reversed(self._short_circuit_order(current)))
                continue
            if isinstance(current, ast.Lambda):
                self._lambda(current)
                continue
            if isinstance(current, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                self._comprehension(current)
                continue
            stack.append((current, True))
            if isinstance(current, (ast.Name, ast.Constant)):
                continue  # a leaf: no sub-expression, no keywords
            children = [c for c in ast.iter_child_nodes(current) if isinstance(c, ast.expr)]
            for child in reversed(children):
                stack.append((child, False))
            for kw in getattr(current, "keywords", ()) or ():
                if isinstance(kw, ast.keyword):
                    stack.append((kw.value, False))

    def _short_circuit_order(self, node: ast.BoolOp | ast.IfExp) -> list[tuple[ast.AST, bool]]:
        """The operands of ``node`` in evaluation order, with the training mode each runs in
        marked: after an operand that pins ``self.training`` the rest of an ``and`` (``or``)
        only runs when it was true (false); an ``IfExp``'s branches run in the mode its test
        implies (measured under torch 2.13: in eval mode ``self.training and random.random() < p``
        never calls ``random.random``, so it does not break there)."""
        if isinstance(node, ast.IfExp):
            order: list[tuple[ast.AST, bool]] = [(node.test, False)]
            for branch, truth in ((node.body, True), (node.orelse, False)):
                mode = self._mode_implied(node.test, truth)
                if mode is None:
                    order.append((branch, False))
                else:
                    order += [(_ModeMark(mode), False), (branch, False), (_END_MODE, False)]
            return order
        truth = isinstance(node.op, ast.And)
        order, pinned, guarded = [], 0, 0
        for i, value in enumerate(node.values):
            order.append((value, False))
            if i + 1 == len(node.values):
                break
            mode = self._mode_implied(value, truth)
            if mode is not None:
                order.append((_ModeMark(mode), False))
                pinned += 1
            if truth:
                order.append((_GuardMark(value), False))
                guarded += 1
        order += [(_END_MODE, False)] * pinned + [(_END_GUARD, False)] * guarded
        return order

    def _finish_expr(self, node: ast.AST) -> None:
        if isinstance(node, ast.Call):
            self._call(node)
        elif isinstance(node, (ast.Yield, ast.YieldFrom)):
            func = self.scope.func
            if func is not None and self.scope.comp_depth == 0:
                func.is_generator = True
        if isinstance(node, ast.expr):
            self.type_of(node)
        self._dispatch(node)
        if isinstance(node, ast.Subscript):
            self._note_param_use_subscript(node)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            self._attribute_read(node)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            p = self.scope.params.get(node.id)
            if p is not None and "load" not in p.uses:
                p.uses = (*p.uses, "load")

    def _lambda(self, node: ast.Lambda) -> None:
        # Lambdas are inlined where they are used; walk the body in a child scope.
        scope = self._push_function_scope(None, node.args, is_method=False)
        try:
            self.expr(node.body)
        finally:
            self._pop_scope(scope)
        self._types[id(node)] = Ty(T.FUNC, T.HIGH, None, "<lambda>")

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        scope = self.scope
        saved = dict(scope.env)
        scope.comp_depth += 1
        try:
            for gen in node.generators:
                it = self.expr(gen.iter)
                if (
                    isinstance(gen.target, ast.Tuple)
                    and isinstance(gen.iter, ast.Call)
                    and isinstance(gen.iter.func, ast.Name)
                    and gen.iter.func.id in ("zip", "enumerate")
                ):
                    # `[layer for layer, drop in zip(layers, to_drop) if not drop]`: item by item
                    self._bind_loop_target(gen.target, gen.iter, it)
                else:
                    self._bind_target(gen.target, element_type(it, gen.iter))
                for cond in gen.ifs:
                    scope.in_test += 1
                    try:
                        self.expr(cond)
                    finally:
                        scope.in_test -= 1
                    self._dispatch_condition(cond)
            if isinstance(node, ast.DictComp):
                self.expr(node.key)
                self.expr(node.value)
            else:
                self.expr(node.elt)
        finally:
            scope.comp_depth -= 1
        result = self._eval_type(node)
        scope.env = saved
        self._types[id(node)] = result
        self._dispatch(node)

    # ------------------------------------------------------------------ parameters
    def _note_param_use(self, node: ast.expr, use: str) -> None:
        params = self.scope.params
        if not params:
            return  # no parameter to note a use of: no walk
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                p = params.get(sub.id)
                if p is not None and use not in p.uses:
                    p.uses = (*p.uses, use)

    def _note_param_use_subscript(self, node: ast.Subscript) -> None:
        """`self.table[i]` / `self.layers[i]` with an int parameter `i`: specialised by value."""
        index = node.slice
        if not isinstance(index, ast.Name):
            return
        p = self.scope.params.get(index.id)
        if p is None:
            return
        base = self.type_of(node.value)
        if base.kind in (T.TENSOR, T.SIZE):
            return
        int_param = p.ty.kind == T.SCALAR and p.ty.dtype == "int"
        str_param = p.ty.kind == T.SCALAR and p.ty.dtype == "str"
        if base.kind in (T.CONTAINER, T.MODLIST, T.TLIST) or int_param or str_param:
            use = "key" if str_param else "index"
            if use not in p.uses:
                p.uses = (*p.uses, use)

    # ------------------------------------------------------------------ statements
    def stmt(self, node: ast.stmt) -> bool:  # noqa: C901
        """Walk one statement.  Returns True when it always leaves the block (return/raise/...)."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._function(node)
            return False
        if isinstance(node, ast.ClassDef):
            self._class(node)
            return False
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if self.scope.kind != "module":
                self.scope.aliases.add_import(node, self.module, self.is_package)
            else:
                self.module_aliases.add_import(node, self.module, self.is_package)
            self._dispatch(node)
            return False
        if isinstance(node, ast.Assign):
            self._assign(node)
            return False
        if isinstance(node, ast.AnnAssign):
            self._ann_assign(node)
            return False
        if isinstance(node, ast.AugAssign):
            self._aug_assign(node)
            return False
        if isinstance(node, ast.Expr):
            self.expr(node.value)
            self._dispatch(node)
            return False
        if isinstance(node, ast.If):
            return self._if(node)
        if isinstance(node, (ast.For, ast.AsyncFor)):
            self._for(node)
            return False
        if isinstance(node, ast.While):
            self._while(node)
            return False
        if isinstance(node, (ast.With, ast.AsyncWith)):
            user_ctx = False
            for item in node.items:
                ty = self.expr(item.context_expr)
                if item.optional_vars is not None:
                    self._bind_target(
                        item.optional_vars, ty if ty.kind in (T.TENSOR, T.INSTANCE) else T.T_UNKNOWN
                    )
                user_ctx = user_ctx or self._is_user_context(item.context_expr)
            self._dispatch(node)
            if user_ctx:
                self.scope.user_ctx.append(node.lineno)
            try:
                return self.block(node.body)
            finally:
                if user_ctx:
                    self.scope.user_ctx.pop()
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            self._dispatch(node)
            tried = cast(ast.Try, node)  # ast.TryStar (3.11+) has the same fields
            exits = self.block(tried.body)
            handlers_exit = True
            for handler in tried.handlers:
                if handler.type is not None:
                    self.expr(handler.type)
                if handler.name:
                    self.scope.env[handler.name] = T.T_UNKNOWN
                handlers_exit = self.block(handler.body) and handlers_exit
            if tried.orelse:
                exits = self.block(tried.orelse)
            if tried.finalbody:
                if self.block(tried.finalbody):
                    return True
            return exits and handlers_exit and bool(tried.handlers)
        if isinstance(node, ast.Return):
            ty = self.expr(node.value) if node.value is not None else T.T_NONE
            scope = self.scope
            if scope.func is not None and not scope.eager_only:
                first = scope.returns is None
                scope.returns = ty if scope.returns is None else T.join(scope.returns, ty)
                self._note_returned_items(node.value, first)
                self._check_wrapper_return(node)
            self._dispatch(node)
            return True
        if isinstance(node, ast.Raise):
            self.expr(node.exc)
            self.expr(node.cause)
            self._dispatch(node)
            return True
        if isinstance(node, ast.Assert):
            self.expr(node.test)
            self.expr(node.msg)
            self._dispatch(node)
            return False
        if isinstance(node, ast.Global):
            self.scope.globals.update(node.names)
            return False
        if isinstance(node, ast.Nonlocal):
            self.scope.nonlocals.update(node.names)
            return False
        if isinstance(node, ast.Delete):
            for t in node.targets:
                self.expr(t)
            self._dispatch(node)
            return False
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if isinstance(node, ast.Match):
            self.expr(node.subject)
            for case in node.cases:
                if case.guard is not None:
                    self.expr(case.guard)
                self.block(case.body)
            return False
        self._dispatch(node)
        return False

    def block(self, body: list[ast.stmt]) -> bool:
        self._alone.append(len(body) == 1)
        try:
            return self._block(body)
        finally:
            self._alone.pop()

    def _block(self, body: list[ast.stmt]) -> bool:
        scope = self.scope
        for i, stmt in enumerate(body):
            if self.stmt(stmt):
                # Code after return/raise is unreachable; do not walk it.
                return True
            if self._compile_exit(stmt):
                # `if is_compiling(): return ...` : the rest of the block runs only in eager.
                scope.eager_only += 1
                try:
                    self.block(body[i + 1 :])
                finally:
                    scope.eager_only -= 1
                return False
            mode = self._mode_exit(stmt)
            if mode is not None and i + 1 < len(body):
                # `if not self.training: return x`: the rest of the block runs only in training
                scope.modes.append(mode)
                try:
                    return self.block(body[i + 1 :])
                finally:
                    scope.modes.pop()
        return False

    def _mode_exit(self, stmt: ast.stmt) -> str | None:
        """The training mode the code after ``stmt`` runs in when ``stmt`` is an ``if`` (no
        ``else``) on ``self.training`` whose body always leaves the block (``return``/``raise``/
        ``continue``/``break`` last): ``if not self.training: return x`` -> "train"."""
        if not isinstance(stmt, ast.If) or stmt.orelse or not stmt.body:
            return None
        if not isinstance(stmt.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            return None
        return self._mode_implied(stmt.test, False)

    def _is_user_context(self, expr: ast.expr) -> bool:
        """A context manager written in this project (class or @contextmanager function): a
        graph break inside its body makes Dynamo give up on the whole function (measured)."""
        target = expr.func if isinstance(expr, ast.Call) else expr
        q = self.qualify(target)
        if q is not None:
            return not q.startswith("torch.") and not is_library(q)
        ty = self.type_of(expr)
        if ty.kind in (T.INSTANCE,) and ty.ref and not ty.ref.startswith("torch.") and not is_library(ty.ref):
            return True
        return False

    def _compile_exit(self, stmt: ast.stmt) -> bool:
        if not isinstance(stmt, ast.If) or stmt.orelse:
            return False
        if self._compiling_condition(stmt.test) != "compiling":
            return False
        last = stmt.body[-1] if stmt.body else None
        return isinstance(last, (ast.Return, ast.Raise))

    def _compiling_condition(self, test: ast.expr) -> str | None:
        """'compiling' when the test is true exactly under torch.compile, 'eager' when false."""
        negate = False
        node = test
        while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            negate = not negate
            node = node.operand
        if isinstance(node, ast.Call):
            q = self.qualify(node.func)
            name = (
                q.rsplit(".", 1)[-1]
                if q
                else (
                    node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                )
            )
            if (
                q in COMPILING_PREDICATES
                or (name and COMPILING_NAME.search(name))
                or (q and q in self.extra_predicates)
                or name in self.extra_predicates
            ):
                return "eager" if negate else "compiling"
            if q in NOT_TRACED_PREDICATES:
                # torch.jit.is_scripting() is False under Dynamo: its true branch is not traced.
                return "compiling" if negate else "eager"
            if (
                q is not None
                and not q.startswith("torch.")
                and not is_external(q)
                and (name or "").startswith(("is_", "_is_"))
            ):
                # a project predicate such as transformers' is_tracing(): decided across files
                return ("maybe-eager:" if negate else "maybe-compiling:") + q
        if isinstance(node, ast.Name) and node.id == "TYPE_CHECKING":
            return "compiling" if negate else "eager"
        if isinstance(node, ast.Attribute) and node.attr == "TYPE_CHECKING":
            return "compiling" if negate else "eager"
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) and not negate:
            # `if is_compiling() and x:` is never true in eager, so it is at least compile-only;
            # `if not is_compiling() and x:` is never true under compile.
            for value in node.values:
                which = self._compiling_condition(value)
                if which == "eager" or (which or "").startswith("maybe-eager:"):
                    return which
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and negate:
            for value in node.values:
                if self._compiling_condition(value) == "compiling":
                    return "eager"
        return None

    def _if(self, node: ast.If) -> bool:
        """An `if` with its `elif` chain, walked iteratively (generated dispatchers can have
        thousands of branches; recursing per `elif` would hit the recursion limit)."""
        scope = self.scope
        chain = [node]
        while len(chain[-1].orelse) == 1 and isinstance(chain[-1].orelse[0], ast.If):
            chain.append(chain[-1].orelse[0])
        final_else = chain[-1].orelse
        before = dict(scope.env)
        outcomes: list[tuple[dict[str, Ty], bool]] = []
        dead = 0  # a previous test is true under compile: the rest is eager-only
        negations: list[str] = []
        maybe_else: list[str] = []  # project predicates that may make the rest eager-only
        else_mode: str | None = None  # the training mode the previous tests being false imply
        for link in chain:
            which = self._compiling_condition(link.test)
            maybe_ref = None
            if which is not None and which.startswith("maybe-"):
                # `if is_tracing(): ... else: <maybe dead>`: the else side (or, negated, the body)
                # is dropped if the project pass finds the callee is an is_compiling() predicate
                kind, _, maybe_ref = which.partition(":")
                which = None
                maybe_dead_body = kind == "maybe-eager"
            scope.env = dict(before)
            scope.eager_only += dead
            try:
                scope.in_test += 1
                try:
                    self.expr(link.test)
                finally:
                    scope.in_test -= 1
                self._note_param_use(link.test, "cond")
                self._dispatch_condition(link.test)
                self._dispatch(link)
                cold = self._cold_reason(link.test)
                test_text = self._short(link.test)
                pushed = [*negations, test_text]
                scope.tests.extend(pushed)
                scope.modes.append(self._mode_implied(link.test, True) or else_mode)  # None: no mode implied
                if which == "eager":
                    scope.eager_only += 1
                if cold:
                    scope.cold.append(cold)
                if maybe_ref is not None and maybe_dead_body:
                    scope.unless.append(maybe_ref)
                self._narrow_submodule(link.test)
                try:
                    body_exit = self.block(link.body)
                finally:
                    del scope.tests[len(scope.tests) - len(pushed) :]
                    scope.modes.pop()
                    if which == "eager":
                        scope.eager_only -= 1
                    if cold:
                        scope.cold.pop()
                    if maybe_ref is not None and maybe_dead_body:
                        scope.unless.pop()
            finally:
                scope.eager_only -= dead
            outcomes.append((scope.env, body_exit))
            negations.append(f"not ({test_text})")
            else_mode = else_mode or self._mode_implied(link.test, False)
            if which == "compiling":
                dead = 1
            if maybe_ref is not None and not maybe_dead_body:
                maybe_else.append(maybe_ref)
        scope.env = dict(before)
        scope.eager_only += dead
        scope.tests.extend(negations)
        scope.unless.extend(maybe_else)
        scope.modes.append(else_mode)
        try:
            else_exit = self.block(final_else) if final_else else False
        finally:
            scope.modes.pop()
            del scope.tests[len(scope.tests) - len(negations) :]
            del scope.unless[len(scope.unless) - len(maybe_else) :]
            scope.eager_only -= dead
        outcomes.append((scope.env, else_exit))
        live = [env for env, exits in outcomes if not exits]
        if not live:
            scope.env = outcomes[-1][0]
            return True
        scope.env = self._merge_paths(live, [link.test for link in chain])
        return False

    def _merge_paths(self, live: list[dict[str, Ty]], tests: list[ast.expr]) -> dict[str, Ty]:
        """The environment after an ``if`` chain: each name's join over the paths that go on.  A
        parameter rebound on some paths only (``if tb is None: ta = self._start``) still holds what
        it was given on the others, when that is known (a seed, an annotation, a default), unless a
        test checks its type (``if torch.is_tensor(t): t = float(t)``: not a tensor after)."""
        merged = dict(live[0])
        for env in live[1:]:
            for name, ty in env.items():
                merged[name] = T.join(ty, merged[name]) if name in merged else ty
        params = self.scope.params
        for name in merged:
            p = params.get(name)
            if (
                p is not None
                and p.ty.kind != T.UNKNOWN
                and any(name not in env for env in live)
                and not any(_type_tested(test, name) for test in tests)
            ):
                merged[name] = T.join(merged[name], p.ty)
        return merged

    def _mode_implied(self, test: ast.expr, truth: bool) -> str | None:
        """The training mode that ``test`` evaluating to ``truth`` implies: "train" / "eval" when
        it pins ``self.training`` (``self.training``, ``not self.training``, a conjunct of a true
        ``and``, a disjunct of a false ``or``, ``self.training is False``), else None."""
        if isinstance(test, ast.Attribute) and test.attr == "training":
            if (
                isinstance(test.value, ast.Name)
                and test.value.id == self.scope.self_name
                and self.scope.self_name
            ):
                return "train" if truth else "eval"
            return None
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._mode_implied(test.operand, not truth)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) is truth:
            for value in test.values:  # every operand of a true `and` / a false `or` has that truth
                mode = self._mode_implied(value, truth)
                if mode is not None:
                    return mode
            return None
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Is, ast.Eq, ast.IsNot, ast.NotEq))
        ):
            right = test.comparators[0]
            if isinstance(right, ast.Constant) and isinstance(right.value, bool):
                flag = right.value if isinstance(test.ops[0], (ast.Is, ast.Eq)) else not right.value
                return self._mode_implied(test.left, flag if truth else not flag)
        return None

    def _narrow_submodule(self, test: ast.expr) -> None:
        """``for m in model.modules(): if isinstance(m, Block): m.compile()``: inside the branch,
        ``m`` is a ``Block`` (only for a name holding a submodule of unknown class)."""
        if not (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id == "isinstance"
            and len(test.args) == 2
            and isinstance(test.args[0], ast.Name)
            and self.qualify(test.func) is None
        ):
            return
        name = test.args[0].id
        current = self._name_type(name)
        if (
            current.kind != T.ELEM
            or not current.ref
            or not (current.ref.endswith(("|*", "|**")) or current.ref.startswith(T.CLASSES))
        ):
            return
        classes = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
        refs = [self.qualify(c) for c in classes]
        if refs and all(refs):
            self.scope.env[name] = Ty(T.INSTANCE, T.HIGH, None, T.union_ref(r for r in refs if r))

    def _dispatch_condition(self, test: ast.expr) -> None:
        """Conditions get a second dispatch so control-flow rules need not re-walk statements."""
        visitors = self.ruleset.visitors.get(Condition)
        if visitors:
            wrapper = Condition(test)
            for visit in visitors:
                visit(wrapper, self.ctx)

    def _cold_reason(self, test: ast.expr) -> str | None:
        """Why a branch is rarely taken: `if step % 100 == 0`, `if self.debug:`, ..."""
        for sub in ast.walk(test):
            if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Mod):
                right = literal(sub.right)
                if isinstance(right, int) and right >= 10:
                    return f"cold path: guarded by `{self._short(test)}`"
                if isinstance(sub.right, (ast.Name, ast.Attribute)):
                    name = dotted(sub.right) or ""
                    if re.search(r"every|interval|freq|steps|period", name, re.I):
                        return f"cold path: guarded by `{self._short(test)}`"
            if isinstance(sub, ast.Name) and COLD_NAME.search(sub.id):
                return f"cold path: guarded by `{self._short(test)}`"
            if isinstance(sub, ast.Attribute) and (COLD_NAME.search(sub.attr) or sub.attr == "isEnabledFor"):
                return f"cold path: guarded by `{self._short(test)}`"
        return None

    def _for(self, node: ast.For | ast.AsyncFor) -> None:
        scope = self.scope
        it = self.expr(node.iter)
        iter_node = node.iter
        self._bind_loop_target(node.target, iter_node, it)
        if isinstance(node.target, ast.Name):
            # `for func in funcs` over a parameter: calling `func` runs what the callers pass in it
            if isinstance(iter_node, ast.Name) and iter_node.id in scope.params and it.kind == T.UNKNOWN:
                scope.param_iters[node.target.id] = iter_node.id
            else:
                scope.param_iters.pop(node.target.id, None)
        # loop counters: `for i in range(...)`, `for step, batch in enumerate(...)`
        if isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name):
            fname = node.iter.func.id
            if fname == "range" and isinstance(node.target, ast.Name):
                scope.counters.add(node.target.id)
            elif fname == "enumerate" and isinstance(node.target, ast.Tuple) and node.target.elts:
                first = node.target.elts[0]
                if isinstance(first, ast.Name):
                    scope.counters.add(first.id)
        # `for t in ts` / `for i, t in enumerate(ts)` with `ts = list(range(999, 0, -250))`
        ranged = _loop_element(iter_node, node.target)
        if ranged is not None and _ranged(ranged[0], self._ranges()):
            scope.counters.add(ranged[1])
        self._carried_numbers(node.body)
        self._dispatch(node)
        scope.loops.append(node.lineno)
        try:
            self.block(node.body)
        finally:
            scope.loops.pop()
        self.block(node.orelse)

    def _bind_loop_target(self, target: ast.expr, iter_node: ast.expr, it: Ty) -> None:
        """Bind a loop target to what the iterable yields: ``for j, blk in enumerate(...)``,
        ``for name, child in m.named_children()``, and ``for a, b in zip(xs, ys)`` item by item
        (``zip(t[:-1], t[1:])`` of a tensor yields tensors), nested (``enumerate(zip(...))``)."""
        if (
            isinstance(iter_node, ast.Call)
            and isinstance(iter_node.func, ast.Name)
            and isinstance(target, ast.Tuple)
        ):
            fname, args = iter_node.func.id, iter_node.args
            if fname == "enumerate" and args and len(target.elts) == 2:
                self._bind_target(target.elts[0], T.T_INT)
                self._bind_loop_target(target.elts[1], args[0], self.type_of(args[0]))
                return
            if (
                fname == "zip"
                and len(args) == len(target.elts)
                and not iter_node.keywords
                and not any(isinstance(a, ast.Starred) for a in (*args, *target.elts))
            ):
                for elt, arg in zip(target.elts, args, strict=True):
                    self._bind_loop_target(elt, arg, self.type_of(arg))
                return
        if (
            isinstance(iter_node, ast.Call)
            and isinstance(iter_node.func, ast.Attribute)
            and iter_node.func.attr in ("named_children", "named_modules")
            and isinstance(target, ast.Tuple)
            and len(target.elts) == 2
        ):
            # `for name, child in model.named_children():`
            self._bind_target(target.elts[0], T.T_STR)
            self._bind_target(target.elts[1], self._iter_element(iter_node, it))
            return
        elem = self._iter_element(iter_node, it)
        if (
            isinstance(target, ast.Tuple)
            and elem.kind == T.ELEM
            and not any(isinstance(e, ast.Starred) for e in target.elts)
        ):
            # `for attn, ff in self.layers:` over a list of `nn.ModuleList([Attention(), FF()])`:
            # each name is one of the inner lists' modules (the container's elements, flattened)
            for elt in target.elts:
                self._bind_target(elt, elem)
            return
        self._bind_target(target, elem)

    def _while(self, node: ast.While) -> None:
        scope = self.scope
        scope.in_test += 1
        try:
            self.expr(node.test)
        finally:
            scope.in_test -= 1
        self._note_param_use(node.test, "cond")
        self._dispatch_condition(node.test)
        self._carried_numbers(node.body)
        self._dispatch(node)
        scope.loops.append(node.lineno)
        try:
            self.block(node.body)
        finally:
            scope.loops.pop()
        self.block(node.orelse)

    def _carried_numbers(self, body: list[ast.stmt]) -> None:
        """Python numbers a loop body carries to the next iteration (``eps = max(0.05, eps * 0.7)``,
        ``total += 1``) change per iteration from the first one on: counters, also for calls that
        read them before the line that updates them (``act(obs, eps)`` at the top of the body)."""
        scope = self.scope
        for node in (n for stmt in body for n in walk_statements(stmt)):
            name = None
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                if _counter_arithmetic(node.value, {node.targets[0].id}):
                    name = node.targets[0].id
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                if _counter_arithmetic(node.value, scope.counters) or literal(node.value) is not None:
                    name = node.target.id
            if name is None or name in scope.counters:
                continue
            ty = self._name_type(name)
            if ty.kind == T.SCALAR and ty.dtype in ("int", "float"):
                scope.counters.add(name)

    # ------------------------------------------------------------------ assignments
    def _assign(self, node: ast.Assign) -> None:
        ty = self.expr(node.value)
        for target in node.targets:
            self._assign_target(target, node.value, ty, node)
            self._check_registry_store(target, node.value)
        if (
            self.scope.loops
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and ty.kind != T.TENSOR
            and _counter_arithmetic(node.value, self.scope.counters)
        ):
            # `lr = base_lr * 0.5 ** step`, `seq = 4 + step` in a loop: a new number per iteration
            self.scope.counters.add(node.targets[0].id)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if _ranged(node.value, self._ranges()):
                self.scope.ranges.add(node.targets[0].id)
            else:
                self.scope.ranges.discard(node.targets[0].id)
        elif len(node.targets) == 1 and (owner := self._class_scope()) is not None:
            # `self.ts = list(range(steps - 1, -1, -1))` in __init__ (walked first), then
            # `for t in self.ts:` in another method of the class
            attr = self_path(node.targets[0], self.scope.self_name)
            if attr is not None and "." not in attr:
                if _ranged(node.value, self._ranges()):
                    owner.ranges.add(attr)
                else:
                    owner.ranges.discard(attr)
        self._dispatch(node)

    def _class_scope(self) -> Scope | None:
        """The class body a method being walked belongs to (None outside methods)."""
        scope = self.scope
        parent = scope.parent
        if scope.kind == "function" and scope.self_name and parent is not None and parent.kind == "class":
            return parent
        return None

    def _ranges(self) -> set[str]:
        """The names bound to a range (``Scope.ranges``) and, in a method, the attributes of self
        its class bound to one (as ``self.ts``)."""
        owner = self._class_scope()
        if owner is None or not owner.ranges:
            return self.scope.ranges
        return self.scope.ranges | {f"{self.scope.self_name}.{attr}" for attr in owner.ranges}

    def _check_registry_store(self, target: ast.expr, value: ast.expr) -> None:
        """``MODELS[name] = cls`` in a function, ``MODELS`` a module-level dict and ``cls`` one of
        the function's parameters: a registry decorator (``FunctionFacts.stores_param``)."""
        scope = self.scope
        func = scope.func
        if (
            func is None
            or not isinstance(target, ast.Subscript)
            or not isinstance(target.value, ast.Name)
            or not isinstance(value, ast.Name)
            or target.value.id in scope.params
            or target.value.id in scope.env  # a local dict of that name
        ):
            return
        names = [p.name for p in func.params]
        held = self.module_scope.env.get(target.value.id)
        if value.id in names and held is not None and held.kind == T.CONTAINER and held.dtype == "dict":
            where = f"{self.module}.{target.value.id}" if self.module else target.value.id
            func.stores_param = (where, names.index(value.id))

    def _ann_assign(self, node: ast.AnnAssign) -> None:
        ty = self.expr(node.value) if node.value is not None else self._annotation_type(node.annotation)[0]
        if node.value is not None:
            ann_ty = self._annotation_type(node.annotation)[0]
            if ann_ty.kind != T.UNKNOWN and ty.kind == T.UNKNOWN:
                ty = ann_ty
        if self.scope.kind == "class":
            if isinstance(node.target, ast.Name) and self.scope.cls is not None:
                spec = spec_from_type(ty, node.value, cast("Analyzer", self))
                if spec is not None:
                    self.scope.cls.attrs.setdefault(node.target.id, spec)
            self._dispatch(node)
            return
        if node.value is not None:
            self._assign_target(node.target, node.value, ty, node)
        elif isinstance(node.target, ast.Name):
            self.scope.env[node.target.id] = ty
        self._dispatch(node)

    def _aug_assign(self, node: ast.AugAssign) -> None:
        self.expr(node.target) if not isinstance(node.target, ast.Name) else None
        value_ty = self.expr(node.value)
        scope = self.scope
        if isinstance(node.target, ast.Name):
            name = node.target.id
            old = self._name_type(name)
            new = binop_type(old, value_ty, node.op)
            if name in scope.globals:
                if scope.func is not None:
                    scope.func.global_writes.append((name, "aug", node_loc(node, self.index)))
            elif scope.kind == "function":
                if old.kind == T.SCALAR and old.dtype == "int" or old.kind == T.UNKNOWN:
                    scope.counters.add(name)
                scope.env[name] = new
            else:
                scope.env[name] = new
        elif isinstance(node.target, ast.Attribute):
            sp = self_path(node.target, scope.self_name)
            if sp is not None and scope.func is not None:
                scope.func.attr_writes.append((sp, "aug", node_loc(node, self.index)))
        self._dispatch(node)

    def _assign_target(self, target: ast.expr, value: ast.expr, ty: Ty, stmt: ast.stmt) -> None:  # noqa: C901
        scope = self.scope
        if isinstance(target, ast.Name):
            name = target.id
            if scope.kind == "function" and isinstance(value, (ast.BoolOp, ast.Call)):
                direct, refs = self._predicate_parts(value)
                if direct or refs:
                    scope.pred_names[name] = (direct, refs)
            # compile / disable applied by assignment: `f = torch.compile(f)`; `g = disable(g)`
            if scope.kind == "class":
                cls = scope.cls
                if cls is not None:
                    spec = spec_from_type(ty, value, cast("Analyzer", self))
                    if spec is not None:
                        cls.attrs.setdefault(name, spec)
                return
            if isinstance(value, ast.Call):
                q = self.qualify(value.func)
                if q == "functools.partial" and value.args and self.qualify(value.args[0]) in COMPILE_FUNCS:
                    key = f"{self.module}.{name}" if scope.kind == "module" and self.module else name
                    opts = self._compile_options(value)
                    self.facts.compile_functions[key] = opts
                    self.facts.compile_functions[name] = opts
                    if scope.kind == "module":
                        self.module_aliases.bind(name, key)
                    return
            if name in scope.globals and scope.func is not None:
                scope.func.global_writes.append((name, "assign", node_loc(stmt, self.index)))
            scope.env[name] = ty
            if scope.kind == "module":
                if (
                    ty.kind == T.SCALAR
                    and ty.dtype == "int"
                    or isinstance(value, (ast.List, ast.Dict))
                    and not getattr(value, "elts", getattr(value, "keys", [1]))
                ):
                    self.facts.int_globals[name] = node_loc(stmt, self.index)
                if name in self.module_aliases.names and ty.kind != T.COMPILED:
                    # re-binding a module-level def name (e.g. `fn = torch.compiler.disable(fn)`)
                    pass
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            elt_ty = element_type(ty, value)
            for i, elt in enumerate(target.elts):
                if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                    self._assign_target(elt, value.elts[i], self.type_of(value.elts[i]), stmt)
                elif (
                    ty.kind == T.DEFERRED
                    and ty.ref
                    and isinstance(value, ast.Call)
                    and not isinstance(elt, ast.Starred)
                ):
                    # `model, opt = build()`: item i of what the project function returns
                    self._bind_target(elt, Ty(T.DEFERRED, ty.conf, None, f"{ty.ref}[{i}]"))
                else:
                    self._bind_target(elt, elt_ty)
            return
        if isinstance(target, ast.Attribute):
            self.expr(target.value)
            if (
                isinstance(target.value, ast.Name)
                and target.value.id != scope.self_name
                and ty.kind != T.UNKNOWN
            ):
                # `holder.fn = torch.compile(f)`: what a local object's attribute holds
                self._attr_stores.add(target.value.id)
                scope.env[f"{target.value.id}.{target.attr}"] = ty
            q = self.qualify(target)
            if q is not None and q.startswith("torch._dynamo.config.") and q.count(".") == 3:
                self.facts.dynamo_config[q.rsplit(".", 1)[1]] = (
                    self._config_value(value),
                    node_loc(stmt, self.index),
                )
            sp = self_path(target, scope.self_name)
            if sp is not None:
                cls = self.ctx.cls
                if scope.func is not None:
                    scope.func.attr_writes.append((sp, "assign", node_loc(stmt, self.index)))
                if cls is not None and "." not in sp:
                    spec = spec_from_type(ty, value, cast("Analyzer", self))
                    fed = (
                        param_fed_spec(
                            value, scope.params, self._class_ref(cls), cast("Analyzer", self), spec.loc
                        )
                        if spec is not None and scope.func is not None and scope.func.name == "__init__"
                        else None
                    )
                    if fed is not None and spec is not None:
                        # `self.flows = nn.ModuleList(flows)`: what the constructions pass (and any
                        # modules the body itself put in the list)
                        own = spec.refs if spec.kind == fed.kind else ()
                        spec = SubmoduleSpec(fed.kind, (*own, *fed.refs), None, fed.loc)
                    elif (
                        spec is not None
                        and (
                            spec.kind == "other"
                            or (spec.kind == "torch" and spec.refs[0] in _GENERIC_MODULES)
                            # `model.to(device).eval()`: `.to()` alone could be a tensor's
                            or (spec.kind == "tensor" and module_only_chain(value))
                            or isinstance(value, (ast.IfExp, ast.BoolOp))
                        )
                        and (fed_by := self._constructor_param(value, scope)) is not None
                    ):
                        # `self.net = net` (or `net.eval()`, `net.to(device)`) in __init__, or in a
                        # setter __init__ hands the parameter to (`self.set_reducer(reducer)`), maybe
                        # with a default (`Default() if reducer is None else reducer`): whatever the
                        # constructor is given, and the default's classes (refs after the first two)
                        spec = SubmoduleSpec(
                            "param", (fed_by[0], self._class_ref(cls), *fed_by[1]), None, spec.loc
                        )
                    if spec is not None:
                        existing = cls.attrs.get(sp)
                        if (
                            existing is not None
                            and existing.kind == "param"
                            and (
                                spec.kind in ("instance", "torch")
                                or (spec.kind == "param" and spec.refs[:2] == existing.refs[:2])
                            )
                        ):
                            # `self.reducer = reducer` in one branch of the setter, `Default() if
                            # reducer is None else reducer` or `Multiple(...)` in others: any of them
                            extra = spec.refs[2:] if spec.kind == "param" else spec.refs
                            existing.refs = tuple(dict.fromkeys([*existing.refs, *extra]))
                        elif (
                            existing is not None
                            and existing.kind in ("instance", "torch")
                            and spec.kind == "param"
                        ):
                            spec.refs = tuple(dict.fromkeys([*spec.refs, *existing.refs]))
                            cls.attrs[sp] = spec
                        elif (
                            existing is not None
                            and existing.kind in ("instance", "torch")
                            and spec.kind in ("instance", "torch")
                        ):
                            # `if cfg.x: self.enc = A(cfg) else: self.enc = B(cfg)`: either class
                            existing.refs = tuple(dict.fromkeys([*existing.refs, *spec.refs]))
                            if spec.kind == "instance":
                                existing.kind = "instance"
                        elif (
                            existing is None
                            or existing.kind in ("other",)
                            # `self.grid = grid` (a constructor argument, None by default) or
                            # `self.grid = self._grid_from_step(step)`: the project closure
                            or (existing.kind == "param" and spec.kind == "deferred")
                            or (
                                scope.func
                                and scope.func.name == "__init__"
                                and existing.kind in ("int", "float", "bool", "str")
                            )
                        ):
                            cls.attrs[sp] = spec
                        if spec.kind == "compiled":
                            pass
            return
        if isinstance(target, ast.Subscript):
            self.expr(target.value)
            self.expr(target.slice)
            return
        if isinstance(target, ast.Starred):
            self._bind_target(target.value, T.T_OTHER)

    def _constructor_param(self, value: ast.expr, scope: Scope) -> tuple[str, tuple[str, ...]] | None:
        """The ``__init__`` parameter whose argument ``self.<attr> = value`` stores (in ``__init__``,
        or in a method ``__init__`` hands it to: ``submodules.setter_params``), with the refs of the
        default it falls back on (``self.get_default_reducer() if reducer is None else reducer``:
        ``deferred:<factory>``; ``MeanReducer()``: the class); None when it stores no parameter."""
        func, cls = scope.func, self.ctx.cls
        if func is None or cls is None:
            return None
        fed = (
            {p: p for p in scope.params}
            if func.name == "__init__"
            else self._setters.get(cls.qualname, {}).get(func.name, {})
        )
        root = chained_module_root(value)
        if isinstance(root, ast.Name):
            return (fed[root.id], ()) if root.id in fed else None
        found = defaulted_param(value, fed)
        if found is None:
            return None
        name, default = found
        dspec = spec_from_type(self.type_of(default), default, cast("Analyzer", self))
        refs: tuple[str, ...] = ()
        if dspec is not None and dspec.kind in ("instance", "torch"):
            refs = dspec.refs
        elif dspec is not None and dspec.kind == "deferred":
            refs = tuple(f"deferred:{r}" for r in dspec.refs)
        return fed[name], refs

    def _config_value(self, value: ast.expr) -> Any:
        """A literal, or for sets/lists of functions (`{print}`) their dotted names."""
        lit = literal(value)
        if lit is not UNEVALUABLE:
            return lit
        if isinstance(value, (ast.Set, ast.List, ast.Tuple)):
            names = [self.qualify(e) or dotted(e) for e in value.elts]
            if all(names):
                return tuple(names)
        return "<expr>"

    def _config_call(self, node: ast.Call) -> None:
        """`torch._dynamo.config.reorderable_logging_functions.add(print)` and `.update({...})`."""
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in ("add", "update", "append", "extend"):
            return
        q = self.qualify(func.value)
        if q is None or not q.startswith("torch._dynamo.config.") or q.count(".") != 3 or not node.args:
            return
        key = q.rsplit(".", 1)[1]
        arg = node.args[0]
        added = (
            (self.qualify(arg) or dotted(arg),) if func.attr in ("add", "append") else self._config_value(arg)
        )
        if not isinstance(added, tuple) or not all(added):
            added = ("<expr>",)
        old = self.facts.dynamo_config.get(key)
        previous = old[0] if old is not None and isinstance(old[0], tuple) else ()
        self.facts.dynamo_config[key] = ((*previous, *added), node_loc(node, self.index))

    def _note_returned_items(self, value: ast.expr | None, first: bool) -> None:
        """``return model, optimizer``: the item types, for ``m, opt = build()`` at call sites."""
        func = self.scope.func
        assert func is not None
        items: tuple[Ty, ...] = ()
        if isinstance(value, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in value.elts):
            items = tuple(self.type_of(e) for e in value.elts)
        if first:
            func.returns_items = items
        elif len(items) == len(func.returns_items):
            func.returns_items = tuple(T.join(a, b) for a, b in zip(func.returns_items, items, strict=True))
        else:
            func.returns_items = ()

    def _bind_target(self, target: ast.expr, ty: Ty) -> None:
        if isinstance(target, ast.Name):
            self.scope.env[target.id] = ty
        elif isinstance(target, (ast.Tuple, ast.List)):
            fields = fields_of(ty) if is_record(ty) else []
            for i, elt in enumerate(target.elts):
                inner = ty if ty.kind in (T.TENSOR, T.UNKNOWN) else T.T_UNKNOWN
                if ty.kind == T.TLIST:
                    inner = Ty(T.TENSOR, ty.conf, ty.dtype)
                if len(fields) == len(target.elts):  # `y0, f0, t0 = rk_state`: field by field
                    inner = Ty(T.TENSOR, ty.conf) if fields[i][1] else T.T_UNKNOWN
                self._bind_target(elt, inner)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, T.T_OTHER)

    def _predicate_parts(self, value: ast.expr) -> tuple[bool, tuple[str, ...]]:
        """(calls a compiling predicate, project functions it may delegate to) for `a() or b()`."""
        parts = value.values if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) else [value]
        direct = False
        refs: list[str] = []
        for part in parts:
            if isinstance(part, ast.Call):
                pq = self.qualify(part.func)
                name = (
                    pq.rsplit(".", 1)[-1] if pq else getattr(part.func, "id", getattr(part.func, "attr", ""))
                )
                if pq in COMPILING_PREDICATES or COMPILING_NAME.search(name or ""):
                    direct = True
                elif pq is not None and not pq.startswith("torch.") and not is_external(pq):
                    refs.append(pq)
        return direct, tuple(refs)

    # ------------------------------------------------------------------ definitions
    def _push_function_scope(
        self, facts: FunctionFacts | None, args: ast.arguments, is_method: bool
    ) -> Scope:
        parent = self.scope
        scope = Scope("function", AliasTable(parent.aliases), parent)
        scope.func = facts
        scope.qualname = facts.qualname if facts is not None else parent.qualname
        if facts is None:
            # a lambda: shares the enclosing function's facts (its candidates belong there)
            scope.func = parent.func
            scope.loops = list(parent.loops)
            scope.cold = list(parent.cold)
            scope.modes = list(parent.modes)
            scope.eager_only = parent.eager_only
            scope.self_name = parent.self_name
            scope.counters = set(parent.counters)
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(
            args.defaults
        )
        params: list[Param] = []
        is_forward = facts is not None and facts.name == "forward" and is_method
        for i, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
            if i == 0 and is_method:
                scope.self_name = arg.arg
                if facts is not None:
                    facts.self_name = arg.arg
                continue
            params.append(self._param(arg, default, "pos", is_forward))
        if args.vararg is not None:
            _, star_ann = self._annotation_type(args.vararg.annotation)  # each item's annotation
            params.append(Param(args.vararg.arg, T.T_OTHER, star_ann, None, "varargs"))
        for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
            params.append(self._param(arg, default, "kwonly", is_forward))
        if args.kwarg is not None:
            _, kw_ann = self._annotation_type(args.kwarg.annotation)  # each value's annotation
            params.append(Param(args.kwarg.arg, T.T_OTHER, kw_ann, None, "varkw"))
        for p in params:
            scope.params[p.name] = p
        if facts is not None:
            facts.params = params
        self.scope = scope
        return scope

    def _param(self, arg: ast.arg, default: ast.expr | None, kind: str, is_forward: bool) -> Param:
        ty, ann_text = self._annotation_type(arg.annotation)
        default_repr = None
        if default is not None:
            value = literal(default)
            default_repr = "<expr>" if value is UNEVALUABLE else repr(value)
            if ty.kind == T.UNKNOWN and value is not UNEVALUABLE and value is not None:
                ty = {bool: T.T_BOOL, int: T.T_INT, float: T.T_FLOAT, str: T.T_STR}.get(
                    type(value), T.T_OTHER
                )
        if (
            ty.kind == T.UNKNOWN
            and is_forward
            and (default is None or default_repr == "None")
            and not NON_TENSOR_PARAM.search(arg.arg)
        ):
            # forward(self, x): its arguments are tensors far more often than not (flags such as
            # `use_cache=None`, caches and configs excepted, by name).
            ty = Ty(T.TENSOR, T.MEDIUM)
        return Param(arg.arg, ty, ann_text, default_repr, kind, loc=node_loc(arg, self.index))

    def _pop_scope(self, scope: Scope) -> None:
        assert self.scope is scope
        self.scope = scope.parent if scope.parent is not None else self.module_scope

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        parent = self.scope
        in_class = parent.kind == "class"
        prefix = parent.qualname + "." if parent.qualname else ""
        if parent.kind == "function":
            prefix = parent.qualname + ".<locals>."
        qualname = f"{prefix}{node.name}"
        accessor = _accessor_of(node) if in_class and qualname in self.facts.functions else None
        if accessor is not None:
            # `@scale.setter def scale(...)` after the getter: its own function, the getter's
            # facts (what a read of the property runs) stay under the property's name
            qualname = f"{qualname}.{accessor}"
        loc = node_loc(node, self.index)
        name_line = node.lineno
        name_col = self.index.line(name_line).find(node.name, self.index.char_col(name_line, node.col_offset))
        name_loc = Loc(name_line, max(name_col, 0), name_line, max(name_col, 0) + len(node.name))
        facts = FunctionFacts(
            qualname=qualname,
            name=node.name,
            loc=loc,
            name_loc=name_loc,
            cls=parent.qualname if in_class else None,
            is_async=isinstance(node, ast.AsyncFunctionDef),
        )
        # `# tclint: compiled` on the def line, a decorator line, or the line just above them.
        head_lines = {node.lineno} | {d.lineno for d in node.decorator_list}
        facts.compile_marker = bool(self.marker_lines & (head_lines | {min(head_lines) - 1}))
        facts.placeholder = in_class and _is_placeholder(node)
        self.facts.functions[qualname] = facts
        if in_class and parent.cls is not None and accessor is None:
            parent.cls.methods[node.name] = qualname
        if parent.kind == "function":
            parent.local_defs[node.name] = qualname
        # decorators are evaluated in the enclosing scope
        decorator_names = []
        for dec in node.decorator_list:
            self.expr(dec)
            decorator_names.append(self._decorator(dec, facts, node))
        facts.decorators = tuple(d for d in decorator_names if d)
        is_static = any(d in ("staticmethod", "builtins.staticmethod") for d in facts.decorators)
        scope = self._push_function_scope(facts, node.args, is_method=in_class and not is_static)
        if in_class and parent.cls is not None:
            scope.cls = None  # ctx.cls walks up to the class scope
        try:
            self._dispatch(node)
            self.block(node.body)
        finally:
            facts.returns = scope.returns if scope.returns is not None else T.T_NONE
            declared = self._annotation_type(node.returns)[0] if node.returns is not None else None
            if declared is not None and declared.kind == T.INSTANCE and declared.ref:
                facts.returns_declared = declared
            self._pop_scope(scope)

    def _class(self, node: ast.ClassDef) -> None:
        parent = self.scope
        prefix = parent.qualname + "." if parent.qualname else ""
        if parent.kind == "function":
            prefix = parent.qualname + ".<locals>."
        qualname = f"{prefix}{node.name}"
        for dec in node.decorator_list:
            self.expr(dec)
        bases = []
        for base in node.bases:
            self.expr(base)
            bases.append(self.qualify(base) or dotted(base) or "")
        is_dataclass = any(
            (self.qualify(d.func if isinstance(d, ast.Call) else d) or "").endswith("dataclass")
            for d in node.decorator_list
        )
        facts = ClassFacts(
            qualname=qualname,
            name=node.name,
            loc=node_loc(node, self.index),
            bases=tuple(bases),
            is_dataclass=is_dataclass,
            decorators=tuple(d for d in (self._class_decorator(dec) for dec in node.decorator_list) if d),
        )
        self.facts.classes[qualname] = facts
        self._setters[qualname] = setter_params(node)
        if parent.kind == "function":
            parent.env[node.name] = Ty(T.FUNC, T.HIGH, None, f"{self.module}.{qualname}")
        scope = Scope("class", parent.aliases, parent)
        scope.cls = facts
        scope.qualname = qualname
        self.scope = scope
        try:
            # __init__ first: it assigns the submodules the other methods use.
            body = sorted(
                node.body,
                key=lambda s: (
                    0
                    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__"
                    else 1
                ),
            )
            for stmt in body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    facts.methods.setdefault(stmt.name, f"{qualname}.{stmt.name}")
            for stmt in body:
                self.stmt(stmt)
        finally:
            self.scope = parent

    def _class_decorator(self, dec: ast.expr) -> tuple[str, bool, str | None] | None:
        """``@register("mlp")`` -> ``("pkg.registry.register", True, "mlp")``, ``@register`` ->
        ``(..., False, None)`` (``ClassFacts.decorators``: what a registry may hold); None when the
        decorator does not name a function."""
        func = dec.func if isinstance(dec, ast.Call) else dec
        q = self.qualify(func)
        if q is None or q.startswith(("torch.", "dataclasses.", "functools.", "typing.")):
            return None
        key = None
        if isinstance(dec, ast.Call):
            named = [k.value for k in dec.keywords if k.arg == "name"]
            first = dec.args[0] if dec.args else (named[0] if named else None)
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                key = first.value if _PLAIN_KEY.fullmatch(first.value) else None
        return q, isinstance(dec, ast.Call), key


# a registry key kept in a type reference (types.REGISTRY): no separator characters
_PLAIN_KEY = re.compile(r"[\w.\-]+")


def _accessor_of(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """``"setter"`` / ``"deleter"`` for ``@<its own name>.setter`` (a property's other accessors,
    which Python defines under the getter's name), else None."""
    for dec in node.decorator_list:
        if (
            isinstance(dec, ast.Attribute)
            and dec.attr in ("setter", "deleter")
            and isinstance(dec.value, ast.Name)
            and dec.value.id == node.name
        ):
            return dec.attr
    return None


def _is_placeholder(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A method subclasses are meant to override: ``@abstractmethod``, or a body of only a
    docstring and ``pass`` / ``...`` / ``raise NotImplementedError``."""
    if any((dotted(d) or "").endswith("abstractmethod") for d in node.decorator_list):
        return True
    body = node.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    if len(body) != 1:
        return not body
    stmt = body[0]
    if isinstance(stmt, ast.Pass) or (
        isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and stmt.value.value is Ellipsis
    ):
        return True
    if isinstance(stmt, ast.Raise) and stmt.exc is not None:
        exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        return (dotted(exc) or "").endswith("NotImplementedError")
    return False


_NUMBER_CALLS = frozenset({"int", "float", "round", "abs", "min", "max"})
_TYPE_TESTS = frozenset({"isinstance", "is_tensor", "torch.is_tensor", "type"})


def _type_tested(test: ast.expr, name: str) -> bool:
    """Whether ``test`` checks the type of the name ``name``: ``isinstance(name, ...)``,
    ``torch.is_tensor(name)``, ``type(name) is ...`` anywhere in it."""
    return any(
        isinstance(sub, ast.Call)
        and dotted(sub.func) in _TYPE_TESTS
        and sub.args
        and isinstance(sub.args[0], ast.Name)
        and sub.args[0].id == name
        for sub in ast.walk(test)
    )


def _ranged(node: ast.expr, ranges: set[str]) -> bool:
    """Whether ``node`` is a sequence of ints made by ``range``: ``range(...)``, ``list(...)``
    / ``tuple(...)`` / ``reversed(...)`` / ``sorted(...)`` of one, or a name bound to one
    (``ranges``: locals, and ``self.<attr>`` for an attribute the class bound to one)."""
    if isinstance(node, ast.Name):
        return node.id in ranges
    if isinstance(node, ast.Attribute):
        return dotted(node) in ranges  # `self.ts`: an attribute its class bound to a range
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return False
    if node.func.id == "range":
        return True
    return (
        node.func.id in ("list", "tuple", "reversed", "sorted")
        and len(node.args) == 1
        and _ranged(node.args[0], ranges)
    )


def _loop_element(it: ast.expr, target: ast.expr) -> tuple[ast.expr, str] | None:
    """(the iterable, the name bound to its items) of ``for t in it`` / ``for i, t in
    enumerate(it)``; None for other targets."""
    if (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "enumerate"
        and it.args
        and isinstance(target, ast.Tuple)
        and len(target.elts) == 2
    ):
        it, target = it.args[0], target.elts[1]
    return (it, target.id) if isinstance(target, ast.Name) else None


def _counter_arithmetic(node: ast.expr, counters: set[str]) -> bool:
    """``node`` is Python arithmetic over a loop counter (``4 + step``, ``base * 0.5 ** step``,
    ``max(1, step // 2)``): names, constants, operators and number builtins only, reading a counter."""
    found = False
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found = found or sub.id in counters
        elif isinstance(sub, ast.Call):
            if not (isinstance(sub.func, ast.Name) and sub.func.id in _NUMBER_CALLS) or sub.keywords:
                return False
        elif not isinstance(sub, (ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop, ast.Load)):
            return False
    return found and not isinstance(node, (ast.Name, ast.Constant))
