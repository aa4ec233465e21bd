"""The project pass: which functions torch.compile will trace, and why.

Input: the ``FileFacts`` of every file in the project (from the single per-file walk, or the
cache).  Output: compiled regions (function -> the chain from a compile site) and the answers the
engine and the cross-file rules ask for (``region_of``, ``chain_related``, ``resolve``, ...); the
engine, not this module, turns candidates into diagnostics.  Dynamo inlines what a compiled frame calls, so regions follow calls:
module-level functions, ``self.method()``, submodules assigned in ``__init__`` (their ``forward``
runs when they are called), ModuleList / Sequential / ModuleDict elements, ``super()``, nested
functions and functions passed to higher-order torch APIs, across files.  A function wrapped in
``torch.compiler.disable`` ends a region (calling it from compiled code is itself a break).
"""

from __future__ import annotations

import fnmatch
import os
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from tclint.rules import types as T
from tclint.rules.facts import (
    CallEdge,
    ClassFacts,
    CompileSite,
    FileFacts,
    FunctionFacts,
    Loc,
    SubmoduleSpec,
)
from tclint.rules.model import RelatedLocation, Span
from tclint.rules.types import Ty

MODULE_BASE_HINTS = ("Module", "Model", "Layer", "Block", "Network", "Net")


def span_of(loc: Loc) -> Span:
    return Span.of(loc.line, loc.col, loc.end_line, loc.end_col)


@dataclass(slots=True)
class Link:
    """One step of a region chain: how control gets from a compile site into a function."""

    path: str
    loc: Loc
    label: str


@dataclass(slots=True)
class Region:
    """Why one function is compiled."""

    func_key: str
    site: CompileSite | None  # the compile site at the start of the chain (None: configured root)
    root_label: str  # "torch.compile(model) at train.py:41" / "assume-compiled" / ...
    links: list[Link] = field(default_factory=list)  # this region's own steps (the rest is the parent's)
    multiplier: str | None = None  # "each of 12 blocks"
    # (caller name, path, line[, how]) when called in a loop, or ``how`` "property": read as a
    # property there (Dynamo resumes only at calls, so a break in a getter drops the reader's frame)
    loop_caller: tuple[str, str, int] | tuple[str, str, int, str] | None = None
    loop_key: str | None = None  # that caller's function key (a break below drops its frame)
    fullgraph: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    depth: int = 0
    parent: Region | None = None  # the caller's region: chains share their prefix (O(n) memory)
    receiver: str | None = None  # the class of `self` when known (compiled `Sub()`: Sub), for dispatch
    # reached only through a call on a base class whose method is abstract (one of its subclasses'
    # overrides runs): the most confident its findings may be (types.MEDIUM / types.LOW), else None
    dispatch_cap: int | None = None

    @property
    def chain(self) -> list[Link]:
        parts: list[list[Link]] = []
        node: Region | None = self
        while node is not None:
            parts.append(node.links)
            node = node.parent
        return [link for links in reversed(parts) for link in links]


@dataclass(slots=True)
class Unresolved:
    site: CompileSite
    path: str
    reason: str


@dataclass(slots=True)
class DisabledCall:
    caller_key: str
    callee_key: str
    edge: CallEdge
    recursive: bool


