"""GitHub Actions workflow commands: each finding becomes an annotation on the PR diff."""

from __future__ import annotations

from tclint.rules.model import Diagnostic, Severity
from tclint.rules.printable import printable

_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "notice",
    Severity.HINT: "notice",
}


def _escape_data(text: str) -> str:
    """The workflow-command encoding of ``%``, CR and LF; other control characters (an ESC
    sequence from a file name or a quoted expression) and undecodable bytes as ``printable``."""
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_prop(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(diags: list[Diagnostic]) -> str:
    out = []
    for d in diags:
        level = _LEVEL[d.severity]
        cell = f"cell {d.cell}:" if d.cell is not None else ""
        props = [f"title={_escape_prop(f'tclint ({d.code})')}", f"file={_escape_prop(d.path)}"]
        if d.cell is None:
            # a notebook's cell-relative line would land on an unrelated line of its JSON: annotate
            # the file instead (the message says `cell N:line:col`)
            props += [
                f"line={d.span.start.line}",
                f"col={d.span.start.column + 1}",
                f"endLine={d.span.end.line}",
                f"endColumn={d.span.end.column + 1}",
            ]
        message = f"{cell}{d.span.start.line}:{d.span.start.column + 1}: {d.code} {d.message}"
        out.append(f"::{level} {','.join(props)}::{_escape_data(message)}")
    return "\n".join(out) + ("\n" if out else "")
