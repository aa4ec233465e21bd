"""Line moves: an edit that inserts or deletes lines above code moves a file's positions without
changing what its facts say.  This module finds such a move and carries positions through it.

A *line map* of one file takes each line of its text before the edit that the text still has
to its line after it (``line_map``, from a checksum of every line stored after the last run,
``line_hashes``).  Whether the facts moved only is not assumed: the caller moves the new facts back
through the map (``move``) and compares their digest with the stored one, so an edit that changed
what the facts say, or a position this module does not know how to move, is a mismatch and the
full pass runs.

``move`` carries any of tclint's values through maps of one or more files: facts (``Loc``,
``Candidate.loop_line`` / ``user_ctx``, the ``line:col`` keys and ``line:col:end_line:end_col``
positions in ``VariantFacts`` strings) take the map of the file they belong to (``own``);
diagnostics, related locations and ``{"path": ..., "line": ...}`` records take the map of the path
they name, and texts the map of each ``<path>:<line>`` / ``<path>@<line>`` they contain.  A
position that names a moved file but that no map holds, a text giving a line of a moved file in a
form not listed here (``model.py:12`` without its folder, or ``line 12`` in a moved file's
finding), raise ``Unmapped``: the caller then runs the full pass.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import zlib
from array import array
from collections.abc import Callable, Mapping
from typing import Any

from tclint.rules import facts as F
from tclint.rules import model as M
from tclint.rules.types import Ty

Lines = Mapping[int, int]

_KEY = re.compile(r"^(\d+):(\d+)$")  # VariantFacts keys: "line:col" of a call
_POS = re.compile(r"(?<![\d:])(\d+):(\d+):(\d+):(\d+)(?![\d:])")  # "line:col:end_line:end_col"
_LINE_WORD = re.compile(r"\bline \d")


class Unmapped(Exception):
    """A position of a moved file that the line map does not hold, or cannot be moved."""


def _line(lines: Lines, line: int) -> int:
    try:
        return lines[line]
    except KeyError:
        raise Unmapped(f"line {line}") from None


def line_hashes(text: str) -> bytes:
    """A checksum of each line of ``text`` (lines end as Python's tokenizer ends them), packed:
    what ``line_map`` compares a later text with."""
    data = text.encode("utf-8", "surrogatepass").replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return array("I", [zlib.crc32(line) for line in data.split(b"\n")]).tobytes()


def line_map(before: bytes, text: str) -> dict[int, int]:
    """Each line of the text ``before`` hashed (``line_hashes``) that ``text`` still has, to its
    line there: the common head and tail, then the matching blocks of what lies between."""
    old = array("I")
    old.frombytes(before)
    new = array("I")
    new.frombytes(line_hashes(text))
    n, m = len(old), len(new)
    head = 0
    while head < n and head < m and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and old[n - 1 - tail] == new[m - 1 - tail]:
        tail += 1
    out = {i: i for i in range(1, head + 1)}
    middle = difflib.SequenceMatcher(
        None, old[head : n - tail].tolist(), new[head : m - tail].tolist(), autojunk=False
    )
    for a, b, size in middle.get_matching_blocks():
        for k in range(1, size + 1):
            out[head + a + k] = head + b + k
    for k in range(1, tail + 1):
        out[n - tail + k] = m - tail + k
    return out


def move(value: Any, maps: Mapping[str, Lines], own: Lines | None = None) -> Any:
    """``value`` with its positions carried through ``maps`` (path -> line map); positions that name
    no file (those of facts) take ``own``.  Values without positions are returned as they are."""
    return _Mover(maps, own).value(value)


class _Mover:
    def __init__(self, maps: Mapping[str, Lines], own: Lines | None) -> None:
        self.maps = maps
        self.own = own
        self.texts: list[tuple[re.Pattern[str], Lines, re.Pattern[str]]] = []
        for path, lines in maps.items():
            base = path.replace("\\", "/").rsplit("/", 1)[-1]
            full = re.compile("(" + re.escape(path) + r"[:@])(\d+)")
            bare = re.compile(r"(?<![\w./\\-])" + re.escape(base) + r"[:@]\d")
            self.texts.append((full, lines, bare))

    # -- facts: positions of the file they describe ----------------------------------------------
    def loc(self, loc: F.Loc) -> F.Loc:
        if self.own is None:
            return loc
        return F.Loc(_line(self.own, loc.line), loc.col, _line(self.own, loc.end_line), loc.end_col)

    def variant_text(self, text: str) -> str:
        own = self.own
        if own is None:
            return text
        key = _KEY.match(text)
        if key:
            return f"{_line(own, int(key.group(1)))}:{key.group(2)}"

        def pos(m: re.Match[str]) -> str:
            return f"{_line(own, int(m.group(1)))}:{m.group(2)}:{_line(own, int(m.group(3)))}:{m.group(4)}"

        return _POS.sub(pos, text)

    def variants(self, vf: F.VariantFacts) -> F.VariantFacts:
        def texts(value: Any) -> Any:
            if isinstance(value, str):
                return self.variant_text(value)
            if isinstance(value, dict):
                return {texts(k): texts(v) for k, v in value.items()}
            if isinstance(value, tuple):
                return tuple(texts(v) for v in value)
            return value

        return F.VariantFacts(*(texts(getattr(vf, f.name)) for f in dataclasses.fields(vf)))

    def candidate(self, cand: F.Candidate) -> F.Candidate:
        own = self.own
        moved = self.record(cand)
        if own is not None:
            if cand.loop_line is not None:
                moved.loop_line = _line(own, cand.loop_line)
            if cand.user_ctx is not None:
                moved.user_ctx = _line(own, cand.user_ctx)
        return moved

    # -- results: positions of the paths they name -----------------------------------------------
    def lines_of(self, path: str) -> Lines | None:
        return self.maps.get(path)

    def span(self, span: M.Span, lines: Lines | None) -> M.Span:
        if lines is None:
            return span
        return M.Span(
            M.Position(_line(lines, span.start.line), span.start.column),
            M.Position(_line(lines, span.end.line), span.end.column),
        )

    def text(self, text: str) -> str:
        for full, lines, bare in self.texts:
            if bare.search(text) is None and full.search(text) is None:
                continue
            if bare.search(full.sub("", text)):
                raise Unmapped(f"a line of a moved file in {text!r}")
            text = full.sub(lambda m, lines=lines: f"{m.group(1)}{_line(lines, int(m.group(2)))}", text)  # type: ignore[misc]
        return text

    def fix(self, fix: M.Fix, lines: Lines | None, shown: bool = True) -> M.Fix:
        """``fix`` with its edits in a file of map ``lines``; ``shown``: a finding's fix, whose
        message may not name a line of a moved file (a candidate's is checked by its digest)."""
        if shown and lines is not None and _LINE_WORD.search(fix.message):
            raise Unmapped("a fix naming a line of a moved file")
        return M.Fix(
            self.text(fix.message),
            tuple(M.Edit(self.span(e.span, lines), e.content) for e in fix.edits),
            fix.applicability,
            tuple(self.span(a, lines) if isinstance(a, M.Span) else self.text(a) for a in fix.codemod),
        )

    def diagnostic(self, d: M.Diagnostic) -> M.Diagnostic:
        lines = self.lines_of(d.path)
        if lines is not None:
            if d.cell is not None:
                raise Unmapped("a notebook")
            for text in (d.message, d.help or ""):
                if _LINE_WORD.search(text):
                    raise Unmapped("a finding of a moved file naming a line")
        return dataclasses.replace(
            d,
            message=self.text(d.message),
            span=self.span(d.span, lines),
            fix=None if d.fix is None else self.fix(d.fix, lines),
            related=tuple(self.related(r) for r in d.related),
            noqa_line=d.noqa_line if d.noqa_line is None or lines is None else _line(lines, d.noqa_line),
            help=None if d.help is None else self.text(d.help),
            extra=self.plain(d.extra, lines),
            alternatives=tuple(self.fix(a, lines) for a in d.alternatives),
        )

    def related(self, r: M.RelatedLocation) -> M.RelatedLocation:
        return M.RelatedLocation(r.path, self.span(r.span, self.lines_of(r.path)), self.text(r.message))

    def plain(self, value: Any, lines: Lines | None) -> Any:
        """An ``extra`` value: records naming a path move with that path's map; ints elsewhere
        are not positions (a finding's own lines are in its span)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            out = {k: self.plain(v, lines) for k, v in value.items()}
            path = value.get("path")
            if isinstance(path, str) and path in self.maps:
                for key in ("line", "end_line"):
                    if isinstance(out.get(key), int):
                        out[key] = _line(self.maps[path], out[key])
            return out
        if isinstance(value, list):
            return [self.plain(v, lines) for v in value]
        if isinstance(value, tuple) and not isinstance(value, Ty):
            return tuple(self.plain(v, lines) for v in value)
        return self.value(value)

    # -- any value ---------------------------------------------------------------------------------
    def record(self, obj: Any) -> Any:
        """A dataclass with each field moved."""
        cls = type(obj)
        return cls(*(self.value(getattr(obj, name)) for name in _field_names(cls)))

    def value(self, value: Any) -> Any:
        kind = type(value)
        if kind in _PLAIN or kind is Ty:
            return value
        handler = _HANDLERS.get(kind)
        if handler is not None:
            return handler(self, value)
        if kind is list:
            return [self.value(v) for v in value]
        if kind is tuple:
            return tuple(self.value(v) for v in value)
        if kind is dict:
            return {self.value(k): self.value(v) for k, v in value.items()}
        if kind is set or kind is frozenset:
            return kind(self.value(v) for v in value)
        if dataclasses.is_dataclass(kind):
            return self.record(value)
        return value  # enums, and a rule's own notes of other kinds (its candidate's digest checks them)


_PLAIN: frozenset[type] = frozenset({type(None), bool, int, float, complex, bytes, type(Ellipsis)})
_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


_HANDLERS: dict[type, Callable[[_Mover, Any], Any]] = {
    str: _Mover.text,
    F.Loc: _Mover.loc,
    F.Candidate: _Mover.candidate,
    F.VariantFacts: _Mover.variants,
    M.Diagnostic: _Mover.diagnostic,
    M.RelatedLocation: _Mover.related,
    M.Fix: lambda mover, fix: mover.fix(fix, mover.own, False),
    M.Span: lambda mover, span: mover.span(span, mover.own),
}