class Project:
    """All files' facts, indexed for cross-file resolution."""

    def __init__(self, files: Iterable[FileFacts], settings: Any) -> None:
        self._chain_cache: dict[int, tuple[Region, tuple[RelatedLocation, ...], str]] = {}
        self.files: dict[str, FileFacts] = {}
        self.by_module: dict[str, list[FileFacts]] = {}
        self.functions: dict[str, tuple[FileFacts, FunctionFacts]] = {}
        self.classes: dict[str, tuple[FileFacts, ClassFacts]] = {}
        self.settings = settings
        for ff in files:
            self.files[ff.path] = ff
            if ff.error is not None:
                continue
            self.by_module.setdefault(ff.module, []).append(ff)
            for qual, fn in ff.functions.items():
                self.functions[f"{ff.path}::{qual}"] = (ff, fn)
            for qual, cls in ff.classes.items():
                self.classes[f"{ff.path}::{qual}"] = (ff, cls)
        self.disabled: dict[str, bool] = {}  # function key -> recursive
        self.allowed_in_graph: set[str] = set()
        self.regions: dict[str, Region] = {}
        self.unresolved: list[Unresolved] = []
        # sites that compile only torch's own code (torch.compile(nn.Sequential(nn.Linear(...), ...))):
        # resolved, with nothing of the project to check
        self.torch_only: list[Unresolved] = []
        self.disabled_calls: list[DisabledCall] = []
        self.site_targets: dict[str, list[str]] = {}  # compile-site id -> function keys compiled
        self.sites: dict[str, tuple[FileFacts, CompileSite]] = {}
        self.dynamo_config: dict[str, tuple[Any, str, Loc]] = {}
        self._resolve_cache: dict[tuple[str, str], tuple[str, str] | None] = {}
        self._mro_cache: dict[str, list[str]] = {}
        self._wrappers: dict[str, list[str]] = {}
        # the classes capped dispatch is narrowed to in this region pass / the next (build)
        self._held: frozenset[str] = frozenset()
        self._next_held: frozenset[str] = frozenset()
        self.memo: dict[Any, Any] = {}  # per-project results shared by rules (calls into roots, ...)

    # ------------------------------------------------------------------ resolution
    def module_file(self, module: str, near: FileFacts | None) -> FileFacts | None:
        cands = self.by_module.get(module)
        if not cands:
            return None
        if len(cands) == 1 or near is None:
            return cands[0]
        same_root = [c for c in cands if c.root == near.root]
        if same_root:
            return same_root[0]
        best = max(cands, key=lambda c: len(os.path.commonprefix([c.path, near.path])))
        return best

    def resolve(self, ref: str | None, near: FileFacts | None, depth: int = 0) -> tuple[str, str] | None:
        """``("function"|"class", key)`` for a dotted reference, following re-exports."""
        if not ref or depth > 8 or ref.startswith("<"):
            return None
        cache_key = (ref, near.root if near is not None else "")
        if depth == 0 and cache_key in self._resolve_cache:
            return self._resolve_cache[cache_key]
        result = self._resolve(ref, near, depth)
        if depth == 0:
            self._resolve_cache[cache_key] = result
        return result

    def _resolve(self, ref: str, near: FileFacts | None, depth: int) -> tuple[str, str] | None:
        parts = ref.split(".")
        for i in range(len(parts) - 1, 0, -1):
            ff = self.module_file(".".join(parts[:i]), near)
            if ff is None:
                continue
            rest = parts[i:]
            qual = ".".join(rest)
            if qual in ff.functions:
                return ("function", f"{ff.path}::{qual}")
            if qual in ff.classes:
                return ("class", f"{ff.path}::{qual}")
            # Class.method where the method is inherited
            if len(rest) >= 2 and ".".join(rest[:-1]) in ff.classes:
                cls_key = f"{ff.path}::{'.'.join(rest[:-1])}"
                found = self.find_method(cls_key, rest[-1])
                if found:
                    return ("function", found)
            alias = ff.aliases.get(rest[0])
            if alias is not None and alias != ref:
                target = ".".join([alias, *rest[1:]])
                if target != ref:
                    return self.resolve(target, ff, depth + 1)
            if alias is None and not rest[0].startswith("_") and parts[0] != "torch":
                # a package re-exporting with `from .core import *` (the name is bound by the star
                # import, which the facts do not bind): look it up in the modules it star-imports
                # that are indexed (a followed library's are loaded by name: libfollow.StarExports).
                # Never torch's own: torch/nn/__init__.py's `from .modules import *` made
                # `torch.nn.Module` a project class wherever torch files are indexed, and held-out
                # zuko lost its transforms' dispatch (visible recall 0.78 -> 0.33 at 43a318b).
                for star in ff.star_imports:
                    if star == ff.module or not self.by_module.get(star):
                        continue
                    star_ff = self.module_file(star, ff)
                    exports = star_ff.exports if star_ff is not None else None
                    if exports is None or rest[0] in exports:
                        via_star = self.resolve(".".join([star, *rest]), ff, depth + 1)
                        if via_star is not None:
                            return via_star
            return None
        # a module-less reference (script module "" or top-level name)
        ff = self.module_file(parts[0], near)
        if ff is not None and len(parts) == 1:
            return None
        return None

    def is_compiling_predicate(self, ref: str, near: FileFacts | None, depth: int = 0) -> bool:
        """Is this project function true exactly under torch.compile (`is_tracing()` returning
        `is_torchdynamo_compiling() or ...`)?"""
        key = ("pred", ref, near.root if near is not None else "")
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = False  # recursion guard
        r = self.resolve(ref, near)
        result = False
        if r is not None and r[0] == "function" and depth < 6:
            ff, fn = self.functions[r[1]]
            result = fn.compiling_predicate or any(
                self.is_compiling_predicate(x, ff, depth + 1) for x in fn.predicate_refs
            )
        self.memo[key] = result
        return result

    def class_bases(self, cls_key: str) -> list[str]:
        ff, cls = self.classes[cls_key]
        out = []
        for base in cls.bases:
            r = self.resolve(base, ff)
            if r is not None and r[0] == "class":
                out.append(r[1])
        return out

    def mro(self, cls_key: str) -> list[str]:
        cached = self._mro_cache.get(cls_key)
        if cached is not None:
            return cached
        result = self._mro(cls_key)
        self._mro_cache[cls_key] = result
        return result

    def _mro(self, cls_key: str) -> list[str]:
        seen: list[str] = []
        stack = [cls_key]
        while stack:
            k = stack.pop(0)
            if k in seen or k not in self.classes:
                continue
            seen.append(k)
            stack = self.class_bases(k) + stack
        return seen

    def find_method(self, cls_key: str, name: str, after: str | None = None) -> str | None:
        order = self.mro(cls_key)
        if after is not None and after in order:
            order = order[order.index(after) + 1 :]
        for k in order:
            ff, cls = self.classes[k]
            qual = cls.methods.get(name)
            if qual is not None:
                return f"{ff.path}::{qual}"
        return None

    def find_attr(self, cls_key: str, attr: str) -> tuple[FileFacts, Any] | None:
        for k in self.mro(cls_key):
            ff, cls = self.classes[k]
            spec = cls.attrs.get(attr)
            if spec is not None:
                return ff, spec
        return None

    def is_module_class(self, cls_key: str) -> bool:
        for k in self.mro(cls_key):
            ff, cls = self.classes[k]
            if "forward" in cls.methods:
                return True
            for base in cls.bases:
                if base.startswith("torch.nn.") or base.endswith(MODULE_BASE_HINTS) or base == "Module":
                    return True
        return False

    def class_key_for(self, ref: str | None, near: FileFacts | None) -> str | None:
        r = self.resolve(ref, near)
        if r is not None and r[0] == "class":
            return r[1]
        return None

    def class_keys_for(self, ref: str | None, near: FileFacts | None) -> list[str]:
        """The project classes a reference stands for: one, or each of a joined ``A;B`` (each
        class a registry holds for a ``types.REGISTRY`` reference)."""
        if ref is not None and ref.startswith(T.REGISTRY):
            return self.registry_classes(ref[len(T.REGISTRY) :], near)
        return [k for k in (self.class_key_for(r, near) for r in T.ref_classes(ref)) if k is not None]

    def registry_classes(self, ref: str, near: FileFacts | None) -> list[str]:
        """The classes class decorators store into the module-level dict ``ref`` names
        (``pkg.MODELS`` or ``pkg.MODELS|mlp``): ``@register("mlp")`` whose ``register`` returns a
        function storing its parameter there (``MODELS[name] = cls``), or a bare ``@register``
        doing so itself; those registered under the literal key when one is given and matches."""
        where, _, key = ref.partition("|")
        index = self._registries()
        held = index.get(self._registry_name(where, near, 0), [])
        keyed = [k for k, name in held if key and name == key]
        return sorted({k for k, _name in held} if not keyed else set(keyed))

    def _registries(self) -> dict[str, list[tuple[str, str | None]]]:
        """Registry dict (qualified where it is defined) -> (class key, literal key) it is given
        by the project's class decorators (computed once)."""
        index = self.memo.get("registries")
        if index is not None:
            return index  # type: ignore[no-any-return]
        index = {}
        for cls_key, (ff, cls) in self.classes.items():
            for dec, called, key in cls.decorators:
                where = self._decorator_store(dec, called, ff)
                if where is not None:
                    index.setdefault(where, []).append((cls_key, key))
        self.memo["registries"] = index
        return index

    def _decorator_store(self, dec: str, called: bool, ff: FileFacts) -> str | None:
        """The registry dict a class decorator stores the class into (qualified where it is
        defined), or None."""
        r = self.resolve(dec, ff)
        if r is None or r[0] != "function":
            return None
        dff, fn = self.functions[r[1]]
        if called:
            ret = fn.returns
            if ret is None or ret.kind != T.FUNC or not (ret.ref or "").startswith("<local>"):
                return None
            inner = self.functions.get(f"{dff.path}::{(ret.ref or '')[len('<local>') :]}")
            if inner is None:
                return None
            dff, fn = inner
        if fn.stores_param is None or fn.stores_param[1] != 0:
            return None
        return self._registry_name(fn.stores_param[0], dff, 0)

    def _registry_name(self, ref: str, near: FileFacts | None, depth: int) -> str:
        """A module-level name followed through imports to the module that defines it
        (``pkg.models.MODELS`` re-exported from ``pkg.models.registry``)."""
        module, _, name = ref.rpartition(".")
        ff = self.module_file(module, near) if module else None
        alias = ff.aliases.get(name) if ff is not None else None
        if ff is None or alias is None or alias == ref or depth > 8:
            return ref
        return self._registry_name(alias, ff, depth + 1)

    def subclasses(self, cls_key: str) -> list[str]:
        """The project's classes deriving from ``cls_key``, transitively (computed once)."""
        index = self.memo.get("subclasses")
        if index is None:
            index = {}
            for key in self.classes:
                for base in self.class_bases(key):
                    index.setdefault(base, []).append(key)
            self.memo["subclasses"] = index
        out: list[str] = []
        todo = list(index.get(cls_key, ()))
        while todo:
            k = todo.pop(0)
            if k not in out:
                out.append(k)
                todo.extend(index.get(k, ()))
        return out

    def with_overrides(self, cls_key: str, name: str, found: str) -> list[str]:
        """``found`` (what ``self.name()`` resolves to in ``cls_key``) and, when it is a
        placeholder (abstract, ``pass``, ``raise NotImplementedError``), the subclasses' overrides:
        ``self._advance(t)`` in a base solver runs the concrete solver's ``_advance``."""
        if not self.functions[found][1].placeholder:
            return [found]
        out = [found]
        for sub in self.subclasses(cls_key):
            sff, scls = self.classes[sub]
            qual = scls.methods.get(name)
            if qual is not None and f"{sff.path}::{qual}" not in out:
                out.append(f"{sff.path}::{qual}")
        return out

    def member_names(self, cls_key: str, pattern: str) -> list[str]:
        """The methods (through the MRO) and attributes of ``cls_key`` whose names match
        ``pattern`` (``*_reduction``: ``types.SELF_MEMBER``)."""
        names: list[str] = []
        for k in self.mro(cls_key):
            _cff, cls = self.classes[k]
            for name in (*cls.methods, *cls.attrs):
                if name not in names and fnmatch.fnmatchcase(name, pattern):
                    names.append(name)
        return names

    def _named_dispatch(
        self, ff: FileFacts, fn: FunctionFacts, edge: CallEdge, receiver: str
    ) -> list[tuple[str, str | None, str | None]] | None:
        """``_dispatch_targets`` of a member of ``self`` picked by name on a known receiver: a
        ``getattr(self, f"{kind}_reduction")(x)`` pattern (each matching member of the receiver's
        class), or the member a method of ``self`` returns (``_returned_member``); else None."""
        if edge.kind == "deferred":
            member = self._returned_member(ff, edge)
            return None if member is None else self._dispatch_targets(ff, fn, member, receiver)
        if "*" not in edge.target or "." in edge.target:
            return None
        picked: list[tuple[str, str | None, str | None]] = []
        for name in self.member_names(receiver, edge.target):
            for t in self._dispatch_targets(ff, fn, replace(edge, target=name), receiver):
                if t not in picked:
                    picked.append(t)
        return picked

    def _returned_member(self, ff: FileFacts, edge: CallEdge) -> CallEdge | None:
        """``fn = self.get_reduction_func(kind); fn(x)`` where that method returns a member of
        ``self`` (``return getattr(self, f"{kind}_reduction")``, ``return self._reduce_sum``): the
        call of that member on ``self``, as a ``self`` edge; None for any other deferred call."""
        if edge.kind != "deferred" or edge.method != "__call__" or edge.target.endswith(("()", "]")):
            return None
        ty = self.deferred_type(edge.target, ff)
        if ty.kind != T.FUNC or not (ty.ref or "").startswith(T.SELF_MEMBER):
            return None
        return replace(edge, kind="self", target=(ty.ref or "")[len(T.SELF_MEMBER) :])

    def named_members(
        self, ff: FileFacts, fn: FunctionFacts, edge: CallEdge, cls_key: str
    ) -> list[tuple[str, str | None]]:
        """``getattr(self, f"{kind}_reduction")(x)`` (a ``self`` edge whose target is a name
        pattern), the class of ``self`` not known from the region: what calling each member of
        ``cls_key`` of such a name runs (a method and its overrides, a submodule's forward).  Each
        may run, as each branch of an ``if kind == ...`` chain may."""
        out: list[tuple[str, str | None]] = []
        for name in self.member_names(cls_key, edge.target):
            for t in self.edge_targets(ff, fn, replace(edge, target=name)):
                if t not in out:
                    out.append(t)
        return out

    def submodule_classes(self, cls_key: str, recursive: bool) -> list[str]:
        """Classes of the submodules ``cls_key`` assigns (``model.children()``); ``recursive``:
        theirs too, and the class itself (``model.modules()``)."""
        out: list[str] = [cls_key] if recursive else []
        todo = [cls_key]
        seen = {cls_key}
        while todo:
            current = todo.pop(0)
            for k in self.mro(current):
                ff, cls = self.classes[k]
                for name, spec in cls.attrs.items():
                    if spec.kind not in ("instance", "torch", "compiled", "list", "seq", "dict"):
                        continue
                    if name == T.CHILDREN and not self.is_container_class(k):
                        continue  # `super().__init__(*args)` of a base that does not keep them as children
                    for sub in self.spec_classes(ff, spec):
                        if sub not in out:
                            out.append(sub)
                        if recursive and sub not in seen:
                            seen.add(sub)
                            todo.append(sub)
        return out

    def is_container_class(self, cls_key: str) -> bool:
        """Whether a project class's MRO reaches a torch module container (``nn.Sequential``,
        ``nn.ModuleList``, ``nn.ModuleDict``), whose constructor's modules are its children."""
        for k in self.mro(cls_key):
            _ff, cls = self.classes[k]
            if any(T.MODULE_CONTAINERS.get(b) in ("list", "seq", "dict") for b in cls.bases):
                return True
        return False

    def call_method_of_class(self, cls_key: str, method: str) -> str | None:
        """What runs when an instance is called or a method is used.  Calling an instance runs the
        first ``__call__`` of its class's MRO: a project class's own (gpytorch's ``Module.__call__``,
        ``ExactGP.__call__``, which call ``self.forward`` or ``super().__call__``), else
        ``nn.Module.__call__``, that is ``forward``; ``.forward(...)`` is the forward; ``@p``
        (reading ``obj.p``) is the getter of a ``@property`` / ``functools.cached_property``."""
        if method.startswith("@"):
            # `obj.p` read (an attribute-read edge): the getter when `p` is a property
            found = self.find_method(cls_key, method[1:])
            return found if found is not None and _is_property(self.functions[found][1]) else None
        if method == "__call__":
            found = self.find_method(cls_key, "__call__")
            return found if found is not None else self.find_method(cls_key, "forward")
        if method == "forward":
            found = self.find_method(cls_key, "forward")
            return found if found is not None else self.find_method(cls_key, "__call__")
        return self.find_method(cls_key, method)

    def elements_of(
        self, container_ref: str, near: FileFacts, receiver: str | None = None
    ) -> tuple[list[str], int | None]:
        """Class keys of the elements of ``ClassRef|path`` (a ModuleList/Sequential/ModuleDict),
        of ``ClassRef|*`` / ``|**`` (its submodules), or of ``@A;B`` (a local container of those);
        ``receiver``: the class of ``self`` where it is known (a subclass's override of the method
        that filled the container, ``T.SELF_RESULT``)."""
        if container_ref.startswith(T.CLASSES):
            return self.class_keys_for(container_ref, near), None
        cls_ref, _, path = container_ref.partition("|")
        if path in ("*", "**"):
            owner = self._owner_key(cls_ref, near)
            return (self.submodule_classes(owner, path == "**") if owner is not None else []), None
        spec_info = self.spec_at(cls_ref, path, near)
        if spec_info is None:
            return [], None
        ff, spec = spec_info
        if spec.kind in ("list", "seq", "dict"):
            owner = (receiver or self._owner_key(cls_ref, near)) if "." not in path else None
            return self.spec_classes(ff, spec, owner), spec.count
        if spec.kind in ("instance", "compiled"):
            keys = [k for k in (self.class_key_for(r, ff) for r in spec.refs) if k is not None]
            return keys, None
        return [], None

    def spec_classes(self, ff: FileFacts, spec: Any, owner: str | None = None) -> list[str]:
        """The class keys a submodule spec's ``refs`` name; a container filled from a constructor
        parameter (``T.PARAM_ELEMENTS``) holds the modules the constructions pass there, one
        filled with what a method of ``self`` returns (``T.SELF_RESULT``) the modules that method
        of ``owner`` (the class of ``self``) returns."""
        out: list[str] = []
        for r in spec.refs:
            if r.startswith(T.PARAM_ELEMENTS):
                cls_ref, _, name = r[len(T.PARAM_ELEMENTS) :].rpartition("|")
                found = self.param_elements(ff, cls_ref, name)
            elif r.startswith(T.SELF_RESULT):
                found = self._method_result_classes(owner, r[len(T.SELF_RESULT) :]) if owner else []
            else:
                key = self.class_key_for(r, ff)
                found = [key] if key is not None else []
            out.extend(k for k in found if k not in out)
        return out

    def _is_own_container(self, ff: FileFacts, fn: FunctionFacts, container: str) -> bool:
        """Whether ``Class|attr`` is an attribute of the class of the method ``fn`` itself."""
        cls_ref, _, path = container.partition("|")
        return (
            "." not in path
            and path not in ("*", "**")
            and self.class_key_for(cls_ref, ff) == f"{ff.path}::{fn.cls}"
        )

    def _method_result_classes(self, owner: str, method: str) -> list[str]:
        """The module classes ``method`` of class ``owner`` (found in its MRO) returns an instance
        of (``GCN.init_conv`` returning ``GCNConv(...)``)."""
        key = self.find_method(owner, method) if owner in self.classes else None
        if key is None:
            return []
        mff, mfn = self.functions[key]
        ret = mfn.returns
        if ret is None or not ret.ref:
            return []
        if ret.kind in (T.INSTANCE, T.MODULE):
            return self.class_keys_for(ret.ref, mff)
        if ret.kind == T.DEFERRED:
            return self.deferred_class_keys(ret.ref, mff)
        return []

    def spec_at(self, cls_ref: str, path: str, near: FileFacts) -> tuple[FileFacts, Any] | None:
        cls_key = self._owner_key(cls_ref, near)
        if cls_key is None:
            return None
        return self.spec_at_key(cls_key, path)

    def _owner_key(self, cls_ref: str, near: FileFacts) -> str | None:
        """The class of ``Class`` or, for ``deferred:pkg.build``, of what ``pkg.build`` returns."""
        if not cls_ref.startswith("deferred:"):
            return self.class_key_for(cls_ref, near)
        fref = cls_ref[len("deferred:") :]
        ty = self.deferred_type(fref, near)
        if ty.kind not in (T.INSTANCE, T.MODULE) or not ty.ref:
            return None
        keys = self.class_keys_for(ty.ref, self._deferred_near(fref, near))
        return keys[0] if len(keys) == 1 else None

    def spec_at_key(self, cls_key: str, path: str) -> tuple[FileFacts, Any] | None:
        """What ``self.<path>`` holds in class ``cls_key`` (following submodules' own attributes)."""
        parts = path.split(".")
        current = cls_key
        result = None
        for i, part in enumerate(parts):
            found = self.find_attr(current, part)
            if found is None:
                return None
            ff, spec = found
            result = found
            if i < len(parts) - 1:
                if spec.kind not in ("instance", "compiled") or not spec.refs:
                    return None
                nxt = self.class_key_for(spec.refs[0], ff)
                if nxt is None:
                    return None
                current = nxt
        return result

    def deferred_type(self, ref: str, near: FileFacts | None, depth: int = 0) -> Ty:
        """The return type of a project function (following returns of other project functions);
        for ``f[i]`` (``a, b = f()``) the type of item i of the tuple it returns."""
        if depth > 6:
            return T.T_UNKNOWN
        if ref.endswith("()"):
            return self._returned_call_type(ref[:-2], near, depth)
        base, index = _deferred_item(ref)
        r = self.resolve(base, near)
        if r is None:
            return self.attr_call_type(base, near) if index is None else T.T_UNKNOWN
        kind, key = r
        if kind == "class":
            return Ty(T.INSTANCE, T.HIGH, None, ref) if index is None else T.T_UNKNOWN
        ff, fn = self.functions[key]
        if index is not None:
            ret = fn.returns_items[index] if index < len(fn.returns_items) else T.T_UNKNOWN
        else:
            ret = fn.returns or T.T_UNKNOWN
        if ret.kind == T.DEFERRED and ret.ref:
            followed = self.deferred_type(ret.ref, ff, depth + 1)
            if (
                followed.kind not in (T.INSTANCE, T.MODULE)
                and index is None
                and fn.returns_declared is not None
            ):
                return fn.returns_declared  # `-> ResNet` on a factory whose builder returns `model_cls(...)`
            return followed
        if (
            ret.kind not in (T.INSTANCE, T.MODULE, T.DEFERRED)
            and index is None
            and fn.returns_declared is not None
        ):
            return fn.returns_declared
        if ret.kind in (T.INSTANCE, T.MODULE) and ret.ref:
            # keep the class reference relative to the function's own file
            return ret
        return ret

    def _returned_call_type(self, ref: str, near: FileFacts | None, depth: int) -> Ty:
        """``ref()``: what calling the function that project function ``ref`` returns gives (a
        closure stored on ``self``: ``self.grid = self._grid_from_step(step)``)."""
        if near is None:
            return T.T_UNKNOWN
        keys = self.function_keys("deferred", ref, near)
        if len(keys) != 1:
            return T.T_UNKNOWN
        ff, fn = self.functions[keys[0]]
        ret = fn.returns or T.T_UNKNOWN
        if ret.kind == T.DEFERRED and ret.ref:
            return self.deferred_type(ret.ref, ff, depth + 1)
        return ret

    def attr_call_type(self, ref: str, near: FileFacts | None) -> Ty:
        """``Cls.attr``, ``attr`` no method of ``Cls`` but an attribute its ``__init__`` or a base's
        stores (``self.distance = self.default() if distance is None else distance`` in a base
        class of another file): what ``self.attr(...)`` gives, which one file's walk cannot see.  A
        tensor when every class the attribute can hold is a module (its call runs ``forward``, as
        for a submodule the class itself builds) or its ``__call__`` returns a tensor; else
        unknown."""
        cls_ref, _, attr = ref.rpartition(".")
        cls_key = self.class_key_for(cls_ref, near) if cls_ref else None
        found = self.find_attr(cls_key, attr) if cls_key is not None else None
        if found is None or self.find_method(cls_key or "", attr) is not None:
            return T.T_UNKNOWN
        sff, spec = found
        if spec.kind == "torch":
            return Ty(T.TENSOR, T.HIGH)  # a torch module (`self.proj = nn.Linear(...)` in a base)
        if spec.kind == "instance":
            keys = [self.class_key_for(r, sff) for r in spec.refs]
            modules = bool(keys) and all(k is not None and self.is_module_class(k) for k in keys)
            return Ty(T.TENSOR, T.MEDIUM) if modules else T.T_UNKNOWN
        if spec.kind != "param":
            return T.T_UNKNOWN
        targets = self.param_targets(sff, spec)
        for key in targets:
            tff, tfn = self.functions[key]
            module_forward = (
                tfn.name == "forward"
                and tfn.cls is not None
                and self.is_module_class(f"{tff.path}::{tfn.cls}")
            )
            if not module_forward and (tfn.returns is None or tfn.returns.kind != T.TENSOR):
                return T.T_UNKNOWN
        return Ty(T.TENSOR, T.MEDIUM) if targets else T.T_UNKNOWN

    def param_targets(self, ff: FileFacts, spec: Any, method: str = "__call__") -> list[str]:
        """What runs when ``self.net(...)`` is called, ``self.net`` being a constructor argument
        (``self.net = net`` in ``__init__``): the forwards of what the project's constructor calls
        pass there, by position or keyword (``AutoregressiveWrapper(TransformerWrapper(...))``,
        ``Bottleneck(enc, quantizer=VectorQuantize(...))``); with ``method``, that method of the
        instances passed (``self.base_kernel.forward(x)``, ``self.strategy.kl_divergence()``)."""
        if len(spec.refs) < 2:
            return []
        if len(spec.refs) > 2:
            # `self.set_reducer(reducer)` storing `Default() if reducer is None else reducer`: what
            # the constructions pass, and the default
            passed = self.param_targets(ff, SubmoduleSpec("param", spec.refs[:2], None, spec.loc), method)
            return list(dict.fromkeys([*passed, *self._default_targets(ff, spec.refs[2:], method)]))
        name, cls_ref = spec.refs
        cls_key = self.class_key_for(cls_ref, ff)
        init = self.find_method(cls_key, "__init__") if cls_key is not None else None
        params = self.functions[init][1].params if init is not None else []
        index = next(
            (i for i, p in enumerate(params) if p.name == name and p.kind in ("pos", "kwonly")), None
        )
        if index is None:
            return []
        keys = (name,) if params[index].kind == "kwonly" else (f"#{index}", name)
        guard = self.memo.setdefault("param_targets_active", set())
        if cls_key in guard:
            return []  # A(B(A(...))): do not recurse
        guard.add(cls_key)
        try:
            out: list[str] = []
            for eff, edge, owner, reached in self._constructions(cls_key) if cls_key is not None else ():
                via = keys
                if reached != init:
                    if reached is None or init is None or not self._hands_on_keyword(reached, init, name):
                        continue  # a subclass with its own constructor: its arguments mean something else
                    via = (name,)  # `Sub(reducer=r)`: Sub's **kwargs handed on to the base's __init__
                given = {"#0": edge.arg0} if edge.arg0 is not None else {}
                given.update((k, (kind, ref, meth)) for k, kind, ref, meth in edge.more_args)
                kind, ref, meth = next((given[k] for k in via if k in given), ("unknown", None, None))
                if kind == "unknown":
                    continue
                if method != "__call__" and kind == "instance" and ref:
                    kind, meth = "method", method  # the class constructed there (a factory's join is not)
                probe = _target_probe("param", (kind, ref, meth), edge.loc, owner)
                for key in self._site_targets(eff, probe)[0]:
                    if key not in out:
                        out.append(key)
            return out
        finally:
            guard.discard(cls_key)

    def _hands_on_keyword(self, reached: str, init: str, name: str) -> bool:
        """Whether keyword ``name`` given to the constructor whose ``__init__`` is ``reached`` gets
        to the base's ``init``: each ``__init__`` before it in the MRO of ``reached``'s class takes
        ``**kwargs``, has no parameter ``name`` and calls ``super().__init__`` (pytorch-metric-
        learning's ``TripletMarginLoss(reducer=r)`` through three bases to the one storing it)."""
        fn = self.functions.get(reached)
        if fn is None or fn[1].cls is None:
            return False
        start = f"{fn[0].path}::{fn[1].cls}"
        current: str | None = reached
        for _ in range(12):
            if current is None:
                return False
            if current == init:
                return True
            facts = self.functions[current][1]
            if (
                facts.cls is None
                or not any(p.kind == "varkw" for p in facts.params)
                or any(p.name == name for p in facts.params)
                or not any(e.kind == "super" and e.method == "__init__" for e in facts.calls)
            ):
                return False
            owner = f"{self.functions[current][0].path}::{facts.cls}"
            current = self.find_method(start, "__init__", after=owner)
        return False

    def _default_targets(self, ff: FileFacts, refs: tuple[str, ...], method: str) -> list[str]:
        """``method`` of a constructor argument's default (a ``"param"`` spec's refs after the
        first two): of a class, or for ``deferred:<factory>`` of the classes the factory returns."""
        out: list[str] = []
        for r in refs:
            if r.startswith("deferred:"):
                keys = self.deferred_class_keys(r[len("deferred:") :], ff)
            else:
                key = self.class_key_for(r, ff)
                keys = [key] if key is not None else []
            for t in (self.call_method_of_class(k, method) for k in keys):
                if t and t not in out:
                    out.append(t)
        return out

    def param_elements(self, ff: FileFacts, cls_ref: str, name: str) -> list[str]:
        """The module classes in what the project's constructions of ``cls_ref`` pass as parameter
        ``name`` of its ``__init__``, for a container filled from it (``self.flows =
        nn.ModuleList(flows)``): the elements of a list given there (``NormalizingFlow(base,
        [Planar(), Radial()])``, a local list filled by ``append``, ``Model(q0, *[...])``), or for a
        ``*ts`` parameter each module given from its position on (``Compose(A(), B())``)."""
        cls_key = self.class_key_for(cls_ref, ff)
        init = self.find_method(cls_key, "__init__") if cls_key is not None else None
        params = self.functions[init][1].params if init is not None else []
        index = next((i for i, p in enumerate(params) if p.name == name), None)
        if cls_key is None or index is None:
            return []
        star = params[index].kind == "varargs"
        guard = self.memo.setdefault("param_elements_active", set())
        if (cls_key, name) in guard:
            return []  # a list handed on to a constructor of the same class: do not recurse
        guard.add((cls_key, name))
        try:
            out: list[str] = []
            for eff, edge, _owner, reached in self._constructions(cls_key):
                if reached != init:
                    continue  # a subclass with its own constructor: its arguments mean something else
                given = [("#0", *edge.arg0)] if edge.arg0 is not None else []
                given.extend(edge.more_args)
                for key, kind, ref, _meth in given:
                    if star:
                        at = int(key[1:]) if key[:1] in "#*" and key[1:].isdigit() else -1
                        if at < index:
                            continue
                    elif key not in (name, *(() if params[index].kind == "kwonly" else (f"#{index}",))):
                        continue
                    for k in self._given_elements(eff, kind, ref, single=star and key[:1] == "#"):
                        if k not in out:
                            out.append(k)
            return out
        finally:
            guard.discard((cls_key, name))

    def _given_elements(self, ff: FileFacts, kind: str, ref: str | None, single: bool) -> list[str]:
        """The module classes an argument described as a compile target holds: a list's elements,
        or (``single``: one positional argument of a ``*args`` parameter) the module itself."""
        if not ref:
            return []
        if kind == "deferred":
            ty = self.deferred_type(ref, ff)
            near = self._deferred_near(ref, ff)
            if ty.kind in (T.MODLIST, T.ELEM) and ty.ref:
                return self.elements_of(ty.ref, near)[0]
            if single and ty.kind in (T.INSTANCE, T.MODULE) and ty.ref:
                return self.class_keys_for(ty.ref, near)
            return []
        if kind in ("modlist", "elem", "attr"):
            # a list, or an attribute: a container's elements (`Model(q0, self.blocks)`), or the
            # module it holds (`Compose(self.block)`)
            return self.elements_of(ref, ff)[0]
        if single and kind == "instance":
            return self.class_keys_for(ref, ff)
        return []

    def _constructions(self, cls_key: str) -> list[tuple[FileFacts, CallEdge, str | None, str | None]]:
        """The project's calls constructing ``cls_key`` (or a subclass) with a described module
        argument, each with the ``__init__`` it runs (computed once).  A subclass constructor's
        ``super().__init__(strategy)`` counts as a construction of the base it reaches."""
        index = self.memo.get("constructions")
        if index is None:
            index = {}
            for ff in self.files.values():
                for edge, owner in self._all_edges(ff):
                    if edge.kind == "name" and _describes_a_module_arg(edge):
                        r = self.resolve(edge.target, ff)
                        if r is not None and r[0] == "class":
                            reached = self.find_method(r[1], "__init__")
                            index.setdefault(r[1], []).append((ff, edge, owner, reached))
                for fn in ff.functions.values():
                    if fn.name != "__init__" or not fn.cls:
                        continue
                    sub = f"{ff.path}::{fn.cls}"
                    for edge in fn.calls:
                        if (
                            edge.kind == "super"
                            and edge.method == "__init__"
                            and _describes_a_module_arg(edge)
                        ):
                            reached = self.find_method(sub, "__init__", after=sub)
                            index.setdefault(sub, []).append((ff, edge, f"{ff.module}.{fn.cls}", reached))
            self.memo["constructions"] = index
        out = list(index.get(cls_key, ()))
        for sub in self.subclasses(cls_key):
            out.extend(index.get(sub, ()))
        live = self._live_files()
        if live is not None:
            # what a test file or another script builds never reaches the compiled program (normflows:
            # `Residual(LipschitzCNN(...))` only in residual_test.py); unless that is all there is
            out = [c for c in out if c[0].path in live] or out
        return out

    def _live_files(self) -> frozenset[str] | None:
        """The paths of the files a compiled program can run: the files holding compile sites, the
        files importing those (a script running a package's ``train(model)``), and the modules all
        of those import, transitively (module-level imports, star imports, the modules the calls
        name, each package on the way); None (every file) when there is no compile site or
        compiled functions are also declared (``assume-compiled``, ``# tclint: compiled``) or made
        by a project function wrapping ``torch.compile`` (its call sites are compile sites too).
        Read off the facts alone: ``_roots`` asks for constructions while it collects the sites."""
        if "live_files" in self.memo:
            live: frozenset[str] | None = self.memo["live_files"]
            return live
        sites = [ff.path for ff in self.files.values() if ff.compile_sites]
        declared = getattr(self.settings, "assume_compiled", None) or getattr(
            self.settings, "assume_compiled_forward", False
        )
        if (
            not sites
            or declared
            or any(fn.compile_marker or fn.compile_wrapper_param == 0 for _ff, fn in self.functions.values())
        ):
            self.memo["live_files"] = None
            return None
        imports: dict[str, set[str]] = {}
        importers: dict[str, set[str]] = {}
        for ff in self.files.values():
            refs = [*ff.aliases.values(), *ff.star_imports]
            refs.extend(edge.target for edge, _owner in self._all_edges(ff) if edge.target)
            mine = imports.setdefault(ff.path, set())
            for ref in refs:
                parts = ref.split(".")
                used = [self.module_file(".".join(parts[:i]), ff) for i in range(1, len(parts) + 1)]
                # and the file defining what the name resolves to: a package's lazy or re-exported
                # names (`from transformers import BertModel`: transformers/__init__.py imports
                # no model module, its _LazyModule does) are run from there
                resolved = self.resolve(ref, ff)
                if resolved is not None:
                    used.append(self.files.get(resolved[1].partition("::")[0]))
                for found in used:
                    if found is not None and found.path != ff.path:
                        mine.add(found.path)
                        importers.setdefault(found.path, set()).add(ff.path)
        self.memo["live_files"] = frozenset(_closure(_closure(sites, importers), imports))
        return self.memo["live_files"]

    def _deferred_near(self, ref: str, near: FileFacts) -> FileFacts:
        """The file a project function's return type is relative to (its own)."""
        r = self.resolve(_deferred_item(ref)[0], near)
        return self.functions[r[1]][0] if r and r[0] == "function" else near

    def deferred_class_keys(self, ref: str, near: FileFacts) -> list[str]:
        """The module classes a project function returns an instance of (``build_model(cfg)``,
        ``M.from_config(cfg)``): what a receiver or compile target typed ``deferred:ref`` is."""
        ty = self.deferred_type(ref, near)
        if ty.kind not in (T.INSTANCE, T.MODULE):
            return []
        return self.class_keys_for(ty.ref, self._deferred_near(ref, near))

    # ------------------------------------------------------------------ regions
    def build(self) -> None:
        self._collect_disabled()
        self._collect_opaque()
        self._collect_config()
        roots = list(self._roots())
        self._collect_hooks()
        self._held = frozenset()
        self._bfs(_fresh_roots(roots))
        for _ in range(HELD_PASSES):
            # a dispatch was capped: narrow it to the classes the compiled code can hold, which
            # uncaps regions that construct more classes (monotone, so a few passes settle it)
            if self._next_held == self._held:
                break
            self._held = self._next_held
            self.regions = {}
            self.disabled_calls = []
            self._bfs(_fresh_roots(roots))

    def _collect_disabled(self) -> None:
        for ff in self.files.values():
            for d in ff.disable_sites:
                r = self.resolve(d.ref, ff)
                if r is None and "|" not in d.ref:
                    # self.helper = torch.compiler.disable(self.helper)
                    cls_ref, _, attr = d.ref.rpartition(".")
                    cls_key = self.class_key_for(cls_ref, ff)
                    if cls_key is not None:
                        found = self.find_method(cls_key, attr)
                        if found:
                            r = ("function", found)
                if r is not None and r[0] == "function":
                    self.disabled[r[1]] = d.recursive

    def _collect_opaque(self) -> None:
        """Functions Dynamo does not inline: allow_in_graph'd ones and custom ops' bodies."""
        for ff in self.files.values():
            for site in ff.allow_in_graph:
                r = self.resolve(site.ref, ff)
                if r is not None and r[0] == "function":
                    self.allowed_in_graph.add(r[1])
            for qual in ff.custom_ops:
                self.allowed_in_graph.add(f"{ff.path}::{qual}")

    def _collect_hooks(self) -> None:
        """Hook functions by the function whose frame runs them: a hook registered on a module
        runs inside the frame that calls the module, i.e. with its ``forward``."""
        self.hooks: dict[str, list[tuple[str, Link]]] = {}
        for ff in self.files.values():
            for edge, owner in self._all_edges(ff):
                if edge.kind != "hook" or edge.arg0 is None:
                    continue
                hook_keys = self.function_keys(edge.method, edge.target, ff)
                if not hook_keys:
                    continue
                kind, ref, meth = edge.arg0
                probe = _target_probe("hook", (kind, ref, meth), edge.loc, owner)
                anchors, _m = self._site_targets(ff, probe)
                if not anchors and kind in ("attr", "method") and ref:
                    # model.fc.register_forward_hook(h), fc a torch module: it runs when the
                    # owner's forward calls self.fc
                    owner_key = self._owner_key(ref.partition("|")[0], ff)
                    found = self.call_method_of_class(owner_key, "__call__") if owner_key else None
                    anchors = [found] if found else []
                if not anchors and kind == "instance" and ref and ref.startswith("torch.nn."):
                    # `if isinstance(m, nn.Linear): m.register_forward_hook(h)` in a
                    # named_modules() loop: it runs where a project module calls such a submodule
                    anchors = self._torch_submodule_callers(ref)
                link = Link(ff.path, edge.loc, f"hook registered at {ff.path}:{edge.loc.line}")
                for anchor in anchors:
                    self.hooks.setdefault(anchor, []).extend((h, link) for h in hook_keys if h != anchor)

    def _torch_submodule_callers(self, torch_cls: str) -> list[str]:
        """The forwards of project module classes holding a ``torch_cls`` submodule
        (``self.fc = nn.Linear(...)``): where a hook on such a submodule runs."""
        index = self.memo.get("torch_submodule_callers")
        if index is None:
            index = {}
            for cls_key, (_cff, cf) in self.classes.items():
                for spec in cf.attrs.values():
                    if spec.kind != "torch":
                        continue
                    fwd = self.call_method_of_class(cls_key, "__call__")
                    for r in spec.refs:
                        if fwd and fwd not in index.setdefault(r, []):
                            index[r].append(fwd)
            self.memo["torch_submodule_callers"] = index
        return list(index.get(torch_cls, ()))

    def function_keys(self, kind: str, ref: str, ff: FileFacts) -> list[str]:
        """The project function a ``("func"|"local"|"deferred", ref)`` description names (for
        "deferred", the function that project function returns: a closure or a function)."""
        if kind == "local":
            key = f"{ff.path}::{ref}"
            return [key] if key in self.functions else []
        if kind == "deferred":
            ty = self.deferred_type(ref, ff)
            near = self._deferred_near(ref, ff)
            if ty.kind != T.FUNC or not ty.ref:
                return []
            if ty.ref.startswith("<local>"):
                key = f"{near.path}::{ty.ref[len('<local>') :]}"
                return [key] if key in self.functions else []
            ref, ff = ty.ref, near
        r = self.resolve(ref, ff)
        return [r[1]] if r is not None and r[0] == "function" else []

    def _collect_config(self) -> None:
        for ff in self.files.values():
            for key, (value, loc) in ff.dynamo_config.items():
                self.dynamo_config[key] = (value, ff.path, loc)

    def _site_label(self, ff: FileFacts, site: CompileSite) -> str:
        return f"`{site.text}` at {ff.path}:{site.loc.line}"

    def _roots(self) -> Iterator[tuple[str, Region]]:  # noqa: C901
        settings = self.settings
        has_wrappers = any(fn.compile_wrapper_param == 0 for _ff, fn in self.functions.values())
        for ff in self.files.values():
            for site in ff.compile_sites:
                self.sites[site.id] = (ff, site)
                keys, multiplier = self._site_targets(ff, site)
                self.site_targets[site.id] = keys
                if not keys:
                    if torch_only_site(site):
                        self.torch_only.append(
                            Unresolved(site, ff.path, f"`{site.text}` compiles only torch's own code")
                        )
                        continue
                    self.unresolved.append(
                        Unresolved(site, ff.path, f"cannot tell what `{site.text}` compiles")
                    )
                    continue
                receivers = self._site_receivers(ff, site)
                for key in keys:
                    # `for cls in (GCN, GAT): torch.compile(cls(...))`: the shared forward runs with
                    # each class as `self`, a region root per class
                    classes: list[str | None] = [*receivers.get(key, ())] or [None]
                    for receiver in classes:
                        region = Region(
                            func_key=key,
                            site=site,
                            root_label=self._site_label(ff, site),
                            links=[Link(ff.path, site.loc, f"compiled via `{site.text}`")],
                            multiplier=multiplier,
                            fullgraph=bool(site.options.get("fullgraph")),
                            options=dict(site.options),
                            receiver=receiver,
                        )
                        yield key, region
            # wrappers: calls / decorators that go through a project function returning torch.compile(arg)
            if not has_wrappers:
                continue  # (most projects define none: then no call or decorator can be one)
            for fn_qual, fn in ff.functions.items():
                for dec in fn.decorators:
                    r = self.resolve(dec, ff)
                    if r is not None and r[0] == "function":
                        wff, wfn = self.functions[r[1]]
                        if wfn.compile_wrapper_param == 0:
                            key = f"{ff.path}::{fn_qual}"
                            site = CompileSite(
                                f"{ff.path}@{fn.loc.line}",
                                "wrapper",
                                "func",
                                key,
                                None,
                                fn.loc,
                                None,
                                None,
                                {},
                                f"@{dec.rsplit('.', 1)[-1]}",
                            )
                            yield (
                                key,
                                Region(
                                    key,
                                    site,
                                    f"`@{dec.rsplit('.', 1)[-1]}` (wraps torch.compile) at {ff.path}:{fn.loc.line}",
                                    [
                                        Link(
                                            ff.path,
                                            fn.loc,
                                            f"compiled via `@{dec.rsplit('.', 1)[-1]}`, which wraps torch.compile",
                                        )
                                    ],
                                ),
                            )
            for edge, owner in self._all_edges(ff):
                if edge.kind != "name" or edge.arg0 is None:
                    continue
                r = self.resolve(edge.target, ff)
                if r is None or r[0] != "function":
                    continue
                wff, wfn = self.functions[r[1]]
                if wfn.compile_wrapper_param != 0:
                    continue
                kind, ref, meth = edge.arg0
                site = CompileSite(
                    f"{ff.path}@{edge.loc.line}:{edge.loc.col}",
                    "wrapper",
                    kind,
                    ref,
                    meth,
                    edge.loc,
                    owner,
                    None,
                    {},
                    f"{wfn.name}(...)",
                )
                keys, multiplier = self._site_targets(ff, site)
                self.sites[site.id] = (ff, site)
                self.site_targets[site.id] = keys
                for key in keys:
                    yield (
                        key,
                        Region(
                            key,
                            site,
                            f"`{wfn.name}(...)` (wraps torch.compile) at {ff.path}:{edge.loc.line}",
                            [
                                Link(
                                    ff.path,
                                    edge.loc,
                                    f"compiled via `{wfn.name}(...)`, which wraps torch.compile",
                                )
                            ],
                            multiplier,
                        ),
                    )
        patterns = list(getattr(settings, "assume_compiled", ()) or ())
        forward_all = bool(getattr(settings, "assume_compiled_forward", False))
        modules_matched: dict[tuple[str, str], bool] = {}  # (module, pattern) -> match, once per module
        for key, (ff, fn) in self.functions.items():
            label = None
            if fn.compile_marker:
                label = "`# tclint: compiled` marker"
            elif forward_all and fn.name == "forward" and fn.cls is not None:
                cls_key = f"{ff.path}::{fn.cls}"
                if cls_key in self.classes and self.is_module_class(cls_key):
                    label = "assume-compiled-forward"
            if label is None and patterns:
                pat = assumed_compiled(patterns, ff.module, fn.qualname, modules_matched)
                if pat is not None:
                    label = f"assume-compiled `{pat}`"
            if label is not None:
                yield key, Region(key, None, label, [Link(ff.path, fn.name_loc, f"compiled: {label}")])

    def _all_edges(self, ff: FileFacts) -> Iterator[tuple[CallEdge, str | None]]:
        for edge in ff.module_calls:
            yield edge, None
        for fn in ff.functions.values():
            owner = f"{ff.module}.{fn.cls}" if fn.cls else None
            for edge in fn.calls:
                yield edge, owner

    def _site_targets(self, ff: FileFacts, site: CompileSite) -> tuple[list[str], str | None]:  # noqa: C901
        kind, ref, method = site.target_kind, site.ref, site.method
        if ref is None:
            return [], None
        if kind == "local":
            key = f"{ff.path}::{ref}"
            return ([key] if key in self.functions else []), None
        if kind == "ctorparam":  # torch.compile(model) of an __init__ parameter: what constructions pass
            cls_ref, _, name = ref.rpartition("|")
            return self.param_targets(ff, SubmoduleSpec("param", (name, cls_ref), None, site.loc)), None
        if kind == "funcparam":  # torch.compile(model) of a module-level function's parameter
            return self.funcparam_targets(ff, ref, method), None
        if kind == "func":
            r = self.resolve(ref, ff)
            if r is None:
                return [], None
            if r[0] == "function":
                return [r[1]], None
            target = self.call_method_of_class(r[1], "__call__")
            return ([target] if target else []), None
        if kind == "instance":
            keys = self.class_keys_for(ref, ff)
            targets = [t for t in (self.call_method_of_class(k, "__call__") for k in keys) if t]
            if not targets and site.how in ("call", "method") and len(keys) == 1:
                # torch.compile(self) in a base class without forward: the subclasses' forwards
                targets = [
                    t
                    for t in (self.call_method_of_class(k, "__call__") for k in self.subclasses(keys[0]))
                    if t
                ]
            return targets, None
        if kind == "deferred":
            ty = self.deferred_type(ref, ff)
            near = self._deferred_near(ref, ff)
            if ty.kind in (T.INSTANCE, T.MODULE) and ty.ref:
                keys = self.class_keys_for(ty.ref, near)
                return [t for t in (self.call_method_of_class(k, "__call__") for k in keys) if t], None
            if ty.kind in (T.MODLIST, T.ELEM) and ty.ref:
                keys, count = self.elements_of(ty.ref, near)
                return [
                    t for t in (self.call_method_of_class(k, "__call__") for k in keys) if t
                ], _multiplier(count)
            if ty.kind == T.FUNC and ty.ref:
                return self.function_keys("deferred", ref, ff), None  # torch.compile(build_program(cfg))
            return [], None
        if kind == "method":
            cls_ref = ref
            near = ff
            if ref.startswith("deferred:"):
                fref = ref[len("deferred:") :]
                ty = self.deferred_type(fref, ff)
                near = self._deferred_near(fref, ff)
                if ty.kind == T.COMPILED and ty.ref:
                    # model = load(path) returning torch.compile(m): `model.score` is m's method
                    inner = next((s for s in near.compile_sites if s.id == ty.ref), None)
                    if (
                        inner is None
                        or inner.method is not None
                        or inner.target_kind not in ("instance", "deferred")
                    ):
                        return [], None
                    inner_ref = inner.ref if inner.target_kind == "instance" else f"deferred:{inner.ref}"
                    active = self.memo.setdefault("compiled_method_active", set())
                    if (near.path, inner.id) in active:
                        return [], None  # def f(): return torch.compile(f()): do not recurse
                    active.add((near.path, inner.id))
                    try:
                        return self._site_targets(near, replace(site, target_kind="method", ref=inner_ref))
                    finally:
                        active.discard((near.path, inner.id))
                if ty.kind not in (T.INSTANCE, T.MODULE) or not ty.ref:
                    return [], None
                cls_ref = ty.ref
            if ref.startswith("elem:"):
                # torch.compile(self.layers[i].masked_forward): that method of the elements' classes
                keys, _count = self.elements_of(ref[len("elem:") :], ff)
                return [m for m in (self.find_method(k, method or "forward") for k in keys) if m], None
            found_all: list[str] = []
            for cls_key in self.class_keys_for(cls_ref, near):
                # model.encoder could be a submodule rather than a method
                found = self.find_method(cls_key, method or "forward")
                if found is not None:
                    found_all.append(found)
                    continue
                attr = self.find_attr(cls_key, method or "")
                if attr is not None:
                    aff, spec = attr
                    keys, multiplier = self._targets_of_spec(aff, spec)
                    if len(T.ref_classes(cls_ref)) == 1:
                        return keys, multiplier
                    found_all.extend(keys)
                elif method == "module":
                    # torch.compile(ddp_model.module): DDP / DataParallel / FSDP hold the module
                    # there, and a wrapped module types as the module it wraps
                    target = self.call_method_of_class(cls_key, "__call__")
                    if target:
                        found_all.append(target)
            return found_all, None
        if kind in ("attr",):
            cls_ref, _, path = ref.partition("|")
            info = self.spec_at(cls_ref, path, ff)
            if info is None and "." in path:
                found_in = self._submodule_method(cls_ref, path, ff)
                if found_in:
                    return found_in, None
            if info is None:
                # self.forward / model.some_method
                attr_cls = self.class_key_for(cls_ref, ff)
                if attr_cls is not None:
                    found = self.find_method(attr_cls, path.split(".")[-1])
                    if found:
                        return [found], None
                return [], None
            return self._targets_of_spec(*info)
        if kind in ("elem", "modlist"):
            keys, count = self.elements_of(ref, ff)
            targets = [t for t in (self.call_method_of_class(k, "__call__") for k in keys) if t]
            return targets, _multiplier(count)
        return [], None

    def funcparam_targets(self, ff: FileFacts, ref: str, method: str | None) -> list[str]:
        """What ``torch.compile(model)`` (``torch.compile(model.step)`` with ``method``) compiles in
        ``def train(model, ...)``, ``ref`` being ``train|model``: what the project's calls of that
        module-level function or method pass as its first parameter (``train(Net())``,
        ``train(build(cfg))``, ``trainer.fit(Regressor(), loader)``); other parameters are not
        described at calls."""
        qual, _, name = ref.rpartition("|")
        key = f"{ff.path}::{qual}"
        if key not in self.functions:
            return []
        params = [p for p in self.functions[key][1].params if p.kind == "pos"]
        if not params or params[0].name != name:
            return []
        guard = self.memo.setdefault("funcparam_active", set())
        if key in guard:
            return []  # def train(model): ... train(model): do not recurse
        guard.add(key)
        try:
            out: list[str] = []
            for eff in self.files.values():
                for edge, owner in self._all_edges(eff):
                    if edge.arg0 is None or edge.arg0[0] == "unknown" or not self._calls(eff, edge, key):
                        continue
                    kind, given, meth = edge.arg0
                    if method is not None:
                        if kind != "instance" or meth is not None:
                            continue
                        kind, meth = "method", method  # train(Net()) with torch.compile(model.step)
                    probe = _target_probe("param", (kind, given, meth), edge.loc, owner)
                    out.extend(k for k in self._site_targets(eff, probe)[0] if k not in out)
            return out
        finally:
            guard.discard(key)

    def _calls(self, ff: FileFacts, edge: CallEdge, key: str) -> bool:
        """Whether ``edge`` calls function ``key``: a module-level function by name, or a method on
        an instance of its class or of a subclass that does not override it
        (``trainer.fit(...)``, ``Trainer(...).fit(...)``)."""
        if edge.kind == "name":
            return self.resolve(edge.target, ff) == ("function", key)
        if edge.kind != "instance" or edge.method != self.functions[key][1].name:
            return False
        return any(self.find_method(k, edge.method) == key for k in self.class_keys_for(edge.target, ff))

    def _submodule_method(self, cls_ref: str, path: str, ff: FileFacts) -> list[str]:
        """``model.decoder.decode_step`` / ``self.model.predict``: the method at the end of a
        submodule path, in the classes the submodule holds (a constructor argument: those the
        constructions pass there)."""
        head, _, last = path.rpartition(".")
        info = self.spec_at(cls_ref, head, ff)
        if info is None:
            return []
        aff, spec = info
        if spec.kind == "param":
            return self.param_targets(aff, spec, method=last)
        if spec.kind not in ("instance", "compiled"):
            return []
        keys = [k for k in (self.class_key_for(r, aff) for r in spec.refs) if k is not None]
        return [m for m in (self.find_method(k, last) for k in keys) if m]

    def _targets_of_spec(self, ff: FileFacts, spec: Any) -> tuple[list[str], str | None]:
        if spec.kind == "param":
            return self.param_targets(ff, spec), None
        if spec.kind == "func":
            # self._fn = helper ... torch.compile(self._fn)
            return [k for r in spec.refs for k in self.function_keys("func", r, ff)], None
        keys = self.spec_classes(ff, spec)
        targets = [t for t in (self.call_method_of_class(k, "__call__") for k in keys) if t]
        if spec.kind in ("list", "seq", "dict"):
            return targets, _multiplier(spec.count)
        return targets, None

    def _site_receivers(self, ff: FileFacts, site: CompileSite) -> dict[str, list[str]]:
        """For a compiled instance, its classes by the function that runs (``torch.compile(Sub())``
        runs ``Base.forward`` with ``self`` a ``Sub``; a site compiling one of several subclasses
        sharing that forward runs it with each)."""
        if site.target_kind == "instance":
            keys = self.class_keys_for(site.ref, ff)
        elif site.target_kind in ("elem", "modlist") and site.ref:
            keys = self.elements_of(site.ref, ff)[0]
        elif site.target_kind == "deferred" and site.ref:
            keys = self.deferred_class_keys(site.ref, ff)
        else:
            return {}
        out: dict[str, list[str]] = {}
        for k in keys:
            target = self.call_method_of_class(k, "__call__")
            if target is not None and k not in out.setdefault(target, []):
                out[target].append(k)
        return out

    def _elem_container(self, ff: FileFacts, fn: FunctionFacts, target: str) -> str | None:
        """The container reference (``elements_of``) an ``elem`` edge iterates: ``ClassRef|path`` or
        ``@A;B`` as given, a bare ``flows`` being ``self.flows`` of the class of ``fn``; None when
        ``fn`` is not a method of a project class."""
        if "|" in target or target.startswith(T.CLASSES):
            return target
        cls_key = f"{ff.path}::{fn.cls}" if fn.cls else None
        if cls_key is None or cls_key not in self.classes:
            return None
        cff, ccls = self.classes[cls_key]
        return f"{cff.module}.{ccls.qualname}|{target}"

    def _param_call_targets(
        self, ff: FileFacts, fn: FunctionFacts, edge: CallEdge
    ) -> list[tuple[str, str | None, str | None]]:
        """``def transform(x, module): return module(x)`` in the region: what runs is each module
        the region's calls pass (its forward, with its class as the receiver); for items of a
        collection of bound methods (``(t.inverse for t in self.ts)``), that method of each."""
        classes = self._passed_classes(f"{ff.path}::{fn.qualname}", edge.target, 0)
        return [
            (t, None, k) for k, meth in classes if (t := self.call_method_of_class(k, meth or edge.method))
        ]

    def _passed_classes(self, key: str, name: str, depth: int) -> list[tuple[str, str | None]]:
        """The module classes the compiled region's calls of function ``key`` pass as its parameter
        ``name`` (by position or keyword): a module the caller names (``module=m`` of ``for m in
        self.children()``, a submodule ``self.enc``), or the caller's own parameter handed on
        (``op.transform(x, module)``), followed up to four calls back.  Only calls already in the
        region count (those met before ``key`` in the region walk), so an eager caller adds none.
        ``name[]`` (a loop over the parameter: ``for func in funcs: func(x)``) takes the elements of
        the containers passed there (``self._cascade(x, self.transforms)``), not single modules,
        with the method a collection of bound methods names (``(t.inverse for t in self.ts)``);
        (class, that method or None)."""
        _ff, fn = self.functions[key]
        elements = name.endswith("[]")
        name = name.removesuffix("[]")
        positional = [p.name for p in fn.params if p.kind == "pos"]
        keys = {name, *((f"#{positional.index(name)}",) if name in positional else ())}
        out: list[tuple[str, str | None]] = []
        for cff, cfn, cedge in getattr(self, "_region_callers", {}).get(key, ()):
            for k, kind, ref, meth in cedge.more_args:
                if k not in keys or not ref or (elements and kind not in ("modlist", "attr")):
                    continue
                if kind == "instance":
                    found = self.class_keys_for(ref, cff)
                elif kind in ("elem", "modlist", "attr"):
                    found = self.elements_of(ref, cff)[0]
                else:
                    found = []
                bound = meth if elements and kind == "modlist" else None
                out.extend(c for c in ((f, bound) for f in found) if c not in out)
            if depth >= 4:
                continue
            own = {p.name for p in cfn.params}
            for k, desc in cedge.args:
                if k in keys and desc.startswith("name:") and desc[5:] in own:
                    handed = self._passed_classes(
                        f"{cff.path}::{cfn.qualname}", desc[5:] + ("[]" if elements else ""), depth + 1
                    )
                    out.extend(c for c in handed if c not in out)
        return out

    def _dispatch_targets(
        self, ff: FileFacts, fn: FunctionFacts, edge: CallEdge, receiver: str | None
    ) -> list[tuple[str, str | None, str | None]]:
        """``edge_targets`` with virtual dispatch: ``self.m()`` resolves on the class of ``self``
        when it is known (a base class's forward calling ``self.apply_transform`` of the subclass
        that was compiled); (callee, multiplier, the callee's receiver)."""
        if receiver is not None and edge.kind in ("deferred", "self") and edge.method == "__call__":
            named = self._named_dispatch(ff, fn, edge, receiver)
            if named is not None:
                return named
        on_self = edge.kind == "self" and "." not in edge.target and edge.method == "__call__"
        if on_self and receiver is not None:
            found = self.find_method(receiver, edge.target)
            if found is not None:
                return [(found, None, receiver)]
        if edge.kind == "self" and not edge.target and edge.method.startswith("@"):
            on_self = True  # `self.p` read: the property of the class of `self`
            if receiver is not None:
                found = self.call_method_of_class(receiver, edge.method)
                if found is not None:
                    return [(found, None, receiver)]
        if edge.kind == "instance":
            out: list[tuple[str, str | None, str | None]] = []
            for k in self.class_keys_for(edge.target, ff):
                t = self.call_method_of_class(k, edge.method)
                if t:
                    out.append((t, None, k))
            return out
        container = self._elem_container(ff, fn, edge.target) if edge.kind == "elem" else None
        if container is not None:
            # each element's method runs on that element (its class is known: a stub it
            # inherits is what it runs, subclass_dispatch); a container of `self` filled by a method
            # of `self` holds what the receiver's override returns
            own = receiver is not None and fn.cls is not None and self._is_own_container(ff, fn, container)
            keys, count = self.elements_of(container, ff, receiver if own else None)
            return [
                (t, _multiplier(count), k) for k in keys if (t := self.call_method_of_class(k, edge.method))
            ]
        if edge.kind == "super" and receiver is not None:
            # the base's method runs with the same `self`; `super().__call__()` that reaches
            # nn.Module's runs the receiver's forward
            bases = self.edge_targets(ff, fn, edge)
            if fn.name == "__call__" and edge.method == "__call__" and bases:
                _cff, cfn = self.functions[bases[0][0]]
                if cfn.name == "forward":
                    fwd = self.find_method(receiver, "forward")
                    bases = [(fwd, None)] if fwd else bases
            return [(c, m, receiver) for c, m in bases]
        return [(c, m, receiver if on_self else None) for c, m in self.edge_targets(ff, fn, edge)]

    def subclass_dispatch(
        self,
        targets: list[tuple[str, str | None, str | None]],
        edge: CallEdge,
        receiver: str | None,
        ff: FileFacts | None = None,
        fn: FunctionFacts | None = None,
    ) -> list[tuple[str, str | None, str | None, tuple[str, int] | None]]:
        """``targets`` (``_dispatch_targets``) and, for a method called on a receiver typed as a
        base class whose own method is abstract (``@abstractmethod``, ``pass``, ``...``, ``raise
        NotImplementedError``), the overrides of its subclasses: zuko's ``self.transform
        .call_and_ladj(x)`` with ``transform: Transform`` built by a factory, whose concrete class
        nothing names.  Each override comes with (the base's name, how many subclasses override
        it), which bounds its region's confidence (``_dispatch_cap``).  Calls on ``self`` are
        ``with_overrides``'s; torch's own classes are never followed.  A receiver typed as a class
        outside the project (``transform: torch.distributions.Transform``) that resolves to nothing
        runs one of the project's subclasses of it that define the method
        (``external_overrides``), with the same caps, except for the overrides that the classes
        the compiled code can hold run (``_narrowed``)."""
        out: list[tuple[str, str | None, str | None, tuple[str, int] | None]] = [
            (c, m, r, None) for c, m, r in targets
        ]
        if edge.kind == "self" and "." not in edge.target and edge.method == "__call__":
            # `self.m(x)`: with_overrides's; `self.t(c)` on a submodule typed as a base class
            # (zuko's `Flow.transform: LazyTransform`, whose forward is abstract) dispatches
            own = receiver or (
                f"{ff.path}::{fn.cls}" if ff is not None and fn is not None and fn.cls else None
            )
            if (
                own is None
                or own not in self.classes
                or "*" in edge.target  # getattr(self, pattern): named_members's
                or self.find_method(own, edge.target) is not None
            ):
                return out
        for callee, multiplier, recv in targets:
            cff, cfn = self.functions[callee]
            if not cfn.placeholder or cfn.cls is None or _is_torch_module(cff.module):
                continue
            base = f"{cff.path}::{cfn.cls}"
            if base not in self.classes:
                continue
            overrides: list[tuple[str, str]] = []
            for sub in self.subclasses(_dispatch_root(base, recv, self.subclasses(base))):
                sff, scls = self.classes[sub]
                qual = scls.methods.get(cfn.name)
                if qual is None or _is_torch_module(sff.module):
                    continue
                key = f"{sff.path}::{qual}"
                if not self.functions[key][1].placeholder and all(k != key for k, _s in overrides):
                    overrides.append((key, sub))
            out.extend(self._narrowed(overrides, cfn.name, (cfn.cls, len(overrides)), multiplier))
        if not targets and ff is not None and fn is not None and edge.method not in ("__call__", "forward"):
            for ref in self._external_receiver_refs(ff, fn, edge, receiver):
                found = self.external_overrides(ref, edge.method)
                via = (ref.rsplit(".", 1)[-1], len(found))
                found = [(key, sub) for key, sub in found if all(o[0] != key for o in out)]
                out.extend(self._narrowed(found, edge.method, via, None))
        return out

    def _narrowed(
        self, overrides: list[tuple[str, str]], method: str, via: tuple[str, int], multiplier: str | None
    ) -> list[tuple[str, str | None, str | None, tuple[str, int] | None]]:
        """The dispatch entries of ``overrides`` ((override, its class) of ``method``): each capped
        by ``via``, except the overrides that a class the compiled code can hold
        (``held_classes``, known after a first pass) runs; those are what the call runs, not a
        guess among all the subclasses, so they are not capped (zuko: 8 classes override
        ``call_and_ladj``, the flows construct 4 of them in the compiled code or in the
        constructors of the objects it runs on); their ``via`` counts 0 overrides (no cap; the
        chain still names the base)."""
        if overrides:
            self._capped_dispatch = True
        held = self._held_overrides(method) if self._held else set()
        return [(key, multiplier, sub, (via[0], 0) if key in held else via) for key, sub in overrides]

    def _held_overrides(self, method: str) -> set[str]:
        """The functions ``method`` resolves to in the classes the compiled code can hold."""
        memo = self.memo.setdefault(("held_overrides", self._held), {})
        out = memo.get(method)
        if out is None:
            found = (self.call_method_of_class(k, method) for k in self._held)
            out = memo[method] = {k for k in found if k is not None}
        return out

    def held_classes(self) -> frozenset[str]:
        """The project classes the compiled code can hold an instance of, as far as their
        construction is visible (rapid type analysis): the classes constructed in the functions
        that contain the compile sites, in the regions reached without a capped dispatch, in
        project functions those call by name (factories, two calls deep), and in the
        ``__init__`` methods (through the MRO) of every such class and of the classes the regions
        run on, transitively.  A class only a capped guess constructs is not evidence."""
        todo: list[tuple[str, int]] = []
        classes: set[str] = set()
        for ff in {ff.path: ff for ff, _site in self.sites.values()}.values():
            # a module-level compile site: the module's own statements are its function
            classes.update(self._constructed_by(ff, ff.module_calls, todo))
        for ff, site in self.sites.values():
            if site.func is not None:
                todo.append((f"{ff.path}::{site.func}", 0))
        for key, region in self.regions.items():
            if region.dispatch_cap is None:
                todo.append((key, 0))
                if region.receiver is not None:
                    classes.add(region.receiver)
        held: set[str] = set()
        seen: set[str] = set()
        pending = list(classes)
        while todo or pending:
            while pending:
                cls_key = pending.pop()
                if cls_key in held or cls_key not in self.classes:
                    continue
                held.add(cls_key)
                for k in self.mro(cls_key):
                    qual = self.classes[k][1].methods.get("__init__")
                    if qual is not None:
                        todo.append((f"{self.classes[k][0].path}::{qual}", 1))
            if todo:
                key, depth = todo.pop()
                if key in seen or key not in self.functions:
                    continue
                seen.add(key)
                ff, fn = self.functions[key]
                for made in self._constructed_by(ff, fn.calls, todo if depth < 2 else None, depth + 1):
                    pending.append(made)
        return frozenset(held)

    def _constructed_by(
        self,
        ff: FileFacts,
        calls: list[CallEdge],
        todo: list[tuple[str, int]] | None,
        depth: int = 1,
    ) -> list[str]:
        """The project classes ``calls`` construct by name; the project functions they call by
        name go on ``todo`` (when given)."""
        out: list[str] = []
        for edge in calls:
            if edge.kind != "name":
                continue
            r = self.resolve(edge.target, ff)
            if r is None:
                continue
            if r[0] == "class":
                out.append(r[1])
            elif todo is not None:
                todo.append((r[1], depth))
        return out

    def autograd_function_forward(self, ref: str, ff: FileFacts) -> str | None:
        """``Fn.apply(...)`` of a project subclass of ``torch.autograd.Function``: Dynamo traces
        its ``forward`` (a break there is reported there)."""
        owner, _, method = ref.rpartition(".")
        if method != "apply" or not owner:
            return None
        key = self.class_key_for(owner, ff)
        if key is None:
            return None
        for k in self.mro(key):
            bases = self.classes[k][1].bases
            if any(
                _external_key(b) == ("torch", "Function") for b in bases if b.startswith("torch.autograd")
            ):
                if self.find_method(key, "apply") is not None:
                    return None  # the project's own apply
                return self.find_method(key, "forward")
        return None

    def _external_receiver_refs(
        self, ff: FileFacts, fn: FunctionFacts, edge: CallEdge, receiver: str | None
    ) -> list[str]:
        """The classes outside the project that the receiver of ``edge`` is typed as (an
        attribute ``self.t`` annotated or built as one, an annotated parameter, what a project
        function returns), when none of them resolves to a project class."""
        refs: list[str] = []
        near = ff
        if edge.kind == "self" and edge.target:
            cls_key = receiver or (f"{ff.path}::{fn.cls}" if fn.cls else None)
            info = (
                self.spec_at_key(cls_key, edge.target)
                if cls_key is not None and cls_key in self.classes
                else None
            )
            if info is not None and info[1].kind == "instance":
                near, refs = info[0], list(info[1].refs)
        elif edge.kind == "instance":
            refs = list(T.ref_classes(edge.target))
        elif edge.kind == "deferred":
            ty = self.deferred_type(edge.target, ff)
            if ty.kind == T.INSTANCE and ty.ref:
                near, refs = self._deferred_near(edge.target, ff), list(T.ref_classes(ty.ref))
        if not refs or any(self.resolve(r, near) is not None for r in refs):
            return []
        return [r for r in refs if "." in r and not r.startswith(_NEVER_DISPATCHED)]

    def external_overrides(self, ref: str, method: str) -> list[tuple[str, str]]:
        """(override, its class) for each project class deriving, directly or through project
        classes, from ``ref``, a class outside the project, whose MRO below ``ref`` defines
        ``method`` (one entry per distinct function): zuko's transforms subclass torch's
        ``Transform`` and define ``call_and_ladj``.  Torch's own files are left out."""
        index = self.memo.get("external_subclasses")
        if index is None:
            index = {}
            for key, (cff, cls) in self.classes.items():
                if _is_torch_module(cff.module):
                    continue
                for base in cls.bases:
                    if "." in base and self.resolve(base, cff) is None:
                        index.setdefault(_external_key(base), []).append(key)
            self.memo["external_subclasses"] = index
        out: list[tuple[str, str]] = []
        for direct in index.get(_external_key(ref), ()):
            for sub in [direct, *self.subclasses(direct)]:
                found = self.call_method_of_class(sub, method)
                if found is None or self.functions[found][1].placeholder:
                    continue
                if all(k != found for k, _s in out):
                    out.append((found, sub))
        return out

    def _bfs(self, roots: list[tuple[str, Region]]) -> None:  # noqa: C901 - long, not split yet (issue 16)
        queue: deque[tuple[str, str | None]] = deque()
        self._seen: set[tuple[str, str | None]] = set()
        # callee -> the region calls of it that pass arguments (Project._passed_classes)
        self._region_callers: dict[str, list[tuple[FileFacts, FunctionFacts, CallEdge]]] = {}
        for key, region in roots:
            if key in self.disabled or key not in self.functions:
                continue
            if region.site is not None and region.parent is None and len(region.links) == 1:
                rff, rfn = self.functions[key]
                region.links.append(Link(rff.path, rfn.name_loc, _display(rfn)))
            existing = self.regions.get(key)
            if existing is None or (existing.depth > 0 and region.depth == 0):
                self.regions[key] = region
                self._seen.add((key, region.receiver))
                queue.append((key, region.receiver))
            else:
                if region.fullgraph and not existing.fullgraph:
                    existing.fullgraph = True
                if (key, region.receiver) not in self._seen:
                    self._seen.add((key, region.receiver))
                    queue.append((key, region.receiver))
        self._path_cap: dict[tuple[str, str | None], int | None] = {}
        self._capped_dispatch = False
        while queue:
            key, receiver = queue.popleft()
            region = self.regions[key]
            # re-queued with another class of `self` through a subclass dispatch: what that
            # receiver reaches is capped by that path, not by the region's first one
            path_cap = self._path_cap.get((key, receiver), region.dispatch_cap)
            ff, fn = self.functions[key]
            for wrapper in self.decorator_wrappers(ff, fn):
                self._enqueue_wrapper(queue, wrapper, region, ff, fn)
            for hook, link in self.hooks.get(key, ()):
                self._enqueue_hook(queue, hook, link, region, fn)
            for edge in fn.calls:
                if edge.unless is not None and self.is_compiling_predicate(edge.unless, ff):
                    continue  # under a branch that is not traced under compile
                targets = (
                    self._param_call_targets(ff, fn, edge)
                    if edge.kind == "param"
                    else self._dispatch_targets(ff, fn, edge, receiver)
                )
                for callee, multiplier, callee_receiver, via in self.subclass_dispatch(
                    targets, edge, receiver, ff, fn
                ):
                    if callee in self.allowed_in_graph:
                        continue
                    if edge.more_args or edge.args:
                        self._region_callers.setdefault(callee, []).append((ff, fn, edge))
                    if callee in self.disabled:
                        self.disabled_calls.append(DisabledCall(key, callee, edge, self.disabled[callee]))
                        if self.disabled[callee]:
                            continue
                        # disable(recursive=False): only that frame is skipped; what it calls is
                        # compiled as new frames.
                        cff, cfn = self.functions[callee]
                        for sub_edge in cfn.calls:
                            for sub, _m in self.edge_targets(cff, cfn, sub_edge):
                                self._enqueue(
                                    queue, sub, region, cff, cfn, sub_edge, None, parent_cap=path_cap
                                )
                        continue
                    self._enqueue(
                        queue, callee, region, ff, fn, edge, multiplier, callee_receiver, via, path_cap
                    )
        # what the next pass narrows capped dispatch to (resolved here, where a library-following
        # project records the modules it misses)
        self._next_held = self.held_classes() if self._capped_dispatch else self._held

    def decorator_wrappers(self, ff: FileFacts, fn: FunctionFacts) -> list[str]:
        """The wrapper functions a project decorator puts around ``fn``: they run inside the
        compiled frame (`@can_return_tuple`, `@deprecate_kwarg(...)`, ...).  For a decorator (or
        a decorator factory) that is a project function, its innermost nested functions."""
        out: list[str] = []
        for dec in fn.decorators:
            r = self.resolve(dec, ff)
            if r is None or r[0] != "function":
                continue
            out.extend(self._decorator_wrappers_of(r[1], 0))
        return out

    def _decorator_wrappers_of(self, key: str, depth: int) -> list[str]:
        """The per-call wrappers of the decorator function ``key``: its innermost nested
        functions that call the decorated function (an outer parameter); helpers run at
        decoration time are not per call.  A decorator that makes none itself but hands over to
        project functions (gpytorch's ``cached`` returning ``_cached(method=method, name=name)``)
        has theirs, two hand-overs deep."""
        cached = self._wrappers.get(key)
        if cached is not None:
            return cached
        self._wrappers[key] = []  # a decorator handing over to itself (functools.partial(_cached, ...))
        dff, dfn = self.functions[key]
        prefix = dfn.qualname + ".<locals>."
        nested = [q for q in dff.functions if q.startswith(prefix)]
        cached = [
            f"{dff.path}::{q}"
            for q in nested
            if dff.functions[q].calls_outer_param and not any(o.startswith(q + ".<locals>.") for o in nested)
        ]
        if not cached and not nested and depth < 2:
            for edge in dfn.calls:
                if edge.kind != "name":
                    continue
                r = self.resolve(edge.target, dff)
                if r is not None and r[0] == "function" and r[1] != key:
                    cached.extend(w for w in self._decorator_wrappers_of(r[1], depth + 1) if w not in cached)
        self._wrappers[key] = cached
        return cached

    def _enqueue_wrapper(
        self,
        queue: deque[tuple[str, str | None]],
        wrapper: str,
        region: Region,
        ff: FileFacts,
        fn: FunctionFacts,
    ) -> None:
        if wrapper in self.regions or wrapper not in self.functions:
            return
        wff, wfn = self.functions[wrapper]
        label = f"{_display(wfn)} (decorator wrapper around {_display(fn)})"
        self.regions[wrapper] = Region(
            func_key=wrapper,
            site=region.site,
            root_label=region.root_label,
            links=[Link(wff.path, wfn.name_loc, label)],
            multiplier=region.multiplier,
            loop_caller=region.loop_caller,
            loop_key=region.loop_key,
            fullgraph=region.fullgraph,
            options=region.options,
            depth=region.depth + 1,
            parent=region,
        )
        queue.append((wrapper, None))

    def _enqueue_hook(
        self, queue: deque[tuple[str, str | None]], hook: str, link: Link, region: Region, fn: FunctionFacts
    ) -> None:
        if hook in self.regions or hook not in self.functions or hook in self.disabled:
            return
        hff, hfn = self.functions[hook]
        self.regions[hook] = Region(
            func_key=hook,
            site=region.site,
            root_label=region.root_label,
            links=[link, Link(hff.path, hfn.name_loc, f"{_display(hfn)} (a hook of {_display(fn)})")],
            multiplier=region.multiplier,
            loop_caller=region.loop_caller,
            loop_key=region.loop_key,
            fullgraph=region.fullgraph,
            options=region.options,
            depth=region.depth + 1,
            parent=region,
        )
        queue.append((hook, None))

    def _enqueue(
        self,
        queue: deque[tuple[str, str | None]],
        callee: str,
        region: Region,
        ff: FileFacts,
        fn: FunctionFacts,
        edge: CallEdge,
        multiplier: str | None,
        receiver: str | None = None,
        via: tuple[str, int] | None = None,
        parent_cap: int | None = None,
    ) -> None:
        if callee not in self.functions:
            return
        cap = _dispatch_cap(parent_cap, via)
        if callee in self.regions:
            existing = self.regions[callee]
            if existing.dispatch_cap is not None and (cap is None or cap < existing.dispatch_cap):
                existing.dispatch_cap = cap  # also reached more directly: the less doubtful path wins
            # already compiled; reached with another class of `self`: its self-calls may differ
            if receiver is not None and (callee, receiver) not in self._seen:
                self._seen.add((callee, receiver))
                self._path_cap[(callee, receiver)] = cap
                queue.append((callee, receiver))
            return
        cff, cfn = self.functions[callee]
        label = f"{_display(cfn)} (called from {_display(fn)} at {ff.path}:{edge.loc.line})"
        if via is not None:
            label = f"{_display(cfn)} (called from {_display(fn)} at {ff.path}:{edge.loc.line}, via a subclass of {via[0]})"
        child = Region(
            func_key=callee,
            site=region.site,
            root_label=region.root_label,
            links=[Link(cff.path, cfn.name_loc, label)],
            parent=region,
            multiplier=multiplier or region.multiplier,
            # a break anywhere below a call made inside a loop drops that loop's frame too; so does
            # one in a property getter, which runs inside an attribute read, not a call (measured,
            # torch 2.13: the reading frame is skipped, the getter compiled on its own)
            loop_caller=(
                (_display(fn), ff.path, edge.loc.line)
                if edge.in_loop
                else (_display(fn), ff.path, edge.loc.line, "property")
                if edge.method.startswith("@")
                else region.loop_caller
            ),
            loop_key=(
                f"{ff.path}::{fn.qualname}"
                if edge.in_loop or edge.method.startswith("@")
                else region.loop_key
            ),
            fullgraph=region.fullgraph,
            options=region.options,
            depth=region.depth + 1,
            dispatch_cap=cap,
        )
        self.regions[callee] = child
        self._seen.add((callee, receiver))
        queue.append((callee, receiver))

    def edge_targets(self, ff: FileFacts, fn: FunctionFacts, edge: CallEdge) -> list[tuple[str, str | None]]:  # noqa: C901
        kind = edge.kind
        cls_key = f"{ff.path}::{fn.cls}" if fn.cls else None
        if kind == "local":
            key = f"{ff.path}::{edge.target}"
            return [(key, None)] if key in self.functions else []
        if kind in ("name", "ref"):
            r = self.resolve(edge.target, ff)
            if r is None:
                forward = self.autograd_function_forward(edge.target, ff) if kind == "name" else None
                return [(forward, None)] if forward else []
            if r[0] == "function":
                return [(r[1], None)]
            # constructing a project class in compiled code: Dynamo traces its __init__, an
            # nn.Module's too (its nn.Parameter / nn.Buffer break there: TC127)
            init = self.find_method(r[1], "__init__")
            return [(init, None)] if init else []
        if kind == "self":
            if cls_key is None or cls_key not in self.classes:
                # self inside a nested function of a method: use the enclosing class
                outer = fn.qualname.split(".<locals>.")[0]
                outer_fn = ff.functions.get(outer)
                if outer_fn is None or outer_fn.cls is None:
                    return []
                cls_key = f"{ff.path}::{outer_fn.cls}"
                if cls_key not in self.classes:
                    return []
            if "*" in edge.target:
                return self.named_members(ff, fn, edge, cls_key)
            path = edge.target
            if not path and edge.method.startswith("@"):
                # `self.p` read: the property's getter (and, for an abstract one, the overrides)
                getter = self.call_method_of_class(cls_key, edge.method)
                return (
                    [(k, None) for k in self.with_overrides(cls_key, edge.method[1:], getter)]
                    if getter
                    else []
                )
            if "." not in path and edge.method == "__call__":
                found = self.find_method(cls_key, path)
                if found is not None:
                    return [(k, None) for k in self.with_overrides(cls_key, path, found)]
            info = self.spec_at_key(cls_key, path)
            if info is None:
                if "." in path:
                    # self.attn.method(...) where attn is not a known submodule
                    return []
                found = self.find_method(cls_key, path)
                return [(found, None)] if found else []
            sff, spec = info
            if spec.kind == "func" and spec.refs:
                r = self.resolve(spec.refs[0], sff)
                return [(r[1], None)] if r and r[0] == "function" else []
            if spec.kind == "param" and not edge.method.startswith("@"):
                return [(k, None) for k in self.param_targets(sff, spec, edge.method)]
            if spec.kind == "deferred" and spec.refs and edge.method == "__call__":
                ty = self.deferred_type(spec.refs[0], sff)
                if ty.kind == T.FUNC:
                    return [(k, None) for k in self.function_keys("deferred", spec.refs[0], sff)]
                keys = self.deferred_class_keys(spec.refs[0], sff)
                return [(t, None) for t in (self.call_method_of_class(k, "__call__") for k in keys) if t]
            keys = self.spec_classes(sff, spec)
            method = edge.method
            if spec.kind == "seq" and method == "__call__":
                return [(t, None) for t in (self.call_method_of_class(k, "__call__") for k in keys) if t]
            if spec.kind in ("list", "dict", "seq") and method not in ("__call__", "forward"):
                return []
            out = []
            for k in keys:
                t = self.call_method_of_class(k, method)
                if t:
                    out.append((t, _multiplier(spec.count) if spec.kind in ("list", "dict") else None))
            return out
        if kind == "elem":
            container = self._elem_container(ff, fn, edge.target)
            if container is None:
                return []
            keys, count = self.elements_of(container, ff)
            return [
                (t, _multiplier(count))
                for t in (self.call_method_of_class(k, edge.method) for k in keys)
                if t
            ]
        if kind == "super":
            if cls_key is None or cls_key not in self.classes:
                return []
            found = self.find_method(
                cls_key, edge.method if edge.method != "__call__" else fn.name, after=cls_key
            )
            if found is None and fn.name == "__call__" and edge.method == "__call__":
                # `super().__call__(...)` in a project __call__ whose bases have none: nn.Module's,
                # which runs forward
                found = self.find_method(cls_key, "forward")
            return [(found, None)] if found else []
        if kind == "instance":
            keys = self.class_keys_for(edge.target, ff)
            return [(t, None) for t in (self.call_method_of_class(k, edge.method) for k in keys) if t]
        if kind == "deferred":
            member = self._returned_member(ff, edge)
            if member is not None:
                return self.edge_targets(ff, fn, member)
            ty = self.deferred_type(edge.target, ff)
            near = self._deferred_near(edge.target, ff)
            if ty.kind in (T.INSTANCE, T.MODULE) and ty.ref:
                keys = self.class_keys_for(ty.ref, near)
                return [(t, None) for t in (self.call_method_of_class(k, edge.method) for k in keys) if t]
            if ty.kind == T.FUNC and ty.ref and edge.method != "__call__" and not edge.method.startswith("@"):
                # `op = self._get_op(key); op.transform(x)`: the method (a classmethod) of each class
                # the project function returns
                keys = self.class_keys_for(ty.ref, near)
                return [(t, None) for t in (self.find_method(k, edge.method) for k in keys) if t]
            if ty.kind in (T.MODLIST, T.ELEM) and ty.ref and edge.method in ("__call__", "forward"):
                keys, count = self.elements_of(ty.ref, near)
                return [
                    (t, _multiplier(count))
                    for t in (self.call_method_of_class(k, edge.method) for k in keys)
                    if t
                ]
            return []
        return []

    # ------------------------------------------------------------------ queries
    def region_of(self, path: str, func_qual: str | None) -> Region | None:
        if func_qual is None:
            return None
        return self.regions.get(f"{path}::{func_qual}")

    def chain_related(self, region: Region) -> tuple[RelatedLocation, ...]:
        return self._chain_views(region)[0]

    def chain_text(self, region: Region) -> str:
        return self._chain_views(region)[1]

    def _chain_views(self, region: Region) -> tuple[tuple[RelatedLocation, ...], str]:
        """Both renderings of a region's chain, built once per region: every finding in a function
        shows them, and a large model has a thousand findings in a few dozen regions."""
        cache = self._chain_cache
        hit = cache.get(id(region))
        if hit is not None and hit[0] is region:
            return hit[1], hit[2]
        chain = _shown(region.chain)
        related = tuple(
            RelatedLocation(link.path, span_of(link.loc), link.label) for link in chain if link is not _ELIDED
        )
        names = ["…" if link is _ELIDED else _short_label(link.label) for link in chain[1:]]
        head = region.root_label
        text = " → ".join([f"compiled via {head}", *names]) if names else f"compiled via {head}"
        cache[id(region)] = (region, related, text)
        return related, text


