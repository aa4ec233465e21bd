from tclint.rules.model import Confidence, Diagnostic, RelatedLocation, Severity, Span
from tclint.rules.rule import Example, Family, Rule

# confidence names in rank order (Confidence is a str enum: its values are these names)
_RANK = {"low": 0, "medium": 1, "high": 2}


class CompiledLibraryCode(Rule):
    """
    ## What it does
    With `follow-libraries` on (or `--follow-libraries`), tclint follows a compiled region into
    the installed packages it reaches: `torch.compile(kornia.filters.GaussianBlur2d(...))`, a
    compiled step calling `torchdiffeq.odeint`, a compiled `torch_geometric.nn` model.  The
    library's source is analysed with the same rules as the project's, but its findings are not
    reported in the library's files: this rule reports them once, at the user's compile site, as
    a summary (how many likely graph breaks and recompile hazards, how many hot), with every
    library site as a related location (file, line, rule, GB id and the chain from the compile
    site).  What your code shows about the model decides which library branches count: the
    keywords of your calls of the compiled model (`labels=` given or not), `.eval()`/`.train()` at
    the compile site, the keywords of the config you pass and the config class's declared defaults
    prune branches such as `if labels is not None:` or `if self.training:`; a site behind a value
    tclint could not see says so and is never counted hot.

    ## Why is this bad?
    Most users compile models they did not write.  A graph break inside the library splits the
    user's graph just as one in the user's code does, but nothing in the user's own files shows
    it: without following, `tclint` prints `All checks passed!` while Dynamo breaks the step at
    places the user never opened.

    ## Example
    ```python
    from torchdiffeq import odeint

    @torch.compile                      # TC312: compiled library code meets 5 likely graph breaks
    def solve(func, y0, t):
        return odeint(func, y0, t, method="rk4")
    ```

    ## Use instead
    Library code is not yours to edit.  Confirm the sites with `tclint probe` (it runs the
    script), then compile around the offending part: wrap the library call that breaks in
    `torch.compiler.disable`, compile only the blocks that are clean (regional compilation:
    `block.compile()` per layer instead of the whole model), or pick the library's configuration
    (an option or flag of the constructor) that avoids the branch, or a library version where
    it is fixed.  Severity follows heat: a break in a loop or in every block of a stack raises
    it, and so does a likely one your configuration runs at every step (every condition on its
    way known and taken at each of your calls); a cold path (a warning, a branch for another
    configuration) or a site behind a value tclint could not see is listed but never does.
    `tclint probe` marks the library sites it saw break ("confirmed by the probe, hit N times").

    ## Fix safety
    No automatic fix.

    ## References
    - https://docs.pytorch.org/docs/stable/generated/torch.compiler.disable.html
    - https://docs.pytorch.org/tutorials/recipes/regional_compilation.html
    """

    code = "TC312"
    name = "compiled-library-code"
    summary = "a compiled region reaches installed library code that holds graph breaks or recompile hazards"
    family = Family.TCLINT
    default_severity = Severity.WARNING
    region_only = False

    def project_check(self, project):
        from tclint.rules.engine import rule_doc_url
        from tclint.rules.libfollow import LIBRARY_MEMO

        libraries = project.memo.get(LIBRARY_MEMO) or {}
        if not libraries:
            return
        groups, pruned, sites = _collect(project, libraries)
        for key in sorted(groups):
            path, loc = sites[key]
            found = groups[key]
            breaks = [d for d, _ in found if d.code.startswith("TC1")]
            recompiles = [d for d, _ in found if d.code.startswith("TC2")]
            hot = [d for d, h in found if h]
            warm = [d for d, h in found if not h and d.severity != Severity.INFO]
            severity = Severity.ERROR if hot else Severity.WARNING if warm else Severity.INFO
            parts = []
            if breaks:
                parts.append(f"{len(breaks)} likely graph break{'s' if len(breaks) != 1 else ''}")
            if recompiles:
                parts.append(f"{len(recompiles)} recompile hazard{'s' if len(recompiles) != 1 else ''}")
            files = sorted({d.path for d, _ in found})
            message = (
                f"compiled library code meets {' and '.join(parts)} in {len(files)} installed "
                f"file{'s' if len(files) != 1 else ''}" + (f" ({len(hot)} hot)" if hot else " (none hot)")
            )
            skipped = pruned.get(key, [])
            unseen = sorted({v for d, _ in found for v in d.extra.get("depends_on", ())})
            if skipped:
                message += f"; {len(skipped)} more behind branches your configuration does not take"
            if unseen:
                n = sum(1 for d, _ in found if d.extra.get("depends_on"))
                message += f"; {n} depend{'s' if n == 1 else ''} on values tclint could not see"
            related = tuple(
                RelatedLocation(d.path, d.span, _related_message(d, h))
                for d, h in sorted(found, key=lambda dh: (not dh[1], dh[0].path, dh[0].span.start.line))
            )
            best = max((_RANK.get(str(d.confidence.value), 1) for d, _ in found), default=1)
            yield Diagnostic(
                code=self.code,
                name=self.name,
                message=message,
                path=path,
                span=Span.of(loc.line, loc.col, loc.end_line, loc.end_col),
                severity=severity,
                confidence=Confidence(_name(best)),
                noqa_line=loc.line,
                gb_ids=tuple(sorted({g for d, _ in found for g in d.gb_ids})),
                related=related,
                url=rule_doc_url(self.code),
                help=_advice(path, found),
                extra={
                    "library_sites": [
                        {
                            "path": d.path,
                            "line": d.line,
                            "end_line": d.span.end.line,
                            "code": d.code,
                            "gb_ids": list(d.gb_ids),
                            "hot": h,
                            "confidence": str(d.confidence.value),
                            "severity": d.severity.name.lower(),
                            "chain": d.extra.get("region", ""),
                            "depends_on": list(d.extra.get("depends_on", ())),
                        }
                        for d, h in found
                    ],
                    "pruned_sites": [
                        {"path": d.path, "line": d.line, "code": d.code, "why": why} for d, why in skipped
                    ],
                    "depends_on": unseen,
                },
            )

    invalid = (
        Example(
            """
import torch
from torchdiffeq import odeint


def dynamics(t, y):
    return -y


@torch.compile  # expect: TC312
def solve(y0, t):
    return odeint(dynamics, y0, t, method="dopri5")
""",
            proof=False,
            settings={"follow-libraries": True},
            title="static: a compiled function calls an installed package (torchdiffeq) that breaks inside",
        ),
    )
    valid = (
        Example(
            """
import torch
from torchdiffeq import odeint


def dynamics(t, y):
    return -y


@torch.compile
def solve(y0, t):
    return odeint(dynamics, y0, t, method="dopri5")
""",
            proof=False,
            title="static: without follow-libraries, installed packages are not followed",
        ),
    )


