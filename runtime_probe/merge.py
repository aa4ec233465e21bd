"""Static findings + what the probe saw: confirmed, unpredicted, and untouched.

* A static diagnostic whose line range holds a break the probe saw, with one of the GB ids the
  rule predicts, is marked ``extra["confirmed"] = True`` (plus the hit count); the probe's own
  TC901 for that site is then dropped, since it would say the same thing twice.
* A static recompile-family diagnostic on the line a failed guard maps to is confirmed too, and so
  is a variant finding (TC208/TC209) of the recompiled function whose dimension the failed guard
  is an instance of (``guards.dimensions``: grad mode, train/eval, autocast, batch size, dtype,
  requires_grad, a global...), wherever its line is (the eager line that flips the guard).
* A TC903 (a function past the recompile limit) is predicted by a static finding that says the same
  function recompiles without bound (TC201, TC205, TC209, a TC208 with unbounded variants, a TC207
  whose `dynamic=False` function is called in a loop), a call-site
  finding by its ``extra["target"]``, one inside the function (or the continuation after one of its
  breaks) by ``extra["func"]``; those are confirmed by it.
* A TC201 / TC205 is confirmed wherever its line is when a failed guard of its function's recompiles
  (those folded into a TC902, those of the TC903's frame) checks the attribute, global or argument it
  names (``guards.subject``: ``self.calls == 2`` checks ``self.calls``).
* Static findings the probe has no evidence about (paths it did not execute, rules it cannot
  observe) stay exactly as they were: absence of a break in one run proves nothing.
* Probe findings no static rule predicted get ``extra["unpredicted"] = True`` (a signal for a
  new rule).
* A break the probe saw inside an installed package, at a library site TC312 lists (same statement,
  a GB id in common), marks that site confirmed (``library_sites[i]["confirmed"]``, its related
  location says so); the TC312 summary is then confirmed and the probe's TC901 dropped.
"""

from __future__ import annotations

import os
from typing import Any

from tclint.rules import registry
from tclint.rules.model import Diagnostic
from tclint.rules.ruletypes import Family
from tclint.runtime_probe import guards


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


def _covers(d: Diagnostic, path: str, line: int) -> bool:
    return _real(d.path) == path and d.span.start.line <= line <= max(d.span.end.line, d.span.start.line)


def _overlaps(d: Diagnostic, path: str, line: int, col: int, end_col: int) -> bool:
    """``d`` covers that part of the line (a ``def`` line holds many parameters)."""
    if not _covers(d, path, line):
        return False
    start = d.span.start.column if d.span.start.line == line else 0
    end = d.span.end.column if d.span.end.line == line else 10**9
    return start < end_col and col < max(end, start + 1)


def _recompile_match(sd: Diagnostic, pd: Diagnostic) -> bool:
    """A static recompile finding predicts this recompile: it sits on the guard's line (on the
    guarded parameter itself when the guard is about a parameter)."""
    if _family(sd.code) is not Family.RECOMPILE:
        return False
    path = _real(pd.path)
    targets = [(pd.span.start.line, pd.span.start.column, pd.span.end.column)]
    for p in pd.extra.get("parameters") or []:
        targets.append((p["line"], p["col"], p["end_col"]))
    return any(_overlaps(sd, path, line, col, end) for line, col, end in targets)


def _dimension_match(sd: Diagnostic, pd: Diagnostic) -> bool:
    """A static variant finding (TC208/TC209, and TC207's static shapes: ``extra["target"]`` the
    compiled function, ``extra["dimension"]`` the guard dimension it predicts) explains this
    recompile: same compiled function (``_same_function``: the frames a dropped root's callees
    are compiled as count too), and the failed guard is an instance of that dimension
    (``guards.dimensions``)."""
    dim = sd.extra.get("dimension")
    if not sd.extra.get("target") or not dim or _family(sd.code) is not Family.RECOMPILE:
        return False
    if not _same_function(sd, pd):
        return False
    return any(dim in guards.dimensions(g) for g in pd.extra.get("guards") or ())


def _same_function(sd: Diagnostic, pd: Diagnostic) -> bool:
    """``sd`` is about the function the probe recompiled (``pd.extra["function"]``, qualified, in
    ``frame_file``; a continuation after one of its graph breaks counts as the function): a
    call-site finding names it as ``extra["target"]`` ("path::qualname") or, where the compiled
    root runs eagerly (a break drops its frame), among ``extra["frames"]``, the functions it
    calls that Dynamo compiles on their own and that meet the calls' variants; a finding inside
    it names it as ``extra["func"]``."""
    fn, frame_file = pd.extra.get("function"), pd.extra.get("frame_file")
    if not fn:
        return False
    target = sd.extra.get("target")
    if target:
        named = (str(t).partition("::") for t in [target, *(sd.extra.get("frames") or ())])
        return any(
            qual == fn and (not frame_file or _real(path) == _real(frame_file)) for path, _, qual in named
        )
    return sd.extra.get("func") == fn and bool(frame_file) and _real(sd.path) == _real(str(frame_file))


# static findings that predict recompiles without bound (so the recompile limit): a TC208 does when
# its variants are unbounded (``extra["variants"]`` None)
UNBOUNDED = ("TC201", "TC205", "TC209")


def _predicts_limit(sd: Diagnostic, pd: Diagnostic) -> bool:
    """A static finding predicts this TC903: it says the same function recompiles without bound."""
    unbounded = (
        sd.code in UNBOUNDED
        or (sd.code == "TC208" and "variants" in sd.extra and sd.extra["variants"] is None)
        or (sd.code == "TC207" and bool(sd.extra.get("looped")))  # dynamic=False called in a loop
    )
    return unbounded and _same_function(sd, pd)


