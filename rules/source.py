"""Turning bytes on disk into text the analysis can trust (``SourceText``, ``decode_source``), and
positions into columns (``LineIndex``).

Python source may carry a BOM, a PEP 263 coding cookie, CRLF or lone-CR line endings, NUL bytes or
invalid UTF-8.  Everything here is total: it never raises on bad input, it reports what was wrong
so the engine can turn it into one TC011 diagnostic instead of a traceback.
"""

from __future__ import annotations

import bisect
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Any

# Python's tokenizer ends lines on \n, \r\n and \r only (not on \f, \v or the Unicode separators
# that str.splitlines() also honours), so positions must be computed on the same terms.
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(slots=True)
class DecodedSource:
    text: str | None
    error: str | None = None
    encoding: str = "utf-8"
    had_bom: bool = False


def decode_source(data: bytes) -> DecodedSource:
    """Decode bytes the way the interpreter would (BOM, coding cookie, default UTF-8)."""
    had_bom = data.startswith(b"\xef\xbb\xbf")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # unknown or conflicting coding cookie
        return DecodedSource(None, f"cannot determine the file's encoding: {exc}")
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        where = ""
        if isinstance(exc, UnicodeDecodeError):
            line = data.count(b"\n", 0, exc.start) + 1
            where = f" at line {line}"
        return DecodedSource(None, f"not valid {encoding}{where}: {reason}", encoding)
    if text.startswith("\ufeff"):
        text = text[1:]
    return DecodedSource(text, None, encoding, had_bom)


class LineIndex:
    """Line starts of a text, for offset <-> (line, column) conversions.

    ``ast`` reports columns as UTF-8 byte offsets; diagnostics use code points (the edges convert
    to UTF-16 for LSP).  Conversions are lazy and cached per line: most files have few findings.
    """

    __slots__ = ("text", "starts", "_lines", "_offsets")

    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]
        starts.extend(m.end() for m in _LINE_END.finditer(text))
        self.starts = starts
        self._lines: dict[int, str] = {}
        self._offsets: dict[int, list[int]] = {}

    @property
    def line_count(self) -> int:
        # A trailing newline does not open a new (empty) line for diagnostics purposes.
        n = len(self.starts)
        if n > 1 and self.starts[-1] == len(self.text):
            return n - 1
        return n

    def line(self, lineno: int) -> str:
        """The text of 1-based line ``lineno`` without its line ending ('' when out of range)."""
        cached = self._lines.get(lineno)
        if cached is not None:
            return cached
        if lineno < 1 or lineno > len(self.starts):
            return ""
        start = self.starts[lineno - 1]
        end = self.starts[lineno] if lineno < len(self.starts) else len(self.text)
        raw = self.text[start:end]
        raw = raw.rstrip("\r\n") if raw.endswith(("\n", "\r")) else raw
        self._lines[lineno] = raw
        return raw

    def char_col(self, lineno: int, byte_col: int) -> int:
        """Convert an ``ast`` UTF-8 byte column to a code-point column."""
        line = self.line(lineno)
        if byte_col <= 0:
            return 0
        if line.isascii():
            return min(byte_col, len(line))
        # non-ASCII: a table of byte offsets per character, built once per line (many findings on
        # one long line must not re-encode it each time)
        offsets = self._offsets.get(lineno)
        if offsets is None:
            offsets = [0]
            total = 0
            for ch in line:
                total += len(ch.encode("utf-8", "surrogatepass"))
                offsets.append(total)
            self._offsets[lineno] = offsets
        return max(bisect.bisect_right(offsets, byte_col) - 1, 0)

    def offset(self, lineno: int, col: int) -> int:
        """Absolute offset of a (1-based line, code-point column) pair, clamped into the text."""
        if lineno < 1:
            return 0
        if lineno > len(self.starts):
            return len(self.text)
        return min(self.starts[lineno - 1] + max(col, 0), len(self.text))


class SourceText:
    """The text of a file as linted, and for notebooks the mapping back to cells.

    ``text`` and ``error`` are decoded on first access from the bytes read (or, for a file whose
    digest came from the stat table, from the file itself).  A file read from disk whose bytes were
    not kept (``deferred(..., on_disk=True)``) can drop its decoded text (``release``) and read it
    again when asked: a run over a large tree need not hold every file's text at once."""

    __slots__ = (
        "path",
        "cells",
        "digest",
        "size",
        "read_error",
        "from_stat",
        "_text",
        "_error",
        "_data",
        "_pending",
        "_on_disk",
    )

    def __init__(
        self,
        path: str,
        text: str | None = None,
        error: str | None = None,
        cells: Any = None,
        digest: str = "",
    ) -> None:
        self.path = path
        self.cells = cells
        self.digest = digest
        self.size = len(text) if text is not None else 0
        self.read_error: str | None = error if text is None else None  # known without decoding
        self.from_stat = False  # the digest came from the stat table: the file was not read
        self._text = text
        self._error = error
        self._data: bytes | None = None
        self._pending = False
        self._on_disk = False

    @classmethod
    def deferred(
        cls, path: str, data: bytes | None, digest: str, size: int, on_disk: bool = False
    ) -> SourceText:
        """A readable file whose decoding waits for the first ``text``; ``data`` None: read it then
        (``on_disk``: the file's bytes on disk are the ones linted, so it may be read again after
        ``release``; not for an editor's buffer)."""
        src = cls(path, None, None, None, digest)
        src.read_error = None
        src.size = size
        src._data = data
        src._pending = True
        src._on_disk = on_disk and data is None
        return src

    def release(self) -> None:
        """Drop the decoded text of a file ``deferred(..., on_disk=True)``: the next ``text`` reads
        and decodes the file again (as for a digest from the stat table, the file is trusted to be
        the one hashed; ``--fix`` checks the digest before it writes).  Anything else keeps it."""
        if self._on_disk and not self._pending:
            self._text = self._error = None
            self._pending = True

    def _resolve(self) -> None:
        self._pending = False
        data, self._data = self._data, None
        if data is None:
            from tclint.rules.reading import NotRegularFile, read_regular  # reading imports this module

            try:
                data = read_regular(self.path)
            except NotRegularFile as exc:
                self._error = self.read_error = str(exc)
                return
            except OSError as exc:
                self._error = self.read_error = f"cannot read file: {exc.strerror or exc}"
                return
        decoded = decode_source(data)
        self._text, self._error = decoded.text, decoded.error

    def raw(self) -> str | bytes | None:
        """The text when it is decoded, else the file's bytes (those held, or read again), neither
        decoded nor kept: for a search of the whole tree's words (``project_delta.named_elsewhere``).
        None: unreadable."""
        if not self._pending:
            return self._text
        if self._data is not None:
            return self._data
        try:
            with open(self.path, "rb") as fh:
                return fh.read()
        except OSError:
            return None

    @property
    def text(self) -> str | None:
        if self._pending:
            self._resolve()
        return self._text

    @property
    def error(self) -> str | None:
        if self._pending:
            self._resolve()
        return self._error

    def __getstate__(self) -> dict[str, Any]:
        if self._pending:
            self._resolve()
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def __repr__(self) -> str:
        return f"SourceText({self.path!r}, digest={self.digest!r})"