def _collect(project, libraries):
    """Per compile site: its library findings with their heat, the ones pruned by the user's
    configuration (with why), and the site's place."""
    from tclint.rules.engine import file_diagnostics, select
    from tclint.rules.libjudged import judged as judge  # libconfig.judge, remembered on disk

    settings = project.settings
    groups: dict[tuple[str, int, int], list[tuple[Diagnostic, bool]]] = {}
    pruned: dict[tuple[str, int, int], list[tuple[Diagnostic, list[str]]]] = {}
    sides: dict[tuple[str, int, int], object] = {}
    sites: dict[tuple[str, int, int], tuple[str, object]] = {}
    reaching = _sites_reaching(project, libraries)
    for path in sorted(libraries):
        ff = project.files.get(path)
        if ff is None:
            continue
        # the project's selection (select / ignore / min-confidence) applies to library sites too
        for diag in select(file_diagnostics(ff, project, settings), settings, path):
            if not (diag.code.startswith("TC1") or diag.code.startswith("TC2")):
                continue
            region = project.region_of(path, diag.extra.get("func"))
            head = _head(region, libraries) if region is not None else None
            if head is None:
                continue
            hot = diag.severity == Severity.ERROR or bool(_multiplied(region))
            # every compile site whose region reaches the function, not only the first one found
            for link, root, callers in reaching.get(region.func_key, []):
                key = (link.path, link.loc.line, link.loc.col)
                sites.setdefault(key, (link.path, link.loc))
                steps = _path_steps(region.func_key, diag, root, callers)
                taken, unseen, why, derived, every_call = judge(
                    project, _user_side(project, link, root, sides), steps
                )
                if not taken:
                    pruned.setdefault(key, []).append((diag, why))
                    continue
                off = any(_configurable(u) or u in derived for u in unseen)
                # hot by the loop or block it runs in, or else by running at every step
                step = not (hot and not off) and _every_step(diag, every_call)
                shown = diag.with_(
                    extra={
                        **diag.extra,
                        "depends_on": sorted(unseen),
                        "flags": why,
                        "region_multiplier": _multiplied(region),
                        "every_step": step,
                    }
                )
                # a site behind a setting tclint could not see (or a value the library computes from
                # its settings) may be off for this user: never hot; one behind an input check
                # (isinstance, a layout, a shape) stays as hot as it is
                groups.setdefault(key, []).append((shown, (hot and not off) or step))
    return groups, pruned, sites


