"""``Analyzer``: the walk over one file, from an ``ast`` tree to its ``FileFacts``.

It owns the walk's state and the entry point (``run``); the jobs are its mixins (see the package
docstring): ``Walker`` (statements), ``CallGraph`` (calls and compile sites) and
``TypeInference`` (expression types).  Candidates reported by rules land in ``add_candidate``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Any

from tclint.rules import types as T
from tclint.rules.analysis.api import RuleContext, RuleSet, Scope
from tclint.rules.analysis.callctx import file_variant_facts
from tclint.rules.analysis.callgraph import CallGraph
from tclint.rules.analysis.common import MARKER, node_loc
from tclint.rules.analysis.narrowing import IsinstanceNarrowing
from tclint.rules.analysis.records import record_fields
from tclint.rules.analysis.seeds import ArgSeeds, ReturnsOf, Seeds
from tclint.rules.analysis.types_infer import TypeInference
from tclint.rules.analysis.walker import Walker
from tclint.rules.facts import Candidate, FileFacts, FrameEffect, Loc, Need, Requirement
from tclint.rules.model import Fix, Severity
from tclint.rules.names import AliasTable, literal_all
from tclint.rules.source import LineIndex
from tclint.rules.types import Ty


class Analyzer(ArgSeeds, IsinstanceNarrowing, Walker, CallGraph, TypeInference):
    """One file's walk: build it with the file's text and identity, then call ``run(tree)``.
    ``seeds`` / ``returns_of``: what the project pass learnt across files (``analysis.seeds``)."""

    def __init__(
        self,
        text: str,
        path: str,
        module: str,
        is_package: bool,
        root: str,
        ruleset: RuleSet,
        compiling_predicates: Iterable[str] = (),
        seeds: Seeds | None = None,
        returns_of: ReturnsOf | None = None,
    ) -> None:
        self.seeds = seeds
        self.returns_of = returns_of
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
        self._attr_stores: set[str] = set()
        self._setters: dict[str, dict[str, dict[str, str]]] = {}  # submodules.setter_params per class
        self._records: dict[str, tuple[str, ...]] = {}  # named tuples defined in the file
        self._late_globals: set[str] = set()  # module names bound by `NAME = call(...)` (see _prebind)

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
        self._records = record_fields(tree)
        self._prebind(tree.body, self.module_scope, "")
        for stmt in tree.body:
            self.stmt(stmt)
        self.facts.aliases = dict(self.module_aliases.names)
        self.facts.star_imports = tuple(self.module_aliases.stars)
        self.facts.exports = literal_all(tree.body)
        self.facts.module_vars = {k: v for k, v in self.module_scope.env.items() if v.kind != T.UNKNOWN}
        self.facts.variant_facts = file_variant_facts(tree, self.index.char_col, self.module, self.text)
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
            elif (
                isinstance(stmt, ast.Assign)
                and not prefix
                and isinstance(stmt.value, ast.Call)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                self._late_globals.add(stmt.targets[0].id)  # `sampler = torch.compile(f)` below its callers
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
        requires: tuple[Requirement, ...],
        data: dict[str, Any] | None,
        frame: FrameEffect = FrameEffect.RESUMES,
        severity: Severity | None = None,
    ) -> None:
        scope = self.scope
        if scope.eager_only:
            return  # this code never runs under torch.compile
        loc = node if isinstance(node, Loc) else node_loc(node, self.index)
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
                requires=requires
                + tuple(Requirement(Need.NOT_COMPILING_PREDICATE, ref) for ref in scope.unless),
                fix=fix,
                help=help,
                data=data or {},
                frame=frame,
                severity=severity,
                user_ctx=scope.user_ctx[-1] if scope.user_ctx else None,
                mode=next((m for m in reversed(scope.modes) if m is not None), None),
            )
        )
