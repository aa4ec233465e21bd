"""Probe reports as text and machine formats.

``concise``: the merged diagnostics one per line (ruff's shape) and a summary line.
``full``: a report meant to be read: how the run ended and its verdict, hard errors, then in
diagnosis order environment, correctness, compilations (recompile-limit hits first and loud;
each failed guard in the user's terms), graph breaks ranked by hits with the user stack, then
the diagnostics with source snippets.
``json``: ``ProbeReport.to_json`` (ruff-compatible ``diagnostics`` + probe sections).
``sarif`` / ``github``: tclint's own renderers on the merged diagnostics.
"""

from __future__ import annotations

import json
import os
from typing import Any

from tclint.rules.model import Diagnostic


def _rel(path: str | None) -> str:
    if not path:
        return "?"
    if path.startswith("<"):
        return path
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _n(value: Any, word: str) -> str:
    value = int(value or 0)
    return f"{value:,} {word}{'' if value == 1 else 's'}"


def summary_line(report: Any) -> str:
    """One line that never claims more than the run showed: how it ended and its errors first; a
    run that produced no graph says so; counts of what did not run are not given as findings."""
    recompiles = sum(1 for c in report.compiles if c["kind"] == "recompile")
    compiles = sum(1 for c in report.compiles if c["kind"] != "limit-refused")
    hits = sum(b["hits"] or 0 for b in report.graph_breaks)
    parts = [f"Probe {report.status}: {report.message}"]
    others = [
        e for e in report.errors if e.get("source") != "run"
    ]  # the run's own exception is in the message
    if others:
        word = "device error" if {e.get("kind") for e in others} == {"device"} else "hard error"
        parts.append(_n(len(others), word) + " (see Errors)")
    if report.status != "inputs-rejected":
        if compiles and not report.graphs:
            parts.append(f"no graph produced: {_n(compiles, 'frame compile')}, none compiled into a graph")
        elif not compiles:
            parts.append("nothing was compiled" + ("" if report.completed else " before the run stopped"))
        else:
            parts.append(
                f"{_n(report.graphs, 'graph')} from {_n(compiles, 'frame compile')} ({_n(recompiles, 'recompile')})"
            )
        seen = "" if report.completed else " seen before the run stopped"
        parts.append(f"{_n(len(report.graph_breaks), 'graph-break site')}{seen} ({_n(hits, 'hit')})")
    if report.recompile_limit_hits:
        parts.append(f"{_n(len(report.recompile_limit_hits), 'function')} past the recompile limit")
    compared = [c for c in report.correctness if c.get("status") != "inputs-rejected"]
    rejected = len(report.correctness) - len(compared)
    bad = [c for c in compared if c.get("status") in ("mismatch", "compiled-raised", "eager-raised")]
    if compared:
        parts.append(f"{len(compared) - len(bad)}/{len(compared)} compared calls match eager")
    if rejected:
        parts.append(
            f"{rejected}/{len(report.correctness)} calls rejected by eager code (synthesised inputs)"
        )
    return "; ".join(parts) + ".\n"


def concise(report: Any, diags: list[Diagnostic]) -> str:
    from tclint.rules.report.text import concise as render_concise

    lines = render_concise(diags).splitlines()
    out = []
    for d, line in zip(diags, lines, strict=False):
        tag = ""
        if d.extra.get("confirmed"):
            hits = d.extra.get("hits")
            tag = " [confirmed by probe" + (f", {hits:,} hits" if isinstance(hits, int) else "") + "]"
        elif d.extra.get("unpredicted"):
            tag = " [probe only: no static rule predicted this]"
        elif d.extra.get("predicted_by"):
            tag = f" [predicted by {', '.join(d.extra['predicted_by'])}]"
        out.append(line + tag)
        if d.code == "TC906" and d.help:
            out.append(f"  help: {d.help}")  # why the run stopped and what to do: not to be missed
    return "\n".join(out) + ("\n" if out else "") + summary_line(report)


def full(report: Any, diags: list[Diagnostic], sources: dict[str, str | None] | None = None) -> str:
    """The full report: how the run went, its errors first, the environment, correctness (function
    mode), compiles, breaks, the probed code's output when it failed, the diagnostics."""
    s = _run_section(report)
    s.extend(_errors_section(report))  # first: tables above them would read as a success
    s.extend(_environment_section(report.environment or {}))
    if report.mode == "function":
        s.extend(_correctness_section(report))
    s.extend(_compiles_section(report))
    s.extend(_breaks_section(report))
    s.extend(_output_section(report))
    if diags:
        s.extend(_diagnostics_section(diags, sources or {}))
    s.append(summary_line(report).rstrip("\n"))
    return "\n".join(s) + "\n"


