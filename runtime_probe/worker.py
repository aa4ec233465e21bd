"""The probe worker: runs in the *user's* interpreter, needs only the standard library and torch.

It is started by file path (``python .../runtime_probe/worker.py --serve --ctl-fd R --evt-fd W
--scratch DIR``) so it works where tclint itself is not installed; ``DIR`` is the parent's scratch
folder for this worker (each probe works in a folder below it; the parent removes it whatever
happens to the worker, and the worker removes it when it finds the parent gone).  The process is a small fork server:

* it imports torch and ``torch._dynamo`` once (seconds), optionally warms Dynamo up, then waits
  for requests on the control pipe (JSON lines);
* each probe runs in a *fresh fork* of it, so Dynamo's caches, the user's modules and any damage
  user code does (``os.chdir``, monkeypatches, a segfault) die with that child;
* the server supervises the child: a deadline (and a ``faulthandler`` dump shortly before it, so
  a hang is reported with the stack it hung in), a memory cap (``RLIMIT_DATA`` for a clean
  allocation error, plus an RSS watchdog over the whole process tree), cancellation, and after
  the child ends it kills every process the child left behind: the server is a *child subreaper*,
  so even double-forked daemons come back to it.

Channels: user code owns stdout/stderr, so results never travel there.  The child writes JSON
lines to its own pipe, which the server relays on the event pipe (one writer, so lines never
interleave); the child's stdout/stderr go to a third pipe that the server drains (bounded head and
tail, optionally streamed).  stdin is ``/dev/null``, ``PYTHONBREAKPOINT=0``, the working
directory is a scratch folder (program mode: the caller's, as ``python script.py`` would have).

Messages to the parent: ``ready``, then per probe ``start``, the child's ``compile`` / ``break`` /
``progress`` / ``call`` / ``result`` events, optional ``output``, and finally ``end`` (how the
child finished).  ``protocol.py`` on the parent side documents every field.
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import select
import shutil
import signal
import struct
import sys
import tempfile
import time
import traceback
import types
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
PROTOCOL = 1
HEAD_BYTES = 16 * 1024
COUNTER_SLOTS = 65536  # shared 8-byte counters per probe: compiled calls + one per resume function
TAIL_BYTES = 64 * 1024
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


# ---------------------------------------------------------------------------------------------
# small OS helpers (Linux first; elsewhere they degrade to process-group kills)


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except Exception:
        return False


def _proc_table() -> dict[int, tuple[int, int]]:
    """pid -> (ppid, rss bytes) for every process, from /proc."""
    out: dict[int, tuple[int, int]] = {}
    page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        tail = data[data.rfind(b")") + 2 :].split()
        try:
            out[int(name)] = (int(tail[1]), int(tail[21]) * page)
        except (IndexError, ValueError):
            continue
    return out


def descendants(root: int, table: dict[int, tuple[int, int]] | None = None) -> list[int]:
    table = _proc_table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (ppid, _rss) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def tree_rss(root: int) -> int:
    table = _proc_table()
    pids = [root, *descendants(root, table)]
    return sum(table[p][1] for p in pids if p in table)


def _vm_data() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:
            continue
        view = view[n:]


def _line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, default=str, ensure_ascii=False) + "\n").encode("utf-8", "replace")


class Bounded:
    """Keeps the first and the last bytes of a stream (megabytes of output must not cost megabytes);
    ``tail`` always ends where the stream ended, ``head`` always starts where it started."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += data[:room]
        self.tail += data[-TAIL_BYTES:]
        if len(self.tail) > TAIL_BYTES:
            del self.tail[: len(self.tail) - TAIL_BYTES]

    def as_dict(self) -> dict[str, Any]:
        return {
            "head": self.head.decode("utf-8", "replace"),
            "tail": self.tail.decode("utf-8", "replace"),
            "bytes": self.total,
            "truncated": self.total > max(len(self.head), len(self.tail)),
        }


# ---------------------------------------------------------------------------------------------
# the server


