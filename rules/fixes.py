"""Applying fixes and noqa comments to source text (``--fix``, ``--diff``, ``--add-noqa``, editors).

Edits are applied back to front; a fix whose edits overlap an already-applied one is skipped and
left for the next pass, as ruff does, so one run never produces broken code from two fixes that
touch the same text.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Iterable
from typing import Any

from tclint.rules.model import FILE_ERRORS, UNUSED_SUPPRESSION, Applicability, Diagnostic, Fix
from tclint.rules.source import LineIndex


def fix_allowed(fix: Fix | None, unsafe: bool) -> bool:
    if fix is None:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def resolve(fix: Fix | None, text: str | None) -> Fix | None:
    """The fix with its edits: a codemod fix (``Fix.codemod``) is computed from ``text`` here (the
    only place libcst is imported, lazily); None when the codemod does not apply.  Other fixes are
    returned as they are."""
    if fix is None or not fix.codemod:
        return fix
    if text is None:
        return None
    from tclint.rules import codemods

    done = codemods.run(fix.codemod, text)
    if done is None:
        return None
    new_text, note, lowered = done
    edits = codemods.minimal_edits(text, new_text)
    if not edits:
        return None
    applicability = fix.applicability
    if lowered is not None and _RANK[lowered] > _RANK[applicability]:
        applicability = lowered
    return Fix(fix.message + note, edits, applicability)


_RANK = {Applicability.SAFE: 0, Applicability.UNSAFE: 1, Applicability.DISPLAY_ONLY: 2}


def resolve_fixes(
    diags: list[Diagnostic],
    text_of: Callable[[str], str | None],
    cells_of: Callable[[str], Any] | None = None,
) -> list[Diagnostic]:
    """``diags`` with every codemod fix computed, alternatives included (``text_of(path)`` gives a
    file's text, a notebook's module text; ``cells_of(path)`` a notebook's ``CellMap``, which
    computes a cell's codemods: ``CellMap.resolve_codemod``); a codemod that does not apply is
    dropped, and when the preferred fix is, the next alternative that remains becomes the
    preferred one.  Findings without one are kept as is."""
    out = []
    last_path = None
    for d in diags:
        fixes = offered(d)
        if any(f.codemod for f in fixes):
            if last_path is not None and d.path != last_path:
                from tclint.rules import codemods

                codemods.forget_parses()  # one file's parsed trees held at a time
            last_path = d.path
            text = text_of(d.path)
            if d.cell is None:
                done = [resolve(f, text) if f.codemod else f for f in fixes]
            else:
                cells = cells_of(d.path) if cells_of is not None and text is not None else None
                done = [
                    (cells.resolve_codemod(f, text) if cells is not None else None) if f.codemod else f  # type: ignore[arg-type]
                    for f in fixes
                ]
            kept = [r for r in done if r is not None]
            d = dataclasses.replace(d, fix=kept[0] if kept else None, alternatives=tuple(kept[1:]))
        out.append(d)
    return out


def offered(d: Diagnostic) -> tuple[Fix, ...]:
    """Every fix the finding offers, the preferred one first."""
    return d.alternatives if d.fix is None else (d.fix, *d.alternatives)


def preferred(d: Diagnostic, unsafe: bool) -> Fix | None:
    """The fix ``--fix`` applies for ``d``: the first alternative that the safety allowed
    (``unsafe``: unsafe fixes too) admits, in the rule's order of preference."""
    for fix in offered(d):
        if fix_allowed(fix, unsafe):
            return fix
    return None


def extract_loop_body_fix(loop_line: int) -> Fix:
    """For a graph break in the body of the loop on ``loop_line`` (which makes Dynamo run the
    whole function eagerly): the body moved into a helper function (codemod
    ``extract-loop-body``), whose own frame Dynamo then compiles around the break.  Unsafe: the
    loop's frame still runs eagerly, and the body's names reach the helper as arguments."""
    from tclint.rules.model import Span

    return Fix(
        f"Move the body of the loop at line {loop_line} into a helper function",
        (),
        Applicability.UNSAFE,
        codemod=("extract-loop-body", Span.of(loop_line, 0, loop_line, 0)),
    )


def apply_fixes(text: str, fixes: Iterable[Fix]) -> tuple[str, int]:
    """Apply non-overlapping fixes (codemod fixes are computed first, see ``resolve``); returns
    (new text, number of fixes applied)."""
    index = LineIndex(text)
    ranges: list[tuple[int, int, str, int]] = []
    resolved = [r for r in (resolve(f, text) for f in fixes) if r is not None]
    for n, fix in enumerate(resolved):
        for edit in fix.edits:
            start = index.offset(edit.span.start.line, edit.span.start.column)
            end = index.offset(edit.span.end.line, edit.span.end.column)
            ranges.append((start, end, edit.content, n))
    # choose fixes greedily in order, skipping any that overlaps an accepted one
    accepted: set[int] = set()
    taken: list[tuple[int, int]] = []
    by_fix: dict[int, list[tuple[int, int, str]]] = {}
    for start, end, content, n in ranges:
        by_fix.setdefault(n, []).append((start, end, content))
    for n, edits in by_fix.items():
        if any(_overlaps(s, e, ts, te) for s, e, _ in edits for ts, te in taken):
            continue
        accepted.add(n)
        taken.extend((s, e) for s, e, _ in edits)
    chosen = sorted(
        ((s, e, c) for n in accepted for s, e, c in by_fix[n]), key=lambda r: (r[0], r[1]), reverse=True
    )
    out = text
    for start, end, content in chosen:
        out = out[:start] + content + out[end:]
    return out, len(accepted)


def _overlaps(s1: int, e1: int, s2: int, e2: int) -> bool:
    if s1 == e1 and s2 == e2:
        return s1 == s2
    return s1 < e2 and s2 < e1 or (s1 == s2)


def unified_diff(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=path, tofile=path
        )
    )


