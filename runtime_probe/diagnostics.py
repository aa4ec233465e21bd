"""ProbeReport -> TC9xx diagnostics (``tclint.rules.model.Diagnostic``, origin PROBE).

One diagnostic per break site (TC901), per recompiled function and guard line (TC902), per
function past the recompile limit (TC903), per hard error (TC904), per eager/compiled mismatch
(TC905), and one when the run itself did not complete (TC906).  Spans cover the code on the line
(not the indentation), so editors underline the statement.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any

from tclint.rules import registry
from tclint.rules.discovery import display_path
from tclint.rules.model import Diagnostic, Origin, RelatedLocation, Severity, Span, gb_url

RUN_FAILURES = ("timeout", "crashed", "memory", "exited", "exception", "exit", "worker-died", "probe-error")


@functools.lru_cache(maxsize=128)
def _lines(path: str, mtime: float) -> tuple[str, ...]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return tuple(fh.read().splitlines())
    except OSError:
        return ()


def line_span(path: str | None, line: int | None, col: int | None = None, end_col: int | None = None) -> Span:
    """The code on ``line`` (without indentation), or exactly ``col..end_col`` when known."""
    line = max(1, int(line or 1))
    if col is not None and end_col is not None and end_col >= col:
        return Span.of(line, col, line, end_col)
    text = ""
    if path and os.path.isfile(path):
        lines = _lines(path, os.path.getmtime(path))
        if 0 < line <= len(lines):
            text = lines[line - 1]
    start = len(text) - len(text.lstrip())
    return Span.of(line, start, line, max(start, len(text.rstrip())))


def _rule(code: str) -> Any:
    rule = registry.get(code)
    if rule is None:  # pragma: no cover - the catalog ships TC901-TC906
        raise KeyError(code)
    return rule


def _diag(
    code: str,
    message: str,
    path: str,
    line: int | None,
    severity: Severity | None = None,
    gb_ids: tuple[str, ...] = (),
    url: str | None = None,
    help: str | None = None,
    related: tuple[RelatedLocation, ...] = (),
    extra: dict[str, Any] | None = None,
    cols: tuple[int | None, int | None] = (None, None),
) -> Diagnostic:
    rule = _rule(code)
    from tclint.rules.engine import rule_doc_url

    return Diagnostic(
        code=code,
        name=rule.name,
        message=message,
        path=display_path(path),
        span=line_span(path, line, *cols),
        severity=severity or rule.default_severity,
        origin=Origin.PROBE,
        gb_ids=gb_ids,
        url=url or (gb_url(gb_ids[0]) if gb_ids else rule_doc_url(code)),
        help=help,
        related=related,
        noqa_line=line,
        extra={"probe": True, **(extra or {})},
    )


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def break_diagnostic(b: dict[str, Any]) -> Diagnostic:
    kind = (
        f"{b['gb_id']} ({b['gb_type']})"
        if b.get("gb_id")
        else f"({b.get('gb_type') or b.get('reason') or 'no GB id'})"
    )
    if b["hits"] is not None:
        heat = f"hit {_plural(b['hits'], 'time')}"
    else:
        heat = "hits not counted"
    parts = [f"Graph break {kind}, {heat}"]
    severity = None
    if b["frame_dropped"]:
        names = ", ".join(b["dropped_frames"]) or "the frame"
        parts.append(f"Dynamo dropped {names} whole: it runs eagerly on every call")
        severity = Severity.ERROR
    if b["in_library"]:
        parts.append("reported inside library code (no frame in your files)")
    related = tuple(
        RelatedLocation(
            display_path(f["file"]), line_span(f["file"], f["line"]), f"called from `{f['function']}`"
        )
        for f in reversed(b["user_stack"][:-1])
        if f.get("file") and os.path.isfile(f["file"])
    )
    gb = (b["gb_id"],) if b.get("gb_id") else ()
    return _diag(
        "TC901",
        "; ".join(parts),
        b["file"],
        b["line"],
        severity,
        gb,
        b.get("url") and (gb_url(gb[0]) if gb else b["url"]),
        help=(b["hints"] or [None])[0],
        related=related,
        extra={
            "hits": b["hits"],
            "gb_type": b.get("gb_type"),
            "frame_dropped": b["frame_dropped"],
            "compile_ids": b["compile_ids"],
            "explanation": b.get("explanation"),
            # where Dynamo reported it (an installed library's line when the break is inside one):
            # what a TC312 library site is matched against (merge._confirm_library_sites)
            "reported_at": [at["file"], at["line"]] if (at := b.get("reported_at")) else None,
        },
    )


def _ordinary(items: list[dict[str, Any]]) -> bool:
    """Dynamo's ordinary dynamic-shape generalisation: each recompile is a first size change of
    one dimension (after which that dimension is dynamic), never the same dimension twice."""
    seen = set()
    for c in items:
        cause = c.get("cause") or {}
        if cause.get("kind") != "size" or "dynamic" not in cause.get("text", ""):
            return False
        key = (cause.get("subject"), cause.get("index"))
        if key in seen:
            return False
        seen.add(key)
    return True


def recompile_diagnostics(report: Any) -> list[Diagnostic]:
    """One TC902 per recompiled function and guard line, in the user's terms: what changed, which
    function (``Class.method``), where the change is made when the run shows it.  Continuations
    that recompiled because of the same call are folded into it (counted, not reported apart)."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    by_id = {c["compile_id"]: c for c in report.compiles}
    for c in report.compiles:
        if c["kind"] != "recompile" or c.get("secondary_of"):
            continue
        at = c.get("guard_location") or {"file": c["frame"]["file"], "line": c["frame"]["line"]}
        if not at.get("file"):
            continue
        key = (
            c["frame"]["file"],
            c["frame"]["function"],
            at["file"],
            at["line"],
            at.get("col"),
            at.get("end_col"),
        )
        groups.setdefault(key, []).append(c)
    out = []
    for (frame_file, fn, path, line, col, end_col), items in groups.items():
        causes: list[str] = []
        raw: list[str] = []
        for c in items:
            text = (c.get("cause") or {}).get("text") or c["trigger"]
            if text not in causes:
                causes.append(text)
            g = (c.get("guard") or {}).get("guard") or c["trigger"]
            if g not in raw:
                raw.append(g)
        qual = items[0]["frame"].get("qualname") or fn
        shown = "; ".join(causes[:3]) + (f"; and {len(causes) - 3} more" if len(causes) > 3 else "")
        msg = f"`{qual}` recompiled {_plural(len(items), 'time')}: {shown}"
        how = (items[0].get("guard_location") or {}).get("how")
        if how:
            msg += f" ({how})"
        secondary = [by_id[s] for c in items for s in c.get("secondary", []) if s in by_id]
        if secondary:
            msg += (
                f"; {_plural(len(secondary), 'continuation')} after graph breaks recompiled with it "
                f"(same call: {_plural(len(secondary), 'recompile')} folded in)"
            )
        related: list[RelatedLocation] = []
        for c in items:
            at = (c.get("cause") or {}).get("switched_at")
            if (
                at
                and os.path.isfile(at["file"])
                and not any(r.span.start.line == at["line"] for r in related)
            ):
                what = {
                    "train-eval": "the mode is switched here",
                    "grad-mode": "grad mode is switched here",
                    "autocast": "autocast is switched here",
                }.get(c["cause"]["kind"], "the change is made here")
                related.append(
                    RelatedLocation(display_path(at["file"]), line_span(at["file"], at["line"]), what)
                )
        hint = next(
            ((c.get("guard") or {}).get("hint") for c in items if (c.get("guard") or {}).get("hint")), None
        )
        params = [c["guard_parameter"] for c in items if c.get("guard_parameter")]
        severity = Severity.INFO if _ordinary(items) else None
        out.append(
            _diag(
                "TC902",
                msg,
                path,
                line,
                severity=severity,
                help=hint,
                cols=(col, end_col),
                related=tuple(related),
                extra={
                    "compile_ids": [c["compile_id"] for c in items],
                    "guards": raw,
                    "causes": causes,
                    "secondary_guards": list(
                        dict.fromkeys(g for c in secondary if (g := (c.get("guard") or {}).get("guard")))
                    ),
                    "secondary_recompiles": len(secondary),
                    "parameters": params[:1],
                    "function": qual,
                    "frame_file": frame_file,
                    "ordinary": severity is Severity.INFO,
                },
            )
        )
    return out