def _guarded_name(sd: Diagnostic) -> str | None:
    """What a TC201 / TC205 says Dynamo guards: the mutated attribute or global, the argument."""
    if sd.code == "TC201":
        return guards.mutated_name(sd.path, sd.span.start.line)
    if sd.code == "TC205":
        return sd.extra.get("parameter")
    return None


def _names_guard(sd: Diagnostic, pd: Diagnostic) -> bool:
    """A TC201 / TC205 is confirmed by a recompile of its function whose failed guard checks the very
    attribute, global or argument it names (``self.calls == 2`` for ``self.calls += 1``); the guards of
    the continuations folded into a TC902 and of the frame past the limit (TC903) count too."""
    name = _guarded_name(sd) if sd.code in ("TC201", "TC205") else None
    if not name or not _same_function(sd, pd):
        return False
    failed = [*(pd.extra.get("guards") or ()), *(pd.extra.get("secondary_guards") or ())]
    return any(guards.subject(g) == name for g in failed)


def _predicts(sd: Diagnostic, pd: Diagnostic) -> bool:
    """``sd`` predicts (and is confirmed by) the probe's recompile finding ``pd`` (TC902 / TC903)."""
    if pd.code == "TC903":
        return _predicts_limit(sd, pd) or _names_guard(sd, pd)
    return _recompile_match(sd, pd) or _dimension_match(sd, pd) or _names_guard(sd, pd)


def _family(code: str) -> Family | None:
    rule = registry.get(code)
    return getattr(rule, "family", None)


def merge(static: list[Diagnostic], report: Any) -> list[Diagnostic]:
    """The diagnostics to show: static ones (some confirmed) and the probe's (some unpredicted)."""
    probe = report.diagnostics() if hasattr(report, "diagnostics") else list(report)
    out_static = list(static)
    confirmed_probe: set[int] = set()
    predicted_by: dict[int, set[str]] = {}
    for i, pd in enumerate(probe):
        path, line = _real(pd.path), pd.span.start.line
        matched = []
        for j, sd in enumerate(out_static):
            if pd.code == "TC901" and _covers(sd, path, line) and set(sd.gb_ids) & set(pd.gb_ids):
                matched.append(j)
            elif pd.code in ("TC902", "TC903") and _predicts(sd, pd):
                matched.append(j)
        if not matched:
            continue
        confirmed_probe.add(i)
        predicted_by[i] = {out_static[j].code for j in matched}
        for j in matched:
            sd = out_static[j]
            extra = {**sd.extra, "confirmed": True, "confirmed_by": pd.code}
            if pd.extra.get("hits") is not None:
                extra["hits"] = pd.extra["hits"]
            out_static[j] = sd.with_(extra=extra)
    out_static = _confirm_library_sites(out_static, probe, confirmed_probe)
    merged_probe = []
    for i, pd in enumerate(probe):
        if i in confirmed_probe:
            if pd.code == "TC901":
                continue  # the confirmed static finding says it, with the hit count attached
            codes = sorted(predicted_by.get(i, set()) - {"TC312"})
            merged_probe.append(pd.with_(extra={**pd.extra, "predicted_by": codes}))
        elif pd.code in ("TC901", "TC902", "TC903", "TC904") and not pd.extra.get("ordinary"):
            # (an ordinary dynamic-shape generalisation is no hazard a static rule should predict)
            merged_probe.append(pd.with_(extra={**pd.extra, "unpredicted": True}))
        else:
            merged_probe.append(pd)
    out = out_static + merged_probe
    out.sort(key=lambda d: d.sort_key())
    return out


def _confirm_library_sites(
    static: list[Diagnostic], probe: list[Diagnostic], confirmed_probe: set[int]
) -> list[Diagnostic]:
    """TC312 summaries with the library sites the probe saw break marked confirmed (hit counts added)."""
    from tclint.rules.model import RelatedLocation

    out = []
    for sd in static:
        sites = sd.extra.get("library_sites") if sd.code == "TC312" else None
        if not sites:
            out.append(sd)
            continue
        marked = [dict(site) for site in sites]
        related = list(sd.related)
        for i, pd in enumerate(probe):
            if pd.code != "TC901":
                continue
            # the break's site in the user's files, and where Dynamo reported it (inside the library
            # when a user frame called into it: the site is then the user's call)
            places = [(_real(pd.path), pd.span.start.line)]
            at = pd.extra.get("reported_at")
            if at and at[0]:
                places.append((_real(at[0]), int(at[1])))
            for site in marked:
                match = next(
                    (
                        (p, n)
                        for p, n in places
                        if _real(site["path"]) == p
                        and site["line"] <= n <= (site.get("end_line") or site["line"])
                    ),
                    None,
                )
                if match is not None and (set(site["gb_ids"]) & set(pd.gb_ids) or not pd.gb_ids):
                    path = match[0]
                    confirmed_probe.add(i)
                    if not site.get("confirmed"):
                        site["confirmed"] = True
                        site["hits"] = pd.extra.get("hits")
                        for r, rel in enumerate(related):
                            if _real(rel.path) == path and rel.span.start.line == site["line"]:
                                hits = f", hit {site['hits']} times" if site.get("hits") is not None else ""
                                related[r] = RelatedLocation(
                                    rel.path, rel.span, f"{rel.message} (confirmed by the probe{hits})"
                                )
        count = sum(1 for site in marked if site.get("confirmed"))
        if count:
            sd = sd.with_(
                related=tuple(related),
                extra={
                    **sd.extra,
                    "library_sites": marked,
                    "confirmed": True,
                    "confirmed_by": "TC901",
                    "confirmed_sites": count,
                },
            )
        out.append(sd)
    return out