MAX_ROOTS = 500  # compile sites walked for TC312's attribution (beyond: each finding's own chain only)


def _head(region, libraries) -> object | None:
    """The first link of a region's chain in the project's own files: the user's compile site."""
    return next((link for link in region.chain if link.path not in libraries), None)


def _sites_reaching(project, libraries) -> dict[str, list]:
    """Function key -> [(compile site link, root function key, caller map)] for each compile site
    whose region reaches it.  A function's region records the first chain found to it; a library
    function reached from several compile sites (an encoder in train and in eval, the shared loss of
    several models) belongs to each of them, and each site's own path to it (the caller map: node ->
    (caller, path, line of the call)) is what its configuration is judged along."""
    adjacent: dict[str, dict[str, tuple[str, int]]] = {}
    for key, region in project.regions.items():
        if region.parent is not None and region.links:
            link = region.links[-1]
            adjacent.setdefault(region.parent.func_key, {}).setdefault(key, (link.path, link.loc.line))
        ff, fn = project.functions[key]
        for edge in fn.calls:
            for callee, _m in project.edge_targets(ff, fn, edge):
                if callee in project.regions and callee != key:
                    adjacent.setdefault(key, {}).setdefault(callee, (ff.path, edge.loc.line))
    from tclint.rules.project import Link

    # every compile site with what it compiles (a function's region keeps only the first site)
    roots: list = []
    for site_id, keys in project.site_targets.items():
        ff, site = project.sites[site_id]
        if ff.path not in libraries:
            roots.extend((key, Link(ff.path, site.loc, site.text)) for key in keys if key in project.regions)
    out: dict[str, list] = {}
    for key, head in roots[:MAX_ROOTS]:
        callers = _callers_from(key, adjacent)
        for node in callers:
            heads = out.setdefault(node, [])
            if all(
                (h.path, h.loc.line, h.loc.col) != (head.path, head.loc.line, head.loc.col)
                for h, _r, _c in heads
            ):
                heads.append((head, key, callers))
    return out


def _callers_from(key, adjacent) -> dict[str, tuple[str, str, int] | None]:
    """Every function reachable from ``key`` -> (its caller, path, line of the call); None for the
    root and for a function called from two places (the path to it is not one path, so no condition
    above it may prune what it reaches)."""
    callers: dict[str, tuple[str, str, int] | None] = {key: None}
    incoming: dict[str, int] = {}
    stack = [key]
    while stack:
        node = stack.pop()
        for nxt, (path, line) in adjacent.get(node, {}).items():
            incoming[nxt] = incoming.get(nxt, 0) + 1
            if nxt not in callers:
                callers[nxt] = (node, path, line)
                stack.append(nxt)
    for node, count in incoming.items():
        if count > 1:
            callers[node] = None
    return callers


def _path_steps(func_key, diag, root, callers) -> list[tuple[str, int, bool]]:
    """(path, line, is the compiled root) for the site's statement and each call on one compile
    site's path to it, up to the function that site compiles."""
    steps = [(diag.path, diag.line, func_key == root)]
    node, seen = func_key, {func_key}
    if callers.get(node) is None and node != root:
        return [(diag.path, diag.line, False)]  # several paths lead here: only its own conditions count
    while callers.get(node) is not None:
        caller, path, line = callers[node]
        steps.append((path, line, caller == root))
        if caller in seen:
            break
        seen.add(caller)
        node = caller
    return steps