class Server:
    def __init__(self, ctl_fd: int, evt_fd: int, scratch: str | None = None) -> None:
        self.scratch_root = scratch  # the parent's folder for this worker (it removes it)
        self.ctl_fd = ctl_fd
        self.evt_fd = evt_fd
        self.ctl_buf = b""
        self.pending: list[dict[str, Any]] = []
        self.subreaper = False
        self.modules: dict[str, Any] = {}
        self.slots: dict[int, str] = {}  # shared-counter slot -> resume-function key, per probe

    def send(self, obj: dict[str, Any]) -> None:
        try:
            _write_all(self.evt_fd, _line(obj))
        except OSError as exc:
            if exc.errno in (errno.EPIPE, errno.EBADF):
                if self.scratch_root:  # the parent is gone and cannot remove it
                    shutil.rmtree(self.scratch_root, ignore_errors=True)
                os._exit(0)  # the parent is gone: nobody to report to
            raise

    # -- start-up ---------------------------------------------------------------------------------

    def boot(self, warmup: bool) -> None:
        for fd in (self.ctl_fd, self.evt_fd):
            os.set_inheritable(fd, False)
        self.subreaper = _prctl(PR_SET_CHILD_SUBREAPER, 1)
        t0 = time.perf_counter()
        try:
            import torch
            import torch._dynamo
        except BaseException as exc:
            self.send(
                {
                    "t": "fatal",
                    "error": f"cannot import torch in {sys.executable}: {type(exc).__name__}: {exc}",
                }
            )
            os._exit(3)
        import_s = time.perf_counter() - t0
        pkg = types.ModuleType("_tclint_probe")
        pkg.__path__ = [HERE]  # type: ignore[attr-defined]
        sys.modules["_tclint_probe"] = pkg
        import importlib

        for name in ("worker_capture", "worker_inputs", "worker_compare", "worker_exec"):
            self.modules[name] = importlib.import_module(f"_tclint_probe.{name}")
        for extra in (
            "runpy",
            "copy",
            "inspect",
            "torch.utils._pytree",
            "torch.testing",
            "torch._dynamo.output_graph",
        ):
            try:
                importlib.import_module(extra)
            except Exception:
                pass
        warm_s = 0.0
        if warmup:
            t1 = time.perf_counter()
            self._warmup()
            warm_s = time.perf_counter() - t1
        import torch

        self.send(
            {
                "t": "ready",
                "protocol": PROTOCOL,
                "pid": os.getpid(),
                "python": sys.executable,
                "python_version": sys.version.split()[0],
                "torch": torch.__version__,
                "import_s": round(import_s, 3),
                "warmup_s": round(warm_s, 3),
                "subreaper": self.subreaper,
            }
        )

    def _warmup(self) -> None:
        """Compile a tiny function with a break once, so lazy imports and first-compile set-up are
        paid here and not in every probe (tensors of 3 elements: no OpenMP threads before fork)."""
        import torch

        try:  # `torch.compile(fn)` with the default backend imports Inductor (~2 s) at decoration time
            import torch._inductor.compile_fx
        except Exception:
            pass
        cap = self.modules["worker_capture"]
        capture = cap.Capture(lambda event: None)
        capture.install()
        try:

            def _tclint_warmup(x: Any, n: int) -> Any:
                y = x * n
                torch._dynamo.graph_break()
                return y + 1

            compiled = torch.compile(_tclint_warmup, backend="eager")
            compiled(torch.ones(3), 1)
            compiled(torch.ones(3), 2)
            capture.summary()
        except Exception as exc:  # warm-up is an optimisation only
            print(f"tclint probe worker: warm-up failed: {exc}", file=sys.stderr)
        finally:
            capture.uninstall()
            cap.reset_dynamo()

    # -- the request loop ---------------------------------------------------------------------------

    def read_ctl(self, block: bool) -> bool:
        """Read control lines into ``pending``; False on EOF (the parent went away)."""
        if not block:
            ready, _, _ = select.select([self.ctl_fd], [], [], 0)
            if not ready:
                return True
        try:
            data = os.read(self.ctl_fd, 65536)
        except InterruptedError:
            return True
        if not data:
            return False
        self.ctl_buf += data
        while b"\n" in self.ctl_buf:
            raw, self.ctl_buf = self.ctl_buf.split(b"\n", 1)
            if raw.strip():
                try:
                    self.pending.append(json.loads(raw))
                except ValueError:
                    self.send({"t": "error", "error": f"bad control line: {raw[:200]!r}"})
        return True

    def loop(self) -> None:
        while True:
            while not self.pending:
                if not self.read_ctl(block=True):
                    return
            req = self.pending.pop(0)
            op = req.get("op")
            if op == "shutdown":
                return
            if op == "ping":
                self.send({"t": "pong", "id": req.get("id")})
            elif op == "probe":
                self.probe(req)
            elif op == "cancel":
                pass  # nothing running
            else:
                self.send({"t": "error", "id": req.get("id"), "error": f"unknown op {op!r}"})

    # -- one probe ----------------------------------------------------------------------------------

    def probe(self, req: dict[str, Any]) -> None:
        pid_ = req.get("id")
        spec = req.get("spec") or {}
        root = self.scratch_root if self.scratch_root and os.path.isdir(self.scratch_root) else None
        scratch = tempfile.mkdtemp(prefix="probe-" if root else "tclint-probe-", dir=root)
        fault_path = os.path.join(scratch, ".tclint-faulthandler.txt")
        res_r, res_w = os.pipe()
        out_r, out_w = os.pipe()
        shm = mmap.mmap(-1, COUNTER_SLOTS * 8)  # MAP_SHARED|MAP_ANONYMOUS: the child's counts survive it
        self.slots = {}
        started = time.monotonic()
        sys.stdout.flush()
        sys.stderr.flush()
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the child, measured by the tests end to end
            try:
                os.close(res_r)
                os.close(out_r)
                child_main(self, spec, pid_, res_w, out_w, scratch, fault_path, shm)
            finally:
                os._exit(70)
        os.close(res_w)
        os.close(out_w)
        self.send({"t": "start", "id": pid_, "pid": child})
        end = self.supervise(child, pid_, spec, res_r, out_r, started)
        end["wall_s"] = round(time.monotonic() - started, 3)
        end["calls"], end["hits"] = self.read_counters(shm)
        shm.close()
        try:
            with open(fault_path, encoding="utf-8", errors="replace") as fh:
                fault = fh.read().strip()
        except OSError:
            fault = ""
        end["fault"] = fault[-8000:] or None
        shutil.rmtree(scratch, ignore_errors=True)
        self.send(end)

    def supervise(  # noqa: C901 - long, not split yet (issue 16)
        self, child: int, pid_: Any, spec: dict[str, Any], res_r: int, out_r: int, started: float
    ) -> dict[str, Any]:
        timeout = float(spec.get("timeout") or 60.0)
        deadline = started + timeout
        limit = spec.get("memory_limit")
        stream = bool(spec.get("stream_output"))
        output = Bounded()
        res_buf = b""
        result_seen = False
        status: str | None = None
        wait_status: int | None = None
        base_rss = tree_rss(child) if limit else 0
        peak = 0
        next_watch = 0.0
        open_fds = {res_r, out_r}
        while True:
            now = time.monotonic()
            if wait_status is None:
                try:
                    done, st = os.waitpid(child, os.WNOHANG)
                except ChildProcessError:
                    done, st = child, 0
                if done:
                    wait_status = st
            if wait_status is not None:
                break
            if now >= deadline:
                status = "timeout"
                break
            if limit and now >= next_watch:
                next_watch = now + 0.25  # a /proc scan costs ~6 ms; RLIMIT_DATA catches most runaways first
                rss = tree_rss(child)
                peak = max(peak, rss)
                if rss - base_rss > int(limit):
                    status = "memory"
                    break
            watch = [fd for fd in (self.ctl_fd, *open_fds)]
            try:
                ready, _, _ = select.select(watch, [], [], min(0.05, max(0.0, deadline - now)))
            except InterruptedError:
                continue
            for fd in ready:
                if fd == self.ctl_fd:
                    if not self.read_ctl(block=False):
                        status = "parent-gone"
                    for msg in [m for m in self.pending if m.get("op") in ("cancel", "shutdown")]:
                        self.pending.remove(msg)
                        if msg.get("op") == "shutdown" or msg.get("id") in (None, pid_):
                            status = "cancelled"
                            if msg.get("op") == "shutdown":
                                self.pending.insert(0, msg)
                    continue
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    data = b""
                if not data:
                    open_fds.discard(fd)
                    continue
                if fd == out_r:
                    output.add(data)
                    if stream:
                        self.send({"t": "output", "id": pid_, "data": data.decode("utf-8", "replace")})
                else:
                    res_buf, seen = self._relay(res_buf + data)
                    result_seen = result_seen or seen
            if status is not None:
                break
        if wait_status is None:
            _dump_stacks(child)
            _kill(child)
            try:
                _, wait_status = os.waitpid(child, 0)
            except ChildProcessError:
                wait_status = None
        orphans = self.sweep(child)
        # what is still buffered in the pipes (writers are dead now)
        for fd in list(open_fds):
            stop = time.monotonic() + 1.0
            while time.monotonic() < stop:
                ready, _, _ = select.select([fd], [], [], 0.05)
                if not ready:
                    break
                data = os.read(fd, 65536)
                if not data:
                    break
                if fd == out_r:
                    output.add(data)
                else:
                    res_buf, seen = self._relay(res_buf + data)
                    result_seen = result_seen or seen
        for fd in (res_r, out_r):
            try:
                os.close(fd)
            except OSError:
                pass
        code = sig = None
        if wait_status is not None:
            if os.WIFSIGNALED(wait_status):
                sig = os.WTERMSIG(wait_status)
            elif os.WIFEXITED(wait_status):
                code = os.WEXITSTATUS(wait_status)
        if status is None:
            status = "finished" if result_seen else ("crashed" if sig else "exited")
        if limit:
            peak = max(peak, base_rss)
        return {
            "t": "end",
            "id": pid_,
            "status": status,
            "returncode": code,
            "signal": sig,
            "signal_name": signal.Signals(sig).name if sig else None,
            "result_received": result_seen,
            "output": output.as_dict(),
            "orphans": orphans,
            "peak_rss": peak or None,
            "base_rss": base_rss or None,
            "timeout": timeout,
            "memory_limit": limit,
        }

    def read_counters(self, shm: Any) -> tuple[int, dict[str, int]]:
        """Compiled calls and resume-function calls per compile id, from the shared counters."""
        calls = int(struct.unpack_from("Q", shm, 0)[0])
        hits: dict[str, int] = {}
        for slot, key in self.slots.items():
            cid = key.split("|", 1)[0]
            hits[cid] = hits.get(cid, 0) + int(struct.unpack_from("Q", shm, slot * 8)[0])
        return calls, hits

    def _relay(self, buf: bytes) -> tuple[bytes, bool]:
        """Forward the complete lines of the child's result pipe; keep the partial rest."""
        seen = False
        while b"\n" in buf:
            raw, buf = buf.split(b"\n", 1)
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except ValueError:
                continue  # a line torn by a crash
            seen = seen or obj.get("t") == "result"
            if obj.get("t") == "slot":
                self.slots[int(obj["slot"])] = str(obj.get("key"))
                continue  # the server's business: counts come back in the end message
            _write_all(self.evt_fd, raw + b"\n")
        return buf, seen

    def sweep(self, child: int) -> int:
        """Kill and reap every process the probe left behind; how many the *user's* code left
        (Inductor's compile-worker pool, started by torch itself, is not counted)."""
        killed: set[int] = set()
        for _round in range(20):
            victims = (
                [p for p in descendants(os.getpid()) if p != child]
                if sys.platform.startswith("linux")
                else []
            )
            for pid in victims:
                torch_own = _is_compile_worker(pid)
                try:
                    os.kill(pid, signal.SIGKILL)
                    if not torch_own:
                        killed.add(pid)
                except OSError:
                    pass
            if child > 0:
                try:
                    os.killpg(child, signal.SIGKILL)
                except OSError:
                    pass
            reaped_any = False
            while True:
                try:
                    pid, _ = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                reaped_any = True
            if not victims and not reaped_any:
                if not descendants(os.getpid()):
                    break
                time.sleep(0.02)
        return len(killed)


