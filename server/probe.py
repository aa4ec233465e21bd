"""The probe in the editor: run it on request, keep its findings next to the static ones.

Only an explicit command runs the probe (``tclint.probe``, ``tclint.probeFile``, a code lens):
linting never imports or executes the user's code.  Probes run in the probe's warm worker pool
(``tclint.runtime_probe.api.ProbePool``), from a thread of their own so the server keeps
answering; progress goes to the client as work-done progress, and cancelling the request (or the
progress) stops the probe.

``ProbeStore`` (lint thread) keeps each file's probe findings with the text they were computed on.
Every new analysis of the file maps them through the edit: findings on untouched lines move with
their line, findings (and confirmations) on edited lines are marked stale.  Static diagnostics the
probe confirmed (``runtime_probe.merge``) keep their mark while their line is untouched.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field, replace
from typing import Any

from tclint.rules.model import Diagnostic, Origin
from tclint.server.incremental import diff_lines, split_lines
from tclint.server.workspace import shift_diagnostic

log = logging.getLogger("tclint.server")


def summary_text(report: Any) -> str:
    """ "2 graphs · 1 break · 3 compiles"; the verdict comes first when something went wrong
    ("raised RuntimeError · 0 graphs · ...", "1 hard error · ...", "no graph produced · ...")."""
    compiles = [c for c in report.compiles if c.get("kind") != "limit-refused"]
    graphs = sum(int(c.get("graphs") or 0) for c in compiles)
    breaks = len(report.graph_breaks)
    parts = [
        f"{graphs} graph{'s' if graphs != 1 else ''}",
        f"{breaks} break{'s' if breaks != 1 else ''}",
        f"{len(compiles)} compile{'s' if len(compiles) != 1 else ''}",
    ]
    recompiles = sum(1 for c in compiles if c.get("kind") == "recompile")
    if recompiles:
        parts.append(f"{recompiles} recompile{'s' if recompiles != 1 else ''}")
    headline = report.headline()
    if headline and (
        not report.compiles or report.status in ("need-inputs", "inputs-rejected", "inputs-error")
    ):
        return headline  # nothing ran compiled: counts of zero would read as a clean result
    return " · ".join([headline, *parts] if headline else parts)


@dataclass
class FileFindings:
    text: str | None  # the text positions refer to (None: the file on disk, not yet mapped)
    probe: list[Diagnostic] = field(default_factory=list)
    confirmed: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)  # (code, line) -> extra


@dataclass
class Summary:
    text: str
    start: int
    end: int
    stale: bool = False


class ProbeStore:
    """Probe findings per file (lint thread only)."""

    def __init__(self) -> None:
        self.files: dict[str, FileFindings] = {}
        self.summaries: dict[str, dict[str, Summary]] = {}

    def record(
        self,
        merged: list[Diagnostic],
        texts: dict[str, str | None],
        summary: tuple[str, str, str, int, int] | None,
    ) -> list[str]:
        """Store a probe's merged diagnostics; the files that now have findings."""
        by_file: dict[str, FileFindings] = {}
        for d in merged:
            path = os.path.realpath(os.path.abspath(d.path))
            entry = by_file.get(path)
            if entry is None:
                entry = by_file[path] = FileFindings(texts.get(path))
            if d.origin is Origin.PROBE:
                entry.probe.append(d)
            elif d.extra.get("confirmed"):
                entry.confirmed[(d.code, d.span.start.line)] = {
                    k: d.extra[k] for k in ("confirmed", "hits", "confirmed_by") if k in d.extra
                }
        for path in texts:
            by_file.setdefault(path, FileFindings(texts.get(path)))
        self.files.update(by_file)
        if summary is not None:
            path, target, text, start, end = summary
            self.summaries.setdefault(path, {})[target] = Summary(text, start, end)
        return sorted(by_file)

    def apply(self, path: str, text: str, static: list[Diagnostic]) -> list[Diagnostic]:
        """``static`` with confirmations marked, plus the probe's findings, mapped to ``text``."""
        key = os.path.realpath(os.path.abspath(path))
        found = self.files.get(key)
        log.debug(
            "probe store apply %s: %s", key, None if found is None else (len(found.probe), found.confirmed)
        )
        if found is None:
            return static
        if found.text is None:
            found.text = text
        if found.text != text:
            self._move(key, found, text)
        out = []
        for d in static:
            extra = found.confirmed.get((d.code, d.span.start.line))
            out.append(d.with_(extra={**d.extra, **extra}) if extra else d)
        out.extend(replace(d, path=path) for d in found.probe)
        out.sort(key=lambda d: d.sort_key())
        return out

    def _move(self, key: str, found: FileFindings, text: str) -> None:
        old_lines = split_lines(found.text or "")
        new_lines = split_lines(text)
        p, s = diff_lines(old_lines, new_lines)
        first, last, delta = p + 1, len(old_lines) - s, len(new_lines) - len(old_lines)
        moved = []
        touched = False
        for d in found.probe:
            if d.span.end.line < first:
                moved.append(d)
            elif d.span.start.line > last:
                moved.append(shift_diagnostic(d, delta, last))
            else:
                moved.append(d.with_(extra={**d.extra, "stale": True}))
                touched = True
        found.probe = moved
        confirmed = {}
        for (code, line), extra in found.confirmed.items():
            if line < first:
                confirmed[(code, line)] = extra
            elif line > last:
                confirmed[(code, line + delta)] = extra
        found.confirmed = confirmed
        for summary in self.summaries.get(key, {}).values():
            if touched:
                summary.stale = True  # a line the probe reported on changed
            if summary.end < first:
                continue
            if summary.start > last:
                summary.start += delta
                summary.end += delta
            else:
                summary.stale = True
        found.text = text

    def summary_titles(self, path: str) -> dict[str, str]:
        key = os.path.realpath(os.path.abspath(path))
        return {t: s.text + (" (stale)" if s.stale else "") for t, s in self.summaries.get(key, {}).items()}


class ProbeManager:
    """The warm probe pool and the running probes (created on the first probe request)."""

    def __init__(self) -> None:
        self.store = ProbeStore()
        self._pool: Any = None
        self._lock = threading.Lock()
        self._titles: dict[str, dict[str, str]] = {}  # path -> lens titles (read by the loop)
        self.running: set[threading.Event] = set()

    def pool(self) -> Any:
        with self._lock:
            if self._pool is None:
                from tclint.runtime_probe.api import ProbePool

                self._pool = ProbePool()
            return self._pool

    def summaries(self, path: str) -> dict[str, str]:
        return self._titles.get(os.path.realpath(os.path.abspath(path)), {})

    def refresh_titles(self) -> None:
        """Copy the lens titles out of the store (lint thread) for the event loop."""
        self._titles = {path: self.store.summary_titles(path) for path in self.store.summaries}

    def cancel_all(self) -> None:
        for event in list(self.running):
            event.set()
        if self._pool is not None:
            try:
                self._pool.cancel_all()
            except Exception:
                log.exception("cancelling probes failed")

    def stop(self) -> None:
        self.cancel_all()
        if self._pool is not None:
            try:
                self._pool.stop()
            except Exception:
                log.exception("stopping the probe pool failed")
            self._pool = None

    def restart(self) -> None:
        self.cancel_all()
        if self._pool is not None:
            try:
                self._pool.restart()
            except Exception:
                log.exception("restarting the probe pool failed")
