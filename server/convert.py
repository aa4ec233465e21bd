"""tclint diagnostics as LSP diagnostics (the only place the model is converted for editors).

Each LSP diagnostic carries, in ``data``, everything a code action needs: the fix's edits and the
"disable for this line" edit, already in the client's position encoding, and the document version
they were computed for.  So code actions never re-lint (as in ruff's server), and a client that
loses ``data`` (Neovim 0.7 rebuilds diagnostics from its own fields) is matched back to the
published diagnostic by code and range.
"""

from __future__ import annotations

import json
import os
import re
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path
from tclint.rules.config import Settings
from tclint.rules.fixes import resolve
from tclint.rules.model import Applicability, Diagnostic, Edit, Fix, Origin, Span
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
        related = bool(getattr(pub, "related_information", False)) or bool(
            getattr(pull, "related_information", False)
        )
        desc = bool(getattr(pub, "code_description_support", False))
        tag_support = getattr(pub, "tag_support", None)
        tags = frozenset(int(t) for t in (getattr(tag_support, "value_set", None) or ()))
        return cls(related, desc, tags, True)


@lru_cache(maxsize=64)
def _below(base: str) -> tuple[str, re.Pattern[str]]:
    prefix = base.rstrip(os.sep) + os.sep
    # where a path starts: not inside another path or a word
    return prefix, re.compile(r"(?<![\w.~/\\-])" + re.escape(prefix))


def workspace_relative(text: str, base: str | None) -> str:
    """``text`` (a message, a region chain, hover text) with the absolute paths of files below
    ``base``, the document's workspace folder, written relative to it, as the CLI writes them
    relative to where it runs; paths elsewhere stay absolute."""
    if not base:
        return text
    prefix, pattern = _below(base)
    return pattern.sub("", text) if prefix in text else text


@lru_cache(maxsize=4096)
def path_to_uri(path: str) -> str:
    """The ``file:`` URI of ``path``.  A name that is not UTF-8 (lone surrogates from the file
    system, which pygls cannot quote) has its bytes percent-encoded (``bad%FFname.py``)."""
    absolute = os.path.abspath(path)
    try:
        return from_fs_path(absolute) or ("file://" + absolute)
    except UnicodeEncodeError:
        from pathlib import Path

        return Path(absolute).as_uri()


class OtherFiles:
    """Line tables of files other than the one being published (for related locations), LRU."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._cache: OrderedDict[str, Lines] = OrderedDict()
        self._open: dict[str, Lines] = {}  # the open documents' texts (replaced as they change)

    def lines(self, path: str, open_text: str | None = None) -> Lines | None:
        if open_text is not None:
            found = self._open.get(path)
            if found is None or found.text is not open_text and found.text != open_text:
                found = self._open[path] = Lines.of(open_text)
            return found
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
        self._open.pop(path, None)


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


def _declared(fix: Fix) -> Fix:
    """A codemod fix as if computed, with its declared safety (the most the codemod can give it):
    to decide whether computing it is worth it."""
    return Fix(fix.message, (Edit(Span.of(1, 0, 1, 0), ""),), fix.applicability)


def text_edits(fix: Fix, lines: Lines, encoding: str) -> list[dict[str, Any]]:
    return [{"range": lines.span_json(edit.span, encoding), "newText": edit.content} for edit in fix.edits]


def _range_json(rng: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


_NOQA_CACHE: dict[tuple[str, int, str, int, str], str | None] = {}


_COMMENTS: list[
    tuple[Lines, Any]
] = []  # the last text scanned for comments (one publish's diagnostics share it)


def noqa_line(line_no: int, lines: Lines) -> int:
    """The line where a ``# noqa`` for a finding on ``line_no`` goes: the last line of the multi-line
    string or backslash-continued statement it is part of (as ``--add-noqa``; see rules.suppress)."""
    comments = _comments(lines)
    return line_no if comments is None else comments.last_line(line_no)


def _comments(lines: Lines) -> Any:
    """``rules.suppress.scan`` of the text, None when it has no multi-line string and no backslash
    continuation (then every line stands alone and ``comment_start`` reads it right)."""
    from tclint.rules.suppress import scan

    text = lines.text
    if '"""' not in text and "'''" not in text and "\\\n" not in text and "\\\r" not in text:
        return None
    if not _COMMENTS or _COMMENTS[0][0] is not lines:
        _COMMENTS[:] = [(lines, scan(text))]
    return _COMMENTS[0][1]


def _comment_column(lines: Lines, line_no: int, text: str) -> int:
    """Column of the comment on 1-based line ``line_no`` (whose text is ``text``), -1 when none."""
    from tclint.rules.suppress import comment_start  # the suppression parser's own comment finder

    comments = _comments(lines)
    return comment_start(text) if comments is None else comments.column(line_no, text)


