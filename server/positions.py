"""Positions between tclint's model (1-based lines, 0-based code-point columns) and LSP's (0-based
lines, columns in the negotiated encoding: UTF-16 code units by default, UTF-8 bytes or UTF-32 code
points when the client offers them).

Lines are split the way LSP and Python's tokenizer split them (``\\n``, ``\\r\\n``, ``\\r``), not the
way ``str.splitlines`` does (which also breaks on form feeds and Unicode separators: a file with a
``\\x0c`` page break would shift every diagnostic below it).  Every conversion clamps: a position
past the end of a line is the end of that line, a line past the end of the text is the text's end,
so nothing this module produces lies outside the document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate

from lsprotocol import types
from tclint.rules.model import Span

_LINE_END = re.compile(r"\r\n|\r|\n")

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"


def encoding_name(kind: object) -> str:
    value = getattr(kind, "value", kind)
    return value if value in (UTF8, UTF16, UTF32) else UTF16


def units(text: str, encoding: str) -> int:
    """Length of ``text`` in the encoding's code units."""
    if text.isascii() or encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def col_from_units(line: str, col: int, encoding: str) -> int:
    """Code-point column of a column given in code units (clamped into the line)."""
    if col <= 0:
        return 0
    if line.isascii() or encoding == UTF32:
        return min(col, len(line))
    count = 0
    for i, ch in enumerate(line):
        if count >= col:
            return i
        o = ord(ch)
        if encoding == UTF8:
            count += 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
        else:
            count += 2 if o >= 0x10000 else 1
    return len(line)


@dataclass(slots=True)
class Lines:
    """Line starts of one text, for both directions of conversion."""

    text: str
    starts: list[int]
    ascii: bool = False  # every column is the same in every encoding

    @classmethod
    def of(cls, text: str) -> Lines:
        starts = [0]
        if "\r" in text:
            starts.extend(m.end() for m in _LINE_END.finditer(text))
        else:  # only LF endings: the same starts from str.split, ~16x faster than the regex
            # (a warm open's related locations convert whole library files: 0.66 MB for hf_user.py)
            starts.extend(accumulate(len(line) + 1 for line in text.split("\n")[:-1]))
        return cls(text, starts, text.isascii())

    def line_length(self, index: int) -> int:
        """Length of 0-based line ``index`` without its ending (code points)."""
        start = self.starts[index]
        if index + 1 < len(self.starts):
            end = self.starts[index + 1]
            text = self.text
            if end > start and text[end - 1] == "\n":
                end -= 2 if end - 1 > start and text[end - 2] == "\r" else 1
            elif end > start and text[end - 1] == "\r":
                end -= 1
            return end - start
        return len(self.text) - start

    def lsp_pos(self, line: int, col: int, encoding: str) -> tuple[int, int]:
        """``to_lsp`` as a (line, character) pair, with a fast path for ASCII texts."""
        if self.ascii and 0 <= line < len(self.starts):
            return line, max(0, min(col, self.line_length(line)))
        p = self.to_lsp(line, col, encoding)
        return p.line, p.character

    def pos_json(self, line: int, col: int, encoding: str) -> dict[str, int]:
        """``to_lsp`` as JSON, with a fast path for ASCII texts."""
        if self.ascii and 0 <= line < len(self.starts):
            return {"line": line, "character": max(0, min(col, self.line_length(line)))}
        p = self.to_lsp(line, col, encoding)
        return {"line": p.line, "character": p.character}

    def span_json(self, span: Span, encoding: str) -> dict[str, dict[str, int]]:
        """A model span (1-based lines) as an LSP range (JSON), inside the text, never reversed."""
        start = self.pos_json(span.start.line - 1, span.start.column, encoding)
        end = self.pos_json(span.end.line - 1, span.end.column, encoding)
        if (end["line"], end["character"]) < (start["line"], start["character"]):
            end = start
        return {"start": start, "end": end}

    @property
    def count(self) -> int:
        """Number of LSP lines (a trailing newline opens one more, empty, line)."""
        return len(self.starts)

    def line(self, index: int) -> str:
        """0-based line ``index`` without its ending ('' when out of range)."""
        if index < 0 or index >= len(self.starts):
            return ""
        start = self.starts[index]
        end = self.starts[index + 1] if index + 1 < len(self.starts) else len(self.text)
        raw = self.text[start:end]
        if raw.endswith("\r\n"):
            return raw[:-2]
        if raw.endswith(("\n", "\r")):
            return raw[:-1]
        return raw

    def offset(self, line: int, col: int) -> int:
        """Offset of a 0-based line and code-point column, clamped into the text."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        return self.starts[line] + max(0, min(col, len(self.line(line))))

    # -- LSP <-> code points
    def to_lsp(self, line: int, col: int, encoding: str) -> types.Position:
        """A 0-based line and code-point column as an LSP position, clamped into the text."""
        if line < 0:
            return types.Position(line=0, character=0)
        if line >= len(self.starts):
            last = len(self.starts) - 1
            return types.Position(line=last, character=units(self.line(last), encoding))
        text = self.line(line)
        col = max(0, min(col, len(text)))
        return types.Position(line=line, character=units(text[:col], encoding))

    def from_lsp(self, pos: types.Position, encoding: str) -> tuple[int, int]:
        """A clamped (0-based line, code-point column) for an LSP position."""
        line = pos.line
        if line < 0:
            return 0, 0
        if line >= len(self.starts):
            last = len(self.starts) - 1
            return last, len(self.line(last))
        return line, col_from_units(self.line(line), pos.character, encoding)

    def lsp_offset(self, pos: types.Position, encoding: str) -> int:
        line, col = self.from_lsp(pos, encoding)
        return self.offset(line, col)

    def span_to_range(self, span: Span, encoding: str) -> types.Range:
        """A model span (1-based lines) as an LSP range inside the text (end never before start)."""
        start = self.to_lsp(span.start.line - 1, span.start.column, encoding)
        end = self.to_lsp(span.end.line - 1, span.end.column, encoding)
        if (end.line, end.character) < (start.line, start.character):
            end = start
        return types.Range(start=start, end=end)

    def position_at(self, offset: int, encoding: str) -> types.Position:
        """The LSP position of a code-point offset into the text (clamped)."""
        import bisect

        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        col = offset - self.starts[line]
        return self.to_lsp(line, col, encoding)


def minimal_edit(before: str, after: str) -> tuple[int, int, str]:
    """(start offset, end offset in ``before``, replacement) turning ``before`` into ``after``."""
    if before == after:
        return 0, 0, ""
    limit = min(len(before), len(after))
    p = 0
    while p < limit and before[p] == after[p]:
        p += 1
    s = 0
    while s < limit - p and before[len(before) - 1 - s] == after[len(after) - 1 - s]:
        s += 1
    # never split a \r\n pair or a surrogate-free code point boundary
    return p, len(before) - s, after[p : len(after) - s]
