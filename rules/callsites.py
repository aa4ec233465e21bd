"""Calls into compiled frames, and what Dynamo specialises on: the shared ground of the
recompile rules TC203-TC206.

A compiled *frame* is where guards live: the function handed to torch.compile (a decorated
function, or the ``forward`` of a compiled module).  Its arguments are guarded; what its body
inlines sees values from inside the graph.  So specialisation is a property of a root function's
parameters, and the variant count is decided at its call sites.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tclint.rules import types as T
from tclint.rules.facts import CallEdge, FileFacts, FunctionFacts, Param
from tclint.rules.project import Project, Region

UNBOUNDED = {
    "counter": "a loop counter / step number",
    "len": "a length computed from the data",
    "clock": "a timestamp or random value",
    "fstring": "a string built per call",
}


@dataclass
class RootCall:
    root_key: str
    edge: CallEdge
    caller_file: FileFacts
    params: list[Param]  # the root's parameters, without self


def roots(project: Project) -> Iterator[tuple[str, Region, FileFacts, FunctionFacts]]:
    for key, region in project.regions.items():
        if region.depth != 0:
            continue
        ff, fn = project.functions[key]
        yield key, region, ff, fn


def _is_list_annotation(text: str | None) -> bool:
    if not text:
        return False
    head = text.replace("typing.", "").replace("Optional[", "").lstrip()
    return head.startswith(("list[", "List[", "Sequence[", "MutableSequence[", "list ", "List "))


def frame_params(fn: FunctionFacts) -> list[Param]:
    return [p for p in fn.params if p.kind in ("pos", "kwonly")]


def specialisation(p: Param, dynamic_false: bool = False) -> str | None:
    """How Dynamo specialises this parameter of a compiled frame, as the guard it installs."""
    uses = set(p.uses)
    ty = p.ty
    if ty.kind == T.TENSOR and ty.conf == T.HIGH:
        return None
    if ty.kind == T.SCALAR and ty.dtype == "str" or (p.default or "").startswith(("'", '"')):
        return f"{p.name} == '<value>'" if "load" in uses else None
    if uses & {"range", "index"} and ty.kind not in (T.TLIST, T.CONTAINER):
        return f"{p.name} == <value>"
    if _is_list_annotation(p.annotation) and uses & {"len", "load"} and p.kind != "varargs":
        # a list argument's length is guarded when it is used at all (measured, even in arithmetic);
        # tuples are left out: model APIs use them as fixed-shape records (cos, sin), (k, v)
        return f"len({p.name}) == <value>"
    if ty.kind == T.SCALAR and ty.dtype == "bool" and uses & {"cond", "load"}:
        return f"{p.name} == <True/False>"
    if dynamic_false and ty.kind == T.SCALAR and ty.dtype in ("int", "float") and "load" in uses:
        return f"{p.name} == <value>"
    return None


def calls_into_roots(project: Project) -> list[RootCall]:
    """Every call edge in the project that enters a compiled frame (computed once per project)."""
    cached = project.memo.get("calls_into_roots")
    if cached is not None:
        return cached
    root_keys = {key for key, *_ in roots(project)}
    out: list[RootCall] = []
    if root_keys:
        passed = _compiled_arguments(project)
        for ff in project.files.values():
            for edge, caller in _edges(ff):
                keys = [k for k, _drop_self in _edge_roots(project, ff, caller, edge, root_keys)]
                if edge.kind == "param" and caller is not None:
                    for site_id in passed.get((f"{ff.path}::{caller.qualname}", edge.target), ()):
                        keys.extend(k for k in project.site_targets.get(site_id, ()) if k in root_keys)
                stored = _ctor_param(project, ff, caller, edge)
                if stored is not None:
                    for site_id in passed.get(stored, ()):
                        keys.extend(k for k in project.site_targets.get(site_id, ()) if k in root_keys)
                for key in dict.fromkeys(keys):
                    _rff, fn = project.functions[key]
                    out.append(RootCall(key, edge, ff, frame_params(fn)))
    project.memo["calls_into_roots"] = out
    return out


def _compiled_arguments(project: Project) -> dict[tuple[str, str], set[str]]:
    """(function key, parameter name) -> the compile sites whose compiled object a call passes
    there (``train(net, loader)`` after ``net = torch.compile(Net())``): calling the parameter
    inside the function calls that compiled object."""
    out: dict[tuple[str, str], set[str]] = {}
    for ff in project.files.values():
        for edge, _caller in _edges(ff):
            compiled = [
                (k, kind[len("compiled:") :]) for k, kind in edge.args if kind.startswith("compiled:")
            ]
            if not compiled or edge.kind not in ("name", "local"):
                continue
            if edge.kind == "local":
                key: str | None = f"{ff.path}::{edge.target}"
            else:
                found = project.resolve(edge.target, ff)
                key = found[1] if found is not None and found[0] == "function" else None
                if found is not None and found[0] == "class":
                    # `DDIMSampler(torch.compile(unet))`: what its __init__ stores (`self.model = model`)
                    key = project.find_method(found[1], "__init__")
            if key is None or key not in project.functions:
                continue
            params = [p for p in project.functions[key][1].params if p.kind in ("pos", "kwonly")]
            positional = [p for p in params if p.kind == "pos"]
            for argkey, site_id in compiled:
                if argkey.startswith("#"):
                    i = int(argkey[1:])
                    name = positional[i].name if i < len(positional) else None
                else:
                    name = argkey if any(p.name == argkey for p in params) else None
                if name is not None:
                    out.setdefault((key, name), set()).add(site_id)
    return out


def _ctor_param(
    project: Project, ff: FileFacts, caller: FunctionFacts | None, edge: CallEdge
) -> tuple[str, str] | None:
    """(``__init__`` key, parameter name) when ``edge`` calls ``self.<attr>(...)`` and ``__init__``
    stored that parameter there (``self.model = model``): the call runs what the constructions
    pass (``DDIMSampler(torch.compile(unet))``: the compiled module, ``_compiled_arguments``)."""
    if (
        edge.kind != "self"
        or caller is None
        or caller.cls is None
        or edge.method not in ("__call__", "forward")
        or not edge.target
        or "." in edge.target
    ):
        return None
    found = project.find_attr(f"{ff.path}::{caller.cls}", edge.target)
    if found is None or found[1].kind != "param" or len(found[1].refs) < 2:
        return None
    sff, spec = found
    cls_key = project.class_key_for(spec.refs[1], sff)
    init = project.find_method(cls_key, "__init__") if cls_key is not None else None
    return (init, spec.refs[0]) if init is not None else None


def _edges(ff: FileFacts) -> Iterator[tuple[CallEdge, FunctionFacts | None]]:
    for edge in ff.module_calls:
        yield edge, None
    for fn in ff.functions.values():
        for edge in fn.calls:
            yield edge, fn


def _edge_roots(
    project: Project, ff: FileFacts, caller: FunctionFacts | None, edge: CallEdge, root_keys: set[str]
) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    if edge.kind == "compiled":
        if edge.method not in ("__call__", "forward"):
            return out  # `compiled.loss(x)` runs the original module's method eagerly (TC310)
        for key in project.site_targets.get(edge.target, ()):
            if key in root_keys:
                out.append((key, True))
        return out
    if edge.kind == "name":
        r = project.resolve(edge.target, ff)
        if r is not None and r[0] == "function" and r[1] in root_keys:
            region = project.regions[r[1]]
            if (
                region.site is not None
                and region.site.how in ("decorator", "optimize", "wrapper")
                and region.site.target_kind == "func"
            ):
                out.append((r[1], False))
            return out
        # a module-level compiled callable imported from another file
        mod, _, name = edge.target.rpartition(".")
        target_ff = project.module_file(mod, ff)
        if target_ff is not None:
            ty = target_ff.module_vars.get(name)
            if ty is not None and ty.kind == T.COMPILED and ty.ref:
                out.extend((k, True) for k in project.site_targets.get(ty.ref, ()) if k in root_keys)
        return out
    compiled_return = _compiled_return_roots(project, ff, edge, root_keys)
    if compiled_return:
        return compiled_return
    if caller is not None and edge.kind in ("self", "instance", "deferred", "elem"):
        if edge.kind == "self" and not _self_may_be_compiled(project, ff, caller, edge):
            return _in_place_roots(project, ff, caller, edge, root_keys)
        out.extend(
            _roots_by_site(
                project,
                ff,
                caller,
                edge,
                root_keys,
                lambda site: (
                    site.target_kind
                    in ("instance", "attr", "elem", "modlist", "deferred", "method", "ctorparam")
                ),
            )
        )
    return out


def _compiled_return_roots(
    project: Project, ff: FileFacts, edge: CallEdge, root_keys: set[str]
) -> list[tuple[str, bool]]:
    """``model = load(path); model(x)`` where the project function ``load`` returns
    ``torch.compile(...)``: the call enters the compiled module's frames."""
    if edge.kind != "deferred" or edge.method not in ("__call__", "forward"):
        return []
    ty = project.deferred_type(edge.target, ff)
    if ty.kind != T.COMPILED or not ty.ref:
        return []
    return [(k, True) for k in project.site_targets.get(ty.ref, ()) if k in root_keys]


