"""Facts about ``torch.nn.Module``'s own methods, taken from torch's source (never imported here).

``SELF_RETURNING_METHODS``: the public methods whose return annotation is ``Self`` in
``torch/nn/modules/module.py`` (torch 2.13): ``model.eval()``, ``MyModel().to(device).half()``...
are the module itself, so what such a chain compiles is the module's ``forward``.  Methods that
return something else are not listed (``zero_grad`` and ``compile`` return None, ``get_submodule``
another module).  tests/rules/test_nn_module_methods.py re-derives the set from the installed torch and
fails when it changes; its failure message prints the new table.
"""

from __future__ import annotations

SELF_RETURNING_METHODS = frozenset(
    {"apply", "bfloat16", "cpu", "cuda", "double", "eval", "float", "half", "ipu", "mtia",
     "requires_grad_", "share_memory", "to", "to_empty", "train", "type", "xpu"}
)  # fmt: skip
