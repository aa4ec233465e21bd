"""A recompile's failed guard: the source line it is about, and what it means in the user's terms
(``explain``: "train/eval mode changed", "`x` changed dtype: float32 -> float64"; parent side,
no torch; the texts are torch 2.13's, captured in tests/fixtures/runtime_probe/).

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


def find_function(
    tree: ast.Module, name: str | None, firstlineno: int | None
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The def whose code object starts at ``firstlineno`` (its first decorator line in 3.11),
    else the def named ``name`` that contains that line."""
    best = None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        if firstlineno is not None and start == firstlineno and (name is None or node.name == name):
            return node
        if (
            node.name == name
            and firstlineno is not None
            and start <= firstlineno <= (node.end_lineno or start)
        ):
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


def parameter(
    frame_file: str | None, frame_line: int | None, frame_name: str | None, source: str | None
) -> dict[str, Any] | None:
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
            return {
                "file": frame_file,
                "line": arg.lineno,
                "col": arg.col_offset,
                "end_col": arg.end_col_offset,
                "name": arg.arg,
            }
    return None


def locate(  # noqa: C901 - long, not split yet (issue 16)
    recompile: dict[str, Any] | None,
    frame_file: str | None,
    frame_line: int | None,
    frame_name: str | None,
    resume_line: int | None = None,
) -> dict[str, Any] | None:
    """{file, line, how} for the guard of one recompile, or None when nothing is known.

    ``resume_line``: the frame is Dynamo's continuation after a graph break at that line; its
    arguments are the live values there, so that is where a guard on them points."""
    if not recompile:
        return None
    stack = recompile.get("stack") or []
    user = [f for f in stack if f.get("user")]
    source = recompile.get("source")
    if resume_line is not None and frame_file and source and re.match(r"^___stack\d+$", source):
        return {
            "file": frame_file,
            "line": resume_line,
            "how": "a value computed here, at the graph break, and carried into the code resumed after it",
        }
    if user:
        f = user[-1]
        return {"file": f["file"], "line": f["line"], "how": "the guard was installed by this line"}
    if resume_line is not None and frame_file:
        root = _chain(source)[0] if source and _chain(source) else None
        what = f"`{root}`" if root and not root.startswith("___") else "an intermediate value"
        return {
            "file": frame_file,
            "line": resume_line,
            "how": f"{what} as it reaches the graph break here, where compiled code resumes",
        }
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
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, (ast.AnnAssign, ast.AugAssign))
                else []
            )
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
        for sub in ast.walk(fn):
            got = _attr_chain(sub) if isinstance(sub, ast.Attribute) else None
            if got and got[0] in (root, "self") and got[1 : 1 + len(want)] == want[: len(got) - 1]:
                return {
                    "file": frame_file,
                    "line": getattr(sub, "lineno", def_line),
                    "how": f"`{'.'.join(got)}` is read here",
                }
    for arg in params:
        if arg.arg == root:
            return {
                "file": frame_file,
                "line": arg.lineno,
                "col": arg.col_offset,
                "end_col": arg.end_col_offset,
                "how": f"parameter `{root}`",
            }
    for sub in ast.walk(fn):
        if isinstance(sub, ast.Name) and sub.id == root:
            return {"file": frame_file, "line": sub.lineno, "how": f"`{root}` is used here"}
    return {"file": frame_file, "line": def_line, "how": "the recompiled function"}


# ---------------------------------------------------------------------------------------------
# what a failed guard means, in the user's terms

