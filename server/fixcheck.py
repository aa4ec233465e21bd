"""The language server's fix chooser: fixes checked by parsing the statement they edit.

The engine's default (``engine.offered_fixes``) offers every alternative a rule built as it is.
In the editor, where each alternative becomes a quick fix the user may pick, the server checks
every fix of the texts it registers (the open buffer's), and checks it cheaply: a fix's edits lie inside one top-level statement, and a module
parses iff each of its top-level statements does, so parsing that statement alone (with the fix
applied) gives the same answer as the whole file.  The server knows the top-level statements of
every text it analyses (``incremental.Snapshot.chunks``).  A fix spanning statements, and a text
that is not registered, get the engine's default.  A codemod fix (no edits yet) is offered: its
output is parsed when it is computed (``tclint.rules.codemods``).

``install()`` puts ``choose_fix`` in the engine's official hook (``engine.set_fix_chooser``) for
this process (the server's).
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

_original = engine.offered_fixes
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


def choose_fix(fix: Any, text: str | None) -> tuple[Fix, ...]:
    """The fixes to offer, preferred first: for a registered text, every alternative with which
    the edited top-level statement still parses; otherwise the engine's default."""
    stmts: Statements | None = getattr(_state, "current", None)
    if fix is None or text is None or stmts is None or stmts.text is not text and stmts.text != text:
        return _original(fix, text)
    alternatives = fix if isinstance(fix, tuple) else (fix,)
    return tuple(alt for alt in alternatives if _offered(alt, stmts, text))


def _offered(alt: Fix, stmts: Statements, text: str) -> bool:
    """Whether the edited top-level statement still parses with ``alt`` applied."""
    if not alt.edits:
        return True  # a codemod (its output parsed by libcst when computed), or a suggestion with nothing to apply
    first = min(e.span.start.line for e in alt.edits)
    # an edit ending at column 0 of a line ends with the line before it
    last = max(
        e.span.end.line - 1
        if e.span.end.column == 0 and e.span.end.line > e.span.start.line
        else e.span.end.line
        for e in alt.edits
    )
    found = _statement_of(stmts, first, last)
    if found is None:
        return _whole_file_parses(text, alt)
    start, end = found
    segment = "".join(stmts.lines[start - 1 : end])
    moved = Fix(
        alt.message,
        tuple(
            Edit(
                Span.of(
                    e.span.start.line - start + 1,
                    e.span.start.column,
                    e.span.end.line - start + 1,
                    e.span.end.column,
                ),
                e.content,
            )
            for e in alt.edits
        ),
        alt.applicability,
    )
    return _verdict(segment, moved)


def _whole_file_parses(text: str, fix: Fix) -> bool:
    """A fix spanning statements: applied to the whole text, which must still parse."""
    new_text, applied = apply_fixes(text, [fix])
    return bool(applied) and _parses(new_text)


def install() -> None:
    """Route the engine's fix choice through ``choose_fix`` (this process only)."""
    engine.set_fix_chooser(choose_fix)
