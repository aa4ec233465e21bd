"""Types flow into helpers: the parameter types a compiled region gives the functions it calls.

Dynamo traces a helper reached from a compiled frame with the values it is called with there, so
``def gate(h): return h.mean(-1)`` called with a tensor returns a tensor, and ``if
gate(h).sum() > 0:`` in the compiled ``forward`` is a data-dependent branch.  One file's walk
cannot know that (the call sites may be in other files, and per-file facts are a pure function of
the file's bytes, cached), so the project pass re-derives it:

1. for each function in a region, the join of the argument kinds (``CallEdge.args``) over its
   *region* call sites (for a root: the eager calls into its compiled frame, ``_root_calls``), per
   parameter the walk left untyped (or annotated with another file's type alias, ``_seedable``):
   a tensor at every site (or ``None`` where an ``Optional`` default is used) seeds a
   tensor of medium confidence; a tensor at some sites and an unknown value at the others seeds a
   tensor of low confidence (hidden by the default ``min-confidence``); any known non-tensor
   argument (a constant, a bool, a counter) seeds nothing;
2. the files holding seeded functions are walked again with those seeds, and with the return types
   of project functions that are known tensors (``scatter(...)`` annotated or inferred to return a
   tensor, or a helper that does once its parameters are seeded);
3. repeated while something changes (a chain of helpers), at most ``MAX_ROUNDS`` times.

The re-walked facts are not cached (they depend on other files); the first walk's are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from tclint.rules import callsites
from tclint.rules import types as T
from tclint.rules.facts import CallEdge, FileFacts, FunctionFacts
from tclint.rules.project import Project, _deferred_item
from tclint.rules.types import Ty

MAX_ROUNDS = 3
REWALKED = "argflow_rewalked"  # Project.memo key: the paths whose facts were walked again
TRACE = "argflow_trace"  # Project.memo key: each path's walks (see ``refine``)
# argument kinds (rules.analysis.callgraph._arg_kind) that are known not to be tensors
_NOT_TENSOR_KINDS = ("bool", "counter", "len", "clock", "fstring")
_EDGE_KINDS = ("name", "local", "self", "super", "instance", "deferred", "elem")

Reanalyze = Callable[
    [FileFacts, "dict[str, dict[str, Ty]] | None", "Callable[[str], Ty | None] | None"], "FileFacts | None"
]


def _classify(kind: str) -> str:
    """``T`` a tensor, ``N`` known not a tensor, ``0`` None (neutral: ``Optional[Tensor]``),
    ``U`` unknown."""
    if kind == "tensor":
        return "T"
    if kind == "const:None":
        return "0"
    if kind.startswith("const:") or kind in _NOT_TENSOR_KINDS:
        return "N"
    return "U"


def _site_kinds(edge: CallEdge, callee: FunctionFacts) -> dict[str, str]:
    """Per parameter of ``callee``, the class (see ``_classify``) of what this call passes."""
    params = [p for p in callee.params if p.kind in ("pos", "kwonly")]
    out: dict[str, str] = {}
    if (
        edge.kind == "name"
        and callee.cls is not None
        and callee.name != "__init__"
        and edge.target.endswith("." + callee.name)
    ):
        # `Base.method(self, x)`: an unbound call, the arguments are shifted by `self`
        return {p.name: "U" for p in params}
    positional = [p for p in params if p.kind == "pos"]
    if edge.kind == "name" and callee.name == "forward" and edge.target.endswith(".apply") and positional:
        # `Fn.apply(x, ...)` of an autograd Function runs `forward(ctx, x, ...)`: no `ctx` passed
        positional = positional[1:]
    starred = False
    for key, kind in edge.args:
        if key.startswith("#"):
            if kind == "starred":
                starred = True
                continue
            i = int(key[1:])
            if i < len(positional):
                out[positional[i].name] = _classify(kind)
        else:
            out[key] = _classify(kind)
    for p in params:
        if p.name in out:
            continue
        if starred or p.default is None:
            out[p.name] = "U"  # passed through *args / **kwargs
        elif p.default == "None":
            out[p.name] = "0"
        else:
            out[p.name] = "N"
    return out


def _seedable(project: Project, ff: FileFacts, ty: Ty) -> bool:
    """Whether a parameter the first walk typed ``ty`` takes its type from the call sites: an
    untyped one, or one annotated with a type alias of another file (``t0: Optional[Scalar]``,
    ``Scalar = Union[float, Tensor]`` in ``types.py``), which one file's walk types as an instance
    of a class named ``Scalar``: the project knows it is a module variable, not a class."""
    if ty.kind == T.UNKNOWN:
        return True
    if ty.kind != T.INSTANCE or not ty.ref or "." not in ty.ref:
        return False
    module, name = ty.ref.rsplit(".", 1)
    owner = project.module_file(module, ff)
    return owner is not None and name in owner.module_vars and name not in owner.classes


def _join(classes: list[str]) -> Ty | None:
    seen = set(classes)
    if "N" in seen or "T" not in seen:
        return None
    return Ty(T.TENSOR, T.LOW if "U" in seen else T.MEDIUM)


def compute_seeds(
    project: Project, original: dict[str, FileFacts] | None = None
) -> dict[str, dict[str, dict[str, Ty]]]:
    """path -> function qualname -> parameter -> seeded type, from the region call sites.  The
    parameters considered are those the first walk (``original``: the files' facts before any
    re-walk) left untyped; the call sites are read from the current facts."""
    sites: dict[str, dict[str, list[str]]] = {}
    for key, region in project.regions.items():
        ff, fn = project.functions[key]
        for edge in fn.calls:
            if edge.kind not in _EDGE_KINDS:
                continue
            if edge.unless is not None and project.is_compiling_predicate(edge.unless, ff):
                continue
            for callee, _mult, _recv in project._dispatch_targets(ff, fn, edge, region.receiver):
                callee_region = project.regions.get(callee)
                if callee_region is None or callee_region.depth == 0 or callee == key:
                    continue
                _add_site(project, original, sites, callee, edge)
    for root, edge in _root_calls(project):
        # a root takes the arguments of the eager calls into its compiled frame
        # (`increments(torch.linspace(0, 1, 4))` of a decorated function, `compiled(x)`); a
        # partial's bound arguments shift the positions: not read
        site = project.regions[root].site
        if site is not None and site.how != "partial":
            _add_site(project, original, sites, root, edge)
    out: dict[str, dict[str, dict[str, Ty]]] = {}
    for callee, per in sites.items():
        cff, cfn = project.functions[callee]
        seeded = {name: ty for name, ty in ((n, _join(c)) for n, c in per.items()) if ty is not None}
        if seeded:
            out.setdefault(cff.path, {})[cfn.qualname] = seeded
    return out


def _root_calls(project: Project) -> Iterator[tuple[str, CallEdge]]:
    """(root, edge) for each call into a compiled frame: ``callsites.calls_into_roots``, and the
    calls of a decorated nested function where it is defined (``@torch.compile def step(ts)`` in
    a function, then ``step(x)``), which that reads from module-level names only."""
    for call in callsites.calls_into_roots(project):
        yield call.root_key, call.edge
    for ff in project.files.values():
        for fn in ff.functions.values():
            for edge in fn.calls:
                if edge.kind != "local":
                    continue
                for key, _mult in project.edge_targets(ff, fn, edge):
                    region = project.regions.get(key)
                    if region is not None and region.depth == 0 and region.site is not None:
                        if region.site.how == "decorator":
                            yield key, edge


def _add_site(
    project: Project,
    original: dict[str, FileFacts] | None,
    sites: dict[str, dict[str, list[str]]],
    callee: str,
    edge: CallEdge,
) -> None:
    """Adds what ``edge`` passes to each parameter of ``callee`` that the first walk left untyped."""
    cff, cfn = project.functions[callee]
    first = original.get(cff.path) if original is not None else None
    first_fn = first.functions.get(cfn.qualname) if first is not None else None
    untyped = [
        p for p in (first_fn or cfn).params if p.kind in ("pos", "kwonly") and _seedable(project, cff, p.ty)
    ]
    if not untyped:
        return
    kinds = _site_kinds(edge, cfn)
    per = sites.setdefault(callee, {})
    for p in untyped:
        per.setdefault(p.name, []).append(kinds.get(p.name, "U"))


def _returns_of(
    project: Project,
    ff: FileFacts,
    original: dict[str, FileFacts] | None = None,
    applied: dict[str, dict[str, dict[str, Ty]]] | None = None,
) -> Callable[[str], Ty | None]:
    """For the walk of ``ff``: the return type of the project function a qualified name resolves
    to, when it is a tensor.  A function whose parameters were seeded (``applied``) and whose first
    walk (``original``) did not return a tensor returns one only because of its arguments
    (``default(val, d)``): its type is marked ``T.FROM_ARGS``, so that a call passing no tensor (in
    ``__init__``: ``default(flag, False)``) does not take it."""
    memo: dict[str, Ty | None] = {}

    def returns_of(ref: str) -> Ty | None:
        if ref not in memo:
            ty = project.deferred_type(ref, ff)
            if ty.kind != T.TENSOR:
                memo[ref] = None
            else:
                memo[ref] = Ty(
                    T.TENSOR,
                    ty.conf,
                    ty.dtype,
                    T.FROM_ARGS if _from_args(project, ref, ff, original, applied) else None,
                )
        return memo[ref]

    return returns_of


def _from_args(
    project: Project,
    ref: str,
    ff: FileFacts,
    original: dict[str, FileFacts] | None,
    applied: dict[str, dict[str, dict[str, Ty]]] | None,
) -> bool:
    """Whether the function ``ref`` names returns a tensor only since its parameters were seeded."""
    if not original or not applied:
        return False
    base, index = _deferred_item(ref)
    r = project.resolve(base, ff)
    if r is None or r[0] != "function":
        return False
    cff, cfn = project.functions[r[1]]
    if not applied.get(cff.path, {}).get(cfn.qualname):
        return False
    first = original.get(cff.path)
    first_fn = first.functions.get(cfn.qualname) if first is not None else None
    if first_fn is None:
        return False
    if index is None:
        ret = first_fn.returns
    else:
        ret = first_fn.returns_items[index] if index < len(first_fn.returns_items) else None
    return ret is None or ret.kind != T.TENSOR


def _callees_returning_tensors(project: Project, keys: set[str] | None) -> set[str]:
    """Files of region functions calling a project function that returns a tensor or a tuple with
    one (``keys``: only those functions)."""
    out: set[str] = set()
    for key in project.regions:
        ff, fn = project.functions[key]
        if ff.path in out:
            continue
        for edge in fn.calls:
            if edge.kind not in ("name", "local", "self"):
                continue
            if keys is None and _attr_call_returns_tensor(project, ff, fn, edge):
                out.add(ff.path)  # `self.distance(a, b)`, the attribute stored by a base's __init__
                break
            for callee, _m in project.edge_targets(ff, fn, edge):
                if keys is not None and callee not in keys:
                    continue
                cfn = project.functions[callee][1]
                ret = cfn.returns
                if (ret is not None and ret.kind == T.TENSOR) or any(
                    t.kind == T.TENSOR for t in cfn.returns_items
                ):
                    # a tensor, or a tuple holding one (`edge_index, value = to_edge_index(adj)`)
                    out.add(ff.path)
                    break
            if ff.path in out:
                break
    return out


def _attr_call_returns_tensor(project: Project, ff: FileFacts, fn: FunctionFacts, edge: CallEdge) -> bool:
    """``self.attr(...)`` in a method, ``attr`` an attribute (no method) whose call the project
    knows gives a tensor (``Project.attr_call_type``): the walk typed it ``Cls.attr`` deferred."""
    if edge.kind != "self" or edge.method != "__call__" or not edge.target or "." in edge.target:
        return False
    if fn.cls is None or not ff.module:
        return False
    return project.attr_call_type(f"{ff.module}.{fn.cls}.{edge.target}", ff).kind == T.TENSOR


def refine(project: Project, reanalyze: Reanalyze) -> Project:
    """The project with helper parameter types flowed in (the same object when nothing changes).
    ``reanalyze(ff, seeds, returns_of)`` walks ``ff``'s file again (None: its text is not at hand)."""
    applied: dict[str, dict[str, dict[str, Ty]]] = {}
    original = dict(project.files)
    changed_returns: set[str] | None = None  # round 1: any tensor-returning callee
    # per path, each walk in order: (facts walked from, seeds, the answers returns_of gave, result)
    # -- what an edit that keeps the file's interface replays (``tclint.rules.project_delta``); the
    # answers, not returns_of itself, so that the rounds' projects are not kept alive
    trace: dict[str, list[tuple[FileFacts, Any, dict[str, Ty | None], FileFacts]]] = {}
    for _round in range(MAX_ROUNDS):
        seeds = compute_seeds(project, original)
        todo = {path for path, s in seeds.items() if s != applied.get(path)}
        todo |= _callees_returning_tensors(project, changed_returns)
        todo = {path for path in todo if path in project.files and project.files[path].error is None}
        if not todo:
            break
        files = dict(project.files)
        changed_returns = set()
        walked = False
        for path in sorted(todo):
            old = files[path]
            answers: dict[str, Ty | None] = {}
            returns_of = _returns_of(project, old, original, {**applied, **seeds})
            new = reanalyze(old, seeds.get(path), _recording(returns_of, answers))
            del returns_of  # it holds this round's project, released before the next one builds
            if new is None:
                continue
            walked = True
            files[path] = new
            trace.setdefault(path, []).append((old, seeds.get(path), answers, new))
            for qual, fn in new.functions.items():
                before = old.functions.get(qual)
                if before is None or _ret_key(before.returns) != _ret_key(fn.returns):
                    changed_returns.add(f"{path}::{qual}")
        applied.update({path: seeds.get(path, {}) for path in todo})
        if not walked:
            break
        rewalked = project.memo.get(REWALKED, set()) | {p for p in todo if files[p] is not original[p]}
        # this round's project goes before the next one builds: both held, with the unrefined
        # one, were three sets of indexes at the peak (transformers package: ~35 MiB each)
        project = _successor(project, list(files.values()))
        project.build()
        project.memo[REWALKED] = rewalked
    project.memo[TRACE] = trace
    return project


def _recording(
    returns_of: Callable[[str], Ty | None], answers: dict[str, Ty | None]
) -> Callable[[str], Ty | None]:
    def recording(ref: str) -> Ty | None:
        found = answers[ref] = returns_of(ref)
        return found

    return recording


def _ret_key(ty: Ty | None) -> tuple[str, int] | None:
    return None if ty is None else (ty.kind, ty.conf)


def _successor(project: Project, files: list[FileFacts]) -> Project:
    """The next round's project of ``files``, not built yet, with ``project``'s name resolutions."""
    from tclint.rules.project_delta import share_resolution

    new = Project(files, project.settings)
    share_resolution(project, new)  # re-walks change types, not names
    return new
