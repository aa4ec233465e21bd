"""Text from the linted tree made safe to print on a terminal, and paths made safe to encode.

File names and source text reach the human-readable reports (a file name, a flagged expression
quoted in a message, a source line in the full format).  Printed verbatim, an ESC sequence in
them drives the user's terminal, a newline in a file name forges finding lines, and a bidi
override reorders what the line appears to say.  ``printable`` writes every such character as a
Python-style escape (``\\x1b``, ``\\n``, ``\\u202e``), as the GitHub format percent-encodes newlines.

A file name that is not valid UTF-8 arrives from the file system as a ``str`` holding lone
surrogates (``os.fsdecode``'s ``surrogateescape``): ``b"bad\\xffname.py"`` is ``"bad\\udcffname.py"``.
Such a string cannot be encoded as UTF-8; ``printable`` shows the original byte (``\\xff``), and
``path_bytes`` gives the exact bytes for hashing and cache keys.
"""

from __future__ import annotations

import os
import re

# C0 controls but tab, DEL, C1 controls (0x9b is an 8-bit CSI), lone surrogates, and the Unicode
# line/paragraph separators and bidi embedding/override/isolate controls.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, as surrogateescape kept it
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with control, bidi and undecodable characters written as escapes (tab kept)."""
    if text.isprintable() or _UNSAFE.search(text) is None:  # every escaped character is unprintable
        return text
    return _UNSAFE.sub(_escape, text)


def path_bytes(path: str) -> bytes:
    """The file system's bytes for ``path`` (lone surrogates back to the bytes they stand for)."""
    return os.fsencode(path)


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_safe(text: str) -> str:
    """JSON text with each lone surrogate written as a ``\\udcXX`` escape, so the output is valid
    UTF-8 and a JSON reader gets back the same string (``os.fsencode`` of it: the file's bytes).
    Surrogates can only sit inside JSON strings, so replacing them in the whole text is exact."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text