def to_diagnostics(report: Any) -> list[Diagnostic]:
    out: list[Diagnostic] = [
        break_diagnostic(b) for b in report.graph_breaks if b.get("file") and b["file"] != "?"
    ]
    out.extend(recompile_diagnostics(report))
    for hit in report.recompile_limit_hits:
        if hit.get("file"):
            out.append(
                _diag(
                    "TC903",
                    hit["message"],
                    hit["file"],
                    hit["line"],
                    gb_ids=("GB0039",),
                    help="find the guard that keeps failing (TC902) and bound the variants",
                    extra={
                        "function": hit.get("qualname") or hit.get("function"),
                        "frame_file": hit["file"],
                        "guards": hit.get("guards") or [],
                    },
                )
            )
    target = report.target_location or {}
    for err in report.errors:
        if err["source"] == "run" and err["kind"] in ("exception", "memory"):
            continue  # the run's own failure: TC906 below
        path = err.get("file") or target.get("file")
        if not path:
            continue
        code = "TC904"
        msg = f"{err['type'].rsplit('.', 1)[-1]}: {err['message']}"
        if err["kind"] == "device":
            msg = f"needs a device this machine lacks: {msg} (run the probe where CUDA is available, or pass --map-cuda-to-cpu)"
        elif err["kind"] == "compiled-only-exception":
            msg = f"only the compiled call raised: {msg}"
        gb = (err["gb_id"],) if err.get("gb_id") else ()
        out.append(
            _diag(
                code,
                msg,
                path,
                err.get("line") or target.get("line"),
                gb_ids=gb,
                extra={"kind": err["kind"], "source": err["source"]},
            )
        )
    for entry in report.correctness:
        if entry.get("status") in ("mismatch", "eager-raised") and target.get("file"):
            label = entry.get("label") or f"#{entry.get('index')}"
            out.append(
                _diag(
                    "TC905",
                    f"eager and compiled results differ for call {label}: {entry.get('detail')}",
                    target["file"],
                    target.get("line"),
                    extra={"call": entry.get("index")},
                )
            )
    if report.status in RUN_FAILURES:
        where = report.run.get("fault_location") or _exception_frame(report) or target
        path = where.get("file") if where else None
        if path and os.path.isfile(path):
            out.append(
                _diag(
                    "TC906",
                    report.message,
                    path,
                    where.get("line"),
                    severity=Severity.ERROR if report.status in ("crashed", "memory", "timeout") else None,
                    help=_module_hint(report),
                    extra={"status": report.status},
                )
            )
    out.sort(key=lambda d: d.sort_key())
    return out


