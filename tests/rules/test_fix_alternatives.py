"""Findings with several fixes (``Diagnostic.fix`` plus ``Diagnostic.alternatives``): the rule's
order of preference is kept, ``--fix`` applies the first one the safety flags allow (falling back
to the next when a codemod does not apply), ``--diff`` shows it, JSON lists every one, and each
alternative is proven under torch 2.13 like the pinned ``Example.fixed`` (the break is gone, the
eager values are the same)."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
from tclint.rules import registry
from tclint.rules.fixes import apply_fixes, offered, preferred, resolve_fixes
from tclint.rules.model import Applicability

from tests.helpers.lintutil import lint_code

PRINT_SRC = registry.get("TC104").invalid[0].code.replace("  # expect: TC104", "")
LOG_SRC = registry.get("TC105").invalid[0].code.replace("  # expect: TC105", "")


def _diag(tmp_path, code, source):
    result = lint_code(tmp_path, source)
    (d,) = [d for d in result.diagnostics if d.code == code]
    return resolve_fixes([d], lambda _path: source)[0]


@pytest.mark.parametrize(
    ("code", "source", "messages"),
    [
        (
            "TC104",
            PRINT_SRC,
            [
                "Register `print` in torch._dynamo.config.reorderable_logging_functions",
                "Print only in eager runs",
                "Remove the `print` call",
            ],
        ),
        (
            "TC105",
            LOG_SRC,
            [
                "Register `logging.Logger.debug` in torch._dynamo.config.ignore_logging_functions",
                "Log only in eager runs",
                "Remove the `logger.debug` call",
            ],
        ),
    ],
)
def test_alternatives_keep_the_rules_order(tmp_path, code, source, messages):
    d = _diag(tmp_path, code, source)
    fixes = offered(d)
    assert [f.message.split(" (")[0] for f in fixes] == messages
    assert all(f.applicability is Applicability.UNSAFE for f in fixes)
    assert preferred(d, unsafe=False) is None and preferred(d, unsafe=True) is d.fix


def test_guard_keeps_a_multiline_call_and_its_comment(tmp_path):
    src = PRINT_SRC.replace(
        'print("activations:", y.shape)', 'print("activations:",\n          y.shape)  # shape'
    )
    d = _diag(tmp_path, "TC104", src)
    guard = next(f for f in offered(d) if f.message.startswith("Print only"))
    new = apply_fixes(src, [guard])[0]
    assert (
        '    if not torch.compiler.is_compiling():\n        print("activations:",\n          y.shape)  # shape\n'
        in new
    )
    assert [f.message for f in offered(d)][-1].startswith("Print only")  # removing would drop the comment


def test_cli_fix_applies_the_preferred_allowed_fix_and_diff_shows_it(tmp_path, capsys):
    from tclint.rules.cli import main

    path = tmp_path / "step.py"
    path.write_text(PRINT_SRC)
    main(["check", "--no-cache", "--isolated", "--fix", "-q", str(path)])
    assert path.read_text() == PRINT_SRC  # all three are unsafe: nothing without --unsafe-fixes
    capsys.readouterr()
    main(["check", "--no-cache", "--isolated", "--diff", "--unsafe-fixes", str(path)])
    diff = capsys.readouterr().out
    added = [line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert len(added) == 1 and "+torch._dynamo.config.reorderable_logging_functions.add(print)\n" in diff
    main(["check", "--no-cache", "--isolated", "--fix", "--unsafe-fixes", "-q", str(path)])
    assert path.read_text() == PRINT_SRC.replace(
        "import torch\n", "import torch\ntorch._dynamo.config.reorderable_logging_functions.add(print)\n", 1
    )


def test_cli_falls_back_to_the_next_alternative_when_the_codemod_does_not_apply(tmp_path):
    """torch imported in a `try:` block: the config line has no top-level import to follow, so
    `--fix --unsafe-fixes` applies the next alternative (the guard)."""
    from tclint.rules.cli import main

    src = PRINT_SRC.replace("import torch\n", "try:\n    import torch\nexcept ImportError:\n    raise\n", 1)
    path = tmp_path / "step.py"
    path.write_text(src)
    main(["check", "--no-cache", "--isolated", "--fix", "--unsafe-fixes", "-q", str(path)])
    new = path.read_text()
    assert "reorderable_logging_functions" not in new
    assert "    if not torch.compiler.is_compiling():\n        print(" in new


def test_json_lists_the_alternatives(tmp_path, capsys):
    from tclint.rules.cli import main
    from tclint.rules.report.json_ import from_dict

    path = tmp_path / "step.py"
    path.write_text(PRINT_SRC)
    main(["check", "--no-cache", "--isolated", "--output-format", "json", str(path)])
    (row,) = [r for r in json.loads(capsys.readouterr().out) if r["code"] == "TC104"]
    assert (
        row["fix"]["message"].startswith("Register `print`") and row["fix"]["edits"]
    )  # the codemod, computed
    assert [a["message"].split(" (")[0] for a in row["alternatives"]] == [
        "Print only in eager runs",
        "Remove the `print` call",
    ]
    assert all(a["applicability"] == "unsafe" and a["edits"] for a in row["alternatives"])
    back = from_dict(row)
    assert [f.message for f in back.alternatives] == [a["message"] for a in row["alternatives"]]


ALTERNATIVE_CASES = [pytest.param(code, i, id=f"{code}-{i}") for code in ("TC104", "TC105") for i in range(3)]


@pytest.mark.dynamo
@pytest.mark.parametrize(("code", "i"), ALTERNATIVE_CASES)
def test_every_alternative_removes_the_break_and_keeps_values(tmp_path, code, i):
    from tests.helpers.dynamo_harness import eager_values, run_example, same_values

    rule = registry.get(code)
    ex = rule.invalid[0]
    source = PRINT_SRC if code == "TC104" else LOG_SRC
    fixes = offered(_diag(tmp_path, code, source))
    assert len(fixes) == 3
    fixed = apply_fixes(source, [fixes[i]])[0]
    assert fixed != source
    orig_path, fixed_path = (os.path.join(str(tmp_path), n) for n in ("example.py", "fixed.py"))
    for p, text in ((orig_path, source), (fixed_path, fixed)):
        with open(p, "w") as fh:
            fh.write(text)
    before = run_example(orig_path, source, ex.run)
    after = run_example(fixed_path, fixed, ex.run)
    assert after.error is None, after.error_text
    assert before.lines_with(rule.gb_ids), "the original does not break"
    assert not after.lines_with(rule.gb_ids), [(b.line, b.gb_id) for b in after.breaks]
    assert max(after.compiles.values(), default=0) >= 1
    want, got = eager_values(orig_path, source, ex.run), eager_values(fixed_path, fixed, ex.run)
    assert "out" in want and same_values(want["out"], got["out"])


def _notebook(cells: list[list[str]]) -> dict:
    return {
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# steps\n"]}]
        + [
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": c}
            for c in cells
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


NB_CELLS = [
    ["import torch\n"],
    [
        "%matplotlib inline\n",
        "@torch.compile\n",
        "def step(x):\n",
        "    y = x.relu()\n",
        '    print("act", y.shape)\n',
        "    return y * 2\n",
    ],
    ["out = step(torch.randn(4))"],
]


def test_notebook_cell_fixes_diff_and_write_only_that_cell(tmp_path, capsys):
    """In a notebook the fixes that stay in the finding's cell are offered in cell lines (the
    codemod, which edits the module's imports, is not); --diff shows the JSON change, --fix
    rewrites that cell's source and nothing else."""
    from tclint.rules.cli import main

    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(_notebook(NB_CELLS), indent=1) + "\n")
    before = path.read_text()
    main(["check", "--no-cache", "--isolated", "--output-format", "json", str(path)])
    (row,) = [r for r in json.loads(capsys.readouterr().out) if r["code"] == "TC104"]
    assert row["cell"] == 3 and row["fix"]["message"].startswith("Print only")
    assert row["fix"]["edits"][0]["location"] == {"row": 5, "column": 5}  # cell 3's own line 5
    main(["check", "--no-cache", "--isolated", "--diff", "--unsafe-fixes", str(path)])
    assert '+    "    if not torch.compiler.is_compiling():\\n",' in capsys.readouterr().out
    assert path.read_text() == before
    main(["check", "--no-cache", "--isolated", "--fix", "--unsafe-fixes", "-q", str(path)])
    cells = json.loads(path.read_text())["cells"]
    assert cells[2]["source"] == [
        *NB_CELLS[1][:4],
        "    if not torch.compiler.is_compiling():\n",
        '        print("act", y.shape)\n',
        NB_CELLS[1][-1],
    ]
    assert [c["source"] for c in cells[:2] + cells[3:]] == [["# steps\n"], NB_CELLS[0], NB_CELLS[2]]


