"""Jupyter notebooks: lint the code cells as one module, report positions per cell.

Cells run top to bottom in one namespace, so they are analysed as one concatenated source (a
compile site in cell 5 compiles a function defined in cell 2).  IPython syntax (``%magic``,
``!shell``, ``?help``, ``%%cell magic``) is blanked out line by line, keeping line numbers.
Diagnostics are mapped back to (cell, line) with cells numbered from 1 over *all* cells,
markdown included, as Jupyter and ruff number them; so are the edits of their fixes, when they
stay in the finding's cell (``--fix`` rewrites those cells in the notebook's JSON).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TypeVar

from tclint.rules.model import Diagnostic, Edit, Fix, Position, RelatedLocation, Span

_T = TypeVar("_T")

# the codemod of a cell's finding, marked with its cell (``CellMap.map_fix``)
IN_CELL = "in-cell"

_MAGIC = re.compile(r"^\s*(%|!|\?)|^\s*\w[\w.]*\s*=\s*(%|!)|\?\s*$")


@dataclass
class CellMap:
    starts: list[tuple[int, int, int]]  # (first line in the concatenation, cell number, line count)
    # cell number -> the code cell's source as written (magics included), for source snippets
    sources: dict[int, str] = field(default_factory=dict)

    def cell_text(self, number: int) -> str | None:
        """The source of code cell ``number`` as the user wrote it (one line ending), or None."""
        return self.sources.get(number)

    def locate(self, line: int) -> tuple[int, int]:
        """(cell number, line within the cell) for a line of the concatenated source."""
        cell, first = 1, 1
        for start, number, _count in self.starts:
            if start <= line:
                cell, first = number, start
            else:
                break
        return cell, line - first + 1

    def map_span(self, span: Span) -> tuple[int, Span]:
        cell, line = self.locate(span.start.line)
        end_cell, end_line = self.locate(span.end.line)
        if end_cell != cell:
            end_line, end_col = line, span.start.column
        else:
            end_col = span.end.column
        return cell, Span(Position(line, span.start.column), Position(end_line, end_col))

    def map_text(self, text: str, path: str) -> str:
        """Rewrite `path:LINE` references (region chains) into `path:cell N:LINE`."""
        import re

        def repl(m: re.Match[str]) -> str:
            cell, line = self.locate(int(m.group(1)))
            return f"{path}:cell {cell}:{line}"

        return re.sub(re.escape(path) + r":(\d+)", repl, text)

    def map_diagnostic(self, diag: Diagnostic) -> Diagnostic:
        cell, span = self.map_span(diag.span)
        extra = dict(diag.extra)
        if isinstance(extra.get("region"), str):
            extra["region"] = self.map_text(extra["region"], diag.path)
        related = []
        for rel in diag.related:
            if rel.path == diag.path:
                rcell, rspan = self.map_span(rel.span)
                related.append(RelatedLocation(rel.path, rspan, f"{rel.message} [cell {rcell}]"))
            else:
                related.append(rel)
        noqa = None
        if diag.noqa_line is not None:
            noqa = self.locate(diag.noqa_line)[1]
        fixes = [
            f
            for f in (self.map_fix(f, cell) for f in (diag.fix, *diag.alternatives) if f is not None)
            if f is not None
        ]
        return replace(
            diag,
            span=span,
            cell=cell,
            related=tuple(related),
            noqa_line=noqa,
            extra=extra,
            fix=fixes[0] if fixes else None,
            alternatives=tuple(fixes[1:]),
            message=self.map_text(diag.message, diag.path),
        )

    def map_fix(self, fix: Fix, cell: int) -> Fix | None:
        """``fix`` with its edits in cell ``cell``'s own lines, or None when an edit leaves that
        cell.  A codemod fix (no edits yet: it works on the whole module) is kept for
        ``resolve_codemod``, marked ``(IN_CELL, cell, *codemod)`` (its places stay the module's).
        An edit ending at the start of the line after the cell's last one (a removed last
        statement) ends at the end of the cell's text, which has no line ending of its own."""
        if fix.codemod:
            return replace(fix, codemod=(IN_CELL, str(cell), *fix.codemod))
        if not fix.edits:
            return None
        source = self.sources.get(cell)
        first = next((start for start, number, _count in self.starts if number == cell), None)
        if source is None or first is None:
            return None
        count = source.count("\n") + 1
        edits = []
        for e in fix.edits:
            sl, el = e.span.start.line - first + 1, e.span.end.line - first + 1
            sc, ec = e.span.start.column, e.span.end.column
            if el == count + 1 and ec == 0:
                el, ec = count, len(source.rsplit("\n", 1)[-1])
            if not (1 <= sl <= count and 1 <= el <= count):
                return None
            edits.append(Edit(Span(Position(sl, sc), Position(el, ec)), e.content))
        return replace(fix, edits=tuple(edits))

    def resolve_codemod(self, fix: Fix, text: str) -> Fix | None:
        """A codemod fix of a finding in a cell (``map_fix``'s ``(IN_CELL, cell, *codemod)``)
        computed on the notebook's module ``text``: kept, in the cell's own lines, when every edit
        stays in that cell and the lines it touches read in the module as the cell writes them
        (no IPython line that the module has blanked out); None otherwise (the TC313 hoist of a
        loop in one cell is offered, a move to a caller in another cell is not)."""
        from tclint.rules.fixes import resolve
        from tclint.rules.source import LineIndex

        if fix.codemod[:1] != (IN_CELL,) or len(fix.codemod) < 3 or not isinstance(fix.codemod[1], str):
            return None
        cell = int(fix.codemod[1])
        done = resolve(replace(fix, codemod=fix.codemod[2:]), text)
        mapped = self.map_fix(done, cell) if done is not None and done.edits else None
        source = self.sources.get(cell)
        if done is None or mapped is None or source is None:
            return None
        module_lines = LineIndex(text)
        cell_lines = source.splitlines()
        for e, m in zip(done.edits, mapped.edits, strict=True):
            last = m.span.end.line - (
                1 if m.span.end.column == 0 and m.span.end.line > m.span.start.line else 0
            )
            for k in range(m.span.start.line, min(last, len(cell_lines)) + 1):
                written = module_lines.line(e.span.start.line + k - m.span.start.line).rstrip("\r\n")
                if written != cell_lines[k - 1]:
                    return None  # a blanked magic (or another line) where the edit goes
        return mapped