def _module_hint(report: Any) -> str | None:
    """``tclint probe app/run.py`` whose ``import app.model`` fails: as with ``python app/run.py``,
    the script's own folder is the first import path, not the folder holding the package.  When
    the missing module is a package or module in a folder above the script, say how to run it
    the way the project does (``-m app.run`` from that folder)."""
    script = str(getattr(report, "target", "") or "")
    if not script.endswith(".py") or "::" in script:
        return None
    exc = next((e for e in report.errors if e["source"] == "run" and e["kind"] == "exception"), None)
    if exc is None or not str(exc.get("type", "")).endswith("ModuleNotFoundError"):
        return None
    match = re.search(r"No module named '([\w.]+)'", str(exc.get("message", "")))
    if match is None:
        return None
    top = match.group(1).split(".", 1)[0]
    here = os.path.dirname(os.path.abspath(script))
    folder = os.path.dirname(here)
    while folder and folder != os.path.dirname(folder):
        if os.path.isdir(os.path.join(folder, top)) or os.path.isfile(os.path.join(folder, top + ".py")):
            rel = os.path.relpath(os.path.abspath(script), folder)[: -len(".py")]
            module = ".".join(rel.split(os.sep))
            shown = os.path.relpath(folder)
            where = "this folder" if shown == "." else (folder if shown.startswith("..") else shown)
            return (
                f"`{top}` is in {where}, above the script's folder (the first import path when a"
                f" script runs, as with `python {script}`): run it as a module from"
                f" {'here' if shown == '.' else 'there'}, `tclint probe -m {module}`"
            )
        folder = os.path.dirname(folder)
    return None


def _exception_frame(report: Any) -> dict[str, Any] | None:
    for err in report.errors:
        if err["source"] == "run" and err.get("file"):
            return {"file": err["file"], "line": err["line"]}
    return None
