"""Hover: rule documentation and what torch.compile compiles.

* On a diagnostic's range: the rule's documentation (``tclint.rules.ruledoc.render_rule``, the same
  text as ``tclint rule CODE``), with the compiled-region chain that makes it matter.
* On a code inside a suppression comment (``# noqa: TC101``, ``# tclint: disable[TC104]``): that
  rule's documentation.
* On a compiled entry point (a ``torch.compile(...)`` call, a ``@torch.compile`` decorator or the
  name of a compiled function): what it compiles, from the project's regions.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from tclint.rules import registry
from tclint.rules.ruledoc import render_rule
from tclint.server.convert import workspace_relative

if TYPE_CHECKING:
    from tclint.server.server import Published, TclintServer

_CODE = re.compile(r"\bTC\d{3}\b")
_SUPPRESSION = re.compile(r"#\s*(noqa|tclint\s*:)", re.IGNORECASE)


def register(ls: TclintServer) -> None:
    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: TclintServer, params: types.HoverParams) -> types.Hover | None:
        pub = ls.published.get(params.text_document.uri)
        if pub is None or pub.lines is None:
            return None
        return hover_at(ls, pub, params.position)


def _markup(ls: TclintServer, text: str) -> types.MarkupContent:
    td = getattr(ls.capabilities, "text_document", None)
    formats = getattr(getattr(td, "hover", None), "content_format", None) or [types.MarkupKind.PlainText]
    kind = types.MarkupKind.Markdown if types.MarkupKind.Markdown in formats else types.MarkupKind.PlainText
    return types.MarkupContent(kind=kind, value=text)


def _contains(rng: types.Range | dict, pos: types.Position) -> bool:
    if isinstance(rng, dict):
        s, e = rng["start"], rng["end"]
        return (s["line"], s["character"]) <= (pos.line, pos.character) <= (e["line"], e["character"])
    return (
        (rng.start.line, rng.start.character)
        <= (pos.line, pos.character)
        <= (rng.end.line, rng.end.character)
    )


def _range(rng: dict) -> types.Range:
    s, e = rng["start"], rng["end"]
    return types.Range(
        start=types.Position(line=s["line"], character=s["character"]),
        end=types.Position(line=e["line"], character=e["character"]),
    )


def rule_doc(code: str) -> str | None:
    rule = registry.get(code)
    if rule is None:
        return None
    return render_rule(rule)


MAX_LIBRARY_SITES = 12  # listed in a TC312 hover (the Problems panel's related information has them all)


def _library_sites(ls: TclintServer, pub: Published, related: list[Any]) -> str:
    """The library part of a TC312 summary's chain: each installed site (clickable), its rule, heat and
    the calls from the user's compile site to it."""
    out = ["**In the installed library** (from your compile site):"]
    for rel in related[:MAX_LIBRARY_SITES]:
        loc = rel["location"] if isinstance(rel, dict) else rel.location
        uri = loc["uri"] if isinstance(loc, dict) else loc.uri
        rng = loc["range"] if isinstance(loc, dict) else loc.range
        line = (rng["start"]["line"] if isinstance(rng, dict) else rng.start.line) + 1
        message = rel["message"] if isinstance(rel, dict) else rel.message
        name = os.path.basename(uri.rsplit("/", 1)[-1]) or uri
        out.append(f"- [{name}:{line}]({uri}#L{line}) {message}")
    if len(related) > MAX_LIBRARY_SITES:
        out.append(f"- … and {len(related) - MAX_LIBRARY_SITES} more (related information of the diagnostic)")
    return "\n".join(out)


def hover_at(ls: TclintServer, pub: Published, pos: types.Position) -> types.Hover | None:
    lines = pub.lines
    assert lines is not None
    enc = ls.encoding
    parts: list[str] = []
    hit_range: types.Range | None = None
    # 1. codes inside suppression comments
    line_text = lines.line(pos.line)
    if _SUPPRESSION.search(line_text):
        _l, col = lines.from_lsp(pos, enc)
        for m in _CODE.finditer(line_text):
            if m.start() <= col <= m.end() and line_text.rfind("#", 0, m.start()) >= 0:
                doc = rule_doc(m.group(0))
                if doc:
                    hit_range = types.Range(
                        lines.to_lsp(pos.line, m.start(), enc), lines.to_lsp(pos.line, m.end(), enc)
                    )
                    return types.Hover(contents=_markup(ls, doc), range=hit_range)
    # 2. diagnostics under the cursor
    seen: set[str] = set()
    for d in pub.lsp:
        if not _contains(d["range"], pos) or d.get("code") is None or str(d["code"]) in seen:
            continue
        code = str(d["code"])
        seen.add(code)
        hit_range = hit_range or _range(d["range"])
        data = d.get("data") or {}
        doc = rule_doc(code)
        section = doc if doc else f"**{code}** {d['message']}"
        if data.get("region"):
            section += f"\n\n**Why here:** {data['region']}"
        if code == "TC312" and d.get("relatedInformation"):
            section += "\n\n" + _library_sites(ls, pub, d["relatedInformation"])
        parts.append(section)
    # 3. compiled entry points and compiled functions
    for entry in pub.entries:
        rng = lines.span_to_range(entry.span, enc)
        if _contains(rng, pos):
            parts.append(workspace_relative(entry.markdown, ls.ws.folder_of(pub.path)))
            hit_range = hit_range or rng
    if not parts:
        return None
    return types.Hover(contents=_markup(ls, "\n\n---\n\n".join(parts)), range=hit_range)
