"""A command-line re-run after edits that keep every changed file's interface: only those files are
analysed, and only their diagnostics are derived again, from what the last run stored per file.

The server keeps its last project in memory (``tclint.rules.project_delta``); a ``tclint check``
process starts with nothing, and building the project means loading every file's facts and running
the project pass (seconds on a large tree).  So each run that runs the project pass also stores,
beside the cache:

- a *state* per project (the tool, the working folder, the indexed files, the settings): for every
  indexed file its content digest, the digest of its *interface* (every field of its facts but the
  candidates and the line count: what the project pass, the type refinement and the cross-file
  rules read of a file, ``interface_digest``) and of its *exports* (what other files' results read
  of its candidates, ``export_digest``), and the file names its context holds (``_mentions``);
- a *context* per file: what deriving that file's diagnostics reads of the project -- the regions of
  its functions as the diagnostics show them (``fullgraph``, the multiplier, the loop caller, the
  chain's related locations and text), the answers about the return types and predicates its
  candidates require, the training modes of its regions, the frames its callees' breaks drop, the
  cross-file findings reported in it, the type refinement's walks of it (their seeds and the
  answers they got) -- its last diagnostics and a checksum of each of its lines.

A later run whose whole-run key misses (``Cache.run_key``) looks at which files changed.  When every
changed file's new facts have the interface it had, the project pass would build the same project
(the same regions, resolutions, refinement rounds): only candidates differ.  Candidates are read
across files by three computations, whose inputs from one file are its exports (``export_digest``):
the frames a break drops in a loop caller (``engine.caller_drops``: whether each function called
from a loop breaks at medium confidence), ``fullgraph`` sites that break (TC307: the candidates of
its ``fullgraph`` regions) and the variant analysis (TC201/TC202 candidates in regions).  When those
are unchanged too, every other file's diagnostics are those of the last run, and the changed files'
own are derived from their contexts (``engine.diagnose_file`` over a ``_ProjectView``).  A file the
refinement walked again is walked again with the recorded seeds and answers (``rewalks.Rewalks``
reuses a walk done before), and each walk must give the interface it gave.

A changed interface that only adds module-level functions nothing reaches (``_adds_unreached``:
``project_delta.added_functions`` against the facts the cache holds of the file's last text, and
no other indexed file's text names them) is answered the same way: the project pass would build
the same regions, the new functions in none of them.

Anything else -- a changed interface or export, a context that lacks an answer the new candidates
need (``ContextMiss``), several settings in one tree, following installed libraries -- runs the
full project pass, so the result is always that of a from-scratch run.

An edit that moves lines (adds or removes a line above code) changes the positions in a file's
interface, not what it says.  Each context keeps a checksum of every line of its file
(``relocate.line_hashes``); a changed file whose interface digest differs is mapped line by line
onto its last text (``relocate.line_map``), and when its new facts, walks and exports moved back
through that map digest as the stored ones did, only positions moved: the project pass would build
the same project with that file's positions on their new lines.  Its context and the contexts of
the files whose text names it (the state keeps, per file, the file names its context holds) get
the moved positions (``relocate.move``: region chains and labels, loop-call lines, dropped frames,
cross-file findings), and those files' diagnostics are derived again from them.  A position the
map does not hold, or a line given in a form ``relocate`` does not know, runs the full pass.
Entries are signed plain data, as the cache's (``sealed``, ``plaindata``); reading them runs no
code.
"""

from __future__ import annotations

import dataclasses
import hashlib
import marshal
import os
import re
import shutil
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tclint.rules.config import Settings
    from tclint.rules.facts import FileFacts
    from tclint.rules.model import Diagnostic
    from tclint.rules.project import Project
    from tclint.rules.source import SourceText

STATE_KIND = "rerun-state-2"
FILE_KIND = "rerun-file-2"
FOLDER = "rerun"
KEEP_PROJECTS = 4  # project folders kept per tool fingerprint (one per tree layout a user lints)
INSIDE_UNBOUNDED = ("TC201", "TC202")  # read across files by the variant analysis (variants._state_mutations)


