"""The server's analysis state: projects (roots), their files' facts, open documents' analyses.

Everything here runs on one thread (the *lint thread*, see ``scheduler``), so nothing is locked.
It is the CLI's pipeline kept warm: per file ``analyze_source`` facts (open buffers through
``IncrementalAnalyzer``, files on disk through the CLI's content-hash cache when the project has
one), ``Project(...).build()`` and ``project_diagnostics`` over all facts of a root, then per
file the engine's ``diagnose_file`` (the CLI's own entry: file and cross-file diagnostics,
selection, suppressions, dedupe, sort) -- so the editor reports what ``tclint check`` reports.
Unsaved buffer text overrides the file on disk.

A *root* is the folder the CLI would index for a file (``project_root``: the nearest folder with a
configuration file, a setup file or ``.git``), else the workspace folder holding it, else the
file's own folder (then only open files are indexed).  Each workspace folder of a multi-root
workspace therefore gets its own project(s), configuration and editor settings.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, cast

from tclint.rules.argflow import REWALKED, refine
from tclint.rules.config import ConfigError, ConfigResolver, Settings, project_root
from tclint.rules.discovery import discover, is_excluded, module_for
from tclint.rules.engine import (
    SourceText,
    analyze_source,
    diagnose_file,
    file_diagnostics,
    project_diagnostics,
    read_source,
    unique_sorted,
)
from tclint.rules.facts import FileFacts
from tclint.rules.libfollow import LIBRARY_MEMO
from tclint.rules.libjudged import CACHED_MEMO
from tclint.rules.model import Diagnostic, Edit, Fix, Position, RelatedLocation, Span
from tclint.rules.project import Project
from tclint.rules.project_delta import (
    added_functions,
    interface_equal,
    named_elsewhere,
    replay_rewalks,
    share_resolution,
    swap_file,
)
from tclint.rules.rewalks import Rewalks
from tclint.server import fixcheck
from tclint.server.codes import file_error_codes
from tclint.server.incremental import IncrementalAnalyzer, Snapshot, diff_lines, split_lines
from tclint.server.settings import EditorResolver, EditorSettings

log = logging.getLogger("tclint.server")
MAX_INDEXED_FILES = 20_000
DISCOVERY_BUDGET = 5.0  # seconds of listing a root's files before indexing what was found
FIRST_INDEX_BUDGET = 1.0  # seconds of indexing before a root's first document is linted
# per-project results that read findings only through the files' exports (``rerun``): kept with the
# cross-file findings by a swap that changes no export (``Root._swapped``)
CROSS_MEMO = ("variants",)
REWALKERS_PER_FILE = 2  # incremental re-walk analyzers kept per open buffer (one per seeds: memory)
# a line-moving edit carried through line maps moves the buffer's facts and its re-walk back
# (``Root._moved_back``, ``Root._rewalk_back``): it is carried when that costs less than the
# project's last ``Project.build`` (a rebuild also refines and runs the cross-file rules again)
CARRIED_MOVES = 2
# line-moving edits rebuilt on an old measure before the move is timed again (that edit pays the
# move and the rebuild: rarer than one edit in 20, off the p95 of a typing session)
REMEASURE_MOVES = 32
# projects left by interface-changing edits kept for an undo (``Root._change``): two cover an edit,
# a second one on top of it (a call typed in the same line) and undoing both; each holds regions
LEFT_KEPT = 2


@dataclass
class LintOutput:
    """What one analysis produced for one file (the lint thread's answer to the server)."""

    path: str
    text: str
    version: int
    diagnostics: list[Diagnostic]
    settings: Settings | None
    parse_error: bool = False
    mode: str = "full"
    excluded: bool = False
    elapsed: float = 0.0
    too_large: bool = False  # over max-file-size: one TC011, the text not analysed
    warm_edit: Any = None  # a warm open's: what edits are derived from until it is verified (``warmedit``)


@dataclass
class DocState:
    """What the lint thread remembers about one open document."""

    path: str
    analyzer: IncrementalAnalyzer
    root: Root
    text: str = ""
    version: int = -1
    notebook: bool = False  # a notebook: re-linted as a whole by the server (cells), not here
    last_good_text: str | None = None  # the last text that parsed: the one its facts in the project are of
    last_good: list[Diagnostic] = field(default_factory=list)  # computed on ``last_good_text``
    parse: list[Diagnostic] = field(
        default_factory=list
    )  # the parse error of ``text`` when it does not parse
    diagnostics: list[Diagnostic] = field(default_factory=list)
    too_large: bool = False  # the text is over max-file-size (see ``Workspace._too_large``)
    remembered: str | None = None  # the key of the warm-open record last written for it (``warmopen``)

    def shown(self, fresh: list[Diagnostic]) -> list[Diagnostic]:
        """What the editor shows for ``text`` given ``fresh``, the findings computed on
        ``last_good_text``: those themselves when the text parses, else the parse error and the
        findings of the lines the edits did not touch, moved to their places in ``text``."""
        if self.text == self.last_good_text:
            return fresh
        kept = carry_over(fresh, self.last_good_text, self.text) if self.last_good_text is not None else []
        return unique_sorted([*self.parse, *kept])


class Root:
    """One project: the facts of its files and the Project built over them."""

    def __init__(
        self, path: str, resolver: EditorResolver, index: bool, on_config_error: Callable[[ConfigError], None]
    ) -> None:
        self.path = path
        self.resolver = resolver
        self.index = index
        self.on_config_error = on_config_error
        self.disk: dict[str, tuple[str, FileFacts]] = {}  # path -> (digest, facts) read from disk
        self.open: dict[str, FileFacts] = {}  # path -> facts of the open buffer
        self.pending: deque[str] = deque()
        self.discovered = False
        self._project: Project | None = None
        self._cross: dict[str, list[Diagnostic]] = {}
        self._cache: Any = None
        self._cache_checked = False
        self.generation = 0  # bumped whenever the project changes
        self._indexing: tuple[float, int] | None = None  # (started, files) of the index under way
        self.open_text: Callable[[str], str | None] = lambda path: (
            None
        )  # an open buffer's text (set by Workspace)
        # an open buffer's last analysis (set by Workspace)
        self.open_snapshot: Callable[[str], Snapshot | None] = lambda path: None
        self.rewalks: Rewalks | None = None  # the type refinement's re-walks, kept across edits
        # open buffers' re-walks, made incrementally: path -> (seeds, predicates) -> analyzer
        self.rewalkers: dict[str, dict[str, IncrementalAnalyzer]] = {}
        self._swaps: dict[str, FileFacts] = {}  # open buffers' new facts, same interface (``set_open``)
        self._previous: Project | None = None  # the project last invalidated (``share_resolution``)
        self.follow_envs: list[Any] = []  # the environments the project's libraries were followed in
        # the stat identity of the files the last cross-file findings read on disk (None: none to reuse)
        self._cross_read: dict[str, tuple[int, ...]] | None = None
        # open buffers whose lines moved since the project was built (``set_open``): path -> (the
        # line checksums of the text whose positions the project holds, its facts there, the map
        # of those lines to the buffer's)
        self._moved: dict[str, tuple[bytes, FileFacts, dict[int, int]]] = {}
        # seconds the last ``Project.build`` took (what carrying a line-moving edit is weighed
        # against, ``_carry_pays``) and each open buffer's last move of its facts (``_moved_back``)
        self._build_s: float | None = None
        self._move_s: dict[str, tuple[float, int]] = {}  # path -> (seconds, edits rebuilt since)
        # a moved file's last re-walk (``_rewalk_back``): path -> (the facts swapped in, at the
        # project's lines; the same walk at the buffer's lines, which its diagnostics read)
        self._walked: dict[str, tuple[FileFacts, FileFacts]] = {}
        # the last ``LEFT_KEPT`` projects edits that changed a buffer's interface left (``_change``),
        # newest last: an edit back to the interface one was built with (an undo, a toggle) takes
        # it back instead of a rebuild
        self._left: list[_Left] = []

    # -- configuration
    def settings_for(self, path: str) -> Settings:
        try:
            return self.resolver.for_file(path)
        except ConfigError as exc:
            self._broken(exc)
            return self.resolver.for_file(path)

    def root_settings(self) -> Settings:
        try:
            return self.resolver.for_dir(self.path)
        except ConfigError as exc:
            self._broken(exc)
            return self.resolver.for_dir(self.path)

    def _broken(self, exc: ConfigError) -> None:
        """A configuration file is invalid: say so (once), and lint with the editor settings
        alone until it is fixed (a change to it makes new resolvers)."""
        self.on_config_error(exc)
        self.resolver = EditorResolver(replace(self.resolver.editor, preference="editorOnly"))
        self.invalidate()

    # -- the index
    def discover(self) -> None:
        """Queue the root's files for indexing (once)."""
        if self.discovered:
            return
        self.discovered = True
        if not self.index:
            return
        try:
            self.root_settings()  # a broken configuration switches the resolver first
            found = self._list()
        except ConfigError as exc:
            self._broken(exc)
            found = self._list()
        except OSError as exc:
            log.warning("cannot list %s: %s", self.path, exc)
            found = []
        self.pending.extend(p for p in found if p not in self.disk)
        if self.pending:
            log.info("indexing %d files of %s in the background", len(self.pending), self.path)
            self._indexing = (time.monotonic(), len(self.pending))

    def _list(self) -> list[str]:
        """The root's files, at most ``MAX_INDEXED_FILES`` and ``DISCOVERY_BUDGET`` seconds of
        listing (the walk stops there, and the log says so)."""
        found: list[str] = []
        budget = _Budgeted(self.resolver, time.monotonic() + DISCOVERY_BUDGET)
        try:
            for d in discover([self.path], cast(ConfigResolver, budget), True):
                found.append(os.path.abspath(d.path))
                if len(found) >= MAX_INDEXED_FILES:
                    log.warning(
                        "%s holds more than %d files: indexing the first %d only",
                        self.path,
                        MAX_INDEXED_FILES,
                        MAX_INDEXED_FILES,
                    )
                    break
                budget.check()
        except _OverBudget:
            log.warning(
                "listing %s took over %.0f s: indexing the %d files found by then only (open a smaller folder, or "
                "exclude large folders with extend-exclude)", self.path, DISCOVERY_BUDGET, len(found),
            )  # fmt: skip
        return found

    def cache(self) -> Any:
        """The CLI's facts cache, only where the project already has one (we never create it)."""
        if not self._cache_checked:
            self._cache_checked = True
            try:
                from tclint.rules.cache import Cache

                directory = os.path.join(self.path, self.root_settings().cache_dir)
                if os.path.isdir(directory):
                    cache = Cache(directory)
                    if cache.refused:
                        log.warning("cache not used: %s", cache.refused)
                    else:
                        self._cache = cache
            except Exception as exc:  # a broken cache must not stop linting
                log.warning("cache unavailable: %s", exc)
        return self._cache

    def analyze_disk(self, path: str) -> bool:
        """(Re)read one file from disk; True when its facts changed."""
        settings = self.settings_for(path)
        src = read_source(path, None, settings.max_file_size)
        old = self.disk.get(path)
        if src.text is None and not os.path.exists(path):
            if old is not None:
                del self.disk[path]
                self.invalidate()
                return True
            return False
        if old is not None and old[0] == src.digest and src.digest:
            return False
        module, is_package, import_root = module_for(path)
        facts = None
        cache = self.cache()
        key = None
        if cache is not None and src.digest:
            key = cache.facts_key(
                src.digest, module, is_package, import_root, settings.compiling_predicates, path
            )
            facts = cache.get_facts(key)
            if facts is not None:
                facts.path = path
        if facts is None:
            facts = analyze_source(src, module, is_package, import_root, settings.compiling_predicates)
            if key is not None:
                cache.put_facts(key, facts)
        self.disk[path] = (src.digest, facts)
        if path not in self.open:
            self.invalidate()
        return True

    def index_step(self, budget: float) -> bool:
        """Index queued files for about ``budget`` seconds; True while files remain."""
        deadline = time.monotonic() + budget
        while self.pending and time.monotonic() < deadline:
            path = self.pending.popleft()
            try:
                self.analyze_disk(path)
            except Exception:  # one unreadable file must not stop the index
                log.exception("indexing %s failed", path)
        if not self.pending and self._indexing is not None:
            started, files = self._indexing
            self._indexing = None
            log.info("indexed %d files of %s in %.1f s", files, self.path, time.monotonic() - started)
        if not self.pending and self._cache is not None:
            try:
                self._cache.flush()
            except Exception:
                pass
        return bool(self.pending)

    def forget(self, path: str) -> None:
        if self.disk.pop(path, None) is not None:
            self.invalidate()

    # -- the project
    def invalidate(self) -> None:
        if self._project is not None:
            self._previous = self._project  # its name resolutions may serve the next one
        self._project = None
        self._swaps.clear()
        self._moved.clear()
        self._walked.clear()
        self._left = []  # (``_change`` keeps the project it leaves: a change from elsewhere keeps none)

    def set_open(self, path: str, facts: FileFacts, text: str | None = None) -> None:
        """New facts of an open buffer (of ``text``).  With the interface of those the project was
        built with (``project_delta``: only candidates differ), the project is kept and the facts
        swapped in when it is next asked for; when they have it once moved back to the lines the
        project's text had (an edit that moved lines: ``_moved_back``), the moved-back facts are
        swapped in; otherwise the project is built again."""
        previous = self._swaps.get(path) or self.current_facts(path)
        old_text = self.open_text(path) if path in self.open else None  # the text of ``previous``
        self.open[path] = facts
        if self._project is None or previous is None:
            self._change(path, previous)
        elif path not in self._moved and interface_equal(previous, facts):
            self._swaps[path] = facts
        elif path not in self._moved and self._adds_unreached(path, previous, facts, text):
            self._swaps[path] = facts  # the project a pass builds holds them where nothing reaches
        else:
            back = self._moved_back(path, previous, old_text, facts, text)
            if back is None:
                self._change(path, previous)
            else:
                self._swaps[path] = back

    def _adds_unreached(self, path: str, previous: FileFacts, facts: FileFacts, text: str | None) -> bool:
        """Does the edit only add module-level functions nothing reaches (``project_delta``:
        ``added_functions``) whose names no other file of the root holds (``named_elsewhere``:
        the open buffers' texts, the others' on disk)?  The project is then kept, the new facts
        swapped in (``_swapped``).  Not while following installed packages."""
        project = self._project
        if project is None or LIBRARY_MEMO in project.memo:
            return False
        added = added_functions(previous, facts, project.settings)
        if added is None:
            return False
        others = [p for p in {*self.disk, *self.open} if p != path]
        return not named_elsewhere(facts, text, added, [partial(self._text_of, p) for p in others])

    def _text_of(self, path: str) -> str | bytes | None:
        """An open buffer's text, else the bytes of the file on disk (None: unreadable)."""
        if path in self.open:
            return self.open_text(path)
        try:
            with open(path, "rb") as fh:
                return fh.read()
        except OSError:
            return None

    def _change(self, path: str, previous: FileFacts | None) -> None:
        """An edit of ``path`` changed what the project holds of it (``set_open``; ``previous``:
        the facts it had): the project is left, remembered with the inputs it was built on
        (``_Left``), and a project left before is taken back when every file now has the
        interface of that one's inputs (an undo or a toggle of an edit that changed an
        interface: the buffers' facts are swapped in, as when an edit keeps the interface);
        otherwise the project is built again when next asked for."""
        kept = self._left
        leaving = self._leaving(path, previous)
        self.invalidate()
        back = next((left for left in reversed(kept) if left.holds(self)), None)
        self._left = [left for left in kept if left is not back] + ([leaving] if leaving else [])
        del self._left[:-LEFT_KEPT]
        if back is None:
            return
        self._project, self._cross, self._cross_read = back.project, back.cross, back.cross_read
        self._previous = None
        self._swaps.update((p, ff) for p, ff in self.open.items() if back.project.files.get(p) is not ff)
        self.generation += 1

    def _leaving(self, path: str, previous: FileFacts | None) -> _Left | None:
        """The built project with the facts whose interface it holds of every file (``path``'s:
        ``previous``, or the facts its moved lines were carried back to), None when there is
        none to keep (not built; following installed packages, whose side it also holds)."""
        project = self._project
        if project is None or previous is None or LIBRARY_MEMO in project.memo or self._cross_read is None:
            return None
        held = {p: ff for p, (_d, ff) in self.disk.items() if p not in self.open}
        for p, ff in self.open.items():
            moved = self._moved.get(p)
            if moved is not None:
                held[p] = moved[1]
            else:
                held[p] = previous if p == path else self._swaps.get(p) or ff
        return _Left(project, self._cross, self._cross_read, held, self.root_settings())

    def _moved_back(
        self, path: str, previous: FileFacts, old_text: str | None, facts: FileFacts, text: str | None
    ) -> FileFacts | None:
        """``facts`` (of ``text``) with their positions carried back to the lines of the text the
        project's facts of ``path`` are of (``rules.relocate``), when they then have those facts'
        interface: the edit moved lines only (as ``rerun`` does on the command line).  None when
        not (or when that cannot be told).  The project keeps its positions; the diagnostics of
        ``path`` and of the files naming it are moved to the buffer's lines (``_moved_diagnostics``)."""
        from tclint.rules.relocate import Unmapped, line_hashes, line_map, move

        if path in self._moved:
            hashes, base, _lines = self._moved[path]
        elif old_text is None or text is None or previous.error is not None or previous.dynamo_config:
            return None  # (dynamo configuration positions are read across files as they are)
        elif not os.path.basename(path).isascii():
            return None  # a name ``rerun._mentions`` cannot find in other files' contexts
        else:
            hashes, base = line_hashes(old_text), previous
        if text is None or facts.error is not None:
            return None
        if not self._carry_pays(path, count=True):
            return None  # as the last move of this file measured: a rebuild is cheaper
        lines = line_map(hashes, text)
        started = time.perf_counter()
        try:
            moved = move(facts, {}, {new: old for old, new in lines.items()})
        except Unmapped:
            return None  # facts on a line the project's text did not have
        self._move_s[path] = (time.perf_counter() - started, 0)
        if not self._carry_pays(path) or not interface_equal(base, moved):
            return None
        same = len(lines) == len(hashes) // 4 == len(line_hashes(text)) // 4
        if same and all(k == v for k, v in lines.items()):
            self._moved.pop(path, None)  # every line back where it was
            return facts
        self._moved[path] = (hashes, base, lines)
        return moved

    def _carry_pays(self, path: str, count: bool = False) -> bool:
        """Whether carrying a line-moving edit of ``path`` (``CARRIED_MOVES`` moves of its facts,
        as long as its last one took) costs less than building the project again (as long as
        its last ``Project.build`` took): a file that is most of a small project is rebuilt, one
        of a large project carried.  Unmeasured: carried.  ``count``: an edit decided on an old
        measure (``REMEASURE_MOVES`` such rebuilds, then the move is timed again)."""
        last = self._move_s.get(path)
        if last is None or self._build_s is None:
            return True
        seconds, rebuilt = last
        if CARRIED_MOVES * seconds < self._build_s:
            return True
        if count:
            if rebuilt + 1 >= REMEASURE_MOVES:
                del self._move_s[path]  # the next line-moving edit measures again
            else:
                self._move_s[path] = (seconds, rebuilt + 1)
        return False

    def _swapped(self) -> bool:
        """The pending swaps applied to the last project (``project_delta``); False when that
        cannot be done exactly (the project must be built again)."""
        project = self._project
        if project is None:
            return False
        # following installed packages, the library side (loaded files, their regions and
        # refined facts) depends on the project's files through their interface only, which a
        # swap keeps: what marks the library files stays (TC312 is derived again below)
        kept = {k: project.memo[k] for k in (LIBRARY_MEMO, CACHED_MEMO) if k in project.memo}
        before = self._exports(project, list(self._swaps))
        derived = {k: project.memo[k] for k in CROSS_MEMO if k in project.memo}
        for path, facts in self._swaps.items():
            if path in kept.get(LIBRARY_MEMO, {}):
                return False  # an installed file open in the editor: built again
            held = project.files.get(path)
            added = (
                frozenset(facts.functions) - frozenset(held.functions) if held is not None else frozenset()
            )
            replayed = replay_rewalks(project, path, self._rewalk_back(path), added)
            if replayed is False:
                return False
            swap_file(project, facts if replayed is None else replayed)
            project.memo.update(kept)
        swapped = list(self._swaps)
        self._swaps.clear()
        # what the cross-file rules read of a file's candidates is its exports (``rerun``): when
        # no swapped file's changed and nothing they read on disk did, they say what they said
        if before is None or self._cross_read is None or before != self._exports(project, swapped):
            self._cross = self._cross_diagnostics(project)
        elif not _stamps_hold(self._cross_read):
            self._cross = self._cross_diagnostics(project)
        else:
            project.memo.update(derived)  # as unchanged as the findings: the hover's variants
        self.generation += 1
        return True

    def _rewalk_back(self, path: str) -> Callable[[FileFacts, Any, Any], FileFacts | None]:
        """The re-walk of ``path`` (``_reanalyze``, on the buffer's text), its result moved back to
        the lines the project holds when the buffer's lines moved (None: it cannot be)."""
        moved = self._moved.get(path)
        if moved is None:
            return self._reanalyze
        back = {new: old for old, new in moved[2].items()}

        def walk(ff: FileFacts, seeds: Any, returns_of: Any) -> FileFacts | None:
            from tclint.rules.relocate import Unmapped, move

            got = self._reanalyze(ff, seeds, returns_of)
            if got is None:
                return None
            try:
                moved = cast(FileFacts, move(got, {}, back))
            except Unmapped:
                return None
            self._walked[path] = (moved, got)  # its diagnostics read ``got``, not moved forward again
            return moved

        return walk

    def _exports(self, project: Project, paths: list[str]) -> dict[str, str] | None:
        """``rerun.export_digest`` of each file's facts in ``project`` (None: not computable)."""
        from tclint.rules.rerun import export_digest

        try:
            return {
                path: export_digest(project.files[path], project, self.settings_for(path))  # type: ignore[arg-type]
                for path in paths
                if path in project.files
            }
        except Exception:
            log.exception("computing the exports of %s failed", paths)
            return None

    def _cross_diagnostics(self, project: Project) -> dict[str, list[Diagnostic]]:
        """The cross-file rules' findings (``project_diagnostics``), with the stat identity of the
        files they read on disk (TC312's configuration judgement: ``_disk_reads``)."""
        self._cross_read = None
        try:
            cross = project_diagnostics(project)
        except Exception:  # a cross-file rule failed: keep the per-file findings
            log.exception("cross-file rules failed")
            return {}
        self._cross_read = _disk_reads(project)
        return cross

    def facts(self) -> list[FileFacts]:
        out = [facts for path, (_d, facts) in self.disk.items() if path not in self.open]
        out.extend(self.open.values())
        return out

    def project(self) -> tuple[Project, dict[str, list[Diagnostic]]]:
        if self._swaps and not self._swapped():
            self.invalidate()
        if self._project is None:
            project = Project(self.facts(), self.root_settings())
            if self._previous is not None:
                share_resolution(self._previous, project)
                self._previous = None
            started = time.perf_counter()
            project.build()
            self._build_s = time.perf_counter() - started
            try:
                if project.settings.follow_libraries:  # into installed packages (tclint.rules.libfollow)
                    from tclint.rules import libfollow

                    # the environments kept: what following read in them is the warm-open
                    # record's dependencies (``warmopen``)
                    python = (project.settings.probe or {}).get("python")
                    envs = [libfollow.Environment.for_python(python) for _ in range(2)]
                    self.follow_envs = envs
                    project, lib_sources, libraries = libfollow.follow(
                        None, project, self.facts(), project.settings, envs[0], cached=True
                    )
                    project = libfollow.refine_with(
                        project, lib_sources, self._reanalyze, cached=True, env=envs[1]
                    )
                    libfollow.mark(project, libraries)
                else:
                    project = refine(project, self._reanalyze)
            except Exception:  # the project without helper argument types is still right, only less
                log.exception("argument type flow failed")
            cross = self._cross_diagnostics(project)
            self._project, self._cross = project, cross
            self.generation += 1
        return self._project, self._cross

    def _reanalyze(self, ff: FileFacts, seeds: Any, returns_of: Any) -> FileFacts | None:
        """A file walked again with what the project pass learnt (``tclint.rules.argflow``): the
        open buffer's text, else the file on disk.  A walk with the inputs of an earlier one (the
        same text, seeds and answers: every file but the edited one, after an edit) is reused
        (``tclint.rules.rewalks``)."""
        settings = self.settings_for(ff.path)
        predicates = settings.compiling_predicates
        text = self.open_text(ff.path) if ff.path in self.open else None
        if text is not None:
            src = SourceText(ff.path, text)
            digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        else:
            on_disk = self.disk.get(ff.path)
            digest = on_disk[0] if on_disk is not None else ""
            src = None
        # the command line's key where the project has its cache: the re-walks it stored there
        # are read (a first pass over a large project walks few files again), never written
        cache = self.cache()
        key = None
        if digest and cache is not None:
            key = cache.facts_key(digest, ff.module, ff.is_package, ff.root, predicates, ff.path)
        elif digest:
            key = f"{digest}|{ff.module}|{ff.is_package}|{ff.root}|{sorted(predicates)}"

        def walk(asked: Any) -> FileFacts | None:
            if text is not None:  # an open buffer: the statements the edits left alone are reused
                return self._rewalker(ff, seeds, predicates).analyze(text, returns_of=asked).facts
            # a file on disk is read when it is walked (its facts in the root are of ``digest``:
            # a change on disk is indexed again, under a new digest, when the watcher reports it)
            current = src if src is not None else read_source(ff.path, None, settings.max_file_size)
            if current.text is None:
                return None
            return analyze_source(current, ff.module, ff.is_package, ff.root, predicates, seeds, asked)

        if self.rewalks is None:
            self.rewalks = Rewalks(cache, store=False)
        if text is None:
            return self.rewalks.walk(key, ff.path, seeds, returns_of, walk)
        told: dict[str, Any] = {}  # every answer asked for, by the reuse check or the walk

        def answering(ref: str) -> Any:
            found = told[ref] = returns_of(ref)
            return found

        before = self.rewalks.walks
        facts = self.rewalks.walk(key, ff.path, seeds, answering, walk)
        if facts is not None and self.rewalks.walks == before:
            # a walk kept from an earlier edit (an undo): the buffer's next re-walk is diffed
            # against this text, not against the one its analyzer last walked
            self._rewalker(ff, seeds, predicates).adopt(text, facts, told, self.open_snapshot(ff.path))
        return facts

    def _rewalker(self, ff: FileFacts, seeds: Any, predicates: Any) -> IncrementalAnalyzer:
        """The incremental analyzer of an open buffer's re-walks with ``seeds`` (the last few
        seeds per path are kept: the refinement's rounds alternate between few)."""
        key = f"{ff.module}|{ff.is_package}|{ff.root}|{sorted(predicates)}|{seeds!r}"
        per = self.rewalkers.setdefault(ff.path, {})
        analyzer = per.pop(key, None)
        if analyzer is None:
            analyzer = IncrementalAnalyzer(
                ff.path, ff.module, ff.is_package, ff.root, predicates, seeds=seeds, rewalk=True
            )
        per[key] = analyzer  # the newest last
        while len(per) > REWALKERS_PER_FILE:
            del per[next(iter(per))]
        return analyzer

    def current_facts(self, path: str) -> FileFacts | None:
        if path in self.open:
            return self.open[path]
        found = self.disk.get(path)
        return found[1] if found else None

    def diagnostics(
        self, path: str, src: SourceText, facts: FileFacts | None = None, snapshot: Snapshot | None = None
    ) -> tuple[list[Diagnostic], Settings]:
        settings = self.settings_for(path)
        facts = facts or self.current_facts(path)
        if facts is None:
            return [], settings
        project, cross = self.project()
        if self._moved:
            found = self._moved_diagnostics(path, src, facts, project, cross, settings, snapshot)
            if found is not None:
                return found, settings
            project, cross = self.project()  # (built again when positions could not be moved)
        if path in project.memo.get(REWALKED, ()):
            facts = project.files.get(path, facts)  # walked again with its helpers' argument types
        if snapshot is not None and snapshot.text == src.text:
            fixcheck.register(snapshot.text, snapshot.lines, [(c.start, c.end) for c in snapshot.chunks])
        try:
            return diagnose_file(facts, project, cross, settings, src), settings
        finally:
            fixcheck.clear()

    def entries(self, path: str, facts: FileFacts) -> list[Any]:
        """The code-lens and hover entries of ``path`` (``entries.compute``) at its buffer's
        lines: while buffers' lines have moved since the project was built (``set_open``), the
        project is read through ``_MovedView``; when a position cannot be moved it is built again."""
        from tclint.server import entries as entries_mod

        project, _cross = self.project()
        if self._moved:
            from tclint.rules.relocate import Unmapped
            from tclint.rules.variants import variants

            try:
                variants(project)  # memoised on the project as it is (its summaries hold no line)
                view = _MovedView(project, {p: lines for p, (_h, _b, lines) in self._moved.items()})
                return entries_mod.compute(path, facts, cast(Project, view))
            except Unmapped as why:
                log.info("entries of moved lines not carried (%s): the project is built again", why)
                self.invalidate()
                project, _cross = self.project()
        return entries_mod.compute(path, facts, project)

    def _moved_diagnostics(
        self,
        path: str,
        src: SourceText,
        facts: FileFacts,
        project: Project,
        cross: dict[str, list[Diagnostic]],
        settings: Settings,
        snapshot: Snapshot | None,
    ) -> list[Diagnostic] | None:
        """The diagnostics of ``path`` while open buffers' lines have moved since the project was
        built (``set_open``: the project keeps their old positions), when they are of such a
        buffer or name one: derived as a command-line re-run derives them (``rerun``), from the
        file's context in the project (regions, answers, modes, dropped frames, cross-file
        findings) with the moved files' positions carried to their buffers' lines
        (``rerun._shift``).  None for any other file (the project says it as it is), and when a
        position cannot be carried or the context lacks what the diagnostics ask: the project is
        then dropped, to be built again."""
        from tclint.rules import rerun
        from tclint.rules.plaindata import decode_any
        from tclint.rules.relocate import Unmapped, move

        held = project.files.get(path)
        if held is None:
            return None
        maps = {p: lines for p, (_h, _b, lines) in self._moved.items()}
        try:
            ctx = rerun.file_context(project, held, settings, cross.get(path, []))
            if path not in maps and not {rerun._base(p) for p in maps}.intersection(rerun._mentions(ctx)):
                return None
            ctx = rerun._shift(ctx, path, maps)
            view = rerun._ProjectView(path, ctx, project.dynamo_config)
            if path in project.memo.get(REWALKED, ()):
                walked = self._walked.get(path)
                if walked is not None and walked[0] is held:  # the re-walk swapped in, at the buffer's lines
                    facts = walked[1]
                else:
                    facts = move(held, {}, maps[path]) if path in maps else held
            if snapshot is not None and snapshot.text == src.text:
                fixcheck.register(snapshot.text, snapshot.lines, [(c.start, c.end) for c in snapshot.chunks])
            return diagnose_file(facts, view, {path: decode_any(ctx["cross"])}, settings, src)  # type: ignore[arg-type]
        except (Unmapped, rerun.ContextMiss) as why:
            log.info("positions of moved lines not carried (%s): the project is built again", why)
            self.invalidate()
            return None
        finally:
            fixcheck.clear()


@dataclass
class _Left:
    """A built project an interface-changing edit left (``Root._change``): its cross-file findings
    and the stat identity of what they read on disk, the facts whose interface it holds of every
    file (``held``: the disk files' own, the open buffers' as last swapped in) and the root's
    settings it was built with."""

    project: Project
    cross: dict[str, list[Diagnostic]]
    cross_read: dict[str, tuple[int, ...]]
    held: dict[str, FileFacts]
    settings: Settings

    def holds(self, root: Root) -> bool:
        """Whether ``root``'s files are those ``project`` was built on, up to the open buffers'
        candidates: the same facts of every file on disk, facts of the same interface
        (``interface_equal``) of every open buffer, the same settings, and nothing the cross-file
        findings read on disk changed.  The project is then the one a pass over them builds (the
        buffers' facts swapped in: ``project_delta``)."""
        settings = root.root_settings()
        if settings is not self.settings and settings != self.settings:
            return False
        files = 0
        for path, (_digest, ff) in root.disk.items():
            if path not in root.open:
                if self.held.get(path) is not ff:
                    return False
                files += 1
        for path, ff in root.open.items():
            was = self.held.get(path)
            if was is None or not interface_equal(was, ff):
                return False
            files += 1
        return files == len(self.held) and _stamps_hold(self.cross_read)


class _MovedView:
    """A project kept across line-moving edits (``Root.set_open``: it holds the lines of the texts
    it was built on) as the code lenses and hovers read it (``entries.compute``): the functions of
    the moved files at their buffers' lines, chain texts with their positions moved
    (``relocate.move``: ``Unmapped`` when one cannot be); everything else as the project has it."""

    def __init__(self, project: Project, maps: dict[str, dict[int, int]]) -> None:
        self._project = project
        self._maps = maps
        self.functions = _MovedFunctions(project.functions, maps)

    def chain_text(self, region: Any) -> str:
        from tclint.rules.relocate import move

        return cast(str, move(self._project.chain_text(region), self._maps))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._project, name)


