"""``workspace/executeCommand`` commands.

``tclint.probe``            ``[{"uri": URI, "position": {"line": L, "character": C}}]``: probe the
                            function (method, or nn.Module class) enclosing the position; at module
                            level, the file as a program.  Work-done progress; cancellable.
``tclint.probeFile``        ``[{"uri": URI}]``: run the file as a program under the probe.
``tclint.createProbeInputs`` ``[{"uri": URI, "position": {...}}]``: write the probe's inputs stub
                            (``tclint probe --init-inputs``) for the function at the position.
``tclint.restart``          ``[]``: drop every cache, re-read the configuration, re-lint.

Both probe commands return the probe report as JSON (``ProbeReport.to_json()`` with the merged
diagnostics, plus ``summary``) and publish the findings as diagnostics with source
``tclint-probe``.  Bad arguments get an ``InvalidParams`` error; a probe that cannot run (an
untrusted workspace, an unsaved file) a ``RequestFailed`` error with the reason.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from tclint.server.convert import path_to_uri
from tclint.server.documents import uri_to_path
from tclint.server.protocol import current_command, current_request
from tclint.server.scheduler import URGENT

# a runtime import: pygls resolves the command handlers' annotations (the module is only imported
# from server.create_server, after tclint.server.server has loaded)
from tclint.server.server import TclintServer

if TYPE_CHECKING:
    from tclint.server.server import Published

log = logging.getLogger("tclint.server")
REQUEST_FAILED = -32803


class RequestFailed(JsonRpcException):
    CODE = REQUEST_FAILED
    MESSAGE = "Request failed"


def target_for_line(pub: Published, line: int) -> str | None:
    """The probe target (``Qualname`` the probe can import) holding 1-based ``line``."""
    best: tuple[int, int, str] | None = None
    for start, end, target in pub.targets:
        if start <= line <= end and (best is None or start > best[0] or (start == best[0] and end < best[1])):
            best = (start, end, target)
    return best[2] if best else None


def _one_arg(args: tuple[Any, ...], command: str, need_position: bool) -> tuple[str, types.Position | None]:
    if len(args) != 1 or not isinstance(args[0], dict):
        raise JsonRpcInvalidParams(
            message=f'{command} expects one argument {{"uri": ..., "position": ...}}, got {list(args)!r}'[
                :300
            ]
        )
    arg = args[0]
    uri = arg.get("uri")
    if not isinstance(uri, str) or not uri:
        raise JsonRpcInvalidParams(message=f"{command}: `uri` must be a string")
    pos = arg.get("position")
    if pos is None and not need_position:
        return uri, None
    if (
        not isinstance(pos, dict)
        or not isinstance(pos.get("line"), int)
        or not isinstance(pos.get("character"), int)
        or isinstance(pos.get("line"), bool)
        or pos["line"] < 0
        or pos["character"] < 0
    ):
        raise JsonRpcInvalidParams(
            message=f'{command}: `position` must be {{"line": int >= 0, "character": int >= 0}}'
        )
    return uri, types.Position(line=pos["line"], character=pos["character"])


def register(ls: TclintServer) -> None:
    @ls.command("tclint.probe")
    async def probe(ls: TclintServer, *args: Any) -> Any:
        uri, pos = _one_arg(args, "tclint.probe", need_position=True)
        return await run_probe(ls, uri, pos)

    @ls.command("tclint.probeFile")
    async def probe_file(ls: TclintServer, *args: Any) -> Any:
        uri, _pos = _one_arg(args, "tclint.probeFile", need_position=False)
        return await run_probe(ls, uri, None)

    @ls.command("tclint.createProbeInputs")
    async def create_inputs(ls: TclintServer, *args: Any) -> Any:
        uri, pos = _one_arg(args, "tclint.createProbeInputs", need_position=True)
        assert pos is not None  # need_position=True: _one_arg raises without one
        return await create_probe_inputs(ls, uri, pos)

    @ls.command("tclint.restart")
    async def restart(ls: TclintServer, *args: Any) -> Any:
        await restart_server(ls)
        return {"restarted": True}


def _checked_path(ls: TclintServer, uri: str) -> str:
    path = uri_to_path(uri)
    if path is None:
        raise RequestFailed(message=f"the probe runs files on disk; {uri} is not a file: save it first")
    if not os.path.isfile(path):
        raise RequestFailed(message=f"{path}: no such file (save it first: the probe runs the file on disk)")
    editor = ls.editor_for_path(path)
    if not editor.trusted:
        raise RequestFailed(message="the probe runs this workspace's code: trust the workspace first")
    if not editor.probe.enable:
        raise RequestFailed(message="probing is disabled (tclint.probe.enable is false)")
    return path


async def _resolve(ls: TclintServer, path: str, pos: types.Position | None) -> tuple[str | None, Any, str]:
    """(target qualname or None for program mode, ProbeOptions, project root) on the lint thread."""
    from tclint.runtime_probe.api import options_for
    from tclint.server.entries import probe_target

    editor = ls.editor_for_path(path)
    doc = ls.docs.by_path(path)
    text = doc.text if doc is not None else None
    encoding = ls.encoding

    def job() -> tuple[str | None, Any, str]:
        root = ls.ws.root_for(path)
        settings = root.settings_for(path)
        target = None
        if pos is not None:
            facts = root.current_facts(path)
            if facts is None or facts.error is not None:
                root.analyze_disk(path)
                facts = root.disk.get(path, (None, None))[1]
            if facts is not None and facts.error is None:
                from tclint.server.positions import Lines

                line, _col = (
                    Lines.of(text).from_lsp(pos, encoding) if text is not None else (pos.line, pos.character)
                )
                target = probe_target(facts, line + 1)
        overrides: dict[str, Any] = {}
        in_file = dict(settings.probe or {})
        file_first = editor.preference == "filesystemFirst"
        if editor.probe.timeout is not None and not (file_first and "timeout" in in_file):
            overrides["timeout"] = editor.probe.timeout
        if editor.probe.interpreter and not (file_first and "python" in in_file):
            overrides["python"] = editor.probe.interpreter
        options = options_for(path, root.resolver, **overrides)
        return target, options, root.path

    return await ls.run_job(job, URGENT)


def _stop_on_cancel(loop: asyncio.AbstractEventLoop, cancel: threading.Event) -> None:
    """Stop the probe when the client cancels the request ($/cancelRequest)."""
    outer = current_request.get()
    task = asyncio.current_task()
    if outer is None or task is None:
        return

    def stop() -> None:
        cancel.set()
        if not task.done():
            task.cancel()

    def done(fut: Any) -> None:
        if fut.cancelled():
            loop.call_soon_threadsafe(stop)

    outer.add_done_callback(done)


async def _progress_token(ls: TclintServer) -> Any:
    params = current_command.get()
    token = getattr(params, "work_done_token", None) if params is not None else None
    if token is not None:
        return token
    window = getattr(ls.capabilities, "window", None)
    if not getattr(window, "work_done_progress", False):
        return None
    token = f"tclint-probe-{uuid.uuid4().hex[:12]}"
    try:
        await asyncio.wait_for(ls.work_done_progress.create_async(token), timeout=10)
    except Exception as exc:
        log.warning("cannot create progress: %s", exc)
        return None
    return token


async def run_probe(ls: TclintServer, uri: str, pos: types.Position | None) -> Any:  # noqa: C901 - long, not split yet (issue 16)
    from tclint.runtime_probe import api
    from tclint.server.probe import ProbeManager, summary_text

    path = _checked_path(ls, uri)
    if ls.probes is None:
        ls.probes = ProbeManager()
    manager = ls.probes
    target, options, root_path = await _resolve(ls, path, pos)
    what = f"{os.path.basename(path)}::{target}" if target else f"{os.path.basename(path)} (program)"
    loop = asyncio.get_running_loop()
    cancel = threading.Event()
    manager.running.add(cancel)
    _stop_on_cancel(loop, cancel)
    token = await _progress_token(ls)
    if token is not None:
        ls.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(title="tclint probe", message=what, cancellable=True, percentage=0),
        )
        fut = ls.work_done_progress.tokens.get(token)
        if fut is not None:
            fut.add_done_callback(lambda f: cancel.set() if f.cancelled() else None)

    def progress(p: Any) -> None:
        if token is None:
            return
        pct = int(max(0.0, min(1.0, p.fraction)) * 100) if isinstance(p.fraction, (int, float)) else None

        def send() -> None:
            try:
                ls.work_done_progress.report(
                    token, types.WorkDoneProgressReport(message=str(p.message)[:200], percentage=pct)
                )
            except Exception:
                pass

        loop.call_soon_threadsafe(send)

    def work() -> Any:
        pool = manager.pool()
        if target is not None:
            return api.probe_function(
                f"{path}::{target}", options=options, pool=pool, progress=progress, cancel=cancel
            )
        return api.probe_program(
            path, options=options, pool=pool, progress=progress, cancel=cancel, cwd=root_path
        )

    future = loop.run_in_executor(None, work)
    end_message = "failed"
    try:
        try:
            report = await asyncio.shield(future)
        except asyncio.CancelledError:
            cancel.set()
            end_message = "cancelled"
            try:
                await asyncio.wait_for(asyncio.shield(future), timeout=15)
            except Exception:
                pass
            raise
        except api.ProbeUsageError as exc:
            raise JsonRpcInvalidParams(message=f"tclint.probe: {exc}") from None
        except Exception as exc:  # a failed probe never takes the server down
            log.exception("probe failed")
            raise RequestFailed(message=f"the probe failed: {type(exc).__name__}: {exc}") from None
        summary = summary_text(report)
        end_message = summary
        merged = await _record(ls, path, target, report, summary)
        payload = report.to_json(merged)
        payload["summary"] = summary
        payload["target"] = report.target
        if _unsaved(ls, path):
            payload["note"] = "the file has unsaved changes: the probe ran the version on disk"
        return payload
    finally:
        manager.running.discard(cancel)
        if token is not None:
            try:
                ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=end_message))
            except Exception:
                pass


def _unsaved(ls: TclintServer, path: str) -> bool:
    doc = ls.docs.by_path(path)
    if doc is None:
        return False
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as fh:
            return fh.read() != doc.text
    except OSError:
        return True


async def _record(ls: TclintServer, path: str, target: str | None, report: Any, summary: str) -> list[Any]:
    """Merge the probe's findings with the static ones, store them, re-publish affected files."""
    from tclint.runtime_probe.api import merge

    manager = ls.probes
    files = {os.path.realpath(os.path.abspath(f)) for f in [path, *report.files] if f}
    for d in report.diagnostics():
        files.add(os.path.realpath(os.path.abspath(d.path)))

    def disk_text(p: str) -> str | None:
        try:
            with open(p, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError:
            return None

    def job() -> list[Any]:
        static: list[Any] = []
        for f in sorted(files):
            if not os.path.isfile(f):
                continue
            state = ls.ws.docs.get(f)
            if state is not None:
                static.extend(d for d in state.diagnostics if d.origin.value == "static")
            else:
                static.extend(ls.ws.disk_diagnostics(f).diagnostics)
        merged = merge(static, report)
        texts = {f: disk_text(f) for f in files}
        span = None
        if target is not None:
            root = ls.ws.root_for(path)
            facts = root.current_facts(path)
            fn = facts.functions.get(target) if facts is not None else None
            cls = facts.classes.get(target) if facts is not None and fn is None else None
            loc = fn.loc if fn is not None else cls.loc if cls is not None else None
            span = (loc.line, loc.end_line) if loc is not None else (1, 1)
        else:
            span = (1, 1)
        manager.store.record(merged, texts, (os.path.realpath(path), target or "", summary, span[0], span[1]))
        manager.refresh_titles()
        return merged

    merged = await ls.run_job(job, URGENT)
    for doc in ls.docs:
        if doc.path is not None and os.path.realpath(doc.path) in files:
            ls.schedule(doc.uri, 0)
    return merged


async def create_probe_inputs(ls: TclintServer, uri: str, pos: types.Position) -> Any:
    from tclint.runtime_probe import api

    path = _checked_path(ls, uri)
    target, _options, _root = await _resolve(ls, path, pos)
    if target is None:
        raise RequestFailed(
            message="put the cursor inside a function, method or nn.Module class to create its probe inputs"
        )
    try:
        stub_path, written = await asyncio.get_running_loop().run_in_executor(
            None, api.write_inputs_stub, f"{path}::{target}"
        )
    except api.ProbeUsageError as exc:
        raise JsonRpcInvalidParams(message=f"tclint.createProbeInputs: {exc}") from None
    stub_uri = path_to_uri(stub_path)
    window = getattr(ls.capabilities, "window", None)
    if getattr(getattr(window, "show_document", None), "support", False):
        try:
            await asyncio.wait_for(
                ls.window_show_document_async(types.ShowDocumentParams(uri=stub_uri, take_focus=True)),
                timeout=10,
            )
        except Exception as exc:
            log.warning("cannot show %s: %s", stub_uri, exc)
    return {
        "path": stub_path,
        "uri": stub_uri,
        "written": written,
        "target": f"{os.path.basename(path)}::{target}",
    }


async def restart_server(ls: TclintServer) -> None:
    """Forget everything derived (facts, projects, probe workers) and start over."""
    from tclint.server.workspace import Workspace

    for handle in list(ls.timers.values()):
        handle.cancel()
    ls.timers.clear()
    if ls.probes is not None:
        ls.probes.restart()
    folders = list(ls.folders)
    settings = dict(ls.folder_settings)

    def job() -> None:
        ws = Workspace(on_config_error=ls._config_error_from_thread)
        ws.set_folders(folders)
        ws.set_editor(settings)
        for folder in folders:
            ws.root_for(folder)
        ls.ws = ws

    await ls.run_job(job, URGENT)
    ls._root_generation.clear()
    ls.shown_errors.clear()
    ls.published.clear()
    await ls.pull_configuration()
    ls.wake_indexer()
    ls.relint_all()
