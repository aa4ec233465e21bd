"""The single walk over one file: structure for the region pass, candidates from every rule.

One ``ast`` parse, one walk in statement order.  Along the way the walker keeps a small abstract
environment per function (which names hold tensors, modules, compiled callables, loop counters),
so rules can ask ``ctx.type_of(expr)`` and ``ctx.qualify(expr)`` cheaply, and it records what the
region pass needs: calls, submodules, compile and disable sites.

Why ``ast`` and not libcst here: positions come for free (libcst needs a metadata pass costing
~1.5x a parse), CPython's parser is ~3x faster than libcst's, and it is the grammar of the
interpreter that will run the code.  libcst is used where concrete syntax matters: fix rewrites.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from typing import Any

from tclint.rules import types as T
from tclint.rules.facts import (
    CallEdge,
    Candidate,
    ClassFacts,
    CompileSite,
    DisableSite,
    FileFacts,
    FunctionFacts,
    Loc,
    Param,
    SubmoduleSpec,
)
from tclint.rules.model import Fix
from tclint.rules.names import AliasTable, canonical, dotted, self_path
from tclint.rules.source import LineIndex
from tclint.rules.types import Ty

COMPILE_FUNCS = frozenset({"torch.compile"})
OPTIMIZE_FUNCS = frozenset({"torch._dynamo.optimize"})
DISABLE_FUNCS = frozenset({"torch.compiler.disable"})
COMPILING_PREDICATES = frozenset({"torch.compiler.is_compiling"})
NOT_TRACED_PREDICATES = frozenset({"torch.jit.is_scripting", "torch.jit.is_tracing", "torch._C._get_tracing_state"})
COMPILING_NAME = re.compile(r"(^|_)is_(torch)?(dynamo_)?compiling$|^is_torchdynamo_compiling$")
COLD_NAME = re.compile(r"debug|verbose|log|trace|profil|print|dump|visuali[sz]|plot|monitor", re.I)
MARKER = re.compile(r"#\s*tclint:\s*compiled\b")
NON_TENSOR_PARAM = re.compile(
    r"^(use|output|return|is|has|do|enable|disable|apply|skip|need|should|with|allow|keep|"
    r"interpolate|train|training|eval|inference|debug|verbose|compute|num|n|max|min)(_|$)|"
    r"(_flag|_mode|_config|config|cfg|cache|caches|cache_position|past_key_values?|kwargs|_kwargs|_fn|_func|"
    r"_name|_type|_idx|_index|_size|_len|_length|_dim|_steps?|_layers?)$|^(layer_idx|mode|name|dim|size|labels?_smoothing)$"
)
CLOCK_CALLS = frozenset(
    {"time.time", "time.perf_counter", "time.monotonic", "time.time_ns", "time.perf_counter_ns",
     "datetime.datetime.now", "uuid.uuid4", "random.random", "random.randint", "os.getpid"}
)  # fmt: skip
HOOK_METHODS = frozenset(
    {"register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
     "register_full_backward_pre_hook", "register_backward_hook"}
)  # fmt: skip
COMPILE_OPTION_KEYS = ("fullgraph", "dynamic", "backend", "mode", "options", "disable", "recompile_limit")


def _loc(node: ast.AST, index: LineIndex) -> Loc:
    line = getattr(node, "lineno", 1)
    end_line = getattr(node, "end_lineno", None) or line
    col = index.char_col(line, getattr(node, "col_offset", 0))
    end_col = index.char_col(end_line, getattr(node, "end_col_offset", None) or 0)
    return Loc(line, col, end_line, end_col)


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _Unevaluable


class _UnevaluableType:
    def __repr__(self) -> str:
        return "<expr>"


_Unevaluable = _UnevaluableType()


class Scope:
    """One function (or the module, or a class body) while it is being walked."""

    __slots__ = (
        "kind", "aliases", "env", "func", "cls", "self_name", "params", "loops", "cold",
        "eager_only", "globals", "nonlocals", "returns", "parent", "local_defs", "counters",
        "qualname", "in_test", "comp_depth", "user_ctx", "tests", "unless", "pred_names",
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
        self.qualname = ""
        self.in_test = 0
        self.comp_depth = 0
        self.user_ctx: list[int] = []
        self.tests: list[str] = []  # enclosing if-conditions (source text; "not (...)" in else)
        self.unless: list[str] = []  # project predicates under which this code is not traced
        self.pred_names: dict[str, tuple[bool, tuple[str, ...]]] = {}  # locals holding `is_compiling() or ...`

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
        return None

    def segment(self, node: ast.AST) -> str:
        return self._a.segment(node)

    def loc(self, node: ast.AST) -> Loc:
        return _loc(node, self._a.index)

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
        requires: Iterable[tuple[str, str]] = (),
        data: dict[str, Any] | None = None,
    ) -> None:
        self._a.add_candidate(code, node, message, tuple(gb_ids), confidence, fix, help, tuple(requires), data)


Visitor = Callable[[ast.AST, RuleContext], None]


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
                    node_type = getattr(ast, attr[6:], None)
                    if isinstance(node_type, type):
                        self.visitors.setdefault(node_type, []).append(getattr(rule, attr))
            for q in rule.CALLS:
                self.calls.setdefault(q, []).append(rule)
            for m in rule.METHODS:
                self.methods.setdefault(m, []).append(rule)


class Analyzer:
    def __init__(
        self,
        text: str,
        path: str,
        module: str,
        is_package: bool,
        root: str,
        ruleset: RuleSet,
        compiling_predicates: Iterable[str] = (),
    ) -> None:
        self.text = text
        self.path = path
        self.module = module
        self.is_package = is_package
        self.index = LineIndex(text)
        self.ruleset = ruleset
        self.facts = FileFacts(path=path, module=module, is_package=is_package, root=root)
        self.module_aliases = AliasTable()
        self.module_scope = Scope("module", self.module_aliases)
        self.module_scope.qualname = ""
        self.scope = self.module_scope
        self.ctx = RuleContext(self)
        self._types: dict[int, Ty] = {}
        self._site_counter = 0
        self.extra_predicates = frozenset(compiling_predicates)
        self.marker_lines = self._marker_lines()
        self._alone: list[bool] = [False]  # per open block: does it hold a single statement?

    def segment(self, node: ast.AST) -> str:
        """Source text of a node.  (``ast.get_source_segment`` re-splits the whole file on every
        call: quadratic on large files.)"""
        line = getattr(node, "lineno", None)
        end_line = getattr(node, "end_lineno", None)
        if line is None or end_line is None:
            return ""
        index = self.index
        start = index.offset(line, index.char_col(line, node.col_offset))  # type: ignore[attr-defined]
        end = index.offset(end_line, index.char_col(end_line, node.end_col_offset or 0))  # type: ignore[attr-defined]
        return self.text[start:end]

    # ------------------------------------------------------------------ entry
    def run(self, tree: ast.Module) -> FileFacts:
        self.facts.line_count = self.index.line_count
        self.facts.mentions_torch = "torch" in self.text
        self._prebind(tree.body, self.module_scope, "")
        for stmt in tree.body:
            self.stmt(stmt)
        self.facts.aliases = dict(self.module_aliases.names)
        self.facts.module_vars = {k: v for k, v in self.module_scope.env.items() if v.kind != T.UNKNOWN}
        return self.facts

    def _marker_lines(self) -> set[int]:
        if "tclint:" not in self.text:
            return set()
        out = set()
        for i, start in enumerate(self.index.starts, start=1):
            end = self.index.starts[i] if i < len(self.index.starts) else len(self.text)
            if MARKER.search(self.text, start, end):
                out.add(i)
        return out

    def _prebind(self, body: list[ast.stmt], scope: Scope, prefix: str) -> None:
        """Bind module-level names before walking, so functions can call what is defined later."""
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{self.module}.{prefix}{stmt.name}" if self.module else f"{prefix}{stmt.name}"
                self.module_aliases.bind(stmt.name, qual)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                self.module_aliases.add_import(stmt, self.module, self.is_package)
            elif isinstance(stmt, (ast.If, ast.Try)):
                # `try: import x / except ImportError` and `if TYPE_CHECKING:` blocks.
                for sub in (stmt.body, getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])):
                    self._prebind(sub, scope, prefix)
                for handler in getattr(stmt, "handlers", []):
                    self._prebind(handler.body, scope, prefix)

    # ------------------------------------------------------------------ candidates
    def add_candidate(
        self,
        code: str,
        node: ast.AST | Loc,
        message: str,
        gb_ids: tuple[str, ...],
        confidence: int,
        fix: Fix | None,
        help: str | None,
        requires: tuple[tuple[str, str], ...],
        data: dict[str, Any] | None,
    ) -> None:
        scope = self.scope
        if scope.eager_only:
            return  # this code never runs under torch.compile
        loc = node if isinstance(node, Loc) else _loc(node, self.index)
        func = scope.func.qualname if scope.func is not None else None
        self.facts.candidates.append(
            Candidate(
                code=code,
                func=func,
                loc=loc,
                message=message,
                gb_ids=gb_ids,
                confidence=confidence,
                loop_line=scope.loops[-1] if scope.loops else None,
                cold=scope.cold[-1] if scope.cold else None,
                requires=requires + tuple(("unless_predicate", ref) for ref in scope.unless),
                fix=fix,
                help=help,
                data=({**(data or {}), "user_ctx": scope.user_ctx[-1]} if scope.user_ctx else (data or {})),
            )
        )

    def _dispatch(self, node: ast.AST) -> None:
        visitors = self.ruleset.visitors.get(type(node))
        if visitors:
            for visit in visitors:
                visit(node, self.ctx)

    # ------------------------------------------------------------------ names & types
    def qualify(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            scope = self.scope
            # a local variable shadows imports only if it is not an alias itself
            if node.id in scope.params or (scope.kind == "function" and node.id in scope.env):
                return None
            local = scope.local_def(node.id)
            if local is not None:
                return None
            return canonical(scope.aliases.lookup(node.id))
        if isinstance(node, ast.Attribute):
            base = node
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name):
                scope = self.scope
                if base.id in scope.params or (scope.kind == "function" and base.id in scope.env):
                    return None
                q = scope.aliases.qualify(node)
                return canonical(q)
        return None

    def type_of(self, node: ast.expr) -> Ty:
        ty = self._types.get(id(node))
        if ty is None:
            ty = self._eval_type(node)
            self._types[id(node)] = ty
        return ty

    def _name_type(self, name: str) -> Ty:
        scope = self.scope
        ty = scope.lookup(name)
        if ty is not None:
            return ty
        s: Scope | None = scope
        while s is not None:
            p = s.params.get(name)
            if p is not None:
                return p.ty
            s = s.parent
        q = canonical(scope.aliases.lookup(name))
        if q is not None:
            return Ty(T.FUNC, T.HIGH, None, q)
        local = scope.local_def(name)
        if local is not None:
            return Ty(T.FUNC, T.HIGH, None, "<local>" + local)
        return T.T_UNKNOWN

    def _self_attr_type(self, path: str) -> Ty:
        cls = self.ctx.cls
        if cls is None:
            return T.T_UNKNOWN
        head, _, rest = path.partition(".")
        spec = cls.attrs.get(head)
        if spec is None:
            if head == "training":
                return T.T_BOOL
            return T.T_UNKNOWN
        if rest:
            if spec.kind == "tensor":
                return self._tensor_attr(rest.split(".")[-1], Ty(T.TENSOR))
            return T.T_UNKNOWN
        return _spec_type(spec, f"{self._class_ref(cls)}|{head}")

    def _class_ref(self, cls: ClassFacts) -> str:
        return f"{self.module}.{cls.qualname}" if self.module else cls.qualname

    def _tensor_attr(self, attr: str, base: Ty) -> Ty:
        if attr == "shape":
            return Ty(T.SIZE, base.conf)
        if attr in T.TENSOR_META_ATTRS:
            return Ty(T.SCALAR, base.conf, "bool" if attr.startswith("is_") or attr == "requires_grad" else "other")
        return Ty(T.TENSOR, base.conf, base.dtype)

    def _eval_type(self, node: ast.expr) -> Ty:  # noqa: C901 - one dispatch over node kinds
        if isinstance(node, ast.Constant):
            v = node.value
            if v is None:
                return T.T_NONE
            if isinstance(v, bool):
                return T.T_BOOL
            if isinstance(v, int):
                return T.T_INT
            if isinstance(v, float):
                return T.T_FLOAT
            if isinstance(v, str):
                return T.T_STR
            return Ty(T.SCALAR, T.HIGH, "other")
        if isinstance(node, ast.Name):
            return self._name_type(node.id)
        if isinstance(node, ast.Attribute):
            sp = self_path(node, self.scope.self_name)
            if sp is not None:
                return self._self_attr_type(sp)
            q = self.qualify(node)
            if q is not None:
                if q.startswith("torch.") and q.rsplit(".", 1)[-1] in T.DTYPE_NAMES:
                    return Ty(T.SCALAR, T.HIGH, "dtype")
                return Ty(T.FUNC, T.HIGH, None, q)
            base = self.type_of(node.value)
            if base.kind == T.TENSOR:
                return self._tensor_attr(node.attr, base)
            if base.kind == T.SIZE:
                return T.T_INT
            if base.kind == T.MODULE and node.attr in ("weight", "bias"):
                return Ty(T.TENSOR, T.MEDIUM, "float")
            if base.kind == T.INSTANCE and node.attr in ("shape",):
                return T.T_SIZE
            if node.attr in ("shape",) and base.kind == T.UNKNOWN:
                return Ty(T.SIZE, T.MEDIUM)
            if node.attr == "training":
                return T.T_BOOL
            return T.T_UNKNOWN
        if isinstance(node, ast.Call):
            return self._call_type(node)
        if isinstance(node, ast.BinOp):
            left, right = self.type_of(node.left), self.type_of(node.right)
            return _binop_type(left, right, node.op)
        if isinstance(node, ast.Compare):
            tys = [self.type_of(node.left)] + [self.type_of(c) for c in node.comparators]
            if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
                return T.T_BOOL
            tensors = [t for t in tys if t.kind == T.TENSOR]
            if tensors:
                return Ty(T.TENSOR, min(t.conf for t in tensors), "bool")
            dynamic = [t for t in tys if t.kind == T.SCALAR and t.dtype in T.DATA_DEPENDENT_SCALARS]
            if dynamic:
                return dynamic[0]
            deferred = [t for t in tys if t.kind == T.DEFERRED]
            if deferred and all(t.kind in (T.DEFERRED, T.SCALAR, T.UNKNOWN) for t in tys):
                return deferred[0]
            return T.T_BOOL if all(t.kind in (T.SCALAR, T.SIZE) for t in tys) else T.T_UNKNOWN
        if isinstance(node, ast.UnaryOp):
            operand = self.type_of(node.operand)
            if isinstance(node.op, ast.Not):
                return T.T_BOOL
            return operand
        if isinstance(node, ast.BoolOp):
            tys = [self.type_of(v) for v in node.values]
            result = tys[-1]
            for t in tys[:-1]:
                result = T.join(result, t)
            return result
        if isinstance(node, ast.IfExp):
            return T.join(self.type_of(node.body), self.type_of(node.orelse))
        if isinstance(node, ast.Subscript):
            base = self.type_of(node.value)
            if base.kind == T.TENSOR:
                return Ty(T.TENSOR, base.conf, base.dtype)
            if base.kind == T.SIZE:
                if isinstance(node.slice, ast.Slice):
                    return Ty(T.SIZE, base.conf)
                return Ty(T.SCALAR, base.conf, "int")
            if base.kind == T.TLIST:
                if isinstance(node.slice, ast.Slice):
                    return base
                return Ty(T.TENSOR, base.conf, base.dtype)
            if base.kind == T.MODLIST:
                if isinstance(node.slice, ast.Slice):
                    return base  # self.layers[: n] is still the container
                return Ty(T.ELEM, base.conf, None, base.ref)
            if base.kind == T.DEFERRED:
                return base
            if base.kind == T.CONTAINER and base.dtype == "tolist":
                return Ty(T.SCALAR, base.conf, "number")
            return T.T_UNKNOWN
        if isinstance(node, ast.JoinedStr):
            return T.T_STR
        if isinstance(node, (ast.List, ast.Tuple)):
            elts = [self.type_of(e) for e in node.elts if not isinstance(e, ast.Starred)]
            if elts and all(e.kind == T.TENSOR for e in elts):
                return Ty(T.TLIST, max(e.conf for e in elts))
            if isinstance(node, ast.Tuple) and elts and all(e.kind == T.SCALAR and e.dtype == "int" for e in elts):
                return T.T_SIZE
            return T.T_OTHER
        if isinstance(node, (ast.Dict, ast.Set, ast.DictComp, ast.SetComp)):
            return T.T_OTHER
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            elt = self.type_of(node.elt)
            if elt.kind == T.TENSOR:
                return Ty(T.TLIST, elt.conf, elt.dtype)
            return T.T_OTHER
        if isinstance(node, ast.NamedExpr):
            return self.type_of(node.value)
        if isinstance(node, ast.Lambda):
            return Ty(T.FUNC, T.HIGH, None, "<lambda>")
        if isinstance(node, ast.Await):
            return self.type_of(node.value)
        return T.T_UNKNOWN

    def _dtype_kw(self, node: ast.Call) -> str | None:
        for kw in node.keywords:
            if kw.arg == "dtype":
                return _dtype_of(kw.value)
        return None

    def _call_type(self, node: ast.Call) -> Ty:  # noqa: C901
        func = node.func
        q = self.qualify(func)
        if q is not None:
            if q.startswith("torch."):
                if q in ("torch.where",) and len(node.args) == 1:
                    return Ty(T.TLIST, T.HIGH, "int")
                return T.torch_call_result(q, self._dtype_kw(node))
            if q in ("builtins.len", "len"):
                return T.T_INT
            if q in T.PY_RANDOM_VALUES:
                return Ty(T.SCALAR, T.HIGH, "random")
            if q == "logging.getLogger" or q.endswith((".get_logger", "logging.getLogger")) or q == "logging.root":
                return Ty(T.INSTANCE, T.HIGH, None, "logging.Logger")
            if q.startswith("math.") and node.args:
                arg = self.type_of(node.args[0])
                if arg.kind == T.SCALAR and arg.dtype in T.DATA_DEPENDENT_SCALARS:
                    return arg
                return T.T_FLOAT
            if q.startswith(("numpy.", "np.")):
                return T.T_OTHER
            return self._project_call_type(q, node)
        if isinstance(func, ast.Name):
            name = func.id
            local = self.scope.local_def(name)
            if local is not None:
                return Ty(T.DEFERRED, T.MEDIUM, None, f"{self.module}.{local}" if self.module else local)
            ty = self._name_type(name)
            if ty.kind in (T.MODULE, T.ELEM):
                return Ty(T.TENSOR, T.MEDIUM if ty.kind == T.ELEM or not (ty.ref or "").startswith("torch.") else T.HIGH)
            if ty.kind == T.MODLIST:
                return Ty(T.TENSOR, T.MEDIUM)
            if ty.kind == T.COMPILED:
                return Ty(T.TENSOR, T.MEDIUM)
            if ty.kind == T.INSTANCE:
                return Ty(T.TENSOR, T.MEDIUM if (ty.ref or "")[:1] != "<" else T.LOW)
            if name in ("len", "id", "hash", "ord"):
                return T.T_INT
            if name == "open":
                return Ty(T.INSTANCE, T.HIGH, None, "<file>")
            if name in ("int", "float", "bool", "round") and node.args:
                arg = self.type_of(node.args[0])
                if arg.kind == T.TENSOR or (arg.kind == T.SCALAR and arg.dtype in T.DATA_DEPENDENT_SCALARS):
                    return Ty(T.SCALAR, arg.conf, "item" if arg.kind == T.TENSOR else arg.dtype)
            if name in ("int", "round"):
                return T.T_INT
            if name == "float":
                return T.T_FLOAT
            if name in ("bool", "isinstance", "hasattr", "callable", "issubclass", "all", "any"):
                if name in ("all", "any") and node.args and self.type_of(node.args[0]).kind == T.TENSOR:
                    return T.T_BOOL
                return T.T_BOOL
            if name in ("str", "repr", "format"):
                return T.T_STR
            if name in ("list", "tuple", "sorted", "reversed"):
                if node.args:
                    inner = self.type_of(node.args[0])
                    if inner.kind in (T.TLIST, T.TENSOR):
                        return Ty(T.TLIST, inner.conf, inner.dtype)
                    if inner.kind == T.SIZE:
                        return T.T_SIZE
                return T.T_OTHER
            if name in ("dict", "set", "zip", "enumerate", "range", "map", "filter", "super", "iter", "vars", "dir"):
                return T.T_OTHER
            if name in ("sum", "max", "min", "abs"):
                tys = [self.type_of(a) for a in node.args]
                if any(t.kind in (T.TENSOR, T.TLIST) for t in tys):
                    return Ty(T.TENSOR, max(t.conf for t in tys if t.kind in (T.TENSOR, T.TLIST)))
                return Ty(T.SCALAR, T.MEDIUM, "number") if tys and all(t.kind == T.SCALAR for t in tys) else T.T_UNKNOWN
            if name == "getattr":
                return T.T_UNKNOWN
            return T.T_UNKNOWN
        if isinstance(func, ast.Attribute):
            method = func.attr
            sp = self_path(func, self.scope.self_name)
            if sp is not None:
                head = sp.split(".", 1)[0]
                owner_ty = self._self_attr_type(head)
                if "." not in sp:
                    cls = self.ctx.cls
                    if cls is not None and owner_ty.kind in (T.MODULE, T.MODLIST, T.COMPILED):
                        torch_module = owner_ty.kind == T.MODULE and (owner_ty.ref or "").startswith("torch.nn.")
                        return Ty(T.TENSOR, T.HIGH if torch_module else T.MEDIUM)
                    if cls is not None and owner_ty.kind == T.FUNC:
                        return T.T_UNKNOWN
                    if cls is not None and owner_ty.kind == T.UNKNOWN:
                        # self.method(...): a method of this class (maybe inherited)
                        return Ty(T.DEFERRED, T.MEDIUM, None, f"{self._class_ref(cls)}.{method}")
            receiver = self.type_of(func.value)
            if receiver.kind == T.TENSOR:
                return T.tensor_method_result(method, receiver, self._method_dtype(node))
            if receiver.kind in (T.MODULE, T.ELEM, T.COMPILED) and method in ("forward", "__call__"):
                return Ty(T.TENSOR, T.MEDIUM)
            if receiver.kind == T.TLIST and method in ("index",):
                return T.T_INT
            if receiver.kind == T.SIZE and method in ("numel",):
                return T.T_INT
            if receiver.kind == T.UNKNOWN and method in T.TENSORISH_METHODS:
                base = _tensorish_root(func.value)
                if base is not None and self._looks_like_python_container(base):
                    return T.T_UNKNOWN
                conf = T.MEDIUM
                return T.tensor_method_result(method, Ty(T.TENSOR, conf), self._method_dtype(node))
            if receiver.kind == T.CONTAINER and receiver.dtype == "tolist":
                return T.T_UNKNOWN
            return T.T_UNKNOWN
        return T.T_UNKNOWN

    def _looks_like_python_container(self, node: ast.expr) -> bool:
        ty = self.type_of(node)
        return ty.kind in (T.CONTAINER, T.SCALAR, T.SIZE)

    def _method_dtype(self, node: ast.Call) -> str | None:
        kw = self._dtype_kw(node)
        if kw is not None:
            return kw
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "type") and node.args:
            return _dtype_of(node.args[0])
        return None

    def _project_call_type(self, q: str, node: ast.Call) -> Ty:
        head, _, last = q.rpartition(".")
        if head and head.rsplit(".", 1)[-1][:1].isupper() and (last.startswith(("from_", "_from_")) or last in ("build", "create")):
            return Ty(T.INSTANCE, T.HIGH, None, head)  # Model.from_config(cfg): an instance of Model
        if last[:1].isupper():
            # Constructing a class: a project module, an external model class, a dataclass...
            return Ty(T.INSTANCE, T.HIGH, None, q)
        return Ty(T.DEFERRED, T.MEDIUM, None, q)

    # ------------------------------------------------------------------ expressions
    def expr(self, node: ast.expr | None) -> Ty:
        """Walk an expression: types for its sub-expressions, rules for every node, facts for calls."""
        if node is None:
            return T.T_UNKNOWN
        stack: list[tuple[ast.AST, bool]] = [(node, False)]
        # Iterative post-order walk: deeply nested expressions (fuzzed or generated code) must not
        # exhaust the interpreter's recursion limit.
        while stack:
            current, visited = stack.pop()
            if visited:
                self._finish_expr(current)
                continue
            if isinstance(current, ast.Lambda):
                self._lambda(current)
                continue
            if isinstance(current, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                self._comprehension(current)
                continue
            stack.append((current, True))
            children = [c for c in ast.iter_child_nodes(current) if isinstance(c, ast.expr)]
            for child in reversed(children):
                stack.append((child, False))
            for kw in getattr(current, "keywords", ()) or ():
                if isinstance(kw, ast.keyword):
                    stack.append((kw.value, False))
        return self.type_of(node)

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
                self._bind_target(gen.target, _element_type(it, gen.iter))
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

    # ------------------------------------------------------------------ calls
    def _call(self, node: ast.Call) -> None:  # noqa: C901
        scope = self.scope
        func = node.func
        q = self.qualify(func)
        method = func.attr if isinstance(func, ast.Attribute) else None
        # rule dispatch by target
        rules: list[Any] = []
        if q is not None:
            rules.extend(self.ruleset.calls.get(q, ()))
        if method is not None:
            for rule in self.ruleset.methods.get(method, ()):
                if rule not in rules:
                    rules.append(rule)
        elif isinstance(func, ast.Name):
            for rule in self.ruleset.calls.get("builtins." + func.id, ()):
                if rule not in rules and q is None:
                    rules.append(rule)
        for rule in rules:
            rule.check_call(node, self.ctx, q, method)

        # parameter uses: range(p), len(p)
        if isinstance(func, ast.Name) and q is None and func.id in ("range", "len"):
            for arg in node.args:
                self._note_param_use(arg, func.id)

        if method in ("add", "update", "append", "extend"):
            self._config_call(node)
        if method in ("append", "extend", "insert") and isinstance(func, ast.Attribute) and node.args:
            sp = self_path(func.value, scope.self_name)
            cls = self.ctx.cls
            if sp is not None and "." not in sp and cls is not None:
                spec = cls.attrs.get(sp)
                if spec is not None and spec.kind in ("list", "seq"):
                    arg = node.args[-1]
                    items = arg.elts if isinstance(arg, (ast.List, ast.Tuple)) and method == "extend" else [arg]
                    refs = [t.ref for t in (self.type_of(i) for i in items) if t.kind in (T.MODULE, T.INSTANCE) and t.ref]
                    if refs:
                        spec.refs = tuple(dict.fromkeys([*spec.refs, *refs]))
        if method == "register_buffer" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id == scope.self_name and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            cls = self.ctx.cls
            if cls is not None:
                cls.attrs[node.args[0].value] = SubmoduleSpec("tensor", ("buffer",), None, _loc(node, self.index))
        if q is not None:
            if q in COMPILE_FUNCS or q in self.facts.compile_functions:
                self._compile_call(node, q)
                return
            if q in OPTIMIZE_FUNCS:
                return  # handled where it is applied: torch._dynamo.optimize(...)(fn)
            if q in DISABLE_FUNCS:
                if node.args:
                    target = self._target_ref(node.args[0])
                    if target is not None:
                        self.facts.disable_sites.append(
                            DisableSite(target, _kw_bool(node, "recursive", True), _loc(node, self.index))
                        )
                return
            if q == "torch.library.custom_op":
                return
            if q in ("torch.library.opcheck", "torch.compiler.allow_in_graph") and node.args:
                ref = self._target_ref(node.args[0]) or dotted(node.args[0]) or ""
                self.facts.api_calls.setdefault(q, []).append(ref)
                if q == "torch.compiler.allow_in_graph" and ref:
                    self.facts.allow_in_graph.append(DisableSite(ref, True, _loc(node, self.index)))
                return
            if q.startswith("torch.") or _is_external(q):
                # function references passed into torch APIs that call them (checkpoint, vmap, cond)
                for arg in node.args:
                    self._maybe_ref_edge(arg, node)
                return
            edge = self._edge("name", q, "__call__", node)
            if edge is not None and node.args and isinstance(node.args[0], (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
                # in case the callee wraps torch.compile (`maybe_compile(model)`)
                edge.arg0 = self._describe_target(node.args[0])
            for arg in node.args:
                self._maybe_ref_edge(arg, node)
            return
        if isinstance(func, ast.Call):
            inner_q = self.qualify(func.func)
            if inner_q in OPTIMIZE_FUNCS or inner_q in COMPILE_FUNCS or inner_q in self.facts.compile_functions:
                # torch._dynamo.optimize("inductor")(fn) / torch.compile(**kw)(fn)
                self._compile_call(node, inner_q or "torch.compile", options_from=func)
                return
            if inner_q in DISABLE_FUNCS:
                if node.args:
                    target = self._target_ref(node.args[0])
                    if target is not None:
                        self.facts.disable_sites.append(
                            DisableSite(target, _kw_bool(func, "recursive", True), _loc(node, self.index))
                        )
                return
        if isinstance(func, ast.Name):
            local = scope.local_def(func.id)
            if local is not None:
                self._edge("local", local, "__call__", node)
                return
            if scope.func is not None and func.id not in scope.params and func.id not in scope.env:
                outer = scope.parent
                while outer is not None and outer.kind == "function":
                    if func.id in outer.params:
                        scope.func.calls_outer_param = True  # a decorator's wrapper calling `func(...)`
                        break
                    outer = outer.parent
            ty = self._name_type(func.id)
            self._edge_for_value(ty, "__call__", node)
            for arg in node.args:
                self._maybe_ref_edge(arg, node)
            return
        if isinstance(func, ast.Attribute):
            # module.compile() : regional / whole-model compilation through nn.Module.compile
            if method == "compile" and self._looks_like_module_compile(node):
                self._method_compile(node)
                return
            sp = self_path(func.value, scope.self_name)
            if isinstance(func.value, ast.Name) and func.value.id == scope.self_name:
                # self.method(...) or self.attr(...)
                self._edge("self", func.attr, "__call__", node)
                return
            if sp is not None:
                # self.attn.forward(x), self.layers[0] handled below
                self._edge("self", sp, method or "__call__", node)
                return
            if isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name) and func.value.func.id == "super":
                self._edge("super", "", method or "__call__", node)
                return
            if method in HOOK_METHODS:
                # the hook runs inside the compiled code that calls the module
                for arg in node.args:
                    self._maybe_ref_edge(arg, node)
            recv = self.type_of(func.value)
            if recv.kind in (T.MODULE, T.INSTANCE, T.ELEM, T.MODLIST, T.COMPILED, T.DEFERRED):
                self._edge_for_value(recv, method or "__call__", node)
            return
        if isinstance(func, ast.Subscript):
            # self.layers[i](x)
            base_sp = self_path(func.value, scope.self_name)
            if base_sp is not None:
                self._edge("elem", base_sp, "__call__", node)
            else:
                recv = self.type_of(func.value)
                if recv.kind == T.MODLIST and recv.ref:
                    self._edge_for_value(Ty(T.ELEM, recv.conf, None, recv.ref), "__call__", node)

    def _looks_like_module_compile(self, node: ast.Call) -> bool:
        func = node.func
        assert isinstance(func, ast.Attribute)
        if self.qualify(func.value) is not None:
            return False  # re.compile(...), regex.compile(...), torch.compile handled elsewhere
        if node.args:
            return False
        if any(kw.arg not in COMPILE_OPTION_KEYS for kw in node.keywords):
            return False
        recv = self.type_of(func.value)
        if recv.kind in (T.MODULE, T.ELEM, T.INSTANCE, T.DEFERRED):
            return True
        return self_path(func.value, self.scope.self_name) is not None or isinstance(func.value, ast.Name)

    def _edge(self, kind: str, target: str, method: str, node: ast.Call, elem_count: int | None = None) -> CallEdge | None:
        scope = self.scope
        if scope.eager_only:
            return None
        edge = CallEdge(
            kind=kind,
            target=target,
            method=method,
            loc=_loc(node, self.index),
            in_loop=bool(scope.loops),
            cold=scope.cold[-1] if scope.cold else None,
            args=self._arg_kinds(node),
            elem_count=elem_count,
            unless=scope.unless[-1] if scope.unless else None,
        )
        if scope.func is not None:
            scope.func.calls.append(edge)
        else:
            self.facts.module_calls.append(edge)
        return edge

    def _edge_for_value(self, ty: Ty, method: str, node: ast.Call) -> None:
        if ty.ref is None:
            return
        if ty.kind == T.ELEM:
            self._edge("elem", ty.ref, method, node)
        elif ty.kind in (T.MODULE, T.INSTANCE):
            self._edge("instance", ty.ref, method, node)
        elif ty.kind == T.MODLIST:
            self._edge("elem", ty.ref, method, node)
        elif ty.kind == T.DEFERRED:
            self._edge("deferred", ty.ref, method, node)
        elif ty.kind == T.COMPILED:
            self._edge("compiled", ty.ref, method, node)
        elif ty.kind == T.FUNC and not ty.ref.startswith("<"):
            self._edge("name", ty.ref, method, node)
        elif ty.kind == T.FUNC and ty.ref.startswith("<local>"):
            self._edge("local", ty.ref[7:], method, node)

    def _maybe_ref_edge(self, arg: ast.expr, node: ast.Call) -> None:
        """A project function passed as a value is usually called by the callee (checkpoint, map)."""
        if isinstance(arg, ast.Name):
            local = self.scope.local_def(arg.id)
            if local is not None:
                self._edge("local", local, "__call__", node)
                return
            q = self.qualify(arg)
            if q is not None and not q.startswith("torch.") and not _is_external(q) and q.rsplit(".", 1)[-1][:1].islower():
                self._edge("ref", q, "__call__", node)
        elif isinstance(arg, ast.Attribute):
            sp = self_path(arg, self.scope.self_name)
            if sp is not None and "." not in sp:
                self._edge("self", sp, "__call__", node)

    def _arg_kinds(self, node: ast.Call) -> tuple[tuple[str, str], ...]:
        out = []
        for i, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                out.append((f"#{i}", "starred"))
                break
            out.append((f"#{i}", self._arg_kind(arg)))
        for kw in node.keywords:
            if kw.arg is not None:
                out.append((kw.arg, self._arg_kind(kw.value)))
        return tuple(out)

    def _arg_kind(self, arg: ast.expr) -> str:  # noqa: C901
        scope = self.scope
        if isinstance(arg, ast.Constant):
            return "const:" + repr(arg.value)[:40]
        if isinstance(arg, ast.JoinedStr):
            return "fstring"
        if isinstance(arg, ast.Name):
            if arg.id in scope.counters:
                return "counter"
            ty = self.type_of(arg)
            if ty.kind == T.TENSOR:
                return "tensor"
            if ty.kind == T.SCALAR and ty.dtype == "bool":
                return "bool"
            return "name:" + arg.id
        if isinstance(arg, ast.Call):
            q = self.qualify(arg.func)
            if q in CLOCK_CALLS:
                return "clock"
            if isinstance(arg.func, ast.Name) and arg.func.id == "len" and q is None:
                return "len"
            if isinstance(arg.func, ast.Name) and arg.func.id in ("str", "int", "float") and arg.args:
                inner = self._arg_kind(arg.args[0])
                if inner in ("counter", "len", "clock"):
                    return inner
            ty = self.type_of(arg)
            return "tensor" if ty.kind == T.TENSOR else "call"
        if isinstance(arg, ast.BinOp):
            kinds = {self._arg_kind(arg.left), self._arg_kind(arg.right)}
            for k in ("counter", "len", "clock", "fstring"):
                if k in kinds:
                    return k
            ty = self.type_of(arg)
            return "tensor" if ty.kind == T.TENSOR else "expr"
        if isinstance(arg, ast.Attribute):
            ty = self.type_of(arg)
            if ty.kind == T.TENSOR:
                return "tensor"
            return "attr:" + (dotted(arg) or arg.attr)
        ty = self.type_of(arg)
        if ty.kind == T.TENSOR:
            return "tensor"
        return "expr"

    # ------------------------------------------------------------------ compile sites
    def _new_site_id(self) -> str:
        self._site_counter += 1
        return f"{self.module}#{self._site_counter}"

    def _compile_options(self, node: ast.Call | None, base_q: str | None = None) -> dict[str, Any]:
        opts: dict[str, Any] = {}
        if base_q is not None and base_q in self.facts.compile_functions:
            opts.update(self.facts.compile_functions[base_q])
        if node is None:
            return opts
        for kw in node.keywords:
            if kw.arg in COMPILE_OPTION_KEYS:
                value = _literal(kw.value)
                opts[kw.arg] = "<expr>" if value is _Unevaluable else value
        if base_q in OPTIMIZE_FUNCS and node.args:
            value = _literal(node.args[0])
            opts["backend"] = "<expr>" if value is _Unevaluable else value
        return opts

    def _compile_call(self, node: ast.Call, q: str, options_from: ast.Call | None = None) -> None:
        """``torch.compile(target, ...)``; a bare ``torch.compile(**kw)`` returns a decorator."""
        options = self._compile_options(options_from if options_from is not None else node, q)
        if options_from is None and q in OPTIMIZE_FUNCS:
            return
        if not node.args:
            # torch.compile(mode=...) used as a decorator factory: handled at the decorator.
            return
        target = node.args[0]
        kind, ref, meth = self._describe_target(target)
        site = CompileSite(
            id=self._new_site_id(),
            how="optimize" if q in OPTIMIZE_FUNCS else ("partial" if q in self.facts.compile_functions else "call"),
            target_kind=kind,
            ref=ref,
            method=meth,
            loc=_loc(node, self.index),
            func=self.scope.func.qualname if self.scope.func else None,
            owner=self._owner_ref(),
            options=options,
            text=self._short(node),
            in_loop=bool(self.scope.loops),
        )
        self.facts.compile_sites.append(site)
        self._types[id(node)] = Ty(T.COMPILED, T.HIGH, None, site.id)

    def _method_compile(self, node: ast.Call) -> None:
        func = node.func
        assert isinstance(func, ast.Attribute)
        kind, ref, meth = self._describe_target(func.value)
        site = CompileSite(
            id=self._new_site_id(),
            how="method",
            target_kind=kind,
            ref=ref,
            method=meth,
            loc=_loc(node, self.index),
            func=self.scope.func.qualname if self.scope.func else None,
            owner=self._owner_ref(),
            options=self._compile_options(node),
            text=self._short(node),
            in_loop=bool(self.scope.loops),
        )
        self.facts.compile_sites.append(site)

    def _owner_ref(self) -> str | None:
        cls = self.ctx.cls
        return self._class_ref(cls) if cls is not None else None

    def _short(self, node: ast.AST) -> str:
        text = " ".join(self.segment(node).split())
        return text if len(text) <= 80 else text[:77] + "..."

    def _describe_target(self, target: ast.expr) -> tuple[str, str | None, str | None]:  # noqa: C901
        scope = self.scope
        if isinstance(target, ast.Lambda):
            qual = self._lambda_function(target)
            return "local", qual, None
        if isinstance(target, ast.Name):
            local = scope.local_def(target.id)
            if local is not None:
                return "local", local, None
            ty = self._name_type(target.id)
            if ty.kind == T.FUNC and ty.ref and not ty.ref.startswith("<"):
                return "func", ty.ref, None
            return self._describe_value(ty, target.id)
        if isinstance(target, ast.Call):
            ty = self.type_of(target)
            if ty.kind in (T.INSTANCE, T.MODULE) and ty.ref:
                return "instance", ty.ref, None
            if ty.kind == T.DEFERRED and ty.ref:
                return "deferred", ty.ref, None
            # torch.compile(torch.compiler.disable(f)) and friends
            return "unknown", self._short(target), None
        if isinstance(target, ast.Attribute):
            sp = self_path(target, scope.self_name)
            cls = self.ctx.cls
            if sp is not None and cls is not None:
                head, _, rest = sp.partition(".")
                if not rest:
                    spec = cls.attrs.get(head)
                    if spec is None and head in cls.methods:
                        return "method", self._class_ref(cls), head
                    return "attr", f"{self._class_ref(cls)}|{head}", None
                if rest == "forward":
                    return "attr", f"{self._class_ref(cls)}|{head}", None
                return "attr", f"{self._class_ref(cls)}|{sp}", None
            q = self.qualify(target)
            if q is not None:
                return "func", q, None
            recv = self.type_of(target.value)
            if recv.kind in (T.INSTANCE, T.MODULE) and recv.ref:
                if target.attr == "forward" or target.attr[:1].islower() and target.attr not in ("layers",):
                    # model.forward / model.generate: a method of the instance's class, unless it
                    # is a known submodule attribute (resolved by the project pass).
                    return "method", recv.ref, target.attr
                return "attr", f"{recv.ref}|{target.attr}", None
            if recv.kind == T.DEFERRED and recv.ref:
                return "method", "deferred:" + recv.ref, target.attr
            return "unknown", self._short(target), None
        if isinstance(target, ast.Subscript):
            sp = self_path(target.value, scope.self_name)
            cls = self.ctx.cls
            if sp is not None and cls is not None:
                return "elem", f"{self._class_ref(cls)}|{sp}", None
            recv = self.type_of(target.value)
            if recv.kind == T.MODLIST and recv.ref:
                return "elem", recv.ref, None
            base = target.value
            if isinstance(base, ast.Attribute):
                owner = self.type_of(base.value)
                if owner.kind in (T.INSTANCE, T.MODULE) and owner.ref:
                    return "elem", f"{owner.ref}|{base.attr}", None
            return "unknown", self._short(target), None
        return "unknown", self._short(target), None

    def _describe_value(self, ty: Ty, name: str) -> tuple[str, str | None, str | None]:
        if ty.kind in (T.INSTANCE, T.MODULE) and ty.ref:
            return "instance", ty.ref, None
        if ty.kind == T.ELEM and ty.ref:
            return "elem", ty.ref, None
        if ty.kind == T.MODLIST and ty.ref:
            return "modlist", ty.ref, None
        if ty.kind == T.DEFERRED and ty.ref:
            return "deferred", ty.ref, None
        return "unknown", name, None

    def _lambda_function(self, node: ast.Lambda) -> str:
        qual = f"{self.scope.qualname + '.' if self.scope.qualname else ''}<lambda@{node.lineno}>"
        facts = FunctionFacts(
            qualname=qual, name="<lambda>", loc=_loc(node, self.index), name_loc=_loc(node, self.index), cls=None
        )
        self.facts.functions[qual] = facts
        parent_scope = self.scope
        scope = self._push_function_scope(facts, node.args, is_method=False)
        try:
            self.expr(node.body)
            facts.returns = self.type_of(node.body)
        finally:
            self._pop_scope(scope)
        parent_scope.local_defs[qual] = qual
        return qual

    def _target_ref(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            local = self.scope.local_def(node.id)
            if local is not None:
                return f"{self.module}.{local}" if self.module else local
        q = self.qualify(node)
        if q is not None:
            return q
        if isinstance(node, ast.Attribute):
            cls = self.ctx.cls
            sp = self_path(node, self.scope.self_name)
            if sp is not None and cls is not None:
                return f"{self._class_ref(cls)}.{sp}"
        return None

    # ------------------------------------------------------------------ parameters
    def _note_param_use(self, node: ast.expr, use: str) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                p = self.scope.params.get(sub.id)
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
                    self._bind_target(item.optional_vars, ty if ty.kind in (T.TENSOR, T.INSTANCE) else T.T_UNKNOWN)
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
            exits = self.block(node.body)
            handlers_exit = True
            for handler in node.handlers:
                if handler.type is not None:
                    self.expr(handler.type)
                if handler.name:
                    self.scope.env[handler.name] = T.T_UNKNOWN
                handlers_exit = self.block(handler.body) and handlers_exit
            if node.orelse:
                exits = self.block(node.orelse)
            if node.finalbody:
                if self.block(node.finalbody):
                    return True
            return exits and handlers_exit and bool(node.handlers)
        if isinstance(node, ast.Return):
            ty = self.expr(node.value) if node.value is not None else T.T_NONE
            scope = self.scope
            if scope.func is not None and not scope.eager_only:
                scope.returns = ty if scope.returns is None else T.join(scope.returns, ty)
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
        return False

    def _is_user_context(self, expr: ast.expr) -> bool:
        """A context manager written in this project (class or @contextmanager function): a
        graph break inside its body makes Dynamo give up on the whole function (measured)."""
        target = expr.func if isinstance(expr, ast.Call) else expr
        q = self.qualify(target)
        if q is not None:
            return not q.startswith("torch.") and not _is_library(q)
        ty = self.type_of(expr)
        if ty.kind in (T.INSTANCE,) and ty.ref and not ty.ref.startswith("torch.") and not _is_library(ty.ref):
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
            name = q.rsplit(".", 1)[-1] if q else (node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", ""))
            if q in COMPILING_PREDICATES or (name and COMPILING_NAME.search(name)) or (q and q in self.extra_predicates) or name in self.extra_predicates:
                return "eager" if negate else "compiling"
            if q in NOT_TRACED_PREDICATES:
                # torch.jit.is_scripting() is False under Dynamo: its true branch is not traced.
                return "compiling" if negate else "eager"
            if (q is not None and not q.startswith("torch.") and not _is_external(q)
                    and (name or "").startswith(("is_", "_is_"))):
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
                if which == "eager":
                    scope.eager_only += 1
                if cold:
                    scope.cold.append(cold)
                if maybe_ref is not None and maybe_dead_body:
                    scope.unless.append(maybe_ref)
                try:
                    body_exit = self.block(link.body)
                finally:
                    del scope.tests[len(scope.tests) - len(pushed):]
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
            if which == "compiling":
                dead = 1
            if maybe_ref is not None and not maybe_dead_body:
                maybe_else.append(maybe_ref)
        scope.env = dict(before)
        scope.eager_only += dead
        scope.tests.extend(negations)
        scope.unless.extend(maybe_else)
        try:
            else_exit = self.block(final_else) if final_else else False
        finally:
            del scope.tests[len(scope.tests) - len(negations):]
            del scope.unless[len(scope.unless) - len(maybe_else):]
            scope.eager_only -= dead
        outcomes.append((scope.env, else_exit))
        live = [env for env, exits in outcomes if not exits]
        if not live:
            scope.env = outcomes[-1][0]
            return True
        merged = dict(live[0])
        for env in live[1:]:
            for name, ty in env.items():
                merged[name] = T.join(ty, merged[name]) if name in merged else ty
        scope.env = merged
        return False

    def _dispatch_condition(self, test: ast.expr) -> None:
        """Conditions get a second dispatch so control-flow rules need not re-walk statements."""
        visitors = self.ruleset.visitors.get(_Condition)
        if visitors:
            wrapper = _Condition(test)
            for visit in visitors:
                visit(wrapper, self.ctx)

    def _cold_reason(self, test: ast.expr) -> str | None:
        """Why a branch is rarely taken: `if step % 100 == 0`, `if self.debug:`, ..."""
        for sub in ast.walk(test):
            if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Mod):
                right = _literal(sub.right)
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

    def _iter_element(self, iter_node: ast.expr, it: Ty) -> Ty:
        """What a `for` loop variable holds; `instance.layers` may be a module container."""
        if isinstance(iter_node, ast.Attribute) and it.kind == T.UNKNOWN:
            owner = self.type_of(iter_node.value)
            if owner.kind in (T.INSTANCE, T.MODULE) and owner.ref:
                return Ty(T.ELEM, T.MEDIUM, None, f"{owner.ref}|{iter_node.attr}")
        return _element_type(it, iter_node)

    def _for(self, node: ast.For | ast.AsyncFor) -> None:
        scope = self.scope
        it = self.expr(node.iter)
        iter_node = node.iter
        target = node.target
        if (isinstance(iter_node, ast.Call) and isinstance(iter_node.func, ast.Name) and iter_node.func.id == "enumerate"
                and iter_node.args and isinstance(target, ast.Tuple) and len(target.elts) == 2):
            inner = iter_node.args[0]
            self._bind_target(target.elts[0], T.T_INT)
            self._bind_target(target.elts[1], self._iter_element(inner, self.type_of(inner)))
        else:
            self._bind_target(target, self._iter_element(iter_node, it))
        # loop counters: `for i in range(...)`, `for step, batch in enumerate(...)`
        if isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name):
            fname = node.iter.func.id
            if fname == "range" and isinstance(node.target, ast.Name):
                scope.counters.add(node.target.id)
            elif fname == "enumerate" and isinstance(node.target, ast.Tuple) and node.target.elts:
                first = node.target.elts[0]
                if isinstance(first, ast.Name):
                    scope.counters.add(first.id)
        self._dispatch(node)
        scope.loops.append(node.lineno)
        try:
            self.block(node.body)
        finally:
            scope.loops.pop()
        self.block(node.orelse)

    def _while(self, node: ast.While) -> None:
        scope = self.scope
        scope.in_test += 1
        try:
            self.expr(node.test)
        finally:
            scope.in_test -= 1
        self._note_param_use(node.test, "cond")
        self._dispatch_condition(node.test)
        self._dispatch(node)
        scope.loops.append(node.lineno)
        try:
            self.block(node.body)
        finally:
            scope.loops.pop()
        self.block(node.orelse)

    # ------------------------------------------------------------------ assignments
    def _assign(self, node: ast.Assign) -> None:
        ty = self.expr(node.value)
        for target in node.targets:
            self._assign_target(target, node.value, ty, node)
        self._dispatch(node)

    def _ann_assign(self, node: ast.AnnAssign) -> None:
        ty = self.expr(node.value) if node.value is not None else self._annotation_type(node.annotation)[0]
        if node.value is not None:
            ann_ty = self._annotation_type(node.annotation)[0]
            if ann_ty.kind != T.UNKNOWN and ty.kind == T.UNKNOWN:
                ty = ann_ty
        if self.scope.kind == "class":
            if isinstance(node.target, ast.Name) and self.scope.cls is not None:
                spec = _spec_from_type(ty, node.value, self)
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
            new = _binop_type(old, value_ty, node.op)
            if name in scope.globals:
                if scope.func is not None:
                    scope.func.global_writes.append((name, "aug", _loc(node, self.index)))
            elif scope.kind == "function":
                if old.kind == T.SCALAR and old.dtype == "int" or old.kind == T.UNKNOWN:
                    scope.counters.add(name)
                scope.env[name] = new
            else:
                scope.env[name] = new
        elif isinstance(node.target, ast.Attribute):
            sp = self_path(node.target, scope.self_name)
            if sp is not None and scope.func is not None:
                scope.func.attr_writes.append((sp, "aug", _loc(node, self.index)))
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
                    spec = _spec_from_type(ty, value, self)
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
                scope.func.global_writes.append((name, "assign", _loc(stmt, self.index)))
            scope.env[name] = ty
            if scope.kind == "module":
                if ty.kind == T.SCALAR and ty.dtype == "int" or isinstance(value, (ast.List, ast.Dict)) and not getattr(value, "elts", getattr(value, "keys", [1])):
                    self.facts.int_globals[name] = _loc(stmt, self.index)
                if name in self.module_aliases.names and ty.kind != T.COMPILED:
                    # re-binding a module-level def name (e.g. `fn = torch.compiler.disable(fn)`)
                    pass
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            elt_ty = _element_type(ty, value)
            for i, elt in enumerate(target.elts):
                if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                    self._assign_target(elt, value.elts[i], self.type_of(value.elts[i]), stmt)
                else:
                    self._bind_target(elt, elt_ty)
            return
        if isinstance(target, ast.Attribute):
            self.expr(target.value)
            q = self.qualify(target)
            if q is not None and q.startswith("torch._dynamo.config.") and q.count(".") == 3:
                self.facts.dynamo_config[q.rsplit(".", 1)[1]] = (self._config_value(value), _loc(stmt, self.index))
            sp = self_path(target, scope.self_name)
            if sp is not None:
                cls = self.ctx.cls
                if scope.func is not None:
                    scope.func.attr_writes.append((sp, "assign", _loc(stmt, self.index)))
                if cls is not None and "." not in sp:
                    spec = _spec_from_type(ty, value, self)
                    if spec is not None:
                        existing = cls.attrs.get(sp)
                        if existing is not None and existing.kind in ("instance", "torch") and spec.kind in ("instance", "torch"):
                            # `if cfg.x: self.enc = A(cfg) else: self.enc = B(cfg)`: either class
                            existing.refs = tuple(dict.fromkeys([*existing.refs, *spec.refs]))
                            if spec.kind == "instance":
                                existing.kind = "instance"
                        elif existing is None or existing.kind in ("other",) or (scope.func and scope.func.name == "__init__" and existing.kind in ("int", "float", "bool", "str")):
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

    def _config_value(self, value: ast.expr) -> Any:
        """A literal, or for sets/lists of functions (`{print}`) their dotted names."""
        lit = _literal(value)
        if lit is not _Unevaluable:
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
        added = (self.qualify(arg) or dotted(arg),) if func.attr in ("add", "append") else self._config_value(arg)
        if not isinstance(added, tuple) or not all(added):
            added = ("<expr>",)
        old = self.facts.dynamo_config.get(key)
        previous = old[0] if old is not None and isinstance(old[0], tuple) else ()
        self.facts.dynamo_config[key] = ((*previous, *added), _loc(node, self.index))

    def _bind_target(self, target: ast.expr, ty: Ty) -> None:
        if isinstance(target, ast.Name):
            self.scope.env[target.id] = ty
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                inner = ty if ty.kind in (T.TENSOR, T.UNKNOWN) else T.T_UNKNOWN
                if ty.kind == T.TLIST:
                    inner = Ty(T.TENSOR, ty.conf, ty.dtype)
                self._bind_target(elt, inner)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, T.T_OTHER)

    def _check_wrapper_return(self, node: ast.Return) -> None:
        """Notice project helpers that wrap torch.compile or is_compiling (``maybe_compile(fn)``,
        ``def is_tracing(): return is_torchdynamo_compiling() or torch.jit.is_tracing()``)."""
        scope = self.scope
        func = scope.func
        value = node.value
        if func is None or value is None:
            return
        if isinstance(value, ast.Name) and value.id in scope.pred_names:
            # `_is_tracing = is_torchdynamo_compiling() or ...; return _is_tracing`
            direct, refs = scope.pred_names[value.id]
            func.compiling_predicate = func.compiling_predicate or direct
            func.predicate_refs = (*func.predicate_refs, *refs)
        else:
            direct, refs = self._predicate_parts(value)
            func.compiling_predicate = func.compiling_predicate or direct
            func.predicate_refs = (*func.predicate_refs, *refs)
        if not isinstance(value, ast.Call):
            return
        q = self.qualify(value.func)
        if q in COMPILE_FUNCS and value.args and isinstance(value.args[0], ast.Name):
            names = [p.name for p in func.params]
            if value.args[0].id in names:
                func.compile_wrapper_param = names.index(value.args[0].id)
                # the site recorded for this call has an unknown (parameter) target: drop it
                self.facts.compile_sites = [
                    s for s in self.facts.compile_sites if not (s.func == func.qualname and s.target_kind == "unknown")
                ]
        elif q in COMPILING_PREDICATES:
            func.compiling_predicate = True

    def _predicate_parts(self, value: ast.expr) -> tuple[bool, tuple[str, ...]]:
        """(calls a compiling predicate, project functions it may delegate to) for `a() or b()`."""
        parts = value.values if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) else [value]
        direct = False
        refs: list[str] = []
        for part in parts:
            if isinstance(part, ast.Call):
                pq = self.qualify(part.func)
                name = pq.rsplit(".", 1)[-1] if pq else getattr(part.func, "id", getattr(part.func, "attr", ""))
                if pq in COMPILING_PREDICATES or COMPILING_NAME.search(name or ""):
                    direct = True
                elif pq is not None and not pq.startswith("torch.") and not _is_external(pq):
                    refs.append(pq)
        return direct, tuple(refs)

    # ------------------------------------------------------------------ definitions
    def _annotation_type(self, ann: ast.expr | None) -> tuple[Ty, str | None]:  # noqa: C901
        if ann is None:
            return T.T_UNKNOWN, None
        text = self.segment(ann)
        node = ann
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return T.T_UNKNOWN, text
        # Optional[X], X | None, Union[X, None]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            left, _ = self._annotation_type(node.left)
            right, _ = self._annotation_type(node.right)
            if left.kind == T.TENSOR or right.kind == T.TENSOR:
                return T.T_TENSOR, text
            return (left if left.kind != T.SCALAR or left.dtype != "none" else right), text
        if isinstance(node, ast.Subscript):
            base_q = self.qualify(node.value) or dotted(node.value) or ""
            base_last = base_q.rsplit(".", 1)[-1]
            if base_last in ("Optional", "Union"):
                inner = node.slice
                elts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
                tys = [self._annotation_type(e)[0] for e in elts]
                for t in tys:
                    if t.kind == T.TENSOR:
                        return t, text
                non_none = [t for t in tys if not (t.kind == T.SCALAR and t.dtype == "none")]
                return (non_none[0] if len(non_none) == 1 else T.T_UNKNOWN), text
            if base_last in T.JAXTYPING_DTYPES:
                return Ty(T.TENSOR, T.HIGH, T.JAXTYPING_DTYPES[base_last]), text
            if base_last in ("TensorType",):
                return T.T_TENSOR, text
            if base_last in ("List", "list", "Tuple", "tuple", "Sequence", "Iterable"):
                inner = node.slice
                first = inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else inner
                t, _ = self._annotation_type(first)
                if t.kind == T.TENSOR:
                    return Ty(T.TLIST, T.HIGH, t.dtype), text
                return T.T_OTHER, text
            if base_last in ("Literal",):
                inner = node.slice
                first = inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else inner
                v = _literal(first)
                if isinstance(v, str):
                    return T.T_STR, text
                if isinstance(v, bool):
                    return T.T_BOOL, text
                if isinstance(v, int):
                    return T.T_INT, text
                return T.T_UNKNOWN, text
            if base_last in ("Dict", "dict", "Mapping", "Set", "set"):
                return T.T_OTHER, text
            return T.T_UNKNOWN, text
        if isinstance(node, ast.Constant) and node.value is None:
            return T.T_NONE, text
        q = self.qualify(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        name = q or (dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None) or ""
        if name in T.TENSOR_ANNOTATIONS or name.endswith(".Tensor") or name == "Tensor":
            return T.T_TENSOR, text
        builtin = {"int": T.T_INT, "float": T.T_FLOAT, "bool": T.T_BOOL, "str": T.T_STR, "bytes": T.T_STR}
        if name in builtin:
            return builtin[name], text
        if name in ("torch.nn.Module",):
            return Ty(T.MODULE, T.HIGH, None, "torch.nn.Module"), text
        if name in ("torch.Size",):
            return T.T_SIZE, text
        if name in ("torch.dtype", "torch.device"):
            return Ty(T.SCALAR, T.HIGH, "dtype"), text
        if q is not None and q[:1] and q.rsplit(".", 1)[-1][:1].isupper():
            return Ty(T.INSTANCE, T.HIGH, None, q), text
        return T.T_UNKNOWN, text

    def _push_function_scope(self, facts: FunctionFacts | None, args: ast.arguments, is_method: bool) -> Scope:
        parent = self.scope
        scope = Scope("function", AliasTable(parent.aliases), parent)
        scope.func = facts
        scope.qualname = facts.qualname if facts is not None else parent.qualname
        if facts is None:
            # a lambda: shares the enclosing function's facts (its candidates belong there)
            scope.func = parent.func
            scope.loops = list(parent.loops)
            scope.cold = list(parent.cold)
            scope.eager_only = parent.eager_only
            scope.self_name = parent.self_name
            scope.counters = set(parent.counters)
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
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
            params.append(Param(args.vararg.arg, T.T_OTHER, None, None, "varargs"))
        for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
            params.append(self._param(arg, default, "kwonly", is_forward))
        if args.kwarg is not None:
            params.append(Param(args.kwarg.arg, T.T_OTHER, None, None, "varkw"))
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
            value = _literal(default)
            default_repr = "<expr>" if value is _Unevaluable else repr(value)
            if ty.kind == T.UNKNOWN and value is not _Unevaluable and value is not None:
                ty = {bool: T.T_BOOL, int: T.T_INT, float: T.T_FLOAT, str: T.T_STR}.get(type(value), T.T_OTHER)
        if ty.kind == T.UNKNOWN and is_forward and (default is None or default_repr == "None") and not NON_TENSOR_PARAM.search(arg.arg):
            # forward(self, x): its arguments are tensors far more often than not (flags such as
            # `use_cache=None`, caches and configs excepted, by name).
            ty = Ty(T.TENSOR, T.MEDIUM)
        return Param(arg.arg, ty, ann_text, default_repr, kind, loc=_loc(arg, self.index))

    def _pop_scope(self, scope: Scope) -> None:
        assert self.scope is scope
        self.scope = scope.parent if scope.parent is not None else self.module_scope

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:  # noqa: C901
        parent = self.scope
        in_class = parent.kind == "class"
        prefix = parent.qualname + "." if parent.qualname else ""
        if parent.kind == "function":
            prefix = parent.qualname + ".<locals>."
        qualname = f"{prefix}{node.name}"
        loc = _loc(node, self.index)
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
        self.facts.functions[qualname] = facts
        if in_class and parent.cls is not None:
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
            self._pop_scope(scope)

    def _decorator(self, dec: ast.expr, facts: FunctionFacts, node: ast.AST) -> str | None:
        call = dec if isinstance(dec, ast.Call) else None
        target = dec.func if isinstance(dec, ast.Call) else dec
        q = self.qualify(target)
        local_q = q
        if q is None and isinstance(target, ast.Name):
            local_q = target.id
        site_how = None
        if q in COMPILE_FUNCS or (q is not None and q in self.facts.compile_functions):
            site_how = "decorator"
        elif q in OPTIMIZE_FUNCS:
            site_how = "optimize"
        if site_how is not None:
            qual_ref = f"{self.module}.{facts.qualname}" if self.module else facts.qualname
            self.facts.compile_sites.append(
                CompileSite(
                    id=self._new_site_id(),
                    how=site_how,
                    target_kind="func",
                    ref=qual_ref,
                    method=None,
                    loc=_loc(dec, self.index),
                    func=self.scope.func.qualname if self.scope.func else None,
                    owner=self._owner_ref(),
                    options=self._compile_options(call, q),
                    text="@" + self._short(dec),
                )
            )
        elif q in DISABLE_FUNCS:
            qual_ref = f"{self.module}.{facts.qualname}" if self.module else facts.qualname
            recursive = _kw_bool(call, "recursive", True) if call is not None else True
            self.facts.disable_sites.append(DisableSite(qual_ref, recursive, _loc(dec, self.index)))
        elif q == "torch.library.custom_op":
            self.facts.custom_ops[facts.qualname] = _loc(dec, self.index)
        elif q == "torch.compiler.allow_in_graph":
            qual_ref = f"{self.module}.{facts.qualname}" if self.module else facts.qualname
            self.facts.allow_in_graph.append(DisableSite(qual_ref, True, _loc(dec, self.index)))
        elif isinstance(target, ast.Attribute) and target.attr in ("register_fake", "register_kernel", "impl_abstract"):
            base = dotted(target.value)
            if base:
                self.facts.fake_registrations.add(base)
        return local_q

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
        is_dataclass = any((self.qualify(d.func if isinstance(d, ast.Call) else d) or "").endswith("dataclass") for d in node.decorator_list)
        facts = ClassFacts(qualname=qualname, name=node.name, loc=_loc(node, self.index), bases=tuple(bases), is_dataclass=is_dataclass)
        self.facts.classes[qualname] = facts
        if parent.kind == "function":
            parent.env[node.name] = Ty(T.FUNC, T.HIGH, None, f"{self.module}.{qualname}")
        scope = Scope("class", parent.aliases, parent)
        scope.cls = facts
        scope.qualname = qualname
        self.scope = scope
        try:
            # __init__ first: it assigns the submodules the other methods use.
            body = sorted(node.body, key=lambda s: 0 if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__" else 1)
            for stmt in body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    facts.methods.setdefault(stmt.name, f"{qualname}.{stmt.name}")
            for stmt in body:
                self.stmt(stmt)
        finally:
            self.scope = parent


class _Condition:
    """A pseudo-node wrapping the test of an if/while/comprehension filter for rule dispatch."""

    __slots__ = ("test",)
    _fields = ("test",)

    def __init__(self, test: ast.expr) -> None:
        self.test = test


# Rules write `visit_Condition`: make ast.Condition resolvable for the dispatch table.
ast.Condition = _Condition  # type: ignore[attr-defined]


def _spec_from_type(ty: Ty, value: ast.expr | None, a: Analyzer) -> SubmoduleSpec | None:  # noqa: C901
    loc = _loc(value, a.index) if value is not None else None
    if isinstance(value, ast.IfExp):
        # `MoE(cfg) if cfg.use_moe else MLP(cfg)`: either class may be the submodule
        left = _spec_from_type(a.type_of(value.body), value.body, a)
        right = _spec_from_type(a.type_of(value.orelse), value.orelse, a)
        specs = [sp for sp in (left, right) if sp is not None and sp.kind in ("instance", "torch")]
        if specs:
            refs = tuple(dict.fromkeys(r for sp in specs for r in sp.refs))
            kind = "instance" if any(sp.kind == "instance" for sp in specs) else "torch"
            return SubmoduleSpec(kind, refs, None, loc)
    if value is not None and isinstance(value, ast.Call):
        q = a.qualify(value.func)
        container = T.MODULE_CONTAINERS.get(q or "")
        if container is not None and container != "params":
            refs, count = _container_elements(value, a)
            return SubmoduleSpec(container, tuple(refs), count, loc)
        if q in COMPILE_FUNCS and value.args:
            kind, ref, _ = a._describe_target(value.args[0])
            if kind == "instance" and ref:
                return SubmoduleSpec("compiled", (ref,), None, loc)
            return SubmoduleSpec("other", (), None, loc)
    if ty.kind == T.MODULE and ty.ref:
        return SubmoduleSpec("torch" if ty.ref.startswith("torch.") else "instance", (ty.ref,), None, loc)
    if ty.kind == T.INSTANCE and ty.ref:
        return SubmoduleSpec("instance", (ty.ref,), None, loc)
    if ty.kind == T.MODLIST:
        return SubmoduleSpec("list", (), None, loc)
    if ty.kind == T.TENSOR:
        return SubmoduleSpec("tensor", (), None, loc)
    if ty.kind == T.FUNC and ty.ref and not ty.ref.startswith("<"):
        return SubmoduleSpec("func", (ty.ref,), None, loc)
    if ty.kind == T.SCALAR and ty.dtype in ("int", "float", "bool", "str"):
        return SubmoduleSpec(ty.dtype, (), None, loc)
    if ty.kind == T.COMPILED:
        return SubmoduleSpec("other", (), None, loc)
    if isinstance(value, ast.List) and not value.elts:
        return SubmoduleSpec("listattr", (), None, loc)
    if isinstance(value, ast.Dict) and not value.keys:
        return SubmoduleSpec("dictattr", (), None, loc)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "dict") and not value.args:
        return SubmoduleSpec("listattr" if value.func.id == "list" else "dictattr", (), None, loc)
    if value is not None and isinstance(value, ast.Call):
        q = a.qualify(value.func)
        if q in ("collections.deque", "collections.defaultdict", "collections.OrderedDict"):
            return SubmoduleSpec("listattr" if q.endswith("deque") else "dictattr", (), None, loc)
    return SubmoduleSpec("other", (), None, loc)


def _container_elements(call: ast.Call, a: Analyzer) -> tuple[list[str], int | None]:
    refs: list[str] = []
    count: int | None = None
    items: list[ast.expr] = list(call.args)
    if len(items) == 1 and isinstance(items[0], (ast.List, ast.Tuple)):
        count = len(items[0].elts)
        items = list(items[0].elts)
    elif len(items) == 1 and isinstance(items[0], ast.Starred):
        items = [items[0].value]
    elif len(items) == 1 and isinstance(items[0], ast.Dict):
        items = [v for v in items[0].values if v is not None]
        count = len(items)
    elif len(items) == 1 and isinstance(items[0], ast.Call) and (a.qualify(items[0].func) or "").endswith("OrderedDict"):
        inner = items[0].args[0] if items[0].args else None
        items = []
        if isinstance(inner, (ast.List, ast.Tuple)):
            for elt in inner.elts:
                if isinstance(elt, ast.Tuple) and len(elt.elts) == 2:
                    items.append(elt.elts[1])
        count = len(items)
    elif items and all(not isinstance(i, (ast.ListComp, ast.GeneratorExp, ast.Starred)) for i in items):
        count = len(items)
    for item in items:
        node = item
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            gen = node.generators[0] if node.generators else None
            if gen is not None and isinstance(gen.iter, ast.Call) and isinstance(gen.iter.func, ast.Name) and gen.iter.func.id == "range" and len(gen.iter.args) == 1:
                n = _literal(gen.iter.args[0])
                count = n if isinstance(n, int) else None
                if count is None:
                    count = -1  # known to repeat, number from config
            node = node.elt
        if isinstance(node, ast.Call):
            q = a.qualify(node.func)
            if q in COMPILE_FUNCS and node.args and isinstance(node.args[0], ast.Call):
                q = a.qualify(node.args[0].func)
            if q is not None:
                refs.append(q)
            elif isinstance(node.func, ast.Name):
                ty = a._name_type(node.func.id)
                if ty.ref:
                    refs.append(ty.ref)
    seen: list[str] = []
    for r in refs:
        if r not in seen:
            seen.append(r)
    return seen, count


def _spec_type(spec: SubmoduleSpec, path_ref: str) -> Ty:
    if spec.kind in ("instance", "torch"):
        ref = spec.refs[0] if spec.refs else None
        if ref is not None and not ref.rsplit(".", 1)[-1][:1].isupper() and spec.kind == "instance":
            return Ty(T.INSTANCE, T.MEDIUM, None, ref)
        return Ty(T.MODULE, T.HIGH, None, ref)
    if spec.kind in ("list", "seq", "dict"):
        return Ty(T.MODLIST, T.HIGH, spec.kind, path_ref)
    if spec.kind == "compiled":
        return Ty(T.COMPILED, T.HIGH, None, spec.refs[0] if spec.refs else None)
    if spec.kind == "tensor":
        return Ty(T.TENSOR, T.HIGH)
    if spec.kind == "func":
        return Ty(T.FUNC, T.HIGH, None, spec.refs[0] if spec.refs else None)
    if spec.kind in ("int", "float", "bool", "str"):
        return Ty(T.SCALAR, T.HIGH, spec.kind)
    if spec.kind in ("listattr", "dictattr"):
        return Ty(T.CONTAINER, T.HIGH, spec.kind)
    return T.T_UNKNOWN


def _element_type(it: Ty, iter_node: ast.expr) -> Ty:
    if it.kind == T.TLIST:
        return Ty(T.TENSOR, it.conf, it.dtype)
    if it.kind == T.MODLIST:
        return Ty(T.ELEM, it.conf, None, it.ref)
    if it.kind == T.TENSOR:
        return Ty(T.TENSOR, it.conf, it.dtype)
    if it.kind == T.SIZE:
        return T.T_INT
    if isinstance(iter_node, ast.Call) and isinstance(iter_node.func, ast.Name):
        if iter_node.func.id == "range":
            return T.T_INT
    return T.T_UNKNOWN


def _binop_type(left: Ty, right: Ty, op: ast.operator) -> Ty:
    tensors = [t for t in (left, right) if t.kind == T.TENSOR]
    if tensors:
        conf = min(t.conf for t in tensors)
        if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and all(t.dtype == "bool" for t in tensors):
            return Ty(T.TENSOR, conf, "bool")
        dtypes = {t.dtype for t in tensors}
        if isinstance(op, ast.Div) or "float" in dtypes or (left.kind == T.SCALAR and left.dtype == "float") or (right.kind == T.SCALAR and right.dtype == "float"):
            return Ty(T.TENSOR, conf, "float")
        return Ty(T.TENSOR, conf, tensors[0].dtype)
    if T.DEFERRED in (left.kind, right.kind):
        d = left if left.kind == T.DEFERRED else right
        other = right if d is left else left
        if other.kind in (T.SCALAR, T.UNKNOWN, T.DEFERRED, T.SIZE):
            return d
    for t in (left, right):
        if t.kind == T.SCALAR and t.dtype in T.DATA_DEPENDENT_SCALARS:
            return t
    if left.kind == T.SCALAR and right.kind == T.SCALAR:
        if "str" in (left.dtype, right.dtype):
            return T.T_STR
        if isinstance(op, ast.Div) or "float" in (left.dtype, right.dtype):
            return T.T_FLOAT
        if left.dtype == right.dtype == "int" or {left.dtype, right.dtype} <= {"int", "bool"}:
            return T.T_INT
        return Ty(T.SCALAR, T.MEDIUM, "number")
    if left.kind == T.SIZE or right.kind == T.SIZE:
        if isinstance(op, ast.Add) and left.kind == right.kind == T.SIZE:
            return T.T_SIZE
        return T.T_INT
    if isinstance(op, ast.MatMult) and (left.kind == T.UNKNOWN or right.kind == T.UNKNOWN):
        return Ty(T.TENSOR, T.MEDIUM)
    return T.T_UNKNOWN


def _dtype_of(node: ast.expr) -> str | None:
    text = dotted(node)
    if text is None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return T.DTYPE_NAMES.get(node.value)
        return None
    return T.DTYPE_NAMES.get(text.rsplit(".", 1)[-1])


def _kw_bool(node: ast.Call | None, name: str, default: bool) -> bool:
    if node is None:
        return default
    for kw in node.keywords:
        if kw.arg == name:
            value = _literal(kw.value)
            return bool(value) if isinstance(value, bool) else default
    return default


def _tensorish_root(node: ast.expr) -> ast.expr | None:
    return node


# Modules that are never part of the linted project: calls into them get no call edge.
_NEVER_PROJECT_ROOTS = frozenset(
    {"numpy", "np", "math", "os", "sys", "re", "json", "time", "random", "logging", "warnings",
     "functools", "itertools", "collections", "typing", "dataclasses", "copy", "pickle",
     "builtins", "abc", "contextlib", "enum", "inspect", "pathlib", "einops", "scipy", "sklearn",
     "pdb", "traceback", "tqdm", "operator", "string", "io", "shutil", "subprocess",
     "threading", "multiprocessing", "datetime", "uuid", "struct", "ctypes", "types", "weakref",
     "pandas", "PIL", "cv2", "yaml", "argparse", "typing_extensions", "importlib", "textwrap"}
)  # fmt: skip
# Third-party ML libraries: usually not the project, but they may be (linting transformers
# itself), so calls into them keep their edges and the project pass decides; they are never
# treated as the user's own context managers.
_LIBRARY_ROOTS = _NEVER_PROJECT_ROOTS | frozenset(
    {"transformers", "triton", "torchvision", "torchaudio", "safetensors", "huggingface_hub",
     "accelerate", "deepspeed", "apex", "xformers", "flash_attn", "timm", "lightning",
     "pytorch_lightning", "hydra", "omegaconf", "wandb", "tensorboard", "diffusers", "peft"}
)  # fmt: skip


def _is_external(q: str) -> bool:
    """Never project code: no call edge."""
    return q.split(".", 1)[0] in _NEVER_PROJECT_ROOTS


def _is_library(q: str) -> bool:
    """Probably someone else's code (but it could be the project being linted)."""
    return q.split(".", 1)[0] in _LIBRARY_ROOTS
