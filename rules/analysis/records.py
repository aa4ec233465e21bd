"""Named tuples of a file: which fields of a ``namedtuple`` / ``NamedTuple`` value hold tensors.

``_State = collections.namedtuple("_State", "y, t0, t1")`` (or ``typing.NamedTuple``, or ``class
Pair(NamedTuple): lo: Tensor``) defines a record type; a value built from it
(``_State(y, t[0], t[1])``, ``_State._make([...])``, ``state._replace(t1=...)``) is typed
``Ty(CONTAINER, conf, "record", ref)`` where ``ref`` lists the fields in order, each marked
tensor (``=T``) or not known (``=?``): ``"y=T,t0=T,t1=?"``.  Reading ``state.t0`` then gives a
tensor, as Dynamo sees it (torchdiffeq's ``self.rk_state.t1``).  Only the file's own top-level
definitions are known (the fields come from the source, never from running it).
"""

from __future__ import annotations

import ast

from tclint.rules import types as T
from tclint.rules.names import dotted
from tclint.rules.types import Ty

RECORD = "record"  # Ty.dtype of a CONTAINER that is a named tuple value
_FACTORIES = ("namedtuple", "collections.namedtuple", "NamedTuple", "typing.NamedTuple")


def record_fields(tree: ast.Module) -> dict[str, tuple[str, ...]]:
    """Top-level named tuple definitions: name -> field names, in order."""
    out: dict[str, tuple[str, ...]] = {}
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)
            and dotted(stmt.value.func) in _FACTORIES
            and len(stmt.value.args) >= 2
        ):
            fields = _literal_fields(stmt.value.args[1])
            if fields:
                out[stmt.targets[0].id] = fields
        elif isinstance(stmt, ast.ClassDef) and any(dotted(b) in _FACTORIES for b in stmt.bases):
            fields = tuple(
                s.target.id
                for s in stmt.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            )
            if fields:
                out[stmt.name] = fields
    return out


def _literal_fields(node: ast.expr) -> tuple[str, ...]:
    """``"a, b"`` / ``"a b"`` / ``["a", "b"]`` / ``[("a", Tensor), ...]`` -> the names."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return tuple(n for n in node.value.replace(",", " ").split() if n.isidentifier())
    if isinstance(node, (ast.List, ast.Tuple)):
        out = []
        for elt in node.elts:
            if isinstance(elt, ast.Tuple) and elt.elts:
                elt = elt.elts[0]
            if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
                return ()
            out.append(elt.value)
        return tuple(out)
    return ()


def record_type(fields: tuple[str, ...], tensors: dict[str, int]) -> Ty:
    """The type of a value of the record ``fields`` whose ``tensors`` (name -> confidence) hold
    tensors."""
    ref = ",".join(f"{f}={'T' if f in tensors else '?'}" for f in fields)
    return Ty(T.CONTAINER, min(tensors.values(), default=T.MEDIUM), RECORD, ref)


def is_record(ty: Ty) -> bool:
    return ty.kind == T.CONTAINER and ty.dtype == RECORD and ty.ref is not None


def fields_of(ty: Ty) -> list[tuple[str, bool]]:
    """(field, holds a tensor) of a record type, in order."""
    out = []
    for part in (ty.ref or "").split(","):
        name, _, mark = part.partition("=")
        if name:
            out.append((name, mark == "T"))
    return out


def field_type(ty: Ty, name: str) -> Ty | None:
    """``state.name`` of a record value: a tensor, unknown, or None when it is no field."""
    for field, tensor in fields_of(ty):
        if field == name:
            return Ty(T.TENSOR, ty.conf) if tensor else T.T_UNKNOWN
    return None