DTYPES = {
    "Float": "float32",
    "Double": "float64",
    "Half": "float16",
    "BFloat16": "bfloat16",
    "Long": "int64",
    "Int": "int32",
    "Short": "int16",
    "Char": "int8",
    "Byte": "uint8",
    "Bool": "bool",
    "ComplexFloat": "complex64",
    "ComplexDouble": "complex128",
}
_TENSOR_FAIL = re.compile(
    r"^tensor '(?P<name>[^']+)' (?P<what>[\w_]+) mismatch(?:\s+at index (?P<index>\d+))?\.\s*"
    r"(?:expected (?P<expected>[^,]+?)(?:,\s*actual (?P<actual>.+))?)?$"
)
_GLOBAL_STATE = re.compile(r"^GLOBAL_STATE changed: (?P<what>.+?)\s*$")
_COMPARE = re.compile(r"^(?P<lhs>.+?)\s*(?P<op>==|!=|<=|>=|<|>)\s*(?P<rhs>.+)$")
_TYPE_FAIL = re.compile(
    r"^expected type of '(?P<name>[^']+)' to be (?:a )?(?P<want>.+?),?\s*'?\s*but found (?P<found>.+)$"
)
_EXCEPTION = re.compile(r"^'(?P<type>\w+)' object (?:has no attribute|is not) .+|^\w+Error\b")
_SIZE_EXPR = re.compile(
    r"(?:L\[['\"])?(?P<name>[A-Za-z_][\w.]*)(?:['\"]\])?\.(?:size|stride)\(\)\[(?P<index>\d+)\]"
)
_STACK = re.compile(r"^___stack\d+$")
_SCALAR_CALLS = (".item()", ".tolist()", "int(", "float(", "bool(")


def readable(expr: str | None) -> str:
    """Dynamo's source expression as the user wrote it: ``L['x']`` -> ``x``, ``G['N']`` -> ``N``,
    ``self._modules['drop'].training`` -> ``self.drop.training``."""
    if not expr:
        return ""
    text = re.sub(r"\bL\[['\"]([^'\"]+)['\"]\]", r"\1", expr.strip())
    text = re.sub(r"\bG\[['\"]([^'\"]+)['\"]\]", r"\1", text)
    text = re.sub(r"\._(?:modules|parameters|buffers)\[['\"]([^'\"]+)['\"]\]", r".\1", text)
    return text


def _source_line(path: str | None, line: int | None) -> str:
    if not path or not line or not os.path.isfile(path):
        return ""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for i, text in enumerate(fh, 1):
                if i == line:
                    return text.strip()
    except OSError:
        pass
    return ""