_LINE_END = re.compile(r"\r\n|\r|\n")
_PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture", "%%prun", "%%debug")


def _neutralise(line: str, start: int) -> str:
    """Replace IPython syntax from `start` on by `...` (or `0`) padded to the same length, so every
    column on the line stays where the user sees it; both are valid statements and expressions."""
    width = len(line) - start
    if width >= 3:
        return line[:start] + "..." + " " * (width - 3)
    if width >= 1:
        return line[:start] + "0" + " " * (width - 1)
    return line


def _blank_magics(source: str) -> str:
    """Blank out IPython syntax line by line, keeping every line's length and count."""
    lines = source.split("\n")
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].strip().split()[0]
        if magic in _PYTHON_CELL_MAGICS:
            lines[0] = _neutralise(lines[0], len(lines[0]) - len(lines[0].lstrip()))
        else:
            # %%bash, %%html, ...: not Python at all (and a `# noqa` there is not a comment)
            return "\n".join(" " * len(line) for line in lines)
    out = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith("#") or not _MAGIC.search(line):
            out.append(line)
            continue
        indent = len(line) - len(stripped)
        m = re.match(r"\s*\w[\w.]*\s*=\s*(?=[%!])", line)  # `x = !ls`, `t = %timeit -o f()`
        start = m.end() if m else indent
        out.append(_neutralise(line, start))
    return "\n".join(out)


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def load_notebook(data: bytes) -> tuple[str | None, CellMap | None, str | None]:
    try:
        nb = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValueError) as exc:
        return None, None, f"not a valid notebook (JSON): {exc}"
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        return None, None, "not a valid notebook: no `cells` list"
    metadata = nb.get("metadata")
    kernelspec = metadata.get("kernelspec") if isinstance(metadata, dict) else None
    language = kernelspec.get("language") if isinstance(kernelspec, dict) else None
    if isinstance(language, str) and language.lower() not in ("python", "python3", ""):
        return "", CellMap([]), None
    parts: list[str] = []
    starts: list[tuple[int, int, int]] = []
    written: dict[int, str] = {}
    line = 1
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(s for s in source if isinstance(s, str))
        elif not isinstance(source, str):
            source = ""
        # one line ending, so that cell line counts agree with the tokenizer's (\r, \r\n, \n)
        written[number] = _LINE_END.sub("\n", source).rstrip("\n")
        source = _blank_magics(_LINE_END.sub("\n", source)).rstrip("\n")
        count = source.count("\n") + 1
        starts.append((line, number, count))
        parts.append(source)
        line += count
    return "\n".join(parts) + "\n", CellMap(starts, written), None


