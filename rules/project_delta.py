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

An edit that changes the interface by adding module-level functions nothing can reach (no other
text names them, no root, no decorator, calling nothing of the project: ``added_functions`` and
``named_elsewhere``) keeps the pass too: it is swapped in the same way (the new functions join
``Project.functions``, in no region), and the re-walks are compared without them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any, Literal

from tclint.rules.facts import FileFacts
from tclint.rules.project import Project, assumed_compiled

if TYPE_CHECKING:
    from tclint.rules.config import Settings

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


# -- an edit that adds definitions nothing reaches ---------------------------------------------------
# What the project pass reads of a module-level function is found from other facts by its name
# (calls, imports, re-exports, registries, compile sites, function values) or from its own facts
# (an ``assume-compiled`` pattern or ``# tclint: compiled`` making it a root, decorators, what its
# body calls, writes or stores).  A function whose name no other text holds, that is no root, has
# no decorator and whose body calls nothing but its own nested functions, writes no attribute or
# global and stores nothing, is in no region and moves nothing of the pass: a project built with
# it is the one built without it, its entry in the file's functions aside.  A name is looked for
# as a word in every indexed file's text (comments and strings included: a name built at run time
# from a string is found), so anything that names it -- even where the facts would not -- runs
# the full pass.


def added_functions(old: FileFacts, new: FileFacts, settings: Settings) -> frozenset[str] | None:
    """The qualified names of the functions ``new`` adds to ``old`` when they are module-level
    definitions nothing reaches from their facts (``without_added``) and the rest of ``new``'s
    interface is ``old``'s: None otherwise (no function added, one removed, anything else changed).
    Whether another text names them is ``named_elsewhere``'s question."""
    if old.error is not None or new.error is not None or not old.functions.keys() <= new.functions.keys():
        return None
    added = frozenset(q for q in new.functions if q not in old.functions)
    if not added:
        return None
    bare = without_added(new, added, settings)
    if bare is None or not interface_equal(old, bare):
        return None
    return added


def without_added(ff: FileFacts, added: frozenset[str], settings: Settings) -> FileFacts | None:
    """``ff`` without the functions ``added`` names (module-level ones and the functions nested
    in them), when each is one nothing reaches from the facts: no method, no root (``# tclint:
    compiled``, an ``assume-compiled`` pattern), no decorator, calls of its own nested functions
    only, no attribute or global written, no parameter stored, returned compiled or handed on,
    and a name no other module-level binding of the file has.  None when one is not."""
    tops = {q for q in added if "." not in q}
    patterns = list(getattr(settings, "assume_compiled", ()) or ())
    for qual in added:
        fn = ff.functions.get(qual)
        top = qual.partition(".")[0]
        if fn is None or top not in tops or (qual != top and not qual.startswith(top + ".<locals>.")):
            return None
        if fn.cls is not None or fn.compile_marker or fn.decorators or fn.attr_writes or fn.global_writes:
            return None
        if fn.stores_param is not None or fn.compile_wrapper_param is not None or fn.calls_outer_param:
            return None
        if any(edge.kind != "local" or edge.target not in added for edge in fn.calls):
            return None
        if assumed_compiled(patterns, ff.module, qual) is not None:
            return None
    for top in tops:  # (a def binds its name: the alias of itself)
        if top in ff.classes or ff.aliases.get(top) != f"{ff.module}.{top}" or top in ff.module_vars:
            return None
        if top in ff.int_globals:
            return None
    return replace(
        ff,
        functions={q: fn for q, fn in ff.functions.items() if q not in added},
        aliases={name: ref for name, ref in ff.aliases.items() if name not in tops},
    )


def named_elsewhere(
    ff: FileFacts, text: str | None, added: Iterable[str], others: Iterable[Callable[[], str | bytes | None]]
) -> bool:
    """Does any text but the added definitions themselves hold the name of one of the module-level
    functions ``added`` names: ``text`` (``ff``'s) outside their own lines, or one of ``others``
    (each read when asked; a text that cannot be read is taken to name them)?"""
    tops = sorted({q.partition(".")[0] for q in added})
    if text is None or not tops:
        return True
    words = "|".join(re.escape(t) for t in tops)
    pattern = re.compile(rf"(?<![\w]){words}(?![\w])")
    spans = [(fn.loc.line, fn.loc.end_line) for q, fn in ff.functions.items() if q in tops]
    for m in pattern.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        if not any(start <= line <= end for start, end in spans):
            return True
    raw = re.compile(pattern.pattern.encode("ascii")) if all(t.isascii() for t in tops) else None
    for read in others:
        other = read()
        if other is None:
            return True
        if isinstance(other, bytes):
            if raw is None or raw.search(other):
                return True
        elif pattern.search(other):
            return True
    return False


Rewalk = Callable[[FileFacts, Any, Any], "FileFacts | None"]


def replay_rewalks(
    project: Project, path: str, rewalk: Rewalk, added: frozenset[str] = frozenset()
) -> FileFacts | None | Literal[False]:
    """The last re-walk of ``path`` done again on its new text with the inputs each of its walks
    had in the pass that built ``project`` (its seeds, and the recorded answers about callees'
    return types): the new refined facts, None when ``path`` was not walked again, False when a
    walk asks something new or gives another interface (the pass must be run again) -- but for
    the functions ``added`` names, when the new text adds them (``added_functions``)."""
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
        if new is None:
            return False
        bare = without_added(new, added, project.settings) if added else new
        if bare is None or not interface_equal(result, bare):
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
