"""The table of ``torch.Tensor`` methods is what the installed torch declares."""

from __future__ import annotations

import ast
import importlib.util
import os

from tclint.rules.tensor_methods import TENSOR_METHODS


def members(source: str, class_name: str) -> tuple[set[str], set[str]]:
    """(methods, properties and data attributes) of ``class_name`` in ``source``: ``def``s and
    aliases (``detach = _C._add_docstr(...)``) vs ``@property`` getters and annotated attributes."""
    tree = ast.parse(source)
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == class_name)
    methods: set[str] = set()
    props: set[str] = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decorators = [ast.unparse(d) for d in node.decorator_list]
            is_prop = any(
                d == "property" or d.endswith((".setter", ".getter", ".deleter", "cached_property"))
                for d in decorators
            )
            (props if is_prop else methods).add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            props.add(node.target.id)
        elif isinstance(node, ast.Assign):
            callable_value = isinstance(node.value, (ast.Call, ast.Attribute, ast.Name, ast.Lambda))
            for target in node.targets:
                if isinstance(target, ast.Name):
                    (methods if callable_value else props).add(target.id)
    return methods, props


def derive(stub: str, tensor_py: str) -> frozenset[str]:
    a, pa = members(stub, "TensorBase")
    b, pb = members(tensor_py, "Tensor")
    return frozenset(n for n in (a | b) - pa - pb if not n.startswith("_"))


def test_table_matches_installed_torch_source() -> None:
    spec = importlib.util.find_spec("torch")  # locates the source; torch is not imported
    assert spec is not None and spec.submodule_search_locations
    root = list(spec.submodule_search_locations)[0]
    with open(os.path.join(root, "_C", "__init__.pyi"), encoding="utf-8") as fh:
        stub = fh.read()
    with open(os.path.join(root, "_tensor.py"), encoding="utf-8") as fh:
        tensor_py = fh.read()
    derived = derive(stub, tensor_py)
    assert derived == TENSOR_METHODS, (
        "torch's Tensor changed; set rules/tensor_methods.py to "
        f"TENSOR_METHODS = frozenset({sorted(derived)})"
    )


def test_derivation_separates_methods_from_properties() -> None:
    stub = (
        "class TensorBase:\n"
        "    shape: Size\n"
        "    def is_floating_point(self) -> bool: ...\n"
        "    @property\n"
        "    def mT(self) -> Tensor: ...\n"
        "    def _private(self) -> None: ...\n"
    )
    tensor_py = (
        "class Tensor(TensorBase):\n    detach = _C._add_docstr(x, 'doc')\n    __array_priority__ = 1000\n"
    )
    assert derive(stub, tensor_py) == {"is_floating_point", "detach"}