def noqa_json(code: str, line_no: int | None, lines: Lines, encoding: str) -> str | None:
    """``noqa_edit`` as JSON text, memoized by line text (most lines do not change between edits)."""
    if line_no is None or line_no < 1 or line_no > lines.count:
        return None
    target = noqa_line(line_no, lines)
    line = lines.line(target - 1)
    key = (code, target, line, _comment_column(lines, target, line), encoding)
    if key in _NOQA_CACHE:
        return _NOQA_CACHE[key]
    edit = noqa_edit(code, target, lines, encoding)
    text = json.dumps(edit, ensure_ascii=False, separators=(",", ":")) if edit is not None else None
    if len(_NOQA_CACHE) > 8192:
        _NOQA_CACHE.clear()
    _NOQA_CACHE[key] = text
    return text


def noqa_edit(code: str, line_no: int | None, lines: Lines, encoding: str) -> dict[str, Any] | None:
    """The edit adding ``# noqa: CODE`` to 1-based line ``line_no`` (extending an existing list);
    ``noqa_line`` says which line that is for a finding."""
    if line_no is None or code in no_noqa_codes() or line_no < 1 or line_no > lines.count:
        return None
    text = lines.line(line_no - 1)
    if text.rstrip().endswith("\\"):
        return None  # a comment after a line continuation is a syntax error
    start = _comment_column(lines, line_no, text)
    if start >= 0:
        match = _NOQA_IN_LINE.search(text, start)
        if match is not None:
            if match.group("codes") is None:
                return None  # a bare noqa comment already covers it
            existing = [c for c in re.split(r"[,\s]+", match.group("codes")) if c]
            if code in existing:
                return None
            new = "# noqa: " + ", ".join([*existing, code])
            rng = types.Range(
                lines.to_lsp(line_no - 1, match.start(), encoding),
                lines.to_lsp(line_no - 1, match.end(), encoding),
            )
            return {"range": _range_json(rng), "newText": new}
    body = text.rstrip()
    rng = types.Range(
        lines.to_lsp(line_no - 1, len(body), encoding), lines.to_lsp(line_no - 1, len(text), encoding)
    )
    return {"range": _range_json(rng), "newText": "  " + NOQA_PREFIX + code}


def lsp_range(lines: Lines, span: Any, encoding: str) -> tuple[int, int, int, int]:
    """A model span (1-based lines) as an LSP (start line, character, end line, character) in
    ``encoding``, clamped into the text, never reversed."""
    sl, sc = lines.lsp_pos(span.start.line - 1, span.start.column, encoding)
    el, ec = lines.lsp_pos(span.end.line - 1, span.end.column, encoding)
    if (el, ec) < (sl, sc):
        el, ec = sl, sc
    return sl, sc, el, ec


def range_text(rng: tuple[int, int, int, int]) -> str:
    sl, sc, el, ec = rng
    return f'{{"start":{{"line":{sl},"character":{sc}}},"end":{{"line":{el},"character":{ec}}}}}'


