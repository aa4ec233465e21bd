"""tclint diagnostics as LSP diagnostics (the only place the model is converted for editors).

Each LSP diagnostic carries, in ``data``, everything a code action needs: the fix's edits and the
"disable for this line" edit, already in the client's position encoding, and the document version
they were computed for.  So code actions never re-lint (as in ruff's server), and a client that
loses ``data`` (Neovim 0.7 rebuilds diagnostics from its own fields) is matched back to the
published diagnostic by code and range.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path
from tclint.rules.config import Settings
from tclint.rules.model import Applicability, Diagnostic, Fix, Origin
from tclint.server.codes import no_noqa_codes, unused_suppression_codes
from tclint.server.positions import Lines
from tclint.server.settings import EditorSettings

SOURCE = "tclint"
PROBE_SOURCE = "tclint-probe"
NOQA_PREFIX = "#" + " noqa: "
_NOQA_IN_LINE = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ClientFeatures:
    """What the client can display (pytest-lsp checks every reply against these)."""

    related_information: bool = False
    code_description: bool = False
    tags: frozenset[int] = frozenset()
    data: bool = True

    @classmethod
    def of(cls, caps: types.ClientCapabilities | None) -> ClientFeatures:
        pub = getattr(getattr(caps, "text_document", None), "publish_diagnostics", None)
        pull = getattr(getattr(caps, "text_document", None), "diagnostic", None)
        related = bool(getattr(pub, "related_information", False)) or bool(getattr(pull, "related_information", False))
        desc = bool(getattr(pub, "code_description_support", False))
        tag_support = getattr(pub, "tag_support", None)
        tags = frozenset(int(t) for t in (getattr(tag_support, "value_set", None) or ()))
        return cls(related, desc, tags, True)


def path_to_uri(path: str) -> str:
    return from_fs_path(os.path.abspath(path)) or ("file://" + os.path.abspath(path))


class OtherFiles:
    """Line tables of files other than the one being published (for related locations), LRU."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._cache: OrderedDict[str, Lines] = OrderedDict()

    def lines(self, path: str, open_text: str | None = None) -> Lines | None:
        if open_text is not None:
            return Lines.of(open_text)
        found = self._cache.get(path)
        if found is not None:
            self._cache.move_to_end(path)
            return found
        try:
            with open(path, "rb") as fh:
                text = fh.read(8 * 1024 * 1024).decode("utf-8", "replace")
        except OSError:
            return None
        found = Lines.of(text)
        self._cache[path] = found
        if len(self._cache) > self.size:
            self._cache.popitem(last=False)
        return found

    def forget(self, path: str) -> None:
        self._cache.pop(path, None)


def first_fix(fix: Any) -> Fix | None:
    if isinstance(fix, tuple):
        return fix[0] if fix else None
    return fix


def fix_offered(fix: Fix | None, unsafe: bool) -> bool:
    if fix is None or not fix.edits:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def text_edits(fix: Fix, lines: Lines, encoding: str) -> list[dict[str, Any]]:
    return [
        {"range": _range_json(lines.span_to_range(edit.span, encoding)), "newText": edit.content}
        for edit in fix.edits
    ]


