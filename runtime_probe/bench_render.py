"""``tclint bench`` reports: concise text, JSON, Markdown (a PR comment) and one self-contained HTML file.

The HTML page has no script and loads nothing from the network: inline CSS and inline SVG only (a
per-call latency timeline with every compile and recompile marked, the latency distribution of
each phase, the mode table), so it opens the same in a browser, a CI artifact viewer or an editor
panel.
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

PHASE_COLOURS = {"cold": "#d62728", "warmup": "#ff7f0e", "steady": "#1f77b4"}


def _ms(v: Any) -> str:
    if v is None:
        return "-"
    return f"{v * 1e3:.3g} ms" if v < 1 else f"{v:.3g} s"


def _mib(v: Any) -> str:
    return "-" if v is None else f"{v / 2**20:.0f} MiB"


def _x(v: Any) -> str:
    return "-" if v is None else f"{v:.3g}x"


def mode_rows(report: dict[str, Any]) -> list[list[str]]:
    """The mode table: one row per mode (unsupported and failed modes say why)."""
    head = [
        "mode",
        "cold start",
        "cold (cached)",
        "compile",
        "variants",
        "steady p50",
        "p95",
        "p99",
        "p99/p50",
        "throughput",
        "eager p50",
        "speedup",
        "recompiles after warm-up",
        "peak RSS",
    ]
    rows = [head]
    for run in report.get("runs") or []:
        if run.get("status") != "ok":
            rows.append([run["mode"], f"{run['status']}: {run.get('reason')}"] + [""] * (len(head) - 2))
            continue
        cold, steady, eager = run["cold"], run["steady"], run["eager"]
        cached = (run.get("cold_cached") or {}).get("start_to_first_result_s")
        rows.append(
            [
                run["mode"],
                _ms(cold.get("start_to_first_result_s")),
                _ms(cached),
                _ms((cold.get("compile") or {}).get("total_s")),
                str(run.get("variants")),
                _ms(steady.get("p50_s")),
                _ms(steady.get("p95_s")),
                _ms(steady.get("p99_s")),
                "-" if steady.get("p99_over_p50") is None else f"{steady['p99_over_p50']:.2f}",
                "-" if steady.get("throughput_per_s") is None else f"{steady['throughput_per_s']:.4g}/s",
                _ms(eager.get("p50_s")),
                _x(eager.get("speedup")),
                str(len(steady.get("recompiles") or [])),
                _mib(run.get("peak_rss_bytes")),
            ]
        )
    return rows


def _run_lines(run: dict[str, Any], kind: str = "function") -> list[str]:
    cold, warm, steady = run["cold"], run["warmup"], run["steady"]
    comp = cold.get("compile") or {}
    lines = [f"mode {run['mode']}:"]
    split = ", ".join(
        f"{k[:-2]} {_ms(v)}" for k, v in comp.items() if k.endswith("_s") and k != "total_s" and v is not None
    )
    lines.append(
        f"  cold    start to first result {_ms(cold.get('start_to_first_result_s'))} (import torch "
        f"{_ms(cold.get('import_torch_s'))}, first call {_ms(cold.get('first_call_s'))}; compile {_ms(comp.get('total_s'))}"
        + (f": {split}" if split else "")
        + f"), {cold.get('graphs')} graph(s), {cold.get('breaks')} break(s), "
        f"peak RSS {_mib(cold.get('peak_rss_bytes'))}"
        + (f", device {_mib(cold['peak_device_bytes'])}" if cold.get("peak_device_bytes") else "")
    )
    if run.get("cold_cached"):
        cc = run["cold_cached"]
        lines.append(
            f"          with the compile cache populated: {_ms(cc.get('start_to_first_result_s'))} "
            f"(compile {_ms((cc.get('compile') or {}).get('total_s'))}; the cache saves {_ms(run.get('cache_saves_s'))})"
        )
    over = "bucket(s)" if kind == "function" else "compiled callable(s)"
    lines.append(
        f"  warm-up {warm.get('calls')} call(s) over {len(warm.get('buckets') or [])} {over} in {_ms(warm.get('seconds'))}: "
        f"{warm.get('variants')} variant(s) compiled"
    )
    for c in warm.get("compiles") or []:
        lines.append(
            f"          {c['compile_id']} {c.get('function')} ({c['phase']}, bucket {c.get('bucket')!r}): {c['trigger']['text']}"
        )
    lines.append(
        f"  steady  {steady.get('n')} call(s): p50 {_ms(steady.get('p50_s'))}, p95 {_ms(steady.get('p95_s'))}, "
        f"p99 {_ms(steady.get('p99_s'))}, p99/p50 "
        + ("-" if steady.get("p99_over_p50") is None else f"{steady['p99_over_p50']:.2f}")
        + (f", {steady['throughput_per_s']:.4g} calls/s" if steady.get("throughput_per_s") else "")
    )
    recompiles = steady.get("recompiles") or []
    if recompiles:
        lines.append(
            f"          {len(recompiles)} compile(s) after warm-up (recompiles, or code the warm-up never reached):"
        )
        for c in recompiles:
            refused = f" (not compiled: {c['failed']}, runs eagerly)" if c.get("failed") else ""
            lines.append(
                f"            call {c.get('call')} (bucket {c.get('bucket')!r}) {c['compile_id']} {c.get('function')}: "
                f"{c['trigger']['text']} [guard: {c['trigger'].get('guard')}]{refused}"
            )
    else:
        lines.append("          no compile after warm-up")
    skips = [c for c in run.get("compiles") or [] if c.get("cudagraph_skip_reason")]
    for c in skips:
        lines.append(
            f"  cudagraphs skipped for {c['compile_id']} {c.get('function')}: {c['cudagraph_skip_reason']}"
        )
    if run.get("training"):
        lines.append(
            "  training " + ", ".join(f"{k} p50 {_ms(v.get('p50_s'))}" for k, v in run["training"].items())
        )
    eager = run["eager"]
    lines.append(
        f"  eager   p50 {_ms(eager.get('p50_s'))} on the same inputs: speedup {_x(eager.get('speedup'))}"
    )
    agreement = run.get("agreement")
    if agreement:
        bad = [a for a in agreement if a.get("status") not in ("match", "both-raised")]
        lines.append(
            "  agree   "
            + (
                "eager and compiled agree on every bucket"
                if not bad
                else "; ".join(f"{a['bucket']}: {a['status']} ({a.get('detail')})" for a in bad)
            )
        )
    lines.append(
        f"  harness overhead {_ms(run.get('harness_overhead_s'))} per call (an empty call through the same timer)"
    )
    if run.get("call_overhead_s") is not None:
        lines.append(
            f"          the bench adds {_ms(run['call_overhead_s'])} around each of the program's calls (median; "
            "not in the latencies above, seen by the program's own clock)"
        )
    plain = run.get("plain_loop_cross_check")
    if plain and plain.get("ratio"):
        lines.append(
            f"  cross-check steady harness / plain perf_counter loop: {plain['ratio']:.3g}x "
            f"(median of {plain['rounds']} interleaved rounds of {plain['calls_per_round']} calls)"
        )
    return lines


def render_text(report: dict[str, Any]) -> str:
    lines = [
        f"tclint bench {report['target']}  (backend {report['backend']}, torch {report.get('torch')}, "
        f"{'CUDA' if report.get('cuda_available') else 'CPU'})",
        "",
    ]
    for run in report.get("runs") or []:
        if run.get("status") == "ok":
            lines += _run_lines(run, report.get("kind", "function")) + [""]
        else:
            lines += [f"mode {run['mode']}: {run['status']}: {run.get('reason')}", ""]
    if len(report.get("runs") or []) > 1:
        rows = mode_rows(report)
        measured = [
            r for r in rows if not r[-1] == "" or r is rows[0]
        ]  # a mode that did not run: its reason only
        widths = [max(len(r[i]) for r in measured) for i in range(len(rows[0]))]
        widths[0] = max(len(r[0]) for r in rows)  # a mode that did not run still lines up
        for r in rows:
            if r in measured:
                lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip())
            else:
                lines.append(f"{r[0].ljust(widths[0])}  {r[1]}")
        lines.append("")
    lines += _contract_lines(report)
    return "\n".join(lines).rstrip() + "\n"


def _contract_lines(report: dict[str, Any]) -> list[str]:
    contract = report.get("contract")
    if not contract:
        return []
    if contract.get("checked") == []:
        return ["contract: not checked (no mode was measured)"]
    if contract["passed"]:
        return ["contract: every budget holds"]
    return [f"contract: {len(contract['violations'])} budget(s) broken"] + [
        f"  {v['message']}" for v in contract["violations"]
    ]


def render_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, sort_keys=True, default=str) + "\n"


def render_markdown(report: dict[str, Any]) -> str:
    """A summary for a pull-request comment: the mode table, recompiles after warm-up, the contract."""
    rows = mode_rows(report)
    out = [
        f"### tclint bench `{report['target']}`",
        "",
        f"backend `{report['backend']}`, torch {report.get('torch')}, {'CUDA' if report.get('cuda_available') else 'CPU'}",
        "",
    ]
    out.append("| " + " | ".join(rows[0]) + " |")
    out.append("|" + "---|" * len(rows[0]))
    for r in rows[1:]:
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    out.append("")
    for run in report.get("runs") or []:
        for c in (run.get("steady") or {}).get("recompiles") or []:
            out.append(
                f"- **recompile after warm-up** ({run['mode']}), call {c.get('call')} bucket `{c.get('bucket')}`: "
                f"{c['trigger']['text']} (guard `{c['trigger'].get('guard')}`)"
            )
    contract = report.get("contract")
    if contract:
        out.append("")
        if contract.get("checked") == []:
            out.append("**Contract: not checked** (no mode was measured)")
        else:
            out.append(
                "**Contract: passed**"
                if contract["passed"]
                else f"**Contract: {len(contract['violations'])} budget(s) broken**"
            )
        for v in contract.get("violations") or []:
            out.append(f"- {v['message']}")
    return "\n".join(out).rstrip() + "\n"


# ---------------------------------------------------------------------------------------------
# HTML


def _timeline_svg(run: dict[str, Any], width: int = 900, height: int = 260) -> str:
    points = run.get("timeline") or []
    if not points:
        return "<p>no calls were timed</p>"
    lat = [max(p["latency_s"], 1e-9) for p in points]
    lo, hi = math.log10(min(lat)), math.log10(max(lat))
    hi = hi if hi > lo else lo + 1
    pad_l, pad_b = 60, 30
    w, h = width - pad_l - 10, height - pad_b - 10

    def x(i: int) -> float:
        return pad_l + (i / max(1, len(points) - 1)) * w

    def y(v: float) -> float:
        return 10 + h - (math.log10(max(v, 1e-9)) - lo) / (hi - lo) * h

    parts = [
        f'<svg class="timeline" data-mode="{html.escape(run["mode"])}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{height}" role="img" aria-label="per-call latency timeline">'
    ]
    for k in range(math.floor(lo), math.ceil(hi) + 1):
        yy = y(10**k)
        if 10 <= yy <= 10 + h:
            parts.append(
                f'<line x1="{pad_l}" x2="{pad_l + w}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#ddd"/>'
                f'<text x="4" y="{yy + 4:.1f}" font-size="11">{html.escape(_ms(10**k))}</text>'
            )
    for p in points:
        if p.get("compiles"):
            kind = "recompile" if p["phase"] == "steady" else "compile"
            colour = "#b00" if kind == "recompile" else "#999"
            parts.append(
                f'<line class="mark {kind}" data-call="{p["i"]}" x1="{x(p["i"]):.1f}" x2="{x(p["i"]):.1f}" y1="10" '
                f'y2="{10 + h}" stroke="{colour}" stroke-dasharray="4 3"><title>call {p["i"]}: {kind} '
                f"{html.escape(', '.join(p['compiles']))}</title></line>"
            )
    for p in points:
        parts.append(
            f'<circle class="call {p["phase"]}" cx="{x(p["i"]):.1f}" cy="{y(p["latency_s"]):.1f}" r="2.5" '
            f'fill="{PHASE_COLOURS.get(p["phase"], "#444")}"><title>call {p["i"]} {p["phase"]} '
            f"{html.escape(str(p['bucket']))}: {html.escape(_ms(p['latency_s']))}</title></circle>"
        )
    parts.append(
        f'<text x="{pad_l}" y="{height - 8}" font-size="11">call index (cold, warm-up, steady); dashed: compile / '
        f'<tspan fill="#b00">recompile after warm-up</tspan></text></svg>'
    )
    return "".join(parts)


def _histogram_svg(
    run: dict[str, Any], phase: str, width: int = 280, height: int = 140, bins: int = 20
) -> str:
    lat = [max(p["latency_s"], 1e-9) for p in run.get("timeline") or [] if p["phase"] == phase]
    head = f'<figure class="dist" data-phase="{phase}"><figcaption>{phase}: {len(lat)} call(s)</figcaption>'
    if not lat:
        return head + "<p>none</p></figure>"
    lo, hi = math.log10(min(lat)), math.log10(max(lat))
    span = (hi - lo) or 1.0
    counts = [0] * bins
    for v in lat:
        counts[min(bins - 1, int((math.log10(v) - lo) / span * bins))] += 1
    top = max(counts)
    bw = width / bins
    bars = "".join(
        f'<rect x="{i * bw:.1f}" y="{height - 20 - c / top * (height - 30):.1f}" width="{bw - 1:.1f}" '
        f'height="{c / top * (height - 30):.1f}" fill="{PHASE_COLOURS[phase]}"><title>{c}</title></rect>'
        for i, c in enumerate(counts)
        if c
    )
    return (
        head + f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">{bars}'
        f'<text x="0" y="{height - 5}" font-size="10">{html.escape(_ms(min(lat)))}</text>'
        f'<text x="{width - 60}" y="{height - 5}" font-size="10">{html.escape(_ms(max(lat)))}</text></svg></figure>'
    )


def render_html(report: dict[str, Any]) -> str:
    rows = mode_rows(report)
    table = [
        '<table id="modes"><thead><tr>'
        + "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
        + "</tr></thead><tbody>"
    ]
    for r in rows[1:]:
        if r[-1] == "":  # a mode that did not run: its reason across the row
            cells = f'<td>{html.escape(r[0])}</td><td class="reason" colspan="{len(r) - 1}">{html.escape(r[1])}</td>'
        else:
            cells = "".join(f"<td>{html.escape(c)}</td>" for c in r)
        table.append('<tr data-mode="' + html.escape(r[0]) + '">' + cells + "</tr>")
    table.append("</tbody></table>")
    sections = []
    for run in report.get("runs") or []:
        if run.get("status") != "ok":
            continue
        text = "\n".join(_run_lines(run, report.get("kind", "function")))
        sections.append(
            f'<section class="run" data-mode="{html.escape(run["mode"])}"><h2>mode {html.escape(run["mode"])}</h2>'
            f'{_timeline_svg(run)}<div class="dists">'
            + "".join(_histogram_svg(run, ph) for ph in ("cold", "warmup", "steady"))
            + f"</div><pre>{html.escape(text)}</pre></section>"
        )
    contract = "".join(
        f"<li>{html.escape(v['message'])}</li>"
        for v in (report.get("contract") or {}).get("violations") or []
    )
    contract_html = ""
    if (report.get("contract") or {}).get("checked") == []:
        contract_html = '<p id="contract" class="failed">contract: not checked (no mode was measured)</p>'
    elif report.get("contract"):
        contract_html = (
            '<p id="contract" class="passed">contract: every budget holds</p>'
            if report["contract"]["passed"]
            else f'<div id="contract" class="failed"><p>contract broken</p><ul>{contract}</ul></div>'
        )
    title = f"tclint bench {report['target']}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ccc; padding: 3px 6px; text-align: right; }}
td:first-child, th:first-child {{ text-align: left; }} .dists {{ display: flex; gap: 1em; }}
pre {{ background: #f6f6f6; padding: .6em; overflow-x: auto; }} .failed {{ color: #b00; }} td.reason {{ text-align: left; color: #666; }} .passed {{ color: #070; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p>backend {html.escape(str(report["backend"]))}, torch {html.escape(str(report.get("torch")))},
{"CUDA" if report.get("cuda_available") else "CPU"}; protocol {html.escape(json.dumps(report.get("protocol")))}</p>
{contract_html}
<h2>modes</h2>
{"".join(table)}
{"".join(sections)}
</body></html>
"""


def render(fmt: str, report: dict[str, Any]) -> str:
    return {"concise": render_text, "json": render_json, "markdown": render_markdown, "html": render_html}[
        fmt
    ](report)
