"""Recompile causes found on fresh user programs (issue 12, stop 26): parameters frozen and
unfrozen between phases, a batch of one after batched calls, the shorter last slice of a strided
loop, a dict whose keys are picked per iteration, a list whose length is, a config object taken
from a list per phase.  Each program's compile count was measured with torch 2.13 CPU
(``CompileCounter``, backend eager), given per case; where the count depends on how many
distinct values the data brings (dict keys, list lengths, configs), tclint counts the 2 such a
loop makes at least."""

from __future__ import annotations

import textwrap

import pytest
from tclint.rules.variants import variants

from tests.helpers.lintutil import lint_code

NET = """
import dataclasses
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.fc(x))

net = Net()
model = torch.compile(net)
"""

DICT_NET = """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, feats):
        h = 0
        for k, v in feats.items():
            h = h + self.fc(v)
        return h

model = torch.compile(Net())
"""

LIST_NET = DICT_NET.replace(
    "def forward(self, feats):\n        h = 0\n        for k, v in feats.items():\n            h = h + self.fc(v)\n        return h",
    "def forward(self, crops):\n        return torch.stack([self.fc(c) for c in crops]).mean(0)",
)

CASES = [
    # (id, module, driver, {dimension kind: values}, predicted compiles; measured compiles in the comment)
    (
        "freeze-then-unfreeze",  # measured: 2
        NET,
        "def set_trainable(m, flag):\n    for p in m.parameters():\n        p.requires_grad = flag\n\n"
        "def main(x):\n    set_trainable(net.fc, False)\n    model(x).sum().backward()\n"
        "    set_trainable(net.fc, True)\n    model(x).sum().backward()\n",
        {"requires_grad": ["as built", "flipped"]},
        2,
    ),
    (
        "requires_grad_-on-a-submodule",  # measured: 2 (the same guard as the loop above)
        NET,
        "def main(x):\n    net.fc.requires_grad_(False)\n    model(x)\n    net.fc.requires_grad_(True)\n    model(x)\n",
        {"requires_grad": ["as built", "flipped"]},
        2,
    ),
    (
        "frozen-once-before-the-calls",  # measured: 1
        NET,
        "def main():\n    net.fc.requires_grad_(False)\n    for _ in range(3):\n        model(torch.randn(3, 4)).sum().backward()\n",
        {},
        1,
    ),
    (
        "a-batch-of-one-after-a-batch",  # measured: 2
        NET,
        "def main(xs):\n    with torch.no_grad():\n        model(xs)\n        model(xs[0].unsqueeze(0))\n",
        {"single": ["size 1", "as given"]},
        2,
    ),
    (
        "strided-slices-then-single-requests",  # measured: 3 (4, 4, 2 rows: static then dynamic; then 1)
        NET,
        "def main(xs):\n    with torch.no_grad():\n        for i in range(0, len(xs), 4):\n            model(xs[i:i + 4])\n"
        "        one = xs[1][None]\n        model(one)\n",
        {"size": ["first size", "dynamic"], "single": ["size 1", "as given"]},
        3,
    ),
    (
        "dict-keys-picked-per-iteration",  # measured: 3 (three distinct key sets)
        DICT_NET,
        "def make_batch(names):\n    return {n: torch.randn(2, 4) for n in names}\n\n"
        'def main():\n    for names in (["a"], ["a", "b"], ["a"], ["b", "c"]):\n        model(make_batch(names))\n',
        {"structure": ["first", "another"]},
        2,
    ),
    (
        "collate-keeps-its-input-keys",  # measured: 1
        DICT_NET,
        "def collate(items):\n    out = {}\n    for k in items[0]:\n        out[k] = torch.stack([it[k] for it in items])\n    return out\n\n"
        'def main():\n    for step in range(4):\n        items = [{"a": torch.randn(4)} for _ in range(2)]\n        model(collate(items))\n',
        {},
        1,
    ),
    (
        "list-length-set-per-iteration",  # measured: 3 (three distinct lengths)
        LIST_NET,
        "def make_crops(x, n):\n    out = []\n    for k in range(n):\n        out.append(x + k)\n    return out\n\n"
        "def main():\n    for n in (1, 2, 3, 2):\n        model(make_crops(torch.randn(2, 4), n))\n",
        {"structure": ["first", "another"]},
        2,
    ),
]


@pytest.mark.parametrize(
    ("module", "driver", "dims", "count"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_recompile_causes_of_user_programs(tmp_path, module, driver, dims, count):
    result = lint_code(tmp_path, textwrap.dedent(module) + "\n" + driver)
    (v,) = [v for k, v in variants(result.project).items() if k.endswith("Net.forward")]
    assert {d.kind: d.values for d in v.dims} == dims
    assert v.count == count


CONFIG = """
import dataclasses
import torch

@dataclasses.dataclass
class Cfg:
    scale: float = 1.0
    shift: float = 0.0

@torch.compile
def f(x, cfg: Cfg):
    return x * cfg.scale + cfg.shift
"""


@pytest.mark.parametrize(
    ("driver", "count"),
    [
        # measured: 3 (scale changes, then shift: a recompile each, floats go dynamic after)
        (
            "def main():\n    for cfg in [Cfg(), Cfg(scale=2.0), Cfg(scale=3.0, shift=1.0)]:\n        f(torch.randn(3), cfg)\n",
            2,
        ),
        # measured: 1 (one config, a loop over tensors)
        ("def main(xs):\n    cfg = Cfg(scale=2.0)\n    for x in xs:\n        f(x, cfg)\n", 1),
    ],
    ids=["a-config-per-phase", "one-config-many-inputs"],
)
def test_a_config_object_taken_from_a_list_per_phase(tmp_path, driver, count):
    result = lint_code(tmp_path, textwrap.dedent(CONFIG) + "\n" + driver)
    (v,) = [v for k, v in variants(result.project).items() if k.endswith("::f")]
    assert v.count == count
    assert [d.kind for d in v.dims] == (["structure"] if count > 1 else [])
