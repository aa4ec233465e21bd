"""Submodule specs: what a class attribute holds (``self.attn = Attention(cfg)``), for the region
pass to follow ``self.attn(x)`` into ``Attention.forward``, and the type such an attribute has when
a method reads it back (``spec_type``)."""

from __future__ import annotations

import ast
from collections.abc import Collection
from typing import TYPE_CHECKING

from tclint.rules import types as T
from tclint.rules.analysis.common import COMPILE_FUNCS, chained_module_root, literal, node_loc
from tclint.rules.analysis.records import RECORD, is_record
from tclint.rules.facts import Loc, Param, SubmoduleSpec
from tclint.rules.names import dotted
from tclint.rules.types import Ty

if TYPE_CHECKING:
    from tclint.rules.analysis.analyzer import Analyzer


def spec_from_type(ty: Ty, value: ast.expr | None, a: Analyzer) -> SubmoduleSpec | None:  # noqa: C901
    loc = node_loc(value, a.index) if value is not None else None
    if isinstance(value, ast.IfExp):
        # `MoE(cfg) if cfg.use_moe else MLP(cfg)`: either class may be the submodule
        left = spec_from_type(a.type_of(value.body), value.body, a)
        right = spec_from_type(a.type_of(value.orelse), value.orelse, a)
        specs = [sp for sp in (left, right) if sp is not None and sp.kind in ("instance", "torch")]
        if specs:
            refs = tuple(dict.fromkeys(r for sp in specs for r in sp.refs))
            kind = "instance" if any(sp.kind == "instance" for sp in specs) else "torch"
            return SubmoduleSpec(kind, refs, None, loc)
    if value is not None and isinstance(value, ast.Call):
        q = a.qualify(value.func)
        container = T.MODULE_CONTAINERS.get(q or "")
        if container is not None and container != "params":
            elements, count = container_elements(value, a)
            return SubmoduleSpec(container, tuple(elements), count, loc)
        if q in COMPILE_FUNCS and value.args:
            kind, ref, _ = a._describe_target(value.args[0])
            if kind == "instance" and ref:
                return SubmoduleSpec("compiled", (ref,), None, loc)
            return SubmoduleSpec("other", (), None, loc)
    if ty.kind == T.MODULE and ty.ref:
        return SubmoduleSpec("torch" if ty.ref.startswith("torch.") else "instance", (ty.ref,), None, loc)
    if ty.kind == T.INSTANCE and ty.ref:
        return SubmoduleSpec("instance", (ty.ref,), None, loc)
    if ty.kind == T.MODLIST:
        return SubmoduleSpec("list", (), None, loc)
    if ty.kind == T.TENSOR:
        return SubmoduleSpec("tensor", (), None, loc)
    if ty.kind == T.FUNC and ty.ref and not ty.ref.startswith("<"):
        return SubmoduleSpec("func", (ty.ref,), None, loc)
    if ty.kind == T.DEFERRED and ty.ref:
        # self.grid = make_grid_fn(step): what a project function returns (a closure, a module),
        # followed when the attribute is called; its value type stays unknown
        return SubmoduleSpec("deferred", (ty.ref,), None, loc)
    if ty.kind == T.SCALAR and ty.dtype in ("int", "float", "bool", "str"):
        return SubmoduleSpec(ty.dtype, (), None, loc)
    if is_record(ty) and ty.ref:
        return SubmoduleSpec(RECORD, (ty.ref,), None, loc)  # self.state = _State(y, t0, t1)
    if ty.kind == T.COMPILED:
        return SubmoduleSpec("other", (), None, loc)
    if isinstance(value, ast.List) and not value.elts:
        return SubmoduleSpec("listattr", (), None, loc)
    if isinstance(value, ast.Dict) and not value.keys:
        return SubmoduleSpec("dictattr", (), None, loc)
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("list", "dict")
        and not value.args
    ):
        return SubmoduleSpec("listattr" if value.func.id == "list" else "dictattr", (), None, loc)
    if value is not None and isinstance(value, ast.Call):
        q = a.qualify(value.func)
        if q in ("collections.deque", "collections.defaultdict", "collections.OrderedDict"):
            return SubmoduleSpec("listattr" if q.endswith("deque") else "dictattr", (), None, loc)
    return SubmoduleSpec("other", (), None, loc)