def explain(  # noqa: C901 - long, not split yet (issue 16)
    recompile: dict[str, Any] | None,
    frame_file: str | None = None,
    resume_line: int | None = None,
    automatic_dynamic: bool = True,
) -> dict[str, Any] | None:
    """``{kind, text, subject}``: what changed, said the way the user would (Dynamo's words stay in
    ``recompile["guard"]``).  ``kind`` is one of: train-eval, grad-mode, autocast, global-state,
    requires-grad, dtype, size, rank, stride, device, tensor, carried-value, none, type, identity,
    length, emptiness, global, attribute, value, backend, aliasing, missing-key, guard-error, other.

    ``resume_line``: the frame is the code Dynamo resumes after a graph break at that line (its
    ``___stack`` values were computed there).  ``automatic_dynamic``: Dynamo's
    ``automatic_dynamic_shapes`` (then a first size change makes the dimension dynamic)."""
    if not recompile:
        return None
    guard = (recompile.get("guard") or recompile.get("text") or "").strip()
    m = _GLOBAL_STATE.match(guard)
    if m:
        what = m.group("what").strip()
        if what.startswith("grad_mode"):
            return {
                "kind": "grad-mode",
                "subject": "grad mode",
                "text": "grad mode changed: a call ran under `torch.no_grad()` / `inference_mode()` after one "
                "with gradients on (or the reverse)",
            }
        auto = re.match(r"autocast\((\w+)\)", what)
        if auto:
            return {
                "kind": "autocast",
                "subject": "autocast",
                "text": f"autocast ({auto.group(1)}) was switched on or off between calls",
            }
        return {
            "kind": "global-state",
            "subject": what,
            "text": f"torch's global state changed between calls ({what})",
        }
    m = _TENSOR_FAIL.match(guard)
    if m:
        name = readable(m.group("name"))
        what, index, expected, actual = (
            m.group("what"),
            m.group("index"),
            m.group("expected"),
            m.group("actual"),
        )
        if what == "size":
            text = f"`{name}` changed size in dim {index}: {expected} -> {actual}"
            if automatic_dynamic:
                text += AUTOMATIC_DYNAMIC_NOTE
            return {"kind": "size", "subject": name, "text": text, "index": int(index) if index else None}
        if what == "rank":
            return {
                "kind": "rank",
                "subject": name,
                "text": f"`{name}` changed its number of dimensions: {expected} -> {actual}",
            }
        if what == "stride":
            return {
                "kind": "stride",
                "subject": name,
                "text": f"`{name}` changed strides in dim {index}: {expected} -> {actual} (a transposed or "
                "non-contiguous tensor where a contiguous one was compiled, or the reverse)",
            }
        if what == "dtype":

            def dt(v: str | None) -> str:
                return DTYPES.get((v or "").strip(), (v or "?").strip())

            return {
                "kind": "dtype",
                "subject": name,
                "text": f"`{name}` changed dtype: {dt(expected)} -> {dt(actual)}",
            }
        if what == "requires_grad":
            was = (expected or "").strip().endswith("=1")
            now = "no longer requires grad" if was else "now requires grad"
            return {
                "kind": "requires-grad",
                "subject": name,
                "text": f"`{name}` {now} (compiled with requires_grad={'True' if was else 'False'})",
            }
        if what == "device":
            return {
                "kind": "device",
                "subject": name,
                "text": f"`{name}` moved to another device: {expected} -> {actual}",
            }
        return {
            "kind": "tensor",
            "subject": name,
            "text": f"`{name}` changed ({what}: {expected} -> {actual})",
        }
    m = _TYPE_FAIL.match(guard)
    if m:
        name, found = readable(m.group("name")), m.group("found").strip()
        if "NoneType" in found:
            return {
                "kind": "none",
                "subject": name,
                "text": f"`{name}` is now None (it was a tensor when compiled)",
            }
        return {"kind": "type", "subject": name, "text": f"`{name}` changed type: now {found}"}
    if guard.startswith("BACKEND_MATCH"):
        return {
            "kind": "backend",
            "subject": "backend",
            "text": "the same code was compiled again for another backend",
        }
    if "Duplicate tensor found" in guard or "aliasing" in guard:
        return {
            "kind": "aliasing",
            "subject": None,
            "text": "two arguments now share one tensor (or stopped sharing it)",
        }
    key = re.match(r"^KeyError on (.+)$", guard)
    if key:
        what = readable(key.group(1))
        return {
            "kind": "missing-key",
            "subject": what,
            "text": f"`{what}` is missing now (the key was there when compiled)",
        }
    if _EXCEPTION.match(guard):
        return {
            "kind": "guard-error",
            "subject": None,
            "text": f"a value Dynamo checks changed kind, so checking it raised ({guard}): usually a tensor "
            "that is now None (an optional input, or a branch on `self.training`)",
        }
    source = recompile.get("source")
    subject = readable(source)
    carried = bool(source and _STACK.match(source))
    if carried and resume_line is not None:
        code = _source_line(frame_file, resume_line)
        call = next((c for c in _SCALAR_CALLS if c in code), None)
        what = f"the `{call}` value" if call and call.startswith(".") else "a Python value"
        m = _COMPARE.match(guard)
        was = f" (compiled for {m.group('rhs').strip()})" if m and m.group("op") == "==" else ""
        return {
            "kind": "carried-value",
            "subject": None,
            "text": f"{what} computed at the graph break on line {resume_line} changed{was}: a value carried "
            "across a break is a constant of the code resumed after it, so each new value recompiles",
        }
    inner = re.match(r"^(not\s+)?___check_(obj|type)_id\((.+?),\s*\d+\)$", guard)
    if inner:
        what = readable(inner.group(3))
        if inner.group(2) == "obj":
            return {
                "kind": "identity",
                "subject": what,
                "text": f"`{what}` is another object than the one compiled for",
            }
        return {"kind": "type", "subject": what, "text": f"`{what}` changed type"}
    m = re.match(r"^len\((.+)\)\s*==\s*(\d+)$", guard)
    if m:
        what = readable(m.group(1))
        return {
            "kind": "length",
            "subject": what,
            "text": f"`{what}` changed length (compiled for {m.group(2)} items)",
        }
    m = re.match(r"^(not\s+)?([A-Za-z_][\w.\[\]'\"]*)$", guard)
    if m:
        what = readable(m.group(2))
        state = "empty" if m.group(1) else "non-empty"  # the guard `not xs` held when it was compiled
        glob = "global " if m.group(2).startswith("G[") else ""
        return {
            "kind": "emptiness",
            "subject": what,
            "text": f"{glob}`{what}` was {state} when compiled and is not now (a container that grows between "
            "calls recompiles as it changes)",
        }
    size = _SIZE_EXPR.search(guard)
    if size:
        what = readable(size.group("name"))
        return {
            "kind": "size",
            "subject": what,
            "text": f"`{what}` dim {size.group('index')} left the range the dynamic graph was compiled for ({readable(guard)})",
        }
    m = _COMPARE.match(guard)
    if m and m.group("op") == "==":
        lhs, rhs = readable(m.group("lhs")), m.group("rhs").strip()
        if lhs.endswith(".training"):  # a module's (or a submodule's) mode
            mode = "train" if rhs == "True" else "eval"
            return {
                "kind": "train-eval",
                "subject": lhs,
                "text": f"train/eval mode changed (compiled in {mode} mode; `{lhs}` is now {'False' if rhs == 'True' else 'True'})",
            }
        if source and source.startswith("G["):
            return {"kind": "global", "subject": lhs, "text": f"global `{lhs}` changed (compiled for {rhs})"}
        if lhs.startswith("self."):
            static = (
                " (int module attributes are static: each value compiles anew)"
                if recompile.get("hint")
                else ""
            )
            return {
                "kind": "attribute",
                "subject": lhs,
                "text": f"module attribute `{lhs}` changed (compiled for {rhs}){static}",
            }
        specialised = (
            " (`range()` makes each value compile anew)" if "range(" in (recompile.get("code") or "") else ""
        )
        return {
            "kind": "value",
            "subject": lhs,
            "text": f"`{lhs}` changed (compiled for {lhs} == {rhs}){specialised}",
        }
    return {
        "kind": "other",
        "subject": subject or None,
        "text": f"Dynamo's check `{readable(guard)}` no longer holds",
    }


