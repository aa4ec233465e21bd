"""Compiled entry points and region functions of one file: what code lenses and hovers show.

Computed on the lint thread from the project (so it is as cross-file as the diagnostics) and
handed to the event loop as plain immutable records.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from tclint.rules.facts import FileFacts, FunctionFacts
from tclint.rules.model import Span
from tclint.rules.project import Project, span_of
from tclint.rules.variants import variants

MAX_LISTED = 25


@dataclass(frozen=True, slots=True)
class Entry:
    kind: str  # "site": a torch.compile call/decorator; "function": a function in a compiled region
    span: Span  # what the hover covers (the call, decorator or function name)
    line: int  # 1-based line where the code lens goes
    qualname: str | None  # the function (kind "function") or the function holding the site
    markdown: str  # hover text
    root: bool = False  # a function compiled directly (not only reached through calls)
    module_level: bool = False  # a site outside any function (probe the file as a program)
    variants: str | None = None  # a compile site: its predicted variant set (``rules.variants``)


def _display(key: str, project: Project, here: str) -> str:
    ff, fn = project.functions[key]
    qual = fn.qualname.replace(".<locals>.", ".")
    where = os.path.basename(ff.path) if ff.path != here else ""
    return f"`{qual}` ({where + ':' if where else 'line '}{fn.name_loc.line})"


def compute(path: str, facts: FileFacts, project: Project) -> list[Entry]:
    """The compile sites of ``facts`` and its functions in compiled regions, with what their code
    lenses and hovers say."""
    out: list[Entry] = []
    by_site: dict[int, list[str]] = {}
    for key, reached_region in project.regions.items():
        if reached_region.site is not None:
            by_site.setdefault(id(reached_region.site), []).append(key)
    predicted = variants(project)
    for site in facts.compile_sites:
        summary = _variant_summary(site, project, predicted)
        text = _compiles(site, project, path, by_site) + (f"\n\n**Variants:** {summary}" if summary else "")
        out.append(
            Entry(
                "site",
                span_of(site.loc),
                site.loc.line,
                site.func,
                text,
                module_level=site.func is None and site.how != "decorator",
                variants=summary,
            )
        )
    for qual, fn in facts.functions.items():
        if fn.name == "<lambda>":
            continue
        region = project.regions.get(f"{path}::{qual}")
        if region is None:
            continue
        text = f"**Compiled** — {project.chain_text(region)}"
        if region.depth == 0 and region.site is not None and project.site_targets.get(region.site.id):
            text += "\n\n" + _compiles(
                region.site, project, path, by_site
            )  # an entry point: what compiling it brings in
        if region.multiplier:
            text += f" (runs in {region.multiplier})"
        if region.fullgraph:
            text += "\n\n`fullgraph=True`: any graph break here is an error."
        out.append(Entry("function", span_of(fn.name_loc), fn.loc.line, qual, text, root=region.depth == 0))
    return out


def _compiles(site: Any, project: Project, path: str, by_site: dict[int, list[str]]) -> str:
    """What a compile site compiles: its targets, the functions its calls bring in, its options."""
    targets = project.site_targets.get(site.id, [])
    reached = sorted(by_site.get(id(site), []), key=lambda k: (project.regions[k].depth, k))
    if not targets:
        return f"**{site.text}** — tclint cannot tell what this compiles (the target is not a function or module it can resolve)."
    names = ", ".join(_display(k, project, path) for k in targets[:MAX_LISTED])
    text = f"**{site.text}** compiles {names}"
    others = [k for k in reached if k not in targets]
    if others:
        listed = "\n".join(f"- {_display(k, project, path)}" for k in others[:MAX_LISTED])
        more = f"\n- … and {len(others) - MAX_LISTED} more" if len(others) > MAX_LISTED else ""
        text += f", and through the calls it makes ({len(others)} more functions, traced into the same graph unless they break):\n{listed}{more}"
    if site.options:
        opts = ", ".join(f"{k}={v!r}" for k, v in site.options.items())
        text += f"\n\nOptions: {opts}"
    return text


def _variant_summary(site: Any, project: Project, predicted: dict[str, Any]) -> str | None:
    found = [predicted[k] for k in project.site_targets.get(site.id, []) if k in predicted]
    if not found:
        return None
    if len(found) == 1:
        return found[0].summary()
    return "; ".join(f"{v.qualname}: {v.summary()}" for v in found[:4])


def enclosing_function(facts: FileFacts, line: int) -> FunctionFacts | None:
    """The innermost non-lambda function whose body holds 1-based ``line``."""
    best = None
    for fn in facts.functions.values():
        if fn.name == "<lambda>":
            continue
        start = fn.loc.line
        if start <= line <= fn.loc.end_line and (best is None or start >= best.loc.line):
            best = fn
    return best


def probe_target(facts: FileFacts, line: int) -> str | None:
    """The probe's target for a position: the function (or method, or class) that holds it,
    as ``Qualname`` the probe can import; None at module level (probe the file as a program).
    A nested function is probed through the top-level function or method that defines it."""
    fn = enclosing_function(facts, line)
    if fn is not None:
        return fn.qualname.split(".<locals>.")[0]
    best = None
    for qual, cls in facts.classes.items():
        if cls.loc.line <= line <= cls.loc.end_line and "<locals>" not in qual:
            if best is None or cls.loc.line >= facts.classes[best].loc.line:
                best = qual
    return best


def targets(facts: FileFacts) -> list[tuple[int, int, str]]:
    """(first line, last line, probe target) of every function and class the probe can run."""
    out = []
    for fn in facts.functions.values():
        if fn.name != "<lambda>":
            out.append((fn.loc.line, fn.loc.end_line, fn.qualname.split(".<locals>.")[0]))
    for qual, cls in facts.classes.items():
        if "<locals>" not in qual:
            out.append((cls.loc.line, cls.loc.end_line, qual))
    return out
