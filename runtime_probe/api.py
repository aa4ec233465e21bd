"""The runtime probe's Python API: what the language server (and the CLI) build on.

Nothing here imports torch: probes run in a worker process started with the *user's* interpreter
(``ProbeOptions.python``, from ``[tool.tclint.probe] python``; default ``sys.executable``).

Quick use::

    from tclint.runtime_probe.api import ProbePool, probe_function, probe_program, merge

    pool = ProbePool()                 # warm workers, one per (python, env); start() pre-warms
    pool.start()                       # optional, returns at once (imports torch in background)
    report = probe_function("pkg/model.py::Block.forward", pool=pool,
                            progress=lambda p: print(p.message, p.fraction), cancel=event)
    diags = merge(static_diags, report)            # list[tclint.rules.model.Diagnostic]
    payload = report.to_json()                     # JSON-able dict
    pool.stop()                                    # on server shutdown

Functions (all blocking; run them in a thread or executor; every one honours ``cancel``):

``probe_function(target, *, options=None, pool=None, progress=None, cancel=None, resolver=None)``
    -> ProbeReport.  ``target`` is ``"path/file.py::function"``, ``"...::Class"`` (an
    ``nn.Module`` / callable class: instantiated, then called) or ``"...::Class.method"``.
    Inputs come from a declared inputs file (``inputs.py`` documents where, ``worker_inputs.py``
    the format), else from the annotations.  Each call is run eagerly and compiled and compared
    (``report.correctness``).  Raises ``ProbeUsageError`` for a target that does not exist (the
    message lists what the file defines).  When no inputs can be built the report has
    ``status == "need-inputs"`` and ``message`` says exactly what to write (with a stub); use
    ``write_inputs_stub(target)`` to create it (the CLI's ``--init-inputs``).

``probe_program(target, args=(), *, module=False, options=None, pool=None, progress=None,
cancel=None, cwd=None, resolver=None)`` -> ProbeReport.  Runs ``python target args...`` (or
    ``python -m target args...`` with ``module=True``, e.g. ``probe_program("pytest",
    ["tests/x.py", "-k", "y"], module=True)``) with every ``torch.compile`` routed to the probe's
    backend.  ``options.max_calls`` stops it after N calls of compiled code.

``merge(static, report)`` -> list[Diagnostic].  Static diagnostics (from ``Linter``) whose lines
    hold a break the probe saw with one of the rule's GB ids get ``extra["confirmed"] = True``
    (and ``extra["hits"]``); the probe's duplicate TC901 is dropped.  Static recompile-family
    findings on a failed guard's line are confirmed likewise.  Static findings without probe
    evidence are returned unchanged.  Probe findings no static rule predicted carry
    ``extra["unpredicted"] = True``.  All probe diagnostics have ``origin == Origin.PROBE`` and
    codes TC901 (graph break; ``extra["hits"]``), TC902 (recompile, on the guard's source line),
    TC903 (recompile limit hit, GB0039), TC904 (hard error), TC905 (eager/compiled mismatch),
    TC906 (the run did not complete: timeout, crash, memory cap, exception, exit status).

``static_diagnostics(paths, resolver=None)`` -> list[Diagnostic]: the linter's findings for the
    given files (what the CLI merges by default).

``write_inputs_stub(target, path=None)`` -> (path, written: bool).

Objects:

``ProbeOptions`` (``options.py``): python, backend ("eager"), timeout (s, 120), memory_limit
    (bytes; default 3/4 of RAM), max_calls, map_cuda_to_cpu, device ("auto"), env, compile_mode,
    fullgraph, dynamic, dynamo (torch._dynamo.config patches), inputs (files), cwd,
    stream_output.  ``options_for(path, resolver=None, **overrides)`` reads
    ``[tool.tclint.probe]`` / ``[tool.tclint.dynamo]`` for ``path``; ``opts.with_(**changes)``.

``ProbePool(idle_timeout=900.0)``: ``start(python=None, env=None, wait=False)`` pre-warms a
    worker (``wait=True`` blocks until torch is imported and returns its ``ready`` info);
    ``stop()`` shuts every worker down; ``cancel_all()`` cancels running probes; ``restart()``
    drops the warm workers (after the user changed their environment).  A probe in a warm worker
    runs in a fresh fork of it: state never leaks between probes, a crash kills only that fork.
    One probe per worker at a time: a second concurrent request waits (cancellably).  Without a
    pool, each call starts a fresh worker (seconds of ``import torch``).

``ProbeReport`` (``report.py``): ``mode``, ``target``, ``status`` ("ok", "stopped", "exit",
    "exception", "timeout", "memory", "crashed", "exited", "cancelled", "need-inputs",
    "inputs-rejected" (every synthesised call raised eagerly: nothing was compiled),
    "inputs-error", "probe-error", "worker-died", "worker-error"), ``message``, ``environment``,
    ``correctness``, ``compiles``, ``frames``, ``recompile_limit_hits``, ``graph_breaks`` (ranked
    by hits), ``errors``, ``run``, ``inputs``, ``files`` (user files with findings);
    ``.diagnostics()``, ``.to_json()``, ``ProbeReport.from_json(d)``, ``.has_problems``,
    ``.completed``.

``ProbeProgress``: what ``progress`` receives: ``phase`` ("starting", "running", "call",
    "finishing", or "output": then ``message`` is a chunk of the probed code's stdout/stderr,
    sent only with ``options.stream_output``), ``message`` (one line for a status bar),
    ``fraction`` (0..1 in function mode, else None) and the raw worker ``event``.

Errors: ``ProbeUsageError`` (bad target: show it to the user), ``ProbeWorkerError`` is never
raised: a worker that cannot start yields a report with ``status == "worker-error"``.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tclint.rules.config import ConfigResolver
from tclint.rules.model import Diagnostic
from tclint.runtime_probe import inputs as inputs_mod
from tclint.runtime_probe.merge import merge
from tclint.runtime_probe.options import ProbeOptions, options_for
from tclint.runtime_probe.protocol import function_spec, program_spec
from tclint.runtime_probe.report import ProbeReport, build_report
from tclint.runtime_probe.runner import Outcome, WorkerError, WorkerProcess, run_cold
from tclint.runtime_probe.targets import Target, TargetError, parse_target

__all__ = [
    "ProbeOptions", "ProbePool", "ProbeProgress", "ProbeReport", "ProbeUsageError", "merge", "options_for",
    "probe_function", "probe_program", "static_diagnostics", "write_inputs_stub",
]  # fmt: skip


class ProbeUsageError(ValueError):
    """The request cannot be run as given (unknown target, bad arguments)."""


@dataclass(frozen=True)
class ProbeProgress:
    phase: str
    message: str
    fraction: float | None
    event: dict[str, Any]


ProgressFn = Callable[[ProbeProgress], None]


def _progress_adapter(progress: ProgressFn | None) -> Callable[[dict[str, Any]], None] | None:
    if progress is None:
        return None

    def on_event(event: dict[str, Any]) -> None:
        kind = event.get("t")
        if kind == "start":
            progress(ProbeProgress("running", "running the probed code", None, event))
        elif kind == "progress" and "call" in event:
            n, of = event["call"], event.get("of") or 1
            progress(
                ProbeProgress(
                    "call", f"call {n}/{of} {event.get('label') or ''}".rstrip(), (n - 1) / of, event
                )
            )
        elif kind == "progress" and "calls" in event:
            msg = f"{event['calls']:,} compiled calls, {event['compiles']} compiles, {event['breaks']} breaks"
            progress(ProbeProgress("running", msg, None, event))
        elif kind == "result":
            progress(ProbeProgress("finishing", "collecting results", 1.0, event))
        elif kind == "output":  # only with options.stream_output
            progress(ProbeProgress("output", event.get("data", ""), None, event))

    return on_event


class ProbePool:
    """Warm workers (torch already imported), one per (python, env)."""

    def __init__(self, idle_timeout: float = 900.0) -> None:
        self.idle_timeout = idle_timeout
        self._workers: dict[tuple[str, tuple[tuple[str, str], ...]], WorkerProcess] = {}
        self._last_used: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        self._lock = threading.Lock()
        self._cancels: set[threading.Event] = set()

    @staticmethod
    def _key(python: str | None, env: dict[str, str] | None) -> tuple[str, tuple[tuple[str, str], ...]]:
        """Workers are shared unless the interpreter or an import-time variable differs; other
        variables are set in each probe's fork (``spec["env"]``)."""
        import sys

        if not python:
            exe = sys.executable
        elif os.sep in python:
            exe = os.path.abspath(python)
        else:  # a command name: the same interpreter whatever the caller's folder
            exe = shutil.which(python) or python
        return (exe, tuple(sorted(import_env(env).items())))

    def worker(self, python: str | None = None, env: dict[str, str] | None = None) -> WorkerProcess:
        key = self._key(python, env)
        with self._lock:
            self._evict_idle(key)
            worker = self._workers.get(key)
            if worker is None:
                worker = self._workers[key] = WorkerProcess(key[0], dict(key[1]), warmup=True)
            self._last_used[key] = time.monotonic()
            return worker

    def _evict_idle(self, keep: Any) -> None:
        now = time.monotonic()
        for key, worker in list(self._workers.items()):
            if key != keep and now - self._last_used.get(key, now) > self.idle_timeout:
                worker.stop()
                del self._workers[key]

    def start(
        self, python: str | None = None, env: dict[str, str] | None = None, wait: bool = False
    ) -> dict[str, Any] | None:
        """Pre-warm the worker for ``python``.  ``wait=False`` returns at once."""
        worker = self.worker(python, env)
        if wait:
            return worker.start()
        threading.Thread(
            target=lambda: _quiet(worker.start), daemon=True, name="tclint-probe-prewarm"
        ).start()
        return None

    def run(
        self,
        spec: dict[str, Any],
        python: str | None,
        env: dict[str, str] | None,
        on_event: Callable[[dict[str, Any]], None] | None,
        cancel: threading.Event | None,
    ) -> Outcome:
        mine = threading.Event()
        with self._lock:
            self._cancels.add(mine)
        stop = _either(cancel, mine)
        try:
            return self.worker(python, env).run(spec, on_event, stop)
        finally:
            with self._lock:
                self._cancels.discard(mine)

    def cancel_all(self) -> None:
        with self._lock:
            for event in self._cancels:
                event.set()

    def restart(self) -> None:
        self.stop()

    def stop(self) -> None:
        self.cancel_all()
        with self._lock:
            workers = list(self._workers.values())
            self._workers.clear()
        for worker in workers:
            worker.stop()

    def __enter__(self) -> ProbePool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


