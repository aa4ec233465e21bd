"""Codemod fixes (``tclint.rules.codemods``): libcst is imported only when a fix is computed, the
edits keep every byte outside them, and each codemod's safety follows the code around it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from tclint.rules import registry
from tclint.rules.codemods import minimal_edits
from tclint.rules.fixes import apply_fixes, resolve
from tclint.rules.model import Applicability

from tests.helpers.lintutil import lint_code

PROBE = "import sys; from tclint.rules.cli import main; main(sys.argv[1:]); print('libcst' in sys.modules, file=sys.stderr)"


@pytest.mark.parametrize(("extra", "imported"), [((), "False"), (("--diff", "--unsafe-fixes"), "True")])
def test_plain_check_never_imports_libcst(tmp_path, extra, imported):
    """`tclint check` on files whose findings have codemod fixes does not import libcst; `--diff`
    (which computes them) does: the import is in the fix, not in the lint."""
    files = []
    for code, i in (("TC201", 0), ("TC310", 0), ("TC313", 0), ("TC104", 3)):  # TC313/TC104: the moves
        path = tmp_path / f"{code}.py"
        path.write_text(registry.get(code).invalid[i].code)
        files.append(str(path))
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "check", "--no-cache", *extra, *files],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert "TC201" in proc.stdout and "TC310" in proc.stdout or "+" in proc.stdout, proc.stdout
    assert proc.stderr.strip().splitlines()[-1] == imported, proc.stderr


def _fix(tmp_path, code, source):
    result = lint_code(tmp_path, source)
    diags = [d for d in result.diagnostics if d.code == code]
    assert diags, [(d.code, d.message) for d in result.diagnostics]
    return resolve(diags[0].fix, source)


def test_minimal_edits_keep_bytes_outside():
    before = "a = 1  # one\r\nb = 2\r\n\r\nc = 3\n"
    after = "a = 1  # one\r\nb = torch.tensor(2)\r\nextra()\r\n\r\nc = 3\n"
    edits = minimal_edits(before, after)
    assert apply_fixes(before, [_as_fix(edits)])[0] == after
    assert [(e.span.start.line, e.span.start.column) for e in edits] == [(2, 4)]
    assert all(e.span.end.line == 2 for e in edits)


def _as_fix(edits):
    from tclint.rules.model import Fix

    return Fix("t", edits, Applicability.SAFE)


TC310_HEAD = """
import torch
import torch.nn as nn

class Net(nn.Module):
    def forward(self, x):
        return x

    def loss(self, x):
        return self(x).sum()

"""


def test_compile_in_place_unsafe_when_another_name_holds_the_module(tmp_path):
    src = (
        TC310_HEAD
        + "net = Net()\nmodel = torch.compile(net, dynamic=False)  # keep\nvalue = model.loss(torch.ones(2))\n"
    )
    fix = _fix(tmp_path, "TC310", src)
    assert fix.applicability is Applicability.UNSAFE
    new = apply_fixes(src, [fix])[0]
    assert "model = net  # keep\nmodel.compile(dynamic=False)\n" in new


def test_compile_in_place_safe_for_its_own_name_and_keeps_crlf(tmp_path):
    src = (
        TC310_HEAD + "model = Net()\nmodel = torch.compile(model)\nvalue = model.loss(torch.ones(2))\n"
    ).replace("\n", "\r\n")
    fix = _fix(tmp_path, "TC310", src)
    assert fix.applicability is Applicability.SAFE
    assert apply_fixes(src, [fix])[0] == src.replace("model = torch.compile(model)", "model.compile()")


def test_compile_in_place_passed_on_is_unsafe_and_unwrapping_is_not_fixed(tmp_path):
    src = TC310_HEAD + "model = torch.compile(Net())\nvalue = model.loss(torch.ones(2))\nprint(model)\n"
    assert _fix(tmp_path, "TC310", src).applicability is Applicability.UNSAFE
    src = (
        TC310_HEAD
        + "model = torch.compile(Net())\nvalue = model.loss(torch.ones(2))\nraw = model._orig_mod\n"
    )
    assert _fix(tmp_path, "TC310", src) is None


def test_int_counter_reset_becomes_fill_and_reads_are_listed(tmp_path):
    src = textwrap.dedent("""
        import torch
        import torch.nn as nn

        class Counter(nn.Module):
            def __init__(self):
                super().__init__()
                self.steps = 1  # starts at one

            def reset(self):
                self.steps = 0

            def forward(self, x):
                self.steps += 1
                return x * 2

            def report(self):
                return f"{self.steps} steps"

        m = torch.compile(Counter())
    """)
    fix = _fix(tmp_path, "TC201", src)
    assert fix.applicability is Applicability.UNSAFE
    new = apply_fixes(src, [fix])[0]
    assert (
        'self.register_buffer("steps", torch.full((), 1, dtype=torch.long), persistent=False)  # starts at one'
        in new
    )
    assert "self.steps.fill_(0)" in new and "self.steps += 1" in new
    assert "line 18" in fix.message  # the f-string read needs review


def test_int_counter_before_module_init_is_not_fixed(tmp_path):
    src = textwrap.dedent("""
        import torch
        import torch.nn as nn

        class Counter(nn.Module):
            def __init__(self):
                self.steps = 0
                super().__init__()

            def forward(self, x):
                self.steps += 1
                return x

        m = torch.compile(Counter())
    """)
    assert _fix(tmp_path, "TC201", src) is None


ITEM = """
import torch

