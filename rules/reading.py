"""Reading files for a lint run: bytes, content digest, and text decoded only when needed.

A warm run on an unchanged tree answers from the whole-run cache, so the only work it cannot skip
is knowing that every file is unchanged.  Two things keep that cheap:

* ``SourceText`` (``source.py``) decodes lazily: hashing needs the bytes, not the text, and a
  cached result needs neither until a reporter shows a source line.
* ``StatTable`` remembers, per file, the ``os.stat`` identity (size, mtime, ctime, inode, device)
  under which its bytes had a given digest, as git's index does.  A file whose stat is unchanged
  keeps its digest without being read.  Entries are trusted only when the file was last modified
  well before it was hashed ("racily clean" entries are re-read), and ctime, which no user tool
  can set back, catches mtime-preserving rewrites.  The digest stays the cache key everywhere:
  the table only saves re-hashing bytes whose digest is already known.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Iterator, Mapping
from typing import Any

from tclint.rules.source import SourceText

# A file modified less than this long before it was hashed may be modified again within the same
# timestamp tick without changing its stat (coarse file systems: FAT 2 s, some network mounts 1 s).
RACY_MARGIN_NS = 3_000_000_000
_MAX_ENTRIES = 500_000


def read_source(
    path: str,
    data: bytes | None = None,
    max_size: int | None = None,
    stats: StatTable | None = None,
    absolute: str | None = None,
) -> SourceText:
    """Read one file (notebooks: their code cells, decoded at once); ``data`` given: an editor's
    unsaved buffer, never looked up in or recorded into ``stats`` (keyed by ``absolute``, the
    absolute path, computed here when the caller has not)."""
    st = None
    if stats is not None and absolute is None:
        absolute = os.path.abspath(path)
    if data is None:
        try:
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):
                return SourceText(path, None, not_regular_message(path, st.st_mode))
            if max_size is not None and st.st_size > max_size:
                return SourceText(path, None, _too_large(f"{st.st_size:,}", max_size))
            if stats is not None and absolute is not None and not path.endswith(".ipynb"):
                known = stats.digest(absolute, st)
                if known is not None:
                    src = SourceText.deferred(path, None, known, st.st_size, on_disk=True)
                    src.from_stat = True
                    return src
            hashed_at = time.time_ns()
            data = read_regular(path, max_size)
        except NotRegularFile as exc:
            return SourceText(path, None, str(exc))
        except OSError as exc:
            return SourceText(path, None, f"cannot read file: {exc.strerror or exc}")
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    if max_size is not None and len(data) > max_size:
        # read from disk: the file grew past its stat size while read (read_regular stopped one
        # byte over the limit); an editor's buffer: its whole size is known
        size = f"more than {max_size:,}" if st is not None else f"{len(data):,}"
        return SourceText(path, None, _too_large(size, max_size), digest=digest)
    if path.endswith(".ipynb"):
        from tclint.rules.notebook import load_notebook

        text, cells, error = load_notebook(data)
        return SourceText(path, text, error, cells, digest)
    if stats is not None and st is not None and absolute is not None:
        stats.record(absolute, st, digest, hashed_at)
    if st is not None:
        # read from disk: the bytes are not kept (a large tree's would stay to the end of the
        # run); the text is read again where it is needed, and may be dropped after (``release``)
        return SourceText.deferred(path, None, digest, len(data), on_disk=True)
    return SourceText.deferred(path, data, digest, len(data))


class NotRegularFile(OSError):
    """The path is a folder, a named pipe, a device or a socket: only regular files are read."""


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words, from its ``st_mode``."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def not_regular_message(path: str, mode: int) -> str:
    """The TC011 message for a path that is not a regular file; for a folder (discovery reports
    the folders it cannot list) why it could not be listed."""
    if stat.S_ISDIR(mode):
        try:
            with os.scandir(path):
                pass
        except OSError as exc:
            return f"cannot list folder: {exc.strerror or exc}"
        return "is a folder, not a file"
    return f"not a regular file ({file_kind(mode)}): tclint reads regular files only"


def read_regular(path: str, max_size: int | None = None) -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_size + 1`` of them (one more than
    allowed says "too large" without reading a file that grows, or never ends, to its end).

    Opened without blocking and checked after opening, so a path that is (or was swapped for) a
    named pipe or a device raises ``NotRegularFile`` instead of hanging or reading forever."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(not_regular_message(path, mode))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read() if max_size is None else fh.read(max_size + 1)
    finally:
        os.close(fd)


def _too_large(size: str, max_size: int) -> str:
    return f"file is too large to lint ({size} bytes; max-file-size is {max_size:,})"


class StatTable:
    """File stat -> content digest.  ``cache.Cache`` loads and saves it beside the cache, as one
    authenticated entry of plain data (``entries``: the table as saved; anything else is an
    empty table)."""

    def __init__(self, entries: Any = None) -> None:
        self._entries: dict[str, tuple[tuple[int, int, int, int, int], str]] = (
            entries if type(entries) is dict else {}
        )
        self._dirty = False

    @staticmethod
    def _identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
        return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)

    def digest(self, absolute: str, st: os.stat_result) -> str | None:
        entry = self._entries.get(absolute)
        if entry is None or entry[0] != self._identity(st):
            return None
        return entry[1]

    def record(self, absolute: str, st: os.stat_result, digest: str, hashed_at_ns: int) -> None:
        key = absolute
        racy = max(st.st_mtime_ns, st.st_ctime_ns) >= hashed_at_ns - RACY_MARGIN_NS
        if racy:
            # not trusted yet: drop any older entry so the next run hashes again
            if self._entries.pop(key, None) is not None:
                self._dirty = True
            return
        entry = (self._identity(st), digest)
        if self._entries.get(key) != entry:
            self._entries[key] = entry
            self._dirty = True

    def changed(self) -> dict[str, tuple[tuple[int, int, int, int, int], str]] | None:
        """The table to save (the newest ``_MAX_ENTRIES``), or None when nothing changed."""
        if not self._dirty:
            return None
        if len(self._entries) > _MAX_ENTRIES:
            self._entries = dict(list(self._entries.items())[-_MAX_ENTRIES:])
        return self._entries

    def saved(self) -> None:
        self._dirty = False


class Texts(Mapping[str, "str | None"]):
    """path -> text of the files of a run, decoded only for the paths a reporter or fixer asks
    for (the full format shows lines of files with findings; a warm run decodes nothing else)."""

    def __init__(self, sources: Mapping[str, SourceText], release: bool = False) -> None:
        """``release``: keep the decoded text of the last file asked for only (a command-line
        run: findings come sorted by path, so each file is decoded once and the texts of every
        file with findings are not all held at the end; ``SourceText.release``)."""
        self._sources = sources
        self._release = release
        self._last: SourceText | None = None

    def __getitem__(self, path: str) -> str | None:
        src = self._sources[path]
        if self._release and src is not self._last:
            if self._last is not None:
                self._last.release()
            self._last = src
        return src.text

    def __iter__(self) -> Iterator[str]:
        return iter(self._sources)

    def cell_text(self, path: str, cell: int) -> str | None:
        """A notebook's code cell as written (for snippets of findings in cells), or None."""
        src = self._sources.get(path)
        cells = src.cells if src is not None else None
        return cells.cell_text(cell) if cells is not None else None

    def cell_map(self, path: str) -> Any:
        """A notebook's ``CellMap`` (None for other files): computes the codemods of its cells."""
        src = self._sources.get(path)
        return src.cells if src is not None else None

    def __len__(self) -> int:
        return len(self._sources)
