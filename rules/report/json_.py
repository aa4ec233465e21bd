"""ruff-compatible JSON: a list of objects with ``filename``, ``code``, ``message``,
``location{row,column}``, ``end_location``, ``fix`` (the preferred fix), ``noqa_row``, ``url``
(columns 1-based, as ruff writes them), plus tclint's own fields: ``alternatives`` (the other
fixes offered, same shape as ``fix``), ``name``, ``severity``, ``confidence``, ``origin``,
``gb_ids``, ``region`` and ``related``."""

from __future__ import annotations

import json
import os
from typing import Any

from tclint.rules.model import Diagnostic, Fix, Span
from tclint.rules.printable import json_safe
from tclint.rules.report import indented_json


def _loc(line: int, col: int) -> dict[str, int]:
    return {"row": line, "column": col + 1}


def _span(span: Span) -> dict[str, Any]:
    return {
        "location": _loc(span.start.line, span.start.column),
        "end_location": _loc(span.end.line, span.end.column),
    }


def _fix(fix: Fix) -> dict[str, Any]:
    return {
        "applicability": fix.applicability.value,
        "message": fix.message,
        "edits": [{"content": e.content, **_span(e.span)} for e in fix.edits],
    }


def to_dict(d: Diagnostic) -> dict[str, Any]:
    return {
        "cell": d.cell,
        "code": d.code,
        "end_location": _loc(d.span.end.line, d.span.end.column),
        "filename": os.path.abspath(d.path),
        "fix": None if d.fix is None else _fix(d.fix),
        "alternatives": [_fix(f) for f in d.alternatives],
        "location": _loc(d.span.start.line, d.span.start.column),
        "message": d.message,
        "noqa_row": d.noqa_line,
        "url": d.url,
        "name": d.name,
        "severity": d.severity.value,
        "confidence": d.confidence.value,
        "origin": d.origin.value,
        "gb_ids": list(d.gb_ids),
        "help": d.help,
        "region": d.extra.get("region"),
        "confirmed": d.extra.get("confirmed"),
        "hits": d.extra.get("hits"),
        "unpredicted": d.extra.get("unpredicted"),
        "related": [
            {"filename": os.path.abspath(r.path), "message": r.message, **_span(r.span)} for r in d.related
        ],
    }


def from_dict(obj: dict[str, Any]) -> Diagnostic:
    """The inverse of ``to_dict`` (JSON round-trips; the probe merge reads diagnostics back)."""
    from tclint.rules.model import Applicability, Confidence, Edit, Fix, Origin, RelatedLocation, Severity

    def span(o: dict[str, Any]) -> Span:
        return Span.of(
            o["location"]["row"],
            o["location"]["column"] - 1,
            o["end_location"]["row"],
            o["end_location"]["column"] - 1,
        )

    def fix(f: dict[str, Any]) -> Fix:
        return Fix(
            f["message"],
            tuple(Edit(span(e), e["content"]) for e in f["edits"]),
            Applicability(f["applicability"]),
        )

    extra = {}
    if obj.get("region"):
        extra["region"] = obj["region"]
    for key in ("confirmed", "hits", "unpredicted"):
        if obj.get(key) is not None:
            extra[key] = obj[key]
    return Diagnostic(
        code=obj["code"],
        name=obj.get("name", ""),
        message=obj["message"],
        path=obj["filename"],
        span=span(obj),
        severity=Severity(obj.get("severity", "warning")),
        confidence=Confidence(obj.get("confidence", "high")),
        origin=Origin(obj.get("origin", "static")),
        gb_ids=tuple(obj.get("gb_ids", ())),
        fix=fix(obj["fix"]) if obj.get("fix") else None,
        alternatives=tuple(fix(f) for f in obj.get("alternatives", ())),
        related=tuple(RelatedLocation(r["filename"], span(r), r["message"]) for r in obj.get("related", ())),
        noqa_line=obj.get("noqa_row"),
        url=obj.get("url"),
        help=obj.get("help"),
        cell=obj.get("cell"),
        extra=extra,
    )


def render(diags: list[Diagnostic]) -> str:
    """The findings as one JSON array (a file name that is not UTF-8 keeps its bytes as
    ``\\udcXX`` escapes: the output stays valid UTF-8 and ``os.fsencode`` gives the name back)."""
    return json_safe(indented_json.dumps([to_dict(d) for d in diags])) + "\n"


def render_lines(diags: list[Diagnostic]) -> str:
    return json_safe("".join(json.dumps(to_dict(d), ensure_ascii=False) + "\n" for d in diags))
