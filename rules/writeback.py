"""Writing fixed files back (``--fix``, ``--add-noqa``) without losing a byte.

:func:`rewrite` replaces a file's bytes with an edited version of the bytes that were linted:

* **Concurrent edits win.**  The file is read again just before it is written; when its content
  digest is not the digest of the bytes that were linted (an editor saved it, another run fixed
  it) it is left alone and :class:`FileChanged` is raised.  Its ``stat`` identity is checked once
  more immediately before the rename (or the in-place write), so the window left is that of one
  system call; a writer racing inside it is the one case this cannot see.
* **The file's own encoding.**  :func:`encode_like` splices the new text into the original bytes:
  every byte outside the edited ranges is copied, only the replacements are encoded, with the
  encoding the file was decoded with (PEP 263 cookie, BOM).  The result is decoded again the way
  it was linted and must give exactly the new text (a replacement that the encoding cannot hold, a
  fix that pushed the coding cookie below line 2): otherwise :class:`WriteError`, nothing written.
* **Links and mode.**  A symbolic link is written through (its target is edited, the link stays a
  link).  Mode bits are kept, and the owner where the operating system lets us.
* **Atomic, unique, nothing left behind.**  A file with one link is replaced by renaming a
  temporary file created by ``mkstemp`` in the same folder (unique, so two runs on one tree never
  share it), written and fsynced first: readers see the old file or the new one, never a mix.
  Every error path removes the temporary file.
* **Hard links are kept.**  Renaming would split a file with several links (the other names would
  keep the old bytes), and a new file could not get another user's ownership; such files are
  rewritten in place instead.  A backup of the original bytes is written and fsynced beside it
  first, and removed after; if the in-place write fails the original bytes are written back.  So
  at every instant either the file is whole (old or new) or the backup holds the original: an
  interrupted run can leave a ``*.tclint.bak`` behind, never a damaged file without its bytes.
* **Clean errors.**  Every ``OSError`` (full disk, read-only file system, permissions) becomes a
  :class:`WriteError` with a one-line message naming the file.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
from collections.abc import Callable

from tclint.rules.printable import printable
from tclint.rules.source import decode_source

TEMP_SUFFIX = ".tclint.tmp"
BACKUP_SUFFIX = ".tclint.bak"


class FileChanged(Exception):
    """The file no longer holds the bytes that were linted; it was not written."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{printable(path)} changed while it was being linted; left as it is (run tclint again)"
        )
        self.path = path


class WriteError(Exception):
    """The file could not be written; it holds what it held before (see ``backup`` otherwise)."""

    def __init__(self, path: str, reason: str, backup: str | None = None) -> None:
        message = f"cannot write {printable(path)}: {reason}"
        if backup is not None:
            message += f" (its original bytes are in {printable(backup)})"
        super().__init__(message)
        self.path = path
        self.backup = backup


def content_digest(data: bytes) -> str:
    """The digest the reader records for the bytes it linted (``SourceText.digest``)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


# ---------------------------------------------------------------------------------------------
# encoding


_BARE_LF = re.compile(r"(?<!\r)\n")


_RESYNC_WINDOW = 256  # lines looked ahead for where two texts agree again after a difference


def _hunks(old: str, new: str) -> list[tuple[int, int, str]]:
    """The changes from ``old`` to ``new`` as (start, end, replacement) offsets into ``old``, in
    order, each trimmed to the characters that differ.

    Linear for local edits (fixes and noqa comments are): walk both line lists together and, at a
    difference, take the nearest pair of lines where they agree again (within a window; past it,
    the rest is one hunk).  Any correct description will do, the smallest is not needed: what lies
    outside the hunks is copied, what lies inside is re-encoded and checked (``difflib``'s exhaustive
    matcher took a minute on a 1 MB file with a thousand edits)."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    out: list[tuple[int, int, str]] = []
    i = j = 0  # line indices
    pos_a = pos_b = 0  # their offsets
    while i < len(a) or j < len(b):
        if i < len(a) and j < len(b) and a[i] == b[j]:
            pos_a += len(a[i])
            pos_b += len(b[j])
            i += 1
            j += 1
            continue
        skip_a, skip_b = len(a) - i, len(b) - j  # no agreement found: the rest differs
        for distance in range(1, _RESYNC_WINDOW + 1):
            found = False
            for da in range(distance + 1):
                db = distance - da
                if i + da < len(a) and j + db < len(b) and a[i + da] == b[j + db]:
                    skip_a, skip_b, found = da, db, True
                    break
            if found or (i + distance >= len(a) and j + distance >= len(b)):
                break
        seg = "".join(a[i : i + skip_a])
        repl = "".join(b[j : j + skip_b])
        p = 0
        limit = min(len(seg), len(repl))
        while p < limit and seg[p] == repl[p]:
            p += 1
        q = 0
        while q < limit - p and seg[len(seg) - 1 - q] == repl[len(repl) - 1 - q]:
            q += 1
        out.append((pos_a + p, pos_a + len(seg) - q, repl[p : len(repl) - q]))
        pos_a += len(seg)
        pos_b += len(repl)
        i += skip_a
        j += skip_b
    return out


