"""A light import-alias table: what a name or dotted expression refers to, without libcst metadata.

Full scope analysis (libcst's QualifiedNameProvider) costs ~6x a parse; linting only needs to know
that ``t.compile`` is ``torch.compile`` and that ``Block`` is ``pkg.blocks.Block``.  The table maps
names bound by imports and module-level definitions to dotted qualified names; local shadowing is
rare in model code and handled by the function scopes in ``facts``.
"""

from __future__ import annotations

import ast


def resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    """Absolute dotted name for ``from {'.' * level}{name} import ...`` inside ``module``."""
    if level == 0:
        return name or ""
    parts = module.split(".") if module else []
    # In a package's __init__, one dot means the package itself.
    drop = level - 1 if is_package else level
    base = parts[: len(parts) - drop] if drop <= len(parts) else []
    if name:
        base = [*base, name]
    return ".".join(base)


class AliasTable:
    """Local name -> qualified dotted name, for one scope (module, or a function's own imports)."""

    __slots__ = ("names", "parent", "stars")

    def __init__(self, parent: AliasTable | None = None) -> None:
        self.names: dict[str, str] = {}
        self.parent = parent
        self.stars: list[str] = []  # modules star-imported here (`from .core import *`), in order

    def bind(self, local: str, qualified: str) -> None:
        self.names[local] = qualified

    def lookup(self, local: str) -> str | None:
        table: AliasTable | None = self
        while table is not None:
            found = table.names.get(local)
            if found is not None:
                return found
            table = table.parent
        return None

    def add_import(self, node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.bind(alias.asname, alias.name)
                else:
                    top = alias.name.split(".", 1)[0]
                    self.bind(top, top)
            return
        base = resolve_relative(module, is_package, node.level or 0, node.module)
        for alias in node.names:
            if alias.name == "*":
                if base and base not in self.stars:
                    self.stars.append(base)
                continue
            local = alias.asname or alias.name
            self.bind(local, f"{base}.{alias.name}" if base else alias.name)

    def qualify(self, expr: ast.expr) -> str | None:
        """Dotted qualified name of a Name/Attribute chain, or None when the root is unknown."""
        parts: list[str] = []
        node = expr
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.lookup(node.id)
        if root is None:
            return None
        if parts:
            parts.reverse()
            return root + "." + ".".join(parts)
        return root


def dotted(expr: ast.expr) -> str | None:
    """The literal dotted text of a Name/Attribute chain (``self.layers.append``), else None."""
    parts: list[str] = []
    node = expr
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    parts.reverse()
    return ".".join(parts)


def self_path(expr: ast.expr, self_name: str | None) -> str | None:
    """``self.a.b`` -> ``"a.b"`` when the chain starts at the method's ``self`` parameter."""
    if self_name is None:
        return None
    text = dotted(expr)
    if text is None or not text.startswith(self_name + "."):
        return None
    return text[len(self_name) + 1 :]


# Canonical spellings: torch re-exports the same objects under several names.
_CANONICAL = {
    "torch._dynamo.disable": "torch.compiler.disable",
    "torch._dynamo.eval_frame.disable": "torch.compiler.disable",
    "torch._dynamo.decorators.disable": "torch.compiler.disable",
    "torch._disable_dynamo": "torch.compiler.disable",
    "torch._dynamo.is_compiling": "torch.compiler.is_compiling",
    "torch._dynamo.external_utils.is_compiling": "torch.compiler.is_compiling",
    "torch.compiler.is_dynamo_compiling": "torch.compiler.is_compiling",
    "torch._utils.is_compiling": "torch.compiler.is_compiling",
    "torch._dynamo.allow_in_graph": "torch.compiler.allow_in_graph",
    "torch._dynamo.graph_break": "torch._dynamo.graph_break",
    "torch._dynamo.mark_dynamic": "torch._dynamo.mark_dynamic",
    "torch.nn.modules.module.Module": "torch.nn.Module",
    "torch.nn.modules.container.ModuleList": "torch.nn.ModuleList",
    "torch.nn.modules.container.Sequential": "torch.nn.Sequential",
    "torch.nn.modules.container.ModuleDict": "torch.nn.ModuleDict",
    "torch.nn.parameter.Parameter": "torch.nn.Parameter",
    "torch.library.custom_op": "torch.library.custom_op",
    "torch._library.custom_ops.custom_op": "torch.library.custom_op",
    "torch.Tensor": "torch.Tensor",
}


def canonical(qualified: str | None) -> str | None:
    if qualified is None:
        return None
    return _CANONICAL.get(qualified, qualified)


def literal_names(node: ast.expr) -> set[str] | None:
    """The names of a literal ``__all__`` value; None when it is computed (then a star import takes
    every public name)."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None
    return {str(v) for v in value} if isinstance(value, (list, tuple)) else None


def literal_all(body: list[ast.stmt]) -> tuple[str, ...] | None:
    """A module's literal ``__all__`` (sorted, the last assignment's), which limits what ``from m
    import *`` takes; None when there is none or it is computed."""
    found: tuple[str, ...] | None = None
    for stmt in body:
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        else:
            continue
        if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue
        listed = literal_names(value)
        if listed is None:
            return None
        found = tuple(sorted(listed))
    return found
