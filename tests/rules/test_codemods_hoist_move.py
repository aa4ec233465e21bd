"""The two issue-17 codemods that move code between places: ``hoist-compile`` (TC313: a
``torch.compile(...)`` re-made per loop iteration, made once before the loop) and
``move-to-caller`` (TC104/TC105: a print/logging call of compiled code moved after its one eager
call).  Each is offered only where its analysis holds, with the safety the code around it allows;
the Dynamo proofs are the rules' pinned examples (tests/rules/test_rule_examples.py)."""

from __future__ import annotations

import textwrap

import pytest
from tclint.rules.fixes import apply_fixes, offered, resolve_fixes
from tclint.rules.model import Applicability

from tests.helpers.lintutil import lint_code


def _fixes(tmp_path, code: str, source: str):
    source = textwrap.dedent(source)
    result = lint_code(tmp_path, source)
    diags = resolve_fixes([d for d in result.diagnostics if d.code == code], lambda _p: source)
    return source, diags


def _hoist(tmp_path, source: str):
    source, diags = _fixes(tmp_path, "TC313", source)
    (d,) = diags
    (fix,) = offered(d) or (None,)
    return source, fix


HEAD = """
import torch
import torch.nn as nn

model = nn.Linear(8, 8)

def scale(x):
    return x * 2
"""


def test_hoist_an_immediately_called_compile_is_safe(tmp_path):
    src, fix = _hoist(
        tmp_path,
        HEAD
        + """
def train(batches):
    outs = []
    # one step per batch
    for batch in batches:
        outs.append(torch.compile(model)(batch))
    return outs
""",
    )
    assert fix.applicability is Applicability.SAFE
    assert apply_fixes(src, [fix])[0] == src.replace(
        "    # one step per batch\n    for batch in batches:\n        outs.append(torch.compile(model)(batch))",
        "    # one step per batch\n    compiled_model = torch.compile(model)\n    for batch in batches:\n"
        "        outs.append(compiled_model(batch))",
    )


def test_hoist_goes_out_of_every_loop_that_binds_nothing_it_reads(tmp_path):
    src, fix = _hoist(
        tmp_path,
        HEAD
        + """
def train(epochs, batches):
    for epoch in range(epochs):
        n = 0
        while n < 3:
            f = torch.compile(scale, dynamic=False)
            f(batches[n])
            n += 1
""",
    )
    new = apply_fixes(src, [fix])[0]
    assert (
        "    compiled_scale = torch.compile(scale, dynamic=False)\n    for epoch in range(epochs):\n" in new
    )
    assert "            f = compiled_scale\n" in new
    assert fix.applicability is Applicability.SAFE


def test_hoist_stops_at_the_loop_that_binds_the_options(tmp_path):
    src, fix = _hoist(
        tmp_path,
        HEAD
        + """
def train(modes, batches):
    for mode in modes:
        for batch in batches:
            torch.compile(scale, mode=mode)(batch)
""",
    )
    new = apply_fixes(src, [fix])[0]
    assert (
        "    for mode in modes:\n        compiled_scale = torch.compile(scale, mode=mode)\n        for batch in batches:\n"
        in new
    )


def test_hoist_name_does_not_clash_and_attributes_are_unsafe(tmp_path):
    src, fix = _hoist(
        tmp_path,
        HEAD
        + """
compiled_net = None

class Trainer:
    def __init__(self):
        self.net = nn.Linear(8, 8)

    def fit(self, batches):
        for batch in batches:
            self.net.train()
            torch.compile(self.net)(batch)
""",
    )
    assert fix.applicability is Applicability.UNSAFE  # a method the loop calls could rebind self.net
    new = apply_fixes(src, [fix])[0]
    assert "        compiled_net_2 = torch.compile(self.net)\n        for batch in batches:\n" in new


def test_hoist_of_a_kept_wrapper_is_unsafe(tmp_path):
    src, fix = _hoist(
        tmp_path,
        HEAD
        + """
def train(batches):
    kept = []
    for batch in batches:
        f = torch.compile(scale)
        kept.append(f)
    return kept
""",
    )
    assert fix.applicability is Applicability.UNSAFE  # one wrapper object now, not one per iteration


@pytest.mark.parametrize(
    "loop",
    [
        "    for batch in batches:\n        f = torch.compile(scale)\n        f(batch)\n        scale = model\n",
        "    for m in batches:\n        torch.compile(m)(m)\n",
        "    for batch in batches:\n        torch.compile(batch.fn)(batch)\n",
    ],
)
def test_no_hoist_when_the_loop_changes_what_is_compiled(tmp_path, loop):
    src = textwrap.dedent(HEAD) + "\ndef train(batches):\n" + loop
    result = lint_code(tmp_path, src)
    assert not [d for d in result.diagnostics if d.code == "TC313"]


