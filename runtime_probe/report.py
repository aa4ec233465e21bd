"""The probe report: what the worker saw, aggregated in the order engineers diagnose.

``build_report`` turns a run's raw events (``runner.Outcome``) into a :class:`ProbeReport`:

* ``environment``: torch, device, backend and the Dynamo config in force;
* ``correctness`` (function mode): eager vs compiled per call;
* ``compiles``: every frame compile with its trigger (first call, a resume after a break, or the
  failed guard mapped to a source line and said in the user's terms, ``cause``; a continuation
  recompiling because of its function's recompile is ``secondary_of`` it), time and graph count;
  ``frames`` sums them per function and ``recompile_limit_hits`` calls out the frames that now
  run eagerly;
* ``graph_breaks``: one entry per break *site* (innermost frame in the user's files), ranked by
  how often it was hit;
* ``errors``: hard errors (not breaks), the program's own exception, and how the run ended.

Hit counts follow from the worker's resume-function counters: a site's hits are the calls of the
resume functions created by the compiles of the frame that contains the site (the same break is
also reported by outer frames that inlined it; counting those too would double it).
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from tclint.runtime_probe import guards
from tclint.runtime_probe.runner import Outcome

RESUME = re.compile(r"^torch_dynamo_resume_in_(.+)_at_(\d+)$")
LIMIT_TYPE = "Dynamo recompile limit exceeded"
FAULT_FRAME = re.compile(r'^\s*File "(.*)", line (\d+) in (.*)$')

# how the run ended -> (status, problem?)
STATUS_TEXT = {
    "ok": "completed",
    "exit": "the program exited with a non-zero status",
    "exception": "the code raised an exception",
    "stopped": "stopped after max-calls calls of compiled code",
    "timeout": "timed out",
    "memory": "exceeded the memory cap",
    "crashed": "crashed",
    "exited": "exited abruptly before reporting",
    "cancelled": "cancelled",
    "need-inputs": "no inputs to call the target with",
    "inputs-rejected": "the synthesised inputs were rejected by eager code",
    "inputs-error": "the inputs file failed",
    "probe-error": "the probe itself failed",
    "worker-died": "the probe worker died",
    "worker-error": "the probe worker could not start",
}


@dataclass
class ProbeReport:
    """One probe's findings.  JSON-able through ``to_json``; ``diagnostics()`` gives TC9xx
    diagnostics (``tclint.rules.model.Diagnostic``, origin PROBE)."""

    mode: str  # "program" | "function"
    target: str  # what was probed, as the user wrote it
    status: str  # a key of STATUS_TEXT
    message: str  # one sentence on how the run ended
    environment: dict[str, Any] = field(default_factory=dict)
    correctness: list[dict[str, Any]] = field(default_factory=list)
    compiles: list[dict[str, Any]] = field(default_factory=list)
    frames: list[dict[str, Any]] = field(default_factory=list)
    recompile_limit_hits: list[dict[str, Any]] = field(default_factory=list)
    graph_breaks: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    run: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] | None = None
    target_location: dict[str, Any] | None = None  # {file, line} of the probed function
    files: list[str] = field(default_factory=list)  # user files the findings are in

    # -- verdicts --------------------------------------------------------------------------------

    @property
    def completed(self) -> bool:
        return self.status in ("ok", "stopped")

    @property
    def has_problems(self) -> bool:
        """Breaks, recompiles, limit hits, errors, mismatches or a run that did not complete."""
        recompiles = any(c["kind"] == "recompile" for c in self.compiles)
        mismatches = any(
            c.get("status") in ("mismatch", "compiled-raised", "eager-raised") for c in self.correctness
        )
        return bool(
            self.graph_breaks
            or recompiles
            or self.recompile_limit_hits
            or self.errors
            or mismatches
            or not self.completed
        )

    @property
    def graphs(self) -> int:
        """FX graphs produced by every compile (0: nothing ran compiled)."""
        return sum(int(c.get("graphs") or 0) for c in self.compiles if c.get("kind") != "limit-refused")

    def headline(self) -> str:
        """The verdict in a few words, worst first: how the run ended when it did not complete,
        then hard errors, then a run that produced no graph, then mismatches; "" when none applies."""
        if not self.completed:
            return _short_status(self)
        if self.errors:
            kinds = {e.get("kind") for e in self.errors}
            word = "device error" if kinds == {"device"} else "hard error"
            return f"{len(self.errors)} {word}{'s' if len(self.errors) != 1 else ''}"
        if not self.compiles:
            return "nothing was compiled"
        if self.graphs == 0:
            return "no graph produced"
        bad = [
            c for c in self.correctness if c.get("status") in ("mismatch", "compiled-raised", "eager-raised")
        ]
        if bad:
            return f"{len(bad)}/{len(self.correctness)} calls differ from eager"
        return ""

    # -- conversions -----------------------------------------------------------------------------

    def diagnostics(self) -> list[Any]:
        from tclint.runtime_probe.diagnostics import to_diagnostics

        return to_diagnostics(self)

    def to_json(self, diagnostics: list[Any] | None = None) -> dict[str, Any]:
        """The JSON report: ruff-compatible ``diagnostics`` plus the probe's own sections."""
        from tclint.rules.report.json_ import to_dict

        diags = self.diagnostics() if diagnostics is None else diagnostics
        out = asdict(self)
        rows = []
        for d in diags:
            row = to_dict(d)
            for key in ("unpredicted", "hits", "predicted_by"):
                if key in d.extra:
                    row[key] = d.extra[key]
            rows.append(row)
        return {"version": 1, "diagnostics": rows, **out, "verdict": self.headline(), "graphs": self.graphs}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProbeReport:  # "verdict" and "graphs" are derived
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


