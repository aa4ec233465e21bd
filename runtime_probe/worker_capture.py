"""Worker side (stdlib + torch only): watch TorchDynamo and stream what it does.

Loaded by ``worker.py`` inside the probe child, never by the parent (it imports torch).  The
sources are the ones measured as complete on torch 2.13:

* the structured trace (a handler on the ``torch.__trace`` logger): one
  ``dynamo_graph_break_reason`` artifact per break event (``explain()`` misses breaks), one
  ``compilation_metrics`` event per frame compile, one ``dynamo_output_graph`` per FX graph;
* ``torch._dynamo.utils.get_compilation_metrics()`` at the end, which is authoritative for the
  compile list (the streamed records are what survives a crash);
* ``counters["unimplemented"]`` for recompile-limit refusals (GB0039 has no trace artifact).

Hit counts: Dynamo continues a frame after a break by calling a generated *resume function*
(``torch_dynamo_resume_in_<fn>_at_<line>``) that it installs as a global ``__resume_at_*`` in the
frame's module, once per break site and compiled variant.  Wrapping the installed global with a
counter (a frame Dynamo is told to skip, so the resume function itself is still compiled and
cached as usual) counts exactly how often execution passed each break in compiled code.  The
counts are keyed by the compile id whose trace emitted the break, so the parent can attribute
them.  A frame that Dynamo dropped whole has no resume function: its breaks run eagerly and are
not counted (reported as such, never as zero).

Everything is emitted through ``emit`` (a callable given by ``worker.py``) as JSON-able dicts.
"""

from __future__ import annotations

import json
import logging
import os
import re
import struct
import sys
import sysconfig
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch
import torch._dynamo

LINK = re.compile(r"compile-graph-break-site/gb/gb(\d+)\.html")
FILE_LINE = re.compile(r'^\s*File "(.*)", line (\d+), in (.*)$')
RESUME_NAME = re.compile(r"^torch_dynamo_resume_in_(.+)_at_\d+$")
GUARD_COMMENT = re.compile(r"^(?P<guard>.*?)\s+#\s(?P<code>.*?)\s+#\s(?P<where>\S+:\d+) in (?P<fn>\S+)")
LIMIT_GB_TYPE = "Dynamo recompile limit exceeded"
_SLOT = struct.Struct("Q")
_MISSING = object()

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load_registry() -> dict[str, str]:
    """Gb_type -> GB id from torch's own registry (absent in old releases: then links only)."""
    path = os.path.join(os.path.dirname(torch._dynamo.__file__), "graph_break_registry.json")
    out: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return out
    for gb_id, entries in data.items():
        for entry in entries:
            gb_type = entry.get("Gb_type")
            if gb_type:
                out.setdefault(gb_type, gb_id)
    return out


GB_BY_TYPE = _load_registry()


# ---------------------------------------------------------------------------------------------
# which files are the user's


def library_prefixes() -> tuple[str, ...]:
    """Folders whose files are never "user code": the interpreter's stdlib and site folders,
    torch itself and the probe's own files."""
    found = {_HERE, os.path.dirname(torch.__file__)}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            value = sysconfig.get_paths().get(key)
        except Exception:  # pragma: no cover - broken sysconfig
            value = None
        if value:
            found.add(value)
    for entry in sys.path:
        if entry and os.path.basename(entry) in ("site-packages", "dist-packages"):
            found.add(entry)
    return tuple(sorted(os.path.realpath(p) + os.sep for p in found))


_LIB = library_prefixes()


def is_user_file(path: str) -> bool:
    if not path or path.startswith(("<frozen", "<built-in", "<eval_with_key")):
        return False  # <eval_with_key>: FX-generated graph code
    if path.startswith("<"):
        return True  # exec'd code, notebooks: it is not a library
    real = os.path.realpath(path)
    if any(real.startswith(p) for p in _LIB):
        return False
    parts = real.split(os.sep)
    return "site-packages" not in parts and "dist-packages" not in parts


def frame_dict(path: str, line: int, name: str) -> dict[str, Any]:
    real = path if path.startswith("<") else os.path.realpath(path)
    return {"file": real, "line": line, "function": name, "user": is_user_file(path)}


def original_name(co_name: str | None) -> str | None:
    """``torch_dynamo_resume_in_fn_at_12`` -> ``fn``: resume functions stand for their frame."""
    if not co_name:
        return co_name
    match = RESUME_NAME.match(co_name)
    return match.group(1) if match else co_name


# ---------------------------------------------------------------------------------------------
# parsing Dynamo's texts


