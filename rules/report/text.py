"""Human output: ``concise`` (one line per finding, ruff's shape) and ``full`` (with the source
line, a caret range, the compiled-region chain and the suggested fix).  File names, messages and
source lines come from the linted tree: they are printed through ``printable`` (control and bidi
characters escaped), so nothing in the tree can drive the terminal or forge a finding line."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from tclint.rules.fixes import offered, preferred
from tclint.rules.model import Diagnostic
from tclint.rules.printable import printable
from tclint.rules.source import LineIndex


def location(d: Diagnostic) -> str:
    """``path:line:col`` (``path:cell N:line:col``), the path escaped as ``printable`` does."""
    cell = f"cell {d.cell}:" if d.cell is not None else ""
    return f"{printable(d.path)}:{cell}{d.span.start.line}:{d.span.start.column + 1}"


def fix_marker(d: Diagnostic, unsafe: bool) -> str:
    return "[*] " if preferred(d, unsafe) is not None else ""


def concise(diags: list[Diagnostic], unsafe_fixes: bool = False) -> str:
    lines = [f"{location(d)}: {d.code} {fix_marker(d, unsafe_fixes)}{printable(d.message)}" for d in diags]
    return "\n".join(lines) + ("\n" if lines else "")


def _text_of(d: Diagnostic, sources: Mapping[str, str | None]) -> str | None:
    """The text a finding's lines refer to: the file's, or for a notebook finding its cell's (from
    ``sources.cell_text(path, cell)``, which ``reading.Texts`` provides; other mappings: none)."""
    if d.cell is None:
        return sources.get(d.path)
    cell_text = getattr(sources, "cell_text", None)
    return cell_text(d.path, d.cell) if cell_text is not None else None


def _snippet(d: Diagnostic, text: str | None) -> list[str]:
    if text is None:
        return []
    index = LineIndex(text)
    start, end = d.span.start, d.span.end
    first = max(1, start.line - 1)
    last = min(index.line_count, end.line if end.line - start.line < 6 else start.line + 2)
    width = len(str(last))
    out = [f"{' ' * width} |"]
    for lineno in range(first, last + 1):
        line = index.line(lineno).expandtabs(1)
        shown = printable(line)
        out.append(f"{lineno:>{width}} | {shown}")
        if start.line <= lineno <= end.line and lineno <= last:
            c0 = start.column if lineno == start.line else len(line) - len(line.lstrip())
            c1 = end.column if lineno == end.line else len(line)
            if shown is not line:  # escapes widen the line: carets follow the shown text
                c0, c1 = len(printable(line[:c0])), len(printable(line[:c1]))
            c1 = max(c1, c0 + 1)
            label = f" {d.code}" if lineno == min(end.line, last) else ""
            out.append(f"{' ' * width} | {' ' * c0}{'^' * (c1 - c0)}{label}")
    out.append(f"{' ' * width} |")
    return out


def full(diags: list[Diagnostic], sources: Mapping[str, str | None], unsafe_fixes: bool = False) -> str:
    blocks = []
    for d in diags:
        lines = [f"{location(d)}: {d.code} {fix_marker(d, unsafe_fixes)}{printable(d.message)}"]
        lines.extend(_snippet(d, _text_of(d, sources)))
        chain = d.extra.get("region")
        if chain:
            lines.append(f"  = region: {printable(chain)}")
        if d.extra.get("library_sites"):  # TC312: where in the installed library, hottest first
            lines.extend(
                f"  = in library: {printable(r.path)}:{r.span.start.line}:{r.span.start.column + 1}: "
                f"{printable(r.message)}"
                for r in d.related
            )
        if d.help:
            lines.append(f"  = help: {printable(d.help)}")
        for n, fix in enumerate(offered(d)):
            kind = {"safe": "fix", "unsafe": "unsafe fix", "display-only": "suggestion"}[
                fix.applicability.value
            ]
            lines.append(f"  = {'or ' if n else ''}{kind}: {printable(fix.message)}")
        if d.gb_ids:
            lines.append(f"  = PyTorch: {', '.join(d.gb_ids)} ({d.url})")
        lines.append(f"  = severity: {d.severity.value}, confidence: {d.confidence.value}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + ("\n" if blocks else "")


def summary(diags: list[Diagnostic], fixed: int = 0, unsafe_fixes: bool = False) -> str:
    lines = []
    if diags:
        n = len(diags)
        lines.append(
            f"Found {n} problem{'s' if n != 1 else ''}"
            + (f" ({fixed} fixed, {n} remaining)." if fixed else ".")
        )
        safe = sum(1 for d in diags if preferred(d, False) is not None)
        unsafe = sum(1 for d in diags if preferred(d, False) is None and preferred(d, True) is not None)
        if safe or (unsafe and unsafe_fixes):
            count = safe + (unsafe if unsafe_fixes else 0)
            lines.append(
                f"[*] {count} fixable with the `--fix` option"
                + (" (includes unsafe fixes)" if unsafe_fixes and unsafe else "")
                + "."
            )
        if unsafe and not unsafe_fixes:
            lines.append(f"{unsafe} more fix{'es' if unsafe != 1 else ''} available with `--unsafe-fixes`.")
    elif fixed:
        lines.append(f"Found {fixed} problem{'s' if fixed != 1 else ''} ({fixed} fixed, 0 remaining).")
    else:
        lines.append("All checks passed!")
    return "\n".join(lines) + "\n"


def statistics(diags: list[Diagnostic]) -> str:
    counts = Counter((d.code, d.name) for d in diags)
    fixable = Counter(d.code for d in diags if preferred(d, False) is not None)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0]))
    width = max((len(str(n)) for _, n in rows), default=1)
    out = []
    for (code, name), n in rows:
        marker = "[*]" if fixable.get(code) else "   "
        out.append(f"{n:>{width}}\t{code}\t{marker} {name}")
    return "\n".join(out) + ("\n" if out else "")