# an LSP range already known for a related location in another file, by (absolute path, start
# line, start column, end line, end column of its span, encoding): a warm-open record's
KnownRanges = dict[tuple[str, int, int, int, int, str], tuple[int, int, int, int]]


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
        base: str | None = None,
        known_ranges: KnownRanges | None = None,
    ) -> None:
        """``base``: the workspace folder of the document; paths below it in messages ("called
        from Model.forward at /home/me/proj/model.py:46") are shown relative to it, as the CLI
        shows them relative to where it runs."""
        self.lines = lines
        self.base = base
        self.encoding = encoding
        self.editor = editor
        self.file_settings = file_settings
        self.features = features
        self.others = others
        self.open_texts = open_texts or {}
        # ``known_ranges``: related locations' ranges in files not open, known without their
        # line tables (``warmopen``: the record's, computed from the same files)
        self.known_ranges = known_ranges or {}
        # file_settings come from the EditorResolver: `unsafe-fixes` already follows the precedence
        if file_settings is not None:
            self.unsafe = bool(file_settings.unsafe_fixes)
        else:
            self.unsafe = bool(editor.unsafe_fixes)
        self._unused = unused_suppression_codes()
        self._unnecessary = int(types.DiagnosticTag.Unnecessary) in features.tags

    def convert_all(self, diags: list[Diagnostic], path: str) -> str:
        """Every diagnostic, as the JSON text of an LSP ``Diagnostic[]``.

        Written as text directly: a 2,000-line model has hundreds of findings, each with its
        compiled-region chain, and building lsprotocol objects (or even dicts) and serializing
        them costs more than analysing the edit.  ``json.loads`` of the result gives the dicts
        when an action or a hover needs them."""
        here = _abspath(path)
        return "[" + ",".join(self.convert_text(d, here) for d in diags) + "]"

    def _range(self, lines: Lines, span: Any) -> str:
        return range_text(lsp_range(lines, span, self.encoding))

    def shown(self, text: str) -> str:
        """``text`` with absolute paths below the workspace folder made relative to it."""
        return workspace_relative(text, self.base)

    def convert_text(self, diag: Diagnostic, here: str) -> str:
        """One diagnostic as LSP JSON text (``here``: the absolute path of its file)."""
        lines = self.lines
        code = _js(diag.code)
        data = ['"code":' + code, *self._fix_data(diag)]
        if diag.origin is Origin.STATIC:
            noqa = noqa_json(diag.code, diag.noqa_line, lines, self.encoding)
            if noqa is not None:
                data.append('"noqa":' + noqa)
        if diag.extra.get("region"):
            data.append('"region":' + _js(self.shown(str(diag.extra["region"]))))
        severity = int(self.editor.lsp_severity(diag.code, diag.severity, self.file_settings))
        source = PROBE_SOURCE if diag.origin is Origin.PROBE else SOURCE
        out = (
            f'{{"range":{self._range(lines, diag.span)},"message":{_js(self._message(diag))},"severity":{severity},'
            f'"code":{code},"source":"{source}","data":{{{",".join(data)}}}'
        )
        if self.features.code_description and diag.url:
            out += ',"codeDescription":{"href":' + _js(diag.url) + "}"
        if diag.code in self._unused and self._unnecessary:
            out += f',"tags":[{int(types.DiagnosticTag.Unnecessary)}]'
        if self.features.related_information and diag.related:
            related = self._related(diag, here)
            if related:
                out += ',"relatedInformation":[' + ",".join(related) + "]"
        return out + "}"

    def _message(self, diag: Diagnostic) -> str:
        """The message with its help line, workspace-relative paths and the probe's verdict."""
        message = diag.message
        if diag.help:
            message = f"{message}\n{diag.help}"
        message = self.shown(message)
        extra = diag.extra
        if extra.get("confirmed"):
            hits = extra.get("hits")
            message += (
                f"\n✓ confirmed by the probe ({hits} hit{'' if hits == 1 else 's'})"
                if hits
                else "\n✓ confirmed by the probe"
            )
        if extra.get("stale"):
            message += "\n(stale: this code changed since the probe ran)"
        return message

    def _fix_data(self, diag: Diagnostic) -> list[str]:
        """``"fix"`` and ``"alternatives"`` entries of ``data``: each fix the client may pick as a
        quick fix, the preferred one first (a cell's are in its own lines: CellMap.map_fix)."""
        lines = self.lines
        fixes = []
        for fix in (first_fix(diag.fix), *diag.alternatives):
            if fix is not None and fix.codemod and fix_offered(_declared(fix), self.unsafe):
                fix = resolve(fix, lines.text)  # a codemod fix: its edits and final safety (imports libcst)
            if fix is not None and fix.edits and fix_offered(fix, self.unsafe):
                edits = ",".join(
                    f'{{"range":{self._range(lines, e.span)},"newText":{_js(e.content)}}}' for e in fix.edits
                )
                fixes.append(
                    f'{{"title":{_js(fix.message)},"applicability":"{fix.applicability.value}","edits":[{edits}]}}'
                )
        data = []
        if fixes:
            data.append('"fix":' + fixes[0])
        if len(fixes) > 1:
            data.append(f'"alternatives":[{",".join(fixes[1:])}]')
        return data

    def _related(self, diag: Diagnostic, here: str) -> list[str]:
        """The related locations whose file's text is at hand, as LSP JSON."""
        related = []
        for rel in diag.related:
            rel_path = _abspath(rel.path)
            span = rel.span
            known = None
            if rel_path != here and rel_path not in self.open_texts and self.known_ranges:
                known = self.known_ranges.get(
                    (
                        rel_path,
                        span.start.line,
                        span.start.column,
                        span.end.line,
                        span.end.column,
                        self.encoding,
                    )
                )
            if known is not None:
                rng = range_text(known)
            else:
                if rel_path == here:
                    rel_lines: Lines | None = self.lines
                else:
                    rel_lines = self.others.lines(rel_path, self.open_texts.get(rel_path))
                if rel_lines is None:
                    continue
                rng = self._range(rel_lines, span)
            related.append(
                f'{{"location":{{"uri":{_js(path_to_uri(rel_path))},"range":{rng}}},"message":{_js(self.shown(rel.message))}}}'
            )
        return related

    def convert(self, diag: Diagnostic, path: str) -> dict[str, Any]:
        """One diagnostic as an LSP JSON dict."""
        return json.loads(self.convert_text(diag, _abspath(path)))


_JS: dict[str, str] = {}


def _js(text: str) -> str:
    """``json.dumps`` of a string, memoized (the same messages repeat across findings); bounded."""
    found = _JS.get(text)
    if found is None:
        if len(_JS) > 4096:
            _JS.clear()
        found = _JS[text] = json.dumps(text, ensure_ascii=False)
    return found


@lru_cache(maxsize=4096)
def _abspath(path: str) -> str:
    return os.path.abspath(path)


def structure(converter: Any, diag: dict[str, Any]) -> types.Diagnostic:
    """An lsprotocol Diagnostic from our JSON (for replies that need the object)."""
    return converter.structure(diag, types.Diagnostic)