def test_notebook_fix_removing_a_cells_last_statement_stays_in_the_cell(tmp_path):
    """The removal's edit ends at the start of the next line, which in the module is the next
    cell's first line: in the notebook it ends at the end of its own cell."""
    from tclint.rules.notebook import fix_notebook

    cells = [
        ["import torch\n"],
        ["@torch.compile\n", "def step(x):\n", "    x = x + 1\n", '    print("act")'],
        ["out = step(torch.randn(4))"],
    ]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(_notebook(cells), indent=1) + "\n")
    result = lint_code(tmp_path, path.read_text(), name="nb2.ipynb")
    (d,) = [d for d in result.diagnostics if d.code == "TC104"]
    removal = next(f for f in offered(d) if f.message.startswith("Remove"))
    assert (removal.edits[0].span.end.line, removal.edits[0].span.end.column) == (4, len('    print("act")'))
    new, n = fix_notebook(
        path.read_bytes(), [dataclasses.replace(d, fix=removal, alternatives=())], unsafe=True
    )
    cells_after = json.loads(new)["cells"]
    assert n == 1 and cells_after[2]["source"] == ["@torch.compile\n", "def step(x):\n", "    x = x + 1\n"]
    assert cells_after[3]["source"] == cells[2]


DYNAMIC_FALSE = """
import torch

def encode(x):
    return x.cumsum(0) * 2

encoder = torch.compile(
    encode,
    mode="default",  # keep
    dynamic=False{tail}
)
"""