def gb_id_for(gb_type: str | None, text: str | None) -> str | None:
    if gb_type and gb_type in GB_BY_TYPE:
        return GB_BY_TYPE[gb_type]
    match = LINK.search(text or "")
    return f"GB{int(match.group(1)):04d}" if match else None


def _first_line(text: Any) -> str:
    s = str(text or "").strip()
    return s.splitlines()[0] if s else ""


def parse_break(payload: str) -> dict[str, Any]:
    """One ``dynamo_graph_break_reason`` payload -> its fields (its layout on torch 2.13)."""
    lines = (payload or "").splitlines()
    out: dict[str, Any] = {"gb_type": None, "reason": "", "explanation": "", "hints": [], "reported_at": None}
    for i, line in enumerate(lines):
        if line.startswith("Graph break in user code at "):
            where = line.split(" at ", 1)[1]
            path, _, lineno = where.rpartition(":")
            if lineno.isdigit():
                out["reported_at"] = frame_dict(path, int(lineno), "")
        elif line.startswith("Graph Break Reason: "):
            reason = line.split("Graph Break Reason: ", 1)[1].strip()
            out["reason"] = reason
            if reason.endswith(":"):
                nxt = next((x.strip() for x in lines[i + 1 : i + 4] if x.strip()), None)
                out["gb_type"] = nxt
            else:
                out["gb_type"] = reason
        elif line.strip().startswith("Explanation:") and not out["explanation"]:
            out["explanation"] = line.strip()[len("Explanation:") :].strip()
        elif line.strip().startswith("Hint:"):
            out["hints"].append(line.strip()[len("Hint:") :].strip())
    out["gb_id"] = gb_id_for(out["gb_type"], payload)
    match = LINK.search(payload or "")
    out["url"] = match.group(0) if match else None
    if out["url"]:
        out["url"] = "https://meta-pytorch.github.io/" + out["url"]
    out["stack"] = parse_user_stack(lines, "User code traceback:")
    return out


def parse_user_stack(lines: list[str], header: str) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    try:
        i = lines.index(header) + 1
    except ValueError:
        return frames
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            break
        match = FILE_LINE.match(line)
        if match:
            frames.append(frame_dict(match.group(1), int(match.group(2)), match.group(3)))
        elif not line.startswith("    "):
            break
        i += 1
    return frames


_GOT = re.compile(r"got (\w+)\((['\"])(.*?)\2\)", re.S)


def error_detail(text: str | None) -> str | None:
    """The real error inside Dynamo's wrapper text: ``... got RuntimeError('There was no fake
    impl registered for ...')`` -> ``RuntimeError: There was no fake impl ...``."""
    match = _GOT.search(text or "")
    if match:
        return f"{match.group(1)}: {match.group(3)}"[:500]
    return None


def from_user_code(text: str | None) -> list[dict[str, Any]]:
    """The frames of the "from user code:" block Dynamo appends to its errors."""
    lines = (text or "").splitlines()
    frames: list[dict[str, Any]] = []
    if "from user code:" not in lines:
        return frames
    for line in lines[lines.index("from user code:") + 1 :]:
        match = FILE_LINE.match(line)
        if match:
            frames.append(frame_dict(match.group(1), int(match.group(2)), match.group(3)))
        elif line.strip() and not line.startswith("    ") and not line.strip().startswith("^"):
            break
    return frames


def parse_recompile_reason(text: str | None) -> dict[str, Any] | None:
    """``"0/0: n == 1  # y = x * n  # f.py:9 in fn\\nUser stack trace: ..."`` -> fields.

    Tensor guards ("tensor 'x' size mismatch ...") carry no location: the parent maps their
    source (``x``) to the frame's parameter."""
    if not text:
        return None
    lines = text.splitlines()
    first = lines[0]
    entry, sep, rest = first.partition(": ")
    if not sep or "/" not in entry:
        entry, rest = "", first
    out: dict[str, Any] = {"text": first, "failed_entry": entry or None, "guard": rest.strip(), "code": None}
    match = GUARD_COMMENT.match(rest)
    if match:
        out["guard"] = match.group("guard").strip()
        out["code"] = match.group("code").strip()
    hint = re.search(r"\(HINT: (.*)\)\s*$", rest)
    out["hint"] = hint.group(1) if hint else None
    out["stack"] = parse_user_stack(lines, "User stack trace:")
    out["source"] = guard_source(out["guard"])
    return out


_TENSOR_GUARD = re.compile(r"^tensor '([^']+)'")


