"""Compile-site idioms found on the fourth round of fresh user programs (issue 12: programs written
outside the repository the way users write them, measured before any fix; docs/accuracy.md).  Each
program is small and of our own; the truth in each docstring is what Dynamo 2.13 (CPU,
``backend="eager"``) reported running it.  The matrix lines for the same idioms are in
tests/rules/test_idiom_matrix.py (``returns-its-argument``, ``server-keeps-eval-model``,
``submodule-method-of-loaded``)."""

from __future__ import annotations

from tests.helpers.lintutil import lint_main, lint_tree, write_tree

LOADED_SUBMODULES = """
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        print("encoded", h.shape)
        return h


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(4, 2)

    def step(self, h):
        y = self.out(h)
        if y.sum() > 0:
            y = -y
        return y


class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Decoder()


def load(path=None):
    model = Seq()
    if path is not None:
        model.load_state_dict(torch.load(path))
    return model.eval()


def main():
    model = load()
    model.encoder.compile(backend="eager")
    step = torch.compile(model.decoder.step, backend="eager")
    h = model.encoder(torch.randn(2, 4))
    return step(h)
"""


def test_submodules_of_what_a_loader_returns(tmp_path):
    """``model = load()`` then ``model.encoder.compile()`` and ``torch.compile(model.decoder.step)``
    (a translation model's encoder and incremental decoder step): the in-place compile recorded no
    site at all and the method of the submodule was an unresolved site (TC311).  Dynamo 2.13: breaks
    at the ``print`` (line 13) and at the tensor ``if`` (line 24)."""
    regions, found = lint_main(str(tmp_path), LOADED_SUBMODULES)
    assert {"Encoder.forward", "Decoder.step"} <= regions
    assert {("TC104", 13), ("TC102", 24)} <= found
    assert not any(code == "TC311" for code, _ in found)


PATCHED_IN_PLACE = {
    "adapters.py": """
from torch import nn


def inject_adapters(model, rank=4):
    for _name, module in list(model.named_modules()):
        if isinstance(module, nn.Linear):
            module.rank = rank
    for p in model.parameters():
        p.requires_grad = False
    return model
""",
    "train.py": """
import torch
from torch import nn

from adapters import inject_adapters


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        return y.nonzero()


def inject_local(model: nn.Module, rank=4):
    model.rank = rank
    return model


def rebinds(model):
    model = nn.Sequential(model, nn.ReLU())
    return model


def main():
    a = torch.compile(inject_local(Net(), 8))
    b = torch.compile(rebinds(Net()))
    return a(torch.randn(2, 4)), b(torch.randn(2, 4))
""",
}


def test_a_helper_that_returns_the_module_it_was_given(tmp_path):
    """``torch.compile(inject_lora(Encoder(), cfg))``: a helper that patches the model in place and
    returns its parameter compiles what the call passes (was TC311).  A helper that rebinds the
    parameter first (``model = nn.Sequential(model, ...)``) is not such a helper.  Dynamo 2.13:
    ``nonzero`` breaks (GB0036, line 15) in both compiled modules."""
    write_tree(str(tmp_path), PATCHED_IN_PLACE)
    result = lint_tree(str(tmp_path))
    assert result.project is not None
    roots = {r.site.text for r in result.project.regions.values() if r.depth == 0 and r.site is not None}
    assert "torch.compile(inject_local(Net(), 8))" in roots
    assert "torch.compile(rebinds(Net()))" not in roots
    fns = {
        fn.qualname: fn.returns_param
        for ff in result.project.files.values()
        for fn in ff.functions.values()
        if fn.qualname in ("inject_local", "rebinds", "inject_adapters")
    }
    assert fns == {"inject_local": 0, "rebinds": None, "inject_adapters": 0}
    found = {(d.code, d.span.start.line) for d in result.diagnostics if d.path.endswith("train.py")}
    assert ("TC109", 15) in found


SERVER = """
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def predict(self, x):
        probs = self.fc(x).softmax(-1)
        return probs.argmax(-1).tolist()


class Server:
    def __init__(self, model, device="cpu"):
        self.model = model.to(device).eval()
        self.predict = torch.compile(self.model.predict, dynamic=False)


srv = Server(Classifier())
"""


def test_a_server_that_keeps_the_model_in_eval_mode(tmp_path):
    """``self.model = model.to(device).eval()`` in ``__init__``, then
    ``torch.compile(self.model.predict)``: the method of what the constructions pass (was TC311).
    Dynamo 2.13: ``.tolist()`` breaks (line 13)."""
    regions, found = lint_main(str(tmp_path), SERVER)
    assert "Classifier.predict" in regions
    assert ("TC103", 13) in found


TRAIN_FUNCTION = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        print("step")
        return self.lin(x)

    def score(self, x):
        return self(x).sum().item()


def build(width=4):
    return Net()


def train(model, steps=2):
    cmodel = torch.compile(model)
    for _ in range(steps):
        cmodel(torch.randn(2, 4))


def evaluate(model):
    score = torch.compile(model.score)
    return score(torch.randn(2, 4))


def maybe_compile(model):
    return torch.compile(model)


def main():
    train(build())
    evaluate(Net())
    fast = maybe_compile(Net())
    return fast
"""


def test_a_parameter_compiled_inside_a_module_function(tmp_path):
    """``def train(model, steps): cmodel = torch.compile(model)`` called ``train(build())``, and
    ``torch.compile(model.score)`` in ``evaluate(model)``: what the calls pass as the first
    parameter (both were TC311).  A function that returns ``torch.compile(model)`` stays a compile
    wrapper (no site of its own).  Dynamo 2.13: the ``print`` breaks (line 12, GB0059) and
    ``.item()`` (line 16, GB0124)."""
    regions, found = lint_main(str(tmp_path), TRAIN_FUNCTION)
    assert {"Net.forward", "Net.score"} <= regions
    assert {("TC104", 12), ("TC101", 16)} <= found
    assert not any(code == "TC311" for code, _ in found)


TRAINER_FIT = """
import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def forward(self, x):
        return self.lin(x).squeeze(-1)

    def training_step(self, batch):
        loss = (self(batch) ** 2).mean()
        self.logged = float(loss)
        return loss


class Trainer:
    def fit(self, module, batches):
        step = torch.compile(module.training_step)
        for batch in batches:
            step(batch).backward()


def main():
    Trainer().fit(Regressor(), [torch.randn(3, 4)])
"""


def test_a_method_compiling_a_method_of_its_parameter(tmp_path):
    """A home-made Lightning-style ``Trainer.fit(self, module, batches)`` compiling
    ``module.training_step``, called ``Trainer().fit(Regressor(), ...)``: the step of the class the
    call passes (was TC311).  Dynamo 2.13: ``float(loss)`` breaks (line 16, GB0124)."""
    regions, found = lint_main(str(tmp_path), TRAINER_FIT)
    assert {"Regressor.training_step", "Regressor.forward"} <= regions
    assert ("TC101", 16) in found
    assert not any(code == "TC311" for code, _ in found)
