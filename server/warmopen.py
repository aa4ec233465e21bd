"""A document opened again in a fresh editor session: its first diagnostics from what the last
session computed for the same text, before any project is built (issue 21, "Speed").

A fresh server must build its project before the first diagnostics of a document; following
installed packages that is most of the open (the library files' facts decoded from the user-level
cache, a project build per round of bound names, the type refinement, TC312's judgements: 1.35 s
against 0.10 s without following on ``bench/lib_scripts/hf_user.py``).  So each lint of a document
whose buffer equals its file on disk leaves an *open record* in the project's cache (or, where
the project has none and libraries are followed, in the user-level library cache): the
document's diagnostics as ``Workspace.lint`` returned them, its code-lens entries and probe
targets, under a key of

- tclint's own code (the cache fingerprint and a stamp of the server's modules),
- the document's path, the content digest of every file of its root (the document included: the
  record is only written, and only read, while every open buffer of the root equals its file),
- the root's and the document's settings (editor settings merged in),
- following installed packages, the environment's import roots and editable mappings, with
  ``libfollow.dependencies`` beside it: the stat identity of every library file read, every file
  TC312's judgement parsed in this process and every module lookup, checked again
  (``libfollow.dependencies_hold``) before the record is used.

The record also holds the LSP ranges, in each position encoding, of the related locations in
other files whose content the key or the dependencies pin (the installed library files TC312
points into), so that answering the open reads no library file to build its line table, and
what an edit typed before the verification ends is derived from (``warmedit``: the document's
``rerun.file_context`` in the project, the digests of its interface and exports).

Everything the diagnostics are computed from is in the key or in that record, so a record that
matches is exactly what the full computation gives; the server still runs it right after
(``TclintServer._lint``), and publishes its result only where it differs.  One record per
document (the latest); entries are sealed plain data (``sealed``): a damaged or foreign one is a
miss.  Runs on the lint thread.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any

from tclint.rules.model import Position, Span
from tclint.server.entries import Entry

if TYPE_CHECKING:
    from collections.abc import Callable

    from tclint.rules.model import Diagnostic
    from tclint.server.convert import KnownRanges
    from tclint.server.positions import Lines
    from tclint.server.workspace import Root, Workspace

KIND = "open-record-1"
FOLDER = "opens"
_SERVER_STAMP: list[str] = []


def _server_stamp() -> str:
    """Name, size and mtime of the server's modules (the cache fingerprint covers ``rules``)."""
    if not _SERVER_STAMP:
        here = os.path.dirname(os.path.abspath(__file__))
        h = hashlib.blake2b(digest_size=8)
        for name in sorted(n for n in os.listdir(here) if n.endswith(".py")):
            st = os.stat(os.path.join(here, name))
            h.update(f"{name}:{st.st_size}:{st.st_mtime_ns}".encode())
        _SERVER_STAMP.append(h.hexdigest())
    return _SERVER_STAMP[0]