class _MovedFunctions:
    """``Project.functions`` read with the functions of moved files at their new lines."""

    def __init__(self, functions: dict[str, Any], maps: dict[str, dict[int, int]]) -> None:
        self._functions = functions
        self._maps = maps

    def __getitem__(self, key: str) -> Any:
        from tclint.rules.relocate import move

        ff, fn = self._functions[key]
        lines = self._maps.get(key.split("::", 1)[0])
        return (ff, fn) if lines is None else (ff, move(fn, {}, lines))

    def __contains__(self, key: object) -> bool:
        return key in self._functions


def _disk_reads(project: Project) -> dict[str, tuple[int, ...]]:
    """The files cross-file rules read on disk rather than from the facts, with their stat
    identity: TC312's configuration judgement parses files (``libconfig.parse``, every file this
    process parsed) and uses verdicts that list the files they read (the environment's record)."""
    import sys

    from tclint.rules.libfollow import LIBCONFIG_ENV, _stat_stamp

    out: dict[str, tuple[int, ...]] = {}
    libconfig = sys.modules.get("tclint.rules.libconfig")
    for path in list(getattr(libconfig, "_TREES", {})):
        out[path] = _stat_stamp(path)
    env = project.memo.get(LIBCONFIG_ENV)
    for path, stamp in getattr(env, "reads", {}).items():
        out.setdefault(path, tuple(stamp))
    return out