def _short_status(report: ProbeReport) -> str:
    """How a run that did not complete ended, in a few words (a code lens, a status bar)."""
    status = report.status
    if status == "exception":
        exc = next((e for e in report.errors if e.get("source") == "run"), None)
        return f"raised {str(exc['type']).rsplit('.', 1)[-1]}" if exc else "raised an exception"
    if status == "exit":
        return f"exited with status {report.run.get('exit_code')}"
    if status == "crashed":
        return f"crashed ({report.run.get('signal') or 'signal'})"
    if status == "timeout":
        t = report.run.get("timeout")
        return f"timed out after {t:g} s" if isinstance(t, (int, float)) else "timed out"
    words = {
        "memory": "out of memory",
        "exited": "exited before reporting",
        "cancelled": "cancelled",
        "need-inputs": "needs declared inputs",
        "inputs-rejected": "synthesised inputs rejected by eager code",
        "inputs-error": "the inputs file failed",
        "probe-error": "the probe itself failed",
        "worker-died": "the probe worker died",
        "worker-error": "the probe worker did not start",
    }
    return words.get(status, STATUS_TEXT.get(status, status))


# ---------------------------------------------------------------------------------------------
# building


def _frame_of(rec: dict[str, Any]) -> tuple[str | None, int | None, str | None]:
    return rec.get("co_filename"), rec.get("co_firstlineno"), rec.get("co_name")


def original(co_name: str | None) -> str | None:
    if not co_name:
        return co_name
    m = RESUME.match(co_name)
    return m.group(1) if m else co_name


def _frame_id(compile_id: str) -> str:
    """``"0/3"`` -> ``"0"``; ``"2:0/3"`` (after the user reset Dynamo twice) -> ``"2:0"``."""
    return str(compile_id).strip("!").split("/")[0]


def _first_line(text: Any) -> str:
    s = str(text or "").strip()
    return s.splitlines()[0] if s else ""


