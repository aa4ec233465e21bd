"""Map a recompile's failed guard back to the source line it is about (parent side, no torch).

Dynamo names what a guard checks, not where it came from: ``tensor 'x' size mismatch at index
0``, ``n == 1``, ``self._modules['drop'].training == True``, ``G['SCALE'] == 1.0``.  Some reasons
carry a "User stack trace" (the line whose code made Dynamo install the guard): that wins.  For
the rest the guarded *source* is resolved against the frame's function: a parameter -> its line
in the ``def``; an attribute chain on a parameter (``self.k``) -> its first use in the body; a
global (``G['SCALE']``) -> its module-level assignment; otherwise the ``def`` line.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from typing import Any

_GLOBAL = re.compile(r"^G\[['\"]([^'\"]+)['\"]\]")
_LOCAL = re.compile(r"^L\[['\"]([^'\"]+)['\"]\]")


@functools.lru_cache(maxsize=64)
def _parse(path: str, mtime: float) -> ast.Module | None:
    try:
        with open(path, "rb") as fh:
            return ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None


def parse_file(path: str) -> ast.Module | None:
    try:
        return _parse(path, os.path.getmtime(path))
    except OSError:
        return None


def find_function(tree: ast.Module, name: str | None, firstlineno: int | None) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The def whose code object starts at ``firstlineno`` (its first decorator line in 3.11),
    else the def named ``name`` that contains that line."""
    best = None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        if firstlineno is not None and start == firstlineno and (name is None or node.name == name):
            return node
        if node.name == name and firstlineno is not None and start <= firstlineno <= (node.end_lineno or start):
            best = node
        elif node.name == name and best is None:
            best = node
    return best


def _chain(expr: str) -> list[str]:
    """``self._modules['drop'].training`` -> ["self", "drop", "training"] (the names a reader sees)."""
    expr = _LOCAL.sub(lambda m: m.group(1), expr.strip())
    parts = re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\[['\"][^'\"]+['\"]\]", expr)
    out = []
    for p in parts:
        if p.startswith("["):
            out.append(p[2:-2])
        elif p not in ("_modules", "_parameters", "_buffers"):
            out.append(p)
    return out


def _attr_chain(node: ast.AST) -> list[str] | None:
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
        return list(reversed(names))
    return None


def parameter(frame_file: str | None, frame_line: int | None, frame_name: str | None,
              source: str | None) -> dict[str, Any] | None:
    """The parameter a guard's source starts from (``self.k`` -> ``self``, ``x`` -> ``x``), with its
    columns: a static finding about another parameter on the same ``def`` line is another matter."""
    if not source or not frame_file or not os.path.isfile(frame_file):
        return None
    chain = _chain(source)
    tree = parse_file(frame_file)
    fn = find_function(tree, frame_name, frame_line) if tree is not None and chain else None
    if fn is None:
        return None
    a = fn.args
    for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]:
        if arg.arg == chain[0] and arg.arg not in ("self", "cls"):
            return {"file": frame_file, "line": arg.lineno, "col": arg.col_offset, "end_col": arg.end_col_offset,
                    "name": arg.arg}
    return None


def locate(recompile: dict[str, Any] | None, frame_file: str | None, frame_line: int | None,
           frame_name: str | None, resume_line: int | None = None) -> dict[str, Any] | None:
    """{file, line, how} for the guard of one recompile, or None when nothing is known.

    ``resume_line``: the frame is Dynamo's continuation after a graph break at that line; its
    arguments are the live values there, so that is where a guard on them points."""
    if not recompile:
        return None
    stack = recompile.get("stack") or []
    user = [f for f in stack if f.get("user")]
    if user:
        f = user[-1]
        return {"file": f["file"], "line": f["line"], "how": "the guard was installed by this line"}
    source = recompile.get("source")
    if resume_line is not None and frame_file:
        root = _chain(source)[0] if source and _chain(source) else None
        what = f"`{root}`" if root and not root.startswith("___") else "an intermediate value"
        return {"file": frame_file, "line": resume_line,
                "how": f"{what} as it reaches the graph break here, where compiled code resumes"}
    if not frame_file or not os.path.isfile(frame_file):
        return None
    tree = parse_file(frame_file)
    if tree is None:
        return {"file": frame_file, "line": frame_line or 1, "how": "the recompiled function"}
    fn = find_function(tree, frame_name, frame_line)
    def_line = fn.lineno if fn is not None else (frame_line or 1)
    if not source:
        return {"file": frame_file, "line": def_line, "how": "the recompiled function"}
    glob = _GLOBAL.match(source)
    if glob:
        name = glob.group(1)
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return {"file": frame_file, "line": node.lineno, "how": f"global `{name}`"}
        return {"file": frame_file, "line": def_line, "how": f"global `{name}`"}
    chain = _chain(source)
    if fn is None or not chain:
        return {"file": frame_file, "line": def_line, "how": "the recompiled function"}
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    if fn.args.vararg:
        params.append(fn.args.vararg)
    if fn.args.kwarg:
        params.append(fn.args.kwarg)
    root = chain[0]
    if len(chain) > 1:
        want = chain[1:]
        for node in ast.walk(fn):
            got = _attr_chain(node) if isinstance(node, ast.Attribute) else None
            if got and got[0] in (root, "self") and got[1:1 + len(want)] == want[: len(got) - 1]:
                return {"file": frame_file, "line": node.lineno, "how": f"`{'.'.join(got)}` is read here"}
    for arg in params:
        if arg.arg == root:
            return {"file": frame_file, "line": arg.lineno, "col": arg.col_offset, "end_col": arg.end_col_offset,
                    "how": f"parameter `{root}`"}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id == root:
            return {"file": frame_file, "line": node.lineno, "how": f"`{root}` is used here"}
    return {"file": frame_file, "line": def_line, "how": "the recompiled function"}