# more overriding subclasses than this: which one runs is a guess, its findings are low confidence
DISPATCH_MEDIUM_MAX = 3
# region passes after the first that narrow capped dispatch to the held classes (Project.build)
HELD_PASSES = 3


def assumed_compiled(
    patterns: Iterable[str],
    module: str,
    qualname: str,
    modules_matched: dict[tuple[str, str], bool] | None = None,
) -> str | None:
    """The first ``assume-compiled`` pattern (``module-glob:qualname-glob``, or a qualname glob
    alone) that makes ``qualname`` of ``module`` a root, or None; ``modules_matched`` memoises
    the module globs' matches ((module, module glob) -> match)."""
    memo = {} if modules_matched is None else modules_matched
    for pat in patterns:
        mod_pat, _, qual_pat = pat.partition(":")
        if not qual_pat:
            mod_pat, qual_pat = "*", pat
        module_hit = memo.get((module, mod_pat))
        if module_hit is None:
            module_hit = memo[(module, mod_pat)] = fnmatch.fnmatchcase(module, mod_pat)
        if module_hit and fnmatch.fnmatchcase(qualname, qual_pat):
            return pat
    return None


def _fresh_roots(roots: list[tuple[str, Region]]) -> list[tuple[str, Region]]:
    """Copies of the root regions, which ``_bfs`` extends in place, for one pass."""
    return [(key, replace(r, links=list(r.links), options=dict(r.options))) for key, r in roots]