def build_compiles(
    records: list[dict[str, Any]],
    search: list[str] | None = None,
    automatic_dynamic: bool = True,
    mode_switched: bool = False,
) -> list[dict[str, Any]]:
    """One entry per frame compile, in compile order.  ``search``: the user's files where a
    train/eval, grad-mode or autocast switch may be made (the probed script or function file,
    the inputs file); ``automatic_dynamic``: Dynamo's ``automatic_dynamic_shapes``;
    ``mode_switched``: the run's calls switched train/eval mode (declared ``"mode"`` items)."""
    by_frame: dict[str, dict[str, Any]] = {}
    for rec in records:
        if rec.get("co_name"):
            by_frame.setdefault(_frame_id(rec["compile_id"]), rec)
    out = []
    for rec in records:
        cid = str(rec.get("compile_id"))
        base = rec if rec.get("co_name") else by_frame.get(_frame_id(cid), rec)
        file, line, co_name = _frame_of(base)
        name = original(co_name) or "?"
        resume = bool(co_name and RESUME.match(co_name))
        fail_first = _first_line(rec.get("fail_reason"))
        limit = fail_first == LIMIT_TYPE
        recompile = rec.get("recompile")
        if limit:
            kind = "limit-refused"
        elif recompile:
            kind = "recompile"
        elif resume:
            kind = "resume"
        else:
            kind = "first"
        resumed = RESUME.match(co_name) if resume and co_name else None
        resume_at = int(resumed.group(2)) if resumed else None
        guard_at = guards.locate(recompile, file, line, name, resume_at) if recompile else None
        # a resume function's arguments are the frame's live locals, under the same names
        guard_param = guards.parameter(file, line, name, recompile.get("source")) if recompile else None
        dropped = bool(rec.get("fail_type")) and not rec.get("has_guarded_code") and not limit
        cause = guards.explain(recompile, file, resume_at, automatic_dynamic) if recompile else None
        if cause is not None and mode_switched and cause["kind"] in ("guard-error", "none"):
            # what Dynamo says when a module's mode changed under a value that exists in one mode only
            cause = {
                **cause,
                "kind": "train-eval",
                "text": f"train/eval mode changed between the calls: {cause['text']}",
            }
        if cause is not None and recompile is not None and cause["kind"] in guards.CAUSE_CALLS:
            switch = guards.find_calls(
                [*(search or []), *([file] if file else [])], _switch_calls(cause, recompile)
            )
            if switch is not None:
                cause["switched_at"] = switch
        out.append(
            {
                "compile_id": cid,
                "frame": {
                    "function": name,
                    "file": file,
                    "line": line,
                    "code_name": co_name,
                    "qualname": guards.qualified_name(file, line, name) or name,
                },
                "cause": cause,
                "kind": kind,
                "trigger": _trigger_text(kind, recompile, co_name),
                "guard": recompile,
                "guard_location": guard_at,
                "guard_parameter": guard_param,
                "time_s": rec.get("entire_frame_compile_time_s"),
                "backend_time_s": rec.get("backend_compile_time_s"),
                "graphs": rec.get("graphs", 0),
                "graph_ops": rec.get("graph_op_count"),
                "guards": rec.get("guard_count"),
                "fail_type": rec.get("fail_type"),
                "fail_reason": _first_line(rec.get("fail_reason")) or None,
                "fail_reason_full": (rec.get("fail_reason") or "")[:4000] or None,
                "fail_detail": rec.get("fail_detail"),
                "fail_gb_id": rec.get("fail_gb_id"),
                "fail_location": _fail_location(rec),
                "dropped": dropped,
                "restart_reasons": rec.get("restart_reasons") or [],
                "start_time_us": rec.get("start_time_us"),
            }
        )
    _share_guard_locations(out)
    _static_frames(out)
    _fold_secondary(out)
    return out


def _static_frames(compiles: list[dict[str, Any]]) -> None:
    """A frame that recompiled twice for a change of size in the same dimension of the same value
    was compiled with static shapes (``torch.compile(dynamic=False)`` turns automatic dynamic
    shapes off for its frames only, so the run's config still says on): its size recompiles say
    so instead of "expected once per dimension"."""
    seen: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for c in compiles:
        cause = c.get("cause") or {}
        if c["kind"] != "recompile" or not str(cause.get("text", "")).endswith(guards.AUTOMATIC_DYNAMIC_NOTE):
            continue  # (a 0/1 specialisation of a dynamic size reads differently: not counted)
        frame = c["frame"]
        key = (frame["file"], frame["line"], frame["function"], cause.get("subject"), cause.get("index"))
        seen.setdefault(key, []).append(cause)
    for causes in seen.values():
        if len(causes) < 2:
            continue
        for cause in causes:
            cause["text"] = str(cause["text"])[: -len(guards.AUTOMATIC_DYNAMIC_NOTE)] + guards.STATIC_NOTE


def _switch_calls(cause: dict[str, Any], recompile: dict[str, Any]) -> tuple[str, ...]:
    """The calls that make the change a cause names: compiled in train mode -> ``.eval()``."""
    guard = (recompile.get("guard") or "").rstrip()
    if cause["kind"] == "train-eval" and guard.endswith(("True", "False")):
        return ("eval", "mode") if guard.endswith("True") else ("train", "mode")
    if cause["kind"] == "train-eval":
        return ("train", "eval", "mode")
    return guards.CAUSE_CALLS[cause["kind"]]


def _fold_secondary(compiles: list[dict[str, Any]]) -> None:
    """A continuation after a graph break (a resume function) that recompiles right after its own
    function recompiled did so because of the same call (the new batch size, the new mode reach
    it too): it is marked ``secondary_of`` the first recompile of that call, which gets the count."""
    by_id = {c["compile_id"]: c for c in compiles}
    timed = all(isinstance(c.get("start_time_us"), int) for c in compiles)
    ordered = sorted(compiles, key=lambda c: c["start_time_us"]) if timed else compiles  # as they happened
    for prev, c in zip(ordered, ordered[1:], strict=False):
        f, p = c["frame"], prev["frame"]
        if c["kind"] != "recompile" or f["code_name"] == f["function"]:
            continue
        if prev["kind"] != "recompile" or (p["file"], p["function"]) != (f["file"], f["function"]):
            continue
        if _position(p) >= _position(f):
            continue  # one call runs its function's parts in order: this is the next call's recompile
        root = by_id[prev.get("secondary_of") or prev["compile_id"]]
        c["secondary_of"] = root["compile_id"]
        root.setdefault("secondary", []).append(c["compile_id"])