@pytest.mark.parametrize("tail", [",", ""])
def test_dynamic_false_alternatives(tmp_path, tail):
    """TC207: `dynamic=True` (preferred), the option removed (its comma too, the comment on the
    other argument kept), and a display-only mark_dynamic suggestion."""
    src = DYNAMIC_FALSE.format(tail=tail)
    d = _diag(tmp_path, "TC207", src)
    to_true, removed, mark = offered(d)
    assert apply_fixes(src, [to_true])[0] == src.replace("dynamic=False", "dynamic=True")
    without = (
        '"default",  # keep\n)' if tail else '"default"  # keep\n)'
    )  # no trailing comma: the one before goes
    assert apply_fixes(src, [removed])[0] == src.replace(
        f'"default",  # keep\n    dynamic=False{tail}\n)', without
    )
    assert mark.applicability is Applicability.DISPLAY_ONLY and not mark.edits
    assert preferred(d, unsafe=True) is to_true and preferred(d, unsafe=False) is None


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("torch.compile(encode, dynamic=False)", "torch.compile(encode)"),
        ("torch.compile(encode, dynamic=False, mode='default')", "torch.compile(encode, mode='default')"),
        ("torch.compile(dynamic=False)(encode)", "torch.compile()(encode)"),
    ],
)
def test_dynamic_false_removed_on_one_line(tmp_path, call, expected):
    src = f"import torch\n\ndef encode(x):\n    return x * 2\n\nencoder = {call}\n"
    removed = offered(_diag(tmp_path, "TC207", src))[1]
    assert apply_fixes(src, [removed])[0] == src.replace(call, expected)


@pytest.mark.dynamo
def test_dynamic_false_removed_compiles_twice_instead_of_per_size(tmp_path):
    """TC207's second alternative under torch 2.13: 5 sizes compile 5 variants with
    `dynamic=False`, 2 without it (the second compile is dynamic), same values."""
    from tests.helpers.dynamo_harness import eager_values, run_example, same_values

    ex = registry.get("TC207").invalid[0]
    removed = offered(_diag(tmp_path, "TC207", ex.code))[1]
    fixed = apply_fixes(ex.code, [removed])[0]
    assert "dynamic" not in fixed.split("# expect")[0]
    paths = [os.path.join(str(tmp_path), n) for n in ("example.py", "fixed.py")]
    for p, text in zip(paths, (ex.code, fixed), strict=True):
        with open(p, "w") as fh:
            fh.write(text)
    before, after = run_example(paths[0], ex.code, ex.run), run_example(paths[1], fixed, ex.run)
    assert after.error is None, after.error_text
    assert max(before.compiles.values()) == 5 and max(after.compiles.values()) == 2, (
        before.compiles,
        after.compiles,
    )
    want, got = eager_values(paths[0], ex.code, ex.run), eager_values(paths[1], fixed, ex.run)
    assert same_values(want["outs"], got["outs"])


BRANCH = """
import torch

@torch.compile
def f(x: torch.Tensor) -> torch.Tensor:
{body}
"""


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (
            "    if x.sum() > 0:\n        y = x + 1\n    else:\n        y = x - 1\n    return y",
            "    y = torch.where(x.sum() > 0, x + 1, x - 1)\n    return y",
        ),
        (
            "    if x.sum() > 0:\n        y = x + 1\n        y = y * 2\n    else:\n        y = x - 1\n    return y",
            None,
        ),  # longer branch
        (
            "    if x.sum() > 0:\n        y = x + 1\n    else:\n        z = x - 1\n        y = z\n    return y",
            None,
        ),
        (
            "    if x.sum() > 0:\n        y = x + 1  # why\n    else:\n        y = x - 1\n    return y",
            None,
        ),  # a comment would go
    ],
)
def test_branch_where_and_cond_suggestion(tmp_path, body, where):
    """A tensor if/else: torch.where when each side is one assignment (or return) of a pure tensor
    expression to the same name, and always the display-only torch.cond suggestion after it."""
    src = BRANCH.format(body=body)
    fixes = offered(_diag(tmp_path, "TC102", src))
    assert fixes[-1].applicability is Applicability.DISPLAY_ONLY and "torch.cond" in fixes[-1].message
    if where is None:
        assert len(fixes) == 1
    else:
        assert len(fixes) == 2 and apply_fixes(src, [fixes[0]])[0] == BRANCH.format(body=where)


