"""The variant set of every compiled callable, read from how it is called (issue 13).

A compiled frame keeps one compiled variant per combination of the guarded things that differ
between its calls.  This module reads, for every compiled root (``callsites.roots``), the calls
that enter it (``callsites.calls_into_roots``) joined with their eager-side context
(``FileFacts.variant_facts``, recorded by ``analysis.callctx``), and decides per guard dimension
what varies and how much:

* grad mode: calls under ``no_grad`` / ``inference_mode`` and calls outside (torch 2.13 guards
  ``GLOBAL_STATE grad_mode``; ``inference_mode`` is a third variant, its tensors have another
  dispatch key set);
* autocast: calls inside an ``autocast`` block and outside (``autocast(cpu)_enabled``);
* train/eval: ``.train()`` / ``.eval()`` on the compiled module or the original, when the module
  has a submodule or code whose graph depends on ``training`` (Dropout, BatchNorm, ``self.training``);
  a module without one compiles once in both modes (measured);
* batch size: an argument taken from a ``DataLoader`` that keeps its smaller last batch: 2
  variants (static, then a dynamic batch dimension), unless ``dynamic=True``;
* Python scalar arguments, by ``callsites.specialisation``: bools and enumerated strings are
  bounded by their distinct values, counters / lengths / clocks / per-call strings given to a
  specialised parameter are unbounded; an int or float parameter used as a value becomes dynamic
  after its second value (2 variants), except under ``dynamic=False``.

The predicted variant count joins the dimensions read off each call (grad mode, autocast, input
casts, flag arguments, train/eval where the calling function shows it: ``Variants.joined``) into
the combinations the calls make — a validation pass under no_grad in eval mode is 2 combinations
of 4 — and multiplies that by the other bounded dimensions, where the dimensions that go dynamic
after their second value (sizes, int/float arguments) count 2 together, since one recompile
makes all of them symbolic; one unbounded dimension makes it unbounded: the recompile limit (8)
is reached, then the frame runs eagerly.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
from dataclasses import dataclass, field
from typing import Any

from tclint.rules import callsites
from tclint.rules import types as T
from tclint.rules.facts import CallEdge, FileFacts, FunctionFacts, Loc
from tclint.rules.nn_module_methods import SELF_RETURNING_METHODS
from tclint.rules.project import Project

RECOMPILE_LIMIT = 8
CallId = tuple[str, int, int]  # (caller path, line, col) of a call into a compiled root
TRAINING_SENSITIVE = ("Dropout", "BatchNorm", "InstanceNorm", "AlphaDropout", "SyncBatchNorm", "RReLU")


@dataclass
class Source:
    """One place that makes a dimension vary: where it is, and what it does there."""

    path: str
    loc: Loc
    note: str


@dataclass
class Dimension:
    """One guard that differs between calls of a compiled callable."""

    kind: str  # grad_mode | autocast | training | batch | arg
    guard: str  # the guard as Dynamo words it (approximately)
    values: list[str]
    bounded: bool
    sources: list[Source] = field(default_factory=list)  # first: the line a user changes
    advice: str = ""
    becomes_dynamic: bool = (
        False  # static first, then one dynamic variant (automatic dynamic shapes / scalars)
    )
    # (caller path, line, col) of each call -> the values this dimension can have at that call;
    # None for a dimension not read off the calls (a call missing from it: any of ``values``)
    per_call: dict[CallId, frozenset[str]] | None = field(default=None, repr=False)
    # for a dimension that becomes dynamic: when its value first changes ("iteration": on the
    # second iteration of the loop around the call, "last": on the loop's last one, "caller":
    # between calls of the function making the call); dimensions that first change at the same
    # time go dynamic in the same recompile ("": with any other unlabelled one)
    changes_with: str = ""

    @property
    def count(self) -> int | None:
        return len(self.values) if self.bounded else None

    def describe(self) -> str:
        if not self.bounded:
            return f"{self.guard}: unbounded ({', '.join(self.values)})"
        return f"{self.guard}: {'/'.join(self.values)}"

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "guard": self.guard,
            "values": self.values,
            "bounded": self.bounded,
            "count": self.count,
            "advice": self.advice,
            "sources": [
                {"path": s.path, "line": s.loc.line, "column": s.loc.col + 1, "note": s.note}
                for s in self.sources
            ],
        }


@dataclass
class Variants:
    """The predicted variant set of one compiled callable."""

    key: str
    qualname: str
    path: str
    site: Loc | None  # the compile site (None: a configured root)
    site_path: str | None
    calls: int
    dims: list[Dimension] = field(default_factory=list)
    runs_eagerly_from: int | None = None  # the line from which Dynamo gives up on this frame (dropped_roots)

    def compiled_as(self) -> str:
        """How messages name the compiled callable: a root whose frame Dynamo drops is not where
        the variants are compiled, its callees are (they are compiled as frames of their own)."""
        if self.runs_eagerly_from is None:
            return f"compiled `{self.qualname}`"
        return (
            f"`{self.qualname}` (it runs eagerly from {os.path.basename(self.path)}:{self.runs_eagerly_from}, where a break drops its frame: "
            "the functions it calls are compiled on their own and get these variants)"
        )

    @property
    def bounded(self) -> bool:
        return all(d.bounded for d in self.dims)

    def joined(self) -> tuple[list[Dimension], int] | None:
        """The dimensions read off each call (grad mode, autocast, train/eval where the calling
        function shows it, input casts, flag arguments) and the number of their combinations
        the calls make, when that is fewer than their product: a validation pass always called
        in eval mode under ``no_grad`` is 2 variants of grad/no_grad × train/eval, not 4
        (measured).  A call whose value in a dimension is not visible takes every value."""
        dims = [
            d
            for d in self.dims
            if d.bounded and d.per_call is not None and not d.becomes_dynamic and d.kind != "single"
        ]
        if len(dims) < 2:
            return None
        calls = {c for d in dims for c in d.per_call or {}}
        combos: set[tuple[str, ...]] = set()
        for c in calls:
            combos.update(
                itertools.product(*(sorted((d.per_call or {}).get(c) or frozenset(d.values)) for d in dims))
            )
        product = 1
        for d in dims:
            product *= len(d.values)
        return (dims, len(combos)) if len(combos) < product else None

    def guessed_calls(self) -> int:
        """How many calls took every value of a joined dimension because theirs was not visible
        (a train/eval mode that came from the caller): the joined count is a guess there."""
        joined = self.joined()
        if joined is None:
            return 0
        calls = {c for d in joined[0] for c in d.per_call or {}}
        return sum(1 for c in calls if any(c not in (d.per_call or {}) for d in joined[0]))

    @property
    def count(self) -> int | None:
        """The predicted number of compiled variants; None when unbounded."""
        if not self.bounded:
            return None
        joined = self.joined()
        together = {id(d) for d in joined[0]} if joined is not None else set()
        n = joined[1] if joined is not None else 1
        changes: set[str] = set()
        ones = 0
        for d in self.dims:
            if id(d) in together:
                continue
            if d.becomes_dynamic:
                changes.add(d.changes_with)
            elif d.kind == "single":
                ones += 1  # a batch of one: a graph of its own beside the static and dynamic ones
            else:
                n *= len(d.values)
        # automatic dynamic: the first change of a size / scalar recompiles once and marks it
        # dynamic for the frame, so every later compile (another grad mode, train/eval, flag) is
        # dynamic already: one compile more per time something first changes, not one per
        # combination (measured, torch 2.13: train + grad with a DataLoader's short last batch,
        # eval + no_grad: 3 compiles, not 4; a loop counter and the last batch: 3, not 2)
        return n * (1 + ones) + len(changes)

    def summary(self) -> str:
        """``≈ 4 variants: train/eval × grad/no_grad — bounded`` (the hover / code lens text)."""
        if not self.dims:
            return "1 variant" if self.calls else "1 variant (no call seen)"
        joined = self.joined()
        together = {id(d) for d in joined[0]} if joined is not None else set()
        shown = [
            "/".join(d.values) if d.bounded else f"{d.guard} unbounded"
            for d in self.dims
            if not d.becomes_dynamic and id(d) not in together
        ]
        if joined is not None:
            of = " × ".join("/".join(d.values) for d in joined[0])
            guessed = self.guessed_calls()
            assumed = (
                f"; every value assumed at {guessed} call{'s' if guessed > 1 else ''}" if guessed else ""
            )
            shown.insert(0, f"{of} as called ({joined[1]} combinations{assumed})")
        dynamic = [
            d.guard.split(" ", 1)[0] if d.kind == "arg" else d.kind for d in self.dims if d.becomes_dynamic
        ]
        if dynamic:
            shown.append(f"static/dynamic ({', '.join(dynamic)})")
        parts = " × ".join(shown)
        if self.count is None:
            return f"unbounded variants: {parts} — recompiles until the limit ({RECOMPILE_LIMIT}), then runs eagerly"
        return f"≈ {self.count} variants: {parts} — bounded, warm each one up"

    def as_json(self) -> dict[str, Any]:
        return {
            "function": self.key,
            "qualname": self.qualname,
            "compile_site": None
            if self.site is None
            else {"path": self.site_path, "line": self.site.line, "column": self.site.col + 1},
            "calls": self.calls,
            "bounded": self.bounded,
            "variants": self.count,
            "summary": self.summary(),
            "dimensions": [d.as_json() for d in self.dims],
            # the dimensions whose combinations were counted at the calls (``joined``), if fewer
            "joined": None
            if (joined := self.joined()) is None
            else {
                "kinds": [d.kind for d in joined[0]],
                "combinations": joined[1],
                "guessed_calls": self.guessed_calls(),
            },
        }


def variants(project: Project) -> dict[str, Variants]:
    """The variant set of every compiled root of the project, by function key (memoised)."""
    cached = project.memo.get("variants")
    if cached is not None:
        return cached
    calls: dict[str, list[callsites.RootCall]] = {}
    seen: set[tuple[str, str, int, int]] = set()
    for call in [*callsites.calls_into_roots(project), *_compiled_attr_calls(project)]:
        k = (call.root_key, call.caller_file.path, call.edge.loc.line, call.edge.loc.col)
        if k not in seen:
            seen.add(k)
            calls.setdefault(call.root_key, []).append(call)
    project.memo["variants_calls"] = calls  # (read by _before_any_call)
    modes = _mode_edges(project)
    dropped = dropped_roots(project)
    state = _state_mutations(project, dropped)
    out: dict[str, Variants] = {}
    for key, region, ff, fn in callsites.roots(project):
        site = region.site
        site_path = _site_path(project, site) if site is not None else None
        v = Variants(
            key,
            fn.qualname,
            ff.path,
            site.loc if site is not None else None,
            site_path,
            len(calls.get(key, ())),
        )
        v.runs_eagerly_from = dropped.get(key)
        mine = calls.get(key, [])
        dynamic = region.options.get("dynamic")
        inherited = _inherited_modes(project, mine)
        for dim in (
            _grad_dimension(mine, inherited),
            _autocast_dimension(mine, inherited),
            _training_dimension(project, ff, fn, modes, mine),
            _setter_dimension(project, ff, fn),
            _batch_dimension(mine, dynamic, project),
            _size_dimension(mine, dynamic, project),
            _param_grad_dimension(project, key, fn),
        ):
            if dim is not None:
                v.dims.append(dim)
        if key not in dropped_whole(project):  # no graph of its own: its arguments guard nothing
            v.dims.extend(_arg_dimensions(mine, dynamic is False, project))
            v.dims.extend(_structure_dimension(project, mine))
        v.dims.extend(_cast_dimensions(mine))
        v.dims.extend(_slice_dimensions(project, mine, dynamic))
        if dynamic is False:
            looped = [
                Source(c.caller_file.path, c.edge.loc, "called in a loop, where input sizes usually vary")
                for c in mine
                if c.edge.in_loop
            ]
            if looped:
                v.dims.append(
                    Dimension(
                        "shape",
                        "tensor size mismatch (dynamic=False: every size is static)",
                        ["a new variant per distinct input size"],
                        False,
                        _dedupe(looped),
                        "keep dynamic=None unless shapes are fixed; bucket lengths, or mark_dynamic before the call",
                    )
                )
        members = _region_members(project).get(key, [key])
        v.dims.extend(_global_dimensions(project, members))
        buffer = _buffer_dimension(project, members, mine)
        if buffer is not None:
            v.dims.append(buffer)
        fresh = fresh_sites(project).get(key)
        if fresh:
            v.dims.append(_fresh_dimension(fresh))
        if v.runs_eagerly_from is not None and _nothing_retraced(project, members):
            v.dims = []  # no frame below runs compiled on a later call: no guard to fail
        inside = state.get(key)
        if inside:
            v.dims.append(
                Dimension(
                    "state",
                    "state mutated inside the compiled code (int attribute / growing container)",
                    ["a new value per call"],
                    False,
                    _dedupe(inside),
                    "keep the counter in a buffer (register_buffer) or the container out of the compiled code",
                )
            )
        out[key] = v
    project.memo["variants"] = out
    return out


INSIDE_UNBOUNDED = (
    "TC201",
    "TC202",
)  # an int attribute / a container mutated per call: a new guard value each call


def dropped_roots(project: Project) -> dict[str, int]:
    """Root key -> the line from which Dynamo gives up on the root's frame: a break in a loop body
    of its own, or in a callee called from its loop (``engine.caller_drops``).  From there on the
    root runs eagerly and installs no guards (the truth table's loop rows: 0 graphs); the frames
    it calls are compiled on their own, and they are the ones that meet the calling code's
    grad mode, autocast and train/eval (measured with ``tclint probe``: the recompiles land on
    the callee)."""
    cached = project.memo.get("dropped_roots")
    if cached is not None:
        return cached
    from tclint.rules import engine, registry

    rules = registry.by_code()
    drops = engine.caller_drops(project, project.settings)
    out: dict[str, int] = {}
    whole: set[str] = set()
    for key, region, ff, fn in callsites.roots(project):
        own = engine.first_frame_drop(ff, fn.qualname, project, project.settings, rules, region)
        lines = [line for line in (drops.get(key), own) if line is not None]
        if lines:
            out[key] = min(lines)
            first = engine.first_break(ff, fn.qualname, project, project.settings, rules, region)
            if first is None or first >= out[key]:
                whole.add(key)
    project.memo["dropped_roots"] = out
    project.memo["dropped_whole"] = whole
    return out


def dropped_whole(project: Project) -> set[str]:
    """The roots Dynamo drops before any graph of theirs: no break above the line their frame is
    dropped from.  Their own arguments are never guarded (no TC203-TC206 on them); the frames
    they call are compiled on their own."""
    dropped_roots(project)
    return project.memo["dropped_whole"]


def _state_mutations(project: Project, dropped: dict[str, int]) -> dict[str, list[Source]]:
    """Root key -> the unbounded state changes inside its region (TC201/TC202 candidates in any
    function the root compiles), so the variant set includes what the body itself does.  A
    change in the root's own body after the line its frame is dropped from is never traced
    (``dropped``): it guards nothing."""
    from tclint.rules.libfollow import LIBRARY_MEMO

    libraries = project.memo.get(LIBRARY_MEMO) or {}
    out: dict[str, list[Source]] = {}
    for ff in project.files.values():
        if ff.path in libraries:
            continue  # an installed package's: TC312 lists it with its configuration and heat
        for cand in ff.candidates:
            if cand.code not in INSIDE_UNBOUNDED or cand.func is None or cand.confidence >= T.LOW:
                continue  # (low: TC201 after a break whose rest of the frame has no graph, guards nothing)
            own_key = f"{ff.path}::{cand.func}"
            if own_key in dropped and cand.loc.line > dropped[own_key]:
                continue
            region = project.regions.get(f"{ff.path}::{cand.func}")
            while region is not None and region.depth != 0 and region.parent is not None:
                region = region.parent
            if region is not None and region.depth == 0:
                out.setdefault(region.func_key, []).append(
                    Source(ff.path, cand.loc, f"{cand.code}: {cand.message.split(':')[0]}")
                )
    return out


def _compiled_attr_calls(project: Project) -> list[callsites.RootCall]:
    """Calls of ``self.<attr>(...)`` where a method stored a compiled object in ``self.<attr>``
    (``self.fast = torch.compile(self.model)``): the attribute's assignment is the compile site
    itself, which the submodule specs do not always record as compiled.  Calls from outside the
    class through an instance (``agent.update(...)`` after ``self.update =
    torch.compile(self._td_loss)``) count too."""
    out = []
    root_keys = {key for key, *_ in callsites.roots(project)}
    by_class_attr: dict[tuple[str, str], list[str]] = {}
    for ff in project.files.values():
        by_attr: dict[tuple[str, str], list[str]] = {}
        for site in ff.compile_sites:
            if site.owner is None or site.func is None:
                continue
            owner = (
                site.owner[len(ff.module) + 1 :]
                if ff.module and site.owner.startswith(ff.module + ".")
                else site.owner
            )
            cf = ff.classes.get(owner)
            if cf is None:
                continue
            for attr, spec in cf.attrs.items():
                if spec.loc == site.loc:
                    keys = [k for k in project.site_targets.get(site.id, ()) if k in root_keys]
                    by_attr.setdefault((owner, attr), []).extend(keys)
                    by_class_attr.setdefault((f"{ff.path}::{owner}", attr), []).extend(keys)
        if not by_attr:
            continue
        for fn in ff.functions.values():
            if fn.cls is None:
                continue
            for edge in fn.calls:
                if edge.kind == "self" and edge.method == "__call__":
                    for key in by_attr.get((fn.cls, edge.target), ()):
                        out.append(
                            callsites.RootCall(
                                key, edge, ff, callsites.frame_params(project.functions[key][1])
                            )
                        )
    if by_class_attr:
        out.extend(_instance_attr_calls(project, by_class_attr))
    return out


def _instance_attr_calls(
    project: Project, by_class_attr: dict[tuple[str, str], list[str]]
) -> list[callsites.RootCall]:
    """``agent.update(...)`` for a class whose method stored ``self.update = torch.compile(...)``
    (``by_class_attr``: (class key, attribute) -> the compiled roots)."""
    out = []
    for ff in project.files.values():
        for edge, _caller in _all_edges(ff):
            if edge.kind != "instance" or edge.method in ("__call__", "forward"):
                continue
            for cls_key in project.class_keys_for(edge.target, ff):
                for key in by_class_attr.get((cls_key, edge.method), ()):
                    params = callsites.frame_params(project.functions[key][1])
                    out.append(callsites.RootCall(key, edge, ff, params))
    return out


def _site_path(project: Project, site: Any) -> str | None:
    for ff in project.files.values():
        if site in ff.compile_sites:
            return ff.path
    return None


# -- call contexts -----------------------------------------------------------------------------------
def _loc_of(pos: str) -> Loc:
    line, col, end_line, end_col = (int(p) for p in pos.split(":"))
    return Loc(line, col, end_line, end_col)


def _context(call: callsites.RootCall) -> tuple[str, ...]:
    vf = call.caller_file.variant_facts
    if vf is None:
        return ()
    return vf.contexts.get(f"{call.edge.loc.line}:{call.edge.loc.col}", ())


def _call_id(call: callsites.RootCall) -> CallId:
    return (call.caller_file.path, call.edge.loc.line, call.edge.loc.col)


HAND_ON_DEPTH = 3  # calling functions walked up for an argument handed on through their parameters
HandedOn = tuple[str, FileFacts, CallEdge, str]  # (argument key here, caller file, caller edge, key there)


def _handed_on(project: Project, ff: FileFacts, edge: CallEdge, depth: int = HAND_ON_DEPTH) -> list[HandedOn]:
    """The arguments of ``edge`` that are parameters of the function making it, handed on
    (``def denoise(model, x, t): return model(x, t)``, ``self.step(x, t)`` in a sampler's loop):
    for each, every call of that function that passes it, as (argument key at ``edge``, the
    caller's file and edge, the argument key there); where the caller hands on a parameter of its
    own again, its callers' (``depth`` functions up).  Those calls make the values, sizes and
    choices the compiled call sees (measured, torch 2.13: a timestep counter passed through
    ``denoise`` compiles twice, static then dynamic).  A call a function of a compiled region
    makes is left alone (inlined there, its arguments come from the graph).  Memoised per edge."""
    memo = project.memo.setdefault("variants_handed_on", {})
    at = (id(edge), depth)  # (edges at one position differ: `self.fc` read, then called)
    if at not in memo:
        memo[at] = _find_handed_on(project, ff, edge, depth)
    return memo[at]


def _find_handed_on(project: Project, ff: FileFacts, edge: CallEdge, depth: int) -> list[HandedOn]:
    key = _enclosing_key(project, ff, edge)
    if depth <= 0 or key is None or key in project.regions:
        return []
    params = callsites.frame_params(project.functions[key][1])
    positional = [p.name for p in params if p.kind == "pos"]
    names = {p.name for p in params}
    handed = {k: kind[5:] for k, kind in edge.args if kind.startswith("name:") and kind[5:] in names}
    if not handed:
        return []
    out: list[HandedOn] = []
    for cff, cedge, _caller in _callers_of(project, key):
        if cedge.kind == "ref":
            continue  # passed as a value: its arguments are another call's
        given = dict(cedge.args)
        higher: list[HandedOn] | None = None
        for here, name in handed.items():
            at = f"#{positional.index(name)}" if name in positional else None
            there = at if at in given else name if name in given else None
            if there is None:
                continue  # the default: one value
            if higher is None:
                higher = _handed_on(project, cff, cedge, depth - 1)
            above = [(here, f, e, t) for h, f, e, t in higher if h == there]
            out.extend(above or [(here, cff, cedge, there)])
    return out


def _facts_at(
    project: Project | None, call: callsites.RootCall, table: str
) -> list[tuple[str, str, str, Loc]]:
    """(argument key at ``call``, the item's rest after ``@``, path, call location) for the items of
    ``VariantFacts.<table>`` (``sizes``, ``batches``: ``"<argkey>@<rest>"``) recorded at ``call``,
    and at the calls up the chain for its arguments handed on through the calling function's
    parameters (``_handed_on``: ``evaluate(fast, x)`` in a loop where ``x`` changes size)."""
    out = []
    rows: list[tuple[str | None, FileFacts, CallEdge, str | None]] = [
        (None, call.caller_file, call.edge, None)
    ]
    if project is not None:
        rows.extend(_handed_on(project, call.caller_file, call.edge))
    for here, ff, edge, there in rows:
        vf = ff.variant_facts
        items = getattr(vf, table).get(f"{edge.loc.line}:{edge.loc.col}", ()) if vf is not None else ()
        for item in items:
            argkey, _, rest = item.partition("@")
            if there is None or argkey == there:
                out.append((here or argkey, rest, ff.path, edge.loc))
    return out


def _arg_rows(project: Project | None, call: callsites.RootCall) -> list[tuple[Any, str, str, Loc]]:
    """(parameter of the root, argument kind, path, location of the call making it) for ``call``'s
    arguments (``"a" if c else "b"`` expanded: ``_with_choices``); an argument handed on through
    the calling function's parameter takes what the calls up the chain pass (``_handed_on``)."""
    handed = _handed_on(project, call.caller_file, call.edge) if project is not None else []
    lifted = {here for here, *_ in handed}
    own = _with_choices(call)
    kept = tuple(a for a in own.edge.args if a[0] not in lifted)
    mine = dataclasses.replace(own, edge=dataclasses.replace(own.edge, args=kept))
    out = [(p, kind, call.caller_file.path, call.edge.loc) for p, kind in callsites.map_args(mine)]
    for here, ff, edge, there in handed:
        up = _with_choices(callsites.RootCall(call.root_key, edge, ff, call.params))
        moved = tuple((here, kind) for k, kind in up.edge.args if k == there)
        view = dataclasses.replace(call, edge=dataclasses.replace(call.edge, args=moved))
        out.extend((p, kind, ff.path, edge.loc) for p, kind in callsites.map_args(view))
    return out


INHERIT_DEPTH = 3  # calling functions walked up for a grad mode / autocast a call does not set itself
Inherited = dict[CallId, dict[str, list[tuple[str, Source]]]]


def _inherited_modes(project: Project, calls: list[callsites.RootCall]) -> Inherited:
    """Call id -> {"grad:" / "autocast:" -> (mode, source) pairs} for the calls that set no grad
    mode or autocast themselves, made in a function that its callers call under one
    (``with torch.no_grad(): action = agent.act(obs)``, ``act`` calling ``self(obs)`` of a
    module compiled in place): the global state is the callers', so the call takes their modes.
    Only where some caller sets a mode: a function every caller calls plainly changes nothing.
    A call inside a compiled region is left as it is (inlined, it guards the outer frame)."""
    out: Inherited = {}
    for call in calls:
        own = _context(call)
        key = _enclosing_key(project, call.caller_file, call.edge)
        if key is None or key in project.regions:
            continue
        for prefix, default in (("grad:", "grad"), ("autocast:", "fp32")):
            if any(t.startswith(prefix) for t in own):
                continue
            modes = _caller_modes(project, key, prefix, default, INHERIT_DEPTH, {key})
            if modes and any(m != default for m, _ in modes):
                out.setdefault(_call_id(call), {})[prefix] = modes
    return out


def _enclosing_key(project: Project, ff: FileFacts, edge: CallEdge) -> str | None:
    """The key of the function whose calls hold ``edge`` (None: a module-level call)."""
    index = project.memo.setdefault("variants_edge_owner", {})
    if ff.path not in index:
        index[ff.path] = {
            id(e): f"{ff.path}::{fn.qualname}" for fn in ff.functions.values() for e in fn.calls
        }
    return index[ff.path].get(id(edge))


def _callers_of(project: Project, key: str) -> list[tuple[FileFacts, CallEdge, FunctionFacts | None]]:
    """The call edges of the project that call the function ``key`` (memoised per key): its
    name called on an instance, on ``self``, through a name or an import."""
    memo = project.memo.setdefault("variants_mode_callers", {})
    if key in memo:
        return memo[key]
    tff, tfn = project.functions[key]
    cls_key = f"{tff.path}::{tfn.cls}" if tfn.cls else None
    out = []
    for ff in project.files.values():
        for edge, caller in _all_edges(ff):
            if tfn.name not in (edge.method, edge.target.rpartition(".")[2]):
                continue
            if caller is not None:
                hit = any(k == key for k, _ in project.edge_targets(ff, caller, edge))
            elif edge.kind == "name":
                hit = project.resolve(edge.target, ff) == ("function", key)
            else:
                hit = cls_key is not None and any(
                    project.find_method(k, tfn.name) == key
                    for k in _receiver_classes(project, ff, None, edge)
                )
            if hit:
                out.append((ff, edge, caller))
    memo[key] = out
    return out


def _caller_modes(
    project: Project, key: str, prefix: str, default: str, depth: int, seen: set[str]
) -> list[tuple[str, Source]]:
    """The grad modes (``prefix`` "grad:") or autocast settings ("autocast:") the calls of the
    function ``key`` make, each with where it is set; a call that sets none takes its own
    function's callers' (``depth`` functions up), else ``default`` at the call."""
    out: list[tuple[str, Source]] = []
    for ff, edge, caller in _callers_of(project, key):
        vf = ff.variant_facts
        tags = [
            t
            for t in (vf.contexts.get(f"{edge.loc.line}:{edge.loc.col}", ()) if vf else ())
            if t.startswith(prefix)
        ]
        if tags:
            mode, _, pos = tags[-1][len(prefix) :].partition("@")
            for m in mode.split("|"):
                if prefix == "autocast:":
                    value, note = (
                        (f"autocast({m})" if m != "default" else "autocast"),
                        "called inside autocast",
                    )
                else:
                    what = {"no_grad": "torch.no_grad()", "inference_mode": "torch.inference_mode()"}.get(m)
                    value, note = m, (f"called under {what}" if what else "called with grad mode on")
                out.append((value, Source(ff.path, _loc_of(pos), note)))
            continue
        up = f"{ff.path}::{caller.qualname}" if caller is not None else None
        if up is not None and depth > 1 and up not in seen and up not in project.regions:
            higher = _caller_modes(project, up, prefix, default, depth - 1, seen | {up})
            if higher:
                out.extend(higher)
                continue
        note = "called with grad mode on" if default == "grad" else "called without autocast"
        out.append((default, Source(ff.path, edge.loc, note)))
    return out


def _take_inherited(
    call: callsites.RootCall,
    prefix: str,
    inherited: Inherited | None,
    seen: dict[str, list[Source]],
    per_call: dict[CallId, frozenset[str]],
) -> bool:
    """Record the modes ``call`` takes from its function's callers (``_inherited_modes``), if any."""
    modes = (inherited or {}).get(_call_id(call), {}).get(prefix)
    if not modes:
        return False
    for value, source in modes:
        seen.setdefault(value, []).append(source)
    per_call[_call_id(call)] = frozenset(value for value, _ in modes)
    return True


def _grad_dimension(calls: list[callsites.RootCall], inherited: Inherited | None = None) -> Dimension | None:
    seen: dict[str, list[Source]] = {}
    per_call: dict[CallId, frozenset[str]] = {}
    for call in calls:
        tags = [t for t in _context(call) if t.startswith("grad:")]
        path = call.caller_file.path
        if not tags and _take_inherited(call, "grad:", inherited, seen, per_call):
            continue
        if not tags:
            seen.setdefault("grad", []).append(Source(path, call.edge.loc, "called with grad mode on"))
            per_call[_call_id(call)] = frozenset(("grad",))
            continue
        mode, _, pos = tags[-1][5:].partition("@")
        per_call[_call_id(call)] = frozenset(mode.split("|"))
        for m in mode.split("|"):
            what = {"no_grad": "torch.no_grad()", "inference_mode": "torch.inference_mode()"}.get(m)
            note = f"called under {what}" if what else "called with grad mode on"
            seen.setdefault(m, []).append(Source(path, _loc_of(pos), note))
    if len(seen) < 2:
        return None
    order: list[str] = [m for m in ("grad", "no_grad", "inference_mode") if m in seen]
    sources = [s for m in order[1:] for s in seen[m]] + seen[order[0]]
    return Dimension(
        "grad_mode",
        "GLOBAL_STATE grad_mode",
        order,
        True,
        _dedupe(sources),
        "warm up each grad mode before timing or serving, or call it under one mode only "
        "(inference_mode and no_grad are two different variants)",
        per_call=per_call,
    )


def _autocast_dimension(
    calls: list[callsites.RootCall], inherited: Inherited | None = None
) -> Dimension | None:
    seen: dict[str, list[Source]] = {}
    per_call: dict[CallId, frozenset[str]] = {}
    for call in calls:
        tags = [t for t in _context(call) if t.startswith("autocast:")]
        if not tags and _take_inherited(call, "autocast:", inherited, seen, per_call):
            continue
        if not tags:
            seen.setdefault("fp32", []).append(
                Source(call.caller_file.path, call.edge.loc, "called without autocast")
            )
            per_call[_call_id(call)] = frozenset(("fp32",))
            continue
        dtype, _, pos = tags[-1][9:].partition("@")
        value = f"autocast({dtype})" if dtype != "default" else "autocast"
        seen.setdefault(value, []).append(
            Source(call.caller_file.path, _loc_of(pos), "called inside autocast")
        )
        per_call[_call_id(call)] = frozenset((value,))
    if len(seen) < 2:
        return None
    order = sorted(seen, key=lambda m: m != "fp32")
    sources = [s for m in order[1:] for s in seen[m]] + seen[order[0]]
    return Dimension(
        "autocast",
        "GLOBAL_STATE autocast_enabled",
        order,
        True,
        _dedupe(sources),
        "call it under the same autocast setting every time, or warm up both",
        per_call=per_call,
    )


def _batch_dimension(
    calls: list[callsites.RootCall], dynamic: Any, project: Project | None = None
) -> Dimension | None:
    if dynamic is True:
        return None
    sources = []
    for call in calls:
        for _argkey, pos, path, _loc in _facts_at(project, call, "batches"):
            sources.append(
                Source(path, _loc_of(pos), "DataLoader keeps a smaller last batch (drop_last=False)")
            )
    if not sources:
        return None
    return Dimension(
        "batch",
        "tensor size mismatch at index 0 (batch)",
        ["full batch", "last batch"],
        True,
        _dedupe(sources),
        "pass drop_last=True, or torch._dynamo.mark_dynamic(x, 0) before the first call",
        becomes_dynamic=dynamic is None,
        changes_with="last",
    )


SIZE_NOTES = {
    "grows": "a tensor that grows on every iteration (torch.cat onto itself)",
    "varies": "a tensor whose size is set per iteration",
    "last": "a slice x[i:i + n] of a range(a, b, n) loop (the last one is shorter)",
}
STRUCTURE_NOTES = {
    "keys": ("a dict whose keys are picked per iteration", "dict keys of `{}` (one graph per key set)"),
    "length": ("a list whose length is set per iteration", "len({}) (one graph per length)"),
    "items": (
        "another object of the loop on each iteration",
        "attributes of `{}` read inside (each new value recompiles; floats then go dynamic)",
    ),
}


def _structure_dimension(project: Project, calls: list[callsites.RootCall]) -> list[Dimension]:
    """Python containers and objects whose structure changes between the iterations of the loop
    around the call (``analysis.callctx``): a dict built with keys picked per iteration, a list
    whose length is, a config object the loop takes from a list (``for cfg in phases``; only for
    a parameter typed as a project class that is not a module).  Dynamo guards a dict's keys, a
    list's length and the attributes read off an object: each new one compiles (measured, torch
    2.13: ``len(feats) != 2``, ``crops`` changed length, ``cfg.temperature`` changed).  Counted
    as 2, the least such a loop makes: how many distinct ones come is the data's."""
    found: dict[tuple[str, str], list[Source]] = {}
    for call in calls:
        vf = call.caller_file.variant_facts
        fed = vf.sizes.get(f"{call.edge.loc.line}:{call.edge.loc.col}", ()) if vf is not None else ()
        for item in fed:
            argkey, _, rest = item.partition("@")
            how = rest.rpartition("|")[2]
            name = _param_name(call, argkey) if how in STRUCTURE_NOTES else None
            if name is None:
                continue
            if how == "items":
                param = next(p for p in call.params if p.name == name)
                ty = param.ty
                cls = project.class_key_for(ty.ref, call.caller_file) if ty.kind == T.INSTANCE else None
                if cls is None or project.is_module_class(cls):
                    continue
            found.setdefault((name, how), []).append(
                Source(call.caller_file.path, call.edge.loc, STRUCTURE_NOTES[how][0])
            )
    return [
        Dimension(
            "structure",
            STRUCTURE_NOTES[how][1].format(name),
            ["first", "another"],
            True,
            _dedupe(sources),
            "pass the same structure every call (fixed keys, padded lists; numbers as 0-d tensors), "
            "or warm up each one; every distinct one is a compile",
        )
        for (name, how), sources in sorted(found.items())
    ]


Frozen = tuple[str, tuple[str, ...]]  # (the class of the object named, the attribute path below it)

GUESSED_MODULE = " (of a module tclint cannot tell)"  # a requires_grad change counted everywhere, as a guess


def _param_grad_dimension(project: Project, key: str, fn: FunctionFacts) -> Dimension | None:
    """A module's parameters frozen and unfrozen by eager code between calls (``for p in
    m.backbone.parameters(): p.requires_grad = flag``, ``m.head.requires_grad_(False)``): Dynamo
    guards each parameter's requires_grad, so the phase after the flip compiles again (measured,
    torch 2.13: ``requires_grad mismatch`` on ``self.backbone...bias``, 2 compiles).  Counts the
    changes on the parameters this root's graph reads (a module of its region: its class, a
    submodule, a module a function of the region calls, or a module inside it) that may run
    after a call of it: both values (or one computed at run time), or one value other than the
    module's state at the first call (as built: True, or what the last change before any call
    set).  A change before any call (``_before_any_call``: LoRA's ``base.requires_grad_(False)``
    before the loop) is the state every call sees: 1 compile (measured).  A compiled callable
    that never reads the frozen module compiles once (measured: a GAN freezing D for the G step,
    the compiled G; a fine-tune freezing the base of one model, a compiled critic next to it).  A
    change whose module cannot be told (``_frozen_modules``) counts for every compiled module
    method, as a guess, and only with both values."""
    flips: dict[str, list[Source]] = {}
    initial: dict[tuple[Frozen, ...], tuple[tuple[str, int, int], str]] = {}  # modules -> last change
    late: list[tuple[str, tuple[Frozen, ...]]] = []  # the changes on known modules after a call
    for flag, source, frozen, (ff, caller, edge) in _param_flips(project):
        if frozen is None:
            if fn.cls is None:
                continue
            source = dataclasses.replace(source, note=source.note + GUESSED_MODULE)
        elif not any(_reads_frozen(project, key, fn, node) for node in frozen):
            continue
        if _before_any_call(project, key, ff, caller, edge) or _entry_before_calls(
            project, key, ff, caller, edge
        ):
            if frozen is not None:
                at = (source.path, source.loc.line, source.loc.col)
                if tuple(frozen) not in initial or initial[tuple(frozen)][0] < at:
                    initial[tuple(frozen)] = (at, flag)
            continue
        if frozen is not None:
            late.append((flag, tuple(frozen)))
        for value in ("False", "True") if flag == "?" else (flag,):
            flips.setdefault(value, []).append(source)
    if not flips:
        return None
    if set(flips) in ({"True"}, {"False"}):  # one value: a change only from another first state
        first = {modules: flag for modules, (_, flag) in initial.items()}
        if not any(first.get(modules, "True") != flag for flag, modules in late):
            return None
    sources = [s for flag in ("False", "?", "True") for s in flips.get(flag, [])]
    return Dimension(
        "requires_grad",
        "tensor (parameter) requires_grad mismatch",
        ["as built", "flipped"],
        True,
        _dedupe(sources),
        "freeze before the first compiled call and keep it (or compile after the last flip); each "
        "requires_grad pattern of the parameters is a compile",
    )


FlipAt = tuple[FileFacts, FunctionFacts | None, CallEdge]  # where a change runs (_flip_edge)


def _entry_before_calls(
    project: Project, root_key: str, ff: FileFacts, caller: FunctionFacts | None, edge: CallEdge
) -> bool:
    """Whether a requires_grad change runs in a module-level function the project never calls (an
    entry point run by a test, ``fire.Fire(main)``, a click command), outside its loops and before
    its first call of ``root_key`` (it makes one): it runs once, before those calls (measured,
    torch 2.13: ``def main(): net.fc.requires_grad_(False); for ...: model(x)``, 1 compile).
    ``_before_any_call`` asks for callers that all run before the compile; an entry has none."""
    if caller is None or caller.cls is not None or edge.in_loop:
        return False
    if _callers(project).get(f"{ff.path}::{caller.qualname}"):
        return False
    into = {id(c.edge) for c in project.memo.get("variants_calls", {}).get(root_key, ())}
    calls = [(e.loc.line, e.loc.col) for e in caller.calls if id(e) in into]
    return bool(calls) and min(calls) > (edge.loc.line, edge.loc.col)


def _param_flips(project: Project) -> list[tuple[str, Source, list[Frozen] | None, FlipAt]]:
    """(flag, where, the modules whose parameters it sets or None, the call that runs it) for
    every requires_grad change of the project's eager code (``VariantFacts.param_grads``)
    (memoised per project)."""
    cached = project.memo.get("variants_flips")
    if cached is not None:
        return cached
    from tclint.rules.libfollow import LIBRARY_MEMO

    libraries = project.memo.get(LIBRARY_MEMO) or {}
    out = []
    for ff in project.files.values():
        vf = ff.variant_facts if ff.path not in libraries else None
        for item in vf.param_grads if vf is not None else ():
            pos, flag, rest = item.split("|", 2)
            module, _, marks = rest.partition("|")
            loc = _loc_of(pos)
            source = Source(ff.path, loc, "sets parameters' requires_grad")
            flip_at = _flip_edge(ff, loc, "L" in marks)
            frozen = _frozen_modules(project, ff, loc, module)
            if frozen is None and "N" in marks:
                continue  # `x.requires_grad_()` on a name that holds no module tclint can tell: an input
            out.append((flag, source, frozen, flip_at))
    project.memo["variants_flips"] = out
    return out


def _flip_edge(ff: FileFacts, loc: Loc, looped: bool) -> FlipAt:
    """The function a requires_grad change at ``loc`` is in, and a call edge standing for the
    change (``looped``: it runs in a loop of that function other than its own ``for p in
    m.parameters():`` loop), for ``_before_any_call`` to tell whether it runs before any call."""
    edge = CallEdge("method", "", "requires_grad_", loc, in_loop=looped)
    return ff, _enclosing(ff, loc.line), edge


def _enclosing(ff: FileFacts, line: int) -> FunctionFacts | None:
    """The innermost function of ``ff`` whose body holds ``line`` (None: module-level code)."""
    best = None
    for fn in ff.functions.values():
        if fn.loc.line <= line <= fn.loc.end_line and (best is None or fn.loc.line >= best.loc.line):
            best = fn
    return best


def _frozen_modules(project: Project, ff: FileFacts, loc: Loc, module: str) -> list[Frozen] | None:
    """The modules a requires_grad change at ``loc`` sets the parameters of, as (class of the
    first name, attribute path): ``D`` (a module-level ``D = Disc()``), ``model.base`` (a local
    ``model = Adapted()``, by the call it was assigned from), ``self.backbone`` (the method's
    class), ``net`` (a parameter: what every caller passes); None when it cannot be told."""
    dotted, _, origin = module.rpartition("@")
    if not dotted:
        return None
    root, *path = dotted.split(".")
    owners = _name_classes(project, ff, _enclosing(ff, loc.line), root, origin, 0)
    return [(owner, tuple(path)) for owner in owners] if owners else None


def _name_classes(
    project: Project, ff: FileFacts, fn: FunctionFacts | None, name: str, origin: str, depth: int
) -> list[str]:
    """The module classes a plain name stands for in ``fn`` (or module-level code); [] unknown."""
    if fn is not None and fn.cls is not None and name == (fn.self_name or "self"):
        return [f"{ff.path}::{fn.cls}"]
    if origin:
        line, col = (int(p) for p in origin.split(":")[:2])
        for site in ff.compile_sites:
            if (site.loc.line, site.loc.col) == (line, col):
                return _site_classes(project, site.id)
        for edge in fn.calls if fn is not None else ff.module_calls:
            if (edge.loc.line, edge.loc.col) == (line, col) and edge.kind == "name":
                found = project.resolve(edge.target, ff)
                if found is not None and found[0] == "class":
                    return [found[1]]
                return project.deferred_class_keys(edge.target, ff)  # a factory's return
        return []
    if fn is not None and fn.cls is None and depth < 3:
        names = [p.name for p in fn.params]
        if name in names:
            return _passed_as(project, ff, fn, names.index(name), name, depth)
    ty = ff.module_vars.get(name)
    if ty is None:  # a local compiled where it is named: `cD = torch.compile(D)` in the same function
        where = fn.qualname if fn is not None else None
        arg = re.compile(r"[\w.]+\(\s*" + re.escape(name) + r"\s*[,)]")
        return [
            k
            for site in ff.compile_sites
            if site.func == where and arg.match(site.text)
            for k in _site_classes(project, site.id)
        ]
    if ty.kind == T.COMPILED:
        return _site_classes(project, ty.ref)
    return project.class_keys_for(ty.ref, ff) if ty.kind == T.INSTANCE else []


def _passed_as(
    project: Project, ff: FileFacts, fn: FunctionFacts, i: int, name: str, depth: int
) -> list[str]:
    """The module classes every caller of ``fn`` passes as its parameter ``i`` (``set_requires_grad(D,
    False)``); [] when a caller passes something else or ``fn`` is handed on as a value."""
    out: list[str] = []
    calls = _callers(project).get(f"{ff.path}::{fn.qualname}", [])
    for cff, cfn, cedge in calls:
        kind = dict(cedge.args).get(f"#{i}", dict(cedge.args).get(name)) if cedge is not None else None
        if kind is None or not kind.startswith("name:"):
            return []
        got = _name_classes(project, cff, cfn, kind[5:], "", depth + 1)
        if not got:
            return []
        out.extend(got)
    return out


def _site_classes(project: Project, site_id: str | None) -> list[str]:
    """The classes of the compiled module methods a compile site compiles."""
    out = []
    for key in project.site_targets.get(site_id or "", ()):
        if key in project.functions:
            rff, fn = project.functions[key]
            if fn.cls is not None:
                out.append(f"{rff.path}::{fn.cls}")
    return out


def _reads_frozen(project: Project, key: str, fn: FunctionFacts, frozen: Frozen) -> bool:
    """Whether the compiled root ``key`` reads the parameters of ``frozen``: the object named is
    one of its region's modules (its class or a base, a submodule, a module a function of the
    region calls), or the frozen attribute path holds one (``model.blocks`` frozen, the compiled
    ``Block.forward``)."""
    region = _region_classes(project, key, fn)
    return frozen[0] in region or bool(_frozen_inside(project, frozen) & region)


def _frozen_inside(project: Project, frozen: Frozen) -> set[str]:
    """The module classes inside the attribute path ``frozen`` names (``_reads_frozen``), kept
    per project: it does not depend on the root asked about (transformers: 645 compiled forwards
    asked about the same few changes)."""
    index = project.memo.setdefault("variants_frozen_inside", {})
    kept: set[str] | None = index.get(frozen)
    if kept is not None:
        return kept
    owner, path = frozen
    current = [owner]
    for attr in path:
        below: list[str] = []
        for cls_key in current:
            found = project.find_attr(cls_key, attr) if cls_key in project.classes else None
            if found is not None:
                below.extend(k for ref in found[1].refs for k in project.class_keys_for(ref, found[0]))
        current = below
    inside = index[frozen] = {k for cls_key in current for k in project.submodule_classes(cls_key, True)}
    return inside


def _region_classes(project: Project, key: str, fn: FunctionFacts) -> set[str]:
    """The module classes whose parameters the compiled root ``key`` reads: its class with its
    bases and submodules, and the classes of the methods its region calls (memoised)."""
    index = project.memo.setdefault("variants_region_classes", {})
    found = index.get(key)
    if found is not None:
        return found
    classes: set[str] = set()
    if fn.cls is not None:
        classes.update(project.submodule_classes(f"{key.partition('::')[0]}::{fn.cls}", True))
    for member in {*_region_members(project).get(key, [key]), *_called_from(project, key)}:
        got = project.functions.get(member)
        if got is not None and got[1].cls is not None:
            classes.add(f"{got[0].path}::{got[1].cls}")
    out = {
        base for cls_key in classes if cls_key in project.classes for base in project.mro(cls_key)
    } | classes
    index[key] = out
    return out


CALLED_LIMIT = 400  # functions followed from one root (a bound, not a tuning: real regions are far smaller)


def _called_from(project: Project, key: str) -> set[str]:
    """The project functions ``key`` calls, transitively.  ``project.regions`` keeps each
    function in one region only, so a module another compile site compiles on its own (a
    ``Head(enc)`` compiled next to ``enc``) is not among the members of the root that calls it,
    yet Dynamo inlines it there and guards its parameters (measured, torch 2.13: the compiled
    ``Head`` compiles again after ``enc.requires_grad_(False)``, 2 frames)."""
    seen = {key}
    todo = [key]
    while todo and len(seen) < CALLED_LIMIT:
        for target in _callees(project, todo.pop()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def _callees(project: Project, key: str) -> tuple[str, ...]:
    """The functions ``key``'s call edges reach (``edge_targets``, in edge order, each once),
    kept per project: every root's ``_called_from`` walks the same functions (transformers:
    645 compiled forwards sharing their helpers), and ``edge_targets`` is a function of the built
    project (``swap_file`` drops this memo with the others derived from a file's facts)."""
    index = project.memo.setdefault("variants_callees", {})
    found = index.get(key)
    if found is None:
        got = project.functions.get(key)
        if got is None:
            found = ()
        else:
            ff, fn = got
            found = tuple(
                dict.fromkeys(t for edge in fn.calls for t, _ in project.edge_targets(ff, fn, edge))
            )
        index[key] = found
    return found


def _size_dimension(
    calls: list[callsites.RootCall], dynamic: Any, project: Project | None = None
) -> Dimension | None:
    """Tensor arguments whose size changes between the iterations of the loop around the call
    (``analysis.callctx``: a factory given a size bound in the loop, ``torch.cat`` growth, a local
    generator yielding such tensors): static first, then one dynamic variant (automatic dynamic
    shapes; measured: a growing generation loop and per-step batch sizes compile twice).  Under
    ``dynamic=False`` the looped-call dimension says it (every size is a variant); under
    ``dynamic=True`` there is nothing to add."""
    if dynamic is True or dynamic is False:
        return None
    sources = []
    hows = set()
    for call in calls:
        for _argkey, rest, path, loc in _facts_at(project, call, "sizes"):
            _pos, _, how = rest.rpartition("|")
            if how in STRUCTURE_NOTES:
                continue  # a dict's keys, a list's length, a config object: _structure_dimension
            hows.add(how)
            sources.append(Source(path, loc, SIZE_NOTES.get(how, SIZE_NOTES["varies"])))
    if not sources:
        return None
    return Dimension(
        "size",
        "tensor size mismatch (sizes that change per iteration)",
        ["first size", "dynamic"],
        True,
        _dedupe(sources),
        "2 compiles (static, then dynamic); torch._dynamo.mark_dynamic on the first call compiles once, padding to a few sizes keeps it static",
        becomes_dynamic=True,
        changes_with="last" if hows == {"last"} else "iteration",
    )


def _dedupe(sources: list[Source]) -> list[Source]:
    out, seen = [], set()
    for s in sources:
        k = (s.path, s.loc.line, s.loc.col)
        if k not in seen:
            seen.add(k)
            out.append(s)
    return out


# -- train / eval ------------------------------------------------------------------------------------
def _mode_edges(project: Project) -> list[tuple[str, str, FileFacts, CallEdge, FunctionFacts | None]]:
    """(class key, mode, file, edge, caller) for every ``.train(...)`` / ``.eval()`` whose receiver
    resolves to a module class: directly, through a factory's return, through a compiled object,
    through ``self.<attr>``, or through an element of a module container (``net = _outer[0]`` after
    regional compilation)."""
    out = []
    for ff in project.files.values():
        for edge, caller in _all_edges(ff):
            if edge.method not in ("train", "eval"):
                continue
            mode = _mode_of(edge)
            for cls_key in _receiver_classes(project, ff, caller, edge):
                out.append((cls_key, mode, ff, edge, caller))
    return out


def _all_edges(ff: FileFacts):  # type: ignore[no-untyped-def]
    for edge in ff.module_calls:
        yield edge, None
    for fn in ff.functions.values():
        for edge in fn.calls:
            yield edge, fn


def _mode_of(edge: CallEdge) -> str:
    if edge.method == "eval":
        return "eval"
    arg = dict(edge.args).get("#0", dict(edge.args).get("mode"))
    if arg is None or arg == "const:True":
        return "train"
    if arg == "const:False":
        return "eval"
    return "train|eval"


def _receiver_classes(
    project: Project, ff: FileFacts, caller: FunctionFacts | None, edge: CallEdge
) -> list[str]:
    if edge.kind == "instance":
        return project.class_keys_for(edge.target, ff)
    if edge.kind == "deferred":  # model = build_model(cfg); model.train()
        return project.deferred_class_keys(edge.target, ff)
    if edge.kind == "compiled":
        out = []
        for key in project.site_targets.get(edge.target, ()):
            if key in project.functions:
                rff, fn = project.functions[key]
                if fn.cls is not None:
                    out.append(f"{rff.path}::{fn.cls}")
        return out
    if edge.kind == "self" and caller is not None and caller.cls is not None and "." not in edge.target:
        found = project.find_attr(f"{ff.path}::{caller.cls}", edge.target)
        if found is not None:
            aff, spec = found
            return [k for ref in spec.refs for k in project.class_keys_for(ref, aff)]
    if edge.kind == "elem":
        container = edge.target
        if "|" not in container and not container.startswith(T.CLASSES):
            owner = (
                project.classes.get(f"{ff.path}::{caller.cls}") if caller is not None and caller.cls else None
            )
            if owner is None:
                return []
            container = f"{owner[0].module}.{owner[1].qualname}|{container}"
        return project.elements_of(container, ff)[0]
    return []


def _training_sensitive(project: Project, cls_key: str, depth: int = 0) -> bool:
    """Whether a module's graph depends on ``training``: a Dropout/BatchNorm-like submodule, or a
    method reading ``self.training``, in the class, its bases or its submodules."""
    if depth > 6:
        return False
    for key in project.mro(cls_key) or [cls_key]:
        path, _, qual = key.partition("::")
        ff = project.files.get(path)
        if ff is None:
            continue
        vf = ff.variant_facts
        prefix = f"{ff.module}." if ff.module else ""
        if vf is not None and prefix + qual in vf.training_readers:
            return True
        cf = ff.classes.get(qual)
        if cf is None:
            continue
        for spec in cf.attrs.values():
            if any(ref.rsplit(".", 1)[-1].startswith(TRAINING_SENSITIVE) for ref in spec.refs):
                return True
    for sub in project.submodule_classes(cls_key, False):
        if sub != cls_key and _training_sensitive(project, sub, depth + 1):
            return True
    return False


def _training_dimension(
    project: Project,
    ff: FileFacts,
    fn: FunctionFacts,
    modes: list[tuple[str, str, FileFacts, CallEdge, FunctionFacts | None]],
    calls: list[callsites.RootCall],
) -> Dimension | None:
    """Train/eval as a dimension of a compiled ``forward``: the modes set on its module (or a base,
    a subclass) between calls.  A mode set before the compiled callable can have been called (the
    ``.eval()`` of the module it is built from) is its initial state: a value, not a flip.  The
    mode at each call is the one of the calling function's ``.train()`` / ``.eval()`` statements
    on the module that may have run last (``VariantFacts.modes``); both where none is seen."""
    if fn.cls is None or fn.name != "forward":
        return None
    cls_key = f"{ff.path}::{fn.cls}"
    root_key = f"{ff.path}::{fn.qualname}"
    related = set(project.mro(cls_key) or [cls_key]) | {cls_key}
    seen: dict[str, list[Source]] = {}
    initial: set[str] = set()
    setters: set[tuple[str, int, int]] = set()  # where this module's mode is set
    for key, mode, mff, edge, caller in modes:
        if key in related or cls_key in (project.mro(key) or ()):
            setters.add((mff.path, edge.loc.line, edge.loc.col))
            if _before_any_call(project, root_key, mff, caller, edge):
                initial.update(mode.split("|"))
                continue
            for m in mode.split("|"):
                note = "sets train mode" if m == "train" else "sets eval mode"
                seen.setdefault(m, []).append(Source(mff.path, edge.loc, note))
    if not seen or len(set(seen) | initial) < 2 or not _training_sensitive(project, cls_key):
        return None
    sources = seen.get("eval", []) + seen.get("train", [])
    return Dimension(
        "training",
        f"{fn.cls}.training (a submodule's .training flag)",
        ["train", "eval"],
        True,
        _dedupe(sources),
        "warm up both modes before timing or serving (each is one compile, cached after)",
        per_call={_call_id(c): at for c in calls if (at := _mode_at(c, setters)) is not None},
    )


def _mode_at(call: callsites.RootCall, setters: set[tuple[str, int, int]]) -> frozenset[str] | None:
    """The modes the module can be in at ``call``: those of the calling function's mode
    statements on it that may have run last (``setters``: where its mode is set); None when no
    such statement reaches the call, or one it came in with (``init``) or handed on (``?``) may."""
    vf = call.caller_file.variant_facts
    entries = vf.modes.get(f"{call.edge.loc.line}:{call.edge.loc.col}", ()) if vf is not None else ()
    out: set[str] = set()
    for entry in entries:
        mine = unknown = False
        found: set[str] = set()
        for item in entry.partition("=")[2].split("|"):
            pos, _, mode = item.rpartition("=")
            if not pos:
                unknown = True  # `init` / `?`: the mode it came in with, or one set somewhere else
                continue
            line, col = pos.split(":")[:2]
            mine = mine or (call.caller_file.path, int(line), int(col)) in setters
            found.update(("train", "eval") if mode == "?" else (mode,))
        if mine and unknown:
            return None
        if mine:
            out |= found
    return frozenset(out) if out else None


GUARDED_ATTR_KINDS = ("bool", "str", "int", "float")  # Python values Dynamo guards by value on a module


def _setter_dimension(project: Project, ff: FileFacts, fn: FunctionFacts) -> Dimension | None:
    """A flag the caller flips through a method of the compiled module's class
    (``model.gradient_checkpointing_enable()`` on the wrapper, ``model.set_task(task)``): the
    method assigns a bool/str/int attribute that the compiled ``forward`` reads, and Dynamo guards
    its value (measured: ``self.active_task == 'sentiment'``), so a call after the flip compiles
    again.  Counted as 2 values (the initial one and the one set): a setter given several values
    makes more."""
    if fn.cls is None or fn.name != "forward":
        return None
    cls_key = f"{ff.path}::{fn.cls}"
    found = project.classes.get(cls_key)
    if found is None:
        return None
    cls = found[1]
    read = {e.method[1:] for e in fn.calls if e.kind == "self" and not e.target and e.method.startswith("@")}
    setters: dict[str, str] = {}  # method name -> the attribute it sets
    for name, qual in cls.methods.items():
        setter = ff.functions.get(qual)
        if setter is None or name in ("__init__", "forward"):
            continue
        for path, how, _loc in setter.attr_writes:
            spec = cls.attrs.get(path)
            if how == "assign" and path in read and spec is not None and spec.kind in GUARDED_ATTR_KINDS:
                setters[name] = path
    if not setters:
        return None
    root_key = f"{ff.path}::{fn.qualname}"
    sources: dict[tuple[str, str], list[Source]] = {}  # (attribute, setter) -> the calls
    for eff in project.files.values():
        for edge, caller in _all_edges(eff):
            attr = setters.get(edge.method)
            if attr is None or cls_key not in _receiver_classes(project, eff, caller, edge):
                continue
            if _before_any_call(project, root_key, eff, caller, edge):
                continue  # set before the first call: the initial value
            sources.setdefault((attr, edge.method), []).append(
                Source(
                    eff.path,
                    edge.loc,
                    f"`.{edge.method}()` sets `self.{attr}`, which the compiled forward reads",
                )
            )
    if not sources:
        return None
    (attr, setter_name), srcs = sorted(sources.items())[0]
    return Dimension(
        "attribute",
        f"self.{attr} == <value>",
        ["as built", f"set by .{setter_name}()"],
        True,
        _dedupe(srcs),
        "set the flag once before the first call (or warm up each value); pass it as an argument if it changes per call",
    )


def _first_sites(project: Project, root_key: str) -> dict[tuple[str, str | None], tuple[int, int]]:
    """(file, function qualname or None) -> the end of the first compile site there that compiles
    ``root_key`` (memoised per project)."""
    index = project.memo.get("variants_first_sites")
    if index is None:
        index = {}
        for sff in project.files.values():
            for site in sff.compile_sites:
                end = (site.loc.end_line, site.loc.end_col)
                for key in project.site_targets.get(site.id, ()):
                    slot = index.setdefault(key, {})
                    where = (sff.path, site.func)
                    if where not in slot or end < slot[where]:
                        slot[where] = end
        project.memo["variants_first_sites"] = index
    return index.get(root_key, {})


def _before_any_call(
    project: Project,
    root_key: str,
    ff: FileFacts,
    caller: FunctionFacts | None,
    edge: CallEdge,
    depth: int = 0,
) -> bool:
    """Whether ``edge`` runs before the compiled ``root_key`` exists, so before any call of it: in
    module-level code (or the compile site's own function, outside a loop) no later than the end
    of the first compile site there (``M().eval()`` in the site's argument, ``_m.eval()`` on the
    line before), or in a module-level function whose every call is such a place (the factory
    ``def load(): ...; return m.eval()`` the site compiles the result of)."""
    if depth > 3:
        return False
    firsts = _first_sites(project, root_key)
    where = (ff.path, caller.qualname if caller is not None else None)
    end = firsts.get(where)
    if (
        end is not None
        and (caller is None or not edge.in_loop)
        and (edge.loc.end_line, edge.loc.end_col) <= end
    ):
        return True
    if end is not None and not edge.in_loop and _no_call_between(ff, caller, end, edge):
        return True  # `model = torch.compile(net)` then `model.eval()` with no call in between
    if caller is None or caller.cls is not None or edge.in_loop:
        return False  # (a mode set in a loop of a function runs again after its calls)
    into = {id(c.edge) for c in project.memo.get("variants_calls", {}).get(root_key, ())}
    if any(id(e) in into and (e.loc.line, e.loc.col) < (edge.loc.line, edge.loc.col) for e in caller.calls):
        return False  # the function calls the compiled callable before it sets the mode
    calls = _callers(project).get(f"{ff.path}::{caller.qualname}")
    return (
        calls is not None
        and bool(calls)
        and all(
            cedge is not None and _before_any_call(project, root_key, cff, cfn, cedge, depth + 1)
            for cff, cfn, cedge in calls
        )
    )


def _no_call_between(
    ff: FileFacts, caller: FunctionFacts | None, end: tuple[int, int], edge: CallEdge
) -> bool:
    """Whether the code from ``end`` (the end of the first compile site in the function) to
    ``edge`` makes no call, except setting a mode, moving a module or freezing parameters
    (``.eval()``, ``.to(...)``, ``.requires_grad_(False)``, a ``.parameters()`` loop): the
    compiled object cannot have run before ``edge``."""
    start = (edge.loc.line, edge.loc.col)
    for other in ff.module_calls if caller is None else caller.calls:
        at = (other.loc.line, other.loc.col)
        if other is edge or not end <= at < start:
            continue
        if (
            other.method in ("train", "eval", "parameters", "named_parameters")
            or other.method in SELF_RETURNING_METHODS
        ):
            continue
        return False
    return True


def _callers(project: Project) -> dict[str, list[tuple[FileFacts, FunctionFacts | None, CallEdge | None]]]:
    """Function key -> the edges that call it by name (``f(...)``, a nested ``g(...)``); None for
    an edge passing it as a value (``ref``: where it is called is unknown) (memoised per project)."""
    index = project.memo.get("variants_callers")
    if index is None:
        index = {}
        for ff in project.files.values():
            for edge, caller in _all_edges(ff):
                if edge.kind in ("name", "ref"):
                    found = project.resolve(edge.target, ff)
                    key = found[1] if found is not None and found[0] == "function" else None
                elif edge.kind == "local":
                    key = f"{ff.path}::{edge.target}"
                else:
                    continue
                if key is not None:
                    index.setdefault(key, []).append((ff, caller, edge if edge.kind != "ref" else None))
        project.memo["variants_callers"] = index
    return index


# -- Python scalar arguments -------------------------------------------------------------------------
def _arg_dimensions(
    calls: list[callsites.RootCall], dynamic_false: bool, project: Project | None = None
) -> list[Dimension]:
    by_param: dict[str, tuple[Any, dict[str, list[Source]]]] = {}
    at_call: dict[str, dict[CallId, set[str]]] = {}  # parameter -> the kinds each call passes it
    for call in calls:
        for param, kind, path, loc in _arg_rows(project, call):
            entry = by_param.setdefault(param.name, (param, {}))
            entry[1].setdefault(kind, []).append(Source(path, loc, _arg_note(param.name, kind)))
            at_call.setdefault(param.name, {}).setdefault(_call_id(call), set()).add(kind)
    out = []
    for name, (param, kinds) in by_param.items():
        guard = callsites.specialisation(param, dynamic_false)
        if guard is None and param.ty.kind == T.UNKNOWN and "bool" in kinds and param.uses:
            guard = f"{name} == <True/False>"  # an unannotated flag given a bool: specialised
        unbounded = [k for k in kinds if k in callsites.UNBOUNDED]
        consts = sorted({k.partition(":")[2] for k in kinds if k.startswith(("const:", "choice:"))})
        if (
            guard is None
            and len(consts) >= 2
            and all(c[:1] in ("'", '"') for c in consts)
            and not (param.ty.kind == T.TENSOR and param.ty.conf == T.HIGH)
            and {"load", "cond", "key", "index"} & set(param.uses)
        ):
            # a parameter given strings (`if task == "a":`, `self.heads[task]`) is a constant to
            # Dynamo, guarded by value where it is read (measured, torch 2.13: one compile per task)
            guard = f"{name} == '<value>'"
        if guard is not None and "True/False" in guard:
            varying = any(not k.startswith(("const:", "choice:")) and k != "starred" for k in kinds)
            values = set(consts) | ({"True", "False"} if varying else set())
            if len(values) >= 2:
                srcs = [
                    s
                    for k, ss in sorted(kinds.items(), key=lambda kv: kv[0].startswith("const:"))
                    for s in ss
                ]
                out.append(
                    Dimension(
                        "arg",
                        f"{name} == <True/False>",
                        sorted(values),
                        True,
                        _dedupe(srcs),
                        "2 variants: warm both up, or pass the flag as a tensor (torch.tensor(flag)) and use torch.where",
                        per_call={
                            cid: frozenset(
                                v
                                for k in ks
                                if k != "starred"
                                for v in (
                                    (k.partition(":")[2],)
                                    if k.startswith(("const:", "choice:"))
                                    else ("True", "False")
                                )
                            )
                            for cid, ks in at_call[name].items()
                        },
                    )
                )
            continue
        if guard is not None:
            if unbounded and not (unbounded == ["fstring"] and not guard.startswith(f"{name} == '")):
                srcs = [s for k in unbounded for s in kinds[k]]
                out.append(
                    Dimension(
                        "arg",
                        guard,
                        [callsites.UNBOUNDED[k] for k in unbounded],
                        False,
                        _dedupe(srcs),
                        "bucket the value to a few sizes, pass it as a 0-d tensor, or keep it out of the compiled function",
                    )
                )
            elif len(consts) >= 2:
                srcs = [
                    s
                    for k, ss in sorted(kinds.items(), key=lambda kv: kv[0].startswith("const:"))
                    if k.startswith(("const:", "choice:"))
                    for s in ss
                ]
                out.append(
                    Dimension(
                        "arg",
                        guard,
                        consts,
                        True,
                        _dedupe(srcs),
                        "warm up every value before serving",
                        per_call={
                            cid: frozenset(k.partition(":")[2] for k in ks)
                            for cid, ks in at_call[name].items()
                            if all(k.startswith(("const:", "choice:")) for k in ks)
                        },
                    )
                )
            continue
        ty = param.ty
        # an unannotated parameter given a loop counter, a length or a clock value: a Python
        # number that changes per call (measured: `greedy(q, obs, 1.0 + ep)` compiles twice)
        # (also a `forward` parameter only guessed to be a tensor: `model(x, t)` given a counter)
        guessed = ty.kind == T.UNKNOWN or ty.kind == T.TENSOR and ty.conf != T.HIGH
        numeric = guessed and bool(unbounded) and "fstring" not in unbounded
        if (ty.kind == T.SCALAR and ty.dtype in ("int", "float") or numeric) and (
            len(consts) >= 2 or unbounded
        ):
            srcs = [s for ss in kinds.values() for s in ss]
            out.append(
                Dimension(
                    "arg",
                    f"{name} == <value>, then dynamic",
                    ["first value", "dynamic"],
                    True,
                    _dedupe(srcs),
                    "becomes dynamic after the second value: 2 compiles; pass a 0-d tensor to compile once",
                    becomes_dynamic=True,
                    # a counter / clock changes on the loop's second iteration; constants between calls
                    changes_with="iteration" if unbounded else "calls",
                )
            )
    return out


def _with_choices(call: callsites.RootCall) -> callsites.RootCall:
    """The call with each ``"a" if c else "b"`` argument expanded into both constants."""
    vf = call.caller_file.variant_facts
    picks = vf.choices.get(f"{call.edge.loc.line}:{call.edge.loc.col}") if vf is not None else None
    if not picks:
        return call
    alternatives = {}
    for pick in picks:
        argkey, _, values = pick.partition("=")
        alternatives[argkey] = values.split("|")
    args: list[tuple[str, str]] = []
    for argkey, kind in call.edge.args:
        if argkey in alternatives:
            args.extend((argkey, "choice:" + v) for v in alternatives[argkey])
        else:
            args.append((argkey, kind))
    return dataclasses.replace(call, edge=dataclasses.replace(call.edge, args=tuple(args)))


def _arg_note(name: str, kind: str) -> str:
    if kind.startswith("const:"):
        return f"passes const:{kind[6:]} as `{name}`"
    if kind.startswith("choice:"):
        return f"passes one of two constants as `{name}` (`a if c else b`)"
    if kind in callsites.UNBOUNDED:
        return f"passes {callsites.UNBOUNDED[kind]} as `{name}`"
    return f"passes a value computed at run time as `{name}`"


# -- input tensors: dtype, device, requires_grad -------------------------------------------------------
CAST_FAMILIES = {
    "dtype": (
        "dtype mismatch",
        "cast the inputs to one dtype before the call, or warm up each dtype (one compile per dtype)",
    ),
    "device": ("device mismatch", "move the inputs to one device before the call (one compile per device)"),
    "requires_grad": (
        "requires_grad mismatch",
        "call it with inputs of one requires_grad setting (detach, or requires_grad_() on every call), or warm up both",
    ),
    "single": (
        "size 1 (specialised)",
        "a batch of one compiles its own graph (Dynamo specialises size 1): warm it up, or pad single requests to 2",
    ),
}


def _param_name(call: callsites.RootCall, argkey: str) -> str | None:
    if argkey.startswith("#"):
        positional = [p for p in call.params if p.kind == "pos"]
        i = int(argkey[1:])
        return positional[i].name if i < len(positional) else None
    return argkey if any(p.name == argkey for p in call.params) else None


def _cast_dimensions(calls: list[callsites.RootCall]) -> list[Dimension]:
    """Input tensors passed cast at some calls only (``model(x.half())`` and ``model(x)``; an
    adversarial input after ``requires_grad_()``): one variant per dtype / device / requires_grad.
    A device counts only between two explicit moves (``x.cpu()`` and ``x.cuda()``)."""
    seen: dict[tuple[str, str], dict[str, list[Source]]] = {}
    per: dict[tuple[str, str], dict[CallId, frozenset[str]]] = {}  # the value at each call
    tagged_params: set[tuple[str, str]] = set()
    rows = []
    for call in calls:
        vf = call.caller_file.variant_facts
        tags = vf.casts.get(f"{call.edge.loc.line}:{call.edge.loc.col}", ()) if vf is not None else ()
        by_key = dict(t.partition("=")[::2] for t in tags)
        for argkey, _kind in call.edge.args:
            name = _param_name(call, argkey)
            if name is None:
                continue
            tag = by_key.get(argkey)
            rows.append((call, name, tag))
            if tag is not None:
                tagged_params.add((name, tag.partition(":")[0]))
    for call, name, tag in rows:
        for family in CAST_FAMILIES:
            if (name, family) not in tagged_params:
                continue
            if tag is not None and tag.partition(":")[0] == family:
                value = tag.partition(":")[2] or "requires_grad=True"
                note = f"passes `{name}` with {value if family == 'requires_grad' else family + ' ' + value}"
                if family == "single":
                    value, note = "size 1", f"passes `{name}` as a batch of one (size 1 at dim 0)"
            else:
                value = "requires_grad=False" if family == "requires_grad" else "as given"
                note = f"passes `{name}` as given"
            if family == "dtype" and value == "float32":
                value = "as given"  # the default dtype: the same variant as an uncast float tensor
            seen.setdefault((name, family), {}).setdefault(value, []).append(
                Source(call.caller_file.path, call.edge.loc, note)
            )
            per.setdefault((name, family), {})[_call_id(call)] = frozenset((value,))
    out = []
    for (name, family), values in seen.items():
        if family == "device":
            values.pop("as given", None)  # `x.cuda()` here, `x` there: most programs moved `x` already
        if len(values) < 2:
            continue
        order = sorted(values, key=lambda v: v in ("as given", "requires_grad=False"))
        sources = [s for v in order for s in values[v]]
        words, advice = CAST_FAMILIES[family]
        out.append(
            Dimension(
                family,
                f"tensor '{name}' {words}",
                order,
                True,
                _dedupe(sources),
                advice,
                per_call=per[(name, family)] if family != "device" else None,
            )
        )
    return out


def _tags_at(ff: FileFacts, edge: CallEdge) -> dict[str, str]:
    """Argument key -> its ``VariantFacts.casts`` tag at a call (``dtype:float16``, ``sliced:...``)."""
    vf = ff.variant_facts
    tags = vf.casts.get(f"{edge.loc.line}:{edge.loc.col}", ()) if vf is not None else ()
    return dict(t.partition("=")[::2] for t in tags)


def _slice_dimensions(project: Project, calls: list[callsites.RootCall], dynamic: Any) -> list[Dimension]:
    """A tensor argument passed whole at some calls and as a slice at others, or as other slices
    (``sample(labels)`` then ``sample(labels[:2])``, handed on to the compiled model through the
    calling function's parameter: ``_handed_on``): another size, so static first, then dynamic
    (measured, torch 2.13: a sampler called with 4 then 2 labels recompiles once, the size going
    dynamic).  It first changes between those calls (``changes_with`` "caller")."""
    if dynamic is True or dynamic is False:
        return []  # dynamic=False: TC207's looped-call dimension; dynamic=True: nothing to add
    seen: dict[str, dict[str, list[Source]]] = {}
    for call in calls:
        if _enclosing_key(project, call.caller_file, call.edge) in project.regions:
            continue  # made inside compiled code (`MODEL(tokens)` in a compiled step): inlined there
        handed = _handed_on(project, call.caller_file, call.edge)
        lifted = {here for here, *_ in handed}
        own = _tags_at(call.caller_file, call.edge)
        rows = [
            (k, own.get(k), call.caller_file.path, call.edge.loc)
            for k, _ in call.edge.args
            if k not in lifted
        ]
        rows.extend(
            (here, _tags_at(uff, uedge).get(there), uff.path, uedge.loc) for here, uff, uedge, there in handed
        )
        sized = {argkey for argkey, *_ in _facts_at(project, call, "sizes")}
        for argkey, tag, path, loc in rows:
            name = _param_name(call, argkey)
            if name is None or argkey in sized or (tag or "").startswith("single:"):
                continue  # a size per iteration (`xs[i:i + 4]`), a batch of one: their own dimensions
            value = tag[len("sliced:") :] if tag is not None and tag.startswith("sliced:") else ""
            note = f"passes `{name}` as the slice [{value}]" if value else f"passes `{name}` whole"
            seen.setdefault(name, {}).setdefault(value, []).append(Source(path, loc, note))
    out = []
    for name, values in sorted(seen.items()):
        if len(values) < 2 or set(values) == {""}:
            continue
        sources = [s for v in sorted(values, key=lambda v: v == "") for s in values[v]]
        out.append(
            Dimension(
                "size",
                f"tensor '{name}' size mismatch (sliced at some calls)",
                ["first size", "dynamic"],
                True,
                _dedupe(sources),
                "2 compiles (static, then dynamic); torch._dynamo.mark_dynamic on the first call compiles once",
                becomes_dynamic=True,
                changes_with="caller",
            )
        )
    return out


# -- globals read inside, rebound by eager code --------------------------------------------------------
def _region_members(project: Project) -> dict[str, list[str]]:
    """Root key -> the function keys of its region (the root first) (memoised per project)."""
    index = project.memo.get("variants_members")
    if index is None:
        index = {}
        for key, region in project.regions.items():
            top = region
            while top.depth != 0 and top.parent is not None:
                top = top.parent
            if top.depth == 0:
                index.setdefault(top.func_key, []).append(key)
        for key, members in index.items():
            members.sort(key=lambda k: k != key)
        project.memo["variants_members"] = index
    return index


def frames_on_their_own(project: Project, key: str) -> list[str]:
    """For a root whose frame Dynamo drops (``Variants.runs_eagerly_from``): the function keys
    of its region below the root, the frames Dynamo compiles on their own and that meet the
    calling code's variants (the probe's recompiles land on them); empty for any other root."""
    if key not in dropped_roots(project):
        return []
    return [k for k in _region_members(project).get(key, []) if k != key]


def _nothing_retraced(project: Project, members: list[str]) -> bool:
    """For a root whose frame Dynamo drops: whether every project frame of its region is dropped
    too (a loop caller of a break, or a reader of a property whose getter breaks:
    ``engine.caller_drops``) or is a ``cached_property`` getter, which runs on the first read
    only.  Then no frame is compiled again on a later call, whatever the calls' grad mode,
    autocast or arguments (measured, torch 2.13: ``TinyLM.forward`` dropped by its blocks'
    ``@functools.cached_property`` break, a call under ``torch.no_grad()``: 0 recompiles; with a
    plain ``@property`` the getter is compiled again, 1 recompile)."""
    from tclint.rules import engine

    drops = engine.caller_drops(project, project.settings)
    for member in members[1:]:
        if member in drops:
            continue
        found = project.functions.get(member)
        if found is None or not any(d.rsplit(".", 1)[-1] == "cached_property" for d in found[1].decorators):
            return False
    return True


def _global_dimensions(project: Project, members: list[str]) -> list[Dimension]:
    """A module global (or a flag dict) read inside the compiled region and rebound by eager code
    between calls: Dynamo guards on its value (``G['SCALE'] == 1.0``).  An int is specialised (a
    recompile per value, unbounded), a float becomes dynamic after its second value (2), a bool or
    a few constants are bounded by their values."""
    out = []
    done: set[tuple[str, str]] = set()
    for mkey in members:
        ff, fn = project.functions[mkey]
        vf = ff.variant_facts
        names = vf.global_reads.get(fn.qualname, ()) if vf is not None else ()
        for name in names:
            if (ff.path, name) in done:
                continue
            done.add((ff.path, name))
            writes = []
            for w in vf.global_writes:  # type: ignore[union-attr]
                wname, kind, pos, writer, loop = w.split("|")
                wkey = f"{ff.path}::{writer}"
                if wname != name or writer and wkey in project.regions:
                    continue  # another global, or written inside compiled code (TC201's)
                if (
                    loop
                    or writer
                    and any(e is not None and e.in_loop for _f, _c, e in _callers(project).get(wkey, ()))
                ):
                    writes.append(
                        (kind, Source(ff.path, _loc_of(pos), f"rebinds the global `{name}` between calls"))
                    )
                # else: set once (a setup function, a module-level assignment): its value, not a flip
            dim = _global_dimension(name, ff.module_vars.get(name), writes)
            if dim is not None:
                out.append(dim)
    return out


def _global_dimension(name: str, initial: T.Ty | None, writes: list[tuple[str, Source]]) -> Dimension | None:
    if not writes:
        return None
    kinds = {k for k, _ in writes}
    consts = {k[6:] for k in kinds if k.startswith("const:")}
    first = initial.dtype if initial is not None and initial.kind == T.SCALAR else None
    if "unknown" in kinds and first is not None:
        kinds.add(first)
    sources = _dedupe([s for _, s in writes])
    guard = f"G['{name}'] == <value>"
    if "int" in kinds or "str" in kinds:
        what = "an int" if "int" in kinds else "a string"
        return Dimension(
            "global",
            guard,
            [f"a new {'value' if 'int' in kinds else 'string'} per rebinding"],
            False,
            sources,
            f"{what} global is specialised: keep it in a tensor (torch.tensor(v)) or pass it as an argument",
        )
    if "float" in kinds or any("." in c for c in consts if c.replace(".", "", 1).lstrip("-").isdigit()):
        return Dimension(
            "global",
            f"{guard}, then dynamic",
            ["first value", "dynamic"],
            True,
            sources,
            "a float global becomes dynamic after its second value: 2 compiles; keep it in a 0-d tensor to compile once",
            becomes_dynamic=True,
        )
    if "bool" in kinds or consts <= {"True", "False"} and consts:
        return Dimension(
            "global",
            f"G['{name}'] == <True/False>",
            ["False", "True"],
            True,
            sources,
            "2 variants: warm both up, or read the flag outside the compiled function",
        )
    if len(consts) >= 2:
        return Dimension("global", guard, sorted(consts), True, sources, "warm up every value before serving")
    return None


# -- buffers that start requiring grad -------------------------------------------------------------------
def _buffer_dimension(
    project: Project, members: list[str], calls: list[callsites.RootCall]
) -> Dimension | None:
    """A buffer written in place with a value that requires grad (``self.keys.index_copy_(1, i,
    self.kv(x))``) requires grad itself after the first call in grad mode: its
    ``requires_grad`` guard fails once (2 compiles, measured)."""
    if not any(
        not any(t.startswith(("grad:no_grad", "grad:inference_mode")) for t in _context(c)) for c in calls
    ):
        return None
    sources = []
    for mkey in members:
        ff, fn = project.functions[mkey]
        vf = ff.variant_facts
        if vf is None or fn.cls is None or not vf.buffer_writes:
            continue
        for w in vf.buffer_writes:
            cls, attr, pos = w.split("|")
            loc = _loc_of(pos)
            if cls == fn.cls and fn.loc.line <= loc.line <= fn.loc.end_line:
                sources.append(
                    Source(ff.path, loc, f"writes a value that requires grad into the buffer `self.{attr}`")
                )
    if not sources:
        return None
    attr = sources[0].note.rsplit("`self.", 1)[1].rstrip("`")
    return Dimension(
        "requires_grad",
        f"tensor 'self._buffers['{attr}']' requires_grad mismatch",
        ["requires_grad=False", "requires_grad=True"],
        True,
        _dedupe(sources),
        "detach the value written into the buffer (`.detach()`) or write it under torch.no_grad()",
    )


# -- a new module instance compiled per iteration ---------------------------------------------------------
def fresh_sites(project: Project) -> dict[str, list[Source]]:
    """Root key -> the compile sites in a loop that compile a new instance built from loop values
    (``torch.compile(Head(n_actions))`` per episode) (memoised per project)."""
    index = project.memo.get("variants_fresh")
    if index is None:
        index = {}
        for ff in project.files.values():
            vf = ff.variant_facts
            if vf is None or not vf.fresh_compiles:
                continue
            for item in vf.fresh_compiles:
                pos, _, text = item.partition("|")
                loc = _loc_of(pos)
                for site in ff.compile_sites:
                    if (site.loc.line, site.loc.col) == (loc.line, loc.col):
                        for key in project.site_targets.get(site.id, ()):
                            index.setdefault(key, []).append(
                                Source(ff.path, loc, f"compiles a new `{text}` per iteration")
                            )
        project.memo["variants_fresh"] = index
    return index


def _fresh_dimension(sources: list[Source]) -> Dimension:
    return Dimension(
        "instance",
        "a new module instance per iteration (other parameter shapes / int attributes)",
        ["a new instance per iteration"],
        False,
        _dedupe(sources),
        "compile one module and reuse it (one head with the largest shape, sliced; sizes kept in tensors)",
    )


def unrooted_fresh_sites(project: Project) -> list[tuple[str, Loc, str]]:
    """(path, loc, text) of compile sites in a loop compiling a new instance of a class outside the
    project (``torch.compile(nn.Linear(8, n))``): no compiled root of ours to attach them to."""
    out = []
    rooted = {(s.path, s.loc.line, s.loc.col) for ss in fresh_sites(project).values() for s in ss}
    for ff in project.files.values():
        vf = ff.variant_facts
        for item in vf.fresh_compiles if vf is not None else ():
            pos, _, text = item.partition("|")
            loc = _loc_of(pos)
            if (ff.path, loc.line, loc.col) not in rooted:
                out.append((ff.path, loc, text))
    return out
