"""What to probe: ``file.py::name`` targets, checked statically before anything runs.

A target names a function, a class (an ``nn.Module``: it is instantiated and called) or a method
(``Class.method``).  The check reads the file with ``ast`` only: a typo gets a usage error that
lists what the file defines, without importing (so executing) the user's module.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

from tclint.rules.discovery import module_for


class TargetError(Exception):
    """A target that does not exist or cannot be probed (a usage error: exit status 2)."""


@dataclass(frozen=True)
class Target:
    file: str  # absolute path
    qualname: str  # "fn", "Class", "Class.method"
    module: str | None  # dotted name Python would import it as, when inside a package
    import_root: str  # the folder to put on sys.path
    line: int  # where it is defined
    kind: str  # "function" | "class" | "method"
    params: tuple[tuple[str, str | None, bool], ...] = ()  # (name, annotation source, has default)

    @property
    def display(self) -> str:
        return f"{os.path.relpath(self.file) if not os.path.relpath(self.file).startswith('..') else self.file}::{self.qualname}"


def is_target(text: str) -> bool:
    return "::" in text


def _defs(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    out: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.Assign) and isinstance(
            node.value, (ast.Call, ast.Name, ast.Attribute, ast.Lambda)
        ):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, node)  # `step = torch.compile(_step)`: probed as it is
    return out


def _params(node: ast.AST, drop_self: bool) -> tuple[tuple[str, str | None, bool], ...]:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ()
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out = []
    for arg, default in zip(positional, defaults, strict=False):
        out.append((arg.arg, ast.unparse(arg.annotation) if arg.annotation else None, default is not None))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults, strict=False):
        out.append((arg.arg, ast.unparse(arg.annotation) if arg.annotation else None, default is not None))
    if drop_self and out and out[0][0] in ("self", "cls"):
        out = out[1:]
    return tuple(out)


def parse_target(text: str) -> Target:
    """``path/file.py::qual`` -> a checked Target (raises TargetError with what exists)."""
    path, _, qual = text.partition("::")
    if not path or not qual:
        raise TargetError(f"{text!r}: write FILE.py::FUNCTION, FILE.py::Class or FILE.py::Class.method")
    if not os.path.isfile(path):
        raise TargetError(f"{path}: no such file")
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read(), filename=path)
    except SyntaxError as exc:
        raise TargetError(f"{path}:{exc.lineno}: cannot parse: {exc.msg}") from None
    parts = qual.split(".")
    if len(parts) > 2 or not all(p.isidentifier() for p in parts):
        raise TargetError(f"{qual!r}: a target is `function`, `Class` or `Class.method`")
    top = _defs(tree.body)
    node = top.get(parts[0])
    if node is None:
        known = ", ".join(sorted(top)) or "nothing probe-able"
        raise TargetError(f"{path} has no top-level `{parts[0]}` (it defines: {known})")
    kind = "class" if isinstance(node, ast.ClassDef) else "function"
    line = node.lineno
    params: tuple[tuple[str, str | None, bool], ...] = ()
    if len(parts) == 2:
        if not isinstance(node, ast.ClassDef):
            raise TargetError(f"`{parts[0]}` in {path} is not a class, so `{qual}` is not a method")
        members = _defs(node.body)
        method = members.get(parts[1])
        if method is None:
            known = (
                ", ".join(sorted(n for n, m in members.items() if not isinstance(m, ast.ClassDef)))
                or "no methods"
            )
            raise TargetError(f"class `{parts[0]}` in {path} has no `{parts[1]}` (it defines: {known})")
        kind, line = "method", method.lineno
        params = _params(method, drop_self=True)
    elif isinstance(node, ast.ClassDef):
        forward = _defs(node.body).get("forward")
        params = _params(forward, drop_self=True) if forward is not None else ()
    else:
        params = _params(node, drop_self=False)
    module, _is_pkg, root = module_for(path)
    return Target(os.path.abspath(path), qual, module or None, root, line, kind, params)


def class_init_params(target: Target) -> tuple[tuple[str, str | None, bool], ...]:
    """The constructor's parameters of a class / method target (for the inputs stub)."""
    with open(target.file, "rb") as fh:
        tree = ast.parse(fh.read())
    node = _defs(tree.body).get(target.qualname.split(".")[0])
    if not isinstance(node, ast.ClassDef):
        return ()
    init = _defs(node.body).get("__init__")
    return _params(init, drop_self=True) if init is not None else ()
