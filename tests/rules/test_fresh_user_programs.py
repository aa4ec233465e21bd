"""Idioms found by writing small user programs from scratch (issue 12, "realistic programs you have
not seen"), each cut down to the lines that matter.  Every program was run under Dynamo (torch
2.13, CPU, backend="eager"): a ``# expect: CODE`` line is a line where Dynamo broke the graph, and
the finding set must be exactly those (no other graph-break finding in the file).
"""

from __future__ import annotations

import re

import pytest

from tests.helpers.lintutil import lint_code

_EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")

PROGRAMS = {
    # serving: `.numpy()` of a tensor inside compiled code is traced as a tensor (trace_numpy), so
    # `float(np.mean(arr))` breaks like `float(t.mean())` (Dynamo: GB0033 on that line)
    "numpy-float-of-mean": """
import numpy as np
import torch


@torch.compile
def keep_tokens(input_ids, scores):
    stats = scores.detach().cpu().numpy()
    spread = np.std(stats) + np.max(stats)
    return input_ids * 2, float(np.mean(stats))  # expect: TC101
""",
    # serving: a Server that compiles the model its constructor is given (`self.model =
    # torch.compile(model.eval())`, also without `.eval()`) and calls it in a method (Dynamo:
    # GB0033 at the `.item()`); was an unresolved compile site (TC311), the forward unlinted
    "server-compiles-its-constructor-argument": """
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        logits = self.out(x)
        top = logits.max().item()  # expect: TC101
        return logits / top


class Server:
    def __init__(self, model, tagger):
        self.model = torch.compile(model.eval())
        self.tagger = torch.compile(tagger)

    def serve(self, x):
        return self.model(x), self.tagger(x)


server = Server(Classifier(), Classifier())
print(server.serve(torch.randn(2, 8)))
""",
    # detection post-processing: one-argument np.where on an array made from a tensor is
    # torch.nonzero (Dynamo: GB0036 on that line), np.unique of any array too (it is traced);
    # the three-argument form is not flagged
    "numpy-where-of-tensor": """
import numpy as np
import torch


@torch.compile
def big_boxes(boxes, areas_t):
    areas = areas_t.cpu().numpy()
    big = np.where(areas > 1.0)[0]  # expect: TC109
    clipped = np.where(areas > 1.0, areas, 0.0)
    table = np.unique(np.array([3, 1, 3]))  # expect: TC109
    return boxes[big], clipped, table
""",
    # seq2seq: a GRU submodule called from a compiled forward (Dynamo: GB0014 and the whole frame
    # falls back to eager, so the print after it is not a break of its own); a GRUCell traces
    "rnn-submodule": """
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 8)
        self.rnn = nn.LSTM(8, 8, batch_first=True)
        self.cell = nn.GRUCell(8, 8)

    def forward(self, tokens):
        out, _ = self.rnn(self.emb(tokens))  # expect: TC123
        h = self.cell(out[:, 0])
        print("encoded")
        return h


encoder = torch.compile(Encoder())
""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_fresh_program_findings(tmp_path, name: str) -> None:
    code = PROGRAMS[name]
    expected = set()
    for lineno, line in enumerate(code.split("\n"), start=1):
        m = _EXPECT.search(line)
        if m:
            expected |= {(lineno, c.strip()) for c in m.group(1).split(",") if c.strip()}
    result = lint_code(tmp_path, code)
    got = {(d.span.start.line, d.code) for d in result.diagnostics if d.code.startswith("TC1")}
    assert got == expected, [d.message for d in result.diagnostics]


def test_hook_factory_storing_under_its_own_key_does_not_grow_the_dict(tmp_path) -> None:
    # activation capture on every nn.Linear: make_hook(name) returns a hook that stores
    # stats[name] = ...; each hook
    # adds its one key on its first call, so the dict stops growing (measured: 2 compiles over 6
    # steps with two hooks, then none); a key computed per call still grows it
    code = """
import torch

stats = {}
seen = {}


def make_hook(name):
    def hook(module, inputs, output):
        stats[name] = output.detach().mean()

    return hook


def count_hook(module, inputs, output):
    seen[output.shape[0]] = output.detach().mean()  # expect: TC202


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 4)
        self.fc2 = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


net = Net()
for n, m in net.named_modules():
    if isinstance(m, torch.nn.Linear):
        m.register_forward_hook(make_hook(n))
net.fc1.register_forward_hook(count_hook)
cnet = torch.compile(net)
"""
    expected = {(i, "TC202") for i, line in enumerate(code.split("\n"), start=1) if "expect: TC202" in line}
    result = lint_code(tmp_path, code)
    got = {(d.span.start.line, d.code) for d in result.diagnostics if d.code.startswith("TC2")}
    assert got == expected, [d.message for d in result.diagnostics]
    # the hooks sit on torch submodules picked by isinstance in a named_modules() loop: they run
    # inside the compiled Net.forward, so their bodies are compiled code
    assert result.project is not None
    assert any(k.endswith("make_hook.<locals>.hook") for k in result.project.regions)


def test_a_sequential_of_torch_layers_is_torch_only_not_unresolved(tmp_path) -> None:
    # the tutorial model: nn.Sequential of torch layers, compiled; tclint said "cannot tell what
    # torch.compile(model) compiles" (TC311) while `regions` listed it unresolved
    code = """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
model = torch.compile(model)
layer = torch.compile(nn.Linear(4, 4))
"""
    result = lint_code(tmp_path, code)
    assert result.project is not None
    assert [d.code for d in result.diagnostics] == []
    assert result.project.unresolved == []
    assert sorted(u.site.loc.line for u in result.project.torch_only) == [6, 7]