def param_fed_spec(
    value: ast.expr, params: dict[str, Param], cls_ref: str, a: Analyzer, loc: Loc | None
) -> SubmoduleSpec | None:
    """In ``__init__``, a module container attribute filled from a constructor parameter whose
    elements are whatever the constructions pass: ``self.flows = nn.ModuleList(flows)``,
    ``nn.Sequential(*layers)``, ``nn.ModuleList(list(blocks))``, or ``self.ts = ts`` of a ``*ts``
    parameter (a tuple of the positional arguments); else None."""
    if isinstance(value, ast.Name):
        p = params.get(value.id)
        if p is not None and p.kind == "varargs":
            return SubmoduleSpec("list", (f"{T.PARAM_ELEMENTS}{cls_ref}|{p.name}",), None, loc)
        return None
    if not isinstance(value, ast.Call) or len(value.args) != 1 or value.keywords:
        return None
    container = T.MODULE_CONTAINERS.get(a.qualify(value.func) or "")
    if container not in ("list", "seq"):
        return None
    arg = value.args[0]
    if container == "seq" and not isinstance(arg, ast.Starred):
        return None  # nn.Sequential(block): one module, not a list of them
    inner = arg.value if isinstance(arg, ast.Starred) else arg
    if (
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Name)
        and inner.func.id in ("list", "tuple")
        and len(inner.args) == 1
        and not inner.keywords
    ):
        inner = inner.args[0]  # nn.ModuleList(list(flows))
    if not isinstance(inner, ast.Name) or inner.id not in params:
        return None
    return SubmoduleSpec(container, (f"{T.PARAM_ELEMENTS}{cls_ref}|{inner.id}",), None, loc)


def setter_params(cls: ast.ClassDef) -> dict[str, dict[str, str]]:
    """``self.set_reducer(reducer)`` in ``__init__``: for each method of the class that ``__init__``
    calls on ``self``, which of the method's parameters are given which of ``__init__``'s own
    (``{"set_reducer": {"reducer": "reducer"}}``), so that what the method stores from them is what
    the constructions pass (a parameter given two different ones is left out)."""
    methods = {
        s.name: s
        for s in cls.body
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and not s.decorator_list
    }
    init = methods.get("__init__")
    if init is None or not init.args.args:
        return {}
    self_name = init.args.args[0].arg
    own = {a.arg for a in (*init.args.args[1:], *init.args.kwonlyargs)}
    out: dict[str, dict[str, str]] = {}
    clashes: set[tuple[str, str]] = set()
    for node in ast.walk(init):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == self_name
            and node.func.attr in methods
            and node.func.attr != "__init__"
        ):
            continue
        meth = methods[node.func.attr]
        positional = [a.arg for a in meth.args.args[1:]]
        named = {*positional, *(a.arg for a in meth.args.kwonlyargs)}
        given: list[tuple[str, ast.expr]] = []
        for i, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred) or i >= len(positional):
                break
            given.append((positional[i], arg))
        given.extend((kw.arg, kw.value) for kw in node.keywords if kw.arg in named)
        fed = out.setdefault(meth.name, {})
        for name, value in given:
            if not isinstance(value, ast.Name) or value.id not in own:
                continue
            if fed.get(name, value.id) != value.id:
                clashes.add((meth.name, name))
            fed[name] = value.id
    for meth_name, name in clashes:
        out[meth_name].pop(name, None)
    return out


def defaulted_param(value: ast.expr, params: Collection[str]) -> tuple[str, ast.expr] | None:
    """``self.get_default_reducer() if reducer is None else reducer`` (or ``reducer if reducer is
    not None else Default()``, ``reducer or Default()``; the given branch may be a copy or a chain of
    self-returning calls): the parameter and the default expression; else None."""
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and len(value.values) == 2:
        name = _given_name(value.values[0])
        return (name, value.values[1]) if name is not None and name in params else None
    if not isinstance(value, ast.IfExp):
        return None
    test = value.test
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        and isinstance(test.left, ast.Name)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        return None
    given, default = (
        (value.body, value.orelse) if isinstance(test.ops[0], ast.IsNot) else (value.orelse, value.body)
    )
    name = _given_name(given)
    return (name, default) if name == test.left.id and name in params else None


def _given_name(node: ast.expr) -> str | None:
    """``p``, ``copy.deepcopy(p)``, ``p.to(device)``: the name of what is given."""
    if (
        isinstance(node, ast.Call)
        and (dotted(node.func) or "") in ("copy.deepcopy", "copy.copy", "deepcopy")
        and len(node.args) == 1
    ):
        node = node.args[0]
    node = chained_module_root(node)
    return node.id if isinstance(node, ast.Name) else None