class ContextMiss(BaseException):
    """A re-derivation asked the stored context something it does not hold (a new candidate's
    requirement, the mode of a region no candidate was in): the full pass answers instead.  A
    BaseException, so that the engine's per-rule ``except Exception`` does not report it."""


def _digest(*parts: str) -> str:
    return hashlib.blake2b("\0".join(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def interface_digest(ff: FileFacts) -> str:
    """A digest of everything in a file's facts but its candidates and line count (nothing across
    files reads those but the exports, ``export_digest``).  Equal digests: equal interfaces (the
    plain form is the cache's faithful one; a set is sorted so that equal facts digest alike)."""
    from tclint.rules.facts import FileFacts
    from tclint.rules.plaindata import codec

    bare = dataclasses.replace(ff, candidates=[], line_count=0, fake_registrations=set())
    plain = codec(FileFacts)[0](bare)  # type: ignore[misc]
    data = marshal.dumps((plain, sorted(ff.fake_registrations)), 2)  # version 2: no shared references
    return hashlib.blake2b(data, digest_size=16).hexdigest()


# -- what one file's diagnostics read of the project ---------------------------------------------
def file_context(
    project: Project, ff: FileFacts, settings: Settings, cross: list[Diagnostic]
) -> dict[str, Any]:
    """The plain context of ``ff`` (its refined facts in ``project``) for ``_ProjectView``."""
    from tclint.rules.engine import caller_drops
    from tclint.rules.facts import Need
    from tclint.rules.plaindata import encode_any
    from tclint.rules.training_mode import region_mode

    path = ff.path
    regions: dict[str, Any] = {}
    for qual in ff.functions:
        region = project.regions.get(f"{path}::{qual}")
        if region is None:
            continue
        regions[qual] = (
            region.fullgraph,
            region.multiplier,
            encode_any(region.loop_caller),
            region.loop_key,
            region.site is not None,
            encode_any(project.chain_related(region)),
            project.chain_text(region),
            region.depth,
            region.dispatch_cap,
        )
    answers: dict[str, Any] = {}
    modes: dict[str, Any] = {}
    for cand in ff.candidates:
        for req in cand.requires:
            if req.need is Need.RETURNS_TENSOR:
                answers[f"t|{req.ref}"] = encode_any(project.deferred_type(req.ref, ff))
            elif req.need is Need.NOT_COMPILING_PREDICATE:
                answers[f"p|{req.ref}"] = project.is_compiling_predicate(req.ref, ff)
        if cand.func is not None and cand.func in regions and cand.func not in modes:
            modes[cand.func] = region_mode(project, f"{path}::{cand.func}")
    prefix = path + "::"
    drops = {
        key[len(prefix) :]: line
        for key, line in caller_drops(project, settings).items()
        if key.startswith(prefix)
    }
    walks = [
        (encode_any(seeds), encode_any(answered), interface_digest(result))
        for _before, seeds, answered, result in (project.memo.get("argflow_trace") or {}).get(path, ())
    ]
    return {
        "regions": regions,
        "answers": answers,
        "modes": modes,
        "drops": drops,
        "cross": encode_any(list(cross)),
        "walks": walks,
        "diags": None,
    }


class _RegionView:
    """What a diagnostic reads of a region (``engine.candidate_to_diagnostic``, the rules'
    ``finalize``, ``rule.hot_note``); anything else is a ``ContextMiss``."""

    __slots__ = (
        "fullgraph",
        "multiplier",
        "loop_caller",
        "loop_key",
        "has_site",
        "related",
        "text",
        "depth",
        "dispatch_cap",
    )

    def __init__(self, plain: tuple[Any, ...]) -> None:
        from tclint.rules.plaindata import decode_any

        fullgraph, multiplier, loop_caller, loop_key, has_site, related, text, depth, dispatch_cap = plain
        self.fullgraph: bool = fullgraph
        self.multiplier: str | None = multiplier
        self.loop_caller: tuple[str, str, int] | tuple[str, str, int, str] | None = decode_any(loop_caller)
        self.loop_key: str | None = loop_key
        self.has_site: bool = has_site
        self.related: tuple[Any, ...] = decode_any(related)
        self.text: str = text
        self.depth: int = depth
        self.dispatch_cap: int | None = dispatch_cap

    def __getattr__(self, name: str) -> Any:
        raise ContextMiss(f"region.{name}")


class _ProjectView:
    """The project as one file's diagnostics see it, from its stored context: its regions, the
    answers its candidates' requirements got, its regions' modes and dropped frames (pre-filled
    in ``memo``, where ``engine.caller_drops`` and ``training_mode.region_mode`` keep them) and the
    dynamo configuration.  Anything else is a ``ContextMiss``."""

    def __init__(self, path: str, ctx: dict[str, Any], dynamo_config: dict[str, Any]) -> None:
        self.path = path
        self.regions = {f"{path}::{qual}": _RegionView(plain) for qual, plain in ctx["regions"].items()}
        self._answers = ctx["answers"]
        self.memo: dict[str, Any] = {
            "caller_drops": {f"{path}::{qual}": line for qual, line in ctx["drops"].items()},
            "training_modes": {f"{path}::{qual}": mode for qual, mode in ctx["modes"].items()},
        }
        self.dynamo_config = dynamo_config

    def region_of(self, path: str, func_qual: str | None) -> _RegionView | None:
        if path != self.path:
            raise ContextMiss(f"a region of {path}")
        return None if func_qual is None else self.regions.get(f"{path}::{func_qual}")

    def chain_related(self, region: _RegionView) -> Any:
        return region.related

    def chain_text(self, region: _RegionView) -> str:
        return region.text

    def deferred_type(self, ref: str, near: Any, depth: int = 0) -> Any:
        from tclint.rules.plaindata import decode_any

        found = self._answers.get(f"t|{ref}", _MISSING)
        if found is _MISSING:
            raise ContextMiss(f"the return type of {ref}")
        return decode_any(found)

    def is_compiling_predicate(self, ref: str, near: Any, depth: int = 0) -> bool:
        found = self._answers.get(f"p|{ref}", _MISSING)
        if found is _MISSING:
            raise ContextMiss(f"whether {ref} is a compiling predicate")
        return bool(found)

    def __getattr__(self, name: str) -> Any:
        raise ContextMiss(f"project.{name}")


_MISSING = object()


def export_digest(ff: FileFacts, view: _ProjectView, settings: Settings) -> str:
    """A digest of what other files' results read of ``ff``'s candidates (see the module doc):
    per function called from a loop whether it breaks at medium confidence, the candidates of its
    ``fullgraph`` regions, its TC201/TC202 candidates in regions, and the line where each compiled
    root's own frame drops."""
    from tclint.rules import registry
    from tclint.rules.engine import _breaks_at_medium, first_break, first_frame_drop

    rules = registry.by_code()
    parts: list[Any] = []
    prefix = ff.path + "::"
    for key, region in view.regions.items():
        if not key.startswith(prefix):
            continue  # (a whole project's regions: the language server's, ``Root._swapped``)
        qual = key[len(prefix) :]
        if region.loop_key is not None and region.loop_caller is not None:
            parts.append((qual, _breaks_at_medium(ff, qual, view, settings, rules, region)))  # type: ignore[arg-type]
        if region.depth == 0:  # where a root's own frame drops: read by variants.dropped_roots
            drop = first_frame_drop(ff, qual, view, settings, rules, region)  # type: ignore[arg-type]
            first = first_break(ff, qual, view, settings, rules, region)  # type: ignore[arg-type]
            parts.append((qual, "drop", drop, first))
    for cand in ff.candidates:
        shown = view.regions.get(f"{prefix}{cand.func}") if cand.func is not None else None
        if shown is None:
            continue
        if shown.fullgraph and _has_site(shown):
            parts.append(repr(cand))
        elif cand.code in INSIDE_UNBOUNDED:
            parts.append((cand.func, cand.code, repr(cand.loc), cand.message))
    return _digest(repr(parts))


def _has_site(region: Any) -> bool:
    """Does the region start at a compile site (a stored ``_RegionView`` or a project's ``Region``)?"""
    has = getattr(region, "has_site", None)
    return bool(has) if has is not None else region.site is not None


# -- storage ----------------------------------------------------------------------------------------
def state_key(cache: Any, index: list[str], settings_fingerprint: str) -> str:
    """One state per tool, working folder, set of indexed files (as spelled) and settings."""
    return _digest(cache.fingerprint, os.getcwd(), "\n".join(sorted(index)), settings_fingerprint)


class Store:
    """The states and contexts in ``<cache>/rerun/<tool fingerprint>/``."""

    def __init__(self, cache: Any) -> None:
        self.cache = cache
        self.folder = os.path.join(cache.directory, FOLDER, cache.fingerprint)

    def _key(self) -> bytes | None:
        return getattr(self.cache, "_key", None)

    def state(self, key: str) -> dict[str, Any] | None:
        from tclint.rules import sealed

        value = sealed.read(os.path.join(self.folder, key + ".state"), self._key(), STATE_KIND, key)
        if not (isinstance(value, dict) and isinstance(value.get("files"), dict)):
            return None
        return value

    def context(self, project_id: str, path: str) -> dict[str, Any] | None:
        from tclint.rules import sealed

        name = _digest(project_id, path)
        value = sealed.read(os.path.join(self.folder, project_id, name), self._key(), FILE_KIND, name)
        return value if isinstance(value, dict) and "regions" in value else None

    def write(
        self,
        key: str,
        state: dict[str, Any],
        contexts: Mapping[str, dict[str, Any] | bytes],
        fresh: bool,
    ) -> None:
        """Write ``contexts`` (path -> context, or its ``marshal`` bytes) into the state's project
        folder, then the state, when the cache is flushed (nothing when it writes nothing);
        ``fresh``: a new project, whose folder replaces the oldest beyond ``KEEP_PROJECTS``."""
        if self.cache.refused:
            return
        self.cache.put_writer(lambda key_bytes: self._write(key_bytes, key, state, contexts, fresh))

    def _write(
        self,
        key_bytes: bytes,
        key: str,
        state: dict[str, Any],
        contexts: Mapping[str, dict[str, Any] | bytes],
        fresh: bool,
    ) -> None:
        from tclint.rules import cachedir, sealed

        project_id = state["project"]
        target = os.path.join(self.folder, project_id)
        try:
            cachedir.prepare(self.cache.directory)
            os.makedirs(target, exist_ok=True)
            for path, ctx in contexts.items():
                name = _digest(project_id, path)
                try:
                    if isinstance(ctx, bytes):
                        sealed.write_payload(os.path.join(target, name), key_bytes, FILE_KIND, name, ctx)
                    else:
                        sealed.write(os.path.join(target, name), key_bytes, FILE_KIND, name, ctx)
                except (ValueError, TypeError):  # a value the cache cannot store: no state, full passes
                    return
            sealed.write(os.path.join(self.folder, key + ".state"), key_bytes, STATE_KIND, key, state)
            if fresh:
                self._prune(project_id)
        except (OSError, ValueError, cachedir.CacheDirError):
            return

    def _prune(self, keep: str) -> None:
        folders = sorted(
            (e for e in os.scandir(self.folder) if e.is_dir(follow_symlinks=False) and e.name != keep),
            key=lambda e: e.stat().st_mtime,
            reverse=True,
        )
        for stale in folders[KEEP_PROJECTS - 1 :]:
            shutil.rmtree(stale.path, ignore_errors=True)


# -- the two sides of a run -------------------------------------------------------------------------
def _single_fingerprint(todo: list[tuple[SourceText, Settings]]) -> str | None:
    from tclint.rules.engine import _settings_fingerprint

    found = {_settings_fingerprint(s) for _, s in todo}
    return found.pop() if len(found) == 1 else None


def usable(linter: Any, todo: list[tuple[SourceText, Settings]], overrides: dict[str, bytes]) -> str | None:
    """The state key of this run, or None where no state is kept (no cache, unsaved buffers,
    several settings in the tree, libraries followed, a file without a digest)."""
    cache = linter.cache
    if cache is None or cache.refused or overrides or not todo:
        return None
    if any(s.follow_libraries for _, s in todo) or any(not src.digest for src, _ in todo):
        return None
    fingerprint = _single_fingerprint(todo)
    if fingerprint is None:
        return None
    return state_key(cache, [src.path for src, _ in todo], fingerprint)


def rerun(
    linter: Any,
    key: str,
    todo: list[tuple[SourceText, Settings]],
    report: list[str],
    sources: dict[str, SourceText],
    run_key: str,
) -> list[Diagnostic] | None:
    """The run's diagnostics from the stored state when every changed file keeps its interface and
    exports (None: run the project pass).  Updates the state and the contexts it used."""
    store = Store(linter.cache)
    state = store.state(key)
    if state is None:
        return None
    try:
        return _rerun(linter, store, key, state, todo, report, sources, run_key)
    except ContextMiss:
        return None


def _rerun(
    linter: Any,
    store: Store,
    key: str,
    state: dict[str, Any],
    todo: list[tuple[SourceText, Settings]],
    report: list[str],
    sources: dict[str, SourceText],
    run_key: str,
) -> list[Diagnostic] | None:
    from tclint.rules.engine import _dedupe, diagnose_file
    from tclint.rules.plaindata import decode_any, encode_any
    from tclint.rules.relocate import Unmapped, line_hashes

    files: dict[str, Any] = state["files"]
    project_id: str = state["project"]
    by_path = {src.path: (src, settings) for src, settings in todo}
    if by_path.keys() != files.keys():
        return None
    changed = {path for path, (src, _s) in by_path.items() if files[path][0] != src.digest}
    report_set = set(report)
    found = _unchanged_diagnostics(linter, store, state, report_set, changed)
    if found is None:
        return None
    last, derive = found
    config = decode_any(state["config"])
    found_maps = _changed(linter, store, state, changed, by_path, config)
    if found_maps is None:
        return None
    loaded, maps = found_maps
    # a moved file's positions are in its own context and in those of the files that name it
    moved_names = {_base(path) for path in maps}
    shifted = {path for path, entry in files.items() if moved_names.intersection(entry[3])}
    new_files = dict(files)
    contexts: dict[str, dict[str, Any]] = {}
    fresh: dict[str, list[Diagnostic]] = {}
    for path in sorted(changed | derive | shifted):
        src, settings = by_path[path]
        if path in loaded:
            ff, ctx, walked = loaded[path]
        else:
            got = _load(linter, store, project_id, path, src, settings, cached_only=True)
            if got is None:
                return None
            ff, ctx, walked = got
            if not _same_walks(walked, ctx, None):
                return None
        refined = walked[-1] if walked else ff
        if maps:
            try:
                ctx = _shift(ctx, path, maps)
            except Unmapped:
                return None
        view = _ProjectView(path, ctx, config)
        entry = list(files[path])
        if path in changed:
            ctx["lines"] = line_hashes(src.text or "")
            ctx["walks"] = [
                (seeds, answers, interface_digest(w))
                for (seeds, answers, _i), w in zip(ctx["walks"], walked, strict=True)
            ]
            entry[:3] = [src.digest, interface_digest(ff), export_digest(refined, view, settings)]
        if path in report_set:
            cross = decode_any(ctx["cross"])
            diags = diagnose_file(refined, view, {path: cross}, settings, src)  # type: ignore[arg-type]
            fresh[path] = diags
            ctx["diags"] = encode_any(diags)
        else:
            ctx["diags"] = None  # changed, not reported: what was stored is stale
        entry[3] = _mentions(ctx)
        new_files[path] = entry
        contexts[path] = ctx
    diagnostics = [d for d in last if d.path not in fresh]
    for path in report:
        diagnostics.extend(fresh.pop(path, ()))
    diagnostics = _dedupe(diagnostics)
    diagnostics.sort(key=lambda d: d.sort_key())
    state = {**state, "files": new_files, "report": sorted(report_set), "run": run_key}
    store.write(key, state, contexts, False)
    return diagnostics


def _changed(
    linter: Any,
    store: Store,
    state: dict[str, Any],
    changed: set[str],
    by_path: dict[str, tuple[SourceText, Settings]],
    config: dict[str, Any],
) -> tuple[dict[str, tuple[FileFacts, dict[str, Any], list[FileFacts]]], dict[str, dict[int, int]]] | None:
    """The changed files' facts, contexts and walks, and the line maps of those whose facts moved
    to other lines (``_unchanged_or_moved``); None when one says something new."""
    loaded: dict[str, tuple[FileFacts, dict[str, Any], list[FileFacts]]] = {}
    maps: dict[str, dict[int, int]] = {}
    for path in sorted(changed):
        src, settings = by_path[path]
        got = _load(linter, store, state["project"], path, src, settings)
        if got is None:
            return None
        ff, ctx, walked = got
        view = _ProjectView(path, ctx, config)
        lines = _unchanged_or_moved(ff, walked, ctx, state["files"][path], view, settings, src)
        if lines is None and _adds_unreached(
            linter, ff, walked, ctx, state["files"][path], view, settings, src, by_path
        ):
            lines = {}  # functions added where nothing reaches them: the project is the same
        if lines is None:
            return None
        if lines:
            maps[path] = lines
        loaded[path] = (ff, ctx, walked)
    return loaded, maps


def _load(
    linter: Any,
    store: Store,
    project_id: str,
    path: str,
    src: SourceText,
    settings: Settings,
    cached_only: bool = False,
) -> tuple[FileFacts, dict[str, Any], list[FileFacts]] | None:
    """A file's facts, stored context and the refinement's walks of it done again (None: one of
    them is missing; ``cached_only``: an unchanged file, whose facts must be in the cache)."""
    facts_key, ff = linter.cached_facts(src, settings)
    if ff is None:
        if cached_only:
            return None  # an unchanged file's facts are gone from the cache: the full pass
        ff = linter.compute_facts(src, settings, facts_key)
    ctx = store.context(project_id, path)
    if ctx is None:
        return None
    walked = _replay(linter, ctx, ff, src, settings, facts_key)
    if walked is None:
        return None
    return ff, ctx, walked


def _unchanged_or_moved(
    ff: FileFacts,
    walked: list[FileFacts],
    ctx: dict[str, Any],
    entry: list[Any],
    view: _ProjectView,
    settings: Settings,
    src: SourceText,
) -> dict[int, int] | None:
    """Does a changed file keep its interface, walks and exports, as they are ({}) or moved to
    other lines (the map of its old lines to the new ones)?  None: neither."""
    from tclint.rules.relocate import Unmapped, line_map, move

    refined = walked[-1] if walked else ff
    if interface_digest(ff) == entry[1]:
        if _same_walks(walked, ctx, None) and export_digest(refined, view, settings) == entry[2]:
            return {}
        return None
    if src.text is None or src.cells is not None or not _base(ff.path).isascii():
        return None  # a notebook's cells, a name ``_mentions`` cannot find
    lines = line_map(ctx["lines"], src.text)
    back = {new: old for old, new in lines.items()}
    try:
        if interface_digest(move(ff, {}, back)) != entry[1] or not _same_walks(walked, ctx, back):
            return None
        if export_digest(move(refined, {}, back), view, settings) != entry[2]:
            return None
    except Unmapped:
        return None  # the edit put facts on a line the old text did not have
    return lines


def _adds_unreached(
    linter: Any,
    ff: FileFacts,
    walked: list[FileFacts],
    ctx: dict[str, Any],
    entry: list[Any],
    view: _ProjectView,
    settings: Settings,
    src: SourceText,
    by_path: dict[str, tuple[SourceText, Settings]],
) -> bool:
    """Does a changed file only add module-level functions nothing reaches
    (``project_delta.added_functions``, against the facts the cache holds of its last text) that
    no other indexed file's text names, with walks and exports as stored but for them?  The
    project pass would then build the project it built, the additions aside (in no region)."""
    from tclint.rules.project_delta import added_functions, named_elsewhere, without_added

    cache = linter.cache
    module, is_package, root = ff.module, ff.is_package, ff.root
    old = cache.get_facts(
        cache.facts_key(entry[0], module, is_package, root, settings.compiling_predicates, ff.path)
    )
    if old is None:
        return False
    old.path = ff.path
    if interface_digest(old) != entry[1]:
        return False
    added = added_functions(old, ff, settings)
    if added is None:
        return False
    for (_seeds, _answers, iface), w in zip(ctx["walks"], walked, strict=True):
        bare = without_added(w, added, settings)
        if bare is None or interface_digest(bare) != iface:
            return False
    if export_digest(walked[-1] if walked else ff, view, settings) != entry[2]:
        return False
    others = [other.raw for path, (other, _s) in by_path.items() if path != ff.path]
    return not named_elsewhere(ff, src.text, added, others)


def _same_walks(walked: list[FileFacts], ctx: dict[str, Any], back: dict[int, int] | None) -> bool:
    """Each walk done again gives the interface it gave (moved back through ``back`` first)."""
    from tclint.rules.relocate import move

    for (_seeds, _answers, iface), w in zip(ctx["walks"], walked, strict=True):
        if interface_digest(w if back is None else move(w, {}, back)) != iface:
            return False
    return True


def _shift(ctx: dict[str, Any], path: str, maps: dict[str, dict[int, int]]) -> dict[str, Any]:
    """``ctx`` (of ``path``) with the positions of the moved files carried to their new lines
    (``relocate.Unmapped``: one cannot be)."""
    from tclint.rules.plaindata import decode_any, encode_any
    from tclint.rules.relocate import Unmapped, move

    regions: dict[str, Any] = {}
    for qual, plain in ctx["regions"].items():
        fullgraph, multiplier, loop_caller, loop_key, has_site, related, text, depth, cap = plain
        caller = decode_any(loop_caller)
        if caller is not None and caller[1] in maps:
            line = maps[caller[1]].get(caller[2])
            if line is None:
                raise Unmapped(f"the loop call of {qual}")
            caller = (caller[0], caller[1], line, *caller[3:])
        related = encode_any(move(decode_any(related), maps))
        regions[qual] = (
            fullgraph,
            multiplier,
            encode_any(caller),
            loop_key,
            has_site,
            related,
            move(text, maps),
            depth,
            cap,
        )
    drops = ctx["drops"]
    if path in maps:
        own = maps[path]
        if any(line not in own for line in drops.values()):
            raise Unmapped("a dropped frame's line")
        drops = {qual: own[line] for qual, line in drops.items()}
    return {
        **ctx,
        "regions": regions,
        "answers": move(ctx["answers"], maps),
        "modes": move(ctx["modes"], maps),
        "drops": drops,
        "cross": encode_any(move(decode_any(ctx["cross"]), maps)),
    }


_MENTION = re.compile(rb"[\w.-]*\.py(?![\w])")


def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _mentions(ctx: dict[str, Any]) -> list[str]:
    """The file names (``model.py``) a context's text holds: where a moved file's positions may be."""
    data = marshal.dumps({k: v for k, v in ctx.items() if k != "lines"}, 2)
    return sorted({m.decode("ascii") for m in _MENTION.findall(data)})


def _unchanged_diagnostics(
    linter: Any, store: Store, state: dict[str, Any], report_set: set[str], changed: set[str]
) -> tuple[list[Diagnostic], set[str]] | None:
    """(the stored diagnostics of the reported files, the reported files whose diagnostics must be
    derived): the last run's whole result when it reported the same files, else each file's last
    diagnostics from its context (None: a context is missing)."""
    from tclint.rules.plaindata import decode_any

    derive = changed & report_set
    if state.get("report") == sorted(report_set) and state.get("run"):
        last = linter.cache.get_run(state["run"])
        if last is not None:
            return last, derive
    kept: list[Diagnostic] = []
    for path in sorted(report_set - changed):
        ctx = store.context(state["project"], path)
        if ctx is None:
            return None
        if ctx["diags"] is None:
            derive.add(path)  # indexed but not reported by the runs since the project pass
        else:
            kept.extend(decode_any(ctx["diags"]))
    return kept, derive


def _replay(
    linter: Any,
    ctx: dict[str, Any],
    ff: FileFacts,
    src: SourceText,
    settings: Settings,
    facts_key: str | None,
) -> list[FileFacts] | None:
    """The type refinement's walks of ``ff``, done again (or reused) with their recorded seeds and
    answers, in order; the last one is ``ff`` as the refinement left it (none: as it is).  None
    when one cannot be done; ``ContextMiss`` when one asks what its walk was not asked."""
    from tclint.rules.engine import analyze_source
    from tclint.rules.plaindata import decode_any
    from tclint.rules.rewalks import Rewalks

    steps = ctx["walks"]
    if not steps:
        return []
    rewalks = Rewalks(linter.cache)
    predicates = settings.compiling_predicates
    out: list[FileFacts] = []
    for seeds_plain, answers_plain, _iface in steps:
        seeds, answers = decode_any(seeds_plain), decode_any(answers_plain)

        def recorded(ref: str, answers: dict[str, Any] = answers) -> Any:
            if ref not in answers:
                raise ContextMiss(f"a walk asks about {ref}")
            return answers[ref]

        def walk(asked: Any, seeds: Any = seeds) -> FileFacts:
            return analyze_source(src, ff.module, ff.is_package, ff.root, predicates, seeds, asked)

        walked = rewalks.walk(facts_key, ff.path, seeds, recorded, walk)
        if walked is None:
            return None
        out.append(walked)
    rewalks.flush()
    return out


def store_full(
    linter: Any,
    key: str,
    todo: list[tuple[SourceText, Settings]],
    facts: list[FileFacts],
    project: Project,
    diagnostics: list[Diagnostic],
    report: list[str],
    run_key: str,
) -> None:
    """After a project pass: the state and every indexed file's context, for the next re-run."""
    from tclint.rules import sealed
    from tclint.rules.engine import project_diagnostics
    from tclint.rules.plaindata import encode_any
    from tclint.rules.relocate import line_hashes

    store = Store(linter.cache)
    previous = store.state(key)
    known = previous["files"] if previous is not None else {}
    cross = project.memo.get("cross_diagnostics")
    if cross is None:
        cross = project_diagnostics(project)
    by_file: dict[str, list[Diagnostic]] = {}
    for d in diagnostics:
        by_file.setdefault(d.path, []).append(d)
    report_set = set(report)
    files: dict[str, Any] = {}
    # each context kept as the bytes it is written as, not as the plain data built: the contexts
    # of every indexed file wait for the cache's flush (tests/rules/test_facts_memory.py: 40
    # files, 270 KB held as dicts, lists and tuples, under 1.5x the 81 KB written as bytes)
    contexts: dict[str, bytes] = {}
    for (src, settings), raw in zip(todo, facts, strict=True):
        path = src.path
        before = known.get(path)
        iface = before[1] if before is not None and before[0] == src.digest else interface_digest(raw)
        refined = project.files.get(path, raw)
        ctx = file_context(project, refined, settings, cross.get(path, []))
        if path in report_set:
            ctx["diags"] = encode_any(by_file.get(path, []))
        export = export_digest(refined, _ProjectView(path, ctx, project.dynamo_config), settings)
        ctx["lines"] = line_hashes(src.text or "")
        if getattr(linter, "exits_after_run", False):
            src.release()  # a command-line run holds no file's text at once (``SourceText.release``)
        files[path] = [src.digest, iface, export, _mentions(ctx)]
        try:
            contexts[path] = marshal.dumps(ctx, sealed.MARSHAL_VERSION)
        except (ValueError, TypeError):  # a value the cache cannot store: no state, full passes
            return
    project_id = _digest(key, repr(sorted((p, f[1], f[2]) for p, f in files.items())))
    state = {
        "project": project_id,
        "files": files,
        "config": encode_any(dict(project.dynamo_config)),
        "report": sorted(report_set),
        "run": run_key,
    }
    store.write(key, state, contexts, True)