def _range_json(rng: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def noqa_edit(code: str, line_no: int | None, lines: Lines, encoding: str) -> dict[str, Any] | None:
    """The edit adding ``# noqa: CODE`` to 1-based line ``line_no`` (extending an existing list)."""
    from tclint.rules.suppress import _comment_start  # the suppression parser's own comment finder

    if line_no is None or code in no_noqa_codes() or line_no < 1 or line_no > lines.count:
        return None
    text = lines.line(line_no - 1)
    if text.rstrip().endswith("\\"):
        return None  # a comment after a line continuation is a syntax error
    start = _comment_start(text)
    if start >= 0:
        match = _NOQA_IN_LINE.search(text, start)
        if match is not None:
            if match.group("codes") is None:
                return None  # a bare noqa comment already covers it
            existing = [c for c in re.split(r"[,\s]+", match.group("codes")) if c]
            if code in existing:
                return None
            new = "# noqa: " + ", ".join([*existing, code])
            rng = types.Range(lines.to_lsp(line_no - 1, match.start(), encoding), lines.to_lsp(line_no - 1, match.end(), encoding))
            return {"range": _range_json(rng), "newText": new}
    body = text.rstrip()
    rng = types.Range(lines.to_lsp(line_no - 1, len(body), encoding), lines.to_lsp(line_no - 1, len(text), encoding))
    return {"range": _range_json(rng), "newText": "  " + NOQA_PREFIX + code}


class Converter:
    """Converts one document's diagnostics for one client."""

    def __init__(
        self,
        lines: Lines,
        encoding: str,
        editor: EditorSettings,
        file_settings: Settings | None,
        features: ClientFeatures,
        others: OtherFiles,
        open_texts: dict[str, str] | None = None,
    ) -> None:
        self.lines = lines
        self.encoding = encoding
        self.editor = editor
        self.file_settings = file_settings
        self.features = features
        self.others = others
        self.open_texts = open_texts or {}
        # file_settings come from the EditorResolver: `unsafe-fixes` already follows the precedence
        if file_settings is not None:
            self.unsafe = bool(file_settings.unsafe_fixes)
        else:
            self.unsafe = bool(editor.unsafe_fixes)

    def convert(self, diag: Diagnostic, path: str, version: int) -> types.Diagnostic:
        lines = self.lines
        enc = self.encoding
        rng = lines.span_to_range(diag.span, enc)
        message = diag.message
        if diag.help:
            message = f"{message}\n{diag.help}"
        if diag.extra.get("confirmed"):
            hits = diag.extra.get("hits")
            message += f"\n✓ confirmed by the probe ({hits} hit{'' if hits == 1 else 's'})" if hits else "\n✓ confirmed by the probe"
        if diag.extra.get("stale"):
            message += "\n(stale: this code changed since the probe ran)"
        data: dict[str, Any] = {"version": version, "code": diag.code}
        fix = first_fix(diag.fix)
        if fix is not None and diag.cell is None and fix_offered(fix, self.unsafe):
            data["fix"] = {
                "title": fix.message,
                "applicability": fix.applicability.value,
                "edits": text_edits(fix, lines, enc),
            }
        noqa = noqa_edit(diag.code, diag.noqa_line, lines, enc) if diag.origin is Origin.STATIC else None
        if noqa is not None:
            data["noqa"] = noqa
        if diag.extra.get("region"):
            data["region"] = diag.extra["region"]
        result = types.Diagnostic(
            range=rng,
            message=message,
            severity=self.editor.lsp_severity(diag.code, diag.severity, self.file_settings),
            code=diag.code,
            source=PROBE_SOURCE if diag.origin is Origin.PROBE else SOURCE,
            data=data,
        )
        if self.features.code_description and diag.url:
            result.code_description = types.CodeDescription(href=diag.url)
        tags = []
        if diag.code in unused_suppression_codes() and int(types.DiagnosticTag.Unnecessary) in self.features.tags:
            tags.append(types.DiagnosticTag.Unnecessary)
        if tags:
            result.tags = tags
        if self.features.related_information and diag.related:
            related = []
            for rel in diag.related:
                rel_path = os.path.abspath(rel.path)
                if rel_path == os.path.abspath(path):
                    rel_lines: Lines | None = lines
                else:
                    rel_lines = self.others.lines(rel_path, self.open_texts.get(rel_path))
                if rel_lines is None:
                    continue
                related.append(
                    types.DiagnosticRelatedInformation(
                        location=types.Location(uri=path_to_uri(rel_path), range=rel_lines.span_to_range(rel.span, enc)),
                        message=rel.message,
                    )
                )
            if related:
                result.related_information = related
        return result
