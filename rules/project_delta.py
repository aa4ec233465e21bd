"""An edit that leaves a file's interface unchanged: the project pass is not run again.

What other files see of a file -- and what the project pass (``tclint.rules.project``), the type
refinement (``tclint.rules.argflow``) and the cross-file rules read of it -- is every field of its
``FileFacts`` but ``candidates``: its definitions, calls, parameters, returns, class bases and
attributes, compile / disable sites, aliases, module variables, positions included (its line
count excluded: nothing across files reads it).  Candidates
are read across files too, but only by computations that are cheap and per project (frames
dropped by a callee's break, ``fullgraph`` sites that break, the variant analysis): they are kept
in ``Project.memo`` or computed by ``project_diagnostics``, and are recomputed here.

So when an edit changes only a file's candidates (typing inside a function body without adding
a call or changing a line count), the regions, resolutions and refinement rounds of the last
project pass are those a full pass would compute; ``swap_file`` puts the new facts in place of the
old ones in that project and drops the per-project results that read candidates.  A file the
refinement walked again is walked again with the inputs of each of its walks in that pass (the
``argflow`` trace); when every such walk gives facts with the same interface as before, the pass is
still the same, else the caller runs it from scratch.  Positions are part of the interface: an
edit that moves lines is a change (positions are in region chains, labels and related locations).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any, Literal

from tclint.rules.facts import FileFacts
from tclint.rules.project import Project

# the line count is not read across files (nothing in the project pass or the rules reads it):
# appending to a file keeps its interface
INTERFACE_FIELDS = tuple(f.name for f in fields(FileFacts) if f.name not in ("candidates", "line_count"))
# not derived from candidates: the refinement's state, and the training mode of each region
# function (``training_mode.region_mode``: from the regions, classes and `.train()`/`.eval()` call
# edges, all interface; strings only, no facts objects held)
KEPT_MEMO = ("argflow_rewalked", "argflow_trace", "training_modes")


def interface_equal(old: FileFacts, new: FileFacts) -> bool:
    """Do two facts of one file agree on everything but their candidates?"""
    if old is new:
        return True
    return all(getattr(old, name) == getattr(new, name) for name in INTERFACE_FIELDS)


Rewalk = Callable[[FileFacts, Any, Any], "FileFacts | None"]


def replay_rewalks(project: Project, path: str, rewalk: Rewalk) -> FileFacts | None | Literal[False]:
    """The last re-walk of ``path`` done again on its new text with the inputs each of its walks
    had in the pass that built ``project`` (its seeds, and the recorded answers about callees'
    return types): the new refined facts, None when ``path`` was not walked again, False when a
    walk asks something new or gives another interface (the pass must be run again)."""
    trace = project.memo.get("argflow_trace") or {}
    steps = trace.get(path)
    if not steps:
        return None
    last: FileFacts | None = None
    replayed = []
    for before, seeds, answers, result in steps:

        def recorded(ref: str, answers: dict[str, Any] = answers) -> Any:
            if ref not in answers:
                raise _NewQuestion(ref)  # the walk asks what the pass was not asked: run it again
            return answers[ref]

        try:
            new = rewalk(before, seeds, recorded)
        except _NewQuestion:
            return False
        if new is None or not interface_equal(result, new):
            return False
        replayed.append((before, seeds, answers, new))
        last = new
    trace[path] = replayed
    return last


class _NewQuestion(Exception):
    """A replayed walk asked about a reference its recorded walk did not."""


def swap_file(project: Project, new: FileFacts) -> None:
    """Put ``new`` (facts with the interface of the project's facts of its path) in the project in
    place of those, and drop the per-project results derived from candidates."""
    path = new.path
    old = project.files.get(path)
    project.files[path] = new
    if old is not None and old.error is None:
        same = project.by_module.get(old.module)
        if same is not None:
            project.by_module[old.module] = [new if ff is old else ff for ff in same]
    if new.error is None:
        for qual, fn in new.functions.items():
            project.functions[f"{path}::{qual}"] = (new, fn)
        for qual, cls in new.classes.items():
            project.classes[f"{path}::{qual}"] = (new, cls)
        for site in new.compile_sites:
            if site.id in project.sites:
                project.sites[site.id] = (new, site)
    for key in [k for k in project.memo if k not in KEPT_MEMO]:
        del project.memo[key]


def _names(ff: FileFacts) -> tuple[Any, ...]:
    """What name resolution (``Project.resolve``, ``mro``) reads of a file: its module, the
    qualified names it defines, its classes' bases and methods, its aliases."""
    return (
        ff.path,
        ff.module,
        ff.root,
        ff.is_package,
        ff.error is None,
        tuple(ff.functions),
        tuple((q, c.bases, tuple(c.methods.items())) for q, c in ff.classes.items()),
        tuple(ff.aliases.items()),
        ff.star_imports,
        ff.exports,
    )


def share_resolution(old: Project, new: Project) -> bool:
    """Give ``new`` (not built yet) the name-resolution caches of ``old`` when every file defines
    the same names in both (a refinement round re-walks files with other types, most edits change
    no name): resolutions are then the same.  True when shared."""
    if old.files.keys() != new.files.keys():
        return False
    for path, ff in new.files.items():
        before = old.files[path]
        if before is not ff and _names(before) != _names(ff):
            return False
    new._resolve_cache = old._resolve_cache
    new._mro_cache = old._mro_cache
    return True