def _stamps_hold(stamps: dict[str, tuple[int, ...]]) -> bool:
    from tclint.rules.libfollow import _stat_stamp

    return all(_stat_stamp(path) == stamp for path, stamp in stamps.items())


class _OverBudget(Exception):
    """Listing a root took longer than ``DISCOVERY_BUDGET``."""


class _Budgeted:
    """A root's resolver, for one listing: discovery asks it for every folder's settings, and
    past the deadline it stops the walk (``_OverBudget``) -- also inside a tree with no source
    files, where nothing is yielded to check the clock between."""

    def __init__(self, resolver: EditorResolver, deadline: float) -> None:
        self._resolver = resolver
        self._deadline = deadline

    def check(self) -> None:
        if time.monotonic() > self._deadline:
            raise _OverBudget

    def for_dir(self, directory: str) -> Settings:
        self.check()
        return self._resolver.for_dir(directory)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._resolver, name)


def unindexable(path: str) -> str | None:
    """Why the folder ``path`` must not be indexed as one project (the root of the file system,
    the user's home folder or a folder above it: the whole disk, or everything the user has), or
    None.  Only its open files are linted then."""
    path = os.path.normpath(os.path.abspath(path))
    if os.path.dirname(path) == path:
        return "it is the root of the file system"
    home = os.path.expanduser("~")
    if home == "~" or not os.path.isabs(home):
        return None
    home = os.path.normpath(home)
    if path == home:
        return "it is your home folder"
    if home.startswith(path.rstrip(os.sep) + os.sep):
        return "it holds your home folder"
    return None


