"""Fixes and `--add-noqa` on fuzzed code: what tclint writes into a user's file must not break it.
Properties: applying every safe (and every unsafe) fix to a file the interpreter accepts leaves a
file it accepts; the edits change nothing outside their ranges; `add_noqa` keeps the file
parseable, silences what it annotated, and is idempotent; for notebooks it keeps valid JSON."""

from __future__ import annotations

import json
import os

from hypothesis import assume, given
from hypothesis import strategies as st
from tclint.rules.fixes import add_noqa, apply_fixes, fix_allowed, offered
from tclint.rules.notebook import add_noqa_to_notebook

from tests.helpers import fuzz_known as known
from tests.helpers.fuzzutil import (
    FUZZ_DIR,
    budget,
    compiled_notebooks,
    compiles,
    gently_mutated_files,
    lint_bytes,
    notebooks,
    python_seeds,
    tried,
)

SEEDS = python_seeds()
UNSUPPRESSIBLE = ("TC000", "TC011", "TC012")  # add_noqa leaves these alone by design


@budget(300)
@given(gently_mutated_files(SEEDS), st.booleans())
def test_fixes_keep_code_valid(data, unsafe):
    assume(compiles(data))
    tried("library: --fix (safe / unsafe) keeps valid code valid")
    result = lint_bytes(data)
    text = result.sources[os.path.join(FUZZ_DIR, "fuzz.py")].text
    fixes = [d.fix for d in result.diagnostics if fix_allowed(d.fix, unsafe) and not known.fix_open(d)]
    new, n = apply_fixes(text, fixes)
    assert n <= len(fixes)
    compile(new, "fixed.py", "exec", dont_inherit=True)
    # and the fixed file lints cleanly of what was fixed, without a crash
    lint_bytes(new.encode("utf-8"))


@budget(300)
@given(gently_mutated_files(SEEDS))
def test_add_noqa_silences_and_is_idempotent(data):
    assume(compiles(data))
    result = lint_bytes(data, table={})
    text = result.sources[os.path.join(FUZZ_DIR, "fuzz.py")].text
    assume(not known.add_noqa_open(text))
    tried("library: add_noqa keeps code valid, silences, is idempotent")
    new, _ = add_noqa(text, result.diagnostics)
    compile(new, "noqa.py", "exec", dont_inherit=True)
    again = lint_bytes(new.encode("utf-8"), table={})
    _, more = add_noqa(new, again.diagnostics)
    assert more == 0, "a second --add-noqa added more"
    # every annotated finding is silenced, those inside multi-line strings and continued statements
    # too (their comment goes on the last line, which speaks for the whole string or statement)
    before = {
        (d.line, d.code)
        for d in result.diagnostics
        if d.code not in UNSUPPRESSIBLE and d.noqa_line is not None
    }
    still = {(d.line, d.code) for d in again.diagnostics} & before
    assert still == set()


@budget(300)
@given(st.one_of(notebooks, compiled_notebooks()))
def test_add_noqa_to_notebooks(nb):
    data = json.dumps(nb).encode("utf-8")
    assume(not known.notebook_open(data))
    tried("library: add_noqa on notebooks keeps valid JSON and silences")
    result = lint_bytes(data, name="nb.ipynb", table={})
    if result.sources[os.path.join(FUZZ_DIR, "nb.ipynb")].text is None or not result.diagnostics:
        return  # the CLI does not call add_noqa_to_notebook for these
    new, n = add_noqa_to_notebook(data, result.diagnostics)
    json.loads(new.decode("utf-8"))
    if n:
        again = lint_bytes(new, name="nb.ipynb", table={})
        before = {(d.cell, d.line, d.code) for d in result.diagnostics if d.code not in UNSUPPRESSIBLE}
        assert not before & {(d.cell, d.line, d.code) for d in again.diagnostics}


def _codemod_seeds() -> list[bytes]:
    """The seeds whose findings carry a codemod fix (libcst), so mutations exercise the codemods."""
    out = []
    for data in SEEDS:
        result = lint_bytes(data)
        if any(f.codemod for d in result.diagnostics for f in offered(d)):
            out.append(data)
    return out


CODEMOD_SEEDS = _codemod_seeds()


def test_codemod_seeds_exist():
    assert len(CODEMOD_SEEDS) >= 2  # the examples of TC201 and TC310 at least


def test_every_codemod_applies_on_a_seed():
    """Each codemod of ``tclint.rules.codemods`` computes a fix on at least one seed as it is,
    so the mutations below exercise every one of them (the TC313 hoist and the TC104/TC105 move
    to the eager caller included), not only the ones a seed happens to trigger."""
    from tclint.rules import codemods
    from tclint.rules.fixes import resolve

    applied = set()
    for data in CODEMOD_SEEDS:
        result = lint_bytes(data)
        text = result.sources[os.path.join(FUZZ_DIR, "fuzz.py")].text
        for f in (f for d in result.diagnostics for f in offered(d) if f.codemod):
            if resolve(f, text) is not None:
                applied.add(f.codemod[0])
    assert applied == set(codemods._CODEMODS), sorted(applied)


