"""The cache folder: only one tclint made is ever written to, ignored by git, or deleted.

A folder is tclint's when it carries tclint's marker, a ``CACHEDIR.TAG`` (the Cache Directory
Tagging Specification, so backup tools skip it) whose text names tclint.  tclint writes the marker
when it creates the folder, and also adopts a folder that holds nothing it did not create: an
empty one, or one an older tclint left (see ``foreign_entries``).  Any other folder
(``.git``, ``src``, the project itself, a folder of someone else's files) is refused, so a
mistaken ``cache-dir`` never gets a ``.gitignore`` with ``*`` written into it and is never removed
by ``tclint clean``.

The ``.gitignore`` (``*``: git never offers the cache for committing) and the marker are written
through a temporary file and a rename, and rewritten whenever they are missing or not exactly what
tclint writes (a disk that filled up during a first run left an empty one).
"""

from __future__ import annotations

import os
import shutil

from tclint.rules.sealed import TMP_PREFIX, write_atomic

MARKER = "CACHEDIR.TAG"
MARKER_TEXT = (
    b"Signature: 8a477f597d28d172789f06886806bc55\n"
    b"# This file is a cache directory tag created by tclint (tclint-cache).\n"
    b"# For information about cache directory tags see https://bford.info/cachedir/\n"
)
GITIGNORE = ".gitignore"
GITIGNORE_TEXT = b"# Automatically created by tclint.\n*\n"
# What tclint writes in its cache folder, by top-level name (stats.pkl: the table of older releases)
# rewalks.py, rerun.py, the language server's warm-open records (server/warmopen.py)
_OWN_FOLDERS = frozenset({"facts", "runs", "outputs", "rewalks", "rerun", "opens"})
_OWN_FILES = frozenset({MARKER, GITIGNORE, "stats.pkl", "stats.entry"})


class CacheDirError(Exception):
    """The configured cache folder holds files tclint did not create."""


def _read(path: str, limit: int = 4096) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(limit)
    except OSError:
        return None


def is_marked(directory: str) -> bool:
    """True when ``directory`` carries tclint's marker."""
    return _read(os.path.join(directory, MARKER)) == MARKER_TEXT


def _is_own_tmp(name: str, legacy: bool) -> bool:
    # TMP_PREFIX: this tclint's temporary files; tmp*.tmp: an older release's (in its own folder only)
    return name.endswith(".tmp") and (name.startswith(TMP_PREFIX) or legacy and name.startswith("tmp"))


def _is_real_dir(path: str) -> bool:
    return os.path.isdir(path) and not os.path.islink(path)


def _fingerprints(path: str) -> tuple[list[str], list[str]]:
    """(tclint's, the others): the entries of ``facts``/``runs``/``outputs`` (and the others of
    ``_OWN_FOLDERS``), whose folders are named by a tool fingerprint (16 hex digits)."""
    own: list[str] = []
    other: list[str] = []
    for name in sorted(os.listdir(path)):
        is_fp = len(name) == 16 and all(c in "0123456789abcdef" for c in name)
        (own if is_fp and _is_real_dir(os.path.join(path, name)) else other).append(name)
    return own, other


def foreign_entries(directory: str) -> list[str]:
    """The names in ``directory`` that tclint did not create (empty: it is tclint's, or missing).

    A folder with the marker is tclint's.  Without it, the folder is adopted only if it is empty,
    or if it is what an older tclint (or a first run stopped by a full disk) left: tclint's
    ``.gitignore`` (written before anything else, possibly cut short) beside nothing but the
    names tclint writes, its ``facts``/``runs``/``outputs`` holding only fingerprint folders.  A
    ``runs`` folder of someone else's (TensorBoard's) is not tclint's."""
    if not os.path.lexists(directory):
        return []
    if not _is_real_dir(directory):
        return [os.path.basename(directory)]
    if is_marked(directory):
        return []
    try:
        names = sorted(os.listdir(directory))
        gitignore = os.path.join(directory, GITIGNORE)
        data = _read(gitignore) if os.path.isfile(gitignore) and not os.path.islink(gitignore) else None
        legacy = data is not None and GITIGNORE_TEXT.startswith(data)
        foreign = []
        for name in names:
            path = os.path.join(directory, name)
            if _is_own_tmp(name, legacy) and os.path.isfile(path) and not os.path.islink(path):
                continue
            if name == GITIGNORE and legacy:
                continue
            if name == MARKER and os.path.isfile(path) and not os.path.islink(path):
                text = _read(path)
                if text is not None and MARKER_TEXT.startswith(text):  # cut short by a full disk
                    continue
            if legacy and name in _OWN_FILES and name not in (GITIGNORE, MARKER) and os.path.isfile(path):
                continue
            if legacy and name in _OWN_FOLDERS and _is_real_dir(path) and not _fingerprints(path)[1]:
                continue
            foreign.append(name)
    except OSError as exc:
        return [f"(cannot list: {exc.strerror or exc})"]
    return foreign


def check(directory: str) -> None:
    """Raise CacheDirError unless ``directory`` is missing or tclint's."""
    foreign = foreign_entries(directory)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise CacheDirError(f"cache folder {directory} holds files tclint did not create ({shown})")


def prepare(directory: str) -> None:
    """Make ``directory`` ready for entries: created if missing, checked, ignored by git, marked.
    Raises CacheDirError for a folder that is not tclint's, OSError when it cannot be written."""
    os.makedirs(directory, exist_ok=True)
    check(directory)
    links = [name for name in sorted(_OWN_FOLDERS) if os.path.islink(os.path.join(directory, name))]
    if links:  # a cloned cache folder whose `facts` points elsewhere would have entries written there
        raise CacheDirError(
            f"cache folder {directory} holds links tclint did not create ({', '.join(links)})"
        )
    # the .gitignore first: a run stopped before the marker leaves nothing git would offer
    for name, text in ((GITIGNORE, GITIGNORE_TEXT), (MARKER, MARKER_TEXT)):
        path = os.path.join(directory, name)
        if _read(path) != text:
            write_atomic(path, text)


def clean(directory: str) -> list[str]:
    """Remove what tclint created in ``directory`` (refusing unless it carries the marker or holds
    only tclint's files), then the folder itself if nothing else is left; the names kept."""
    check(directory)
    if not os.path.isdir(directory):
        return []
    kept: list[str] = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if name == MARKER:
            continue
        if name in _OWN_FOLDERS and _is_real_dir(path):
            own, other = _fingerprints(path)
            for fp in own:
                shutil.rmtree(os.path.join(path, fp), ignore_errors=True)
            kept.extend(f"{name}/{n}" for n in other)
            if not other:
                try:
                    os.rmdir(path)
                except OSError:
                    kept.append(name)
        elif (name in _OWN_FILES or _is_own_tmp(name, True)) and not os.path.isdir(path):
            try:
                os.unlink(path)
            except OSError:
                kept.append(name)
        else:
            kept.append(name)
    if kept:
        return kept
    try:
        os.unlink(os.path.join(directory, MARKER))
        os.rmdir(directory)
    except OSError as exc:
        kept.append(f"(cannot remove: {exc.strerror or exc})")
    return kept
