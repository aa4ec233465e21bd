"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

Rules carry their documentation and GB ids; results carry the compiled-region chain as related
locations, fixes as SARIF fixes, and for notebooks the cell both in ``properties.cell`` and as a
logical location, so the cell is never lost (ruff's SARIF drops it).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from tclint.rules import registry
from tclint.rules.model import Diagnostic, Severity, Span
from tclint.rules.printable import json_safe
from tclint.rules.report import indented_json
from tclint.rules.version import __version__

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note", Severity.HINT: "note"}


def _uri(path: str) -> str:
    """A ``file:`` URI, percent-encoding the path's bytes (a name that is not UTF-8 included)."""
    return Path(os.path.abspath(path)).as_uri()


def _region(span: Span) -> dict[str, int]:
    # SARIF columns are 1-based; an empty range still needs endColumn > startColumn or equal.
    return {
        "startLine": max(1, span.start.line),
        "startColumn": span.start.column + 1,
        "endLine": max(1, span.end.line),
        "endColumn": max(span.end.column + 1, 1),
    }


def _rule_descriptor(code: str) -> dict[str, Any]:
    rule = registry.get(code)
    if rule is None:
        return {"id": code, "name": code, "shortDescription": {"text": code}}
    sections = rule.doc_sections()
    text = sections.get("What it does", rule.summary)
    why = sections.get("Why is this bad?", "")
    from tclint.rules.model import gb_url

    return {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": (text + ("\n\n" + why if why else "")).strip()},
        # SARIF viewers (GitHub code scanning) open helpUri on the web: only public pages qualify;
        # the full rule text is in `help` either way.
        **({"helpUri": gb_url(rule.gb_ids[0])} if rule.gb_ids else {}),
        "help": {"text": rule.doc(), "markdown": rule.doc()},
        "defaultConfiguration": {"level": _LEVEL[rule.default_severity]},
        "properties": {
            "tags": [rule.family.value, rule.lifecycle.value],
            "gb_ids": list(rule.gb_ids),
            "torch_versions": rule.torch_versions,
        },
    }


def to_sarif(diags: list[Diagnostic]) -> dict[str, Any]:
    codes = sorted({d.code for d in diags})
    index = {code: i for i, code in enumerate(codes)}
    results = []
    for d in diags:
        location: dict[str, Any] = {
            "physicalLocation": {"artifactLocation": {"uri": _uri(d.path)}, "region": _region(d.span)}
        }
        props: dict[str, Any] = {
            "severity": d.severity.value,
            "confidence": d.confidence.value,
            "origin": d.origin.value,
        }
        if d.gb_ids:
            props["gb_ids"] = list(d.gb_ids)
        if d.cell is not None:
            props["cell"] = d.cell
            location["logicalLocations"] = [{"name": f"cell {d.cell}", "kind": "module"}]
        if d.extra.get("region"):
            props["region"] = d.extra["region"]
        for key in ("confirmed", "hits", "unpredicted"):
            if d.extra.get(key) is not None:
                props[key] = d.extra[key]
        message = d.message if d.cell is None else f"{d.message} [cell {d.cell}]"
        result: dict[str, Any] = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": _LEVEL[d.severity],
            "message": {"text": message},
            "locations": [location],
            "partialFingerprints": {"tclint/v1": _fingerprint(d)},
            "properties": props,
        }
        if d.related:
            result["relatedLocations"] = [
                {
                    "id": i,
                    "message": {"text": r.message},
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(r.path)},
                        "region": _region(r.span),
                    },
                }
                for i, r in enumerate(d.related)
            ]
        fixes = [f for f in (d.fix, *d.alternatives) if f is not None and f.edits] if d.cell is None else []
        if fixes:  # the preferred fix first, then its alternatives
            result["fixes"] = [
                {
                    "description": {"text": f"{fix.message} ({fix.applicability.value})"},
                    "artifactChanges": [
                        {
                            "artifactLocation": {"uri": _uri(d.path)},
                            "replacements": [
                                {"deletedRegion": _region(e.span), "insertedContent": {"text": e.content}}
                                for e in fix.edits
                            ],
                        }
                    ],
                }
                for fix in fixes
            ]
        results.append(result)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "tclint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": "https://pypi.org/project/tclint-torch/",
                        "rules": [_rule_descriptor(c) for c in codes],
                    }
                },
                "results": results,
                "columnKind": "unicodeCodePoints",
            }
        ],
    }


def _fingerprint(d: Diagnostic) -> str:
    """Stable across checkouts: code scanning matches results between runs on different runners and
    clones, so the key holds the path relative to the working folder, never the absolute path."""
    key = f"{d.code}|{_portable_path(d.path)}|{d.cell}|{d.message}"
    return hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _portable_path(path: str) -> str:
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute)
    except ValueError:  # another drive on Windows
        return absolute.replace(os.sep, "/")
    return relative.replace(os.sep, "/")


def render(diags: list[Diagnostic]) -> str:
    return json_safe(indented_json.dumps(to_sarif(diags))) + "\n"