def _run_section(report: Any) -> list[str]:
    run = report.run or {}
    s = [f"tclint probe {report.target}", f"  status: {report.status}: {report.message}"]
    if run.get("wall_s") is not None:
        calls = run.get("compiled_calls")
        extra = f", {calls:,} calls of compiled code" if isinstance(calls, int) else ""
        s.append(
            f"  ran {run['wall_s']:.2f} s{extra}"
            + (" (cold worker)" if run.get("cold_start") else " (warm worker)")
        )
    if run.get("orphans_killed"):
        s.append(f"  note: the code left {run['orphans_killed']} process(es) running; they were killed")
    if report.headline():
        s.append(f"  verdict: {report.headline()}")
    s.append("")
    return s


def _environment_section(env: dict[str, Any]) -> list[str]:
    s = [
        "Environment",
        f"  torch {env.get('torch', '?')}, Python {env.get('python', '?')} ({env.get('executable', '?')})",
    ]
    dev = env.get("device", "?")
    cuda = "CUDA available" if env.get("cuda_available") else "no CUDA"
    mapping = ", cuda mapped to cpu" if env.get("map_cuda_to_cpu") else ""
    s.append(f"  device {dev} ({cuda}{mapping}); backend {env.get('backend', '?')}")
    opts = {k: v for k, v in (env.get("compile_options") or {}).items() if v is not None}
    if opts:
        s.append("  torch.compile options: " + ", ".join(f"{k}={v!r}" for k, v in opts.items()))
    cfg = env.get("config") or {}
    if cfg:
        keys = (
            "recompile_limit",
            "capture_scalar_outputs",
            "capture_dynamic_output_shape_ops",
            "automatic_dynamic_shapes",
            "specialize_float",
            "allow_unspec_int_on_nn_module",
        )
        s.append("  dynamo config: " + ", ".join(f"{k}={cfg[k]!r}" for k in keys if k in cfg))
    if env.get("config_requested"):
        s.append(
            "  set by [tool.tclint.dynamo]: "
            + ", ".join(f"{k}={v!r}" for k, v in env["config_requested"].items())
        )
    s.append("")
    return s


def _correctness_section(report: Any) -> list[str]:
    s = ["Correctness (eager vs compiled, per call)"]
    if report.inputs:
        src = report.inputs.get("source")
        where = (
            f" from {_rel(report.inputs.get('file'))}::{report.inputs.get('function')}"
            if src == "declared"
            else " from the annotations"
        )
        s.append(f"  inputs: {src}{where}")
    if not report.correctness:
        s.append("  (no calls ran)")
    for c in report.correctness:
        mark = "ok " if c.get("status") in ("match", "both-raised") else "BAD"
        s.append(f"  [{mark}] call {c.get('label') or c.get('index')}: {c.get('status')}: {c.get('detail')}")
    s.append("")
    return s


def _output_section(report: Any) -> list[str]:
    """The last lines the probed code printed, when the run did not end well."""
    out = (report.run or {}).get("output") or {}
    if report.status in ("ok", "stopped") or not (out.get("tail") or out.get("head")):
        return []
    s = ["Output of the probed code (last lines)"]
    text = out.get("tail") or out.get("head") or ""
    for line in text.rstrip("\n").splitlines()[-20:]:
        s.append(f"  | {line}")
    if out.get("truncated"):
        s.append(f"  ({out.get('bytes', 0):,} bytes in all; middle omitted)")
    s.append("")
    return s


def _diagnostics_section(diags: list[Diagnostic], sources: dict[str, str | None]) -> list[str]:
    from tclint.rules.report.text import full as render_full

    s = ["Diagnostics", ""]
    for d in diags:
        block = render_full([d], sources).rstrip("\n").splitlines()
        note = _probe_note(d)
        if note:
            at = next((i for i, line in enumerate(block) if line.startswith("  = severity")), len(block))
            block.insert(at, f"  = probe: {note}")
        s.extend(block)
        s.append("")
    return s


def _probe_note(d: Diagnostic) -> str:
    if d.extra.get("confirmed"):
        hits = d.extra.get("hits")
        return "confirmed" + (f" (hit {hits:,} times)" if isinstance(hits, int) else "")
    if d.extra.get("unpredicted"):
        return "no static rule predicted this finding"
    if d.extra.get("predicted_by"):
        return "predicted by " + ", ".join(d.extra["predicted_by"])
    return ""