def _user_side(project, link, root, sides):
    """What the user's file shows at one compile site, ``root`` the function it compiles (memoised)."""
    from tclint.rules.libconfig import user_side

    key = (link.path, link.loc.line, link.loc.col)
    if key not in sides:
        params = []
        if root in project.functions:
            params = [p.name for p in project.functions[root][1].params if p.kind in ("pos", "kwonly")]
            params = params[1:] if params and params[0] == "self" else params
        sides[key] = user_side(project, link.path, link.loc.line, link.loc.col, params)
    return sides[key]


def _advice(user_path: str, found: list[tuple[Diagnostic, bool]]) -> str:
    """What to do about library code, from the sites found: probe the script; disable compilation of
    the library function holding the worst site; compile the repeated blocks on their own when a site
    is hot because it runs per block; set the config flag the library branches on."""
    import os

    worst = sorted(
        found, key=lambda dh: (not dh[1], dh[0].severity != Severity.ERROR, dh[0].path, dh[0].line)
    )
    d, _hot = worst[0]
    func = d.extra.get("func") or "the library function"
    parts = [
        f"confirm with `tclint probe {os.path.basename(user_path)}`",
        f"wrap `{func}` ({os.path.basename(d.path)}:{d.line}) in `torch.compiler.disable` "
        "(or the library call that reaches it)",
    ]
    blocks = sorted(
        {str(x.extra.get("region_multiplier")) for x, _ in found if x.extra.get("region_multiplier")}
    )
    if blocks:
        parts.append(
            f"compile only the repeated blocks ({blocks[0]}: `block.compile()` each, regional compilation)"
        )
    flags: dict[str, int] = {}
    for x, _ in found:
        for f in x.extra.get("flags") or ():
            flags[f] = flags.get(f, 0) + 1
    if flags:
        flag, n = max(flags.items(), key=lambda kv: kv[1])
        parts.append(f"set `{flag}` in the model's config (the library then skips {n} of these sites)")
    return "library code: " + "; ".join(parts)


def _every_step(diag: Diagnostic, every_call: bool) -> bool:
    """Is a library site hot because the user's configuration runs it at every step: the
    judgement found every condition on its chain known and taken at each of the user's calls
    (:func:`libconfig.judge`), and the finding is a likely one (medium confidence or more) on a
    path that is not cold (a warning, a deprecation branch) and not shadowed by an earlier drop."""
    return every_call and diag.severity != Severity.INFO and _RANK.get(str(diag.confidence.value), 1) >= 1


def _configurable(value: str) -> bool:
    """Is an unseen value one the user sets (a config attribute, an attribute the constructor stores,
    an argument of the compiled call), rather than something about the inputs (``isinstance(x, T)``,
    ``x.layout``, ``len(xs)``)?"""
    if value.startswith("config.") or value == "an argument's value":
        return True
    parts = value.split(".")
    return all(p.isidentifier() for p in parts) and (
        len(parts) == 1 or (parts[0] == "self" and len(parts) == 2)
    )


def _multiplied(region) -> str | None:
    node = region
    while node is not None:
        if node.multiplier:
            return node.multiplier
        node = node.parent
    return None


def _name(rank: int) -> str:
    return {v: k for k, v in _RANK.items()}[rank]


def _related_message(diag: Diagnostic, hot: bool) -> str:
    gb = f" {diag.gb_ids[0]}" if diag.gb_ids else ""
    heat = "hot" if hot else ("cold" if diag.severity == Severity.INFO else "warm")
    step = " (hot: runs at every step of your configuration)" if hot and diag.extra.get("every_step") else ""
    unseen = diag.extra.get("depends_on")
    depends = (
        f" (depends on {', '.join(f'`{u}`' for u in unseen)}, which tclint could not see)" if unseen else ""
    )
    return f"{diag.code}{gb} ({heat}, {diag.confidence.value} confidence): {diag.message}{step}{depends} [{diag.extra.get('region', '')}]"