def test_no_finding_for_a_compile_in_a_nested_function_or_comprehension(tmp_path):
    src = textwrap.dedent(HEAD) + (
        "\ndef train(batches):\n    for batch in batches:\n        def run():\n            return torch.compile(scale)\n"
        "        run()(batch)\n    return [torch.compile(scale)(b) for b in batches]\n"
    )
    result = lint_code(tmp_path, src)
    assert not [d for d in result.diagnostics if d.code == "TC313"]


# -- move-to-caller ---------------------------------------------------------------------------------
BLOCK = """
import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)

    def forward(self, x):
        y = self.net(x)
{body}
        return y

{caller}
"""
CALLER = "model = torch.compile(Block())\nout = model(torch.randn(2, 4))\n"


def _move(tmp_path, code, source):
    source, diags = _fixes(tmp_path, code, source)
    return source, [f for d in diags for f in offered(d) if f.message.startswith("Move the")]


@pytest.mark.parametrize(
    "caller",
    [
        CALLER,
        "def main():\n    m = Block()\n    m.compile()\n    out = m(torch.randn(2, 4))\n    return out\n",
        "def main():\n    m = Block()\n    model = torch.compile(m)\n    out = model(torch.randn(2, 4))\n    return out\n",
    ],
)
def test_print_moves_after_the_one_eager_call(tmp_path, caller):
    src, (fix,) = _move(
        tmp_path, "TC104", BLOCK.format(body='        print("y", y.shape)  # shape', caller=caller)
    )
    assert fix.applicability is Applicability.UNSAFE and "output order and timing change" in fix.message
    new = apply_fixes(src, [fix])[0]
    assert 'print("y", y.shape)' not in new
    indent = "    " if caller.startswith("def") else ""
    assert (
        f'{indent}out = model(torch.randn(2, 4))\n{indent}print("y", out.shape)  # shape\n'.replace(
            "model(", "m(" if "m.compile()" in caller else "model("
        )
        in new
    )
    again = lint_code(tmp_path, new)
    assert not [d for d in again.diagnostics if d.code == "TC104"]


@pytest.mark.parametrize(
    ("body", "caller"),
    [
        ('        print("x", x.shape)', CALLER),  # reads a parameter, not the result
        ('        print("w", self.net.weight.sum())', CALLER),  # reads self
        ('        print("y", y.shape)\n        y = y + 1', CALLER),  # y changes after the print
        ('        print("y", y.shape)', CALLER + "again = model(torch.randn(2, 4))\n"),  # two calls
        ('        print("y", y.shape)', "model = torch.compile(Block())\nprint(model(torch.randn(2, 4)))\n"),
        (
            '        print("y", y.shape)',
            "model = torch.compile(Block())\nrun = [model]\nout = model(torch.randn(2, 4))\n",
        ),
        (
            '        print("y", y.shape)',
            "model = torch.compile(Block())\nother = Block()\nout = model(torch.randn(2, 4))\n",
        ),
        ('        print("y", y.shape)', ""),  # no caller in the file
        (
            '        print("y", y.shape)',
            "m = Block()\nmodel = torch.compile(m)\nout = model(torch.randn(2, 4))\nm(torch.randn(2, 4))\n",
        ),
        ('        print("y", y.shape)', CALLER + "model.forward(torch.randn(2, 4))\n"),  # bypasses compile
    ],
)
def test_print_not_moved_when_the_analysis_cannot_see_it_is_the_same(tmp_path, body, caller):
    _src, moves = _move(tmp_path, "TC104", BLOCK.format(body=body, caller=caller))
    assert moves == []


def test_print_in_a_compiled_caller_is_not_moved(tmp_path):
    src = BLOCK.format(
        body='        print("y", y.shape)',
        caller="model = Block()\n\n@torch.compile\ndef outer(x):\n    out = model(x)\n    return out\n",
    )
    _src, moves = _move(tmp_path, "TC104", src)
    assert moves == []


def test_log_not_moved_when_the_function_is_also_called_eagerly(tmp_path):
    src = """
import torch

def step(x):
    y = x.relu()
    print(y.sum())
    return y

fast = torch.compile(step)
out = fast(torch.ones(3))
plain = step(torch.ones(3))
"""
    _src, moves = _move(tmp_path, "TC104", src)
    assert moves == []


def test_logger_call_moves_and_keeps_the_module_logger(tmp_path):
    src = """
import logging
import torch

log = logging.getLogger(__name__)

def step(x):
    y = x.relu()
    log.warning("step %s", y.sum())
    return y

fast = torch.compile(step)
out = fast(torch.ones(3))
"""
    src, (fix,) = _move(tmp_path, "TC105", src)
    new = apply_fixes(src, [fix])[0]
    assert new.endswith('out = fast(torch.ones(3))\nlog.warning("step %s", out.sum())\n')
    assert "    log.warning" not in new


