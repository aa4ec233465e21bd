"""``isinstance`` narrowing of tensors and Python scalars: a mixin of ``Analyzer``.

Inside ``if isinstance(x, Tensor):`` the name ``x`` is a tensor, whatever the join of its earlier
assignments was (``edge_index`` a tensor or a tuple, then ``edge_index[:, mask]`` in the tensor
branch); inside ``if isinstance(sigma, (int, float)):`` it is a Python number, so ``float(sigma)``
there is no tensor escape.  Conjunctions narrow each of their ``isinstance`` parts.  (Submodule
narrowing, ``isinstance(m, Block)`` on a module's children, is the walker's own.)
"""

from __future__ import annotations

import ast

from tclint.rules import types as T
from tclint.rules.analysis.common import AnalyzerBase
from tclint.rules.types import Ty

_TENSOR_CLASSES = frozenset({"torch.Tensor", "Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_SCALARS: dict[str, Ty] = {
    "int": T.T_INT,
    "float": T.T_FLOAT,
    "bool": T.T_BOOL,
    "str": T.T_STR,
    "numbers.Number": Ty(T.SCALAR, T.HIGH, "number"),
    "numbers.Real": Ty(T.SCALAR, T.HIGH, "number"),
}


class IsinstanceNarrowing(AnalyzerBase):
    """Narrows names in the body of ``if isinstance(name, C)`` (C tensor classes or scalars)."""

    def _narrow_submodule(self, test: ast.expr) -> None:
        super()._narrow_submodule(test)  # type: ignore[misc]
        parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        for part in parts:
            narrowed = self._isinstance_type(part)
            if narrowed is not None:
                self.scope.env[narrowed[0]] = narrowed[1]

    def _isinstance_type(self, test: ast.expr) -> tuple[str, Ty] | None:
        if not (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id == "isinstance"
            and len(test.args) == 2
            and isinstance(test.args[0], ast.Name)
            and not test.keywords
        ):
            return None
        classes = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
        names = [self.qualify(c) or (c.id if isinstance(c, ast.Name) else None) for c in classes]
        if not names or not all(names):
            return None
        if all(n in _TENSOR_CLASSES for n in names):
            current = self._name_type(test.args[0].id)
            dtype = current.dtype if current.kind == T.TENSOR else None
            return test.args[0].id, Ty(T.TENSOR, T.HIGH, dtype)
        scalars = [_SCALARS.get(n or "") for n in names]
        if all(s is not None for s in scalars):
            kinds = {s.dtype for s in scalars if s is not None}
            ty = scalars[0] if len(kinds) == 1 else Ty(T.SCALAR, T.HIGH, "number")
            return test.args[0].id, ty  # type: ignore[return-value]
        return None
