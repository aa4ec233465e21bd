"""The rule API: what a rule sees of the walk over one file.

A rule is a class (see ``tclint.rules.rule.Rule``) whose hooks the walker calls:

- ``visit_<Node>(node, ctx)`` for every ``ast`` node of that type, in statement order, and
  ``visit_Condition(cond, ctx)`` for every test of an ``if``/``while``/comprehension filter (a
  pseudo-node, listed in ``PSEUDO_NODES``; ``cond.test`` is the expression);
- ``check_call(node, ctx, qualified_name, method)`` for calls to the names in ``CALLS`` (qualified,
  ``builtins.print`` for builtins) or to the method names in ``METHODS``.

``ctx`` is a ``RuleContext``: where the walk is (``scope``, ``function``, ``cls``, ``in_loop``...),
questions about expressions (``type_of``, ``qualify``, ``compiling_condition``...) and ``report``.
``RuleSet`` builds the dispatch tables from the rule classes once per process.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from tclint.rules import types as T
from tclint.rules.analysis.common import node_loc
from tclint.rules.facts import ClassFacts, FileFacts, FrameEffect, FunctionFacts, Loc, Param, Requirement
from tclint.rules.model import Fix, Severity
from tclint.rules.names import AliasTable, self_path
from tclint.rules.source import LineIndex
from tclint.rules.types import Ty

if TYPE_CHECKING:
    from tclint.rules.analysis.analyzer import Analyzer


class Scope:
    """One function (or the module, or a class body) while it is being walked."""

    __slots__ = (
        "kind", "aliases", "env", "func", "cls", "self_name", "params", "loops", "cold",
        "eager_only", "globals", "nonlocals", "returns", "parent", "local_defs", "counters",
        "qualname", "in_test", "comp_depth", "user_ctx", "tests", "unless", "pred_names", "modes",
        "guards", "ranges", "param_iters",
    )  # fmt: skip

    def __init__(self, kind: str, aliases: AliasTable, parent: Scope | None = None) -> None:
        self.kind = kind
        self.aliases = aliases
        self.env: dict[str, Ty] = {}
        self.func: FunctionFacts | None = None
        self.cls: ClassFacts | None = None
        self.self_name: str | None = None
        self.params: dict[str, Param] = {}
        self.loops: list[int] = []
        self.cold: list[str] = []
        self.eager_only = 0
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()
        self.returns: Ty | None = None
        self.parent = parent
        self.local_defs: dict[str, str] = {}
        self.counters: set[str] = set()
        # names bound to `range(...)` / `list(range(...))`: a loop over one binds a new int each time
        self.ranges: set[str] = set()
        # loop variables over a parameter (`for func in funcs`): the parameter's name, so that a call of
        # one runs each module the callers pass in that container
        self.param_iters: dict[str, str] = {}
        self.qualname = ""
        self.in_test = 0
        self.comp_depth = 0
        self.user_ctx: list[int] = []
        self.tests: list[str] = []  # enclosing if-conditions (source text; "not (...)" in else)
        self.unless: list[str] = []  # project predicates under which this code is not traced
        self.pred_names: dict[
            str, tuple[bool, tuple[str, ...]]
        ] = {}  # locals holding `is_compiling() or ...`
        self.modes: list[
            str | None
        ] = []  # per enclosing `if` branch: "train" / "eval" when it runs only in that mode
        # the operands before the one being walked in the enclosing `and` chains of the current
        # expression (`self.p > 0. and random() < self.p`: the draw runs only when they are true)
        self.guards: list[ast.expr] = []

    def lookup(self, name: str) -> Ty | None:
        scope: Scope | None = self
        while scope is not None:
            if scope.kind != "class":
                ty = scope.env.get(name)
                if ty is not None:
                    return ty
            scope = scope.parent
        return None

    def local_def(self, name: str) -> str | None:
        scope: Scope | None = self
        while scope is not None:
            if scope.kind == "function":
                q = scope.local_defs.get(name)
                if q is not None:
                    return q
            scope = scope.parent
        return None


class RuleContext:
    """What a rule sees of the walk.  One per file; ``scope`` moves as the walker does."""

    def __init__(self, analyzer: Analyzer) -> None:
        self._a = analyzer

    # -- where we are --------------------------------------------------------------------------
    @property
    def scope(self) -> Scope:
        return self._a.scope

    @property
    def function(self) -> FunctionFacts | None:
        return self._a.scope.func

    @property
    def cls(self) -> ClassFacts | None:
        s: Scope | None = self._a.scope
        while s is not None:
            if s.cls is not None:
                return s.cls
            s = s.parent
        return None

    @property
    def self_name(self) -> str | None:
        return self._a.scope.self_name

    @property
    def in_loop(self) -> bool:
        return bool(self._a.scope.loops)

    @property
    def in_test(self) -> bool:
        return self._a.scope.in_test > 0

    def compiling_condition(self, test: ast.expr) -> str | None:
        """'compiling' / 'eager' / 'maybe-compiling:<fn>' / 'maybe-eager:<fn>' for an is_compiling()
        test (see Analyzer._compiling_condition), else None."""
        return self._a._compiling_condition(test)

    @property
    def statement_alone(self) -> bool:
        """The statement being walked is the only one in its block (deleting it needs `pass`)."""
        return self._a._alone[-1]

    @property
    def module(self) -> str:
        return self._a.module

    @property
    def index(self) -> LineIndex:
        return self._a.index

    @property
    def facts(self) -> FileFacts:
        return self._a.facts

    # -- questions ------------------------------------------------------------------------------
    def type_of(self, node: ast.expr) -> Ty:
        return self._a.type_of(node)

    def qualify(self, node: ast.expr) -> str | None:
        return self._a.qualify(node)

    def local_name_for(self, qualified: str) -> str | None:
        """The name this file uses for ``qualified`` (``torch`` -> ``t`` after ``import torch as t``)."""
        for local, q in self._a.facts.aliases.items():
            if q == qualified:
                return local
        table: AliasTable | None = (
            self._a.scope.aliases
        )  # the imports seen so far (facts.aliases is filled at the end)
        while table is not None:
            for local, q in table.names.items():
                if q == qualified:
                    return local
            table = table.parent
        return None

    def segment(self, node: ast.AST) -> str:
        return self._a.segment(node)

    def loc(self, node: ast.AST) -> Loc:
        return node_loc(node, self._a.index)

    def is_self_attr(self, node: ast.expr) -> str | None:
        return self_path(node, self._a.scope.self_name)

    def is_param(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in self._a.scope.params

    def is_global_name(self, name: str) -> bool:
        scope = self._a.scope
        if name in scope.globals:
            return True
        if name in scope.env or name in scope.params:
            return False
        return name in self._a.module_scope.env

    def is_closure_name(self, name: str) -> bool:
        scope = self._a.scope
        if name in scope.env or name in scope.params or name in scope.globals:
            return False
        parent = scope.parent
        while parent is not None and parent.kind != "module":
            if parent.kind == "function" and (name in parent.env or name in parent.params):
                return True
            parent = parent.parent
        return False

    # -- reporting ------------------------------------------------------------------------------
    def report(
        self,
        code: str,
        node: ast.AST | Loc,
        message: str,
        *,
        gb_ids: Iterable[str] = (),
        confidence: int = T.HIGH,
        fix: Fix | None = None,
        help: str | None = None,
        requires: Iterable[Requirement] = (),
        frame: FrameEffect = FrameEffect.RESUMES,
        severity: Severity | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        """A candidate of rule ``code`` at ``node``: kept if its function turns out to be compiled.

        ``confidence`` is ``types.HIGH``/``MEDIUM``/``LOW``; ``requires``: facts about other
        functions that must hold for it to stand (resolved across files); ``frame``: what the
        break does to its frame (``WHOLE_FRAME``: Dynamo gives up on the function, an error
        wherever it is); ``severity``: this finding's severity over the rule's default and the
        heat (the engine decides both in ``severity_and_heat``); ``data``: notes private to the
        rule, for its own ``finalize``."""
        self._a.add_candidate(
            code, node, message, tuple(gb_ids), confidence, fix, help, tuple(requires), data, frame, severity
        )


Visitor = Callable[[Any, RuleContext], None]  # an ast node, or a pseudo-node (Condition)


class RuleSet:
    """Dispatch tables built once from the rule classes (all rules: selection happens later)."""

    def __init__(self, rules: Iterable[Any]) -> None:
        self.rules = list(rules)
        self.visitors: dict[type, list[Visitor]] = {}
        self.calls: dict[str, list[Any]] = {}
        self.methods: dict[str, list[Any]] = {}
        for rule in self.rules:
            for attr in dir(rule):
                if attr.startswith("visit_"):
                    node_type = PSEUDO_NODES.get(attr[6:]) or getattr(ast, attr[6:], None)
                    if isinstance(node_type, type):
                        self.visitors.setdefault(node_type, []).append(getattr(rule, attr))
            for q in rule.CALLS:
                self.calls.setdefault(q, []).append(rule)
            for m in rule.METHODS:
                self.methods.setdefault(m, []).append(rule)


class Condition:
    """A pseudo-node wrapping the test of an if/while/comprehension filter for rule dispatch."""

    __slots__ = ("test",)
    _fields = ("test",)

    def __init__(self, test: ast.expr) -> None:
        self.test = test


# Node types a rule can visit that are not ``ast`` classes: ``visit_<name>`` dispatches on them.
PSEUDO_NODES: dict[str, type] = {"Condition": Condition}