IMPORT_TIME_PREFIXES = ("TORCH", "PYTORCH", "OMP_", "MKL_", "CUDA", "LD_", "PYTHON", "KMP_", "GOMP_")


def import_env(env: dict[str, str] | None) -> dict[str, str]:
    """The variables that matter when torch is imported (the rest apply per probe)."""
    return {k: v for k, v in (env or {}).items() if k.startswith(IMPORT_TIME_PREFIXES)}


def _quiet(fn: Callable[[], Any]) -> None:
    try:
        fn()
    except Exception:
        pass


class _Either(threading.Event):
    """Set when either of two events is (polled: the runner checks ``is_set`` every 50 ms)."""

    def __init__(self, a: threading.Event | None, b: threading.Event) -> None:
        super().__init__()
        self._a, self._b = a, b

    def is_set(self) -> bool:
        return super().is_set() or self._b.is_set() or (self._a is not None and self._a.is_set())


def _either(a: threading.Event | None, b: threading.Event) -> threading.Event:
    return _Either(a, b)


def _execute(
    spec: dict[str, Any],
    options: ProbeOptions,
    target: str,
    pool: ProbePool | None,
    progress: ProgressFn | None,
    cancel: threading.Event | None,
) -> ProbeReport:
    on_event = _progress_adapter(progress)
    if progress is not None:
        progress(
            ProbeProgress(
                "starting",
                "starting the probe worker" if pool is None else "waiting for the warm worker",
                None,
                {},
            )
        )
    try:
        if pool is not None:
            outcome = pool.run(spec, options.python, options.env, on_event, cancel)
        else:
            outcome = run_cold(spec, options.python, options.env, on_event, cancel)
    except WorkerError as exc:
        cancelled = cancel is not None and cancel.is_set()
        return ProbeReport(
            mode=spec["mode"],
            target=target,
            status="cancelled" if cancelled else "worker-error",
            message=str(exc),
            run={"status": "worker-error"},
        )
    return build_report(outcome, spec, target)


