"""Type inference: what an expression holds (``Ty``), from the walk's abstract environment.

``TypeInference.type_of(expr)`` answers for the scope the walker is in (names bound so far,
parameters, ``self`` attributes of the enclosing class, imports); results are memoised per node.
Nothing here records facts or reports: the walker and the call graph do, from these answers.
``element_type`` and ``binop_type`` are the pure parts (no scope needed).
"""

from __future__ import annotations

import ast
import re
import string
from typing import TYPE_CHECKING, cast

from tclint.rules import types as T
from tclint.rules.analysis.common import AnalyzerBase, dtype_of, literal
from tclint.rules.analysis.records import RECORD, field_type, fields_of, is_record, record_type
from tclint.rules.analysis.submodules import container_elements, spec_type
from tclint.rules.facts import ClassFacts
from tclint.rules.names import canonical, dotted, self_path
from tclint.rules.nn_module_methods import SELF_RETURNING_METHODS
from tclint.rules.tensor_methods import BOUND_METHOD, TENSOR_METHODS
from tclint.rules.types import Ty

if TYPE_CHECKING:
    from tclint.rules.analysis.analyzer import Analyzer
    from tclint.rules.analysis.api import Scope


class TypeInference(AnalyzerBase):
    """Expression and annotation types (a mixin of ``Analyzer``)."""

    def qualify(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            scope = self.scope
            # a local variable shadows imports only if it is not an alias itself
            if node.id in scope.params or (scope.kind == "function" and node.id in scope.env):
                return None
            local = scope.local_def(node.id)
            if local is not None:
                return None
            return canonical(scope.aliases.lookup(node.id))
        if isinstance(node, ast.Attribute):
            base: ast.expr = node
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name):
                scope = self.scope
                if base.id in scope.params or (scope.kind == "function" and base.id in scope.env):
                    return None
                q = scope.aliases.qualify(node)
                return canonical(q)
        return None

    def type_of(self, node: ast.expr) -> Ty:
        ty = self._types.get(id(node))
        if ty is None:
            ty = self._eval_type(node)
            self._types[id(node)] = ty
        return ty

    def _name_type(self, name: str) -> Ty:
        scope = self.scope
        ty = scope.lookup(name)
        if ty is not None:
            return ty
        s: Scope | None = scope
        while s is not None:
            p = s.params.get(name)
            if p is not None:
                return p.ty
            s = s.parent
        q = canonical(scope.aliases.lookup(name))
        if q is not None:
            return Ty(T.FUNC, T.HIGH, None, q)
        local = scope.local_def(name)
        if local is not None:
            return Ty(T.FUNC, T.HIGH, None, "<local>" + local)
        return T.T_UNKNOWN

    def _self_attr_type(self, path: str) -> Ty:
        cls = self.ctx.cls
        if cls is None:
            return T.T_UNKNOWN
        head, _, rest = path.partition(".")
        spec = cls.attrs.get(head)
        if spec is None:
            if head == "training":
                return T.T_BOOL
            return T.T_UNKNOWN
        if rest:
            if spec.kind == "tensor":
                return self._tensor_attr(rest.split(".")[-1], Ty(T.TENSOR))
            if spec.kind == RECORD:
                # self.rk_state.t1 / self.rk_state.t1.dtype: a field of a named tuple
                name, _, more = rest.partition(".")
                field = field_type(spec_type(spec, ""), name)
                if field is not None and field.kind == T.TENSOR:
                    return self._tensor_attr(more.split(".")[-1], field) if more else field
            return T.T_UNKNOWN
        return spec_type(spec, f"{self._class_ref(cls)}|{head}")

    def _class_ref(self, cls: ClassFacts) -> str:
        return f"{self.module}.{cls.qualname}" if self.module else cls.qualname

    def _tensor_attr(self, attr: str, base: Ty) -> Ty:
        if attr == "shape":
            return Ty(T.SIZE, base.conf)
        if attr in T.TENSOR_META_ATTRS:
            return Ty(
                T.SCALAR, base.conf, "bool" if attr.startswith("is_") or attr == "requires_grad" else "other"
            )
        if attr in TENSOR_METHODS:
            # `t.is_floating_point` without the call: a bound method, neither a tensor nor its value
            return Ty(T.FUNC, base.conf, BOUND_METHOD)
        return Ty(T.TENSOR, base.conf, base.dtype)

    def _eval_type(self, node: ast.expr) -> Ty:  # noqa: C901 - one dispatch over node kinds
        if isinstance(node, ast.Constant):
            v = node.value
            if v is None:
                return T.T_NONE
            if isinstance(v, bool):
                return T.T_BOOL
            if isinstance(v, int):
                return T.T_INT
            if isinstance(v, float):
                return T.T_FLOAT
            if isinstance(v, str):
                return T.T_STR
            return Ty(T.SCALAR, T.HIGH, "other")
        if isinstance(node, ast.Name):
            return self._name_type(node.id)
        if isinstance(node, ast.Attribute):
            sp = self_path(node, self.scope.self_name)
            if sp is not None:
                return self._self_attr_type(sp)
            if isinstance(node.value, ast.Name) and node.value.id in self._attr_stores:
                stored = self.scope.lookup(f"{node.value.id}.{node.attr}")
                if stored is not None:
                    return stored
            q = self.qualify(node)
            if q is not None:
                if q.startswith("torch.") and q.rsplit(".", 1)[-1] in T.DTYPE_NAMES:
                    return Ty(T.SCALAR, T.HIGH, "dtype")
                return Ty(T.FUNC, T.HIGH, None, q)
            base = self.type_of(node.value)
            if base.kind == T.TENSOR:
                return self._tensor_attr(node.attr, base)
            if is_record(base):
                return field_type(base, node.attr) or T.T_UNKNOWN
            if base.kind in (T.COMPILED, T.DEFERRED) and node.attr == "_orig_mod":
                # the module torch.compile wrapped (a project function may have returned the
                # compiled module): its attributes are the compiled one's
                return base
            if base.kind == T.SIZE:
                return T.T_INT
            if base.kind == T.MODULE and node.attr in ("weight", "bias"):
                return Ty(T.TENSOR, T.MEDIUM, "float")
            if base.kind == T.INSTANCE and base.ref:
                sub = self._instance_submodule(base.ref, node.attr)
                if sub is not None:
                    return sub
            if base.kind == T.INSTANCE and node.attr in ("shape",):
                return T.T_SIZE
            if node.attr in ("shape",) and base.kind == T.UNKNOWN:
                return Ty(T.SIZE, T.MEDIUM)
            if node.attr == "training":
                return T.T_BOOL
            return T.T_UNKNOWN
        if isinstance(node, ast.Call):
            return self._call_type(node)
        if isinstance(node, ast.BinOp):
            left, right = self.type_of(node.left), self.type_of(node.right)
            return binop_type(left, right, node.op)
        if isinstance(node, ast.Compare):
            tys = [self.type_of(node.left)] + [self.type_of(c) for c in node.comparators]
            if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
                return T.T_BOOL
            tensors = [t for t in tys if t.kind == T.TENSOR]
            if tensors:
                return Ty(T.TENSOR, min(t.conf for t in tensors), "bool")
            dynamic = [t for t in tys if t.kind == T.SCALAR and t.dtype in T.DATA_DEPENDENT_SCALARS]
            if dynamic:
                return dynamic[0]
            deferred = [t for t in tys if t.kind == T.DEFERRED]
            if deferred and all(t.kind in (T.DEFERRED, T.SCALAR, T.UNKNOWN) for t in tys):
                return deferred[0]
            return T.T_BOOL if all(t.kind in (T.SCALAR, T.SIZE) for t in tys) else T.T_UNKNOWN
        if isinstance(node, ast.UnaryOp):
            operand = self.type_of(node.operand)
            if isinstance(node.op, ast.Not):
                return T.T_BOOL
            return operand
        if isinstance(node, ast.BoolOp):
            tys = [self.type_of(v) for v in node.values]
            result = tys[-1]
            for t in tys[:-1]:
                result = T.join(result, t)
            return result
        if isinstance(node, ast.IfExp):
            return T.join(self.type_of(node.body), self.type_of(node.orelse))
        if isinstance(node, ast.Subscript):
            base = self.type_of(node.value)
            if base.kind == T.TENSOR:
                return Ty(T.TENSOR, base.conf, base.dtype)
            if base.kind == T.SIZE:
                if isinstance(node.slice, ast.Slice):
                    return Ty(T.SIZE, base.conf)
                return Ty(T.SCALAR, base.conf, "int")
            if base.kind == T.TLIST:
                if isinstance(node.slice, ast.Slice):
                    return base
                return Ty(T.TENSOR, base.conf, base.dtype)
            if base.kind == T.MODLIST:
                if isinstance(node.slice, ast.Slice):
                    return base  # self.layers[: n] is still the container
                return Ty(T.ELEM, base.conf, None, base.ref)
            if base.kind == T.DEFERRED:
                return base
            if base.kind == T.CONTAINER and base.dtype == "tolist":
                return Ty(T.SCALAR, base.conf, "number")
            if base.kind == T.CONTAINER and base.dtype == "compiled":
                return Ty(T.COMPILED, base.conf, None, base.ref)
            if base.kind == T.CONTAINER and base.dtype == "classes":
                return Ty(T.FUNC, T.MEDIUM, None, base.ref)  # SOLVERS[method]: one of those classes
            registry = self._registry_ref(node) if base.kind in (T.CONTAINER, T.FUNC) else None
            if registry is not None:
                return Ty(T.FUNC, T.MEDIUM, None, registry)  # cls = MODELS[name]: a registered class
            return T.T_UNKNOWN
        if isinstance(node, ast.JoinedStr):
            return T.T_STR
        if isinstance(node, (ast.List, ast.Tuple)):
            elts = [self.type_of(e) for e in node.elts if not isinstance(e, ast.Starred)]
            if elts and all(e.kind == T.TENSOR for e in elts):
                return Ty(T.TLIST, max(e.conf for e in elts))
            if elts and all(e.kind == T.FUNC and _is_class_ref(e.ref) for e in elts):
                # for cls in (GCN, GraphSAGE, GIN): a literal of classes
                return Ty(T.CONTAINER, T.HIGH, "classes", T.union_ref(e.ref for e in elts if e.ref))
            if (
                isinstance(node, ast.Tuple)
                and elts
                and all(e.kind == T.SCALAR and e.dtype == "int" for e in elts)
            ):
                return T.T_SIZE
            modules = _module_classes(elts) if isinstance(node, ast.List) else None
            if modules is not None:
                return Ty(T.MODLIST, T.HIGH, "list", T.CLASSES + modules)  # [Block(), Block()]
            compiled = {e.ref for e in elts if e.kind == T.COMPILED}
            if elts and len(compiled) == 1 and all(e.kind == T.COMPILED for e in elts):
                return Ty(T.CONTAINER, T.HIGH, "compiled", compiled.pop())  # [torch.compile(f)]
            return T.T_OTHER
        if isinstance(node, ast.Dict):
            values = [self.type_of(v) for v in node.values]
            compiled = {v.ref for v in values if v.kind == T.COMPILED}
            if values and len(compiled) == 1 and all(v.kind == T.COMPILED for v in values):
                return Ty(T.CONTAINER, T.HIGH, "compiled", compiled.pop())  # {"fn": torch.compile(f)}
            if values and all(v.kind == T.FUNC and _is_class_ref(v.ref) for v in values):
                # SOLVERS = {"dopri5": Dopri5Solver, ...}: a registry of classes
                return Ty(T.CONTAINER, T.HIGH, "classes", T.union_ref(v.ref for v in values if v.ref))
            return T.T_DICT
        if isinstance(node, ast.DictComp):
            return T.T_DICT
        if isinstance(node, (ast.Set, ast.SetComp)):
            return T.T_OTHER
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            elt = self.type_of(node.elt)
            if elt.kind == T.TENSOR:
                return Ty(T.TLIST, elt.conf, elt.dtype)
            modules = _module_classes([elt])
            if modules is not None:
                return Ty(T.MODLIST, T.HIGH, "list", T.CLASSES + modules)
            if isinstance(node.elt, ast.Attribute):
                owner = self.type_of(node.elt.value)
                if owner.kind == T.ELEM and owner.ref:
                    # `(t.inverse for t in self._transforms[::-1])`: that method of each element
                    return Ty(T.CONTAINER, T.HIGH, T.BOUND + node.elt.attr, owner.ref)
            return T.T_OTHER
        if isinstance(node, ast.NamedExpr):
            return self.type_of(node.value)
        if isinstance(node, ast.Lambda):
            return Ty(T.FUNC, T.HIGH, None, "<lambda>")
        if isinstance(node, ast.Await):
            return self.type_of(node.value)
        return T.T_UNKNOWN

    def _dtype_kw(self, node: ast.Call) -> str | None:
        for kw in node.keywords:
            if kw.arg == "dtype":
                return dtype_of(kw.value)
        return None

    def _record_call(self, node: ast.Call) -> Ty | None:
        """``State(y, t0=t)``, ``State._make([...])``, ``state._replace(t1=...)`` of a named
        tuple of this file: which fields hold tensors (``analysis.records``)."""
        func = node.func
        base: list[tuple[str, bool]] | None = None
        base_conf = T.MEDIUM
        fields: tuple[str, ...] = ()
        values: list[ast.expr | None] = []
        if isinstance(func, ast.Name) and func.id in self._records and self._module_level_name(func.id):
            fields = self._records[func.id]
            values = [*node.args, *[None] * (len(fields) - len(node.args))][: len(fields)]
        elif (
            isinstance(func, ast.Attribute)
            and func.attr == "_make"
            and isinstance(func.value, ast.Name)
            and func.value.id in self._records
            and self._module_level_name(func.value.id)
            and len(node.args) == 1
        ):
            fields = self._records[func.value.id]
            items = self.type_of(node.args[0])
            if isinstance(node.args[0], (ast.List, ast.Tuple)) and len(node.args[0].elts) == len(fields):
                values = list(node.args[0].elts)
            elif items.kind == T.TLIST:
                return record_type(fields, dict.fromkeys(fields, items.conf))
            else:
                return record_type(fields, {})
        elif isinstance(func, ast.Attribute) and func.attr == "_replace":
            receiver = self.type_of(func.value)
            if not is_record(receiver):
                return None
            base = fields_of(receiver)
            base_conf = receiver.conf
            fields = tuple(f for f, _ in base)
            values = [None] * len(fields)
        else:
            return None
        tensors: dict[str, int] = {}
        if base is not None:
            tensors = {f: base_conf for f, t in base if t}
        by_name = dict(zip(fields, values, strict=False))
        for kw in node.keywords:
            if kw.arg in by_name:
                by_name[kw.arg] = kw.value
                tensors.pop(kw.arg, None)
        for f, value in by_name.items():
            if value is not None and self.type_of(value).kind == T.TENSOR:
                tensors[f] = self.type_of(value).conf
        return record_type(fields, tensors)

    def _module_level_name(self, name: str) -> bool:
        """``name`` is not rebound in the function being walked (the file's definition holds)."""
        scope = self.scope
        return name not in scope.params and (scope.kind != "function" or name not in scope.env)

    def _call_type(self, node: ast.Call) -> Ty:  # noqa: C901
        record = self._record_call(node) if self._records or isinstance(node.func, ast.Attribute) else None
        if record is not None:
            return record
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "get":
            held = self._registry_ref(node)
            if held is not None:
                return Ty(T.FUNC, T.MEDIUM, None, held)  # cls = MODELS.get(name): a registered class
        q = self.qualify(func)
        if q is not None:
            if q in T.MODULE_WRAPPERS or q in ("copy.deepcopy", "copy.copy"):
                # DDP(model), FSDP(model), copy.deepcopy(model): what runs is the argument
                inner = self.type_of(node.args[0]) if node.args else T.T_UNKNOWN
                if inner.kind in (T.INSTANCE, T.MODULE, T.MODLIST, T.ELEM, T.DEFERRED, T.COMPILED):
                    return inner
            container = T.MODULE_CONTAINERS.get(q)
            if container in ("list", "seq", "dict"):
                # a local nn.Sequential(A(), B()) / nn.ModuleList([...]): its element classes
                refs = T.union_ref(container_elements(node, cast("Analyzer", self))[0])
                if refs is not None:
                    return Ty(T.MODLIST, T.HIGH, container, T.CLASSES + refs)
            if q.startswith("torch."):
                if q in ("torch.where",) and len(node.args) == 1:
                    return Ty(T.TLIST, T.HIGH, "int")
                return T.torch_call_result(q, self._dtype_kw(node))
            if q in ("builtins.len", "len"):
                return T.T_INT
            if q in T.PY_RANDOM_VALUES:
                return Ty(T.SCALAR, T.HIGH, "random")
            if q in T.PY_RANDOM_SKIPPED and q.endswith(("random", "variate", "gauss", "triangular")):
                return T.T_FLOAT  # a Python float once the skipped call has run (TC108 flags it)
            if q == "random.getrandbits":
                return T.T_INT
            if (
                q == "logging.getLogger"
                or q.endswith((".get_logger", "logging.getLogger"))
                or q == "logging.root"
            ):
                return Ty(T.INSTANCE, T.HIGH, None, "logging.Logger")
            if q.startswith("math.") and node.args:
                arg = self.type_of(node.args[0])
                if arg.kind == T.SCALAR and arg.dtype in T.DATA_DEPENDENT_SCALARS:
                    return arg
                return T.T_FLOAT
            if q.startswith(("numpy.", "np.")):
                return self._numpy_call_type(q, node)
            return self._project_call_type(q, node)
        registry = self._registry_ref(func)
        if registry is not None:
            return Ty(T.INSTANCE, T.MEDIUM, None, registry)  # MODELS[cfg.name](cfg)
        own = self._own_class_call(func)
        if own is not None:
            return own
        if isinstance(func, ast.Name):
            name = func.id
            local = self.scope.local_def(name)
            if local is not None:
                return Ty(T.DEFERRED, T.MEDIUM, None, f"{self.module}.{local}" if self.module else local)
            ty = self._name_type(name)
            if ty.kind in (T.MODULE, T.ELEM):
                return T.call_result(
                    ty, T.MEDIUM if ty.kind == T.ELEM or not (ty.ref or "").startswith("torch.") else T.HIGH
                )
            if ty.kind == T.MODLIST:
                return Ty(T.TENSOR, T.MEDIUM)
            if ty.kind == T.COMPILED:
                return Ty(T.TENSOR, T.MEDIUM)
            if ty.kind == T.INSTANCE:
                return T.call_result(ty, T.MEDIUM if (ty.ref or "")[:1] != "<" else T.LOW)
            if name in ("len", "id", "hash", "ord"):
                return T.T_INT
            if (
                name == "getattr"
                and ty.kind == T.UNKNOWN
                and len(node.args) in (2, 3)
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == self.scope.self_name
                and self.ctx.cls is not None
            ):
                # `getattr(self, f"{kind}_reduction")`: a member of self picked by name
                pattern = name_pattern(node.args[1])
                if pattern is not None:
                    return Ty(T.FUNC, T.HIGH, None, T.SELF_MEMBER + pattern)
            if name == "open":
                return Ty(T.INSTANCE, T.HIGH, None, "<file>")
            if name in ("int", "float", "bool", "round") and node.args:
                arg = self.type_of(node.args[0])
                if arg.ref == T.NUMPY_SCALAR and arg.dtype == "float" and name != "bool":
                    return T.T_FLOAT if name == "float" else T.T_INT  # folded: a constant (TC101)
                if arg.kind == T.TENSOR or (arg.kind == T.SCALAR and arg.dtype in T.DATA_DEPENDENT_SCALARS):
                    return Ty(T.SCALAR, arg.conf, "item" if arg.kind == T.TENSOR else arg.dtype)
            if name in ("int", "round"):
                return T.T_INT
            if name == "float":
                return T.T_FLOAT
            if name in ("bool", "isinstance", "hasattr", "callable", "issubclass", "all", "any"):
                if name in ("all", "any") and node.args and self.type_of(node.args[0]).kind == T.TENSOR:
                    return T.T_BOOL
                return T.T_BOOL
            if name in ("str", "repr", "format"):
                return T.T_STR
            if name in ("list", "tuple", "sorted", "reversed"):
                if node.args:
                    inner = self.type_of(node.args[0])
                    if inner.kind in (T.TLIST, T.TENSOR):
                        return Ty(T.TLIST, inner.conf, inner.dtype)
                    if inner.kind == T.SIZE:
                        return T.T_SIZE
                return T.T_OTHER
            if name in (
                "dict",
                "set",
                "zip",
                "enumerate",
                "range",
                "map",
                "filter",
                "super",
                "iter",
                "vars",
                "dir",
            ):
                return T.T_OTHER
            if name in ("sum", "max", "min", "abs"):
                tys = [self.type_of(a) for a in node.args]
                if any(t.kind in (T.TENSOR, T.TLIST) for t in tys):
                    return Ty(T.TENSOR, max(t.conf for t in tys if t.kind in (T.TENSOR, T.TLIST)))
                return (
                    Ty(T.SCALAR, T.MEDIUM, "number")
                    if tys and all(t.kind == T.SCALAR for t in tys)
                    else T.T_UNKNOWN
                )
            if ty.kind == T.FUNC and _is_class_ref(ty.ref) and name not in self.scope.params:
                return Ty(T.INSTANCE, ty.conf, None, ty.ref)  # cls = SOLVERS[name]; cls(...)
            if ty.kind == T.FUNC and (ty.ref or "").startswith(T.REGISTRY) and name not in self.scope.params:
                return Ty(T.INSTANCE, ty.conf, None, ty.ref)  # cls = MODELS[name]; cls(cfg)
            return T.T_UNKNOWN
        if isinstance(func, ast.Attribute):
            method = func.attr
            sp = self_path(func, self.scope.self_name)
            if sp is not None:
                head = sp.split(".", 1)[0]
                owner_ty = self._self_attr_type(head)
                if "." not in sp:
                    cls = self.ctx.cls
                    if cls is not None and owner_ty.kind in (T.MODULE, T.MODLIST, T.COMPILED):
                        torch_module = owner_ty.kind == T.MODULE and (owner_ty.ref or "").startswith(
                            "torch.nn."
                        )
                        return T.call_result(owner_ty, T.HIGH if torch_module else T.MEDIUM)
                    if cls is not None and owner_ty.kind == T.FUNC:
                        return T.T_UNKNOWN
                    spec = cls.attrs.get(head) if cls is not None else None
                    if spec is not None and spec.kind == "deferred" and spec.refs:
                        # self.grid = self._grid_from_step(step); self.grid(t): what the function
                        # that project function returns returns
                        return Ty(T.DEFERRED, T.MEDIUM, None, spec.refs[0] + "()")
                    if cls is not None and owner_ty.kind == T.UNKNOWN and method == "get_submodule":
                        # nn.Module.get_submodule(name) (an override keeps its contract): one of the
                        # children (a dotted name's deeper modules are not followed; "" is self, not
                        # taken, so that forward does not seem to call itself)
                        return Ty(T.ELEM, T.MEDIUM, None, f"{self._class_ref(cls)}|*")
                    if cls is not None and owner_ty.kind == T.UNKNOWN:
                        # self.method(...): a method of this class (maybe inherited)
                        return Ty(T.DEFERRED, T.MEDIUM, None, f"{self._class_ref(cls)}.{method}")
            receiver = self.type_of(func.value)
            if receiver.kind == T.TENSOR:
                return T.tensor_method_result(method, receiver, self._method_dtype(node))
            if method in SELF_RETURNING_METHODS and receiver.kind in _MODULE_LIKE and receiver.ref:
                if receiver.kind != T.DEFERRED or method != "type":  # (tensor.type() is a str)
                    return receiver  # model.to(device).eval(): the module itself
            if receiver.kind in (T.MODULE, T.ELEM, T.COMPILED) and method in ("forward", "__call__"):
                return Ty(T.TENSOR, T.MEDIUM)
            if method == "get_submodule" and receiver.kind in (T.INSTANCE, T.MODULE) and receiver.ref:
                owners = T.ref_classes(receiver.ref)  # model.get_submodule("head"): one of its children
                if len(owners) == 1 and not owners[0].startswith("torch."):
                    return Ty(T.ELEM, T.MEDIUM, None, f"{owners[0]}|*")
            if receiver.kind == T.TLIST and method in ("index",):
                return T.T_INT
            if receiver.kind == T.SIZE and method in ("numel",):
                return T.T_INT
            if receiver.kind == T.UNKNOWN and method in T.TENSORISH_METHODS:
                if self._looks_like_python_container(func.value):
                    return T.T_UNKNOWN
                return T.tensor_method_result(method, Ty(T.TENSOR, T.MEDIUM), self._method_dtype(node))
            if receiver.kind == T.CONTAINER and receiver.dtype == "tolist":
                return T.T_UNKNOWN
            return T.T_UNKNOWN
        called = self.type_of(func)
        if called.kind == T.FUNC and _is_class_ref(called.ref):
            return Ty(T.INSTANCE, called.conf, None, called.ref)  # SOLVERS[method](...)
        return T.T_UNKNOWN

    def _looks_like_python_container(self, node: ast.expr) -> bool:
        ty = self.type_of(node)
        return ty.kind in (T.CONTAINER, T.SCALAR, T.SIZE)

    def _method_dtype(self, node: ast.Call) -> str | None:
        kw = self._dtype_kw(node)
        if kw is not None:
            return kw
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "type") and node.args:
            return dtype_of(node.args[0])
        return None

    def _numpy_call_type(self, q: str, node: ast.Call) -> Ty:
        """``np.mean(arr)`` for an array made from a tensor (``t.cpu().numpy()``): in compiled code
        Dynamo traces NumPy as tensor ops (trace_numpy), so the result is a tensor too, and
        ``float(np.mean(arr))`` or ``np.where(arr > 0)`` break as their torch twins do.  A NumPy
        function of Python values (``np.prod(x.shape[1:])``, ``np.sum([1, 2])``) is traced too: its
        result is an ndarray in the graph, so ``range()``, ``int()`` or an ``if`` on it breaks
        (GB0059, GB0124, GB0170; Dynamo 2.13): medium confidence, as the value is only used as a
        number.  Type queries (``np.shape``, ``np.ndim``, ...) and ``np.random`` (not traced:
        TC108) stay opaque values.  An elementwise function of Python numbers only (``np.ceil(h / w)``,
        ``np.sqrt(n)``) is a 0-d ndarray whose value Dynamo knows: marked ``T.NUMPY_SCALAR`` with its
        dtype (``_numpy_scalar_dtype``)."""
        last = q.rsplit(".", 1)[-1]
        if last in ("shape", "ndim", "size", "result_type", "dtype") or ".random." in q:
            return T.T_OTHER
        tensors = [t for t in (self.type_of(a) for a in node.args) if t.kind == T.TENSOR]
        if all(t.ref == T.NUMPY_SCALAR for t in tensors):
            dtype = self._numpy_scalar_dtype(last, node)
            if dtype is not None:
                return Ty(T.TENSOR, T.MEDIUM, dtype, T.NUMPY_SCALAR)
        if not tensors:
            if last in _NUMPY_NOT_ARRAYS or not last[:1].islower():
                return T.T_OTHER
            return Ty(T.TENSOR, T.MEDIUM, None)
        conf = min(t.conf for t in tensors)
        if last == "nonzero" or (last == "where" and len(node.args) == 1 and not node.keywords):
            return Ty(T.TLIST, conf, "int")  # a tuple of index arrays, as torch.where(cond)
        return Ty(T.TENSOR, conf, None)

    def _numpy_scalar_dtype(self, name: str, node: ast.Call) -> str | None:
        """The dtype ("float" / "int") of ``np.<name>(...)`` when it is an elementwise function of
        Python numbers only (each argument a number, a NumPy scalar of numbers, or arithmetic on a
        number), else None.  Dynamo 2.13 (torch._numpy) gives float functions (``sqrt``, ``log2``,
        ``true_divide``) a float result; the others keep their arguments' dtype, float when one of
        them is (``np.ceil(h / w)``, ``np.maximum(n * 0.5, 1)``), int otherwise (``np.ceil(3)``)."""
        if node.keywords or not node.args or not (name in _NUMPY_FLOAT_UFUNCS or name in _NUMPY_DTYPE_UFUNCS):
            return None
        floats = False
        for arg in node.args:
            kind = self._number_kind(arg)
            if kind is None:
                return None
            floats = floats or kind == "float"
        return "float" if floats or name in _NUMPY_FLOAT_UFUNCS else "int"

    def _number_kind(self, node: ast.expr) -> str | None:
        """ "float" / "int" for an expression that is a Python number (or a NumPy scalar of numbers),
        "number" when it is one of unknown dtype, None when it may be something else.  Arithmetic
        with a number on one side and a value of unknown type on the other (``h / window[0]``)
        counts as a number: a shape computation; a true division is a float."""
        ty = self.type_of(node)
        if ty.kind == T.TENSOR:
            return ("float" if ty.dtype == "float" else "int") if ty.ref == T.NUMPY_SCALAR else None
        if ty.kind == T.SCALAR:
            if ty.dtype == "float":
                return "float"
            return "int" if ty.dtype in ("int", "bool") else ("number" if ty.dtype == "number" else None)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return self._number_kind(node.operand)
        if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.MatMult):
            known = []
            for side in (node.left, node.right):
                kind = self._number_kind(side)
                if kind is not None:
                    known.append(kind)
                elif self.type_of(side).kind not in (T.UNKNOWN, T.DEFERRED):
                    return None  # a tensor, a container, a string...
            if not known:
                return None
            if isinstance(node.op, ast.Div) or "float" in known:
                return "float"
            return "number"
        return None

    def _project_call_type(self, q: str, node: ast.Call) -> Ty:
        prefix = f"{self.module}." if self.module else ""
        local = self.facts.functions.get(q[len(prefix) :]) if q.startswith(prefix) else None
        if (
            local is not None
            and local.compile_wrapper_param is not None
            and local.compile_wrapper_param < len(node.args)
        ):
            # `model = setup(model)` where setup returns torch.compile(model): the compiled module
            # forwards attribute access to the module it wraps
            inner = self.type_of(node.args[local.compile_wrapper_param])
            if inner.kind in _MODULE_LIKE and inner.ref:
                return inner
        if local is not None and local.returns_param is not None and local.returns_param < len(node.args):
            # `model = inject_lora(Encoder(), cfg)` where inject_lora returns its `model` parameter
            # (after patching it in place): what the call passes
            given = self.type_of(node.args[local.returns_param])
            if given.kind in _MODULE_LIKE and given.ref:
                return given
        head, _, last = q.rpartition(".")
        if (
            head
            and head.rsplit(".", 1)[-1][:1].isupper()
            and (last.startswith(("from_", "_from_")) or last in ("build", "create"))
        ):
            return Ty(T.INSTANCE, T.HIGH, None, head)  # Model.from_config(cfg): an instance of Model
        if last[:1].isupper() or (q.startswith(prefix) and q[len(prefix) :] in self.facts.classes):
            # Constructing a class: a project module, an external model class, a dataclass...
            return Ty(T.INSTANCE, T.HIGH, None, q)
        return Ty(T.DEFERRED, T.MEDIUM, None, q)

    def _instance_submodule(self, ref: str, attr: str) -> Ty | None:
        """``wrapper.inner`` for an instance of a class of this file that assigns
        ``self.inner = Block()``: the submodule (other attributes stay unknown)."""
        prefix = f"{self.module}." if self.module else ""
        if T.UNION in ref or not ref.startswith(prefix):
            return None
        cls = self.facts.classes.get(ref[len(prefix) :])
        spec = cls.attrs.get(attr) if cls is not None else None
        if spec is None or spec.kind not in ("instance", "torch", "compiled", "list", "seq", "dict"):
            return None
        return spec_type(spec, f"{ref}|{attr}")

    def _registry_ref(self, func: ast.expr) -> str | None:
        """``types.REGISTRY`` reference for the callee ``MODELS[key]`` / ``MODELS.get(key)`` of a
        module-level dict of this file or a name imported from another module (which classes its
        decorators store there, the project knows), with ``|key`` for a literal key; else None."""
        if isinstance(func, ast.Subscript):
            holder, key = func.value, func.slice
        elif (
            isinstance(func, ast.Call)
            and isinstance(func.func, ast.Attribute)
            and func.func.attr == "get"
            and len(func.args) == 1
        ):
            holder, key = func.func.value, func.args[0]
        else:
            return None
        if not isinstance(holder, ast.Name) or not self._module_level_name(holder.id):
            return None
        held = self.module_scope.env.get(holder.id)
        if held is not None:
            if held.kind != T.CONTAINER or held.dtype != "dict":
                return None
            where = f"{self.module}.{holder.id}" if self.module else holder.id
        else:
            q = self.qualify(holder)
            if q is None or q.startswith(("torch.", "builtins.")) or "." not in q:
                return None
            where = q
        literal = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else ""
        plain = literal and "|" not in literal and ";" not in literal
        return T.REGISTRY + where + (f"|{literal}" if plain else "")

    def _own_class_call(self, func: ast.expr) -> Ty | None:
        """``cls(...)`` in a classmethod, ``type(self)(...)`` / ``self.__class__(...)`` in a method:
        an instance of the enclosing class."""
        scope = self.scope
        cls = self.ctx.cls
        if cls is None or scope.func is None or scope.self_name is None:
            return None
        own = False
        if isinstance(func, ast.Name) and func.id == scope.self_name:
            own = any(d in ("classmethod", "builtins.classmethod") for d in scope.func.decorators)
        elif (
            isinstance(func, ast.Call)
            and isinstance(func.func, ast.Name)
            and func.func.id == "type"
            and len(func.args) == 1
        ):
            own = isinstance(func.args[0], ast.Name) and func.args[0].id == scope.self_name
        elif isinstance(func, ast.Attribute) and func.attr == "__class__":
            own = isinstance(func.value, ast.Name) and func.value.id == scope.self_name
        return Ty(T.INSTANCE, T.HIGH, None, self._class_ref(cls)) if own else None

    def _iter_element(self, iter_node: ast.expr, it: Ty) -> Ty:
        """What a `for` loop variable holds; `instance.layers` may be a module container, and
        `model.children()` / `named_children()` (`modules()` / `named_modules()`: recursively,
        the module included) yield its submodules: ``Class|*`` (``Class|**``)."""
        if isinstance(iter_node, ast.Call) and isinstance(iter_node.func, ast.Attribute):
            which = _SUBMODULE_ITERATORS.get(iter_node.func.attr)
            owner = iter_node.func.value
            if which is not None:
                cls = self.ctx.cls
                if isinstance(owner, ast.Name) and owner.id == self.scope.self_name and cls is not None:
                    return Ty(T.ELEM, T.MEDIUM, None, f"{self._class_ref(cls)}|{which}")
                owner_ty = self.type_of(owner)
                if owner_ty.kind in (T.INSTANCE, T.MODULE) and owner_ty.ref:
                    refs = T.ref_classes(owner_ty.ref)
                    if len(refs) == 1:
                        return Ty(T.ELEM, T.MEDIUM, None, f"{refs[0]}|{which}")
        own = self._own_children(iter_node)
        if own is not None:
            return own
        if isinstance(iter_node, ast.Attribute) and it.kind == T.UNKNOWN:
            held = self.type_of(iter_node.value)
            if held.kind in (T.INSTANCE, T.MODULE) and held.ref:
                return Ty(T.ELEM, T.MEDIUM, None, f"{held.ref}|{iter_node.attr}")
            if held.kind == T.DEFERRED and held.ref:
                # `model = build_model(cfg)` ... `for blk in model.blocks`: resolved across files
                return Ty(T.ELEM, T.MEDIUM, None, f"deferred:{held.ref}|{iter_node.attr}")
        return element_type(it, iter_node)

    def _own_children(self, node: ast.expr) -> Ty | None:
        """``for m in self`` in a module class (a ``Sequential``/``ModuleList`` subclass iterates its
        children) and ``self._modules.values()``: the children of the class, ``Class|*``; else None."""
        cls = self.ctx.cls
        if cls is None or not cls.bases:
            return None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "values"
            and not node.args
        ):
            node = node.func.value
            if not (isinstance(node, ast.Attribute) and node.attr == "_modules"):
                return None
            node = node.value
        if isinstance(node, ast.Name) and node.id == self.scope.self_name and "__iter__" not in cls.methods:
            return Ty(T.ELEM, T.MEDIUM, None, f"{self._class_ref(cls)}|*")
        return None

    def _annotation_type(self, ann: ast.expr | None) -> tuple[Ty, str | None]:  # noqa: C901
        if ann is None:
            return T.T_UNKNOWN, None
        text = self.segment(ann)
        node = ann
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return T.T_UNKNOWN, text
        # Optional[X], X | None, Union[X, None]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            left, _ = self._annotation_type(node.left)
            right, _ = self._annotation_type(node.right)
            if left.kind == T.TENSOR or right.kind == T.TENSOR:
                return _tensor_or_number([left, right]), text
            return (left if left.kind != T.SCALAR or left.dtype != "none" else right), text
        if isinstance(node, ast.Subscript):
            base_q = self.qualify(node.value) or dotted(node.value) or ""
            base_last = base_q.rsplit(".", 1)[-1]
            if base_last in ("Optional", "Union"):
                inner = node.slice
                elts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
                tys = [self._annotation_type(e)[0] for e in elts]
                if any(t.kind == T.TENSOR for t in tys):
                    return _tensor_or_number(tys), text
                non_none = [t for t in tys if not (t.kind == T.SCALAR and t.dtype == "none")]
                return (non_none[0] if len(non_none) == 1 else T.T_UNKNOWN), text
            if base_last in T.JAXTYPING_DTYPES:
                return Ty(T.TENSOR, T.HIGH, T.JAXTYPING_DTYPES[base_last]), text
            if base_last in ("TensorType",):
                return T.T_TENSOR, text
            if base_last in ("List", "list", "Tuple", "tuple", "Sequence", "Iterable"):
                inner = node.slice
                first = inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else inner
                t, _ = self._annotation_type(first)
                if t.kind == T.TENSOR:
                    return Ty(T.TLIST, T.HIGH, t.dtype), text
                return T.T_OTHER, text
            if base_last in ("Literal",):
                inner = node.slice
                first = inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else inner
                v = literal(first)
                if isinstance(v, str):
                    return T.T_STR, text
                if isinstance(v, bool):
                    return T.T_BOOL, text
                if isinstance(v, int):
                    return T.T_INT, text
                return T.T_UNKNOWN, text
            if base_last in ("Dict", "dict", "Mapping", "Set", "set"):
                return T.T_OTHER, text
            return T.T_UNKNOWN, text
        if isinstance(node, ast.Constant) and node.value is None:
            return T.T_NONE, text
        q = self.qualify(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        name = q or (dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None) or ""
        if name in T.TENSOR_ANNOTATIONS or name.endswith(".Tensor") or name == "Tensor":
            return T.T_TENSOR, text
        builtin = {"int": T.T_INT, "float": T.T_FLOAT, "bool": T.T_BOOL, "str": T.T_STR, "bytes": T.T_STR}
        if name in builtin:
            return builtin[name], text
        if name in ("torch.nn.Module",):
            return Ty(T.MODULE, T.HIGH, None, "torch.nn.Module"), text
        if name in ("torch.Size",):
            return T.T_SIZE, text
        if name in ("torch.dtype", "torch.device"):
            return Ty(T.SCALAR, T.HIGH, "dtype"), text
        if q is not None and q.startswith(_TYPING_MODULES):
            # `func: Callable = lambda x: x > 0`, `key: Hashable`: a protocol, not a class whose
            # instances are called as modules (calling one is not a tensor)
            return T.T_UNKNOWN, text
        if q is not None and q[:1] and q.rsplit(".", 1)[-1][:1].isupper():
            return Ty(T.INSTANCE, T.HIGH, None, q), text
        return T.T_UNKNOWN, text


_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[diouxXeEfFgGcrsa]")


def name_pattern(node: ast.expr) -> str | None:
    """The attribute names a string expression can hold, as a pattern with ``*`` for each part
    computed at run time: ``"layer1"`` → ``layer1``, ``f"{kind}_reduction"`` and
    ``"{}_reduction".format(kind)`` → ``*_reduction``, ``"conv%d" % i`` → ``conv*``, ``"act_" + name``
    → ``act_*``.  None when too little of it is written (fewer than 3 written characters: any
    attribute could match)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if node.value.isidentifier() else None
    pattern: str | None = None
    if isinstance(node, ast.JoinedStr):
        pattern = "".join(
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "*" for v in node.values
        )
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    ):
        try:
            parts = list(string.Formatter().parse(node.func.value.value))
        except ValueError:
            return None
        pattern = "".join(text + ("*" if field is not None else "") for text, field, _spec, _conv in parts)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        if isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            pattern = _PERCENT_SPEC.sub("*", node.left.value.replace("%%", "%"))
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = name_pattern(node.left), name_pattern(node.right)
        pattern = (left or "*") + (right or "*")
    if pattern is None:
        return None
    pattern = re.sub(r"\*+", "*", pattern)
    if len(pattern.replace("*", "")) < 3 or not pattern.replace("*", "a").isidentifier():
        return None
    return pattern


def _tensor_or_number(members: list[Ty]) -> Ty:
    """``Tensor | None`` is a tensor where it is used; ``Union[int, Tensor]`` (torchmetrics'
    ``num_obs``) may as well be a Python number, which callers often pass (``target.size(0)``): a
    tensor at low confidence, so that ``if num_obs < 2:`` is no graph break at default confidence."""
    tensor = next(t for t in members if t.kind == T.TENSOR)
    if any(t.kind == T.SCALAR and t.dtype in ("int", "float", "bool") for t in members):
        return tensor.weaker(T.LOW)
    return tensor


def element_type(it: Ty, iter_node: ast.expr) -> Ty:
    if it.kind == T.TLIST:
        return Ty(T.TENSOR, it.conf, it.dtype)
    if it.kind == T.MODLIST:
        return Ty(T.ELEM, it.conf, None, it.ref)
    if it.kind == T.TENSOR:
        return Ty(T.TENSOR, it.conf, it.dtype)
    if it.kind == T.SIZE:
        return T.T_INT
    if it.kind == T.CONTAINER and it.dtype == "classes":
        return Ty(T.FUNC, T.MEDIUM, None, it.ref)
    if isinstance(iter_node, ast.Call) and isinstance(iter_node.func, ast.Name):
        if iter_node.func.id == "range":
            return T.T_INT
    return T.T_UNKNOWN


def binop_type(left: Ty, right: Ty, op: ast.operator) -> Ty:
    tensors = [t for t in (left, right) if t.kind == T.TENSOR]
    if tensors:
        conf = min(t.conf for t in tensors)
        if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and all(t.dtype == "bool" for t in tensors):
            return Ty(T.TENSOR, conf, "bool")
        dtypes = {t.dtype for t in tensors}
        # `n + np.floor(np.sqrt(n))`: arithmetic of NumPy scalars of numbers with numbers is one too
        ref = (
            T.NUMPY_SCALAR
            if all(
                t.ref == T.NUMPY_SCALAR if t.kind == T.TENSOR else t.kind == T.SCALAR and t.dtype in _NUMBERS
                for t in (left, right)
            )
            and not isinstance(op, ast.MatMult)
            else None
        )
        if (
            isinstance(op, ast.Div)
            or "float" in dtypes
            or (left.kind == T.SCALAR and left.dtype == "float")
            or (right.kind == T.SCALAR and right.dtype == "float")
        ):
            return Ty(T.TENSOR, conf, "float", ref)
        return Ty(T.TENSOR, conf, tensors[0].dtype, ref)
    if T.DEFERRED in (left.kind, right.kind):
        d = left if left.kind == T.DEFERRED else right
        other = right if d is left else left
        if other.kind in (T.SCALAR, T.UNKNOWN, T.DEFERRED, T.SIZE):
            return d
    for t in (left, right):
        if t.kind == T.SCALAR and t.dtype in T.DATA_DEPENDENT_SCALARS:
            return t
    if left.kind == T.SCALAR and right.kind == T.SCALAR:
        if "str" in (left.dtype, right.dtype):
            return T.T_STR
        if isinstance(op, ast.Div) or "float" in (left.dtype, right.dtype):
            return T.T_FLOAT
        if left.dtype == right.dtype == "int" or {left.dtype, right.dtype} <= {"int", "bool"}:
            return T.T_INT
        return Ty(T.SCALAR, T.MEDIUM, "number")
    if left.kind == T.SIZE or right.kind == T.SIZE:
        if isinstance(op, ast.Add) and left.kind == right.kind == T.SIZE:
            return T.T_SIZE
        return T.T_INT
    if isinstance(op, ast.MatMult) and (left.kind == T.UNKNOWN or right.kind == T.UNKNOWN):
        return Ty(T.TENSOR, T.MEDIUM)
    return _module_list_sum(left, right, op)


def _module_list_sum(left: Ty, right: Ty, op: ast.operator) -> Ty:
    """``[Planar() for _ in range(k)] + [Radial()]``, ``flows += [A(), B()]`` on a list of modules
    (or on ``[]``): a list of the modules of both sides; else unknown."""
    sides = [t for t in (left, right) if not (t.kind == T.CONTAINER and t.dtype is None)]
    if (
        not isinstance(op, ast.Add)
        or T.MODLIST not in (left.kind, right.kind)
        or not all(t.kind == T.MODLIST and (t.ref or "").startswith(T.CLASSES) for t in sides)
    ):
        return T.T_UNKNOWN
    refs = T.union_ref(r for t in sides for r in T.ref_classes(t.ref))
    return Ty(T.MODLIST, T.HIGH, "list", T.CLASSES + (refs or ""))


def _is_class_ref(ref: str | None) -> bool:
    """A (possibly joined) reference to classes: each names something capitalised."""
    refs = T.ref_classes(ref)
    return (
        bool(refs)
        and ref is not None
        and ref[:1] != "<"
        and all(r.rsplit(".", 1)[-1][:1].isupper() for r in refs)
    )


_NUMBERS = ("int", "float", "bool", "number")  # Ty.dtype of a SCALAR that is a Python number
_TYPING_MODULES = ("typing.", "collections.abc.", "typing_extensions.")  # annotations that name no class
# NumPy functions whose result is not an array (dtype and type queries, settings, I/O, helpers
# returning Python objects): a call of them on Python values is not a traced ndarray
_NUMPY_NOT_ARRAYS = frozenset(
    {
        "iinfo", "finfo", "isscalar", "issubdtype", "can_cast", "promote_types", "min_scalar_type",
        "errstate", "seterr", "geterr", "printoptions", "set_printoptions", "get_printoptions",
        "broadcast_shapes", "ndindex", "nditer", "vectorize", "frompyfunc", "load", "save", "savez",
        "loadtxt", "savetxt", "genfromtxt", "fromfile", "array_equal", "array_equiv", "allclose",
        "shares_memory", "may_share_memory", "iscomplexobj", "isrealobj", "isfortran", "typename",
        "array2string", "array_repr", "array_str", "format_float_positional", "base_repr", "binary_repr",
    }
)  # fmt: skip
# Elementwise NumPy functions whose result is a float for any numbers (torch._numpy, Dynamo 2.13;
# np.hypot is left out: Dynamo does not trace it, GB0087) ...
_NUMPY_FLOAT_UFUNCS = frozenset(
    {
        "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
        "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
        "deg2rad", "rad2deg", "degrees", "radians", "divide", "true_divide", "float_power",
        "float16", "float32", "float64", "double", "single", "half",
    }
)  # fmt: skip
# ... and those that keep their arguments' dtype (float when one argument is a float)
_NUMPY_DTYPE_UFUNCS = frozenset(
    {
        "ceil", "floor", "round", "around", "rint", "trunc", "fix", "abs", "absolute", "fabs",
        "negative", "positive", "square", "sign", "maximum", "minimum", "fmax", "fmin", "add",
        "subtract", "multiply", "power", "mod", "remainder", "fmod", "floor_divide", "clip",
    }
)  # fmt: skip
_SUBMODULE_ITERATORS = {"children": "*", "named_children": "*", "modules": "**", "named_modules": "**"}
_MODULE_LIKE = (T.MODULE, T.INSTANCE, T.ELEM, T.MODLIST, T.DEFERRED, T.COMPILED)


def _module_classes(elts: list[Ty]) -> str | None:
    """The joined class references of a literal's items when every item is a module or class
    instance (``[Block(), Block()]``), else None."""
    if not elts or not all(e.kind in (T.MODULE, T.INSTANCE) and e.ref and e.ref[:1] != "<" for e in elts):
        return None
    return T.union_ref(e.ref for e in elts if e.ref)