def guard_source(guard: str) -> str | None:
    """The Python expression a guard is about: ``tensor 'x' ...`` -> ``x``; ``n == 1`` -> ``n``;
    ``len(xs) == 2`` -> ``xs``; ``G['SCALE'] == 1`` -> ``G['SCALE']``; ``___check_obj_id(m, 1)`` -> ``m``."""
    if not guard:
        return None
    match = _TENSOR_GUARD.match(guard)
    if match:
        return match.group(1)
    g = guard
    g = re.sub(r"^KeyError on ", "", g)
    m = re.match(r"^(?:not\s+)?___\w+\(([^,()]+(?:\([^()]*\))?[^,()]*)", g)
    if m:
        return m.group(1).strip()
    m = re.match(r"^(?:len|type|id)\(([^()]+)\)", g)
    if m:
        return m.group(1).strip()
    m = re.match(r"^(.+?)\s*(?:==|!=|<=|>=|<|>| is not | is | in | not in )", g)
    if m:
        return m.group(1).strip()
    return g.strip() or None


# ---------------------------------------------------------------------------------------------
# the live capture


_METRIC_FIELDS = (
    "compile_id", "co_name", "co_filename", "co_firstlineno", "recompile_reason", "fail_type", "fail_reason",
    "fail_user_frame_filename", "fail_user_frame_lineno", "has_guarded_code", "entire_frame_compile_time_s",
    "backend_compile_time_s", "graph_op_count", "graph_node_count", "graph_input_count", "guard_count",
    "num_graph_breaks", "restart_reasons", "dynamo_time_before_restart_s", "start_time_us",
)  # fmt: skip


def metrics_record(m: Any) -> dict[str, Any]:
    """One CompilationMetrics (object or trace dict) -> the fields the report uses."""
    get = (lambda k: m.get(k)) if isinstance(m, dict) else (lambda k: getattr(m, k, None))
    out: dict[str, Any] = {}
    for key in _METRIC_FIELDS:
        value = get(key)
        if isinstance(value, set):
            value = sorted(str(v) for v in value)
        elif value is not None and not isinstance(value, (str, int, float, bool, list, dict)):
            value = str(value)
        out[key] = value
    if out["co_filename"]:
        out["co_filename"] = (
            os.path.realpath(out["co_filename"])
            if not str(out["co_filename"]).startswith("<")
            else out["co_filename"]
        )
    out["recompile"] = parse_recompile_reason(out.get("recompile_reason"))
    if out.get("fail_reason"):
        out["fail_gb_id"] = gb_id_for(_first_line(out["fail_reason"]), out["fail_reason"])
        out["fail_detail"] = error_detail(out["fail_reason"])
    if out.get("fail_user_frame_filename"):
        out["fail_user_frame_filename"] = os.path.realpath(out["fail_user_frame_filename"])
        out["fail_user_frame_user"] = is_user_file(out["fail_user_frame_filename"])
    return out


