"""discover -> read & parse once -> facts per file -> project regions -> diagnostics.

The engine is the one place that knows the whole pipeline; the CLI, the language server and the
probe merge all call it.  Files that cannot be read or parsed become one diagnostic each (TC000 /
TC011) and the run goes on.  Per-file analysis is a pure function of the file's bytes (plus the
few settings that change it), so its result is cached by content hash and computed in worker
processes for large trees.
"""

from __future__ import annotations

import ast
import functools
import gc
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tclint.rules.config import ConfigResolver, Settings, project_root
from tclint.rules.discovery import discover, module_for
from tclint.rules.reading import read_source
from tclint.rules.ruletypes import Family
from tclint.rules.source import SourceText

if TYPE_CHECKING:
    from tclint.rules.analysis import RuleSet
    from tclint.rules.facts import Candidate, FileFacts
    from tclint.rules.model import Diagnostic, Fix, Severity
    from tclint.rules.project import Project, Region

# Everything past reading the files is imported where it is used (facts, model, registry, rules,
# suppressions, analysis, project): a warm run answered from the whole-run cache needs none of it,
# and together they cost more than the rest of that run (``tests/rules/test_startup_imports.py``).
# ``apply_suppressions``, ``rule_doc_url``, ``CONFIDENCE_NAMES`` and ``MIN_CONFIDENCE`` stay
# importable from here (``__getattr__`` below).
_LAZY = {
    "apply_suppressions": ("tclint.rules.suppress", "apply_suppressions"),
    "rule_doc_url": ("tclint.rules.model", "rule_doc_url"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    if name == "CONFIDENCE_NAMES":
        return confidence_names()
    if name == "MIN_CONFIDENCE":
        return min_confidence()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def confidence_names() -> dict[int, Any]:
    """``types.HIGH``/``MEDIUM``/``LOW`` -> ``model.Confidence``."""
    from tclint.rules import types as T
    from tclint.rules.model import Confidence

    return {T.HIGH: Confidence.HIGH, T.MEDIUM: Confidence.MEDIUM, T.LOW: Confidence.LOW}


@functools.cache
def min_confidence() -> dict[str, int]:
    """The ``min-confidence`` setting's values -> ``types.HIGH``/``MEDIUM``/``LOW``."""
    from tclint.rules import types as T

    return {"high": T.HIGH, "medium": T.MEDIUM, "low": T.LOW}


@dataclass
class LintResult:
    diagnostics: list[Diagnostic]
    files: list[str]
    sources: dict[str, SourceText] = field(default_factory=dict)
    project: Project | None = None
    settings: dict[str, Settings] = field(default_factory=dict)
    run_key: str | None = None  # the whole-run cache key (None: not cached)
    output: tuple[str, int] | None = None  # a report printed before, from ``Linter.output_lookup``


_RULESET: RuleSet | None = None


def ruleset() -> RuleSet:
    global _RULESET
    if _RULESET is None:
        from tclint.rules import registry
        from tclint.rules.analysis import RuleSet

        _RULESET = RuleSet(rule() for rule in registry.all_rules())
    return _RULESET


def analyze_source(
    src: SourceText,
    module: str,
    is_package: bool,
    root: str,
    compiling_predicates: Iterable[str] = (),
    seeds: Any = None,
    returns_of: Any = None,
) -> FileFacts:
    """Parse and walk one file: its facts and candidates, or a TC000/TC011 record.  ``seeds`` /
    ``returns_of``: types learnt by the project pass (``tclint.rules.argflow``); without them the
    result is a pure function of the file's bytes (what the cache stores)."""
    from tclint.rules import model
    from tclint.rules.facts import FileFacts, Loc
    from tclint.rules.source import LineIndex

    facts = FileFacts(path=src.path, module=module, is_package=is_package, root=root)
    if src.text is None:
        facts.error = src.error or "cannot read file"
        facts.error_code = model.UNREADABLE_FILE
        facts.error_loc = Loc(1, 0, 1, 0)
        return facts
    text = src.text
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings of the *linted* code are not ours
            tree = ast.parse(text, filename=src.path)
    except SyntaxError as exc:
        index = LineIndex(text)
        line = max(1, min(exc.lineno or 1, index.line_count))
        col = max(0, min((exc.offset or 1) - 1, len(index.line(line))))
        facts.error = f"SyntaxError: {exc.msg}"
        facts.error_code = model.PARSE_ERROR
        facts.error_loc = Loc(line, col, line, col)
        facts.line_count = index.line_count
        return facts
    except (ValueError, MemoryError, RecursionError, OverflowError) as exc:
        facts.error = f"cannot parse file: {type(exc).__name__}: {exc}".rstrip(": ")
        facts.error_code = model.PARSE_ERROR
        facts.error_loc = Loc(1, 0, 1, 0)
        return facts
    from tclint.rules.analysis import Analyzer

    analyzer = Analyzer(
        text, src.path, module, is_package, root, ruleset(), compiling_predicates, seeds, returns_of
    )
    try:
        return analyzer.run(tree)
    except RecursionError:
        facts.error = "file is nested too deeply to analyse (recursion limit)"
        facts.error_code = model.UNREADABLE_FILE
        facts.error_loc = Loc(1, 0, 1, 0)
        return facts
    except Exception as exc:  # one file's internal error must not stop the run
        import traceback

        where = traceback.extract_tb(exc.__traceback__)[-1]
        facts.error = (
            f"internal error while analysing this file ({type(exc).__name__}: {exc} at "
            f"{os.path.basename(where.filename)}:{where.lineno}); please report it"
        )
        facts.error_code = model.UNREADABLE_FILE
        facts.error_loc = Loc(1, 0, 1, 0)
        return facts


# ---------------------------------------------------------------------------------------------
# turning candidates into diagnostics


@dataclass
class FinalizeEnv:
    """What ``Rule.finalize`` may look at: the project's settings and the candidate's region."""

    settings: Settings
    dynamo: dict[str, Any]
    region: Region | None
    project: Project
    facts: FileFacts

    def flag(self, name: str, default: Any = None) -> Any:
        """A torch._dynamo.config value: [tool.tclint.dynamo] wins over assignments in the code."""
        if name in self.dynamo:
            return self.dynamo[name]
        found = self.project.dynamo_config.get(name)
        if found is not None and found[0] != "<expr>":
            return found[0]
        return default


def _dynamo_settings(settings: Settings) -> dict[str, Any]:
    return dict(settings.dynamo)


FixChooser = Callable[[Any, "str | None"], "Fix | tuple[Fix, ...] | None"]


def choose_fixes(fix: Any, text: str | None) -> tuple[Fix, ...]:
    """The fixes a reported finding offers, preferred first, among the alternatives its rule
    built (a ``Fix``, or a tuple of them in the rule's order of preference): what the installed
    chooser keeps (``set_fix_chooser``), by default ``offered_fixes``."""
    chosen = _fix_chooser(fix, text)
    if chosen is None:
        return ()
    return chosen if isinstance(chosen, tuple) else (chosen,)


def choose_fix(fix: Any, text: str | None) -> Fix | None:
    """The preferred fix of ``choose_fixes`` (None when none is offered)."""
    fixes = choose_fixes(fix, text)
    return fixes[0] if fixes else None


def set_fix_chooser(chooser: FixChooser | None) -> None:
    """Install how fixes are chosen in this process (None: the default, ``offered_fixes``).
    The language server installs ``tclint.server.fixcheck.choose_fix``, which checks each
    alternative by parsing only the top-level statement it edits, for the texts it registers."""
    global _fix_chooser
    _fix_chooser = offered_fixes if chooser is None else chooser


def offered_fixes(fix: Any, text: str | None) -> tuple[Fix, ...]:
    """Every alternative as the rule built it: each is made of the source's own segments (or is
    a codemod, whose output libcst parses when it is computed), so the plain check re-parses
    nothing per finding; the fuzz suite checks that every one of them leaves the file parseable."""
    if fix is None:
        return ()
    return fix if isinstance(fix, tuple) else (fix,)


_fix_chooser: FixChooser = offered_fixes


def candidate_to_diagnostic(
    cand: Candidate,
    ff: FileFacts,
    project: Project,
    settings: Settings,
    rule: Any,
    region: Region | None,
    text: str | None = None,
) -> Diagnostic | None:
    from tclint.rules.model import Confidence, Diagnostic, gb_url, rule_doc_url
    from tclint.rules.project import span_of

    env = FinalizeEnv(settings, _dynamo_settings(settings), region, project, ff)
    final = rule.finalize(cand, env)
    if final is None:
        return None
    message = final.message
    severity, heat, frame_drop = severity_and_heat(final, rule, region)
    if heat:
        message = f"{message} ({'; '.join(heat)})"
    severity = settings.severity_for(rule.code, severity)
    gb_ids = final.gb_ids or rule.gb_ids
    related: tuple = ()
    if region is not None:
        related = project.chain_related(region)
    extra: dict[str, Any] = {"func": final.func}
    if region is not None:
        extra["region"] = project.chain_text(region)
    if frame_drop:
        extra["frame_drop"] = True
    if final.mode is not None:
        extra["mode"] = final.mode  # it only runs (and drops its frame) in that training mode
    fixes = choose_fixes(final.fix, text)
    if frame_drop and final.loop_line is not None and final.user_ctx is None and region is not None:
        from tclint.rules.fixes import extract_loop_body_fix

        fixes = (*fixes, extract_loop_body_fix(final.loop_line))  # the last resort, after the rule's own
    return Diagnostic(
        code=rule.code,
        name=rule.name,
        message=message,
        path=ff.path,
        span=span_of(final.loc),
        severity=severity,
        confidence=confidence_names().get(_capped(final.confidence, region), Confidence.MEDIUM),
        gb_ids=tuple(gb_ids),
        fix=fixes[0] if fixes else None,
        alternatives=fixes[1:],
        related=related,
        noqa_line=final.loc.line,
        url=gb_url(gb_ids[0]) if gb_ids else rule_doc_url(rule.code),
        help=final.help,
        extra=extra,
    )


def _capped(confidence: int, region: Region | None) -> int:
    """``confidence`` no higher than its region allows: a region reached only by a call on a base
    class whose method is abstract (``Project.subclass_dispatch``) may not be the one that runs."""
    cap = region.dispatch_cap if region is not None else None
    return confidence if cap is None else max(confidence, cap)


def severity_and_heat(final: Candidate, rule: Any, region: Region | None) -> tuple[Severity, list[str], bool]:
    """How loud a finding is, decided in this one place: (severity before the user's per-code
    settings, the heat notes for its message, whether Dynamo gives up on its whole frame).

    A graph break inside a loop body or a user context manager, or in a function called from a
    loop, makes its frame run eagerly (error); a cold path makes it info; a ``WHOLE_FRAME`` break is
    an error wherever it is; the rule's own ``severity`` for the finding comes next, and low
    confidence caps the result at info."""
    from tclint.rules import types as T
    from tclint.rules.facts import FrameEffect
    from tclint.rules.model import Severity
    from tclint.rules.rule import hot_note

    severity = rule.default_severity
    heat: list[str] = []
    breaks = rule.family is Family.GRAPH_BREAK
    if breaks and region is not None:
        fn_name = final.func.rsplit(".", 1)[-1] if final.func else "the function"
        if final.user_ctx is not None:
            heat.append(
                f"inside the user context manager at line {final.user_ctx}: Dynamo gives up on all of `{fn_name}`, which runs eagerly"
            )
            severity = Severity.ERROR
        elif final.loop_line is not None:
            heat.append(
                f"inside the loop at line {final.loop_line}: Dynamo cannot resume in a loop body, so all of `{fn_name}` runs eagerly"
            )
            severity = Severity.ERROR
        elif region.loop_caller is not None:
            caller, _path, line, *how = region.loop_caller
            if how == ["property"]:
                heat.append(
                    f"read as a property in {caller} (line {line}): Dynamo cannot resume inside an attribute read, so that whole frame runs eagerly"
                )
            else:
                heat.append(f"called from a loop in {caller} (line {line}): that whole frame runs eagerly")
            severity = Severity.ERROR
        note = hot_note(region)
        if note is not None:
            heat.append(note)
        if final.cold and severity != Severity.ERROR:
            heat.append(final.cold)
            severity = Severity.INFO
    whole_frame = final.frame is FrameEffect.WHOLE_FRAME
    if whole_frame and breaks:
        severity = Severity.ERROR
    if final.severity is not None:
        severity = final.severity
    if final.confidence >= T.LOW:
        severity = Severity.INFO if severity.rank < Severity.INFO.rank else severity
    frame_drop = breaks and (final.loop_line is not None or whole_frame or final.user_ctx is not None)
    return severity, heat, frame_drop


def _requirements_met(cand: Candidate, ff: FileFacts, project: Project) -> tuple[bool, int]:
    """Whether the project facts a candidate needs hold, and its confidence then."""
    from tclint.rules import types as T
    from tclint.rules.facts import Need

    conf = cand.confidence
    for req in cand.requires:
        if req.need is Need.RETURNS_TENSOR:
            ty = project.deferred_type(req.ref, ff)
            if ty.kind != T.TENSOR:
                return False, conf
            conf = ty.conf  # the callee's own return type decides
        elif req.need is Need.NOT_COMPILING_PREDICATE:
            if project.is_compiling_predicate(req.ref, ff):
                return False, conf
    return True, conf


def file_diagnostics(
    ff: FileFacts, project: Project, settings: Settings, text: str | None = None
) -> list[Diagnostic]:
    """Every diagnostic for one file before selection and suppression."""
    from tclint.rules import model, registry
    from tclint.rules.facts import Candidate, Loc
    from tclint.rules.model import Diagnostic, Severity, rule_doc_url
    from tclint.rules.project import span_of

    out: list[Diagnostic] = []
    if ff.error is not None:
        rule = registry.get(ff.error_code or model.PARSE_ERROR)
        loc = ff.error_loc or Loc(1, 0, 1, 0)
        out.append(
            Diagnostic(
                code=ff.error_code or model.PARSE_ERROR,
                name=rule.name if rule else "parse-error",
                message=ff.error,
                path=ff.path,
                span=span_of(loc),
                severity=Severity.ERROR,
                noqa_line=None,
                url=rule_doc_url(ff.error_code or model.PARSE_ERROR),
            )
        )
        return out
    rules = registry.by_code()
    for cand in ff.candidates:
        rule_cls = rules.get(cand.code)
        if rule_cls is None:
            continue
        rule = _rule_instance(rule_cls)
        region = project.region_of(ff.path, cand.func)
        if rule.region_only and region is None:
            continue
        ok, conf = _requirements_met(cand, ff, project)
        if not ok:
            continue
        if conf != cand.confidence:
            cand = Candidate(**{**_cand_dict(cand), "confidence": conf})
        try:
            diag = candidate_to_diagnostic(cand, ff, project, settings, rule, region, text)
        except Exception as exc:
            print(
                f"tclint: internal error in {rule.code} at {ff.path}:{cand.loc.line} ({type(exc).__name__}: {exc}); please report it",
                file=sys.stderr,
            )
            continue
        if diag is not None:
            out.append(diag)
    drops = caller_drops(project, settings)
    prefix = ff.path + "::"
    own = {key[len(prefix) :]: line for key, line in drops.items() if key.startswith(prefix)}
    return shadow_after_frame_drops(out, own, lambda func: _region_mode(project, ff.path, func))


def _region_mode(project: Project, path: str, func: str) -> str | None:
    from tclint.rules.training_mode import region_mode

    return region_mode(project, f"{path}::{func}")


SHADOWED_FAMILIES = (
    Family.GRAPH_BREAK,
    Family.RECOMPILE,
)  # a frame that runs eagerly neither breaks nor guards


def caller_drops(project: Project, settings: Settings) -> dict[str, int]:
    """Frames dropped by a break in a callee: function key -> the line of the loop call.

    A graph break in a function inlined from a loop body (``for blk in self.blocks: x = blk(x)``)
    cannot resume in that loop, so Dynamo gives up on the calling frame, which then runs eagerly
    (its callees are compiled as frames of their own, and break there).  A frame dropped that way
    drops the loop caller it is called from in turn.  Computed once per project, from the
    callees' candidates that would be reported at medium confidence or more."""
    from tclint.rules import registry

    cached = project.memo.get("caller_drops")
    if cached is not None:
        return cached
    drops: dict[str, int] = {}
    rules = registry.by_code()
    for key, region in project.regions.items():
        if region.loop_key is None or region.loop_caller is None:
            continue
        ff, fn = project.functions[key]
        if not _breaks_at_medium(ff, fn.qualname, project, settings, rules, region):
            continue
        caller, line, seen = region.loop_key, region.loop_caller[2], set()
        while caller is not None and caller not in seen:
            seen.add(caller)
            if line < drops.get(caller, line + 1):
                drops[caller] = line
            up = project.regions.get(caller)
            if up is None or up.loop_key is None or up.loop_caller is None:
                break
            caller, line = up.loop_key, up.loop_caller[2]
    project.memo["caller_drops"] = drops
    return drops


def _breaks_at_medium(
    ff: FileFacts, qualname: str, project: Project, settings: Settings, rules: dict[str, Any], region: Region
) -> bool:
    return next(_medium_breaks(ff, qualname, project, settings, rules, region), None) is not None


def first_frame_drop(
    ff: FileFacts, qualname: str, project: Project, settings: Settings, rules: dict[str, Any], region: Region
) -> int | None:
    """The line of the first break in ``qualname``'s own body that makes Dynamo give up on its frame
    (a break in a loop body, in a user context manager, a whole-frame break), reported at medium
    confidence or more in the region's mode; None when there is none."""
    lines = [
        d.line
        for d in _medium_breaks(ff, qualname, project, settings, rules, region)
        if d.extra.get("frame_drop")
    ]
    return min(lines) if lines else None


def first_break(
    ff: FileFacts, qualname: str, project: Project, settings: Settings, rules: dict[str, Any], region: Region
) -> int | None:
    """The line of the first graph break of ``qualname``'s own body reported at medium confidence
    or more (None: none).  A frame drop at or before it leaves no graph of the function at all, so
    it guards none of its arguments (the truth table's loop rows: 0 graphs)."""
    lines = [d.line for d in _medium_breaks(ff, qualname, project, settings, rules, region)]
    return min(lines) if lines else None


def _medium_breaks(
    ff: FileFacts, qualname: str, project: Project, settings: Settings, rules: dict[str, Any], region: Region
) -> Iterator[Diagnostic]:
    """The graph breaks of ``qualname``'s own candidates that would be reported at medium
    confidence or more (requirements met, in the mode the region runs in)."""
    from tclint.rules import types as T
    from tclint.rules.facts import Candidate
    from tclint.rules.model import Confidence

    for cand in ff.candidates:
        if cand.func != qualname or cand.confidence > T.MEDIUM:
            continue
        rule_cls = rules.get(cand.code)
        if rule_cls is None or rule_cls.family is not Family.GRAPH_BREAK:
            continue
        ok, conf = _requirements_met(cand, ff, project)
        if not ok or conf > T.MEDIUM:
            continue
        rule = _rule_instance(rule_cls)
        if conf != cand.confidence:
            cand = Candidate(**{**_cand_dict(cand), "confidence": conf})
        try:
            diag = candidate_to_diagnostic(cand, ff, project, settings, rule, region)
        except Exception:  # reported where the file's own diagnostics are made
            continue
        if diag is None or diag.confidence not in (Confidence.HIGH, Confidence.MEDIUM):
            continue
        if cand.mode is not None and _region_mode(project, ff.path, qualname) not in (cand.mode, "any"):
            continue  # behind `if self.training` in the other mode (or one not known): drops no caller for sure
        yield diag


def shadow_after_frame_drops(
    diags: list[Diagnostic],
    caller_drops: dict[str, int] | None = None,
    mode_of: Callable[[str], str | None] | None = None,
) -> list[Diagnostic]:
    """After a break that makes Dynamo give up on a function (a break in a loop body, in a user
    context manager, an observed exception, or in a callee called from a loop of this function:
    ``caller_drops``, qualname -> line of that call), nothing later in that function is traced:
    its other hazards only show up once the first is fixed, and it installs no guards.  They stay
    reported, at low confidence and with a note (hidden by the default `min-confidence =
    "medium"`), so the default output matches what Dynamo really reports.

    A break that runs only in one training mode (``if self.training and ...:``, its
    ``extra["mode"]``) drops the frame only in that mode: ``mode_of(func)`` is the mode the
    function's region runs in ("train" / "eval", None: not known, "any": not a compiled module's
    method, as before).  In the other mode the break itself is never traced (low confidence, a
    note) and drops nothing (the later hazards are reported as they are); where the mode is not
    known they are reported at medium confidence at most, with a note, rather than hidden."""
    from tclint.rules import registry
    from tclint.rules.model import Confidence, Severity

    if mode_of is not None:
        diags = [_untraced_in_mode(d, mode_of) for d in diags]
    first_drop, maybe_drop = _first_drops(diags, caller_drops, mode_of)
    if not first_drop and not maybe_drop:
        return diags
    out = []
    for d in diags:
        func = d.extra.get("func")
        rule = registry.get(d.code)
        drop_line = first_drop.get(func) if func is not None else None
        maybe = maybe_drop.get(func) if func is not None else None
        if maybe is not None and drop_line is not None and maybe[0] >= drop_line:
            maybe = None
        if (
            maybe is not None
            and d.line > maybe[0]
            and (drop_line is None or d.line <= drop_line)
            and rule is not None
            and rule.family in SHADOWED_FAMILIES
        ):
            what = "break" if rule.family is Family.GRAPH_BREAK else "hazard"
            lowered = {Confidence.HIGH: Confidence.MEDIUM}.get(d.confidence, d.confidence)
            d = d.with_(
                confidence=lowered,
                message=f"{d.message} [maybe shadowed: in {maybe[1]} mode Dynamo gives up on this function at line {maybe[0]}, "
                f"so this {what} only shows in the other mode; tclint cannot tell which mode the module runs in]",
            )
        elif (
            drop_line is not None
            and d.line > drop_line
            and rule is not None
            and rule.family in SHADOWED_FAMILIES
        ):
            d = d.with_(
                confidence=Confidence.LOW,
                severity=Severity.INFO,
                message=f"{d.message} [shadowed: Dynamo already gives up on this function at line {drop_line}; this {'break' if rule.family is Family.GRAPH_BREAK else 'hazard'} shows once that one is fixed]",
            )
        out.append(d)
    return out


def _first_drops(
    diags: list[Diagnostic],
    caller_drops: dict[str, int] | None,
    mode_of: Callable[[str], str | None] | None,
) -> tuple[dict[str, int], dict[str, tuple[int, str]]]:
    """(qualname -> line of the first break that drops its frame, qualname -> (line, mode) of
    the first one that drops it only in a training mode the region may or may not run in)."""
    from tclint.rules import registry

    first_drop: dict[str, int] = dict(caller_drops or {})
    maybe_drop: dict[str, tuple[int, str]] = {}
    for d in diags:
        func = d.extra.get("func")
        if func is None or not d.extra.get("frame_drop"):
            continue
        rule = registry.get(d.code)
        if rule is None or rule.family is not Family.GRAPH_BREAK:
            continue
        needs = d.extra.get("mode")
        if d.extra.get("untraced"):
            continue  # never runs in the region's mode: drops nothing
        if needs is not None and mode_of is not None:
            runs_in = mode_of(func)
            if runs_in is None:
                if func not in maybe_drop or d.line < maybe_drop[func][0]:
                    maybe_drop[func] = (d.line, needs)
                continue
            if runs_in not in (needs, "any"):
                continue  # never runs in the region's mode: drops nothing
        if func not in first_drop or d.line < first_drop[func]:
            first_drop[func] = d.line
    return first_drop, maybe_drop


def _untraced_in_mode(d: Diagnostic, mode_of: Callable[[str], str | None]) -> Diagnostic:
    """A finding behind ``if self.training`` (``extra["mode"]``) in a function whose region is
    known to run in the other mode is never traced: low confidence, with a note."""
    from tclint.rules.model import Confidence, Severity

    needs, func = d.extra.get("mode"), d.extra.get("func")
    if needs is None or func is None:
        return d
    runs_in = mode_of(func)
    if runs_in in (None, "any", needs):
        return d
    return d.with_(
        confidence=Confidence.LOW,
        severity=Severity.INFO,
        message=f"{d.message} [not traced: this code only runs in {needs} mode, and the compiled module runs in {runs_in} mode]",
        extra={**d.extra, "untraced": True},
    )


def _cand_dict(cand: Candidate) -> dict[str, Any]:
    return {name: getattr(cand, name) for name in cand.__slots__}  # type: ignore[attr-defined]


_INSTANCES: dict[type, Any] = {}


def _rule_instance(cls: type) -> Any:
    inst = _INSTANCES.get(cls)
    if inst is None:
        inst = _INSTANCES[cls] = cls()
    return inst


def project_diagnostics(project: Project) -> dict[str, list[Diagnostic]]:
    """Diagnostics from cross-file rules (call sites, disabled callees, fullgraph...).  A rule
    that fails is reported on stderr and skipped: it must not take the other rules down."""
    from tclint.rules import registry

    out: dict[str, list[Diagnostic]] = {}
    for rule_cls in registry.all_rules():
        rule = _rule_instance(rule_cls)
        try:
            found = list(rule.project_check(project))
        except Exception as exc:
            print(
                f"tclint: internal error in {rule_cls.code} ({type(exc).__name__}: {exc}); please report it",
                file=sys.stderr,
            )
            continue
        for diag in found:
            out.setdefault(diag.path, []).append(diag)
    return out


def select(diags: list[Diagnostic], settings: Settings, path: str) -> list[Diagnostic]:
    from tclint.rules import model, registry
    from tclint.rules import types as T

    enabled = registry.enabled_codes(
        settings.select,
        settings.extend_select,
        settings.ignore,
        settings.preview,
        settings.target_torch_version,
    )
    ignored_here = per_file_ignored(path, settings)
    min_conf = min_confidence().get(settings.min_confidence, T.MEDIUM)
    out = []
    for d in diags:
        if d.code not in enabled and not d.code.startswith(model.FILE_ERRORS):
            continue
        if any(registry.matches(sel, d.code) for sel in ignored_here):
            continue
        if {"high": 0, "medium": 1, "low": 2}[d.confidence.value] > min_conf:
            continue
        out.append(d)
    return out


def per_file_ignored(path: str, settings: Settings) -> list[str]:
    import fnmatch

    if not settings.per_file_ignores:
        return []
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, settings.root).replace(os.sep, "/") if settings.root else path
    name = os.path.basename(path)
    out = []
    for pattern, codes in settings.per_file_ignores.items():
        negate = pattern.startswith("!")
        pat = pattern[1:] if negate else pattern
        hit = (
            fnmatch.fnmatchcase(rel, pat)
            or fnmatch.fnmatchcase(name, pat)
            or fnmatch.fnmatchcase(rel, pat.rstrip("/") + "/*")
        )
        if hit != negate:
            out.extend(codes)
    return out


def diagnose_file(
    ff: FileFacts, project: Project, cross: dict[str, list[Diagnostic]], settings: Settings, src: SourceText
) -> list[Diagnostic]:
    """One reported file's diagnostics in its project, as ``tclint check`` and the language
    server report them: the file's own (``file_diagnostics``; fixes are checked against the
    text, except in a notebook), the cross-file ones for it (``cross``, from
    ``project_diagnostics``), selected for ``settings``, suppressions applied (TC012 for unused
    ones), deduplicated and sorted, then a notebook's positions mapped to its cells."""
    from tclint.rules.suppress import apply_suppressions

    diags = file_diagnostics(ff, project, settings, src.text if src.cells is None else None)
    diags.extend(cross.get(src.path, ()))
    diags = select(diags, settings, src.path)
    diags = unique_sorted(apply_suppressions(diags, src, settings))
    if src.cells is not None:
        diags = [src.cells.map_diagnostic(d) for d in diags]
    return diags


# ---------------------------------------------------------------------------------------------
# the run


class Linter:
    """One configured linting session (a CLI run, or the language server's long-lived state)."""

    def __init__(
        self,
        resolver: ConfigResolver | None = None,
        cache: Any = None,
        jobs: int | None = None,
        index_project: bool = True,
        exits_after_run: bool = False,
    ) -> None:
        self.resolver = resolver or ConfigResolver()
        # True for a command-line run: the process ends with the run, so what it loads can be kept
        # out of the cyclic garbage collector's way (never in the language server).
        self.exits_after_run = exits_after_run
        self.cache = cache
        self.jobs = jobs
        self.index_project = index_project
        # Set by the CLI when it prints a plain report: given the run key, the report printed before
        # for the same run and the same options.  A hit skips loading and rendering the findings,
        # which on a large tree with thousands of findings cost more than reading the tree.
        self.output_lookup: Callable[[str], tuple[str, int] | None] | None = None

    def cached_facts(self, src: SourceText, settings: Settings) -> tuple[str | None, FileFacts | None]:
        """(the facts cache key, the cached facts or None)."""
        if self.cache is None or not src.digest:
            return None, None
        module, is_package, root = module_for(src.path)
        key = self.cache.facts_key(
            src.digest, module, is_package, root, settings.compiling_predicates, src.path
        )
        cached = self.cache.get_facts(key)
        if cached is not None:
            cached.path = src.path
        return key, cached

    def compute_facts(self, src: SourceText, settings: Settings, key: str | None) -> FileFacts:
        module, is_package, root = module_for(src.path)
        facts = analyze_source(src, module, is_package, root, settings.compiling_predicates)
        if key is not None:
            self.cache.put_facts(key, facts)
        return facts

    @contextmanager
    def gc_paused(self) -> Iterator[None]:
        """In a process that exits after the run, the cyclic garbage collector paused while cached
        facts load and while the project pass runs: every automatic full collection would traverse
        every object loaded or built so far, none of which is garbage (unpickled facts hold no
        cycles; the project pass keeps what it builds), and then those objects are frozen out of
        the collector's sight.  Per-file analysis keeps the collector.
        Measured: a re-lint after one edit in a 2,600-file tree spent 40 % of its time in such
        collections."""
        if not self.exits_after_run or not gc.isenabled():
            yield
            return
        gc.disable()
        self._gc_paused = True
        try:
            yield
        finally:
            self._gc_paused = False
            # What was allocated meanwhile still sits in the youngest generation: the next young
            # collections would traverse all of it (measured: 1.3 s after loading a 1 M-line
            # tree's facts).  It is kept for the rest of the run, so it moves out of the
            # collector's sight instead.
            gc.freeze()
            gc.enable()

    @contextmanager
    def collecting(self) -> Iterator[None]:
        """Inside ``gc_paused``, the collector back on for per-file analysis (the argflow re-walks
        of the project pass, the files of followed libraries): each walk leaves cyclic garbage (a
        few thousand objects per file, which hold its syntax tree) that a paused collector keeps
        to the end of the run (measured: a cold run of the transformers tree peaked at 1.7 GB in
        the main process).  What is alive is frozen first, so these collections traverse only
        what the walks allocate."""
        if not getattr(self, "_gc_paused", False):
            yield
            return
        gc.freeze()
        gc.enable()
        try:
            yield
        finally:
            gc.disable()

    def collect(self, paths: list[str], force_exclude: bool | None = None) -> tuple[list[str], list[str]]:
        """(files to report on, files to index).  Folders given on the command line are the
        linted tree and index themselves; when single files are given (pre-commit passes changed
        files, editors one buffer) the rest of their project is indexed too, so that regions
        reaching into or out of those files are right."""
        # a folder the walk cannot list is reported (TC011), never silently passed
        report = [d.path for d in discover(paths, self.resolver, force_exclude, unlistable=True)]
        index = list(report)
        only_folders = all(os.path.isdir(p) for p in paths)
        if self.index_project and not only_folders:
            root = project_root(paths)
            seen = {os.path.abspath(p) for p in report}
            if root is not None:
                more = [root]
            else:
                # no project marker: the local modules the files import, as Python finds them
                # from the script's folder (a script beside its `models/` package)
                from tclint.rules.import_closure import import_closure

                more = import_closure(report)
            for d in discover(more, self.resolver, True) if more else ():
                if os.path.abspath(d.path) not in seen:
                    index.append(d.path)
        return report, index

    def lint_paths(
        self,
        paths: list[str],
        force_exclude: bool | None = None,
        overrides: dict[str, bytes] | None = None,
        need_project: bool = False,
    ) -> LintResult:
        report, index = self.collect(paths, force_exclude)
        return self.lint_files(report, index, overrides, need_project)

    def lint_files(
        self,
        report: list[str],
        index: list[str],
        overrides: dict[str, bytes] | None = None,
        need_project: bool = False,
    ) -> LintResult:
        overrides = overrides or {}
        sources: dict[str, SourceText] = {}
        report_set = set(report)
        todo: list[tuple[SourceText, Settings]] = []
        stats = self.cache.stat_table() if self.cache is not None else None
        absolutes: list[str] = []
        for path in index:
            absolute = os.path.abspath(path)
            settings = self.resolver.for_dir(os.path.dirname(absolute))
            src = read_source(path, overrides.get(absolute), settings.max_file_size, stats, absolute)
            if path in report_set:
                sources[path] = src
            todo.append((src, settings))
            absolutes.append(absolute)
        run_key = None
        follow_envs = None
        if self.cache is not None and not need_project:
            # An unchanged tree (same bytes, same settings) re-lints for the cost of reading and
            # hashing it: the whole result is cached, files with findings included.
            keyed = sorted({_settings_fingerprint(s) for _, s in todo})
            holds = True
            if self._root_settings(report).follow_libraries:
                # following installed packages, the result also depends on files outside the
                # project: the environment is part of the key, and what the run read there
                # (library files' stats, module lookups) is recorded beside the result and
                # checked again before it is used (``libfollow.dependencies``)
                follow_envs = self._follow_environments(report)
                keyed.append(libfollow_key(follow_envs[0]))
            run_key = self.cache.run_key(
                [(absolute, src.digest) for absolute, (src, _) in zip(absolutes, todo, strict=True)],
                sorted(report),
                keyed,
            )
            if follow_envs is not None:
                from tclint.rules.libfollow import dependencies_hold

                holds = dependencies_hold(self.cache.get_run_dependencies(run_key))
            if holds and self.output_lookup is not None:
                output = self.output_lookup(run_key)
                if output is not None:
                    return LintResult([], report, sources, None, {}, run_key, output)
            cached = self.cache.get_run(run_key) if holds else None
            if cached is not None:
                return LintResult(cached, report, sources, None, {}, run_key)
        state_key, quick = self._rerun(run_key, todo, overrides, report, sources)
        if quick is not None:
            return LintResult(quick, report, sources, None, {}, run_key)
        facts = self._facts_parallel(todo)
        with self.gc_paused():
            diagnostics, project, per_file_settings = self._project_pass(
                facts, report, report_set, sources, follow_envs
            )
        if run_key is not None:
            if follow_envs is not None:
                from tclint.rules.libfollow import dependencies

                covered = {a for a in absolutes if a not in overrides}  # their digests are in the key
                record = dependencies(follow_envs, project, covered)
                if record is not None:
                    self.cache.put_run_dependencies(run_key, record)
                    self.cache.put_run(run_key, diagnostics)
            else:
                self.cache.put_run(run_key, diagnostics)
            if state_key is not None:
                from tclint.rules import rerun

                rerun.store_full(self, state_key, todo, facts, project, diagnostics, report, run_key)
        return LintResult(diagnostics, report, sources, project, per_file_settings, run_key)

    def _rerun(
        self,
        run_key: str | None,
        todo: list[tuple[SourceText, Settings]],
        overrides: dict[str, bytes],
        report: list[str],
        sources: dict[str, SourceText],
    ) -> tuple[str | None, list[Diagnostic] | None]:
        """(the key of the state the project pass stores for the next run, or None; the result
        when edits kept every changed file's interface and exports, or None): only those files'
        diagnostics derived again, from what the last project pass stored (``tclint.rules.rerun``)."""
        if run_key is None:
            return None, None
        from tclint.rules import rerun

        state_key = rerun.usable(self, todo, overrides)
        if state_key is None:
            return None, None
        quick = rerun.rerun(self, state_key, todo, report, sources, run_key)
        if quick is not None:
            self.cache.put_run(run_key, quick)
        return state_key, quick

    def _root_settings(self, report: list[str]) -> Settings:
        """The settings of the project pass (regions, following): the first reported file's."""
        return self.resolver.for_dir(os.getcwd()) if not report else self.resolver.for_file(report[0])

    def _follow_environments(self, report: list[str]) -> list[Any]:
        """(the environment libraries are followed into, the one the type refinement's dispatch
        tables are read from), both of the root settings' interpreter (``probe.python``)."""
        from tclint.rules.libfollow import Environment, begin_recording

        begin_recording()
        python = (self._root_settings(report).probe or {}).get("python")
        return [Environment.for_python(python), Environment.for_python(python)]

    def _project_pass(
        self,
        facts: list[FileFacts],
        report: list[str],
        report_set: set[str],
        sources: dict[str, SourceText],
        follow_envs: list[Any] | None = None,
    ) -> tuple[list[Diagnostic], Project, dict[str, Settings]]:
        """Regions across files, then each reported file's diagnostics (selected, suppressed).
        ``follow_envs``: the environments of :meth:`_follow_environments`, when the caller records
        what following read in them."""
        root_settings = self._root_settings(report)
        libraries = None
        if root_settings.follow_libraries:
            from tclint.rules import libfollow

            project = built_project(facts, root_settings)
            envs = follow_envs or self._follow_environments(report)
            with self.collecting():
                project, lib_sources, libraries = libfollow.follow(
                    self, project, facts, root_settings, envs[0]
                )
                project = libfollow.refine(self, project, {**sources, **lib_sources}, lib_sources, envs[1])
        else:
            project = self.refine_types(facts, root_settings, sources)
        if libraries:
            libfollow.mark(project, libraries, self.cache is not None)
        facts = [project.files.get(ff.path, ff) for ff in facts]
        cross = project.memo["cross_diagnostics"] = project_diagnostics(project)
        diagnostics: list[Diagnostic] = []
        per_file_settings: dict[str, Settings] = {}
        for ff in facts:
            if ff.path not in report_set:
                continue
            settings = self.resolver.for_file(ff.path)
            per_file_settings[ff.path] = settings
            diagnostics.extend(diagnose_file(ff, project, cross, settings, sources[ff.path]))
            if self.exits_after_run:
                # the decoded text of every file would stay to the end of the run (transformers:
                # 135 MiB); what needs it later (a report's source lines, --fix) reads it again
                sources[ff.path].release()
        diagnostics = _dedupe(diagnostics)  # a file reported twice (named twice) counts once
        diagnostics.sort(key=lambda d: d.sort_key())
        return diagnostics, project, per_file_settings

    def refine_types(
        self, facts: list[FileFacts], settings: Settings, sources: dict[str, SourceText]
    ) -> Project:
        """The project of ``facts``, with argument types flowed into the helpers of compiled
        regions (``tclint.rules.argflow``): the files concerned walked again, from the same text,
        with what the project pass learnt; a walk with the inputs of one stored beside the cache
        is not done again (``rewalks``).  The project is built here and handed to the refinement,
        which lets it go after its first round: no caller holds the unrefined project's indexes
        beside the rounds' (transformers package: ~35 MiB a project)."""
        from tclint.rules.argflow import refine
        from tclint.rules.factshare import share
        from tclint.rules.rewalks import Rewalks

        rewalks = Rewalks(self.cache)

        def reanalyze(ff: FileFacts, seeds: Any, returns_of: Any) -> FileFacts | None:
            src = sources.get(ff.path)
            if src is None or src.text is None:
                return None
            predicates = self.resolver.for_file(ff.path).compiling_predicates
            key = None
            if self.cache is not None and src.digest:
                key = self.cache.facts_key(src.digest, ff.module, ff.is_package, ff.root, predicates, ff.path)
            walked = rewalks.walk(
                key,
                ff.path,
                seeds,
                returns_of,
                lambda asked: analyze_source(
                    src, ff.module, ff.is_package, ff.root, predicates, seeds, asked
                ),
            )
            if self.exits_after_run:
                src.release()  # read again for the next round or the file's diagnostics
            # what the seeds left as it was is the same object as in the facts walked from: the
            # pass keeps both, and each round's in the refinement's trace (``factshare``)
            return walked if walked is None else share(ff, walked)

        with self.collecting():
            refined = refine(built_project(facts, settings), reanalyze)
        rewalks.flush()
        return refined

    def _facts_parallel(self, todo: list[tuple[SourceText, Settings]]) -> list[FileFacts]:
        jobs = self.jobs
        if jobs is None:
            jobs = default_jobs(todo)
        from tclint.rules.parallel import analyze_many

        return analyze_many(self, todo, jobs)


def built_project(facts: list[FileFacts], settings: Settings) -> Project:
    """The project of ``facts``: its indexes and regions built."""
    from tclint.rules.project import Project

    project = Project(facts, settings)
    project.build()
    return project


def libfollow_key(env: Any) -> str:
    """The environment's part of a run key (``libfollow.environment_key``)."""
    from tclint.rules.libfollow import environment_key

    return "follow-libraries:" + environment_key(env)


_FINGERPRINTS: dict[int, tuple[Settings, str]] = {}


def _settings_fingerprint(settings: Settings) -> str:
    """Everything in the settings that findings depend on, as text (settings objects are shared
    per folder: memoised).  Not ``output-format``: it is how the report is printed (the printed
    report is cached under its own format, ``Cache.output_key``); with it, a text run after a
    JSON or SARIF run of the same tree ran the whole project pass again (transformers package:
    over 100 s CPU instead of reading the cached result)."""
    import dataclasses

    hit = _FINGERPRINTS.get(id(settings))
    if hit is not None and hit[0] is settings:
        return hit[1]
    text = repr(sorted((k, repr(v)) for k, v in dataclasses.asdict(settings).items() if k != "output_format"))
    _FINGERPRINTS[id(settings)] = (settings, text)
    return text


def default_jobs(todo: list[tuple[SourceText, Settings]]) -> int:
    """Parallel only where it pays: process start-up costs more than it saves on small trees
    (measured ~1.2x slower for 11k lines), and pre-commit already partitions the files."""
    if os.environ.get("PRE_COMMIT") == "1":
        return 1
    total = sum(src.size for src, _ in todo)
    if total < 4_000_000:  # about 100k lines
        return 1
    return min(os.cpu_count() or 1, 8)


def unique_sorted(diags: list[Diagnostic]) -> list[Diagnostic]:
    """Each finding once (same file, code, start and message), in report order."""
    out = _dedupe(diags)
    out.sort(key=lambda d: d.sort_key())
    return out


def _dedupe(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen = set()
    out = []
    for d in diags:
        key = (d.path, d.code, d.span.start, d.message)
        if key in seen:
            continue
        seen.add(key)
        out.append(d)
    return out
