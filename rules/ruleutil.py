"""Small helpers shared by the rules in ``tclint.rules.catalog``."""

from __future__ import annotations

import ast

from tclint.rules import types as T
from tclint.rules.types import Ty


def tensor_confidence(ty: Ty) -> int | None:
    """The confidence that a value is a tensor, or None when it is not (known to be) one."""
    if ty.kind == T.TENSOR:
        return ty.conf
    return None


def maybe(conf: int) -> str:
    """A word that keeps a message honest about how sure the analysis is."""
    return "" if conf == T.HIGH else "likely "


def builtin_call(node: ast.Call, ctx, name: str) -> bool:
    """``name(...)`` calls the builtin (not a local or imported function of the same name)."""
    func = node.func
    if not isinstance(func, ast.Name) or func.id != name:
        return False
    if ctx.qualify(func) is not None:
        return False
    scope = ctx.scope
    return func.id not in scope.env and func.id not in scope.params and scope.local_def(func.id) is None


def torch_name(ctx) -> str | None:
    """How this file spells ``torch`` (``import torch as t`` -> ``t``), or None if not imported."""
    return ctx.local_name_for("torch")


def short(ctx, node: ast.AST, limit: int = 60) -> str:
    text = " ".join(ctx.segment(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def remove_statement_fix(ctx, node: ast.AST, message: str, applicability):
    """Delete a call that is a whole statement on its own lines, or put `pass` in its place when
    it is the only statement of its block.  None when the call shares its lines with other code."""
    from tclint.rules.model import Edit, Fix, Span

    loc = ctx.loc(node)
    first = ctx.index.line(loc.line)
    if first[: loc.col].strip() or ctx.index.line(loc.end_line)[loc.end_col :].strip():
        return None
    if ctx.statement_alone:
        return Fix(
            message, (Edit(Span.of(loc.line, loc.col, loc.end_line, loc.end_col), "pass"),), applicability
        )
    return Fix(message, (Edit(Span.of(loc.line, 0, loc.end_line + 1, 0), ""),), applicability)


def guard_compiling_fix(ctx, node: ast.AST, message: str, applicability):
    """Put a call that is a whole statement on its own lines behind ``if not
    torch.compiler.is_compiling():`` (Dynamo folds the test to False, so nothing is traced; the
    call still runs eagerly).  Only the first line is re-indented: the call's other lines are
    inside its brackets, where indentation means nothing; a comment after the call stays where it
    is.  None when the call shares its lines with other code or the file does not import torch."""
    from tclint.rules.model import Edit, Fix, Span

    tname = torch_name(ctx)
    loc = ctx.loc(node)
    first = ctx.index.line(loc.line)
    rest = ctx.index.line(loc.end_line)[loc.end_col :].strip()
    if tname is None or first[: loc.col].strip() or rest and not rest.startswith("#"):
        return None
    indent = first[: loc.col]
    step = "\t" if "\t" in indent else "    "
    header = f"if not {tname}.compiler.is_compiling():\n{indent}{step}"
    return Fix(message, (Edit(Span.of(loc.line, loc.col, loc.line, loc.col), header),), applicability)


def register_logging_fix(ctx, key: str, function: str, modules: tuple[str, ...], message: str):
    """A codemod fix adding ``torch._dynamo.config.KEY.add(FUNCTION)`` after the file's top-level
    imports of ``modules`` (``FUNCTION`` spelt with the file's names for them); unsafe: the
    setting is process-wide.  None when a module is not imported under a name."""
    from tclint.rules.model import Applicability, Fix

    names = [ctx.local_name_for(m) for m in modules]
    tname = torch_name(ctx)
    if tname is None or not all(names):
        return None
    line = f"{tname}._dynamo.config.{key}.add({function.format(*names)})"
    return Fix(message, (), Applicability.UNSAFE, codemod=("add-after-imports", line, *modules))


def move_to_caller_fix(ctx, node: ast.AST, message: str):
    """A codemod fix moving a call that is a whole statement on its own lines (a ``print`` or a
    logging call in compiled code) after the one eager call of the compiled function in this
    file, reading the call's result there (codemod ``move-to-caller``, which gives up, and the
    fix is then not offered, unless it only reads the function's returned value).  Unsafe: the
    output now comes after the compiled call returns.  None when the call shares its lines."""
    from tclint.rules.model import Applicability, Fix, Span

    loc = ctx.loc(node)
    first = ctx.index.line(loc.line)
    rest = ctx.index.line(loc.end_line)[loc.end_col :].strip()
    if first[: loc.col].strip() or rest and not rest.startswith("#"):
        return None
    return Fix(
        message,
        (),
        Applicability.UNSAFE,
        codemod=("move-to-caller", Span.of(loc.line, loc.col, loc.end_line, loc.end_col)),
    )