def _position(frame: dict[str, Any]) -> int:
    """Where a code object starts within its function: 0 for the function itself, else the line
    of the graph break its continuation resumes after."""
    m = RESUME.match(frame.get("code_name") or "")
    return int(m.group(2)) if m and frame.get("code_name") != frame.get("function") else 0


def _share_guard_locations(compiles: list[dict[str, Any]]) -> None:
    """Dynamo attaches the installing line to some reasons of a guard and not to others (``steps
    == 1`` has it, ``steps == 2`` does not): one guarded source gets one location."""
    best: dict[tuple[Any, ...], dict[str, Any]] = {}
    for c in compiles:
        loc, guard = c.get("guard_location"), c.get("guard") or {}
        if loc and guard.get("stack"):
            best.setdefault((c["frame"]["file"], c["frame"]["code_name"], guard.get("source")), loc)
    for c in compiles:
        guard = c.get("guard") or {}
        key = (c["frame"]["file"], c["frame"]["code_name"], guard.get("source"))
        if c["kind"] == "recompile" and not guard.get("stack") and key in best:
            c["guard_location"] = best[key]


def _fail_location(rec: dict[str, Any]) -> dict[str, Any] | None:
    """Where a compile failed, in the user's files: Dynamo's "from user code" block first."""
    import re as _re

    frames = (
        _re.findall(
            r'File "(.*)", line (\d+), in (\S+)',
            (rec.get("fail_reason") or "").split("from user code:", 1)[-1],
        )
        if "from user code:" in (rec.get("fail_reason") or "")
        else []
    )
    for path, line, fn in reversed(frames):
        if "site-packages" not in path and "/lib/python" not in path:
            return {"file": os.path.realpath(path), "line": int(line), "function": fn}
    if rec.get("fail_user_frame_filename") and rec.get("fail_user_frame_user", True):
        return {"file": rec["fail_user_frame_filename"], "line": rec.get("fail_user_frame_lineno")}
    return None


def _trigger_text(kind: str, recompile: dict[str, Any] | None, co_name: str | None) -> str:
    if kind == "limit-refused":
        return "refused: the recompile limit was reached; new inputs run eagerly"
    if kind == "recompile" and recompile:
        return f"guard failed: {recompile.get('guard') or recompile.get('text')}"
    if kind == "resume":
        m = RESUME.match(co_name or "")
        return (
            f"continuation after the graph break at line {m.group(2)}"
            if m
            else "continuation after a graph break"
        )
    return "first call"