def buffer_too_large(text: str, max_size: int | None) -> str | None:
    """The CLI's TC011 message when ``text`` is over ``max_size`` bytes as UTF-8, else None.

    The size is measured without encoding the text when its length settles it (ASCII text, or
    more characters than the limit, or too few to reach it even at four bytes each)."""
    if max_size is None:
        return None
    n = len(text)
    if text.isascii():
        size = n
    elif n > max_size:
        size = len(text.encode("utf-8", "surrogatepass"))
    elif 4 * n <= max_size:
        return None
    else:
        size = len(text.encode("utf-8", "surrogatepass"))
    if size <= max_size:
        return None
    # the wording of ``rules.reading``'s message for files (tests/server/test_limits.py compares)
    return f"file is too large to lint ({size:,} bytes; max-file-size is {max_size:,})"


class Workspace:
    """All roots and open documents (lint thread only)."""

    def __init__(self, on_config_error: Callable[[ConfigError], None] | None = None) -> None:
        self.folders: list[str] = []
        self.editor: dict[str, EditorSettings] = {}  # folder ("" = global) -> settings
        self.roots: dict[str, Root] = {}
        self.docs: dict[str, DocState] = {}  # path -> state
        self.on_config_error = on_config_error or (lambda exc: log.warning("%s", exc))

    # -- folders and settings
    def set_folders(self, folders: list[str]) -> None:
        self.folders = sorted({os.path.normpath(f) for f in folders}, key=len, reverse=True)

    def folder_of(self, path: str) -> str | None:
        for folder in self.folders:
            if path == folder or path.startswith(folder.rstrip(os.sep) + os.sep):
                return folder
        return None

    def editor_for(self, path: str) -> EditorSettings:
        folder = self.folder_of(path)
        if folder is not None and folder in self.editor:
            return self.editor[folder]
        return self.editor.get("", EditorSettings())

    def set_editor(self, settings: dict[str, EditorSettings]) -> bool:
        """New editor settings: rebuild every resolver (they cache configuration) and re-read
        everything; False, changing nothing, when they are the settings in force (the client's
        answer to ``workspace/configuration`` repeating its initialization options: after a warm
        open that reset re-indexed the whole project for nothing)."""
        settings = dict(settings)
        if settings == self.editor:
            return False
        self.editor = settings
        self.reset_configuration()
        return True

    def reset_configuration(self) -> None:
        """Configuration files or settings changed: new resolvers, re-read everything."""
        for root in self.roots.values():
            root.resolver = EditorResolver(self.editor_for(root.path))
            root._cache_checked = False
            root._cache = None
            root.rewalks = None
            root.rewalkers.clear()
            root.disk.clear()
            root.discovered = False
            root.pending.clear()
            root._indexing = None
            root.invalidate()
        for doc in self.docs.values():
            root = doc.root
            module, is_package, import_root = module_for(doc.path)
            doc.analyzer = IncrementalAnalyzer(
                doc.path, module, is_package, import_root, root.settings_for(doc.path).compiling_predicates
            )

    def root_for(self, path: str) -> Root:
        found = None
        try:
            found = project_root([path])
        except (OSError, ValueError):
            found = None
        index = True
        if found is None:
            found = self.folder_of(path)
        if found is None:
            found = os.path.dirname(path)
            index = False
        found = os.path.normpath(found)
        root = self.roots.get(found)
        if root is None:
            reason = unindexable(found) if index else None
            if reason is not None:
                index = False
                log.warning(
                    "not indexing %s (%s): only its open files are linted; open a project folder (one with a "
                    "pyproject.toml, tclint.toml or .git) for cross-file checks", found, reason,
                )  # fmt: skip
            root = self.roots[found] = Root(
                found, EditorResolver(self.editor_for(found)), index, self.on_config_error
            )
            root.open_text = self._open_text
            root.open_snapshot = self._open_snapshot
        return root

    # -- background indexing
    def index_pending(self) -> bool:
        return any(r.pending or not r.discovered for r in self.roots.values())

    def index_step(self, budget: float) -> list[Root]:
        """Index some queued files; the roots whose project changed."""
        changed = []
        deadline = time.monotonic() + budget
        for root in list(self.roots.values()):
            if not root.discovered:
                root.discover()
            if root.pending:
                before = root._project
                root.index_step(max(0.0, deadline - time.monotonic()))
                if root._project is not before and not root.pending:
                    changed.append(root)
            if time.monotonic() >= deadline:
                break
        return changed

    # -- documents
    def open_doc(self, path: str) -> DocState:
        state = self.docs.get(path)
        if state is None:
            root = self.root_for(path)
            module, is_package, import_root = module_for(path)
            analyzer = IncrementalAnalyzer(  # copy: the kept project holds its facts (``Root.set_open``)
                path, module, is_package, import_root, root.settings_for(path).compiling_predicates, copy=True
            )
            state = self.docs[path] = DocState(path, analyzer, root)
        return state

    def _open_text(self, path: str) -> str | None:
        """The text of an open buffer that the root's facts of it come from: its last text that
        parsed (a buffer that does not parse now keeps those facts in the project)."""
        state = self.docs.get(path)
        if state is None:
            return None
        # before its first lint (just opened) a buffer has no last good text yet: its text is it
        return state.last_good_text if state.last_good_text is not None else state.text

    def _open_snapshot(self, path: str) -> Snapshot | None:
        """The last analysis of an open buffer (its text, statements and facts), if any."""
        state = self.docs.get(path)
        return None if state is None else state.analyzer.snapshot

    def close_doc(self, path: str) -> str | None:
        """Forget an open document (its file on disk takes over); the root whose project changed."""
        state = self.docs.pop(path, None)
        if state is None:
            return None
        root = state.root
        root.rewalkers.pop(path, None)
        if root.open.pop(path, None) is None:
            return None
        root.invalidate()
        if root.index and os.path.isfile(path):
            try:
                root.analyze_disk(path)  # back to the text on disk
            except Exception:
                log.exception("re-reading %s failed", path)
        return root.path

    def lint(self, path: str, text: str, version: int = 0, full: bool = False) -> LintOutput:
        """Analyse an open document's text and compute its diagnostics."""
        started = time.perf_counter()
        state = self.open_doc(path)
        root = state.root
        if not root.discovered or (state.version == -1 and root.pending):
            # a small project is indexed before its first document is linted, so the first
            # diagnostics already know the compile sites in other files; a large one goes on
            # in the background (the document is re-evaluated when it is done)
            root.discover()
            root.index_step(FIRST_INDEX_BUDGET)
        settings = root.settings_for(path)
        state.text = text
        state.version = version
        if is_excluded(path, settings):
            root.open.pop(path, None)
            state.diagnostics = []
            return LintOutput(
                path, text, version, [], settings, excluded=True, elapsed=time.perf_counter() - started
            )
        message = buffer_too_large(text, settings.max_file_size)
        if message is not None:
            return self._too_large(state, text, version, settings, message, started)
        if state.too_large:
            state.too_large = False
            log.info("%s is back under max-file-size: linting it again", path)
        outcome = state.analyzer.analyze(text, full=full)
        src = SourceText(path, text)
        if outcome.facts.error is not None:
            # keep the last good facts in the project; show the parse error and the last good
            # findings of the lines the edit did not touch
            state.parse = file_diagnostics(outcome.facts, Project([], settings), settings)
            diags = state.shown(state.last_good)
            state.diagnostics = diags
            return LintOutput(
                path,
                text,
                version,
                diags,
                settings,
                parse_error=True,
                mode=outcome.mode,
                elapsed=time.perf_counter() - started,
            )
        if root.open.get(path) is not outcome.facts:
            root.set_open(path, outcome.facts, text)
        state.last_good_text = text  # before the project is built: its re-walks read this text
        diags, settings = root.diagnostics(path, src, outcome.facts, outcome.snapshot)
        state.last_good = diags
        state.diagnostics = diags
        return LintOutput(
            path, text, version, diags, settings, mode=outcome.mode, elapsed=time.perf_counter() - started
        )

    def warm_lint(
        self, path: str, text: str, version: int
    ) -> tuple[LintOutput, list[Any], list[tuple[int, int, str]], dict[Any, Any]] | None:
        """A document's first lint answered from the record the last session left for the same
        text and inputs (``warmopen``): (its output, code-lens entries, probe targets, the LSP
        ranges of its related locations in library files: ``convert.KnownRanges``), with no
        project built; None when there is none (the full lint answers).  The document's state is
        left as before its first lint: the full lint runs next all the same."""
        from tclint.server import warmopen

        started = time.perf_counter()
        known = self.docs.get(path)
        if known is not None and known.version != -1:
            return None
        state = self.open_doc(path)
        root = state.root
        if not root.discovered or root.pending:
            # a record needs every file indexed: the rule catalog is imported before the budget
            # starts (in a fresh process it is most of the first file's analysis, over the whole
            # budget on a loaded machine, and the open then missed the record)
            from tclint.rules.engine import ruleset

            ruleset()
            root.discover()
            root.index_step(FIRST_INDEX_BUDGET)
        settings = root.settings_for(path)
        if root.pending or is_excluded(path, settings) or buffer_too_large(text, settings.max_file_size):
            return None
        found = warmopen.lookup(self, root, path, text)
        if found is None:
            return None
        diags, entries, targets, ranges, edit = found
        out = LintOutput(
            path, text, version, diags, settings, mode="warm", elapsed=time.perf_counter() - started
        )
        if edit is not None:
            from tclint.server.warmedit import from_record

            out.warm_edit = from_record(edit, path, settings, entries, targets, ranges)
        return out, entries, targets, ranges

    def remember(
        self,
        out: LintOutput,
        entries: list[Any],
        targets: list[tuple[int, int, str]],
        lines_of: Callable[[str], Any] | None = None,
    ) -> None:
        """Leave the warm-open record of a full lint's result (``warmopen.remember``; ``lines_of``:
        a file's line table, for the related locations' ranges in library files)."""
        state = self.docs.get(out.path)
        if state is None or out.mode == "warm" or out.parse_error or out.excluded or out.too_large:
            return
        if state.notebook or state.text != out.text or state.last_good_text != out.text:
            return
        try:
            from tclint.server import warmopen

            warmopen.remember(
                self, state.root, out.path, out.text, out.diagnostics, entries, targets, lines_of
            )
        except Exception:  # a record is an optimisation: never fail the lint for it
            log.exception("writing the warm-open record of %s failed", out.path)

    def _too_large(
        self, state: DocState, text: str, version: int, settings: Settings, message: str, started: float
    ) -> LintOutput:
        """A buffer over ``max-file-size``: what the CLI reports for such a file (one TC011 saying
        so, the file unreadable for the project), nothing analysed.  Nothing derived from the
        text is kept (the analyzer's snapshot and the last good text are dropped); the text itself
        is the editor's own copy, needed to apply the next edit."""
        path, root = state.path, state.root
        src = SourceText(path, None, message)
        module, is_package, import_root = module_for(path)
        facts = analyze_source(src, module, is_package, import_root, settings.compiling_predicates)
        if not state.too_large or path not in root.open:
            log.info("%s: %s -- reporting TC011 only (raise max-file-size to lint it)", path, message)
            root.open[path] = facts  # an unreadable file, as the CLI sees it
            root.invalidate()
        state.too_large = True
        state.analyzer.snapshot = None
        state.last_good_text, state.last_good = None, []
        diags, settings = root.diagnostics(path, src, facts)
        state.diagnostics = diags
        return LintOutput(path, text, version, diags, settings, mode="too-large", too_large=True,
                          elapsed=time.perf_counter() - started)  # fmt: skip

    def lint_notebook(self, path: str, data: bytes, version: int) -> LintOutput:
        """Analyse an open notebook (its JSON, as built from the cells) and compute its diagnostics,
        mapped to (cell, cell-relative position) as the CLI maps them."""
        started = time.perf_counter()
        state = self.open_doc(path)
        state.notebook = True
        root = state.root
        if not root.discovered or (state.version == -1 and root.pending):
            root.discover()
            root.index_step(FIRST_INDEX_BUDGET)
        settings = root.settings_for(path)
        state.version = version
        if is_excluded(path, settings):
            root.open.pop(path, None)
            state.diagnostics = []
            return LintOutput(path, "", version, [], settings, excluded=True)
        src = read_source(path, data, settings.max_file_size)
        module, is_package, import_root = module_for(path)
        facts = analyze_source(src, module, is_package, import_root, settings.compiling_predicates)
        state.text = src.text or ""
        if facts.error is not None:
            diags = file_diagnostics(facts, Project([], settings), settings)
            if src.cells is not None:
                diags = [src.cells.map_diagnostic(d) for d in diags]
        else:
            root.open[path] = facts
            root.invalidate()
            diags, settings = root.diagnostics(path, src, facts)  # mapped to the cells there
        state.diagnostics = diags
        return LintOutput(
            path,
            state.text,
            version,
            diags,
            settings,
            parse_error=facts.error is not None,
            elapsed=time.perf_counter() - started,
        )

    def open_notebooks(self, root_path: str) -> list[str]:
        return [p for p, s in self.docs.items() if s.notebook and s.root.path == root_path]

    def relint_open(self, root: Root, skip: str | None = None) -> list[LintOutput]:
        """Diagnostics of the other open documents of ``root`` (after its project changed)."""
        out = []
        for path, state in self.docs.items():
            if (
                state.root is not root
                or path == skip
                or path not in root.open
                or state.notebook
                or state.too_large
            ):
                continue
            if state.last_good_text is None:
                continue  # no text of it parsed since it was opened or was too large: nothing to redo
            # the root holds the facts of the last text that parsed: compute on that text, show
            # the result moved to the current one (``DocState.shown``)
            fresh, settings = root.diagnostics(
                path, SourceText(path, state.last_good_text), None, state.analyzer.snapshot
            )
            state.last_good = fresh
            diags = state.shown(fresh)
            if diags != state.diagnostics:
                state.diagnostics = diags
                out.append(LintOutput(path, state.text, state.version, diags, settings))
        return out

    def disk_diagnostics(self, path: str) -> LintOutput:
        """Diagnostics of a file that is not open (pull requests, workspace diagnostics)."""
        root = self.root_for(path)
        root.discover()
        settings = root.settings_for(path)
        if path not in root.disk:
            root.analyze_disk(path)
        src = read_source(path, None, settings.max_file_size)
        if src.text is None or is_excluded(path, settings):
            return LintOutput(path, src.text or "", -1, [], settings, excluded=src.text is not None)
        diags, settings = root.diagnostics(path, src)
        return LintOutput(path, src.text, -1, diags, settings)

    def file_changed(self, path: str, deleted: bool = False) -> list[Root]:
        """A file changed on disk (didChangeWatchedFiles / didSave); the roots that changed."""
        changed = []
        for root in self.roots.values():
            if not (path == root.path or path.startswith(root.path.rstrip(os.sep) + os.sep)):
                continue
            if deleted:
                if path in root.disk:
                    root.forget(path)
                    changed.append(root)
                continue
            if path in root.open:
                continue
            if root.index and (path in root.disk or root.discovered):
                if root.analyze_disk(path):
                    changed.append(root)
        return changed


