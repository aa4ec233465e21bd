"""What the real TorchDynamo did in an installed package, and how tclint's findings compare (dev tools).

Shared by ``bench/hf_eval.py`` (transformers) and ``bench/lib_eval.py`` (other libraries from the
package index).  Two halves:

* the dynamic side, imported inside the measured venv (needs torch): the structured-trace handler
  that collects every ``dynamo_graph_break_reason`` artifact (:class:`BreakTrace`), the parser that
  attributes one to the innermost traceback frame inside the measured package(s) with its GB id
  (:func:`parse_break`), and the two line recorders: every (file, line) Dynamo traced symbolically
  (:func:`record_traced_lines`) and every line that ran eagerly (:func:`record_eager_lines`);
* the scoring side (no torch): statement/function lookups in a source file (:class:`SourceIndex`),
  the executed statements and functions of a run (:func:`executed`), and the verdict on one static
  graph-break site (:func:`classify_site`), plus the ``tclint`` import shim that measures a given
  source tree (:func:`tclint_shim`).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

Site = tuple[str, int]  # (file relative to the packages' folder, first line of the statement)

# --------------------------------------------------------------------------------------------
# dynamic side (imports torch lazily)
# --------------------------------------------------------------------------------------------


def gb_registry() -> dict[str, str]:
    """torch's graph-break registry: Gb_type -> GB id ("GB0170")."""
    import torch._dynamo

    reg = os.path.join(os.path.dirname(torch._dynamo.__file__), "graph_break_registry.json")
    with open(reg) as fh:
        return {e["Gb_type"]: gid for gid, entries in json.load(fh).items() for e in entries}


class BreakTrace:
    """Context manager collecting the payload of every graph-break artifact of the structured trace."""

    def __init__(self) -> None:
        import logging

        class H(logging.Handler):
            def __init__(self):
                super().__init__(logging.DEBUG)
                self.payloads: list[str] = []

            def emit(self, record):
                md = getattr(record, "metadata", None) or {}
                art = md.get("artifact") if isinstance(md, dict) else None
                if art and art.get("name") == "dynamo_graph_break_reason":
                    self.payloads.append(getattr(record, "payload", "") or "")

        self.handler = H()
        self.logger = logging.getLogger("torch.__trace")

    def __enter__(self):
        import logging

        self.old = self.logger.level
        self.logger.setLevel(logging.DEBUG)
        self.logger.addHandler(self.handler)
        return self.handler

    def __exit__(self, *exc):
        self.logger.removeHandler(self.handler)
        self.logger.setLevel(self.old)


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_LINK = re.compile(r"compile-graph-break-site/gb/gb(\d+)\.html")


def _under(path: str, pkg_dirs: Sequence[str]) -> bool:
    return any(path.startswith(d + os.sep) for d in pkg_dirs)