def build_frames(
    compiles: list[dict[str, Any]], limit_refusals: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    frames: dict[tuple[Any, ...], dict[str, Any]] = {}
    for c in compiles:
        f = c["frame"]
        key = (f["file"], f["code_name"], f["line"])
        entry = frames.setdefault(
            key,
            {
                "function": f["function"],
                "file": f["file"],
                "line": f["line"],
                "code_name": f["code_name"],
                "qualname": f.get("qualname") or f["function"],
                "resume": f["code_name"] != f["function"],
                "compiles": 0,
                "recompiles": 0,
                "limit_hit": False,
                "time_s": 0.0,
                "graphs": 0,
                "dropped": False,
                "compile_ids": [],
            },
        )
        entry["compile_ids"].append(c["compile_id"])
        if c["kind"] == "limit-refused":
            entry["limit_hit"] = True
            continue
        entry["compiles"] += 1
        entry["recompiles"] += c["kind"] == "recompile"
        entry["time_s"] += c["time_s"] or 0.0
        entry["graphs"] += c["graphs"] or 0
        entry["dropped"] = entry["dropped"] or c["dropped"]
    rows = list(frames.values())
    if limit_refusals and not any(r["limit_hit"] for r in rows) and rows:
        max(rows, key=lambda r: r["compiles"])["limit_hit"] = True  # refusal without a frame record
    hits = []
    for r in rows:
        if r["limit_hit"]:
            last = [c for c in compiles if c["compile_id"] in r["compile_ids"] and c["kind"] == "recompile"]
            failed = [c for c in compiles if c["compile_id"] in r["compile_ids"] and c.get("guard")]
            hits.append(
                {
                    "function": r["function"],
                    "file": r["file"],
                    "line": r["line"],
                    "compiles": r["compiles"],
                    "qualname": r["qualname"],
                    "last_guard": last[-1]["trigger"] if last else None,
                    "guards": list(
                        dict.fromkeys(g for c in failed if (g := (c["guard"] or {}).get("guard")))
                    ),
                    "message": f"`{r['qualname']}` reached the recompile limit after {r['compiles']} compiles: "
                    "from now on new inputs run eagerly, without compiling",
                }
            )
    return rows, hits


def collapse_resumes(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A frame paused at a break calls its resume function, which Dynamo's traceback shows under
    the same name: ``fn:8 -> fn:10`` is one activation of ``fn``, now at line 10."""
    out: list[dict[str, Any]] = []
    for f in frames:
        if (
            out
            and out[-1].get("file") == f.get("file")
            and out[-1].get("function") == f.get("function")
            and f.get("function") != "<module>"
        ):
            out[-1] = f
        else:
            out.append(f)
    return out


def site_of(event: dict[str, Any]) -> dict[str, Any]:
    stack = event.get("stack") or []
    user = [f for f in stack if f.get("user") and f.get("function") != "<module>"] or [
        f for f in stack if f.get("user")
    ]
    if user:
        return {**user[-1], "in_library": False}
    at = (
        event.get("reported_at")
        or (stack[-1] if stack else None)
        or {"file": "?", "line": 0, "function": "?"}
    )
    return {**at, "in_library": True}


def build_breaks(
    events: list[dict[str, Any]],
    compiles: list[dict[str, Any]],
    hits: dict[str, int] | None,
    hits_supported: bool,
) -> list[dict[str, Any]]:
    by_cid = {c["compile_id"]: c for c in compiles}
    sites: dict[tuple[Any, ...], dict[str, Any]] = {}
    for ev in events:
        site = site_of(ev)
        key = (site["file"], site["line"], ev.get("gb_id") or ev.get("gb_type"))
        entry = sites.get(key)
        if entry is None:
            entry = sites[key] = {
                "file": site["file"],
                "line": site["line"],
                "function": site.get("function"),
                "in_library": site["in_library"],
                "gb_id": ev.get("gb_id"),
                "gb_type": ev.get("gb_type"),
                "reason": ev.get("reason"),
                "explanation": ev.get("explanation"),
                "hints": [],
                "url": ev.get("url"),
                "user_stack": collapse_resumes([f for f in ev.get("stack") or [] if f.get("user")]),
                "reported_at": ev.get("reported_at"),
                "events": 0,
                "compile_ids": [],
                "frame_dropped": False,
                "dropped_frames": [],
                "_events": [],
            }
        entry["events"] += 1
        entry["_events"].append(ev)
        for hint in ev.get("hints") or []:
            if hint not in entry["hints"]:
                entry["hints"].append(hint)
        cid = str(ev.get("compile_id"))
        if cid not in entry["compile_ids"]:
            entry["compile_ids"].append(cid)
        comp = by_cid.get(cid)
        if comp is not None and comp["dropped"]:
            entry["frame_dropped"] = True
            f = comp["frame"]
            shown = f.get("qualname") or f["function"]
            name = f"{shown} ({_where({'file': f['file'], 'line': f['line']})})" if f.get("file") else shown
            if name not in entry["dropped_frames"]:
                entry["dropped_frames"].append(name)
    out = []
    for entry in sites.values():
        entry["hits"] = _site_hits(entry, by_cid, hits if hits_supported else None)
        entry["hits_counted"] = entry["hits"] is not None
        del entry["_events"]
        out.append(entry)
    out.sort(key=lambda e: (-(e["hits"] or 0), not e["frame_dropped"], e["file"], e["line"]))
    return out


def _site_hits(
    entry: dict[str, Any], by_cid: dict[str, dict[str, Any]], hits: dict[str, int] | None
) -> int | None:
    if hits is None:
        return None
    own: set[str] = set()
    groups: dict[tuple[Any, Any], set[str]] = {}
    for cid in entry["compile_ids"]:
        comp = by_cid.get(cid)
        if comp is None or comp["dropped"]:
            continue
        frame = comp["frame"]
        groups.setdefault((frame["file"], frame["function"]), set()).add(cid)
        same_file = (
            frame["file"]
            and entry["file"]
            and os.path.realpath(frame["file"]) == os.path.realpath(entry["file"])
        )
        if same_file and frame["function"] == entry["function"]:
            own.add(cid)
    if own:
        return sum(hits.get(cid, 0) for cid in own)
    if groups:
        return max(sum(hits.get(cid, 0) for cid in cids) for cids in groups.values())
    return None


def fault_location(text: str | None) -> dict[str, Any] | None:
    """The innermost user-looking frame of a faulthandler dump (first thread listed)."""
    if not text:
        return None
    frames: list[dict[str, Any]] = []
    for line in text.splitlines():
        if line.startswith(("Thread ", "Current thread ")) and frames:
            break
        m = FAULT_FRAME.match(line)
        if m:
            frames.append({"file": m.group(1), "line": int(m.group(2)), "function": m.group(3).strip()})
    for f in frames:  # most recent call first
        path = f["file"]
        if (
            "site-packages" in path
            or "/lib/python" in path
            or path.endswith("runtime_probe/worker.py")
            or "runtime_probe/worker_" in path
        ):
            continue
        return f
    return frames[0] if frames else None


def build_errors(
    result: dict[str, Any] | None, compiles: list[dict[str, Any]], correctness: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Hard errors and the run's own exception, once each: the same error seen by a compile
    record and by the exception it raised is one error (the compile record knows the line)."""
    errors: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], dict[str, Any]] = {}

    def add(
        kind: str,
        etype: str,
        message: str,
        where: dict[str, Any] | None,
        gb_id: str | None,
        source: str,
        detail: str | None = None,
        traceback: str | None = None,
    ) -> None:
        short = etype.rsplit(".", 1)[-1]
        key = (short, _first_line(message)[:160])
        if key in seen:
            known = seen[key]
            if not known.get("file") and where:
                known.update(file=where.get("file"), line=where.get("line"), function=where.get("function"))
            if kind not in ("exception", "compiled-only-exception") and known["kind"] in (
                "exception",
                "hard-error",
            ):
                known["kind"] = kind
            known["traceback"] = known.get("traceback") or traceback
            return
        text = _first_line(message)
        if detail and detail not in text:
            text = f"{text}: {detail}"
        entry = {
            "kind": kind,
            "type": etype,
            "message": text,
            "full_message": message[:4000],
            "file": (where or {}).get("file"),
            "line": (where or {}).get("line"),
            "function": (where or {}).get("function"),
            "gb_id": gb_id,
            "source": source,
            "traceback": traceback,
        }
        seen[key] = entry
        errors.append(entry)

    eager_errors = [
        _first_line((e.get("eager_error") or {}).get("message"))
        for e in correctness
        if e.get("status") in ("both-raised", "inputs-rejected")
    ]
    for c in compiles:
        reason_text = c.get("fail_reason_full") or c.get("fail_reason") or ""
        if any(head and head in reason_text for head in eager_errors):
            continue  # the call's own error, raised eagerly too: the code (or its inputs), not compilation
        if (
            c["fail_type"]
            and c["fail_type"] not in ("Unsupported", "SkipCodeRecursiveException", "UserError")
            and c["kind"] != "limit-refused"
        ):
            reason = c.get("fail_reason_full") or c["fail_reason"] or c["fail_type"]
            add(
                _kind_of(reason, "hard-error"),
                c["fail_type"],
                reason,
                c.get("fail_location"),
                c["fail_gb_id"],
                f"compile {c['compile_id']}",
                c.get("fail_detail"),
            )
    for entry in correctness:
        err = entry.get("compiled_error")
        if err and entry.get("status") in ("compiled-raised", "mismatch"):
            kind = err.get("kind") or "exception"
            if kind == "exception":
                kind = "compiled-only-exception"
            add(
                kind,
                err.get("type", "?"),
                err.get("message", ""),
                err.get("user_frame"),
                err.get("gb_id"),
                f"call {entry.get('label') or entry.get('index')}",
                err.get("detail"),
                entry.get("compiled_traceback"),
            )
    exc = (result or {}).get("exception")
    if exc:
        add(
            exc.get("kind") or "exception",
            exc.get("type", "?"),
            exc.get("message", ""),
            exc.get("user_frame"),
            exc.get("gb_id"),
            "run",
            exc.get("detail"),
            exc.get("traceback"),
        )
    return errors