def qualified_name(frame_file: str | None, frame_line: int | None, frame_name: str | None) -> str | None:
    """``forward`` -> ``MyModel.forward``: the def's enclosing classes and functions, from the source."""
    if not frame_file or not frame_name or not os.path.isfile(frame_file):
        return frame_name
    tree = parse_file(frame_file)
    if tree is None:
        return frame_name
    target = find_function(tree, frame_name, frame_line)
    if target is None:
        return frame_name

    def walk(node: ast.AST, prefix: list[str]) -> list[str] | None:
        for child in ast.iter_child_nodes(node):
            if child is target:
                return [*prefix, child.name]  # type: ignore[attr-defined]
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                found = walk(child, [*prefix, child.name])
                if found:
                    return found
        return None

    parts = walk(tree, [])
    return ".".join(parts) if parts else frame_name


def find_calls(paths: list[str], attrs: tuple[str, ...]) -> dict[str, Any] | None:
    """The first call of one of ``attrs`` (``.train(`` / ``.eval(``, ``no_grad``...) in ``paths``."""
    for path in paths:
        tree = parse_file(path) if path and os.path.isfile(path) else None
        if tree is None:
            continue
        hits = []
        for node in ast.walk(tree):
            func = node.func if isinstance(node, ast.Call) else None
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else None
            )
            if name in attrs and isinstance(node, ast.Call):
                hits.append((node.lineno, name))
            if isinstance(node, ast.Dict):  # a declared inputs item: {"mode": "eval", ...}
                for key in node.keys:
                    if isinstance(key, ast.Constant) and key.value == "mode" and "mode" in attrs:
                        hits.append((key.lineno, "mode"))
        if hits:
            line, name = min(hits)
            return {"file": path, "line": line, "name": name}
    return None