def parse_break(
    payload: str, pkg_dirs: Sequence[str], base: str, gb_by_type: dict[str, str], depth: int | None = 8
) -> dict[str, Any]:
    """One graph-break artifact -> its GB id, type, and the innermost frame inside ``pkg_dirs``.

    ``file`` is relative to ``base`` (the folder holding the packages: site-packages), None when no
    frame of the traceback is inside a measured package.  ``stack`` is the last ``depth`` frames (all
    of them for None), package frames relative to ``base``; ``innermost`` is the very last frame (wherever it is), which tells
    a break in the package's own statement from one inside a callee (torch, another library).
    """
    lines = payload.splitlines()
    reported = lines[0].split(" at ", 1)[1] if lines and " at " in lines[0] else ""
    reason = (
        lines[1].split("Graph Break Reason: ", 1)[1]
        if len(lines) > 1 and "Graph Break Reason: " in lines[1]
        else ""
    )
    gb_type = reason
    if reason.endswith(":"):
        gb_type = next((ln.strip() for ln in lines[2:] if ln.strip()), "")
    gb = gb_by_type.get(gb_type)
    if gb is None:
        m = _LINK.search(payload)
        gb = f"GB{m.group(1)}" if m else None
    frames = []
    if "User code traceback:" in payload:
        # only the block itself: the Python traceback after it repeats the exception text, whose
        # "branch condition involves a tensor computed as follows: # File ..., line N" provenance
        # lines would otherwise pass for frames (tests/helpers/dynamo_harness.py has that bug)
        tb = payload.split("User code traceback:", 1)[1].split("\n\n", 1)[0]
        for m in _FRAME.finditer(tb):
            frames.append((m.group("file"), int(m.group("line")), m.group("func")))
    user = None
    for f in frames:
        if _under(os.path.abspath(f[0]), pkg_dirs):
            user = f
    if user is None and any(reported.startswith(d) for d in pkg_dirs):
        file, _, line = reported.rpartition(":")
        with contextlib.suppress(ValueError):
            user = (file, int(line), "?")
    explanation = ""
    for ln in lines:
        if ln.strip().startswith("Explanation:"):
            explanation = ln.strip()[len("Explanation:") :].strip()
            break

    def show(path: str) -> str:
        return os.path.relpath(path, base) if _under(path, pkg_dirs) else path

    return {
        "gb_id": gb,
        "gb_type": gb_type,
        "explanation": explanation[:300],
        "file": os.path.relpath(user[0], base) if user else None,
        "line": user[1] if user else None,
        "func": user[2] if user else None,
        "reported_at": reported.replace(base + os.sep, ""),
        "stack": [f"{show(f[0])}:{f[1]}:{f[2]}" for f in frames][-depth if depth else 0 :],
        "innermost": f"{show(frames[-1][0])}:{frames[-1][1]}:{frames[-1][2]}" if frames else None,
    }


@contextlib.contextmanager
def record_traced_lines(pkg_dirs: Sequence[str], out: set[tuple[str, int]]) -> Iterator[None]:
    """Add to ``out`` every (file, line) under ``pkg_dirs`` that Dynamo starts tracing symbolically."""
    from torch._dynamo import symbolic_convert as sc

    original = sc.InstructionTranslatorBase.starts_line
    prefixes = tuple(d + os.sep for d in pkg_dirs)

    def starts_line(self, lineno):
        fn = self.f_code.co_filename
        if fn.startswith(prefixes):
            out.add((fn, lineno))
        return original(self, lineno)

    sc.InstructionTranslatorBase.starts_line = starts_line
    try:
        yield
    finally:
        sc.InstructionTranslatorBase.starts_line = original


@contextlib.contextmanager
def record_eager_lines(pkg_dirs: Sequence[str], out: set[tuple[str, int]]) -> Iterator[None]:
    """Add to ``out`` every (file, line) under ``pkg_dirs`` that runs (eagerly) inside the block."""
    prefixes = tuple(d + os.sep for d in pkg_dirs)

    def local(frame, event, arg):
        if event == "line":
            out.add((frame.f_code.co_filename, frame.f_lineno))
        return local

    def glob(frame, event, arg):
        fn = frame.f_code.co_filename
        if fn.startswith(prefixes):
            out.add((fn, frame.f_lineno))
            return local
        return None

    sys.settrace(glob)
    try:
        yield
    finally:
        sys.settrace(None)


# --------------------------------------------------------------------------------------------
# scoring side (no torch)
# --------------------------------------------------------------------------------------------


def tclint_shim(root: str) -> str:
    """A folder to put on PYTHONPATH so that ``import tclint`` is the source tree ``root``."""
    shim = os.path.join(tempfile.gettempdir(), "hf_eval_shim_" + hashlib.sha1(root.encode()).hexdigest()[:8])
    os.makedirs(shim, exist_ok=True)
    link = os.path.join(shim, "tclint")
    if not os.path.islink(link) or os.readlink(link) != root:
        with contextlib.suppress(FileNotFoundError):
            os.remove(link)
        os.symlink(root, link)
    return shim