_DEVICE = (
    "not compiled with CUDA",
    "not linked with support for cuda",
    "Accelerator expected",
    "No CUDA GPUs",
    "Found no NVIDIA driver",
)


def _kind_of(text: str, default: str) -> str:
    return "device" if any(m in text for m in _DEVICE) else default


def build_report(outcome: Outcome, spec: dict[str, Any], target: str) -> ProbeReport:
    result = outcome.result or {}
    end = outcome.end or {}
    capture = result.get("capture") or {}
    records = capture.get("compiles")
    if records is None:
        streamed: dict[str, dict[str, Any]] = {}
        for e in outcome.of("compile"):
            streamed[str(e.get("compile_id"))] = e
        records = list(streamed.values())
    events = capture.get("breaks")
    if events is None:
        events = outcome.of("break")
    hits_supported = bool(capture.get("hits_supported", True))
    # the server's shared counters are exact even when the child crashed or was killed
    hits = end.get("hits") if end.get("hits") is not None else capture.get("hits")
    calls = capture.get("calls") if capture.get("calls") is not None else end.get("calls")
    cfg = (result.get("env") or {}).get("config") or {}
    modes = {c.get("mode") or "as built" for c in result.get("correctness") or []}
    compiles = build_compiles(
        records,
        _search_files(spec, result),
        bool(cfg.get("automatic_dynamic_shapes", True)),
        mode_switched=len(modes) > 1,
    )
    frames, limit_hits = build_frames(compiles, int(capture.get("limit_refusals") or 0))
    breaks = build_breaks(events, compiles, hits, hits_supported)
    correctness = result.get("correctness") or [
        {k: v for k, v in e.items() if k not in ("t", "id")} for e in outcome.of("call")
    ]
    errors = build_errors(result, compiles, correctness)
    status, message = run_status(outcome, spec, result, end)
    fault_at = fault_location(end.get("fault"))
    if status in ("timeout", "crashed", "memory", "cancelled") and fault_at:
        message += f" (in {fault_at['function']} at {_where(fault_at)})"
    run = {
        "status": status,
        "exit_code": result.get("exit_code", end.get("returncode")),
        "signal": end.get("signal_name"),
        "wall_s": end.get("wall_s"),
        "compiled_calls": calls,
        "hits_counted": hits_supported and hits is not None,
        "orphans_killed": end.get("orphans") or 0,
        "peak_rss": end.get("peak_rss"),
        "memory_limit": spec.get("memory_limit"),
        "timeout": spec.get("timeout"),
        "output": end.get("output"),
        "fault": end.get("fault"),
        "fault_location": fault_at,
        "cold_start": outcome.cold,
        "worker": {k: outcome.ready.get(k) for k in ("python", "torch", "import_s", "warmup_s", "subreaper")}
        if outcome.ready
        else None,
        "missing_inputs": result.get("missing"),
        "probe_traceback": result.get("traceback"),
        "warnings": [e.get("message") for e in outcome.of("warning")],
    }
    env = dict(result.get("env") or {})
    if not env and outcome.ready:
        env = {
            "torch": outcome.ready.get("torch"),
            "python": outcome.ready.get("python_version"),
            "executable": outcome.ready.get("python"),
            "backend": spec.get("backend"),
        }
    report = ProbeReport(
        mode=spec.get("mode", "program"),
        target=target,
        status=status,
        message=message,
        environment=env,
        correctness=correctness,
        compiles=compiles,
        frames=frames,
        recompile_limit_hits=limit_hits,
        graph_breaks=breaks,
        errors=errors,
        run=run,
        inputs=result.get("inputs"),
    )
    if spec.get("mode") == "function":
        report.target_location = target_location(spec)
    report.files = sorted(
        {b["file"] for b in breaks if not b["in_library"]}
        | {c["frame"]["file"] for c in compiles if c["frame"]["file"] and not installed(c["frame"]["file"])}
        | {e["file"] for e in errors if e.get("file")}
    )
    return report


