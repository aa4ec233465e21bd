"""The eager-side context of every call in a file: what the variant analysis (issue 13) needs to
know about a call besides its arguments.

One pure pass over the module's AST, separate from the main walk: for each call it records the
global state Dynamo guards on that the surrounding code sets (grad mode from ``with
torch.no_grad()`` / ``inference_mode`` / ``enable_grad`` blocks and decorators, ``autocast``
blocks), which of its arguments come from a ``DataLoader`` that keeps its smaller last batch
(``drop_last`` not ``True``), which arguments are a choice between two constants (``"a" if c
else "b"``), and which classes read ``self.training`` (a module whose graph depends on train/eval).  Only calls with something to say are recorded, keyed ``"line:col"`` like
``CallEdge.loc``, so the project pass can join them with the resolved call edges.
"""

from __future__ import annotations

import ast

from tclint.rules.facts import VariantFacts

GRAD_CONTEXTS = {
    "no_grad": "no_grad",
    "inference_mode": "inference_mode",
    "enable_grad": "grad",
    "set_grad_enabled": "set_grad_enabled",
}
AUTOCAST = ("autocast",)
CALL_CONTEXT_WORDS = ("no_grad", "inference_mode", "enable_grad", "set_grad_enabled", "autocast", "DataLoader", ".training", " else ")
TRAINING_SENSITIVE = ("Dropout", "BatchNorm", "InstanceNorm", "AlphaDropout", "SyncBatchNorm")