def test_branch_elif_gets_no_where(tmp_path):
    src = BRANCH.format(
        body="    if x.mean() > 2:\n        return x\n    elif x.sum() > 0:\n        return x + 1\n    else:\n        return x - 1"
    )
    result = lint_code(tmp_path, src)
    assert all(
        f.applicability is Applicability.DISPLAY_ONLY
        for d in result.diagnostics
        if d.code == "TC102"
        for f in offered(d)
    )


def test_compile_in_a_loop_gets_a_display_only_hoist(tmp_path):
    """TC209 on `torch.compile(Head(n))` per episode: the hoist is a suggestion only (the shapes
    truly differ), with no edits, so --fix never applies it."""
    ex = registry.get("TC209").invalid[1]
    d = _diag(tmp_path, "TC209", ex.code)
    (hoist,) = offered(d)
    assert hoist.applicability is Applicability.DISPLAY_ONLY and not hoist.edits and "Hoist" in hoist.message
    assert preferred(d, unsafe=True) is None


LOOP = """
import torch

@torch.compile
def run(x, n: int):
    total = torch.zeros(())
    for i in range(3):
{body}
    return total * 2
"""
LOOP_BODY = "        h = x * (i + 1)\n        print('step', i)\n        total = total + h.sum()"


def _extraction(tmp_path, src):
    d = _diag(tmp_path, "TC104", src)
    return next((f for f in offered(d) if f.message.startswith("Move the body of the loop")), None)


def test_loop_body_extracted_into_a_helper(tmp_path):
    src = LOOP.format(body=LOOP_BODY)
    new = apply_fixes(src, [_extraction(tmp_path, src)])[0]
    assert new == (
        "\nimport torch\n\n\ndef _run_loop_body(x, i, total):\n    h = x * (i + 1)\n    print('step', i)\n"
        "    total = total + h.sum()\n    return total\n\n@torch.compile\ndef run(x, n: int):\n"
        "    total = torch.zeros(())\n    for i in range(3):\n        total = _run_loop_body(x, i, total)\n    return total * 2\n"
    )
    again = lint_code(tmp_path, new)
    assert not [
        d for d in again.diagnostics if d.extra.get("frame_drop")
    ]  # the break is the helper's own now


@pytest.mark.parametrize(
    "body",
    [
        LOOP_BODY + "\n        if total > 3:\n            break",
        LOOP_BODY + "\n        continue",
        "        print('step', i)\n        return total",
        "        print('step', i)\n        if i:\n            last = i\n    total = total + last",  # maybe unassigned, needed after
        "        print('step', i)\n        total = total + sum(v for v in range(i))",  # a comprehension scope
    ],
)
def test_loop_body_not_extracted(tmp_path, body):
    src = LOOP.format(body=body)
    fix = _extraction(tmp_path, src)
    assert fix is None or apply_fixes(src, [fix])[1] == 0


@pytest.mark.dynamo
def test_loop_body_extraction_compiles_the_body_under_dynamo(tmp_path):
    """torch 2.13: with the print in the loop body Dynamo gives up on `run` and nothing is
    compiled; with the body in a helper, the helper's frame is compiled around the break.  Same
    values eagerly."""
    from tests.helpers.dynamo_harness import eager_values, run_example, same_values

    src = LOOP.format(body=LOOP_BODY)
    fixed = apply_fixes(src, [_extraction(tmp_path, src)])[0]
    run = "out = run(torch.ones(3), 1)"
    paths = [os.path.join(str(tmp_path), n) for n in ("example.py", "fixed.py")]
    for p, text in zip(paths, (src, fixed), strict=True):
        with open(p, "w") as fh:
            fh.write(text)
    before, after = run_example(paths[0], src, run), run_example(paths[1], fixed, run)
    assert before.error is None and after.error is None, (before.error_text, after.error_text)
    assert set(before.compiles) == {"run"} and before.fallbacks == ["run"]  # nothing compiled
    assert after.compiles.get("_run_loop_body", 0) >= 1 and "_run_loop_body" not in after.fallbacks, (
        after.compiles
    )
    want, got = eager_values(paths[0], src, run), eager_values(paths[1], fixed, run)
    assert same_values(want["out"], got["out"])