def installed(path: str) -> bool:
    """Is ``path`` an installed package's file (a compiled library frame: a Hugging Face model's
    ``forward``)?  Those are not the user's files: the static side reaches them through the user's
    compile site (TC312, ``follow-libraries``), and linted as files of their own they would be
    reported as if they were the project's."""
    parts = os.path.realpath(path).split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


def _search_files(spec: dict[str, Any], result: dict[str, Any]) -> list[str]:
    """The files the probed run's calls come from: the script, or the function's file and its
    declared inputs file."""
    out = []
    prog = spec.get("program") or {}
    if prog.get("kind") == "script" and prog.get("target"):
        out.append(prog["target"])
    fn = spec.get("function") or {}
    declared = (result.get("inputs") or {}).get("file")
    out += [p for p in (declared, fn.get("file")) if p]
    return out


def target_location(spec: dict[str, Any]) -> dict[str, Any] | None:
    """Where the probed function (or class, or method) is defined: diagnostics about the target
    as a whole (a mismatch, a run that failed without a better place) go there."""
    import ast

    fn = spec.get("function") or {}
    path = fn.get("file")
    if not path:
        return None
    tree = guards.parse_file(path)
    line = 1
    scope: Any = tree
    for part in fn.get("qualname", "").split(".") if tree is not None else ():
        found = next(
            (
                n
                for n in getattr(scope, "body", [])
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part
            ),
            None,
        )
        if found is None:
            break
        scope, line = found, found.lineno
    return {"file": path, "line": line}


