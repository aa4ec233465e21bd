"""Types the project pass knows and one file's walk cannot: a mixin of ``Analyzer``.

A file's first walk sees only the file.  The project pass (``tclint.rules.argflow``) learns two
things across files and may walk a file again with them:

- *seeds*: the type of a parameter of a function reached from a compiled region, from the join of
  the arguments it is called with at its region call sites (``def gate(h)`` called with a tensor);
- *returns*: the return type of a project function a call here resolves to (``scatter(...)``
  returning a tensor; ``f[i]``: item i of the tuple it returns, for ``a, b = f(...)``), given as a
  callable from the qualified name the walk sees.

Without them (the cached first walk) this mixin changes nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from tclint.rules import types as T
from tclint.rules.analysis.api import Scope
from tclint.rules.analysis.common import AnalyzerBase
from tclint.rules.facts import FunctionFacts
from tclint.rules.types import Ty

Seeds = dict[str, dict[str, Ty]]  # function qualname (in its file) -> parameter name -> type
ReturnsOf = Callable[[str], "Ty | None"]  # qualified function name -> its return type, if a tensor


class ArgSeeds(AnalyzerBase):
    """Applies the project pass's parameter seeds and known return types during the walk."""

    seeds: Seeds | None
    returns_of: ReturnsOf | None

    def _push_function_scope(
        self, facts: FunctionFacts | None, args: ast.arguments, is_method: bool
    ) -> Scope:
        scope = super()._push_function_scope(facts, args, is_method)  # type: ignore[safe-super]
        seeds = self.seeds
        if seeds and facts is not None:
            seeded = seeds.get(facts.qualname)
            if seeded:
                for p in facts.params:
                    ty = seeded.get(p.name)
                    if ty is not None and p.ty.kind in (T.UNKNOWN, T.INSTANCE):
                        # (an instance: a type alias the project pass found, ``argflow._seedable``)
                        p.ty = ty  # the Param objects are this walk's own, shared with scope.params
        return scope

    def _bind_target(self, target: ast.expr, ty: Ty) -> None:
        """``a, b = f(...)`` binds ``f[0]`` / ``f[1]`` (items of what ``f`` returns): known tensors
        when the project pass says so."""
        if ty.kind == T.DEFERRED and ty.ref and ty.ref.endswith("]") and self.returns_of is not None:
            known = self.returns_of(ty.ref)
            if known is not None:
                ty = known._replace(ref=None)
        super()._bind_target(target, ty)  # type: ignore[misc]

    def _call_type(self, node: ast.Call) -> Ty:
        ty = super()._call_type(node)  # type: ignore[misc]  # a mixin: the Analyzer's TypeInference provides it
        if ty.kind == T.DEFERRED and ty.ref and self.returns_of is not None:
            known = self.returns_of(ty.ref)
            if known is not None and known.ref == T.FROM_ARGS:
                # a tensor only where it is given one (`default(mask, ...)` in forward, not
                # `default(flag, False)` in __init__)
                given = [*node.args, *(kw.value for kw in node.keywords)]
                if not any(
                    self.type_of(a.value if isinstance(a, ast.Starred) else a).kind == T.TENSOR for a in given
                ):
                    return ty
            if known is not None:
                return known._replace(ref=None)
        return ty