def probe_function(
    target: str | Target,
    *,
    options: ProbeOptions | None = None,
    pool: ProbePool | None = None,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    resolver: ConfigResolver | None = None,
) -> ProbeReport:
    """Probe ``file.py::function`` / ``::Class`` / ``::Class.method`` (see the module docstring)."""
    try:
        tgt = target if isinstance(target, Target) else parse_target(target)
    except TargetError as exc:
        raise ProbeUsageError(str(exc)) from None
    options = options or options_for(tgt.file, resolver)
    searched = inputs_mod.candidate_files(tgt.file, options.inputs)
    spec = function_spec(tgt.file, tgt.qualname, tgt.module, tgt.import_root, searched, options)
    report = _execute(spec, options, tgt.display, pool, progress, cancel)
    if report.status == "need-inputs":
        report.message = inputs_mod.missing_inputs_help(tgt, searched, report.message)
    elif report.status == "inputs-rejected":
        report.message += (
            f". Declare the real inputs: `tclint probe --init-inputs {tgt.display}` writes a stub"
        )
    report.target_location = {"file": tgt.file, "line": tgt.line}
    return report


def probe_program(
    target: str,
    args: Sequence[str] = (),
    *,
    module: bool = False,
    options: ProbeOptions | None = None,
    pool: ProbePool | None = None,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    cwd: str | None = None,
    resolver: ConfigResolver | None = None,
) -> ProbeReport:
    """Probe ``python target args`` (``module=True``: ``python -m target args``)."""
    if not module and not os.path.isfile(target):
        raise ProbeUsageError(f"{target}: no such file")
    options = options or options_for(target if not module else None, resolver)
    spec = program_spec("module" if module else "script", target, list(args), options, cwd)
    shown = (f"-m {target}" if module else target) + ("" if not args else " " + " ".join(args))
    report = _execute(spec, options, shown, pool, progress, cancel)
    if not module:
        report.target_location = {"file": os.path.abspath(target), "line": 1}
    return report


def static_diagnostics(paths: Sequence[str], resolver: ConfigResolver | None = None) -> list[Diagnostic]:
    """The static linter's findings for ``paths`` (project-wide regions; probe files only)."""
    from tclint.rules.engine import Linter

    existing = [p for p in paths if p and os.path.isfile(p)]
    if not existing:
        return []
    result = Linter(resolver or ConfigResolver()).lint_paths(existing, force_exclude=False)
    return list(result.diagnostics)


def write_inputs_stub(target: str | Target, path: str | None = None) -> tuple[str, bool]:
    try:
        tgt = target if isinstance(target, Target) else parse_target(target)
    except TargetError as exc:
        raise ProbeUsageError(str(exc)) from None
    return inputs_mod.write_stub(tgt, path)
