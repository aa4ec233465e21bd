"""Model registries filled by a class decorator (issue 12; timm / mmcv / detectron2 / fairseq style):
``@register("mlp")`` stores the class into a module-level dict, and the compiled model is built by
name, ``MODELS[cfg.name](cfg)``, in another module.  The compile site compiles the classes the
registry holds (only the one registered under the key, for a literal key at the site).  The matrix
line for the same idiom is ``decorator-registry`` in tests/rules/test_idiom_matrix.py."""

from __future__ import annotations

from tests.helpers.lintutil import lint_tree, write_tree

# The truth is what Dynamo 2.13 (CPU, backend="eager") reported running train.main(): a graph
# break at the print of MLP.forward (zoo/mlp.py:15, GB0059) and at the tensor `if` of
# Gated.forward (zoo/gated.py:14, data-dependent branching).
ZOO = {
    "zoo/__init__.py": """from . import gated, mlp  # noqa: F401  (register the models)
from .registry import MODELS, build
""",
    "zoo/registry.py": """MODELS = {}


def register(name):
    def deco(cls):
        MODELS[name] = cls
        return cls

    return deco


def build(name, width):
    return MODELS[name](width)
""",
    "zoo/mlp.py": """import torch
from torch import nn

from .registry import register


@register("mlp")
class MLP(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        print("mlp", h.shape)
        return torch.relu(h)
""",
    "zoo/gated.py": """from torch import nn

from .registry import register


@register("gated")
class Gated(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        if h.sum() > 0:
            h = -h
        return h
""",
    "train.py": """import torch

from zoo import MODELS, build


def main():
    model = torch.compile(build("mlp", 4), backend="eager")
    direct = torch.compile(MODELS["gated"](4), backend="eager")
    x = torch.randn(2, 4)
    return model(x), direct(x)


if __name__ == "__main__":
    main()
""",
}


def _targets(result, line: int) -> set[str]:
    project = result.project
    site = next(s for _ff, s in project.sites.values() if s.loc.line == line)
    return {k.split("::", 1)[1] for k in project.site_targets[site.id]}


def test_a_registry_filled_by_class_decorators_in_other_modules(tmp_path):
    """``build(name)`` returning ``MODELS[name](width)`` compiles every registered class (the key is
    the caller's); ``MODELS["gated"](4)`` at the site only the class registered as "gated".  Both
    sites were unresolved (TC311) and neither break was found."""
    write_tree(str(tmp_path), ZOO)
    result = lint_tree(str(tmp_path))
    found = {
        (d.path.replace("\\", "/").split("/")[-1], d.span.start.line, d.code) for d in result.diagnostics
    }
    assert {("mlp.py", 15, "TC104"), ("gated.py", 14, "TC102")} <= found
    assert not any(code == "TC311" for _p, _l, code in found)
    assert _targets(result, 7) == {"MLP.forward", "Gated.forward"}
    assert _targets(result, 8) == {"Gated.forward"}


def test_a_bare_decorator_and_a_get_in_one_file(tmp_path):
    """``@register`` storing ``REGISTRY[cls.__name__] = cls`` itself, the model looked up with
    ``REGISTRY.get(name)`` and bound to a variable before it is compiled, or the class bound first
    (``cls = REGISTRY[name]``); a dict no decorator fills stays unresolved."""
    main = """import torch
from torch import nn

REGISTRY = {}
OTHER = {}


def register(cls):
    REGISTRY[cls.__name__] = cls
    return cls


@register
class Net(nn.Module):
    def forward(self, x):
        print("net")
        return x


def main(name):
    model = REGISTRY.get(name)()
    compiled = torch.compile(model)
    other = torch.compile(OTHER[name]())
    return compiled, other


def by_class(name):
    cls = REGISTRY[name]
    return torch.compile(cls())
"""
    write_tree(str(tmp_path), {"main.py": main})
    result = lint_tree(str(tmp_path))
    found = {(d.span.start.line, d.code) for d in result.diagnostics}
    assert (16, "TC104") in found
    assert _targets(result, 22) == {"Net.forward"}
    assert (23, "TC311") in found
    assert _targets(result, 29) == {"Net.forward"}