CAUSE_CALLS = {
    "train-eval": ("train", "eval", "mode"),
    "grad-mode": ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode"),
    "autocast": ("autocast",),
}


# what a size recompile says under automatic dynamic shapes, and what it says instead for a frame
# that recompiled for the same dimension twice (so it was compiled static: ``dynamic=False``,
# ``mark_static``; ``report._static_frames``)
AUTOMATIC_DYNAMIC_NOTE = " (Dynamo then compiles that dimension as dynamic: expected once per dimension)"
STATIC_NOTE = (
    " (this frame is compiled with static shapes, as `dynamic=False` does: every new size compiles again)"
)


# what ``explain`` calls a failed guard -> the dimensions of the static variant analysis
# (``tclint.rules.variants.Dimension.kind``) that predict it
DIMENSIONS = {
    "train-eval": ("training",),
    "grad-mode": ("grad_mode",),
    "autocast": ("autocast",),
    "size": ("batch", "arg"),
    "dtype": ("dtype",),
    "device": ("device",),
    "requires-grad": ("requires_grad",),
    "global": ("global", "state"),
    "value": ("arg",),
    "attribute": ("state",),
    "length": ("state", "arg"),
    "emptiness": ("state",),
}


def dimensions(guard: str) -> tuple[str, ...]:
    """The static variant dimensions a failed guard (Dynamo's text) is an instance of: ``('grad_mode',)``
    for ``GLOBAL_STATE changed: grad_mode``; ``()`` when none predicts it."""
    explained = explain({"guard": guard, "source": _guard_source(guard)})
    found = DIMENSIONS.get(explained["kind"], ()) if explained is not None else ()
    if not found and guard.startswith(
        "tensor '"
    ):  # a name with quotes in it: tensor 'self._buffers['keys']' ...
        what = re.search(r"' (\w+) mismatch", guard)
        found = DIMENSIONS.get(
            {"requires_grad": "requires-grad", "dtype": "dtype", "device": "device", "size": "size"}.get(
                what.group(1) if what else "", ""
            ),
            (),
        )
    return found


def _guard_source(guard: str) -> str | None:
    """The guarded value of a comparison guard (``G['SCALE']`` in ``G['SCALE'] == 1.0``)."""
    m = _COMPARE.match(guard.strip())
    return m.group("lhs").strip() if m else None


def subject(guard: str) -> str | None:
    """The value a failed guard (Dynamo's text) checks, as the user writes it: ``self.calls`` for
    ``self.calls == 2``, ``n`` for ``L['n'] == 1``, ``SCALE`` for ``G['SCALE'] == 1.0``; None for a
    guard about no one named value (grad mode, a carried ``___stack`` value)."""
    explained = explain({"guard": guard, "source": _guard_source(guard)})
    what = explained.get("subject") if explained is not None else None
    return what if what and re.fullmatch(r"[A-Za-z_][\w.]*", what) and not what.startswith("___") else None


def mutated_name(path: str, line: int) -> str | None:
    """The name an assignment on ``line`` of ``path`` rebinds, as a guard's subject spells it:
    ``self.calls`` for ``self.calls += 1``, ``step`` for ``step = step + 1`` (a global)."""
    tree = parse_file(path) if os.path.isfile(path) else None
    if tree is None:
        return None
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) != line:
            continue
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AugAssign)
            else []
        )
        for target in targets:
            chain = _attr_chain(target)
            if chain:
                return ".".join(chain)
    return None