# -- TC203: the float -> 0-d tensor fix only where it removes a recompile ---------------------------
FLOAT_ARG = """
import torch

@torch.compile(dynamic=False)
def scale(x, alpha: float):
    return x * alpha + 1

a = scale(torch.ones(4), 0.5)
b = scale(torch.ones(4), {second})
"""


@pytest.mark.parametrize(("second", "fixed"), [("0.5", False), ("0.7", True), ("a.sum().item() / 4", True)])
def test_float_as_tensor_only_when_the_value_varies(tmp_path, second, fixed):
    """Measured on torch 2.13 (backend eager): under dynamic=False the same float every call
    compiles once (nothing for the fix to remove), two values compile twice and a 0-d tensor
    once; with default settings a float compiles twice for any number of values (not flagged)."""
    _src, diags = _fixes(tmp_path, "TC203", FLOAT_ARG.format(second=second))
    (d,) = diags
    fixes = [f for f in offered(d) if f.message.startswith("Pass `alpha` as a 0-d tensor")]
    assert bool(fixes) is fixed
    if fixed:
        assert "one compile instead of one per value" in fixes[0].message


# -- the CLI: --diff shows the codemod, --fix applies the safe hoist, the unsafe move needs --unsafe-fixes
def test_cli_fix_and_diff_for_both_codemods(tmp_path, capsys):
    from tclint.rules import registry
    from tclint.rules.cli import main

    hoist = registry.get("TC313").invalid[0]
    move = next(ex for ex in registry.get("TC104").invalid if "out = model(" in (ex.fixed or ""))
    loop, block = tmp_path / "loop.py", tmp_path / "block.py"
    loop.write_text(hoist.code)
    block.write_text(move.code)
    main(["check", "--no-cache", "--isolated", "--diff", str(loop)])
    diff = capsys.readouterr().out
    assert "+    compiled_model = torch.compile(model)\n" in diff and loop.read_text() == hoist.code
    main(["check", "--no-cache", "--isolated", "--fix", "-q", str(loop), str(block)])
    assert loop.read_text() == hoist.fixed  # safe: applied without --unsafe-fixes
    assert block.read_text() == move.code  # unsafe: not applied
    main(["check", "--no-cache", "--isolated", "--fix", "--unsafe-fixes", "-q", str(block)])
    assert block.read_text() == move.fixed


# -- notebooks: a codemod is offered when its edits stay in the finding's cell ----------------------
def _nb(cells: list[str]) -> str:
    import json

    return (
        json.dumps(
            {
                "cells": [
                    {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": c}
                    for c in cells
                ],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 5,
            },
            indent=1,
        )
        + "\n"
    )


NB_CELLS = [
    "import torch\nimport torch.nn as nn",
    "%time\nmodel = nn.Linear(8, 8)\nfor batch in [torch.randn(2, 8)] * 3:\n    torch.compile(model)(batch)",
    "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.net = nn.Linear(4, 4)\n\n"
    '    def forward(self, x):\n        y = self.net(x)\n        print("y", y.shape)\n        return y',
    "blk = torch.compile(Block())\nout = blk(torch.randn(2, 4))",
]


def test_notebook_hoist_in_its_cell_and_no_move_across_cells(tmp_path, capsys):
    import json

    from tclint.rules.cli import main

    path = tmp_path / "nb.ipynb"
    path.write_text(_nb(NB_CELLS))
    main(["check", "--no-cache", "--isolated", "--output-format", "json", str(path)])
    rows = {r["code"]: r for r in json.loads(capsys.readouterr().out)}
    hoist = rows["TC313"]
    assert hoist["cell"] == 2 and hoist["fix"]["message"].startswith("Compile once before the loop")
    assert {e["location"]["row"] for e in hoist["fix"]["edits"]} == {3, 4}  # the cell's own lines
    moves = [
        f for f in [rows["TC104"]["fix"], *rows["TC104"]["alternatives"]] if f["message"].startswith("Move")
    ]
    assert moves == []  # the eager call is in another cell
    main(["check", "--no-cache", "--isolated", "--fix", "-q", str(path)])
    cells = json.loads(path.read_text())["cells"]
    assert "".join(cells[1]["source"]) == (
        "%time\nmodel = nn.Linear(8, 8)\ncompiled_model = torch.compile(model)\n"
        "for batch in [torch.randn(2, 8)] * 3:\n    compiled_model(batch)"
    )
    assert ["".join(c["source"]) for c in (cells[0], cells[2], cells[3])] == [NB_CELLS[0], *NB_CELLS[2:]]