def text_digest(text: str) -> str:
    """The content digest ``reading.read_source`` gives a file holding ``text`` as UTF-8."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _store(root: Root) -> Any:
    """The cache the records of ``root`` live in: the project's own, else (following installed
    packages) the user-level library cache; None: no record."""
    cache = root.cache()
    if cache is not None:
        return cache
    if root.root_settings().follow_libraries:
        from tclint.rules.libfollow import library_cache

        return library_cache()
    return None


def _buffers_on_disk(ws: Workspace, root: Root, skip: str) -> bool:
    """Does every open buffer of ``root`` but ``skip`` hold the text its file on disk held when it
    was indexed (so that the root's facts are those of the files on disk)?"""
    for path in root.open:
        if path == skip:
            continue
        state = ws.docs.get(path)
        on_disk = root.disk.get(path)
        text = state.last_good_text if state is not None else None
        if text is None or on_disk is None or text_digest(text) != on_disk[0]:
            return False
    return True


def _key(cache: Any, root: Root, path: str, digest: str) -> str:
    from tclint.rules.engine import _settings_fingerprint

    settings = root.root_settings()
    parts = [
        KIND,
        cache.fingerprint,
        _server_stamp(),
        path,
        digest,
        _settings_fingerprint(settings),
        _settings_fingerprint(root.settings_for(path)),
    ]
    if settings.follow_libraries:
        from tclint.rules.libfollow import Environment, environment_key

        parts.append(environment_key(Environment.for_python((settings.probe or {}).get("python"))))
    for other, (other_digest, _facts) in sorted(root.disk.items()):
        if other != path:
            parts.append(f"{other}\0{other_digest}")
    return hashlib.blake2b("\n".join(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _record_path(cache: Any, path: str) -> tuple[str, str]:
    name = hashlib.blake2b(f"{KIND}|{path}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return os.path.join(cache.directory, FOLDER, cache.fingerprint, name[:2], name), name


def _disk_digest(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.blake2b(fh.read(), digest_size=16).hexdigest()
    except OSError:
        return None


def _encode_entries(entries: list[Entry]) -> list[Any]:
    return [
        [
            e.kind,
            [e.span.start.line, e.span.start.column, e.span.end.line, e.span.end.column],
            e.line,
            e.qualname,
            e.markdown,
            e.root,
            e.module_level,
            e.variants,
        ]
        for e in entries
    ]


def _decode_entries(plain: Any) -> list[Entry]:
    out = []
    for kind, (sl, sc, el, ec), line, qualname, markdown, root, module_level, variants in plain:
        if not (
            isinstance(kind, str)
            and all(isinstance(v, int) for v in (sl, sc, el, ec, line))
            and isinstance(qualname, (str, type(None)))
            and isinstance(markdown, str)
            and isinstance(root, bool)
            and isinstance(module_level, bool)
            and isinstance(variants, (str, type(None)))
        ):
            raise TypeError("not an entry")
        span = Span(Position(sl, sc), Position(el, ec))
        out.append(Entry(kind, span, line, qualname, markdown, root, module_level, variants))
    return out


def _related_ranges(
    diagnostics: list[Diagnostic], path: str, pinned: set[str], lines_of: Callable[[str], Lines | None]
) -> list[list[Any]]:
    """[file, span's 4 numbers, then its LSP range in UTF-8, UTF-16 and UTF-32] of every related
    location in a file other than ``path`` whose content the record pins (``pinned``: absolute
    paths), from that file's line table (``lines_of``)."""
    from tclint.server.convert import lsp_range
    from tclint.server.positions import UTF8, UTF16, UTF32

    here = os.path.abspath(path)
    out: list[list[Any]] = []
    seen: set[tuple[str, int, int, int, int]] = set()
    for diag in diagnostics:
        for rel in diag.related:
            rel_path = os.path.abspath(rel.path)
            s = rel.span
            key = (rel_path, s.start.line, s.start.column, s.end.line, s.end.column)
            if rel_path == here or rel_path not in pinned or key in seen:
                continue
            seen.add(key)
            lines = lines_of(rel_path)
            if lines is None:
                continue
            out.append([*key, *(list(lsp_range(lines, s, enc)) for enc in (UTF8, UTF16, UTF32))])
    return out


def _known_ranges(plain: Any) -> KnownRanges:
    """The record's related ranges (``_related_ranges``) as the converter looks them up."""
    from tclint.server.positions import UTF8, UTF16, UTF32

    known: KnownRanges = {}
    for rel_path, sl, sc, el, ec, *ranges in plain or ():
        if not isinstance(rel_path, str) or len(ranges) != 3:
            raise TypeError("not a range")
        for enc, rng in zip((UTF8, UTF16, UTF32), ranges, strict=True):
            a, b, c, d = (int(v) for v in rng)
            known[(rel_path, int(sl), int(sc), int(el), int(ec), enc)] = (a, b, c, d)
    return known


def lookup(
    ws: Workspace, root: Root, path: str, text: str
) -> tuple[list[Diagnostic], list[Entry], list[tuple[int, int, str]], KnownRanges, Any] | None:
    """(diagnostics, code-lens entries, probe targets, related ranges in library files, the plain
    part edits are derived from: ``warmedit.context_of``, or None) of ``path`` holding ``text`` as
    the last session stored them, when every input still reads the same; else None.  ``root``
    must be indexed (no file pending)."""
    from tclint.rules import sealed
    from tclint.rules.plaindata import decode_diagnostics

    cache = _store(root)
    if cache is None or cache._key is None or root.pending:
        return None
    digest = text_digest(text)
    on_disk = root.disk.get(path)
    if (on_disk is not None and on_disk[0] != digest) or not _buffers_on_disk(ws, root, path):
        return None
    if on_disk is None and root.index and os.path.exists(path):
        return None  # a file the index skipped: the full computation says why
    target, name = _record_path(cache, path)
    value = sealed.read(target, cache._key, KIND, name)
    if not isinstance(value, dict) or value.get("key") != _key(cache, root, path, digest):
        return None
    deps = value.get("dependencies")
    if deps is not None:
        from tclint.rules.libfollow import dependencies_hold

        if not dependencies_hold(deps):
            return None
    try:
        diagnostics = decode_diagnostics(value["diagnostics"])
        entries = _decode_entries(value["entries"])
        targets = [(int(a), int(b), str(c)) for a, b, c in value["targets"]]
        known = _known_ranges(value.get("ranges"))
    except (KeyError, TypeError, ValueError):
        return None
    return diagnostics, entries, targets, known, value.get("edit")


def _parsed_for(root: Root, trees: Any) -> list[str]:
    """The files TC312's judgement parsed in this process (``libconfig._TREES``) that ``root``'s
    run can have read: under its folder, its environments' roots or their editable installs.
    Files another workspace folder (or an earlier one) parsed are not this record's inputs: a
    change there must not stop records from being written here."""
    folders = [root.path]
    for env in root.follow_envs:
        folders += list(env.roots) + [str(p) for p in env.editable.values()]
    prefixes = tuple(os.path.join(os.path.abspath(f), "") for f in folders if f)
    return [p for p in trees if os.path.abspath(p).startswith(prefixes)]


def _edit_part(root: Root, path: str) -> Any:
    """What an edit typed before the next session's verification ends is derived from
    (``warmedit.context_of``), when the root's project is the one built on the buffer's facts
    (no swap pending, no line moved since): None otherwise."""
    from tclint.rules.rerun import ContextMiss
    from tclint.server.warmedit import context_of

    project, facts = root._project, root.open.get(path)
    if project is None or facts is None or root._swaps or root._moved:
        return None
    try:
        return context_of(project, facts, root._cross.get(path, []), root.settings_for(path))
    except (Exception, ContextMiss):  # an optimisation: the next session's edits wait instead
        return None


def remember(
    ws: Workspace,
    root: Root,
    path: str,
    text: str,
    diagnostics: list[Diagnostic],
    entries: list[Entry],
    targets: list[tuple[int, int, str]],
    lines_of: Callable[[str], Lines | None] | None = None,
) -> bool:
    """Store what a full lint of ``path`` holding ``text`` gave, for the next session's first
    open (see the module doc); False when it must not be stored: a buffer of the root differs
    from its file, files are still being indexed, or following read a file that changed or was
    modified too recently to be trusted (``libfollow.dependencies``).  ``lines_of``: the line
    table of a file on disk (the server's, already built for this publish), for the LSP ranges
    of related locations in other files; None: none recorded (the open builds them)."""
    from tclint.rules.plaindata import encode_diagnostics

    cache = _store(root)
    if cache is None or cache._key is None or root.pending or not root.discovered:
        return False
    digest = text_digest(text)
    on_disk = root.disk.get(path)
    if on_disk is not None and on_disk[0] != digest or not _buffers_on_disk(ws, root, path):
        return False
    if _disk_digest(path) != digest:
        return False  # the buffer is not what the file holds now (TC312 reads the file)
    key = _key(cache, root, path, digest)
    state = ws.docs.get(path)
    if state is not None and state.remembered == key:
        return True
    deps = None
    settings = root.root_settings()
    if settings.follow_libraries:
        import sys

        from tclint.rules.libfollow import dependencies

        project = root._project
        if project is None or not root.follow_envs:
            return False
        libconfig = sys.modules.get("tclint.rules.libconfig")
        parsed = _parsed_for(root, getattr(libconfig, "_TREES", {}))
        covered = {os.path.abspath(p) for p in root.disk} | {os.path.abspath(path)}
        deps = dependencies(root.follow_envs, project, covered, parsed)
        if deps is None:
            return False
    ranges: list[list[Any]] = []
    if lines_of is not None:
        # the library files the dependencies pin (stat); the project's own are converted as usual
        pinned = {os.path.abspath(row[0]) for row in (deps or {}).get("files", ())}
        pinned.difference_update(os.path.abspath(p) for p in root.disk)
        ranges = _related_ranges(diagnostics, path, pinned, lines_of)
    try:
        value = {
            "key": key,
            "diagnostics": encode_diagnostics(diagnostics),
            "entries": _encode_entries(entries),
            "targets": [list(t) for t in targets],
            "dependencies": deps,
            "ranges": ranges,
            "edit": _edit_part(root, path),
        }
    except (TypeError, ValueError):
        return False
    target, name = _record_path(cache, path)
    from tclint.rules.libfollow import write_entry

    if not write_entry(cache, target, KIND, name, value):
        return False
    if state is not None:
        state.remembered = key
    return True