def _tail(node: ast.expr) -> str | None:
    """The last name of a callee: ``torch.no_grad`` -> ``no_grad``, ``amp.autocast`` -> ``autocast``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _context_tag(expr: ast.expr, _pos) -> str | None:  # type: ignore[no-untyped-def]
    """``grad:<mode>@<pos>`` / ``autocast:<dtype>@<pos>`` for a with-item or decorator, else None
    (``_pos(node)`` gives ``line:col:end_line:end_col``)."""
    tail = _tail(expr)
    if tail in GRAD_CONTEXTS:
        mode = GRAD_CONTEXTS[tail]
        if tail == "set_grad_enabled" and isinstance(expr, ast.Call) and expr.args:
            arg = expr.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, bool):
                mode = "grad" if arg.value else "no_grad"
            else:
                mode = "grad|no_grad"
        if tail == "inference_mode" and isinstance(expr, ast.Call) and expr.args:
            arg = expr.args[0]
            if isinstance(arg, ast.Constant) and arg.value is False:
                return None
        return f"grad:{mode}@{_pos(expr)}"
    if tail in AUTOCAST or (tail or "").endswith("autocast"):
        dtype = "default"
        if isinstance(expr, ast.Call):
            for kw in expr.keywords:
                if kw.arg == "dtype":
                    dtype = ast.unparse(kw.value).rsplit(".", 1)[-1]
                if kw.arg == "enabled" and isinstance(kw.value, ast.Constant) and kw.value.value is False:
                    return None
        return f"autocast:{dtype}@{_pos(expr)}"
    return None


def _keeps_last_batch(call: ast.Call) -> bool:
    """A ``DataLoader(...)`` whose last batch may be smaller: ``drop_last`` not given as ``True``,
    and a ``batch_size`` that is not ``None`` (``batch_size=None`` yields unbatched samples)."""
    for kw in call.keywords:
        if kw.arg == "drop_last":
            return not (isinstance(kw.value, ast.Constant) and kw.value.value is True)
        if kw.arg == "batch_sampler":
            return False
        if kw.arg == "batch_size" and isinstance(kw.value, ast.Constant) and kw.value.value is None:
            return False
    return True


def _names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _names(elt)]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return []


def _root_name(expr: ast.expr) -> str | None:
    """``x`` for ``x``, ``x["img"]``, ``x.img``, ``x[0].to(dev)``."""
    while True:
        if isinstance(expr, ast.Name):
            return expr.id
        if isinstance(expr, (ast.Subscript, ast.Attribute)):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in ("to", "cuda", "float", "half", "contiguous"):
            expr = expr.func.value
        else:
            return None


class _Pass(ast.NodeVisitor):
    def __init__(self, char_col) -> None:  # type: ignore[no-untyped-def]
        self.char_col = char_col
        self.facts = VariantFacts()
        self.ctx: list[str] = []
        self.loaders: list[dict[str, str]] = [{}]  # per function scope: loader name -> DataLoader line
        self.batches: list[dict[str, str]] = [{}]  # per function scope: batch name -> DataLoader line
        self.cls: list[str] = []
        self.training_readers: set[str] = set()

    def pos(self, node: ast.AST) -> str:
        """``line:col:end_line:end_col`` of a node, in the character columns of ``node_loc``."""
        line, end = node.lineno, node.end_lineno  # type: ignore[attr-defined]
        return f"{line}:{self.char_col(line, node.col_offset)}:{end}:{self.char_col(end, node.end_col_offset)}"  # type: ignore[attr-defined]

    # scopes
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.cls.append(node.name if not self.cls else f"{self.cls[-1]}.{node.name}")
        self.generic_visit(node)
        self.cls.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for dec in node.decorator_list:
            self.visit(dec)
        tags = [t for t in (_context_tag(d, self.pos) for d in node.decorator_list) if t is not None]
        saved = self.ctx
        self.ctx = saved + tags  # a decorator's context holds for the whole body
        self.loaders.append(dict(self.loaders[0]))
        self.batches.append({})
        for stmt in node.body:
            self.visit(stmt)
        self.loaders.pop()
        self.batches.pop()
        self.ctx = saved

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Lambda(self, node: ast.Lambda) -> None:
        saved = self.ctx
        self.ctx = []  # a lambda's body runs where it is called, not here
        self.generic_visit(node)
        self.ctx = saved

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        tags = []
        for item in node.items:
            self.visit(item.context_expr)
            tag = _context_tag(item.context_expr, self.pos)
            if tag is not None:
                tags.append(tag)
        self.ctx = self.ctx + tags
        for stmt in node.body:
            self.visit(stmt)
        if tags:
            self.ctx = self.ctx[: len(self.ctx) - len(tags)]

    visit_AsyncWith = visit_With  # type: ignore[assignment]

    # DataLoaders and their batches
    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        value = node.value
        if isinstance(value, ast.Call) and _tail(value.func) == "DataLoader" and _keeps_last_batch(value):
            for target in node.targets:
                for name in _names(target):
                    self.loaders[-1][name] = self.pos(value)
                    if len(self.loaders) == 1:
                        self.loaders[0][name] = self.pos(value)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        source = node.iter
        target = node.target
        if isinstance(source, ast.Call) and _tail(source.func) == "enumerate" and source.args:
            source = source.args[0]
            if isinstance(target, ast.Tuple) and len(target.elts) == 2:
                target = target.elts[1]
        line = self.loaders[-1].get(source.id) if isinstance(source, ast.Name) else None
        if line is None and isinstance(source, ast.Call) and _tail(source.func) == "DataLoader" and _keeps_last_batch(source):
            line = self.pos(source)
        added = []
        if line is not None:
            for name in _names(target):
                if name not in self.batches[-1]:
                    self.batches[-1][name] = line
                    added.append(name)
        for stmt in node.body + node.orelse:
            self.visit(stmt)
        for name in added:
            self.batches[-1].pop(name, None)

    visit_AsyncFor = visit_For  # type: ignore[assignment]

    # what is recorded
    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "training" and isinstance(node.value, ast.Name) and node.value.id == "self" and self.cls:
            self.training_readers.add(self.cls[-1])
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        key = f"{node.lineno}:{self.char_col(node.lineno, node.col_offset)}"
        if self.ctx:
            self.facts.contexts[key] = tuple(self.ctx)
        picks = []
        for argkey, arg in [*((f"#{i}", a) for i, a in enumerate(node.args)), *((kw.arg, kw.value) for kw in node.keywords if kw.arg)]:
            if isinstance(arg, ast.Starred):
                break
            if isinstance(arg, ast.IfExp) and isinstance(arg.body, ast.Constant) and isinstance(arg.orelse, ast.Constant):
                picks.append(f"{argkey}={repr(arg.body.value)[:40]}|{repr(arg.orelse.value)[:40]}")
        if picks:
            self.facts.choices[key] = tuple(picks)
        batches = self.batches[-1]
        if batches:
            fed = []
            for i, arg in enumerate(node.args):
                name = _root_name(arg)
                if name in batches:
                    fed.append(f"#{i}@{batches[name]}")
            for kw in node.keywords:
                name = _root_name(kw.value) if kw.arg is not None else None
                if name in batches:
                    fed.append(f"{kw.arg}@{batches[name]}")
            if fed:
                self.facts.batches[key] = tuple(fed)


def call_contexts(tree: ast.Module, char_col, module: str) -> VariantFacts:  # type: ignore[no-untyped-def]
    """The VariantFacts of one parsed file (``char_col(line, utf8_col)`` converts columns the way
    ``node_loc`` does, so keys match ``CallEdge.loc``)."""
    p = _Pass(char_col)
    p.visit(tree)
    prefix = f"{module}." if module else ""
    p.facts.training_readers = tuple(sorted(prefix + c for c in p.training_readers))
    return p.facts
