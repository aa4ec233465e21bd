"""Parent side: start a worker process, send it probes, collect their events.

Never imports torch.  A :class:`WorkerProcess` is one ``worker.py`` fork server in the user's
interpreter, in a session of its own (so a terminal's Ctrl-C or the editor's signals do not hit
it).  The worker enforces each probe's deadline itself; the parent keeps a backstop (deadline +
grace, then it kills the worker's process group and the probe child's) so that nothing the user
code does can make the caller wait forever.  Events are read by a thread and routed by probe id.

The parent owns the worker's scratch folder (``/tmp/tclint-probe-*``, probes work below it) and
marks the worker's environment with a token that every process it starts inherits.  When the
worker ends in any way, SIGKILL included (user code can kill its own worker), the parent kills
every process carrying the token or still in the worker's session -- a daemon started with
``start_new_session=True`` is no longer in the worker's tree, but it carries the token -- and
removes the scratch folder.  A process that both leaves the session and clears its environment
before the worker dies is the one thing this cannot find.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tclint.runtime_probe.protocol import WORKER_PATH

START_TIMEOUT = 180.0  # importing torch on a loaded 2-core machine takes seconds, cold disks more
GRACE = 10.0
TOKEN_VAR = "TCLINT_PROBE_TOKEN"  # marks every process of one worker's tree (inherited by default)


def _environ_has(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return marker in fh.read().split(b"\0")
    except OSError:
        return False


def _session_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return None if fields[0] in (b"Z", b"X") else int(fields[3])
    except (OSError, IndexError, ValueError):
        return None


def tree_members(token: str | None, session: int | None) -> list[int]:
    """Live processes of one worker's tree: those carrying its token in their environment (a
    daemon that left the session with ``start_new_session=True`` or ``setsid`` still has it) and
    those still in its session.  Linux only (``/proc``); elsewhere nothing."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    marker = f"{TOKEN_VAR}={token}".encode() if token else None
    me = os.getpid()
    out = []
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        pid = int(name)
        sid = _session_of(pid)
        if sid is None:
            continue
        if (session is not None and sid == session) or (marker is not None and _environ_has(pid, marker)):
            out.append(pid)
    return out


def kill_tree(token: str | None, session: int | None, rounds: int = 50) -> int:
    """SIGKILL every process of the tree until none is left (a process forking while it is killed
    is caught in a later round); how many were killed."""
    killed: set[int] = set()
    for _ in range(rounds):
        victims = tree_members(token, session)
        if not victims:
            break
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        time.sleep(0.02)
    return len(killed)


class WorkerError(Exception):
    """The worker could not be started or died; the message says why (stderr included)."""


@dataclass
class Outcome:
    """Everything one probe produced: its events in order and how it ended."""

    events: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    ready: dict[str, Any] | None = None
    parent_status: str | None = None  # set when the parent had to intervene (backstop, cancel)
    cold: bool = False
    scratch: str | None = None  # the worker's scratch folder (removed when the worker ends)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("t") == kind]

    @property
    def result(self) -> dict[str, Any] | None:
        found = self.of("result")
        return found[-1] if found else None


