"""The diagnostic record every part of tclint speaks.

Rules produce these, the engine filters and suppresses them, and the edges (text, JSON, SARIF,
GitHub annotations, LSP, probe merge) convert them.  Nothing else crosses module boundaries, so the
conventions are fixed here once: lines are 1-based, columns are 0-based offsets in Unicode code
points of the line (the edges convert to 1-based text columns or UTF-16 LSP columns).
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass, field, replace
from typing import Any


class Severity(str, enum.Enum):
    """How loudly a finding is shown; configurable per code."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    HINT = "hint"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    @classmethod
    def parse(cls, text: str) -> Severity:
        aliases = {"information": "info", "warn": "warning", "err": "error"}
        value = aliases.get(text.lower(), text.lower())
        return cls(value)


_SEVERITY_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2, Severity.HINT: 3}


class Confidence(str, enum.Enum):
    """How sure the static analysis is that the hazard is real.

    HIGH: the operand types are known (annotated tensor, result of a torch function, ...).
    MEDIUM: inferred from usage (an unannotated ``forward`` argument, a tensor-only method name).
    LOW: plausible only; reported when ``min-confidence = "low"``.
    """

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Applicability(str, enum.Enum):
    """Whether a fix may be applied automatically (ruff's three levels)."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


class Origin(str, enum.Enum):
    STATIC = "static"
    PROBE = "probe"


@dataclass(frozen=True, slots=True, order=True)
class Position:
    line: int  # 1-based
    column: int  # 0-based, code points


@dataclass(frozen=True, slots=True)
class Span:
    start: Position
    end: Position

    @classmethod
    def of(cls, line: int, col: int, end_line: int, end_col: int) -> Span:
        return cls(Position(line, col), Position(end_line, end_col))


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text in ``span`` with ``content`` (an insertion when the span is empty)."""

    span: Span
    content: str


@dataclass(frozen=True, slots=True)
class Fix:
    """A fix: its edits, or, for a codemod fix, the codemod that computes them when the fix is used.

    ``codemod`` names a codemod of ``tclint.rules.codemods`` and its arguments: plain strings, and
    a ``Span`` for every place in the file (never a line number written as a string), so that what
    moves the positions of facts and diagnostics after an edit (the language server's incremental
    analysis, ``shift_diagnostic``) moves these too, as it moves the spans of ``edits``.
    Such a fix is recorded with no edits during the walk, so linting never imports libcst; the
    edits are computed from the file's text by ``tclint.rules.fixes.resolve`` when a fix is
    applied, previewed or sent to an editor.
    """

    message: str
    edits: tuple[Edit, ...]
    applicability: Applicability
    codemod: tuple[str | Span, ...] = ()


@dataclass(frozen=True, slots=True)
class RelatedLocation:
    """A place that explains a diagnostic: a link of the compiled-region chain, a guard source."""

    path: str
    span: Span
    message: str


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    name: str
    message: str
    path: str
    span: Span
    severity: Severity = Severity.WARNING
    confidence: Confidence = Confidence.HIGH
    origin: Origin = Origin.STATIC
    gb_ids: tuple[str, ...] = ()
    fix: Fix | None = None
    related: tuple[RelatedLocation, ...] = ()
    noqa_line: int | None = None  # where a `# noqa` comment for this finding goes
    url: str | None = None
    help: str | None = None  # a one-line suggestion shown under the message
    cell: int | None = None  # 1-based notebook cell (all cells counted), when linting .ipynb
    extra: dict[str, Any] = field(default_factory=dict)
    # the other fixes offered besides ``fix`` (the preferred one), in the rule's order of
    # preference: the user picks one (an editor's quick fixes); ``--fix`` applies the first allowed
    alternatives: tuple[Fix, ...] = ()

    @property
    def line(self) -> int:
        return self.span.start.line

    def with_(self, **changes: Any) -> Diagnostic:
        return replace(self, **changes)

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.span.start.line, self.span.start.column, self.code)


# tclint's own codes, named once: a file that does not parse, a file that cannot be read or
# analysed (both always reported, never suppressible), a suppression that suppressed nothing
PARSE_ERROR = "TC000"
UNREADABLE_FILE = "TC011"
UNUSED_SUPPRESSION = "TC012"
FILE_ERRORS = (PARSE_ERROR, UNREADABLE_FILE)

GB_DOC_URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{}.html"


def gb_url(gb_id: str) -> str:
    """PyTorch's page for one graph-break id (``GB0124`` -> ``.../gb/gb0124.html``)."""
    return GB_DOC_URL.format(gb_id.lower())


def rule_doc_url(code: str) -> str:
    """The rule's reference page (shipped in the package, so the link works offline)."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "docs", f"{code}.md")
    return "file://" + here
