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
WALK_WORDS = ("no_grad", "inference_mode", "enable_grad", "set_grad_enabled", "autocast", "DataLoader")  # the full pass
CALL_CONTEXT_WORDS = (*WALK_WORDS, ".training", " else ")  # files worth a look at all (`a if c else b` choices)
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


class _Pass:
    """Statements are walked one by one (they carry the with-contexts, loops and scopes);
    the expressions inside a statement are scanned flat with ``ast.walk``."""

    def __init__(self, char_col) -> None:  # type: ignore[no-untyped-def]
        self.char_col = char_col
        self.facts = VariantFacts()
        self.ctx: list[str] = []
        self.loaders: list[dict[str, str]] = [{}]  # per function scope: loader name -> DataLoader position
        self.batches: list[dict[str, str]] = [{}]  # per function scope: batch name -> DataLoader position
        self.cls: list[str] = []
        self.training_readers: set[str] = set()

    def pos(self, node: ast.AST) -> str:
        """``line:col:end_line:end_col`` of a node, in the character columns of ``node_loc``."""
        line, end = node.lineno, node.end_lineno  # type: ignore[attr-defined]
        return f"{line}:{self.char_col(line, node.col_offset)}:{end}:{self.char_col(end, node.end_col_offset)}"  # type: ignore[attr-defined]

    # statements
    def body(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            self.stmt(stmt)

    def stmt(self, node: ast.stmt) -> None:  # noqa: C901 - one branch per statement kind
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                self.scan(dec)
            self.scan(node.args)
            tags = [t for t in (_context_tag(d, self.pos) for d in node.decorator_list) if t is not None]
            saved = self.ctx
            self.ctx = saved + tags  # a decorator's context holds for the whole body
            self.loaders.append(dict(self.loaders[0]))
            self.batches.append({})
            self.body(node.body)
            self.loaders.pop()
            self.batches.pop()
            self.ctx = saved
        elif isinstance(node, ast.ClassDef):
            for expr in [*node.decorator_list, *node.bases, *(kw.value for kw in node.keywords)]:
                self.scan(expr)
            self.cls.append(node.name if not self.cls else f"{self.cls[-1]}.{node.name}")
            self.body(node.body)
            self.cls.pop()
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            tags = []
            for item in node.items:
                self.scan(item.context_expr)
                if item.optional_vars is not None:
                    self.scan(item.optional_vars)
                tag = _context_tag(item.context_expr, self.pos)
                if tag is not None:
                    tags.append(tag)
            saved = self.ctx
            self.ctx = saved + tags
            self.body(node.body)
            self.ctx = saved
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.for_(node)
        elif isinstance(node, ast.Assign):
            self.scan(node.value)
            for target in node.targets:
                self.scan(target)
            value = node.value
            if isinstance(value, ast.Call) and _tail(value.func) == "DataLoader" and _keeps_last_batch(value):
                for target in node.targets:
                    for name in _names(target):
                        self.loaders[-1][name] = self.pos(value)
                        if len(self.loaders) == 1:
                            self.loaders[0][name] = self.pos(value)
        else:
            for _field, value in ast.iter_fields(node):
                if isinstance(value, list):
                    for item in value:
                        if isinstance(item, ast.stmt):
                            self.stmt(item)
                        elif isinstance(item, ast.excepthandler):
                            if item.type is not None:
                                self.scan(item.type)
                            self.body(item.body)
                        elif isinstance(item, ast.match_case):
                            if item.guard is not None:
                                self.scan(item.guard)
                            self.body(item.body)
                        elif isinstance(item, ast.AST):
                            self.scan(item)
                elif isinstance(value, ast.AST):
                    self.scan(value)

    def for_(self, node: ast.For | ast.AsyncFor) -> None:
        self.scan(node.iter)
        self.scan(node.target)
        source = node.iter
        target = node.target
        if isinstance(source, ast.Call) and _tail(source.func) == "enumerate" and source.args:
            source = source.args[0]
            if isinstance(target, ast.Tuple) and len(target.elts) == 2:
                target = target.elts[1]
        where = self.loaders[-1].get(source.id) if isinstance(source, ast.Name) else None
        if where is None and isinstance(source, ast.Call) and _tail(source.func) == "DataLoader" and _keeps_last_batch(source):
            where = self.pos(source)
        added = []
        if where is not None:
            for name in _names(target):
                if name not in self.batches[-1]:
                    self.batches[-1][name] = where
                    added.append(name)
        self.body(node.body)
        self.body(node.orelse)
        for name in added:
            self.batches[-1].pop(name, None)

    # expressions
    def scan(self, root: ast.AST) -> None:
        """Record every call (and ``self.training`` read) in an expression; a lambda's body runs
        where the lambda is called, so its calls get no context from here."""
        in_lambda: set[int] = set()
        for node in ast.walk(root):
            if isinstance(node, ast.Call):
                self.call(node, id(node) not in in_lambda)
            elif isinstance(node, ast.Attribute):
                if node.attr == "training" and isinstance(node.value, ast.Name) and node.value.id == "self" and self.cls:
                    self.training_readers.add(self.cls[-1])
            elif isinstance(node, ast.Lambda):
                in_lambda.update(id(n) for n in ast.walk(node.body))

    def call(self, node: ast.Call, here: bool) -> None:
        key = f"{node.lineno}:{self.char_col(node.lineno, node.col_offset)}"
        if self.ctx and here:
            self.facts.contexts[key] = tuple(self.ctx)
        picks = _choices(node)
        if picks:
            self.facts.choices[key] = picks
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


def _choices(node: ast.Call) -> tuple[str, ...]:
    """``"<arg key>=<repr>|<repr>"`` for each argument written ``<const> if c else <const>``."""
    picks = []
    for argkey, arg in [*((f"#{i}", a) for i, a in enumerate(node.args)), *((kw.arg, kw.value) for kw in node.keywords if kw.arg)]:
        if isinstance(arg, ast.Starred):
            break
        if isinstance(arg, ast.IfExp) and isinstance(arg.body, ast.Constant) and isinstance(arg.orelse, ast.Constant):
            picks.append(f"{argkey}={repr(arg.body.value)[:40]}|{repr(arg.orelse.value)[:40]}")
    return tuple(picks)


def call_contexts(tree: ast.Module, char_col, module: str, text: str) -> VariantFacts:  # type: ignore[no-untyped-def]
    """The VariantFacts of one parsed file (``char_col(line, utf8_col)`` converts columns the way
    ``node_loc`` does, so keys match ``CallEdge.loc``).  A file that mentions none of the context
    words only gets the cheap scan for constant choices."""
    if not any(word in text for word in WALK_WORDS):
        return _cheap(tree, char_col, module, text)
    p = _Pass(char_col)
    p.body(tree.body)
    prefix = f"{module}." if module else ""
    p.facts.training_readers = tuple(sorted(prefix + c for c in p.training_readers))
    return p.facts


def _cheap(tree: ast.Module, char_col, module: str, text: str) -> VariantFacts:  # type: ignore[no-untyped-def]
    """The facts of a file without grad/autocast contexts or DataLoaders, without the full pass:
    constant choices in call arguments, and the classes whose source mentions ``self.training``."""
    facts = VariantFacts()
    lines = text.splitlines() if "self.training" in text else None
    readers = []
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, cls = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Call) and (child.args or child.keywords):
                picks = _choices(child)
                if picks:
                    facts.choices[f"{child.lineno}:{char_col(child.lineno, child.col_offset)}"] = picks
            if isinstance(child, ast.ClassDef):
                qual = f"{cls}.{child.name}" if cls else child.name
                if lines is not None and any("self.training" in ln for ln in lines[child.lineno - 1 : child.end_lineno]):
                    readers.append(qual)
                stack.append((child, qual))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.append((child, f"{cls}.{child.name}.<locals>" if cls else f"{child.name}.<locals>"))
            else:
                stack.append((child, cls))
    prefix = f"{module}." if module else ""
    facts.training_readers = tuple(sorted(prefix + c for c in readers))
    return facts