def _is_compile_worker(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return b"_inductor" in fh.read()
    except OSError:
        return False


def _dump_stacks(child: int) -> None:
    """Ask the child's faulthandler (a C-level handler: works while user code holds the GIL in C)
    to write every thread's stack, so a hang or a runaway allocation is reported with its place."""
    try:
        os.kill(child, signal.SIGUSR1)
    except OSError:
        return
    time.sleep(0.15)


def _kill(child: int) -> None:
    for target in (lambda: os.killpg(child, signal.SIGKILL), lambda: os.kill(child, signal.SIGKILL)):
        try:
            target()
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------
# the probe child


def child_main(  # noqa: C901 - long, not split yet (issue 16)
    server: Server,
    spec: dict[str, Any],
    probe_id: Any,
    res_w: int,
    out_w: int,
    scratch: str,
    fault_path: str,
    shm: Any = None,
) -> None:  # pragma: no cover - runs in the forked child
    import faulthandler
    import resource
    import threading

    me = os.getpid()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    os.close(server.ctl_fd)
    os.close(server.evt_fd)
    lock = threading.Lock()
    finished: list[Any] = []
    real_exit = os._exit

    def emit(obj: dict[str, Any]) -> None:
        if os.getpid() != me:
            return
        obj["id"] = probe_id
        data = _line(obj)
        with lock:
            try:
                _write_all(res_w, data)
            except OSError:
                pass

    # the user's view of the world: stdin empty, stdout/stderr to the server, a scratch folder
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(out_w, 1)
    os.dup2(out_w, 2)
    os.close(out_w)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # a TextIOWrapper
        except Exception:
            pass
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass
    limit = spec.get("memory_limit")
    if limit:
        try:
            cap_bytes = _vm_data() + int(limit)
            resource.setrlimit(resource.RLIMIT_DATA, (cap_bytes, cap_bytes))
        except (ValueError, OSError):
            pass
    fault_file = open(fault_path, "w")  # must outlive this function
    faulthandler.enable(file=fault_file, all_threads=True)  # segfaults, aborts
    if hasattr(faulthandler, "register"):  # the server's "where are you?" before it kills (timeout, memory)
        faulthandler.register(signal.SIGUSR1, file=fault_file, all_threads=True, chain=False)
    env = {str(k): str(v) for k, v in (spec.get("env") or {}).items()}
    os.environ.update(env)
    os.environ["PYTHONBREAKPOINT"] = "0"
    os.environ["TMPDIR"] = scratch
    tempfile.tempdir = None
    os.chdir(spec.get("cwd") or scratch)

    exec_ = server.modules["worker_exec"]
    cap = server.modules["worker_capture"]
    capture: Any = None

    def finish(result: dict[str, Any]) -> None:
        if finished or os.getpid() != me:
            return
        finished.append(True)
        try:
            if capture is not None:
                capture.uninstall()
                result["capture"] = capture.summary()
            result["env"] = exec_.environment(spec)
        except BaseException as exc:
            result.setdefault("probe_warnings", []).append(f"summary failed: {type(exc).__name__}: {exc}")
        emit({"t": "result", **result})
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass

    def probe_exit(code: int = 0) -> None:
        if os.getpid() == me and not finished:
            finish(
                {"status": "exit" if code else "ok", "exit_code": code, "exception": None, "via": "os._exit"}
            )
        real_exit(code)

    def stop_at_limit() -> None:
        finish(
            {
                "status": "stopped",
                "exit_code": 0,
                "exception": None,
                "message": f"stopped after {spec.get('max_calls')} calls of compiled code (max-calls)",
            }
        )
        real_exit(0)

    os._exit = probe_exit  # type: ignore[assignment]
    try:
        capture = cap.Capture(emit, max_calls=spec.get("max_calls"), on_limit=stop_at_limit, shm=shm)
        capture.install()
        emit({"t": "progress", "phase": "running"})
        if spec.get("mode") == "function":
            result = exec_.run_function(spec, capture, emit)
        else:
            result = exec_.run_program(spec, capture)
        finish(result)
    except BaseException as exc:
        finish(
            {
                "status": "probe-error",
                "exit_code": 1,
                "exception": None,
                "message": f"the probe itself failed: {type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc()[-6000:],
            }
        )
    real_exit(0)


# ---------------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    if sys.path and os.path.realpath(sys.path[0] or ".") == os.path.realpath(HERE):
        sys.path.pop(0)  # our folder must not shadow the user's modules (api.py, cli.py, ...)
    args: dict[str, Any] = {"ctl": None, "evt": None, "warmup": True, "scratch": None}
    it = iter(argv)
    for arg in it:
        if arg == "--ctl-fd":
            args["ctl"] = int(next(it))
        elif arg == "--evt-fd":
            args["evt"] = int(next(it))
        elif arg == "--no-warmup":
            args["warmup"] = False
        elif arg == "--scratch":
            args["scratch"] = next(it)
        elif arg == "--serve":
            pass
        else:
            print(f"tclint probe worker: unknown argument {arg!r}", file=sys.stderr)
            return 2
    if args["ctl"] is None or args["evt"] is None:
        print("usage: worker.py --serve --ctl-fd N --evt-fd N [--no-warmup] [--scratch DIR]", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    server = Server(int(args["ctl"]), int(args["evt"]), args["scratch"])
    server.boot(bool(args["warmup"]))
    try:
        server.loop()
    finally:
        server.sweep(-1)
        if server.scratch_root:  # the parent removes it too (it may have died: then only this does)
            shutil.rmtree(server.scratch_root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