class WorkerProcess:
    """One fork server.  Thread-safe for one probe at a time (``run`` holds a lock)."""

    _ids = itertools.count(1)

    def __init__(
        self,
        python: str | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        warmup: bool = True,
    ) -> None:
        self.python = python or sys.executable
        self.env = dict(env or {})
        self.cwd = cwd
        self.warmup = warmup
        self.proc: subprocess.Popen[bytes] | None = None
        self.ready: dict[str, Any] | None = None
        self._ctl_w: int | None = None
        self._evt_r: int | None = None
        self._queues: dict[Any, queue.Queue[dict[str, Any] | None]] = {}
        self._general: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stderr: list[bytes] = []
        self._lock = threading.Lock()
        self._start_lock = threading.Lock()
        self._child_pid: int | None = None
        self.token: str | None = None  # in the environment of every process the worker starts
        self.scratch: str | None = None  # /tmp/tclint-probe-*: the worker's probes work below it
        self._session: int | None = None

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and self.ready is not None

    def start(self, timeout: float = START_TIMEOUT, cancel: threading.Event | None = None) -> dict[str, Any]:
        with self._start_lock:
            if self.alive:
                assert self.ready is not None
                return self.ready
            self._spawn()
            deadline = time.monotonic() + timeout
            while True:
                if cancel is not None and cancel.is_set():
                    self.stop()
                    raise WorkerError("cancelled while the worker was starting")
                try:
                    msg = self._general.get(timeout=0.1)
                except queue.Empty:
                    msg = None
                    if self.proc is not None and self.proc.poll() is not None and self._general.empty():
                        time.sleep(0.05)
                        if self._general.empty():
                            message = self._death_message("the probe worker exited during start-up")
                            self.cleanup()
                            raise WorkerError(message) from None
                if msg is None:
                    if time.monotonic() > deadline:
                        self.stop()
                        raise WorkerError(
                            f"the probe worker did not start within {timeout:.0f} s ({self.python})"
                        )
                    continue
                if msg.get("t") == "ready":
                    self.ready = msg
                    return msg
                if msg.get("t") == "fatal":
                    self.stop()
                    raise WorkerError(msg.get("error") or "the probe worker failed to start")

    def _spawn(self) -> None:
        self.cleanup()  # what a previous worker of this object left (it may have been SIGKILLed)
        ctl_r, ctl_w = os.pipe()
        evt_r, evt_w = os.pipe()
        self.token = secrets.token_hex(12)
        self.scratch = tempfile.mkdtemp(prefix="tclint-probe-")
        env = {
            **os.environ,
            **self.env,
            "PYTHONBREAKPOINT": "0",
            "PYTHONUNBUFFERED": "1",
            TOKEN_VAR: self.token,
        }
        env.pop("PYTHONSTARTUP", None)
        args = [
            self.python,
            WORKER_PATH,
            "--serve",
            "--ctl-fd",
            str(ctl_r),
            "--evt-fd",
            str(evt_w),
            "--scratch",
            self.scratch,
        ]
        if not self.warmup:
            args.append("--no-warmup")
        try:
            self.proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(ctl_r, evt_w),
                env=env,
                cwd=self.cwd or None,
                start_new_session=True,
            )
        except OSError as exc:
            for fd in (ctl_r, ctl_w, evt_r, evt_w):
                os.close(fd)
            self.cleanup()
            raise WorkerError(
                f"cannot start the probe worker with {self.python}: {exc.strerror or exc}"
            ) from None
        self._session = self.proc.pid  # start_new_session: the worker leads a session of its own
        os.close(ctl_r)
        os.close(evt_w)
        self._ctl_w, self._evt_r = ctl_w, evt_r
        self._stderr = []
        self._general = queue.Queue()
        threading.Thread(
            target=self._read_events, args=(evt_r,), daemon=True, name="tclint-probe-events"
        ).start()
        threading.Thread(target=self._read_stderr, daemon=True, name="tclint-probe-stderr").start()

    def _read_events(self, fd: int) -> None:
        buf = b""
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if not data:
                break
            buf += data
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                if not raw.strip():
                    continue
                try:
                    msg = json.loads(raw)
                except ValueError:
                    continue
                target = self._queues.get(msg.get("id")) if msg.get("id") is not None else None
                (target or self._general).put(msg)
        for q in list(self._queues.values()):
            q.put(None)
        self._general.put(None)
        try:
            os.close(fd)
        except OSError:
            pass

    def _read_stderr(self) -> None:
        proc = self.proc
        if proc is None or proc.stderr is None:
            return
        total = 0
        for chunk in iter(lambda: proc.stderr.read1(65536) if proc.stderr else b"", b""):  # type: ignore[attr-defined]  # a BufferedReader
            total += len(chunk)
            self._stderr.append(chunk)
            while sum(len(c) for c in self._stderr) > 64 * 1024 and len(self._stderr) > 1:
                self._stderr.pop(0)

    def stderr_text(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def _death_message(self, what: str) -> str:
        code = self.proc.poll() if self.proc is not None else None
        err = self.stderr_text().strip()
        detail = f" (exit status {code})" if code is not None else ""
        return f"{what}{detail}" + (f":\n{err[-4000:]}" if err else "")

    def _send(self, obj: dict[str, Any]) -> bool:
        if self._ctl_w is None:
            return False
        try:
            os.write(self._ctl_w, (json.dumps(obj) + "\n").encode())
            return True
        except OSError:
            return False

    def stop(self, wait: float = 2.0) -> None:
        """Shut the worker down (and whatever it still runs)."""
        proc = self.proc
        if proc is None:
            return
        self._send({"op": "shutdown"})
        if self._ctl_w is not None:
            try:
                os.close(self._ctl_w)
            except OSError:
                pass
            self._ctl_w = None
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            self.kill()
        self.proc = None
        self.ready = None
        self.cleanup()

    def cleanup(self) -> int:
        """Kill whatever is left of the worker's process tree, whatever happened to the worker
        itself (a SIGKILLed worker cannot sweep: its daemons survive it), and remove its scratch
        folder; how many processes were killed."""
        if self.proc is not None and self.proc.poll() is None:
            return 0  # still running: it sweeps its own probes
        killed = kill_tree(self.token, self._session) if (self.token or self._session) else 0
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)
        self.token = self.scratch = self._session = None
        return killed

    def kill(self) -> None:
        """SIGKILL the worker's process group and the running probe's (the backstop)."""
        proc = self.proc
        groups = []
        if proc is not None:
            groups.append(proc.pid)
        if self._child_pid:
            groups.append(self._child_pid)
        for pgid in groups:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
        if proc is not None:
            try:
                proc.kill()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self._ctl_w is not None:
            try:
                os.close(self._ctl_w)
            except OSError:
                pass
            self._ctl_w = None
        self.proc = None
        self.ready = None
        self.cleanup()

    # -- probes ------------------------------------------------------------------------------------

    def run(
        self,
        spec: dict[str, Any],
        on_event: Callable[[dict[str, Any]], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Outcome:
        """Run one probe to its end.  Blocks; ``cancel`` stops it; ``on_event`` sees each event."""
        while not self._lock.acquire(timeout=0.1):  # another probe is running: wait, cancellably
            if cancel is not None and cancel.is_set():
                return Outcome(parent_status="cancelled", ready=self.ready)
        try:
            return self._run_locked(spec, on_event, cancel)
        finally:
            self._lock.release()

    def _run_locked(
        self,
        spec: dict[str, Any],
        on_event: Callable[[dict[str, Any]], None] | None,
        cancel: threading.Event | None,
    ) -> Outcome:
        self.start(cancel=cancel)
        probe_id = next(self._ids)
        q: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._queues[probe_id] = q
        outcome = Outcome(ready=self.ready, scratch=self.scratch)
        try:
            if not self._send({"op": "probe", "id": probe_id, "spec": spec}):
                raise WorkerError(self._death_message("the probe worker is not accepting requests"))
            backstop = time.monotonic() + float(spec.get("timeout") or 60.0) + GRACE
            cancel_sent_at: float | None = None
            while True:
                if cancel is not None and cancel.is_set() and cancel_sent_at is None:
                    self._send({"op": "cancel", "id": probe_id})
                    cancel_sent_at = time.monotonic()
                    outcome.parent_status = "cancelled"
                now = time.monotonic()
                if now > backstop or (cancel_sent_at is not None and now > cancel_sent_at + 3.0):
                    outcome.parent_status = outcome.parent_status or "timeout"
                    self.kill()
                    break
                try:
                    msg = q.get(timeout=0.05)
                except queue.Empty:
                    continue
                if msg is None:  # the worker died under us
                    outcome.parent_status = outcome.parent_status or "worker-died"
                    outcome.events.append(
                        {"t": "worker-died", "message": self._death_message("the probe worker died")}
                    )
                    self.kill()
                    break
                if msg.get("t") == "start":
                    self._child_pid = msg.get("pid")
                outcome.events.append(msg)
                if on_event is not None:
                    try:
                        on_event(msg)
                    except Exception:  # a broken progress callback must not lose the probe
                        pass
                if msg.get("t") == "end":
                    outcome.end = msg
                    break
        finally:
            self._queues.pop(probe_id, None)
            self._child_pid = None
        return outcome


def run_cold(
    spec: dict[str, Any],
    python: str | None = None,
    env: dict[str, str] | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    cancel: threading.Event | None = None,
) -> Outcome:
    """One probe in a fresh worker (the CLI): start, probe, stop."""
    worker = WorkerProcess(python, env, warmup=False)
    try:
        outcome = worker.run(spec, on_event, cancel)
        outcome.cold = True
        return outcome
    finally:
        worker.stop()
