"""The lint thread: one thread runs every analysis, most urgent first.

Why one thread: the analysis state (``workspace.Workspace``) is then never shared, so it needs no
locks; and on a 2-core machine a second analysis thread would only fight the first for the GIL.
Why not the event loop: an analysis takes milliseconds to a second, and meanwhile the loop must
keep reading the client's messages (the next keystroke, a cancellation, a hover).

Jobs carry a priority (the document being typed in first, background indexing last) and an
optional key: submitting a job with the key of one still queued replaces it (a newer version of
the same document makes the older analysis pointless -- results for stale versions would be
dropped anyway).  Results come back to the event loop as asyncio futures.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("tclint.server")

URGENT = 0  # the document being edited / a request waiting for an answer
NORMAL = 1  # other open documents, configuration reloads
BACKGROUND = 2  # indexing the project


class _Job:
    __slots__ = ("fn", "future", "key", "dropped")

    def __init__(self, fn: Callable[[], Any], future: asyncio.Future[Any], key: Any) -> None:
        self.fn = fn
        self.future = future
        self.key = key
        self.dropped = False


class LintThread:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._heap: list[tuple[int, int, _Job]] = []
        self._keys: dict[Any, _Job] = {}
        self._cond = threading.Condition()
        self._seq = itertools.count()
        self._stopped = False
        self.busy = False
        self._thread = threading.Thread(target=self._run, name="tclint-lint", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[[], Any], priority: int = NORMAL, key: Any = None) -> asyncio.Future[Any]:
        """Run ``fn`` on the lint thread; a future (on the loop) for its result."""
        future: asyncio.Future[Any] = self.loop.create_future()
        job = _Job(fn, future, key)
        with self._cond:
            if key is not None:
                old = self._keys.get(key)
                if old is not None:
                    old.dropped = True
                    self.loop.call_soon(_cancel, old.future)
                self._keys[key] = job
            heapq.heappush(self._heap, (priority, next(self._seq), job))
            self._cond.notify()
        return future

    def pending(self, priority: int | None = None) -> int:
        with self._cond:
            return sum(1 for p, _s, j in self._heap if not j.dropped and (priority is None or p <= priority))

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            for _p, _s, job in self._heap:
                job.dropped = True
            self._heap.clear()
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                _p, _s, job = heapq.heappop(self._heap)
                if job.key is not None and self._keys.get(job.key) is job:
                    del self._keys[job.key]
                if job.dropped:
                    continue
                self.busy = True
            try:
                result = job.fn()
            except BaseException as exc:  # delivered to the awaiting handler, never kills the thread
                self._deliver(job.future, None, exc)
            else:
                self._deliver(job.future, result, None)
            finally:
                self.busy = False

    def _deliver(self, future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
        def done() -> None:
            if future.done():
                return
            if exc is not None:
                future.set_exception(exc)
            else:
                future.set_result(result)

        try:
            self.loop.call_soon_threadsafe(done)
        except RuntimeError:  # the loop is closed: the server is exiting
            pass


def _cancel(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.cancel()