def encode_like(original: bytes, old: str, new: str) -> bytes:
    """``original`` (whose decoded text is ``old``) with the changes from ``old`` to ``new`` spliced
    in: bytes outside the changed ranges are copied, replacements are encoded in the file's
    encoding (and get the file's CRLF line endings when it uses them).  Raises ``ValueError`` when
    that cannot give a file that decodes to the new text."""
    decoded = decode_source(original)
    if decoded.text is None or decoded.text != old:
        raise ValueError("the file does not hold the text that was linted")
    encoding = decoded.encoding
    if encoding == "utf-8-sig":
        encoding = "utf-8"  # the BOM stays in the copied prefix
    encoded_old = old.encode(encoding)
    prefix = len(original) - len(encoded_old)
    if prefix < 0 or original[prefix:] != encoded_old:
        raise ValueError(f"its {decoded.encoding} text does not encode back to the same bytes")
    first_end = re.search(r"\r\n|\r|\n", old)
    crlf = first_end is not None and first_end.group() == "\r\n"
    parts = [original[:prefix]]
    expected = []
    pos = 0  # in old
    byte = prefix  # in original
    for start, end, repl in _hunks(old, new):
        if crlf:
            repl = _BARE_LF.sub("\r\n", repl)
        keep = old[pos:start]
        size = len(keep.encode(encoding))
        parts.append(original[byte : byte + size])
        expected.append(keep)
        byte += size
        try:
            parts.append(repl.encode(encoding))
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"{exc.object[exc.start : exc.end]!r} cannot be written in its encoding ({decoded.encoding})"
            ) from None
        expected.append(repl)
        byte += len(old[start:end].encode(encoding))
        pos = end
    parts.append(original[byte:])
    expected.append(old[pos:])
    data = b"".join(parts)
    again = decode_source(data)
    if again.text != "".join(expected):
        why = again.error or f"it would no longer read as {decoded.encoding}"
        raise ValueError(f"the edited file would not decode to the edited text ({why})")
    return data


# ---------------------------------------------------------------------------------------------
# writing


def _identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def rewrite(path: str, linted_digest: str, edit: Callable[[bytes], bytes]) -> bool:
    """Replace the bytes of ``path`` with ``edit(bytes)`` if they still are the linted bytes
    (``linted_digest``).  Returns whether the file changed.  Raises :class:`FileChanged` (left as
    it is) or :class:`WriteError` (left as it was; ``edit``'s ``ValueError`` becomes one too)."""
    target = os.path.realpath(path)
    try:
        with open(target, "rb") as fh:
            before = os.fstat(fh.fileno())
            original = fh.read()
    except OSError as exc:
        raise WriteError(path, _reason(exc)) from None
    if not linted_digest or content_digest(original) != linted_digest:
        raise FileChanged(path)
    try:
        data = edit(original)
    except ValueError as exc:
        raise WriteError(path, str(exc)) from None
    if data == original:
        return False
    if before.st_nlink > 1 or not _replace(path, target, data, before):
        _write_in_place(path, target, data, original, before)
    return True


def _check_unchanged(path: str, target: str, before: os.stat_result) -> None:
    try:
        now = os.stat(target)
    except OSError:
        raise FileChanged(path) from None
    if _identity(now) != _identity(before):
        raise FileChanged(path)


def _replace(path: str, target: str, data: bytes, before: os.stat_result) -> bool:
    """Write ``data`` to a new file and rename it over ``target``.  False (nothing changed) when
    the new file could not be given the target's owner: the caller writes in place then."""
    folder = os.path.dirname(target)
    try:
        fd, tmp = tempfile.mkstemp(
            prefix="." + os.path.basename(target) + ".", suffix=TEMP_SUFFIX, dir=folder
        )
    except OSError as exc:
        raise WriteError(path, _reason(exc)) from None
    renamed = False
    try:
        try:
            _write_all(fd, data)
            st = os.fstat(fd)
            if (st.st_uid, st.st_gid) != (before.st_uid, before.st_gid) and hasattr(os, "fchown"):
                try:
                    os.fchown(fd, before.st_uid, before.st_gid)
                except PermissionError:
                    return False
            if hasattr(os, "fchmod"):
                os.fchmod(fd, stat.S_IMODE(before.st_mode))  # after chown, which clears set-id bits
            else:  # Windows before Python 3.13
                os.chmod(tmp, stat.S_IMODE(before.st_mode))
            os.fsync(fd)
        finally:
            os.close(fd)
        _check_unchanged(path, target, before)
        os.replace(tmp, target)
        renamed = True
    except OSError as exc:
        raise WriteError(path, _reason(exc)) from None
    finally:
        if not renamed:
            _unlink_quietly(tmp)
    return True


def _write_in_place(path: str, target: str, data: bytes, original: bytes, before: os.stat_result) -> None:
    """Overwrite ``target``'s own inode (hard links, foreign owner), with a backup of the
    original bytes on disk until the new ones are."""
    try:
        fd = os.open(target, os.O_RDWR)
    except OSError as exc:
        raise WriteError(path, _reason(exc)) from None
    backup: str | None = None
    try:
        try:
            bfd, backup = tempfile.mkstemp(
                prefix="." + os.path.basename(target) + ".", suffix=BACKUP_SUFFIX, dir=os.path.dirname(target)
            )
            try:
                _write_all(bfd, original)
                os.fsync(bfd)
            finally:
                os.close(bfd)
        except OSError as exc:
            if backup is not None:
                _unlink_quietly(backup)
            raise WriteError(path, _reason(exc)) from None
        _check_unchanged(path, target, before)
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            _write_all(fd, data)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        except OSError as exc:
            try:  # the original's blocks are allocated already: writing them back fits
                os.lseek(fd, 0, os.SEEK_SET)
                _write_all(fd, original)
                os.ftruncate(fd, len(original))
                os.fsync(fd)
            except OSError:
                kept, backup = backup, None
                raise WriteError(path, _reason(exc), backup=kept) from None
            raise WriteError(path, _reason(exc)) from None
    finally:
        os.close(fd)
        if backup is not None:
            _unlink_quietly(backup)