def _compiles_section(report: Any) -> list[str]:
    s = ["Compilations"]
    for hit in report.recompile_limit_hits:
        s.append(f"  !! RECOMPILE LIMIT: {_rel(hit['file'])}:{hit['line']} {hit['message']}")
        if hit.get("last_guard"):
            s.append(f"     last {hit['last_guard']}")
    if not report.compiles:
        s.append("  (nothing was compiled)")
    for c in report.compiles:
        f = c["frame"]
        where = f"{_rel(f['file'])}:{f['line']}" if f.get("file") else "?"
        t = f"{c['time_s']:.3f} s" if isinstance(c.get("time_s"), (int, float)) else "-"
        name = f.get("qualname") or f["function"]
        s.append(
            f"  [{c['compile_id']}] {name} ({where}) {c['kind']}: {c['trigger']}; {t}, {_n(c['graphs'], 'graph')}"
        )
        cause = c.get("cause") or {}
        if cause.get("text"):
            s.append(f"        what changed: {cause['text']}")
        if cause.get("switched_at"):
            s.append(
                f"        switched at: {_rel(cause['switched_at']['file'])}:{cause['switched_at']['line']}"
            )
        if c.get("secondary_of"):
            s.append(
                f"        same call as [{c['secondary_of']}]: this continuation recompiled because of it"
            )
        loc = c.get("guard_location")
        if loc:
            s.append(f"        guard source: {_rel(loc['file'])}:{loc['line']} ({loc.get('how')})")
        if c["dropped"]:
            s.append(f"        DROPPED: the whole frame runs eagerly ({c['fail_type']}: {c['fail_reason']})")
        elif c["fail_type"] and c["kind"] != "limit-refused":
            s.append(f"        failed: {c['fail_type']}: {c['fail_reason']}")
    s.append("")
    return s


def _breaks_section(report: Any) -> list[str]:
    s = ["Graph breaks (most hit first)"]
    if not report.graph_breaks:
        if not report.completed:
            s.append("  (none seen before the run stopped: not a clean result)")
        elif report.compiles and not report.graphs:
            s.append("  (none, but no graph was produced either: nothing ran compiled)")
        else:
            s.append("  (none)")
    for b in report.graph_breaks:
        hits = f"{b['hits']:,} hits" if b["hits"] is not None else "hits not counted (ran eagerly)"
        gb = b.get("gb_id") or "no GB id"
        s.append(
            f"  {_rel(b['file'])}:{b['line']} in {b.get('function')}: {gb} {b.get('gb_type') or b.get('reason')}  [{hits}]"
        )
        if b["frame_dropped"]:
            s.append(
                f"      whole frame dropped: {', '.join(b['dropped_frames'])} run(s) eagerly on every call"
            )
        if b.get("explanation"):
            s.append(f"      why: {b['explanation']}")
        for hint in (b.get("hints") or [])[:3]:
            s.append(f"      hint: {hint}")
        if len(b["user_stack"]) > 1:
            chain = " -> ".join(f"{f['function']} ({_rel(f['file'])}:{f['line']})" for f in b["user_stack"])
            s.append(f"      stack: {chain}")
        if b["in_library"] and b.get("reported_at"):
            s.append(
                f"      reported in library code at {_rel(b['reported_at']['file'])}:{b['reported_at']['line']}"
            )
        if b.get("url"):
            s.append(f"      docs: {b['url']}")
    s.append("")
    return s


def _errors_section(report: Any) -> list[str]:
    if not report.errors:
        return []
    s = ["Errors"]
    for e in report.errors:
        where = f" at {_rel(e['file'])}:{e['line']}" if e.get("file") else ""
        gb = f" [{e['gb_id']}]" if e.get("gb_id") else ""
        s.append(f"  {e['kind']}{gb}: {e['type'].rsplit('.', 1)[-1]}: {e['message']}{where} ({e['source']})")
    s.append("")
    return s


def render(
    fmt: str, report: Any, diags: list[Diagnostic], sources: dict[str, str | None] | None = None
) -> str:
    if fmt == "concise":
        return concise(report, diags)
    if fmt == "full":
        return full(report, diags, sources)
    if fmt == "json":
        return json.dumps(report.to_json(diags), indent=2, ensure_ascii=False, default=str) + "\n"
    if fmt == "sarif":
        from tclint.rules.report.sarif import render as sarif

        return sarif(diags)
    if fmt == "github":
        from tclint.rules.report.github import render as github

        return github(diags)
    raise ValueError(f"unknown output format {fmt!r}")