@budget(200)
@given(gently_mutated_files(CODEMOD_SEEDS))
def test_codemod_fixes_parse_keep_bytes_and_are_idempotent(data):
    """Every codemod fix on mutated code: its minimal edits reproduce the codemod's output exactly,
    they are disjoint and leave every byte outside them as it was, the result parses, and once the
    codemod fixes are applied (overlapping ones in later passes), applying them again changes nothing."""
    from tclint.rules import codemods
    from tclint.rules.fixes import resolve
    from tclint.rules.source import LineIndex

    assume(compiles(data))
    tried("library: codemod fixes reproduce libcst's output, keep bytes outside, are idempotent")
    result = lint_bytes(data)
    text = result.sources[os.path.join(FUZZ_DIR, "fuzz.py")].text
    pending = [f for d in result.diagnostics for f in offered(d) if f.codemod]
    applied = []
    for fix in pending:
        done = resolve(fix, text)
        if done is None:
            continue
        applied.append(done)
        expected = codemods.run(fix.codemod, text)[0]
        new, n = apply_fixes(text, [done])
        assert n == 1 and new == expected
        compile(new, "fixed.py", "exec", dont_inherit=True)
        index = LineIndex(text)
        spans = sorted(
            (
                index.offset(e.span.start.line, e.span.start.column),
                index.offset(e.span.end.line, e.span.end.column),
                e.content,
            )
            for e in done.edits
        )
        at = shift = 0
        for start, end, content in spans:
            assert start >= at, "overlapping edits"
            assert new[at + shift : start + shift] == text[at:start], "a byte outside the edits changed"
            shift += len(content) - (end - start)
            at = end
        assert new[at + shift :] == text[at:]
    if not applied:
        return
    # fixes that overlap wait for the next pass (as with --fix); once every pending one is in,
    # another pass changes nothing
    fixed = text
    for _ in range(len(pending) + 1):
        new, _n = apply_fixes(fixed, pending)
        compile(new, "fixed.py", "exec", dont_inherit=True)
        if new == fixed:
            break
        fixed = new
        pending = [f for d in lint_bytes(fixed.encode("utf-8")).diagnostics for f in offered(d) if f.codemod]
    else:
        raise AssertionError("codemod fixes keep changing the code pass after pass")
    assert apply_fixes(fixed, pending)[0] == fixed


def _keeps_bytes_outside(text: str, new: str, edits) -> None:
    from tclint.rules.source import LineIndex

    index = LineIndex(text)
    spans = sorted(
        (
            index.offset(e.span.start.line, e.span.start.column),
            index.offset(e.span.end.line, e.span.end.column),
            e.content,
        )
        for e in edits
    )
    at = shift = 0
    for start, end, content in spans:
        assert start >= at, "overlapping edits"
        assert new[at + shift : start + shift] == text[at:start], "a byte outside the edits changed"
        shift += len(content) - (end - start)
        at = end
    assert new[at + shift :] == text[at:]


ALTERNATIVE_SEEDS = [data for data in SEEDS if any(d.alternatives for d in lint_bytes(data).diagnostics)]


def test_alternative_seeds_exist():
    assert len(ALTERNATIVE_SEEDS) >= 2  # the examples of TC104 and TC105 at least


@budget(200)
@given(gently_mutated_files(ALTERNATIVE_SEEDS), st.data())
def test_each_fix_alternative_parses_keeps_bytes_and_is_done_once(data, pick):
    """A finding's fixes are alternatives: each one, applied on its own, gives code that
    parses, changes nothing outside its edits, and is done once: linted again, the code offers
    that fix (same message) fewer times, so applying the fixes again does not repeat it."""
    from tclint.rules.fixes import resolve

    assume(compiles(data))
    tried("library: every fix alternative parses, keeps bytes outside, is not offered again")
    result = lint_bytes(data)
    text = result.sources[os.path.join(FUZZ_DIR, "fuzz.py")].text
    choices = [d for d in result.diagnostics if d.alternatives and not known.fix_open(d)]
    assume(choices)
    d = pick.draw(st.sampled_from(choices))
    picked = pick.draw(st.sampled_from(offered(d)))
    fix = resolve(picked, text)
    if fix is None or not fix.edits:
        return  # a codemod that does not apply here, or a display-only suggestion
    new, n = apply_fixes(text, [fix])
    assert n == 1
    compile(new, "fixed.py", "exec", dont_inherit=True)
    _keeps_bytes_outside(text, new, fix.edits)

    def count(diags) -> int:  # as offered, before a codemod appends its note to the message
        return sum(1 for e in diags for f in offered(e) if f.message == picked.message)

    assert count(lint_bytes(new.encode("utf-8")).diagnostics) < count(result.diagnostics)


@budget(200)
@given(st.one_of(notebooks, compiled_notebooks()))
def test_fixes_in_notebooks_keep_json_and_code_valid(nb):
    """--fix on a notebook: valid JSON still, markdown and other cells untouched, and when the
    cells' code compiled as one module before, it still does."""
    from tclint.rules.notebook import fix_notebook, load_notebook

    data = json.dumps(nb).encode("utf-8")
    assume(not known.notebook_open(data))
    tried("library: notebook fixes keep valid JSON and code")
    from tclint.rules.fixes import resolve_fixes

    result = lint_bytes(data, name="nb.ipynb", table={})
    src = result.sources[os.path.join(FUZZ_DIR, "nb.ipynb")]
    if src.text is None or not result.diagnostics:
        return
    diags = resolve_fixes(
        result.diagnostics, lambda _p: src.text, lambda _p: src.cells
    )  # as the CLI: cells' codemods
    new, n = fix_notebook(data, diags, unsafe=True)
    after = json.loads(new.decode("utf-8"))
    if not n:
        assert new == data
        return
    fixed_cells = {d.cell for d in diags if d.cell is not None}
    for number, (old, cell) in enumerate(zip(nb["cells"], after["cells"], strict=True), start=1):
        if number not in fixed_cells:
            assert old == cell
    text, _cells, _error = load_notebook(data)
    new_text, _cells, _error = load_notebook(new)
    if text is not None and compiles(text.encode("utf-8")):
        compile(new_text, "nb.py", "exec", dont_inherit=True)