_NOQA_IN_LINE = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


def add_noqa(text: str, diags: list[Diagnostic]) -> tuple[str, int]:
    """Add (or extend) ``# noqa: CODES`` for the findings: on the finding's line, or, when that line
    is part of a multi-line string or a backslash-continued statement, on the last line of it (the
    only place a comment can go there, and where the suppression parser looks for it)."""
    from tclint.rules.suppress import scan

    wanted: dict[int, set[str]] = {}
    for d in diags:
        if d.noqa_line is None or d.code in (*FILE_ERRORS, UNUSED_SUPPRESSION):
            continue
        wanted.setdefault(d.noqa_line, set()).add(d.code)
    if not wanted:
        return text, 0
    comments = scan(text)
    by_line: dict[int, set[str]] = {}
    for lineno, wanted_codes in wanted.items():
        by_line.setdefault(comments.last_line(lineno), set()).update(wanted_codes)
    index = LineIndex(text)
    lines = []
    changed = 0
    for lineno in range(1, len(index.starts) + 1):
        start = index.starts[lineno - 1]
        end = index.starts[lineno] if lineno < len(index.starts) else len(text)
        raw = text[start:end]
        body = raw.rstrip("\r\n")
        ending = raw[len(body) :]
        codes = by_line.get(lineno)
        comment_at = comments.column(lineno, body) if codes else -1
        if codes and comment_at < 0 and body.rstrip().endswith("\\"):
            pass  # still a continuation (only in source that does not tokenize): no comment can go here
        elif codes:
            match = _NOQA_IN_LINE.search(body, comment_at) if comment_at >= 0 else None
            if match is not None:
                if match.group("codes") is None:
                    pass  # a blanket noqa already covers everything
                else:
                    existing = [c.strip() for c in re.split(r"[,\s]+", match.group("codes")) if c.strip()]
                    merged = existing + sorted(c for c in codes if c not in existing)
                    if merged != existing:
                        body = body[: match.start()] + "# noqa: " + ", ".join(merged) + body[match.end() :]
                        changed += 1
            else:
                body = body.rstrip() + "  # noqa: " + ", ".join(sorted(codes))
                changed += 1
        lines.append(body + ending)
    return "".join(lines), changed