def _closure(start: Iterable[str], edges: dict[str, set[str]]) -> set[str]:
    """``start`` and every node ``edges`` lead to from it, transitively."""
    seen: set[str] = set()
    todo = list(start)
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(edges.get(node, ()))
    return seen


def _dispatch_root(base: str, receiver: str | None, below_base: list[str]) -> str:
    """The class whose subclasses' overrides a call of ``base``'s placeholder method may run
    (``subclass_dispatch``): the receiver's class when it is known and derives from ``base``
    (an element ``Radial`` of ``self.flows`` that only inherits ``Flow.inverse``, a ``raise
    NotImplementedError``, runs that stub, or an override of a subclass of ``Radial``; never
    ``Planar.inverse``), else ``base`` itself (a receiver typed as the base: any subclass)."""
    return receiver if receiver is not None and receiver in below_base else base


def _dispatch_cap(parent: int | None, via: tuple[str, int] | None) -> int | None:
    """The confidence cap of a region reached from one capped ``parent`` through ``via``
    (``subclass_dispatch``): medium among at most ``DISPATCH_MEDIUM_MAX`` overrides, low beyond;
    none for 0 (the override of a class the compiled code holds: ``Project._narrowed``)."""
    own = None if not via or not via[1] else (T.MEDIUM if via[1] <= DISPATCH_MEDIUM_MAX else T.LOW)
    if own is None or parent is None:
        return parent if own is None else own
    return max(parent, own)


