"""The tclint language server: lifecycle, document sync, diagnostics (push and pull), settings.

Threads: pygls' event loop handles messages and owns everything the client sees (documents,
published diagnostics, timers); the lint thread (``scheduler``) owns the analysis state
(``workspace``).  A change is debounced, then its text and version go to the lint thread; the
result comes back and is published only if the document is still at that version (results for
stale versions are dropped).  Code actions, hovers and code lenses answer from what was
published, so they never re-lint.

Diagnostics are *pushed* (``textDocument/publishDiagnostics``) to every client that does not pull;
a client that supports pull diagnostics (``textDocument/diagnostic``, ``workspace/diagnostic``)
gets pull only, so it never shows them twice (VS Code keeps pushed and pulled diagnostics apart).
``diagnosticMode`` forces one or the other.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from tclint.rules.config import CONFIG_FILES, ConfigError, Settings
from tclint.rules.model import Diagnostic
from tclint.rules.version import __version__
from tclint.server import entries as entries_mod
from tclint.server.convert import ClientFeatures, Converter, KnownRanges, OtherFiles
from tclint.server.documents import Document, Documents, uri_to_path
from tclint.server.positions import Lines, encoding_name
from tclint.server.protocol import TclintProtocol, is_parse_error
from tclint.server.scheduler import BACKGROUND, NORMAL, URGENT, LintThread
from tclint.server.settings import EditorSettings, parse_settings
from tclint.server.workspace import LintOutput, Workspace

log = logging.getLogger("tclint.server")
WATCH_GLOBS = ("**/*.py", "**/pyproject.toml", "**/tclint.toml", "**/.tclint.toml", "**/.gitignore")
CROSS_FILE_DELAY = 0.25  # seconds after the last edit before other open files are re-evaluated


@dataclass
class Published:
    """What the client was last told about one document (and what actions/hover/lens use)."""

    uri: str
    version: int
    path: str
    text: str
    model: list[Diagnostic]
    body: str  # the LSP diagnostics, as JSON text
    result_id: str
    settings: Settings | None = None
    entries: list[entries_mod.Entry] = field(default_factory=list)
    parse_error: bool = False
    lines: Lines | None = None
    elapsed: float = 0.0
    targets: list[tuple[int, int, str]] = field(default_factory=list)  # (first, last line, probe target)
    notebook: str | None = None  # the notebook's URI, for a notebook cell
    _lsp: list[dict[str, Any]] | None = None

    @property
    def lsp(self) -> list[dict[str, Any]]:
        """The diagnostics as LSP JSON dicts (parsed on first use: actions and hovers need them)."""
        if self._lsp is None:
            self._lsp = json.loads(self.body)
        return self._lsp


class TclintServer(LanguageServer):
    def __init__(self) -> None:
        from tclint.server.notebooks import SYNC

        super().__init__(
            "tclint", __version__, protocol_cls=TclintProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental, notebook_document_sync=SYNC,
        )  # fmt: skip
        self.docs = Documents()
        self.ws = Workspace(on_config_error=self._config_error_from_thread)
        self.lint: LintThread | None = None
        self.published: dict[str, Published] = {}
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.settings = EditorSettings()
        self.folder_settings: dict[str, EditorSettings] = {}
        self.features = ClientFeatures()
        self.client_commands: frozenset[str] = frozenset()  # initializationOptions.clientCommands
        self.encoding = "utf-16"
        self.pull = False
        self.capabilities: types.ClientCapabilities = types.ClientCapabilities()
        self.folders: list[str] = []
        self.others = OtherFiles()
        self.shown_errors: set[str] = set()
        self.changed: dict[str, asyncio.Event] = {}
        self.index_wakeup: asyncio.Event | None = None
        self.index_task: asyncio.Task[Any] | None = None
        self.cross_timers: dict[str, asyncio.TimerHandle] = {}
        self.probes: Any = None  # probe.ProbeManager, created on first use
        self.shutting_down = False
        self.stats: dict[str, Any] = {"lints": 0, "last_lint_ms": 0.0, "modes": {}}
        self._root_generation: dict[str, int] = {}
        self._startup_problems: list[str] = []
        self._gc_timer: asyncio.TimerHandle | None = None
        # warm-opened documents whose full lint has not finished yet: uri -> what their edits are
        # derived from meanwhile (``warmedit``), on a thread of their own (the lint thread is busy)
        self.warm_edits: dict[str, Any] = {}
        self._warm_thread: Any = None  # concurrent.futures.ThreadPoolExecutor, created on first use

    # ------------------------------------------------------------------ errors and messages
    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls' out-of-band errors: log them (never a pop-up per malformed message)."""
        if (
            is_parse_error(error)
            or isinstance(error.__cause__, Exception)
            and is_parse_error(error.__cause__)
        ):
            try:
                self.protocol.parse_error(str(error))  # type: ignore[attr-defined]
            except Exception:
                pass
        log.error("server error (%s): %s", getattr(source, "__name__", source), error)

    def show(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        try:
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))
        except Exception:
            log.exception("cannot show a message")

    def show_once(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        if message in self.shown_errors:
            return
        self.shown_errors.add(message)
        self.show(message, kind)

    def _config_error_from_thread(self, exc: ConfigError) -> None:
        message = f"tclint: configuration error: {exc}" + (
            f" (key `{exc.key}`)" if exc.key and f"`{exc.key}" not in str(exc) else ""
        )
        message += " -- linting with the editor settings until it is fixed"
        log.warning("%s", message)
        loop = self.lint.loop if self.lint is not None else None
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.show_once, message)

    # ------------------------------------------------------------------ settings
    def editor_for_path(self, path: str | None) -> EditorSettings:
        if path is not None:
            for folder in sorted(self.folder_settings, key=len, reverse=True):
                if folder and (path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)):
                    return self.folder_settings[folder]
        return self.folder_settings.get("", self.settings)

    async def apply_settings(
        self, global_settings: EditorSettings, per_folder: dict[str, EditorSettings]
    ) -> None:
        self.settings = global_settings
        self.folder_settings = {"": global_settings, **per_folder}
        settings = dict(self.folder_settings)
        folders = list(self.folders)

        def job() -> bool:
            self.ws.set_folders(folders)
            return self.ws.set_editor(settings)

        if not await self.run_job(job, URGENT):
            return  # the settings in force: nothing to re-read or re-lint
        self.warm_edits.clear()  # inputs of the warm-open records
        self.wake_indexer()
        self.relint_all()

    async def pull_configuration(self) -> None:
        """Ask the client for the `tclint` section, globally and per workspace folder."""
        ws_caps = getattr(self.capabilities, "workspace", None)
        if not getattr(ws_caps, "configuration", False):
            return
        items = [types.ConfigurationItem(section="tclint")]
        items.extend(types.ConfigurationItem(scope_uri=_path_uri(f), section="tclint") for f in self.folders)
        try:
            result = await asyncio.wait_for(
                self.workspace_configuration_async(types.ConfigurationParams(items=items)), timeout=10
            )
        except Exception as exc:
            log.warning("workspace/configuration failed: %s", exc)
            return
        log.debug("workspace/configuration -> %s", result)
        if not isinstance(result, (list, tuple)):
            return
        result = list(result)
        problems: list[str] = []
        base = self.settings
        global_settings = base
        if result and result[0] is not None:
            global_settings, found = parse_settings(result[0], base)
            problems.extend(found)
        per_folder = {}
        for folder, value in zip(self.folders, result[1:], strict=False):
            if value is not None:
                per_folder[folder], found = parse_settings(value, global_settings)
                problems.extend(found)
        for problem in dict.fromkeys(problems):
            self.show(f"tclint: {problem}")
        await self.apply_settings(global_settings, per_folder)

    # ------------------------------------------------------------------ the lint thread
    def ensure_lint_thread(self) -> LintThread:
        if self.lint is None:
            self.lint = LintThread(asyncio.get_running_loop())
        return self.lint

    async def run_job(self, fn: Any, priority: int = NORMAL, key: Any = None) -> Any:
        return await self.ensure_lint_thread().submit(fn, priority, key)

    def wake_indexer(self) -> None:
        if self.index_wakeup is not None:
            self.index_wakeup.set()
        if self.index_task is None or self.index_task.done():
            try:
                self.index_task = asyncio.get_running_loop().create_task(self._index_loop())
            except RuntimeError:
                pass

    async def _index_loop(self) -> None:
        """Index the roots' files in the background, a slice at a time."""
        self.index_wakeup = asyncio.Event()
        while not self.shutting_down:
            self.index_wakeup.clear()
            try:
                pending = await self.run_job(self.ws.index_pending, BACKGROUND)
                while pending and not self.shutting_down:
                    changed = await self.run_job(lambda: self.ws.index_step(0.05), BACKGROUND)
                    for root in changed:
                        self.schedule_cross_file(root.path, 0.0)
                    pending = await self.run_job(self.ws.index_pending, BACKGROUND)
            except asyncio.CancelledError:
                return
            except Exception:
                log.exception("indexing failed")
            try:
                await self.index_wakeup.wait()
            except asyncio.CancelledError:
                return

    # ------------------------------------------------------------------ linting documents
    def doc_path(self, doc: Document) -> str:
        if doc.path is not None:
            return doc.path
        name = (
            "".join(c if c.isalnum() or c in "._-" else "_" for c in doc.uri.rsplit("/", 1)[-1]) or "untitled"
        )
        if not name.endswith(".py"):
            name += ".py"
        return os.path.join(
            tempfile.gettempdir(), "tclint-untitled", hashlib.sha1(doc.uri.encode()).hexdigest()[:8], name
        )

    def schedule(self, uri: str, delay: float) -> None:
        handle = self.timers.pop(uri, None)
        if handle is not None:
            handle.cancel()
        loop = asyncio.get_running_loop()
        if delay <= 0:
            loop.call_soon(self._start_lint, uri)
        else:
            self.timers[uri] = loop.call_later(delay, self._start_lint, uri)

    def _start_lint(self, uri: str, full: bool = False) -> None:
        self.timers.pop(uri, None)
        doc = self.docs.get(uri)
        if doc is None or self.shutting_down:
            return
        task = asyncio.get_running_loop().create_task(self._lint(doc, full))
        task.add_done_callback(_log_task_error)

    async def _lint(self, doc: Document, full: bool = False) -> Published | None:
        uri, version, text = doc.uri, doc.version, doc.text
        path = self.doc_path(doc)
        editor = self.editor_for_path(path)
        if not editor.enable:
            self.deliver(Published(uri, version, path, text, [], "[]", _result_id(version, "[]")))
            return self.published.get(uri)
        ctx = self.convert_context(editor, uri)
        started = time.perf_counter()
        warm = None
        derived = False  # ``warm`` is an edit derived from a warm-open record (``_warm_edit``)
        if not full and uri not in self.published:
            try:
                warm = await self._warm_open(doc, path, ctx)
            except asyncio.CancelledError:
                return None  # another lint of the document took over (same job key): it answers
            current = self.docs.get(uri)
            if current is None or current.version != version or current.text != text:
                return None  # changed meanwhile: that version's lint (same job key) answers
            if warm is not None:
                started = time.perf_counter()
        elif not full:
            for other in [u for u in self.warm_edits if u != uri]:
                del self.warm_edits[other]  # another document changed: their records' inputs did
            warm = await self._warm_edit(doc, path, ctx)
            derived = warm is not None
            current = self.docs.get(uri)
            if current is None or current.version != version or current.text != text:
                return None  # changed meanwhile: that version's lint answers

        def job() -> tuple[Published, str, int]:
            out = self.ws.lint(path, text, version, full=full)
            pub = self.build_published(uri, out, ctx)
            state = self.ws.docs.get(path)
            generation = state.root.generation if state is not None else 0
            root_path = state.root.path if state is not None else ""
            return pub, root_path, generation

        try:
            # after a warm open (or edit) the full lint goes on behind requests and other documents' edits
            priority = URGENT if warm is None else NORMAL
            pub, root_path, generation = await self.run_job(job, priority, key=("lint", uri))
            self.warm_edits.pop(uri, None)  # the project is built: edits are linted as usual
        except asyncio.CancelledError:
            return None  # replaced by a newer version's analysis
        except Exception:
            # a bug of ours or of a rule the engine did not contain: say so in the log, keep
            # what was shown, and answer whoever waits for this version
            log.exception("linting %s (version %s) failed", uri, version)
            prev = self.published.get(uri)
            body = prev.body if prev is not None and prev.text == text else "[]"
            model = prev.model if prev is not None and prev.text == text else []
            self.deliver(
                Published(
                    uri, version, path, text, model, body, _result_id(version, body), lines=Lines.of(text)
                )
            )
            return self.published.get(uri)
        pub.elapsed = time.perf_counter() - started
        same = warm is not None and warm.result_id == pub.result_id and warm.version == pub.version
        if same:
            self.replace_silently(pub)  # what the warm open or edit published: not sent again
        else:
            self.deliver(pub)
        if derived:
            verdict = "confirms" if same else "replaces"
            log.info("%s: the full lint %s the edit derived from the warm-open record", path, verdict)
        self.collect_when_idle()
        if root_path and generation != self._root_generation.get(root_path):
            self._root_generation[root_path] = generation
            self.schedule_cross_file(root_path, CROSS_FILE_DELAY, skip=path)
        return pub

    async def _warm_open(self, doc: Document, path: str, ctx: dict[str, Any]) -> Published | None:
        """A just opened document's diagnostics from the last session's record (``warmopen``),
        published at once; None when there is none.  The full lint follows (``_lint``).  Raises
        ``CancelledError`` when another lint of the document replaced this one's job."""
        uri, version, text = doc.uri, doc.version, doc.text
        started = time.perf_counter()

        def job() -> tuple[Published, Any] | None:
            found = self.ws.warm_lint(path, text, version)
            if found is None:
                return None
            out, entries, targets, ranges = found
            return self.build_published(uri, out, ctx, (entries, targets), ranges), out.warm_edit

        try:
            got = await self.run_job(job, URGENT, key=("lint", uri))
        except asyncio.CancelledError:
            raise  # replaced by another lint of the document
        except Exception:
            log.exception("warm open of %s failed", uri)
            return None
        if got is None:
            return None
        pub, edit = got
        pub.elapsed = time.perf_counter() - started
        log.info(
            "%s: diagnostics of the last session's record (warm open, %.0f ms)", path, pub.elapsed * 1000
        )
        if self.deliver(pub) and edit is not None:
            self.warm_edits[uri] = edit  # until the full lint below is done (``_warm_edit``)
        return pub

    async def _warm_edit(self, doc: Document, path: str, ctx: dict[str, Any]) -> Published | None:
        """An edit of a warm-opened document typed before its full lint is done (the open's
        verification: seconds of building the project when installed packages are followed),
        derived from the open record (``warmedit``) on a thread of its own, as the lint thread is
        busy, and published at once; None when there is nothing to derive it from or it is a miss
        (the full lint answers).  The full lint of the version still follows (``_lint``)."""
        edit = self.warm_edits.get(doc.uri)
        if edit is None or edit.path != path or self.probes is not None:
            return None  # (probe verdicts are applied to diagnostics on the lint thread)
        uri, version, text = doc.uri, doc.version, doc.text
        started = time.perf_counter()
        base = self.ws.folder_of(path)

        def work() -> Published | None:
            from tclint.server.warmedit import derive

            current = self.docs.get(uri)
            if current is None or current.version != version:
                return None  # a newer edit follows
            derived = derive(edit, text)
            if derived is None:
                return None
            diags = derived.diagnostics
            lines = Lines.of(text)
            conv = Converter(
                lines,
                ctx["encoding"],
                ctx["editor"],
                edit.settings,
                ctx["features"],
                OtherFiles(),  # the lint thread's own is not shared
                ctx["open_texts"],
                base=base,
                known_ranges=edit.ranges,
            )
            body = conv.convert_all(diags, path)
            return Published(
                uri, version, path, text, diags, body, _result_id(version, body), edit.settings,
                derived.entries, lines=lines, targets=derived.targets,
            )  # fmt: skip

        if self._warm_thread is None:
            from concurrent.futures import ThreadPoolExecutor

            self._warm_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tclint-warm-edit")
        try:
            pub = await asyncio.get_running_loop().run_in_executor(self._warm_thread, work)
        except Exception:
            log.exception("deriving the edit of %s from its warm-open record failed", uri)
            return None
        prev = self.published.get(uri)
        answered = prev is not None and prev.version == version
        if pub is None or answered or self.warm_edits.get(uri) is not edit:
            return None  # a miss, already answered, or the record's inputs changed meanwhile
        pub.elapsed = time.perf_counter() - started
        log.info("%s: edit derived from the warm-open record (%.0f ms)", path, pub.elapsed * 1000)
        return pub if self.deliver(pub) else None

    def replace_silently(self, pub: Published) -> None:
        """Keep ``pub`` as what was published for its document (its diagnostics are those already
        sent) when it is for the document's current version."""
        doc = self.docs.get(pub.uri)
        if doc is not None and doc.version == pub.version and doc.text == pub.text:
            self.published[pub.uri] = pub

    def collect_when_idle(self, delay: float = 1.5) -> None:
        """A full garbage collection once the user pauses (see ``__main__._tune_gc``)."""
        if self._gc_timer is not None:
            self._gc_timer.cancel()

        def collect() -> None:
            self._gc_timer = None
            if self.lint is not None and not self.timers and not self.lint.pending():
                import gc

                self.lint.submit(gc.collect, BACKGROUND)

        self._gc_timer = asyncio.get_running_loop().call_later(delay, collect)

    def convert_context(self, editor: EditorSettings, uri: str | None = None) -> dict[str, Any]:
        return {
            "encoding": self.encoding,
            "features": self.features,
            "editor": editor,
            "open_texts": {d.path: d.text for d in self.docs if d.path is not None},
            "cache": uri is not None and self.docs.get(uri) is not None,
        }

    def build_published(
        self,
        uri: str,
        out: LintOutput,
        ctx: dict[str, Any],
        known: tuple[list[entries_mod.Entry], list[tuple[int, int, str]]] | None = None,
        known_ranges: KnownRanges | None = None,
    ) -> Published:
        """Convert one lint output (lint thread).  ``known``: its code-lens entries and probe
        targets, already known (a warm open's record): no project is asked for them;
        ``known_ranges``: its related locations' ranges in library files (the record's): no
        line table of those files is built."""
        diags = out.diagnostics
        if self.probes is not None and not out.too_large:
            diags = self.probes.store.apply(out.path, out.text, diags)
            self.probes.refresh_titles()
        # a buffer over max-file-size has one finding at 1:1: no line index of its whole text
        lines = Lines.of("" if out.too_large else out.text)
        conv = Converter(
            lines,
            ctx["encoding"],
            ctx["editor"],
            out.settings,
            ctx["features"],
            self.others,
            ctx["open_texts"],
            base=self.ws.folder_of(out.path),
            known_ranges=known_ranges,
        )
        body = conv.convert_all(diags, out.path)
        entries: list[entries_mod.Entry] = []
        targets: list[tuple[int, int, str]] = []
        state = self.ws.docs.get(out.path)
        if known is not None:
            entries, targets = known
        elif state is not None and not out.excluded:
            facts = state.root.current_facts(out.path)
            if facts is not None and facts.error is None:
                try:
                    entries = state.root.entries(out.path, facts)  # at the buffer's lines
                    targets = entries_mod.targets(facts)
                    # for the next session's open (with the line tables this conversion used)
                    self.ws.remember(out, entries, targets, self.others.lines)
                except Exception:
                    log.exception("computing entry points failed")
        self.stats["lints"] += 1
        self.stats["last_lint_ms"] = out.elapsed * 1000
        return Published(
            uri,
            out.version,
            out.path,
            out.text,
            diags,
            body,
            _result_id(out.version, body),
            out.settings,
            entries,
            out.parse_error,
            lines,
            out.elapsed,
            targets,
        )

    def deliver(self, pub: Published) -> bool:
        """Publish a result if it is for the document's current version."""
        doc = self.docs.get(pub.uri)
        if doc is None or doc.version != pub.version or doc.text != pub.text:
            return False  # stale: a newer version is on its way
        old = self.published.get(pub.uri)
        self.published[pub.uri] = pub
        event = self.changed.get(pub.uri)
        if event is not None:
            event.set()
        if self.pull:
            if old is not None and old.result_id != pub.result_id and old.version == pub.version:
                self.request_refresh()
            return True
        self.publish(pub.uri, pub.version, pub.body)
        return True

    def publish(self, uri: str, version: int | None, body: str) -> None:
        """textDocument/publishDiagnostics from the already serialized diagnostics (``body``)."""
        head = '{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":' + json.dumps(
            uri
        )
        if version is not None:
            head += f',"version":{int(version)}'
        self.protocol.send_json_text(head + ',"diagnostics":' + body + "}}")  # type: ignore[attr-defined]

    def request_refresh(self) -> None:
        ws_caps = getattr(self.capabilities, "workspace", None)
        diag = getattr(ws_caps, "diagnostics", None)
        if getattr(diag, "refresh_support", False):
            try:
                self.workspace_diagnostic_refresh(None)
            except Exception:
                log.exception("workspace/diagnostic/refresh failed")

    def schedule_cross_file(self, root_path: str, delay: float, skip: str | None = None) -> None:
        """Re-evaluate the other open documents of a root after its project changed."""
        old = self.cross_timers.pop(root_path, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()

        def start() -> None:
            self.cross_timers.pop(root_path, None)
            loop.create_task(self._cross_file(root_path, skip)).add_done_callback(_log_task_error)

        self.cross_timers[root_path] = loop.call_later(delay, start)

    async def _cross_file(self, root_path: str, skip: str | None) -> None:
        ctx_by_path = {
            d.path: (d.uri, self.convert_context(self.editor_for_path(d.path), d.uri))
            for d in self.docs
            if d.path
        }

        def job() -> list[Published]:
            root = self.ws.roots.get(root_path)
            if root is None:
                return []
            out = []
            for result in self.ws.relint_open(root, skip=skip):
                found = ctx_by_path.get(result.path)
                if found is None:
                    continue
                uri, ctx = found
                out.append(self.build_published(uri, result, ctx))
            return out

        pubs = await self.run_job(job, NORMAL, key=("cross", root_path))
        from tclint.server import notebooks
        from tclint.server.convert import path_to_uri

        for nb_path in await self.run_job(lambda: self.ws.open_notebooks(root_path), NORMAL):
            notebooks.schedule(self, path_to_uri(nb_path), 0)
        changed = False
        for pub in pubs:
            old = self.published.get(pub.uri)
            if old is not None and old.result_id == pub.result_id:
                continue
            if self.pull:
                doc = self.docs.get(pub.uri)
                if doc is not None and doc.version == pub.version:
                    self.published[pub.uri] = pub
                    changed = True
            else:
                self.deliver(pub)
        if changed:
            self.request_refresh()

    def relint_all(self) -> None:
        for doc in self.docs:
            self.schedule(doc.uri, 0)

    async def current(self, uri: str, timeout: float = 60.0) -> Published | None:
        """The published result for the document's current version (linting it if needed)."""
        deadline = time.monotonic() + timeout
        while True:
            doc = self.docs.get(uri)
            if doc is None:
                return None
            pub = self.published.get(uri)
            if pub is not None and pub.version == doc.version and pub.text == doc.text:
                return pub
            event = self.changed.setdefault(uri, asyncio.Event())
            event.clear()
            if uri not in self.timers and (self.lint is None or not self.lint.pending(URGENT)):
                self._start_lint(uri)
            elif uri in self.timers:
                self.schedule(uri, 0)  # someone is waiting: skip the debounce
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return self.published.get(uri)
            try:
                await asyncio.wait_for(event.wait(), timeout=min(remaining, 5.0))
            except asyncio.TimeoutError:
                continue

    # ------------------------------------------------------------------ files on disk
    async def files_changed(self, changes: list[tuple[str, bool]]) -> None:
        """Files created/changed/deleted on disk: configuration or sources."""
        self.warm_edits.clear()  # inputs of the warm-open records
        config = [p for p, _d in changes if os.path.basename(p) in (*CONFIG_FILES, ".gitignore")]
        sources = [(p, deleted) for p, deleted in changes if p.endswith((".py", ".ipynb"))]
        if config:
            self.shown_errors.clear()
            await self.run_job(self.ws.reset_configuration, URGENT)
            self.others = OtherFiles()
            self.wake_indexer()
            self.relint_all()
            return

        def job() -> list[str]:
            roots = set()
            for path, deleted in sources:
                self.others.forget(path)
                for root in self.ws.file_changed(path, deleted):
                    roots.add(root.path)
            return sorted(roots)

        for root_path in await self.run_job(job, NORMAL):
            self.schedule_cross_file(root_path, 0.0)


def _path_uri(path: str) -> str:
    from tclint.server.convert import path_to_uri

    return path_to_uri(path)


def _result_id(version: int, body: str) -> str:
    """Identifies a result: the same diagnostics at the same version give the same id."""
    return f"{version}-{hashlib.blake2b(body.encode(), digest_size=8).hexdigest()}"


def _log_task_error(task: asyncio.Task[Any]) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        log.error("background task failed: %s", exc, exc_info=exc)


# ---------------------------------------------------------------------------------------------
# handlers


def create_server() -> TclintServer:  # noqa: C901 - long, not split yet (issue 16)
    """A fresh server with every feature registered."""
    from tclint.server import actions, commands, fixcheck, hover, lens, notebooks, pull

    fixcheck.install()
    ls = TclintServer()

    @ls.feature(types.INITIALIZE)
    def initialize(ls: TclintServer, params: types.InitializeParams) -> None:
        ls.capabilities = params.capabilities
        settings, problems = parse_settings(params.initialization_options)
        opts = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        # commands the client runs itself (lenses for them are offered only to that client)
        commands = opts.get("clientCommands")
        ls.client_commands = (
            frozenset(c for c in commands if isinstance(c, str))
            if isinstance(commands, list)
            else frozenset()
        )
        ls.settings = settings
        ls.folder_settings = {"": settings}
        ls._startup_problems = problems
        ls.features = ClientFeatures.of(params.capabilities)
        ls.encoding = encoding_name(ls.workspace.position_encoding)
        folders = []
        for folder in params.workspace_folders or []:
            path = uri_to_path(folder.uri)
            if path:
                folders.append(path)
        if not folders:
            root = uri_to_path(params.root_uri) if params.root_uri else params.root_path
            if root:
                folders.append(os.path.normpath(root))
        ls.folders = folders
        td = getattr(params.capabilities, "text_document", None)
        supports_pull = getattr(td, "diagnostic", None) is not None
        ls.pull = supports_pull and settings.diagnostic_mode != "push"
        if ls.pull:
            pull.register(ls)
        log.info(
            "tclint %s: encoding %s, %s diagnostics, folders %s",
            __version__,
            ls.encoding,
            "pull" if ls.pull else "push",
            folders,
        )

    @ls.feature(types.INITIALIZED)
    async def initialized(ls: TclintServer, params: types.InitializedParams) -> None:
        from tclint.server import logbridge

        logbridge.install(ls, asyncio.get_running_loop(), logging.INFO)
        ls.ensure_lint_thread()
        for problem in ls._startup_problems:
            ls.show(f"tclint: {problem}")
        folders = list(ls.folders)
        settings = dict(ls.folder_settings)

        def job() -> None:
            ls.ws.set_folders(folders)
            ls.ws.set_editor(settings)
            for folder in folders:
                ls.ws.root_for(folder)

        await ls.run_job(job, URGENT)
        await register_watchers(ls)
        await ls.pull_configuration()
        ls.wake_indexer()

    @ls.feature(types.SHUTDOWN)
    def shutdown(ls: TclintServer, *args: Any) -> None:
        ls.shutting_down = True
        for handle in [*ls.timers.values(), *ls.cross_timers.values()]:
            handle.cancel()
        if ls.probes is not None:
            ls.probes.stop()
        if ls.index_task is not None:
            ls.index_task.cancel()
        if ls.lint is not None:
            ls.lint.stop()
        ls.warm_edits.clear()
        if ls._warm_thread is not None:
            ls._warm_thread.shutdown(wait=False, cancel_futures=True)

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TclintServer, params: types.DidOpenTextDocumentParams) -> None:
        doc = ls.docs.open(params.text_document)
        ls.published.pop(doc.uri, None)
        ls.schedule(doc.uri, 0)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TclintServer, params: types.DidChangeTextDocumentParams) -> None:
        doc = ls.docs.change(params.text_document, list(params.content_changes or []), ls.encoding)
        if doc is None:
            log.warning("didChange for a document that is not open: %s", params.text_document.uri)
            return
        editor = ls.editor_for_path(doc.path)
        if editor.lint_on_change:
            ls.schedule(doc.uri, editor.debounce_ms / 1000)

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def did_save(ls: TclintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = uri_to_path(uri)
        if path is not None and os.path.basename(path) in CONFIG_FILES:
            await ls.files_changed([(path, False)])
            return
        if ls.docs.get(uri) is not None:
            ls.schedule(uri, 0)

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: TclintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        doc = ls.docs.close(uri)
        handle = ls.timers.pop(uri, None)
        if handle is not None:
            handle.cancel()
        ls.published.pop(uri, None)
        ls.warm_edits.pop(uri, None)
        if doc is None:
            return
        path = ls.doc_path(doc)
        if not ls.pull:
            ls.publish(uri, None, "[]")
        root_path = await ls.run_job(lambda: ls.ws.close_doc(path), NORMAL)
        if root_path:
            ls.schedule_cross_file(root_path, 0.0)

    @ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: TclintServer, params: types.DidChangeConfigurationParams) -> None:
        log.debug("didChangeConfiguration: %s", params.settings)
        ws_caps = getattr(ls.capabilities, "workspace", None)
        if getattr(ws_caps, "configuration", False):
            await ls.pull_configuration()
            return
        settings = params.settings
        if isinstance(settings, dict) and ("tclint" in settings or "settings" in settings):
            new, problems = parse_settings(settings, ls.settings)
            for problem in problems:
                ls.show(f"tclint: {problem}")
            await ls.apply_settings(new, {})

    @ls.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(ls: TclintServer, params: types.DidChangeWatchedFilesParams) -> None:
        changes = []
        for change in params.changes or []:
            path = uri_to_path(change.uri)
            if path is not None:
                changes.append((path, change.type == types.FileChangeType.Deleted))
        if changes:
            await ls.files_changed(changes)

    @ls.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(ls: TclintServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        removed = {uri_to_path(f.uri) for f in params.event.removed or []}
        added = [p for p in (uri_to_path(f.uri) for f in params.event.added or []) if p]
        ls.folders = [f for f in ls.folders if f not in removed] + [p for p in added if p not in ls.folders]
        ls.warm_edits.clear()
        await ls.pull_configuration()
        folders = list(ls.folders)

        def job() -> None:
            ls.ws.set_folders(folders)
            for folder in added:
                ls.ws.root_for(folder)

        await ls.run_job(job, NORMAL)
        ls.wake_indexer()

    actions.register(ls)
    notebooks.register(ls)
    hover.register(ls)
    lens.register(ls)
    commands.register(ls)
    return ls


async def register_watchers(ls: TclintServer) -> None:
    """Ask the client to tell us about file changes (when it can register dynamically)."""
    ws_caps = getattr(ls.capabilities, "workspace", None)
    watched = getattr(ws_caps, "did_change_watched_files", None)
    if not getattr(watched, "dynamic_registration", False):
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern=g) for g in WATCH_GLOBS]
    )
    try:
        await asyncio.wait_for(
            ls.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id="tclint-watch",
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=options,
                        )
                    ]
                )
            ),
            timeout=10,
        )
    except Exception as exc:
        log.warning("cannot register file watchers: %s", exc)