@torch.compile
def f(x):
    {body}
"""


@pytest.mark.parametrize(
    ("body", "fixed"),
    [
        ("return x / x.sum().item()", "return x / x.sum()"),
        ("s = (x * 2).max().item()\n    return x - s * 3", "s = (x * 2).max()\n    return x - s * 3"),
        ("é = 'ü'; return x * x.mean().item()", "é = 'ü'; return x * x.mean()"),  # columns in code points
    ],
)
def test_item_feeding_arithmetic_stays_a_tensor(tmp_path, body, fixed):
    src = ITEM.format(body=body)
    fix = _fix(tmp_path, "TC101", src)
    assert fix.applicability is Applicability.UNSAFE
    assert apply_fixes(src, [fix])[0] == ITEM.format(body=fixed)


@pytest.mark.parametrize(
    "body",
    [
        "s = x.sum().item()\n    if s > 0:\n        return x\n    return x * s",  # control flow
        "s = x.sum().item()\n    return x * s, s",  # returned as a number
        "return torch.full((2,), x.sum().item())",  # a call argument
        "s = x.sum().item()\n    s = s + 1\n    return x * s",  # bound again
    ],
)
def test_item_needed_as_a_number_is_not_fixed(tmp_path, body):
    assert _fix(tmp_path, "TC101", ITEM.format(body=body)) is None


MARK = """
import torch

@torch.compile
def encode(x, n=1):
    torch._dynamo.mark_dynamic(x, 0)
    return x * n

{calls}
"""


def test_mark_dynamic_moves_before_each_call_on_its_argument(tmp_path):
    src = MARK.format(
        calls="a = torch.ones(3)\nb = torch.ones(4)\nout = encode(a) + encode(n=2, x=b)  # both\n"
    )
    fix = _fix(tmp_path, "TC301", src)
    new = apply_fixes(src, [fix])[0]
    assert "def encode(x, n=1):\n    return x * n" in new
    assert (
        "torch._dynamo.mark_dynamic(a, 0)\ntorch._dynamo.mark_dynamic(b, 0)\nout = encode(a) + encode(n=2, x=b)  # both\n"
        in new
    )


@pytest.mark.parametrize(
    "calls", ["out = encode(torch.ones(3))", "", "if encode(a := torch.ones(3)).sum():\n    pass"]
)
def test_mark_dynamic_not_moved_where_the_argument_is_not_a_name(tmp_path, calls):
    assert _fix(tmp_path, "TC301", MARK.format(calls=calls)) is None


def test_cli_fix_writes_every_codemod_fix_through_writeback(tmp_path):
    """`--fix --unsafe-fixes` turns each example into its pinned `fixed` source on disk (CRLF files
    keep CRLF: the writer keeps the file's line endings and encoding)."""
    from tclint.rules.cli import main

    paths = {}
    for code in ("TC101", "TC201", "TC301", "TC310"):
        ex = next(e for e in registry.get(code).invalid if e.fixed is not None)
        path = tmp_path / f"{code}.py"
        path.write_bytes(ex.code.replace("\n", "\r\n").encode() if code == "TC310" else ex.code.encode())
        paths[code] = (path, ex)
    main(
        [
            "check",
            "--no-cache",
            "--isolated",
            "--fix",
            "--unsafe-fixes",
            "-q",
            *(str(p) for p, _ in paths.values()),
        ]
    )
    for code, (path, ex) in paths.items():
        want = ex.fixed.replace("\n", "\r\n") if code == "TC310" else ex.fixed
        assert path.read_bytes() == want.encode(), code