# receivers typed as these are not dispatched to the project's subclasses: every module's forward
# would be a guess (a module attribute's class comes from its constructor arguments instead)
_NEVER_DISPATCHED = ("torch.nn.", "builtins.", "typing.", "abc.", "object")


def _is_property(fn: FunctionFacts) -> bool:
    """``fn`` is a property getter: ``@property``, ``@functools.cached_property`` (or a project
    decorator of that name, as libraries define their own ``cached_property``)."""
    return any(d.rsplit(".", 1)[-1] in ("property", "cached_property") for d in fn.decorators)


def _external_key(ref: str) -> tuple[str, str]:
    """A class outside the project by (top package, class name): torch re-exports its classes
    (``torch.distributions.Transform`` is ``torch.distributions.transforms.Transform``)."""
    return ref.split(".", 1)[0], ref.rsplit(".", 1)[-1]


def _is_torch_module(module: str) -> bool:
    return module == "torch" or module.startswith("torch.")


_ELIDED = Link("", Loc(1, 0, 1, 0), "… (calls elided)")
CHAIN_SHOWN = 12


def torch_only_site(site: CompileSite) -> bool:
    """The site compiles torch's own module classes or functions only (``torch.compile(nn.Linear(4,
    4))``, ``torch.compile(torch.sin)``, an ``nn.Sequential`` of torch layers): nothing of the
    project runs compiled there."""
    if site.target_kind not in ("instance", "func", "modlist") or not site.ref:
        return False
    refs = T.ref_classes(site.ref[len(T.CLASSES) :] if site.ref.startswith(T.CLASSES) else site.ref)
    return bool(refs) and all(ref.startswith("torch.") for ref in refs)


