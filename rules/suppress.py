"""Suppression comments: ``# noqa``, ``# noqa: TC101``, ``# tclint: noqa[: TC101]`` (file level),
``# tclint: disable[TC101]`` ... ``# tclint: enable[TC101]`` (ranges), and which of them did nothing.

Directives are read from real comments (:func:`scan`, which agrees with Python's tokenizer), never
from text inside a string or docstring.  As in ruff, a ``# noqa`` comment on the last line of a multi-line
string, or of a statement continued with backslashes, speaks for every line of that string or
statement (no comment can go on the lines before), and ``--add-noqa`` puts its comment there.

Codes that are not tclint's (``# noqa: E501``) belong to other tools and are left alone; so is a
bare ``# noqa``, which may be meant for any tool.  A TC code in a suppression that suppressed
nothing is reported as TC012, with a fix that removes it.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tclint.rules.model import (
    UNUSED_SUPPRESSION,
    Applicability,
    Diagnostic,
    Edit,
    Fix,
    Severity,
    Span,
    rule_doc_url,
)
from tclint.rules.source import LineIndex

if TYPE_CHECKING:
    from tclint.rules.config import Settings
    from tclint.rules.source import SourceText

NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
FILE_NOQA = re.compile(
    r"#\s*tclint:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?\s*$", re.IGNORECASE
)
RANGE = re.compile(r"#\s*tclint:\s*(?P<verb>disable|enable)(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
CODE = re.compile(r"[A-Z]+[0-9]+")


@dataclass(slots=True)
class Directive:
    kind: str  # "line" | "file" | "range"
    line: int
    codes: tuple[str, ...] | None  # None: all codes
    col: int  # where the comment starts (0-based)
    end_col: int
    end_line: int = 0  # ranges: last line covered
    first_line: int = 0  # line directives: first line spoken for (the comment's own line when 0)
    used: set[str] = field(default_factory=set)
    used_any: bool = False


def comment_start(line: str) -> int:
    """Column of the '#' starting a comment on this line, ignoring '#' inside string literals."""
    quote: str | None = None
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if quote is not None:
            if c == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
        else:
            if c == "#":
                return i
            if c in "'\"":
                quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else c
                i += len(quote)
                continue
        i += 1
    return -1


@dataclass(slots=True)
class Comments:
    """Where a source's comments are, and which lines are joined into one for trailing comments
    (a multi-line string, a backslash continuation): a comment for any of them can only go on the
    last one.  Lines after ``known_until`` were not scanned (``scan``'s ``until``): there
    :meth:`column` falls back to :func:`comment_start`."""

    starts: list[int]  # line start offsets of the text (LineIndex.starts)
    offsets: list[int]  # where each comment starts, in order
    groups: list[tuple[int, int]]  # merged (first line, last line) of joined lines, in order
    known_until: int

    def column(self, lineno: int, line: str) -> int:
        """Column of the comment on line ``lineno`` (whose text is ``line``), -1 when none."""
        if lineno > self.known_until:
            return comment_start(line)
        if not 1 <= lineno <= len(self.starts):
            return -1
        start = self.starts[lineno - 1]
        end = self.starts[lineno] if lineno < len(self.starts) else float("inf")
        i = bisect.bisect_left(self.offsets, start)
        return self.offsets[i] - start if i < len(self.offsets) and self.offsets[i] < end else -1

    @property
    def columns(self) -> dict[int, int]:
        """line -> column of the comment on it, for every scanned comment."""
        out: dict[int, int] = {}
        for offset in self.offsets:
            lineno = bisect.bisect_right(self.starts, offset)
            out.setdefault(lineno, offset - self.starts[lineno - 1])
        return out

    def _group(self, lineno: int) -> tuple[int, int] | None:
        i = bisect.bisect_right(self.groups, (lineno, float("inf"))) - 1
        if i >= 0 and self.groups[i][0] <= lineno <= self.groups[i][1]:
            return self.groups[i]
        return None

    def last_line(self, lineno: int) -> int:
        """The line where a trailing comment for line ``lineno`` goes."""
        group = self._group(lineno)
        return group[1] if group is not None else lineno

    def first_line(self, lineno: int) -> int:
        """The first line a trailing comment on line ``lineno`` speaks for."""
        group = self._group(lineno)
        return group[0] if group is not None and group[1] == lineno else lineno


# The lexemes of Python source that decide what is a comment: comments, string literals (any
# prefix: the prefix letters are identifier characters and need no match; a backslash escapes the
# next character, a newline included, in raw strings too) and backslash continuations.  One C-level
# regex pass: the tokenize module, which gives the same answers on source that tokenizes (the fuzz
# suite checks), costs ten times more on the large files that carry flake8 `# noqa` comments.
_LEXEME = re.compile(
    r"""(?=[\#'"\\])  # the first character, checked before any alternative: 10x faster
    (?:(?P<comment>\#[^\r\n]*)
    | (?P<string>\"\"\"[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*\"\"\"
                | \'\'\'[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*\'\'\'
                | "[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*"
                | '[^'\\\r\n]*(?:\\.[^'\\\r\n]*)*')
    | (?P<continuation>\\(?:\r\n|\r|\n)))""",
    re.VERBOSE | re.DOTALL,
)


def scan(text: str, until: int | None = None, index: LineIndex | None = None) -> Comments:
    """The comments and joined lines of ``text`` (up to line ``until`` when given).  Total: on
    source that does not tokenize the answer is a best effort, as the file is a TC000 anyway.
    Known limit: a string literal inside an f-string's braces that reuses the f-string's own
    quote (``f"{d["k"]}"``, Python 3.12+) is read as two strings.
    Line numbers are computed only for the few lexemes that span lines; a comment's line is
    looked up when asked for."""
    starts = (index or LineIndex(text)).starts
    stop = starts[until] if until is not None and until < len(starts) else len(text)
    offsets: list[int] = []
    groups: list[tuple[int, int]] = []
    line_of = bisect.bisect_right
    find = text.find
    for m in _LEXEME.finditer(text):
        begin = m.start()
        if begin >= stop:
            break  # (a string that starts before ``stop`` is matched whole: its text is no comment)
        kind = m.lastgroup
        if kind == "comment":
            offsets.append(begin)
            continue
        finish = m.end()
        if kind == "string":
            if find("\n", begin, finish) < 0 and find("\r", begin, finish) < 0:
                continue  # one line
            first, last = line_of(starts, begin), line_of(starts, finish - 1)
        else:
            first = line_of(starts, begin)
            last = first + 1
        if groups and first <= groups[-1][1]:
            if last > groups[-1][1]:
                groups[-1] = (groups[-1][0], last)
        else:
            groups.append((first, last))
    known_until = until if until is not None else len(starts) + 1
    return Comments(starts, offsets, groups, known_until)


_MARKER = re.compile(r"noqa|tclint:", re.IGNORECASE)


def _noqa_beside(comment: str, directive: re.Match[str], start: int) -> tuple[re.Match[str] | None, int]:
    """A noqa on the line of a range directive, and the column its match counts from: after the
    directive (``--add-noqa`` appends one there) or before it (a noqa and then the directive, in
    one comment: ruff reads a noqa anywhere in a comment)."""
    after = NOQA.search(comment[directive.end() :])
    if after is not None:
        return after, start + directive.end()
    return NOQA.search(comment[: directive.start()]), start


def parse(text: str, index: LineIndex | None = None) -> list[Directive]:
    """Suppression directives, found by searching for the markers (not by walking every line),
    then read from the comments of the lines that hold a marker after a ``#``: :func:`scan`
    runs only for files with such a line, and only up to the last of them."""
    if "noqa" not in text and "NOQA" not in text and "tclint:" not in text:
        return []
    index = index or LineIndex(text)
    starts = index.starts
    lines: list[int] = []
    for marker in _MARKER.finditer(text):
        lineno = bisect.bisect_right(starts, marker.start())
        if (not lines or lines[-1] != lineno) and "#" in text[starts[lineno - 1] : marker.start()]:
            lines.append(lineno)
    if not lines:
        return []
    comments = scan(text, until=lines[-1], index=index)
    out: list[Directive] = []
    open_ranges: dict[str | None, Directive] = {}
    for lineno in lines:
        line = index.line(lineno)
        start = comments.column(lineno, line)
        if start < 0:
            continue
        comment = line[start:]
        own_line = not line[:start].strip()
        m = FILE_NOQA.match(comment)
        if m and own_line:
            codes = tuple(c.upper() for c in CODE.findall(m.group("codes") or "")) or None
            out.append(Directive("file", lineno, codes, start, len(line)))
            continue
        m = RANGE.search(comment)
        if m:
            codes = tuple(c.upper() for c in CODE.findall(m.group("codes") or "")) or None
            if m.group("verb").lower() == "disable":
                d = Directive("range", lineno, codes, start, start + m.end(), end_line=index.line_count)
                out.append(d)
                for key in codes or (None,):
                    open_ranges[key] = d
            else:
                for key in codes or list(open_ranges):
                    closed = open_ranges.pop(key, None)
                    if closed is not None:
                        closed.end_line = lineno
            n, offset = _noqa_beside(comment, m, start)
            if n:
                ncodes = tuple(c.upper() for c in CODE.findall(n.group("codes") or "")) or None
                out.append(
                    Directive(
                        "line",
                        lineno,
                        ncodes,
                        offset + n.start(),
                        offset + n.end(),
                        first_line=comments.first_line(lineno),
                    )
                )
            continue
        for m in NOQA.finditer(comment):
            codes = tuple(c.upper() for c in CODE.findall(m.group("codes") or "")) or None
            out.append(
                Directive(
                    "line",
                    lineno,
                    codes,
                    start + m.start(),
                    start + m.end(),
                    first_line=comments.first_line(lineno),
                )
            )
            break
    return out


def apply(diagnostics: list[Diagnostic], directives: list[Directive]) -> list[Diagnostic]:
    """Drop suppressed diagnostics; record on each directive what it suppressed."""
    if not directives:
        return diagnostics
    by_line: dict[int, list[Directive]] = {}
    file_level: list[Directive] = []
    ranges: list[Directive] = []
    for d in directives:
        if d.kind == "line":
            for lineno in range(d.first_line or d.line, d.line + 1):
                by_line.setdefault(lineno, []).append(d)
        elif d.kind == "file":
            file_level.append(d)
        else:
            ranges.append(d)
    kept = []
    for diag in diagnostics:
        suppressed = False
        line = diag.noqa_line or diag.line
        for d in (*by_line.get(line, ()), *file_level):
            if d.codes is None or diag.code in d.codes:
                d.used.add(diag.code)
                d.used_any = True
                suppressed = True
        if not suppressed:
            for d in ranges:
                if d.line <= diag.line <= d.end_line and (d.codes is None or diag.code in d.codes):
                    d.used.add(diag.code)
                    d.used_any = True
                    suppressed = True
        if not suppressed:
            kept.append(diag)
    return kept


# ruff's flake8-type-checking rules are TC001-TC010: `# noqa: TC003` may be meant for ruff.
# Codes in that range are never tclint's (its own TC0xx codes avoid it) and never reported here.
_OTHER_TOOLS_TC = re.compile(r"^TC0(0[1-9]|10)$")
_TCLINT_FAMILY = re.compile(r"^TC[0-39]\d\d$")


def unused(
    directives: list[Directive], known_codes: set[str], enabled: frozenset[str]
) -> list[tuple[Directive, list[str], list[str]]]:
    """(directive, unused enabled TC codes, unknown TC codes) for directives that did nothing."""
    out = []
    for d in directives:
        if d.codes is None:
            continue  # a blanket noqa may be meant for another tool
        tc = [c for c in d.codes if _TCLINT_FAMILY.match(c) and not _OTHER_TOOLS_TC.match(c)]
        unknown = [c for c in tc if c not in known_codes]
        unused_codes = [c for c in tc if c in enabled and c not in d.used]
        if unknown or unused_codes:
            out.append((d, unused_codes, unknown))
    return out


# ---------------------------------------------------------------------------------------------
# suppressions applied to one file's findings (the engine's step after selection)


def _may_hold_tclint_directive(text: str) -> bool:
    """Whether some noqa comment names a TC code, or a ``tclint:`` directive exists, in any letter
    case.  Substring searches only (a case-insensitive regex over every file cost more than the
    rest of a warm run; ``str.lower`` and ``find`` are single C passes)."""
    lowered = text.lower()
    if "tclint:" in lowered:
        return True
    start = lowered.find("noqa")
    while start != -1:
        end = lowered.find("\n", start)
        if "tc" in lowered[start : end if end != -1 else len(lowered)]:
            return True
        start = lowered.find("noqa", start + 4)
    return False


def apply_suppressions(diags: list[Diagnostic], src: SourceText, settings: Settings) -> list[Diagnostic]:
    """Drop the findings the file's suppression comments suppress; add a TC012 (with a fix that
    removes it) for each suppression, or code in one, that suppressed nothing."""
    from tclint.rules import registry

    if src.text is None:
        return diags
    if not diags and not _may_hold_tclint_directive(src.text):
        # Nothing to suppress, and no directive that could be an unused tclint suppression (a
        # blanket noqa comment or other tools' codes never are): most files of a large tree.
        return diags
    directives = parse(src.text)
    if not directives:
        return diags
    kept = apply(diags, directives)
    enabled = registry.enabled_codes(
        settings.select,
        settings.extend_select,
        settings.ignore,
        settings.preview,
        settings.target_torch_version,
    )
    if UNUSED_SUPPRESSION not in enabled:
        return kept
    known = set(registry.by_code())
    index: LineIndex | None = None
    unused_diags: list[Diagnostic] = []
    for directive, unused_codes, unknown in unused(directives, known, enabled):
        parts = []
        if unused_codes:
            parts.append("unused: " + ", ".join(unused_codes))
        if unknown:
            parts.append("unknown: " + ", ".join(unknown))
        what = {
            "line": "`noqa` directive",
            "file": "file-level `tclint: noqa`",
            "range": "`tclint: disable` range",
        }[directive.kind]
        index = index or LineIndex(src.text)
        line_text = index.line(directive.line)
        remaining = [c for c in directive.codes or () if c not in unused_codes and c not in unknown]
        fix = _unused_fix(directive, line_text, remaining)
        diag = Diagnostic(
            code=UNUSED_SUPPRESSION,
            name="unused-suppression",
            message=f"Unused {what} ({'; '.join(parts)})",
            path=src.path,
            span=Span.of(directive.line, directive.col, directive.line, directive.end_col),
            severity=Severity.WARNING,
            fix=fix,
            noqa_line=directive.line,
            url=rule_doc_url(UNUSED_SUPPRESSION),
        )
        unused_diags.append(diag)
    # a TC012 can itself be suppressed (a noqa comment naming TC012, a file-level noqa): one pass for all
    kept.extend(apply(unused_diags, directives))
    return kept


def _unused_fix(directive: Directive, line_text: str, remaining: list[str]) -> Fix:
    start, end = directive.col, directive.end_col
    if directive.kind == "line":
        if remaining:
            new = "# noqa: " + ", ".join(remaining)
            return Fix(
                "Remove unused codes",
                (Edit(Span.of(directive.line, start, directive.line, end), new),),
                Applicability.SAFE,
            )
        # remove the comment (and the spaces before it)
        s = start
        while s > 0 and line_text[s - 1] in " \t":
            s -= 1
        if not line_text[:s].strip():
            return Fix(
                "Remove the unused comment",
                (Edit(Span.of(directive.line, 0, directive.line + 1, 0), ""),),
                Applicability.SAFE,
            )
        return Fix(
            "Remove unused `noqa` directive",
            (Edit(Span.of(directive.line, s, directive.line, end), ""),),
            Applicability.SAFE,
        )
    # `# tclint: disable[...]` / `# tclint: noqa: ...`: keep the codes still in use, and never the
    # code that shares the line
    if remaining:
        if directive.kind == "file":
            new = "# tclint: noqa: " + ", ".join(remaining)
        else:
            new = "# tclint: disable[" + ", ".join(remaining) + "]"
        return Fix(
            "Remove unused codes",
            (Edit(Span.of(directive.line, start, directive.line, end), new),),
            Applicability.SAFE,
        )
    s = start
    while s > 0 and line_text[s - 1] in " \t":
        s -= 1
    if not line_text[:s].strip():
        return Fix(
            "Remove the unused directive",
            (Edit(Span.of(directive.line, 0, directive.line + 1, 0), ""),),
            Applicability.SAFE,
        )
    return Fix(
        "Remove the unused directive",
        (Edit(Span.of(directive.line, s, directive.line, end), ""),),
        Applicability.SAFE,
    )