def add_noqa_to_notebook(data: bytes, diags: list[Diagnostic]) -> tuple[bytes, int]:
    """`--add-noqa` for a notebook: add `# noqa: CODES` to the cell lines with findings.

    Diagnostics carry (cell, cell-relative line); the notebook's JSON is rewritten with the
    indentation nbformat uses (1 space), keeping everything else as it was.
    """
    from tclint.rules.fixes import add_noqa

    by_cell: dict[int, list[Diagnostic]] = {}
    for d in diags:
        if d.cell is not None and d.noqa_line is not None:
            by_cell.setdefault(d.cell, []).append(d)

    def edit(text: str, cell_diags: list[Diagnostic]) -> tuple[str, int]:
        local = [
            replace(d, span=Span(Position(d.noqa_line, 0), Position(d.noqa_line, 0)), cell=None)
            for d in cell_diags
            if d.noqa_line is not None
        ]
        return add_noqa(text, local)

    return _rewrite_cells(data, by_cell, edit)


def fix_notebook(data: bytes, diags: list[Diagnostic], unsafe: bool) -> tuple[bytes, int]:
    """`--fix` for a notebook: each finding's preferred allowed fix (edits in its cell's lines,
    see ``CellMap.map_fix``) applied to its cell's source; the JSON is rewritten as
    ``add_noqa_to_notebook`` does.  Returns (new bytes, fixes applied)."""
    from tclint.rules.fixes import apply_fixes, preferred

    by_cell: dict[int, list[Fix]] = {}
    for d in diags:
        fix = preferred(d, unsafe) if d.cell is not None else None
        if fix is not None:
            by_cell.setdefault(d.cell, []).append(fix)  # type: ignore[arg-type]

    def edit(text: str, fixes: list[Fix]) -> tuple[str, int]:
        new, n = apply_fixes(text, fixes)
        return (new, n) if new != text else (text, 0)

    return _rewrite_cells(data, by_cell, edit)


def _rewrite_cells(
    data: bytes, by_cell: dict[int, list[_T]], edit: Callable[[str, list[_T]], tuple[str, int]]
) -> tuple[bytes, int]:
    """The notebook ``data`` with ``edit(cell source, items)`` applied to each code cell numbered
    in ``by_cell`` (1-based): returns (new bytes, count edit reported), or ``data`` unchanged when
    it is not a notebook or nothing changed.  Line ends are read as ``\n``; a list source stays a
    list of lines; the JSON is written with nbformat's 1-space indentation."""
    try:
        nb = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValueError):
        return data, 0
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        return data, 0
    total = 0
    for number, items in by_cell.items():
        if (
            not (1 <= number <= len(cells))
            or not isinstance(cells[number - 1], dict)
            or cells[number - 1].get("cell_type") != "code"
        ):
            continue
        cell = cells[number - 1]
        source = cell.get("source", "")
        was_list = isinstance(source, list)
        text = "".join(x for x in source if isinstance(x, str)) if was_list else _str(source)
        text = _LINE_END.sub("\n", text)
        new, n = edit(text, items)
        if n:
            total += n
            cell["source"] = new.splitlines(keepends=True) if was_list else new
    if not total:
        return data, 0
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8"), total