def _first_line(node: ast.AST) -> int:
    """The first line of a body item: a statement, an except handler, or a ``match`` case (which has
    no position of its own: its pattern's)."""
    return node.pattern.lineno if isinstance(node, ast.match_case) else node.lineno  # type: ignore[attr-defined]


class SourceIndex:
    """Statement and function lookups for one file."""

    def __init__(self, path: str) -> None:
        with open(path) as fh:
            self.text = fh.read()
        self.lines = self.text.splitlines()
        tree = ast.parse(self.text)
        self.headers: list[tuple[int, int]] = []  # (start, end) of every statement (compound: header)
        self.funcs: list[tuple[int, int, int, str]] = []  # (def line, end line, first line, qualname)
        self._walk(tree, "")

    def _walk(self, node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([d.lineno for d in child.decorator_list] + [child.lineno])
                qual = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    self.funcs.append((child.lineno, child.end_lineno or child.lineno, first, qual))
                    self.headers.append(
                        (
                            child.lineno,
                            child.body[0].lineno - 1 if child.body[0].lineno > child.lineno else child.lineno,
                        )
                    )
                    self._walk(child, qual + ".<locals>.")
                else:
                    self.headers.append((child.lineno, child.lineno))
                    self._walk(child, qual + ".")
                continue
            if isinstance(child, ast.stmt):
                body_starts = [
                    _first_line(getattr(child, a)[0])
                    for a in ("body", "orelse", "finalbody", "handlers", "cases")
                    if isinstance(getattr(child, a, None), list) and getattr(child, a)
                ]
                if body_starts:
                    end = max(child.lineno, min(body_starts) - 1)
                    # `if x: y` on one line: the header is that line
                    self.headers.append((child.lineno, end))
                else:
                    self.headers.append((child.lineno, child.end_lineno or child.lineno))
            self._walk(child, prefix)

    def stmt(self, line: int) -> int:
        best = None
        for s, e in self.headers:
            if s <= line <= e and (
                best is None
                or (e - s) < (best[1] - best[0])
                or ((e - s) == (best[1] - best[0]) and s > best[0])
            ):
                best = (s, e)
        return best[0] if best else line

    def func(self, line: int) -> tuple[int, str] | None:
        """(first line of the innermost enclosing function incl. decorators, qualname)."""
        best = None
        for d, e, first, qual in self.funcs:
            if first <= line <= e and (best is None or first > best[0]):
                best = (first, qual, d)
        return (best[0], best[1]) if best else None

    def def_line(self, first: int) -> int:
        for d, _e, f, _q in self.funcs:
            if f == first or d == first:
                return d
        return first

    def source(self, line: int) -> str:
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""


@functools.cache
def source_index(path: str) -> SourceIndex:
    return SourceIndex(path)


@dataclass
class Executed:
    """The statements and functions (keyed by first line incl. decorators) a run executed."""

    traced_stmts: set[Site]
    traced_funcs: set[Site]
    eager_stmts: set[Site]
    eager_funcs: set[Site]


def executed(
    traced: Iterable[Sequence[Any]], eager: Iterable[Sequence[Any]], idx: Callable[[str], SourceIndex]
) -> Executed:
    """Map the recorded (file, line) pairs of a run to statements and functions."""
    out = Executed(set(), set(), set(), set())
    for lines, stmts, funcs in (
        (traced, out.traced_stmts, out.traced_funcs),
        (eager, out.eager_stmts, out.eager_funcs),
    ):
        for f, ln in lines:
            try:
                ix = idx(f)
            except (OSError, SyntaxError):
                continue
            stmts.add((f, ix.stmt(ln)))
            fn = ix.func(ln)
            if fn:
                funcs.add((f, fn[0]))
    return out


def classify_site(
    key: Site, actual: dict[Site, Any] | set[Site], ran: Executed, idx: Callable[[str], SourceIndex]
) -> str:
    """The verdict on one static graph-break site.

    tp: Dynamo broke there; fp-traced: Dynamo traced the statement and did not break there;
    fp-compile-dead: its function was traced, the statement ran eagerly but not under Dynamo;
    eager-only: its function ran only eagerly; unexecuted: the statement never ran.
    """
    if key in actual:
        return "tp"
    f, line = key
    fn = idx(f).func(line)
    fkey = (f, fn[0]) if fn else None
    if key in ran.traced_stmts:
        return "fp-traced"
    if fkey is not None and fkey in ran.traced_funcs:
        return "fp-compile-dead" if key in ran.eager_stmts else "unexecuted"
    if key in ran.eager_stmts:
        return "eager-only"
    return "unexecuted"


def ratio(num: int, den: int) -> float | None:
    return num / den if den else None


LEVELS = ("default", "low")  # default: medium/high-confidence findings; low: all of them


def static_break_sites(
    diagnostics: Iterable[dict[str, Any]], rel: Callable[[str], str], idx: Callable[[str], SourceIndex]
) -> dict[str, dict[Site, list[dict[str, Any]]]]:
    """tclint's JSON diagnostics -> its graph-break (TC1xx) sites per level, keyed like Dynamo's."""
    static: dict[str, dict[Site, list[dict[str, Any]]]] = {lv: {} for lv in LEVELS}
    for d in diagnostics:
        if not d["code"].startswith("TC1"):
            continue
        f = rel(d["filename"])
        row = d["location"]["row"]
        ix = idx(f)
        item = {
            "code": d["code"],
            "row": row,
            "severity": d["severity"],
            "confidence": d["confidence"],
            "message": d["message"],
            "region": d.get("region"),
            "source": ix.source(row),
        }
        levels = ["low"] + (["default"] if d["confidence"] in ("medium", "high") else [])
        for lv in levels:
            static[lv].setdefault((f, ix.stmt(row)), []).append(item)
    return static


def score_breaks(
    static: dict[Site, list[dict[str, Any]]],
    actual: dict[Site, list[dict[str, Any]]],
    ran: Executed,
    idx: Callable[[str], SourceIndex],
) -> dict[str, Any]:
    """Every static and dynamic site with its verdict (:func:`classify_site`, or "fn"), and the scores.

    precision counts findings on statements Dynamo executed (tp / (tp + fp-traced + fp-compile-dead));
    "strict" also counts eager-only findings as false; recall is tp / Dynamo's sites.
    """
    sites = []
    counts = {"tp": 0, "fp-traced": 0, "fp-compile-dead": 0, "eager-only": 0, "unexecuted": 0, "fn": 0}
    for key, items in sorted(static.items()):
        c = classify_site(key, actual, ran, idx)
        counts[c] += 1
        fn = idx(key[0]).func(key[1])
        sites.append(
            {
                "file": key[0],
                "line": key[1],
                "status": c,
                "function": fn[1] if fn else None,
                "source": idx(key[0]).source(key[1]),
                "static": items,
                "dynamic": actual.get(key, []),
            }
        )
    for key, evs in sorted(actual.items()):
        if key in static:
            continue
        counts["fn"] += 1
        fn = idx(key[0]).func(key[1])
        sites.append(
            {
                "file": key[0],
                "line": key[1],
                "status": "fn",
                "function": fn[1] if fn else None,
                "source": idx(key[0]).source(key[1]),
                "static": [],
                "dynamic": evs,
            }
        )
    tp, fp = counts["tp"], counts["fp-traced"] + counts["fp-compile-dead"]
    return {
        "counts": counts,
        "sites": sites,
        "precision": ratio(tp, tp + fp),
        "strict_precision": ratio(tp, tp + fp + counts["eager-only"]),
        "recall": ratio(tp, len(actual)),
        "actual": len(actual),
    }
