"""Edits typed while a warm open's verification runs, answered from the open record (issue 21,
"Speed": an edit in the user's file re-derives only the user's side).

A warm open (``warmopen``) publishes the last session's diagnostics at once, then verifies them
with the full lint on the lint thread; following installed packages that is seconds of building
the project (the library files' facts, the rounds of bound names, the refinement, TC312's
judgements), and an edit sent meanwhile waited for it (3.6 s against 0.22 s without following
on ``bench/lib_scripts/hf_user.py``).  So the record also holds what deriving the document's
diagnostics reads of that project -- its ``rerun.file_context`` (regions, answers, modes,
dropped frames, the cross-file findings in it such as TC312's summary, the refinement's walks
of it), the digest of its facts' interface and of its exports, and the dynamo configuration
(``context_of``) -- and such an edit is derived from it as the command line's re-run derives a
changed file (``derive``): when the edited text's facts have the recorded interface (the
project pass would build the same project and follow the same library files), each walk gives
the interface it gave, and the exports are the recorded ones (the cross-file findings say what
they said), the diagnostics of the file over the stored context are those of the full lint.
Anything else is a miss (None): the full lint answers, as before.

Either way the full lint of the edited version still runs once the verification is done, and
its result replaces the early one only where it differs (``TclintServer._lint``).  ``derive``
runs on a thread of its own (the lint thread is busy with the verification); it touches no state
of the lint thread: a fresh analyzer of the text, the record's plain data, the rule catalog the
warm open loaded, and the thread-local fix check (``fixcheck``).  The one process-wide state both
threads may change is the list of warning filters (the parse's ``warnings.catch_warnings`` is not
thread-safe): at worst a filter ignoring every warning stays, and the server's warnings only ever
go to stderr (``__main__``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tclint.rules.config import Settings
    from tclint.rules.facts import FileFacts
    from tclint.rules.model import Diagnostic
    from tclint.rules.project import Project
    from tclint.server.convert import KnownRanges
    from tclint.server.entries import Entry


@dataclass(frozen=True)
class WarmEdit:
    """What an edit of ``path`` is derived from until the warm open's verification is done."""

    path: str
    settings: Settings
    context: dict[str, Any]  # rerun.file_context of the document in the recorded project
    interface: str  # rerun.interface_digest of the recorded text's facts
    exports: str  # rerun.export_digest of its refined facts
    config: dict[str, Any]  # the project's dynamo configuration
    entries: list[Entry]  # the record's code-lens entries (at the functions' lines: interface)
    targets: list[tuple[int, int, str]]
    ranges: KnownRanges


def context_of(project: Project, facts: FileFacts, cross: list[Diagnostic], settings: Settings) -> Any:
    """The plain part of the record an edit is derived from (see the module doc): [context,
    interface digest, exports digest, dynamo configuration] of ``facts`` (the open buffer's facts
    the project was built with), or None when it cannot be told exactly (the refinement walked
    the file again but left no trace of it)."""
    from tclint.rules import rerun
    from tclint.rules.argflow import REWALKED
    from tclint.rules.plaindata import encode_any

    path = facts.path
    held = project.files.get(path)
    if held is None:
        return None
    ctx = rerun.file_context(project, held, settings, cross)
    if path in project.memo.get(REWALKED, ()) and not ctx["walks"]:
        return None
    exports = rerun.export_digest(held, rerun._ProjectView(path, ctx, project.dynamo_config), settings)
    return [ctx, rerun.interface_digest(facts), exports, encode_any(dict(project.dynamo_config))]


def from_record(
    plain: Any,
    path: str,
    settings: Settings,
    entries: list[Entry],
    targets: list[tuple[int, int, str]],
    ranges: KnownRanges,
) -> WarmEdit | None:
    """The record's edit part (``context_of``) as a ``WarmEdit``; None when it has none or it is
    not of that shape."""
    from tclint.rules.plaindata import decode_any

    if not isinstance(plain, (list, tuple)) or len(plain) != 4:
        return None
    ctx, interface, exports, config = plain
    keys = {"regions", "answers", "modes", "drops", "cross", "walks"}
    if not isinstance(ctx, dict) or not keys <= ctx.keys() or not isinstance(interface, str):
        return None
    if not isinstance(exports, str):
        return None
    config = decode_any(config)
    if not isinstance(config, dict):
        return None
    return WarmEdit(path, settings, ctx, interface, exports, config, entries, targets, ranges)


@dataclass(frozen=True)
class Derived:
    """An edit's answer: its diagnostics, and the record's code-lens entries and probe targets at
    the edited text's lines."""

    diagnostics: list[Diagnostic]
    entries: list[Entry]
    targets: list[tuple[int, int, str]]


def derive(edit: WarmEdit, text: str) -> Derived | None:
    """The answer for ``edit.path`` holding ``text``, derived from the record's context when the
    text keeps the recorded interface, walks and exports (see the module doc); None: a miss (the
    text does not parse, says something new to other files, moves lines, or asks the context what
    it does not hold)."""
    from tclint.rules import rerun
    from tclint.rules.discovery import module_for
    from tclint.rules.engine import diagnose_file
    from tclint.rules.plaindata import decode_any
    from tclint.rules.source import SourceText
    from tclint.server import fixcheck
    from tclint.server.incremental import IncrementalAnalyzer

    path, settings, ctx = edit.path, edit.settings, edit.context
    module, is_package, import_root = module_for(path)
    predicates = settings.compiling_predicates
    outcome = IncrementalAnalyzer(path, module, is_package, import_root, predicates).analyze(text)
    facts, snapshot = outcome.facts, outcome.snapshot
    if facts.error is not None or snapshot is None or rerun.interface_digest(facts) != edit.interface:
        return None
    src = SourceText(path, text)
    try:
        refined = _walked(facts, ctx, src, predicates)
        if refined is None:
            return None
        view = rerun._ProjectView(path, ctx, edit.config)
        if rerun.export_digest(refined, view, settings) != edit.exports:
            return None
        fixcheck.register(snapshot.text, snapshot.lines, [(c.start, c.end) for c in snapshot.chunks])
        cross = {path: decode_any(ctx["cross"])}
        diagnostics = diagnose_file(refined, view, cross, settings, src)  # type: ignore[arg-type]
    except rerun.ContextMiss:
        return None
    finally:
        fixcheck.clear()
    # the interface holds the functions' and compile sites' positions: the lenses stay where they were
    return Derived(diagnostics, list(edit.entries), list(edit.targets))


def _walked(facts: FileFacts, ctx: dict[str, Any], src: Any, predicates: Any) -> FileFacts | None:
    """``facts`` as the refinement left them: each recorded walk of the file done again with its
    seeds and answers (``rerun._replay``, here with no cache), each giving the interface it gave;
    the last walk's result (none: ``facts``).  None when one gives another interface."""
    from tclint.rules import rerun
    from tclint.rules.engine import analyze_source
    from tclint.rules.plaindata import decode_any

    refined = facts
    for seeds_plain, answers_plain, interface in ctx["walks"]:
        seeds, answers = decode_any(seeds_plain), decode_any(answers_plain)

        def recorded(ref: str, answers: dict[str, Any] = answers) -> Any:
            if ref not in answers:
                raise rerun.ContextMiss(f"a walk asks about {ref}")
            return answers[ref]

        refined = analyze_source(src, facts.module, facts.is_package, facts.root, predicates, seeds, recorded)
        if rerun.interface_digest(refined) != interface:
            return None
    return refined