def container_elements(call: ast.Call, a: Analyzer) -> tuple[list[str], int | None]:  # noqa: C901 - long, not split yet (issue 16)
    refs: list[str] = []
    count: int | None = None
    items: list[ast.expr] = list(call.args)
    if len(items) == 1 and isinstance(items[0], (ast.List, ast.Tuple)):
        count = len(items[0].elts)
        items = list(items[0].elts)
    elif len(items) == 1 and isinstance(items[0], ast.Starred):
        items = [items[0].value]
    elif len(items) == 1 and isinstance(items[0], ast.Dict):
        items = [v for v in items[0].values if v is not None]
        count = len(items)
    elif (
        len(items) == 1
        and isinstance(items[0], ast.Call)
        and (a.qualify(items[0].func) or "").endswith("OrderedDict")
    ):
        inner = items[0].args[0] if items[0].args else None
        items = []
        if isinstance(inner, (ast.List, ast.Tuple)):
            for elt in inner.elts:
                if isinstance(elt, ast.Tuple) and len(elt.elts) == 2:
                    items.append(elt.elts[1])
        count = len(items)
    elif items and all(not isinstance(i, (ast.ListComp, ast.GeneratorExp, ast.Starred)) for i in items):
        count = len(items)
    for item in items:
        node = item
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            gen = node.generators[0] if node.generators else None
            if (
                gen is not None
                and isinstance(gen.iter, ast.Call)
                and isinstance(gen.iter.func, ast.Name)
                and gen.iter.func.id == "range"
                and len(gen.iter.args) == 1
            ):
                n = literal(gen.iter.args[0])
                count = n if isinstance(n, int) else None
                if count is None:
                    count = -1  # known to repeat, number from config
            node = node.elt
        if isinstance(node, ast.Call):
            q = a.qualify(node.func)
            if q in COMPILE_FUNCS and node.args and isinstance(node.args[0], ast.Call):
                q = a.qualify(node.args[0].func)
            elif q in COMPILE_FUNCS and node.args:
                # nn.ModuleList(torch.compile(b) for b in blocks): the compiled elements' classes
                ty = a.type_of(node.args[0])
                q = None
                if ty.kind in (T.INSTANCE, T.MODULE, T.ELEM) and ty.ref and "|" not in ty.ref:
                    refs.extend(T.ref_classes(ty.ref))
                    continue
            if q is not None:
                refs.append(q)
            elif isinstance(node.func, ast.Name):
                ty = a._name_type(node.func.id)
                if ty.ref:
                    refs.append(ty.ref)
            else:
                ty = a.type_of(node)  # Block().to(dtype), build_block(cfg)
                if ty.kind in (T.INSTANCE, T.MODULE) and ty.ref:
                    refs.extend(T.ref_classes(ty.ref))
        elif isinstance(node, ast.expr):
            ty = a.type_of(node)  # nn.Sequential(*layers), a local list of modules
            if ty.kind == T.MODLIST and (ty.ref or "").startswith(T.CLASSES):
                refs.extend(T.ref_classes(ty.ref))
    seen: list[str] = []
    for r in refs:
        if r not in seen:
            seen.append(r)
    return seen, count


def spec_type(spec: SubmoduleSpec, path_ref: str) -> Ty:
    if spec.kind in ("instance", "torch"):
        ref = spec.refs[0] if spec.refs else None
        if ref is not None and not ref.rsplit(".", 1)[-1][:1].isupper() and spec.kind == "instance":
            return Ty(T.INSTANCE, T.MEDIUM, None, ref)
        return Ty(T.MODULE, T.HIGH, None, ref)
    if spec.kind in ("list", "seq", "dict"):
        return Ty(T.MODLIST, T.HIGH, spec.kind, path_ref)
    if spec.kind == "compiled":
        return Ty(T.COMPILED, T.HIGH, None, spec.refs[0] if spec.refs else None)
    if spec.kind == "tensor":
        return Ty(T.TENSOR, T.HIGH)
    if spec.kind == "func":
        return Ty(T.FUNC, T.HIGH, None, spec.refs[0] if spec.refs else None)
    if spec.kind in ("int", "float", "bool", "str"):
        return Ty(T.SCALAR, T.HIGH, spec.kind)
    if spec.kind in ("listattr", "dictattr"):
        return Ty(T.CONTAINER, T.HIGH, spec.kind)
    if spec.kind == RECORD and spec.refs:
        return Ty(T.CONTAINER, T.MEDIUM, RECORD, spec.refs[0])
    return T.T_UNKNOWN