def run_status(
    outcome: Outcome, spec: dict[str, Any], result: dict[str, Any], end: dict[str, Any]
) -> tuple[str, str]:
    limit = spec.get("memory_limit")
    timeout = spec.get("timeout")
    end_status = end.get("status")
    if outcome.parent_status == "worker-died" or (not end and outcome.parent_status is None):
        died = [str(e.get("message")) for e in outcome.events if e.get("t") == "worker-died"]
        return "worker-died", (died[0] if died else "the probe worker died before the probe ended")
    if outcome.parent_status == "timeout" or end_status == "timeout":
        return "timeout", f"timed out after {timeout:g} s; the probe's processes were killed"
    if outcome.parent_status == "cancelled" or end_status == "cancelled":
        return "cancelled", "cancelled; the probe's processes were killed"
    if end_status == "memory":
        return "memory", f"exceeded the memory cap ({_mib(limit)}); the probe's processes were killed"
    if end_status == "crashed":
        sig = end.get("signal_name") or end.get("signal")
        return "crashed", f"the process crashed ({sig})"
    if end_status == "exited" and not end.get("result_received"):
        return "exited", f"the process exited (status {end.get('returncode')}) before reporting its results"
    status = result.get("status") or "probe-error"
    if status == "ok":
        return "ok", STATUS_TEXT["ok"]
    if status == "exit":
        via = " via os._exit" if result.get("via") == "os._exit" else ""
        return "exit", f"the program exited with status {result.get('exit_code')}{via}"
    if status == "exception":
        exc = result.get("exception") or {}
        where = exc.get("user_frame")
        at = f" at {_where(where)}" if where else ""
        kind = exc.get("kind")
        if kind == "memory":
            return (
                "memory",
                f"ran out of memory{at} ({exc.get('type', '').rsplit('.', 1)[-1]}: "
                f"{clip(human_sizes(_first_line(exc.get('message'))), 160)}); memory cap {_mib(limit)}",
            )
        phase = {"import": " while importing the target", "inputs": " while building the inputs"}.get(
            result.get("phase") or "", ""
        )
        return (
            "exception",
            f"raised {exc.get('type', '?').rsplit('.', 1)[-1]}{phase}{at}: {clip(_first_line(exc.get('message')), 200)}",
        )
    if status == "inputs-rejected":
        return status, rejected_message(result)
    if status in ("need-inputs", "inputs-error", "stopped", "probe-error"):
        return status, result.get("message") or STATUS_TEXT[status]
    return status, result.get("message") or STATUS_TEXT.get(status, status)


def rejected_message(result: dict[str, Any]) -> str:
    """What the probe made up and what eager code said about it (the user's inputs are needed)."""
    calls = [c for c in result.get("correctness") or [] if c.get("status") == "inputs-rejected"]
    made = (
        (calls[0].get("synthesised") if calls else None)
        or (result.get("inputs") or {}).get("parameters")
        or {}
    )
    shown = [f"`{name}` = {what}" for name, what in made.items() if not what.endswith("(its default)")]
    err = (calls[0].get("eager_error") if calls else None) or {}
    etype = str(err.get("type", "?")).rsplit(".", 1)[-1]
    where = err.get("user_frame")
    at = f" at {_where(where)}" if where and where.get("file") else ""
    return (
        f"the synthesised inputs were rejected by eager code (not a compile problem): the probe made up "
        f"{', '.join(shown) or 'the arguments'}; eager raised {etype}{at}: {clip(_first_line(err.get('message')), 200)}"
    )


def _where(frame: dict[str, Any]) -> str:
    from tclint.rules.discovery import display_path

    return f"{display_path(frame['file'])}:{frame['line']}"


def human_bytes(n: int) -> str:
    """``26843545600`` -> ``25 GiB``; ``1536`` -> ``1.5 KiB`` (three significant digits at most)."""
    size = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024 or unit == "PiB":
            if unit == "bytes":
                return f"{int(size)} byte{'' if int(size) == 1 else 's'}"
            text = f"{size:.3g}" if size < 100 else f"{size:,.0f}"
            return f"{text} {unit}"
        size /= 1024
    return f"{n} bytes"  # pragma: no cover - the loop always returns


_BYTES = re.compile(r"\b(\d{4,})\s*bytes\b")


def human_sizes(text: str) -> str:
    """Byte counts in a message in human units: ``allocate 26843545600 bytes`` -> ``allocate 25 GiB``."""
    return _BYTES.sub(lambda m: human_bytes(int(m.group(1))), text)


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut between words (never inside a number or a name), with "…"."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def _mib(value: Any) -> str:
    if not value:
        return "none"
    return human_bytes(int(value))
