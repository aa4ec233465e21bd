"""A document whose buffer does not parse, re-evaluated after its project changed (another
document closed, a file saved: ``Workspace.relint_open``).  The project still holds the facts of
its last good text, so what is recomputed is for that text: it must reach the editor moved to the
current (broken) text as ``carry_over`` moves it, never at the old text's places under the new
version.  Found by tests/server/test_fuzz.py (a TC104 left on line 12 after ``x = (`` replaced
the first four lines)."""

from __future__ import annotations

import pytest
from tclint.server.workspace import Workspace

from tests.helpers.lsputil import MODEL, write_project

TEXT = MODEL + "\n\nfast = torch.compile(Model())\n"  # compiled in the document itself: TC104, TC101


def _broken(text: str) -> str:
    """The first four lines replaced by an unclosed parenthesis (the fuzz's ``shift_and_break 4``)."""
    return "x = (\n" + "".join(text.splitlines(keepends=True)[4:])


def _covered(text: str, d) -> str:
    """The text under a one-line finding (lines 1-based, columns 0-based)."""
    assert d.span.start.line == d.span.end.line, d
    return text.splitlines()[d.span.start.line - 1][d.span.start.column : d.span.end.column]


def _open_and_break(tmp_path):
    root = write_project(tmp_path / "proj")
    path = str(root / "pkg" / "fuzz.py")
    ws = Workspace()
    ws.set_folders([str(root)])
    good = ws.lint(path, TEXT, 1)
    assert {"TC104", "TC101"} <= {d.code for d in good.diagnostics}
    broken = ws.lint(path, _broken(TEXT), 2)
    assert broken.parse_error
    return ws, path, good, broken


@pytest.mark.parametrize("rebuilt", [False, True], ids=["cached-project", "rebuilt-project"])
def test_a_broken_buffer_relinted_keeps_its_findings_at_their_moved_places(tmp_path, rebuilt):
    """``rebuilt``: the project is built again first (its argument-type re-walk reads the open
    buffers: the broken one must be read as its last good text, whose facts the project holds);
    else the project built for the last good text is reused (the fuzz's case)."""
    ws, path, good, broken = _open_and_break(tmp_path)
    text = _broken(TEXT)
    kept = [d for d in broken.diagnostics if d.code == "TC104"]
    assert kept and all(_covered(text, d).startswith("print(") for d in kept)  # carry_over moved it
    root = ws.docs[path].root
    if rebuilt:
        root.invalidate()  # the project changed (another document closed)
    for out in ws.relint_open(root):
        assert out.path != path or out.text == text
        for d in out.diagnostics:
            if d.code == "TC104":
                assert _covered(text, d).startswith("print("), (d.span, _covered(text, d))
            if d.code == "TC101":
                assert _covered(text, d).endswith("item()"), (d.span, _covered(text, d))
    # nothing moved for the broken text: what it shows is unchanged, so nothing is re-published
    assert ws.docs[path].diagnostics == broken.diagnostics


def test_a_broken_buffer_keeps_its_last_good_text_for_the_next_edit(tmp_path):
    """After the re-evaluation the next broken edit still carries the findings over from the last
    text that parsed (not from the broken one, whose lines the findings were never on)."""
    ws, path, _good, _broken_out = _open_and_break(tmp_path)
    root = ws.docs[path].root
    root.invalidate()
    ws.relint_open(root)
    assert ws.docs[path].last_good_text == TEXT
    worse = _broken(TEXT).replace("x = (\n", "x = (\n\n\n")  # two more lines above the findings
    out = ws.lint(path, worse, 3)
    for d in out.diagnostics:
        if d.code == "TC104":
            assert _covered(worse, d).startswith("print("), (d.span, _covered(worse, d))