class Capture(logging.Handler):
    """Collects and streams trace events; counts resume-function calls and compiled calls."""

    def __init__(
        self,
        emit: Callable[[dict[str, Any]], None],
        max_calls: int | None = None,
        on_limit: Callable[[], None] | None = None,
        shm: Any = None,
    ) -> None:
        super().__init__(logging.DEBUG)
        self.emit_event = emit
        self.pid = os.getpid()
        self.shm = shm  # counters shared with the supervising server: they survive a crash
        self._next_slot = 1  # slot 0 counts compiled calls
        self.breaks: list[dict[str, Any]] = []
        self.compiles: dict[str, dict[str, Any]] = {}
        self.graphs: Counter[str] = Counter()
        self.resume_hits: Counter[str] = Counter()
        self.resume_sites: dict[str, str] = {}
        self.calls = 0
        self.max_calls = max_calls
        self.on_limit = on_limit
        self.paused = False  # the eager reference run of function mode is not "compiled code"
        self.generation = 0  # bumped when the user's code resets Dynamo: compile ids restart at 0/0
        self._started: set[str] = set()
        self.hits_supported = False
        self.calls_supported = False
        self._lock = threading.Lock()
        self._last_progress = 0.0
        self._trace_logger = logging.getLogger("torch.__trace")
        self._old_level = self._trace_logger.level

    # -- lifecycle -----------------------------------------------------------------------------

    def install(self) -> None:
        reset_dynamo()
        self._trace_logger.setLevel(logging.DEBUG)
        self._trace_logger.addHandler(self)
        self.hits_supported = _patch_resume_globals(self)
        self.calls_supported = _patch_call_counter(self)

    def uninstall(self) -> None:
        self._trace_logger.removeHandler(self)
        self._trace_logger.setLevel(self._old_level)

    # -- logging.Handler --------------------------------------------------------------------------

    def emit(self, record: logging.LogRecord) -> None:  # logging API
        if os.getpid() != self.pid:
            return  # a fork of the user's (DataLoader worker...): its compiles are its own
        try:
            self._on_record(getattr(record, "metadata", None) or {}, getattr(record, "payload", None))
        except Exception as exc:  # never let the probe break the user's program
            self.emit_event({"t": "warning", "message": f"trace parse error: {type(exc).__name__}: {exc}"})

    def gid(self, compile_id: str) -> str:
        """A compile id that stays unique across ``torch._dynamo.reset()`` calls in user code."""
        return compile_id if self.generation == 0 else f"{self.generation}:{compile_id}"

    def _on_record(self, md: dict[str, Any], payload: Any) -> None:
        raw_id = f"{md.get('frame_id')}/{md.get('frame_compile_id')}"
        if "dynamo_start" in md:
            with self._lock:
                if raw_id in self._started:
                    self.generation += 1
                    self._started = set()
                self._started.add(raw_id)
        compile_id = self.gid(raw_id)
        artifact = md.get("artifact")
        if isinstance(artifact, dict) and artifact.get("name") == "dynamo_graph_break_reason":
            event = parse_break(payload or "")
            event["compile_id"] = compile_id
            event["attempt"] = md.get("attempt")
            with self._lock:
                self.breaks.append(event)
            self.emit_event({"t": "break", **event})
        elif "dynamo_output_graph" in md:
            with self._lock:
                self.graphs[compile_id] += 1
        elif "compilation_metrics" in md:
            rec = metrics_record(md["compilation_metrics"])
            if rec.get("compile_id"):
                rec["compile_id"] = self.gid(str(rec["compile_id"]))
                rec["graphs"] = self.graphs.get(str(rec["compile_id"]), 0)
                with self._lock:
                    self.compiles[str(rec["compile_id"])] = rec
                self.emit_event({"t": "compile", **rec})
            self.progress()

    # -- hooks ------------------------------------------------------------------------------------

    def slot_for(self, key: str) -> int | None:
        """A shared counter for one resume function (announced to the server by a ``slot`` event)."""
        if self.shm is None or os.getpid() != self.pid or (self._next_slot + 1) * 8 > len(self.shm):
            return None
        slot = self._next_slot
        self._next_slot += 1
        self.emit_event({"t": "slot", "slot": slot, "key": key})
        return slot

    def _bump(self, slot: int | None) -> None:
        if slot is not None and self.shm is not None:
            (n,) = _SLOT.unpack_from(self.shm, slot * 8)
            _SLOT.pack_into(self.shm, slot * 8, n + 1)

    def count_resume(self, key: str, slot: int | None = None) -> None:
        if os.getpid() != self.pid:
            return  # a fork of the user's process shares the counters' memory
        self.resume_hits[key] += 1
        self._bump(slot)

    def count_call(self) -> None:
        if os.getpid() != self.pid or self.paused:
            return
        self.calls += 1
        self._bump(0)
        if self.max_calls is not None and self.calls > self.max_calls and self.on_limit is not None:
            self.calls -= 1
            self.on_limit()
        self.progress()

    def progress(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last_progress > 0.5:
            self._last_progress = now
            self.emit_event(
                {
                    "t": "progress",
                    "calls": self.calls,
                    "compiles": len(self.compiles),
                    "breaks": len(self.breaks),
                    "hits": self.hit_table(),
                }
            )

    def hit_table(self) -> dict[str, int]:
        """compile id -> calls of the resume functions installed by that compile."""
        table: Counter[str] = Counter()
        for key, n in list(self.resume_hits.items()):
            table[key.split("|", 1)[0]] += n
        return dict(table)

    # -- the end ----------------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        compiles = dict(self.compiles)
        try:
            from torch._dynamo.utils import get_compilation_metrics

            # authoritative unless the user reset Dynamo (its ids then repeat; the stream has them)
            for m in get_compilation_metrics() if self.generation == 0 else ():
                rec = metrics_record(m)
                cid = str(rec.get("compile_id"))
                rec["graphs"] = self.graphs.get(cid, 0)
                compiles[cid] = rec
        except Exception as exc:  # pragma: no cover - private API moved
            self.emit_event({"t": "warning", "message": f"get_compilation_metrics failed: {exc}"})
        limit_refusals = 0
        try:
            from torch._dynamo.utils import counters

            for key, n in counters.get("unimplemented", {}).items():
                if _first_line(key) == LIMIT_GB_TYPE:
                    limit_refusals += n
        except Exception:  # pragma: no cover
            pass
        return {
            "compiles": [compiles[k] for k in sorted(compiles, key=_compile_sort_key)],
            "breaks": list(self.breaks),
            "hits": self.hit_table(),
            "hits_supported": self.hits_supported,
            "calls": self.calls if self.calls_supported else None,
            "limit_refusals": limit_refusals,
        }


def _compile_sort_key(cid: str) -> tuple[int, ...]:
    gen, _, rest = cid.rpartition(":")
    return (
        int(gen) if gen.isdigit() else 0,
        *(int(p) if p.isdigit() else -1 for p in rest.strip("!").split("/")),
    )


def reset_dynamo() -> None:
    """A clean slate: reset() does not clear counters or metrics (torch 2.13)."""
    torch._dynamo.reset()
    try:
        from torch._dynamo.utils import clear_compilation_metrics, counters, set_compilation_metrics_limit

        counters.clear()
        clear_compilation_metrics()
        set_compilation_metrics_limit(100_000)
    except Exception:  # pragma: no cover - older torch
        pass


# ---------------------------------------------------------------------------------------------
# the two patches (feature-detected; without them hits / call counts are reported as unknown)

_ACTIVE: list[Capture] = []


def _patch_resume_globals(capture: Capture) -> bool:
    _ACTIVE[:] = [capture]
    try:
        from torch._dynamo.eval_frame import skip_code
        from torch._dynamo.output_graph import OutputGraph
        from torch._guards import CompileContext
    except ImportError:
        return False
    original = getattr(OutputGraph, "install_global_unsafe", None)
    if original is None:
        return False
    if getattr(original, "_tclint_patched", False):
        return True

    def make_counter(fn: Any, key: str) -> Any:
        slot = _ACTIVE[0].slot_for(key) if _ACTIVE and fn is not None else None

        def tclint_resume_counter(*args: Any, **kwargs: Any) -> Any:
            if _ACTIVE:
                _ACTIVE[0].count_resume(key, slot)
            return fn(*args, **kwargs)

        return tclint_resume_counter

    skip_code(make_counter(None, "").__code__)

    def install_global_unsafe(self: Any, name: str, value: Any) -> None:
        if name.startswith("__resume_at_") and callable(value):
            try:
                cid = str(CompileContext.current_compile_id())
            except Exception:
                cid = "?"
            if _ACTIVE:
                cid = _ACTIVE[0].gid(cid)
            value = make_counter(value, f"{cid}|{name}")
        return original(self, name, value)

    install_global_unsafe._tclint_patched = True  # type: ignore[attr-defined]
    OutputGraph.install_global_unsafe = install_global_unsafe  # type: ignore[method-assign]
    return True


def _patch_call_counter(capture: Capture) -> bool:
    """Count calls of compiled code: every torch.compile wrapper runs its context's
    ``enter_exit_hooks`` on each call."""
    try:
        from torch._dynamo.eval_frame import OptimizeContext, _TorchDynamoContext
    except ImportError:
        return False
    original_init = _TorchDynamoContext.__init__
    if getattr(original_init, "_tclint_patched", False):
        return True

    def _noop() -> None:
        return None

    def enter() -> Callable[[], None]:
        if _ACTIVE:
            _ACTIVE[0].count_call()
        return _noop

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        hooks = getattr(self, "enter_exit_hooks", None)
        if isinstance(self, OptimizeContext) and isinstance(hooks, list):  # not disable()
            hooks.append(enter)

    __init__._tclint_patched = True  # type: ignore[attr-defined]
    _TorchDynamoContext.__init__ = __init__  # type: ignore[method-assign]
    return callable(_TorchDynamoContext)


def config_in_force() -> dict[str, Any]:
    """The Dynamo settings that change what breaks and recompiles, as they are now."""
    cfg = torch._dynamo.config
    names = (
        "recompile_limit", "accumulated_recompile_limit", "capture_scalar_outputs",
        "capture_dynamic_output_shape_ops", "automatic_dynamic_shapes", "assume_static_by_default",
        "specialize_float", "specialize_int", "allow_unspec_int_on_nn_module", "trace_numpy",
        "suppress_errors", "fail_on_recompile_limit_hit",
    )  # fmt: skip
    out: dict[str, Any] = {}
    for name in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = getattr(cfg, name, _MISSING)
        if value is not _MISSING:
            out[name] = value if isinstance(value, (bool, int, float, str)) or value is None else str(value)
    return out