# ---------------------------------------------------------------------------------------------
# keeping findings across an edit that does not parse


def carry_over(diags: list[Diagnostic], old_text: str, new_text: str) -> list[Diagnostic]:
    """``diags`` (computed on ``old_text``) moved to ``new_text``; those on changed lines dropped."""
    old_lines = split_lines(old_text)
    new_lines = split_lines(new_text)
    p, s = diff_lines(old_lines, new_lines)
    first, last = p + 1, len(old_lines) - s
    delta = len(new_lines) - len(old_lines)
    out = []
    for d in diags:
        if d.code in file_error_codes():
            continue
        if d.span.end.line < first:
            out.append(d)
        elif d.span.start.line > last:
            out.append(shift_diagnostic(d, delta, last))
    return out


def shift_diagnostic(d: Diagnostic, delta: int, after: int) -> Diagnostic:
    """``d`` with every position in its own file below line ``after`` moved by ``delta`` lines."""
    if not delta:
        return d

    def pos(p: Position) -> Position:
        return Position(p.line + delta, p.column) if p.line > after else p

    def span(s: Span) -> Span:
        return Span(pos(s.start), pos(s.end))

    def moved(fix: Fix) -> Fix:  # every field of a fix that holds a place: its edits, a codemod's spans
        return replace(
            fix,
            edits=tuple(Edit(span(e.span), e.content) for e in fix.edits),
            codemod=tuple(span(a) if isinstance(a, Span) else a for a in fix.codemod),
        )

    fix = moved(d.fix) if isinstance(d.fix, Fix) else d.fix
    alternatives = tuple(moved(f) for f in d.alternatives)
    related = tuple(
        RelatedLocation(r.path, span(r.span), r.message)
        if os.path.abspath(r.path) == os.path.abspath(d.path)
        else r
        for r in d.related
    )
    noqa = d.noqa_line + delta if d.noqa_line is not None and d.noqa_line > after else d.noqa_line
    return replace(d, span=span(d.span), fix=fix, alternatives=alternatives, related=related, noqa_line=noqa)
