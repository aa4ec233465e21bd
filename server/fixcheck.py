"""Checking that a fix leaves the file parseable, in time proportional to the statement it edits.

The engine offers a fix only if the file still parses with it applied (``engine.choose_fix``:
the first alternative that parses wins, e.g. "delete the line" else "replace it with ``pass``").
It checks by re-parsing the *whole file* once per fixable finding: on a 2,000-line model with a
hundred ``print`` calls that is seconds per keystroke.  A fix's edits lie inside one top-level
statement, and a module parses iff each of its top-level statements does, so parsing that
statement alone (with the fix applied) gives the same answer.  The server knows the top-level
statements of every text it analyses (``incremental.Snapshot.chunks``), so it installs this check
in place of the engine's for the texts it registers; anything else (a fix spanning statements, a
text it does not know) gets the engine's own whole-file check.

This is a workaround: ``engine.choose_fix`` is looked up at call time by
``candidate_to_diagnostic``, and ``install()`` replaces it in this process only (the server's).
A test fails if that hook point disappears.
"""

from __future__ import annotations

import ast
import bisect
import threading
import warnings
from collections.abc import Sequence
from typing import Any

from tclint.rules import engine
from tclint.rules.fixes import apply_fixes
from tclint.rules.model import Edit, Fix, Span

_original = engine.choose_fix
_state = threading.local()
# (statement text, the fix relative to it) -> parses with the fix applied?  Unchanged statements hit
# this on every keystroke.
_VERDICTS: dict[tuple[str, Fix], bool] = {}
_VERDICTS_MAX = 4096


class Statements:
    """The top-level statements (1-based first/last lines) of one text."""

    def __init__(self, text: str, lines: Sequence[str], ranges: Sequence[tuple[int, int]]) -> None:
        self.text = text
        self.lines = lines
        self.ranges = sorted(ranges)
        self.starts = [start for start, _end in self.ranges]


def register(text: str, lines: Sequence[str], ranges: Sequence[tuple[int, int]]) -> None:
    """Use ``ranges`` to check fixes on ``text`` (until another text is registered)."""
    _state.current = Statements(text, lines, ranges)


def clear() -> None:
    _state.current = None


def _statement_of(stmts: Statements, first: int, last: int) -> tuple[int, int] | None:
    i = bisect.bisect_right(stmts.starts, first) - 1
    if i >= 0:
        start, end = stmts.ranges[i]
        if start <= first and last <= end:
            return start, end
    return None


def _parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings of the user's code are not ours to show
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


def _verdict(segment: str, fix: Fix) -> bool:
    key = (segment, fix)
    verdict = _VERDICTS.get(key)
    if verdict is None:
        new_segment, applied = apply_fixes(segment + ("" if segment.endswith(("\n", "\r")) else "\n"), [fix])
        verdict = bool(applied) and _parses(new_segment)
        if len(_VERDICTS) >= _VERDICTS_MAX:
            _VERDICTS.clear()  # bounded: memory stays flat however long the session
        _VERDICTS[key] = verdict
    return verdict


def choose_fix(fix: Any, text: str | None) -> Fix | None:
    """``engine.choose_fix`` with the parse limited to the edited top-level statement."""
    stmts: Statements | None = getattr(_state, "current", None)
    if fix is None or text is None or stmts is None or stmts.text is not text and stmts.text != text:
        return _original(fix, text)
    alternatives = fix if isinstance(fix, tuple) else (fix,)
    for alt in alternatives:
        if not alt.edits:
            if alt.codemod:
                return alt  # computed (and its output parsed by libcst) when it is offered
            continue
        first = min(e.span.start.line for e in alt.edits)
        # an edit ending at column 0 of a line ends with the line before it
        last = max(
            e.span.end.line - 1 if e.span.end.column == 0 and e.span.end.line > e.span.start.line else e.span.end.line
            for e in alt.edits
        )
        found = _statement_of(stmts, first, last)
        if found is None:
            if _original(alt, text) is not None:
                return alt
            continue
        start, end = found
        segment = "".join(stmts.lines[start - 1 : end])
        moved = Fix(
            alt.message,
            tuple(
                Edit(Span.of(e.span.start.line - start + 1, e.span.start.column, e.span.end.line - start + 1, e.span.end.column), e.content)
                for e in alt.edits
            ),
            alt.applicability,
        )
        if _verdict(segment, moved):
            return alt
    return None


def install() -> None:
    """Route the engine's fix check through ``choose_fix`` (this process only)."""
    engine.choose_fix = choose_fix


def installed() -> bool:
    return engine.choose_fix is choose_fix
