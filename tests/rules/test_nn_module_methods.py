"""The table of self-returning ``nn.Module`` methods is what the installed torch says."""

from __future__ import annotations

import ast
import importlib.util
import os

from tclint.rules.nn_module_methods import SELF_RETURNING_METHODS


def derive(source: str) -> frozenset[str]:
    """Public methods of ``class Module`` annotated ``-> Self`` (on any overload)."""
    tree = ast.parse(source)
    module_cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Module")
    return frozenset(
        f.name
        for f in module_cls.body
        if isinstance(f, ast.FunctionDef)
        and not f.name.startswith("_")
        and f.returns is not None
        and ast.unparse(f.returns) in ("Self", "'Self'")
    )


def test_table_matches_installed_torch_source() -> None:
    spec = importlib.util.find_spec("torch")  # locates the source; torch is not imported
    assert spec is not None and spec.submodule_search_locations
    path = os.path.join(list(spec.submodule_search_locations)[0], "nn", "modules", "module.py")
    with open(path, encoding="utf-8") as fh:
        derived = derive(fh.read())
    assert derived == SELF_RETURNING_METHODS, (
        "torch's nn.Module changed; set rules/nn_module_methods.py to "
        f"SELF_RETURNING_METHODS = frozenset({sorted(derived)})"
    )


def test_derivation_reads_annotations() -> None:
    src = (
        "class Module:\n"
        "    def eval(self) -> Self: return self.train(False)\n"
        "    def zero_grad(self) -> None: pass\n"
        "    def _apply(self, fn) -> Self: return self\n"
        "    def get_submodule(self, t: str) -> 'Module': return self\n"
    )
    assert derive(src) == {"eval"}
