"""The open documents: text and version as the client last described them.

We keep our own store instead of pygls' ``Workspace`` documents: pygls splits lines with
``str.splitlines`` (wrong for form feeds and Unicode separators, see ``positions``), and an edit
whose range lies outside the document makes it raise halfway through a change list.  Here a
change is applied with LSP's rules and clamped: ranges past the end of a line or of the document
mean its end, a reversed range is treated as empty.  A document therefore always has *some* text,
and the server never stops on a bad edit; the client's next full sync (or the user's next edit)
brings it back in step.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path
from tclint.server.positions import Lines


@dataclass(slots=True)
class Document:
    uri: str
    path: str | None  # None for non-file URIs (untitled:, vscode-notebook-cell:, ...)
    text: str
    version: int
    language_id: str = "python"
    _lines: Lines | None = field(default=None, repr=False)

    @property
    def lines(self) -> Lines:
        if self._lines is None or self._lines.text is not self.text:
            self._lines = Lines.of(self.text)
        return self._lines

    def apply(self, change: Any, encoding: str) -> None:
        """Apply one ``TextDocumentContentChangeEvent`` (partial or whole), clamped."""
        rng = getattr(change, "range", None)
        text = change.text if isinstance(getattr(change, "text", None), str) else ""
        if rng is None:
            self.text = text
            return
        lines = self.lines
        start = lines.lsp_offset(rng.start, encoding)
        end = lines.lsp_offset(rng.end, encoding)
        if end < start:
            start, end = end, start
        self.text = self.text[:start] + text + self.text[end:]


def uri_to_path(uri: str) -> str | None:
    """The file system path of a ``file:`` URI (None for other schemes)."""
    if not isinstance(uri, str) or not uri.startswith("file:"):
        return None
    try:
        path = to_fs_path(uri)
    except Exception:  # a malformed URI: not a file we can lint
        return None
    if not path:
        return None
    if "\ufffd" in path and "%" in uri and os.name == "posix":
        # percent-escapes that are not UTF-8 (a file name that is not): decoded as the file
        # system does, so the path names the same bytes (the reverse of ``path_to_uri``)
        from urllib.parse import unquote_to_bytes, urlsplit

        path = os.fsdecode(unquote_to_bytes(urlsplit(uri).path))
    return os.path.normpath(path)


class Documents:
    """uri -> Document, for the documents the client has open."""

    def __init__(self) -> None:
        self._docs: dict[str, Document] = {}

    def open(self, item: types.TextDocumentItem) -> Document:
        doc = Document(item.uri, uri_to_path(item.uri), item.text, item.version, item.language_id or "python")
        self._docs[item.uri] = doc
        return doc

    def change(
        self, ident: types.VersionedTextDocumentIdentifier, changes: list[Any], encoding: str
    ) -> Document | None:
        doc = self._docs.get(ident.uri)
        if doc is None:
            return None
        for change in changes:
            doc.apply(change, encoding)
        if ident.version is not None:
            doc.version = ident.version
        else:
            doc.version += 1
        return doc

    def close(self, uri: str) -> Document | None:
        return self._docs.pop(uri, None)

    def get(self, uri: str) -> Document | None:
        return self._docs.get(uri)

    def by_path(self, path: str) -> Document | None:
        norm = os.path.normpath(path)
        for doc in self._docs.values():
            if doc.path == norm:
                return doc
        return None

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(list(self._docs.values()))

    def __len__(self) -> int:
        return len(self._docs)