def _shown(chain: list[Link]) -> list[Link]:
    """A region chain as shown on a finding: the compile site, the first and the last calls.
    (Generated code can nest calls thousands deep; every finding carrying all of it would be
    quadratic in size.)"""
    if len(chain) <= CHAIN_SHOWN:
        return chain
    head = CHAIN_SHOWN // 2
    return [*chain[:head], _ELIDED, *chain[-(CHAIN_SHOWN - head - 1) :]]


def _deferred_item(ref: str) -> tuple[str, int | None]:
    """``("pkg.build", 0)`` for ``pkg.build[0]`` (item 0 of what it returns), else ``(ref, None)``."""
    if ref.endswith("]"):
        base, _, index = ref[:-1].rpartition("[")
        if base and index.isdigit():
            return base, int(index)
    return ref, None


def _multiplier(count: int | None) -> str:
    if count is None or count < 0:
        return "each block of a module list"
    return f"each of {count} blocks"


def _display(fn: FunctionFacts) -> str:
    qual = fn.qualname.replace(".<locals>.", ".")
    return qual if fn.cls else f"{qual}()"


def _short_label(label: str) -> str:
    return label.split(" (called from", 1)[0]


def _describes_a_module_arg(edge: CallEdge) -> bool:
    """Whether a constructor call passes an argument described as a module or callable."""
    return bool(edge.more_args) or (edge.arg0 is not None and edge.arg0[0] != "unknown")


def _target_probe(
    how: str, target: tuple[str, str | None, str | None], loc: Loc, owner: str | None
) -> CompileSite:
    """A stand-in compile site for a described target (a constructor argument, a hook registered
    on a module), so ``Project._site_targets`` resolves it as it resolves real sites."""
    kind, ref, method = target
    return CompileSite(
        id="",
        how=how,
        target_kind=kind,
        ref=ref,
        method=method,
        loc=loc,
        func=None,
        owner=owner,
        options={},
        text="",
    )