def _self_may_be_compiled(project: Project, ff: FileFacts, caller: FunctionFacts, edge: CallEdge) -> bool:
    """`self.x(...)` enters a compiled frame only if `self.x` holds a compiled module."""
    if caller.cls is None:
        return False
    found = project.find_attr(f"{ff.path}::{caller.cls}", edge.target.split(".", 1)[0])
    return found is not None and found[1].kind == "compiled"


def _in_place_roots(
    project: Project, ff: FileFacts, caller: FunctionFacts, edge: CallEdge, root_keys: set[str]
) -> list[tuple[str, bool]]:
    """``self(obs)`` in ``Agent.act`` after ``agent.compile()``, ``self.encoder(src)`` after
    ``model.encoder.compile()``: ``nn.Module.compile`` compiles the module's ``__call__`` in place,
    so every call through ``__call__`` of that module, its own ``self(...)`` included, enters the
    compiled forward.  ``self.forward(x)`` bypasses ``__call__`` and runs eagerly, as the calls of
    a module handed to ``torch.compile(m)`` (the original, not the wrapper) do."""
    if edge.method != "__call__" or (edge.target == "forward" and not edge.on_self):
        return []
    return _roots_by_site(project, ff, caller, edge, root_keys, lambda site: site.how == "method")


def _roots_by_site(
    project: Project,
    ff: FileFacts,
    caller: FunctionFacts,
    edge: CallEdge,
    root_keys: set[str],
    accept: Callable[[Any], bool],
) -> list[tuple[str, bool]]:
    """The compiled roots ``edge`` calls whose region's compile site ``accept`` takes."""
    out = []
    for key, _m in project.edge_targets(ff, caller, edge):
        region = project.regions.get(key)
        if key in root_keys and region is not None and region.site is not None and accept(region.site):
            out.append((key, True))
    return out


def map_args(call: RootCall) -> list[tuple[Param, str]]:
    """(parameter, argument kind) pairs for one call."""
    out = []
    positional = [p for p in call.params if p.kind == "pos"]
    by_name = {p.name: p for p in call.params}
    for key, kind in call.edge.args:
        if key.startswith("#"):
            i = int(key[1:])
            if i < len(positional):
                out.append((positional[i], kind))
        elif key in by_name:
            out.append((by_name[key], kind))
    return out
