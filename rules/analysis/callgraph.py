"""The call graph and compile sites: what each call reaches, and what each compile call compiles.

For every call the walker meets, ``CallGraph._call`` dispatches the rules that asked for it
(``CALLS``/``METHODS``), then records a ``CallEdge`` (``name``, ``self``, ``instance``, ``elem``,
``deferred``... resolved across files by the project pass), or a ``CompileSite`` for
``torch.compile(target)``, ``torch._dynamo.optimize(...)(fn)``, ``module.compile()`` and compile
decorators (``_describe_target`` says what the target is), or a ``DisableSite``.
"""

from __future__ import annotations

import ast
from typing import Any

from tclint.rules import types as T
from tclint.rules.analysis.common import (
    CLOCK_CALLS,
    COMPILE_FUNCS,
    COMPILE_OPTION_KEYS,
    COMPILING_PREDICATES,
    DISABLE_FUNCS,
    FORWARD_HOOK_METHODS,
    HOOK_METHODS,
    OPTIMIZE_FUNCS,
    UNEVALUABLE,
    AnalyzerBase,
    is_external,
    kw_bool,
    literal,
    node_loc,
)
from tclint.rules.facts import CallEdge, CompileSite, DisableSite, FunctionFacts, SubmoduleSpec
from tclint.rules.names import dotted, self_path
from tclint.rules.nn_module_methods import SELF_RETURNING_METHODS
from tclint.rules.types import Ty

# expressions a call argument may describe a compile target or a module with
_TARGET_EXPRS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript)
# descriptions of a module (or a container of them) among those, kept for constructor arguments
_MODULE_KINDS = ("instance", "modlist", "elem", "deferred", "attr")


class CallGraph(AnalyzerBase):
    """Call edges, compile/disable sites and compile decorators (a mixin of ``Analyzer``)."""

    def _local_module_append(self, holder: ast.expr, method: str, arg: ast.expr) -> None:
        """``layers = []`` then ``layers.append(Block())`` in a loop: the local list holds those
        modules (``nn.Sequential(*layers)`` is a container of them)."""
        scope = self.scope
        if not isinstance(holder, ast.Name) or scope.kind == "class" or holder.id not in scope.env:
            return
        held = scope.env[holder.id]
        if not (held.kind == T.CONTAINER and held.dtype is None) and not (
            held.kind == T.MODLIST and (held.ref or "").startswith(T.CLASSES)
        ):
            return
        items = arg.elts if isinstance(arg, (ast.List, ast.Tuple)) and method == "extend" else [arg]
        refs = [t.ref for t in (self.type_of(i) for i in items) if t.kind in (T.MODULE, T.INSTANCE) and t.ref]
        if not refs or len(refs) != len(items):
            return
        old = T.ref_classes(held.ref) if held.kind == T.MODLIST else []
        scope.env[holder.id] = Ty(T.MODLIST, T.HIGH, "list", T.CLASSES + (T.union_ref([*old, *refs]) or ""))

    def _call(self, node: ast.Call) -> None:  # noqa: C901
        scope = self.scope
        func = node.func
        q = self.qualify(func)
        method = func.attr if isinstance(func, ast.Attribute) else None
        # rule dispatch by target
        rules: list[Any] = []
        if q is not None:
            rules.extend(self.ruleset.calls.get(q, ()))
        if method is not None:
            for rule in self.ruleset.methods.get(method, ()):
                if rule not in rules:
                    rules.append(rule)
        elif isinstance(func, ast.Name):
            for rule in self.ruleset.calls.get("builtins." + func.id, ()):
                if rule not in rules and q is None:
                    rules.append(rule)
        for rule in rules:
            rule.check_call(node, self.ctx, q, method)

        # parameter uses: range(p), len(p)
        if isinstance(func, ast.Name) and q is None and func.id in ("range", "len"):
            for arg in node.args:
                self._note_param_use(arg, func.id)

        if method in ("add", "update", "append", "extend"):
            self._config_call(node)
        if method in ("append", "extend", "insert") and isinstance(func, ast.Attribute) and node.args:
            self._local_module_append(func.value, method, node.args[-1])
            sp = self_path(func.value, scope.self_name)
            cls = self.ctx.cls
            if sp is not None and "." not in sp and cls is not None:
                spec = cls.attrs.get(sp)
                if spec is not None and spec.kind in ("list", "seq"):
                    arg = node.args[-1]
                    items = (
                        arg.elts if isinstance(arg, (ast.List, ast.Tuple)) and method == "extend" else [arg]
                    )
                    refs = []
                    for item, t in ((i, self.type_of(i)) for i in items):
                        if t.kind in (T.MODULE, T.INSTANCE) and t.ref:
                            refs.append(t.ref)
                        elif (
                            t.kind == T.DEFERRED
                            and isinstance(item, ast.Call)
                            and isinstance(item.func, ast.Attribute)
                            and isinstance(item.func.value, ast.Name)
                            and item.func.value.id == scope.self_name
                        ):
                            # `self.convs.append(self.init_conv(...))`: what the method of the class
                            # of `self` returns (a subclass's override: torch_geometric's BasicGNN)
                            refs.append(T.SELF_RESULT + item.func.attr)
                        elif t.kind == T.MODLIST and (t.ref or "").startswith(T.CLASSES):
                            # `self.layers.append(nn.ModuleList([Attention(), FeedForward()]))`, then
                            # `for attn, ff in self.layers:`: the inner lists' modules are what runs
                            refs.extend(T.ref_classes(t.ref))
                    if spec.count == 0:
                        spec.count = None  # `nn.ModuleList([])` filled by append: how many is not known
                    if refs:
                        spec.refs = tuple(dict.fromkeys([*spec.refs, *refs]))
        if (
            method == "register_buffer"
            and isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == scope.self_name
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            cls = self.ctx.cls
            if cls is not None:
                cls.attrs[node.args[0].value] = SubmoduleSpec(
                    "tensor", ("buffer",), None, node_loc(node, self.index)
                )
        if q is not None:
            if q in COMPILE_FUNCS or q in self.facts.compile_functions:
                self._compile_call(node, q)
                return
            if q in OPTIMIZE_FUNCS:
                return  # handled where it is applied: torch._dynamo.optimize(...)(fn)
            if q in DISABLE_FUNCS:
                if node.args:
                    target = self._target_ref(node.args[0])
                    if target is not None:
                        self.facts.disable_sites.append(
                            DisableSite(target, kw_bool(node, "recursive", True), node_loc(node, self.index))
                        )
                return
            if q == "torch.library.custom_op":
                return
            if q in ("torch.library.opcheck", "torch.compiler.allow_in_graph") and node.args:
                ref = self._target_ref(node.args[0]) or dotted(node.args[0]) or ""
                self.facts.api_calls.setdefault(q, []).append(ref)
                if q == "torch.compiler.allow_in_graph" and ref:
                    self.facts.allow_in_graph.append(DisableSite(ref, True, node_loc(node, self.index)))
                return
            if q.startswith("torch.") or is_external(q):
                # function references passed into torch APIs that call them (checkpoint, vmap, cond)
                for arg in node.args:
                    self._maybe_ref_edge(arg, node)
                return
            edge = self._edge("name", q, "__call__", node)
            if edge is not None and node.args and isinstance(node.args[0], _TARGET_EXPRS):
                # in case the callee wraps torch.compile (`maybe_compile(model)`)
                edge.arg0 = self._describe_target(node.args[0])
            if edge is not None and q.rsplit(".", 1)[-1].lstrip("_")[:1].isupper():
                # a class constructed: the modules it is given and may store (`self.quantizer = quantizer`)
                edge.more_args = self._module_args(node)
                if edge.arg0 is None and node.args and not isinstance(node.args[0], ast.Starred):
                    listed = self._module_list(node.args[0])  # Model([A(), B()]), Model(a + [B()])
                    edge.arg0 = ("modlist", listed, None) if listed is not None else None
            for arg in node.args:
                self._maybe_ref_edge(arg, node)
            return
        if isinstance(func, ast.Call):
            inner_q = self.qualify(func.func)
            compiles_inner = inner_q in COMPILE_FUNCS or inner_q in self.facts.compile_functions
            if inner_q in OPTIMIZE_FUNCS or (
                compiles_inner and not func.args and not any(k.arg == "model" for k in func.keywords)
            ):
                # torch._dynamo.optimize("inductor")(fn) / torch.compile(**kw)(fn); with a target,
                # `torch.compile(model)(batch)` calls the wrapper it made (the inner call is the site)
                self._compile_call(node, inner_q or "torch.compile", options_from=func)
                return
            if inner_q in DISABLE_FUNCS:
                if node.args:
                    target = self._target_ref(node.args[0])
                    if target is not None:
                        self.facts.disable_sites.append(
                            DisableSite(target, kw_bool(func, "recursive", True), node_loc(node, self.index))
                        )
                return
            called = self.type_of(func)
            if called.kind == T.FUNC and (called.ref or "").startswith(T.SELF_MEMBER):
                self._edge_for_value(called, "__call__", node)  # getattr(self, "layer%d" % i)(x)
                return
            if called.kind in (T.INSTANCE, T.MODULE) and isinstance(func.func, (ast.Name, ast.Attribute)):
                # `DiceHelper(opts)(y_pred=p, y=y)`: the object made there is called at once, as
                # `h = DiceHelper(opts); h(...)` calls it: its class's __call__ (a module's forward)
                self._edge_for_value(called, "__call__", node)
                for arg in node.args:
                    self._maybe_ref_edge(arg, node)
                return
            if (
                called.kind == T.ELEM
                and called.ref
                and (called.ref.endswith("|*") or called.ref.endswith("|**"))
            ):
                self._edge_for_value(called, "__call__", node)  # self.get_submodule(name)(x)
                return
        if (
            isinstance(func, ast.Name)
            and func.id == scope.self_name
            and scope.func is not None
            and not any(d in ("classmethod", "builtins.classmethod") for d in scope.func.decorators)
        ):
            # `self(x)` in a method (`generate` calling the module): its forward runs
            edge = self._edge("self", "forward", "__call__", node)
            if edge is not None:
                edge.on_self = True
            return
        if isinstance(func, ast.Name):
            local = scope.local_def(func.id)
            if local is not None:
                self._edge("local", local, "__call__", node)
                return
            if scope.func is not None and func.id not in scope.params and func.id not in scope.env:
                outer = scope.parent
                while outer is not None and outer.kind == "function":
                    if func.id in outer.params:
                        scope.func.calls_outer_param = True  # a decorator's wrapper calling `func(...)`
                        break
                    outer = outer.parent
            ty = self._name_type(func.id)
            self._edge_for_value(ty, "__call__", node)
            if (
                ty.kind == T.UNKNOWN
                and func.id in self._late_globals
                and scope.func is not None
                and func.id not in scope.params
                and func.id not in scope.env
            ):
                # `sampler(...)` in a function above `sampler = torch.compile(f)`: bound at import
                # time, before the function runs (the project resolves the module variable)
                self._edge("name", f"{self.module}.{func.id}" if self.module else func.id, "__call__", node)
            generic = ty.kind in (T.MODULE, T.INSTANCE) and ty.ref in (
                "torch.nn.Module",
                "torch.nn.modules.module.Module",
            )
            if (ty.kind == T.UNKNOWN or generic) and func.id in scope.params and scope.func is not None:
                # `def train(model, ...): model(x)`: what runs is what the callers pass (a compiled
                # module given as `train(net)` makes this a call into its compiled frames)
                self._edge("param", func.id, "__call__", node)
            elif ty.kind == T.UNKNOWN and scope.func is not None and func.id in scope.param_iters:
                # `for func in funcs: func(x)`: each module of the container the callers pass
                self._edge("param", f"{scope.param_iters[func.id]}[]", "__call__", node)
            for arg in node.args:
                self._maybe_ref_edge(arg, node)
            return
        if isinstance(func, ast.Attribute):
            if method in FORWARD_HOOK_METHODS and node.args:
                self._hook_edge(node, func.value, node.args[0])
            # module.compile() : regional / whole-model compilation through nn.Module.compile
            if method == "compile" and self._looks_like_module_compile(node):
                self._method_compile(node)
                return
            sp = self_path(func.value, scope.self_name)
            if isinstance(func.value, ast.Name) and func.value.id == scope.self_name:
                # self.method(...) or self.attr(...)
                self._edge("self", func.attr, "__call__", node)
                return
            if sp is not None:
                # self.attn.forward(x), self.layers[0] handled below
                self._edge("self", sp, method or "__call__", node)
                return
            if (
                isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name)
                and func.value.func.id == "super"
            ):
                edge = self._edge("super", "", method or "__call__", node)
                if edge is not None and method == "__init__":
                    # `super().__init__(strategy)`: the base's constructor is given what this passes
                    # (and may store it: `self.strategy = strategy`)
                    if node.args and isinstance(node.args[0], _TARGET_EXPRS):
                        edge.arg0 = self._describe_target(node.args[0])
                    edge.more_args = self._module_args(node)
                    self._children_from_varargs(node)
                return
            if method in HOOK_METHODS:
                # the hook runs inside the compiled code that calls the module
                for arg in node.args:
                    self._maybe_ref_edge(arg, node)
            recv = self.type_of(func.value)
            if recv.kind in (T.MODULE, T.INSTANCE, T.ELEM, T.MODLIST, T.COMPILED, T.DEFERRED):
                self._edge_for_value(recv, method or "__call__", node)
            elif (
                recv.kind == T.TENSOR
                and recv.ref is not None
                and recv.ref.startswith(T.RESULT_OF)
                and method is not None
                and method not in T.TENSORISH_METHODS
            ):
                # `flow(c).log_prob(x)`, `d = self.head(h); d.sample()`: a method of what the called
                # module's forward returns (nothing when that is a tensor)
                self._edge("deferred", recv.ref[len(T.RESULT_OF) :] + ".forward", method, node)
            return
        if isinstance(func, ast.Subscript):
            # self.layers[i](x)
            base_sp = self_path(func.value, scope.self_name)
            if base_sp is not None:
                self._edge("elem", base_sp, "__call__", node)
            else:
                recv = self.type_of(func.value)
                if recv.kind == T.MODLIST and recv.ref:
                    self._edge_for_value(Ty(T.ELEM, recv.conf, None, recv.ref), "__call__", node)

    def _hook_edge(self, node: ast.Call, receiver: ast.expr, hook: ast.expr) -> None:
        """``module.register_forward_hook(fn)``: fn runs inside the frame that calls ``module``."""
        cls = self.ctx.cls
        if isinstance(receiver, ast.Name) and receiver.id == self.scope.self_name and cls is not None:
            owner: tuple[str, str | None, str | None] = ("instance", self._class_ref(cls), None)
        else:
            owner = self._describe_target(receiver)
        if owner[0] == "unknown":
            return
        kind, ref, meth = self._describe_target(hook)  # (partial(hook, ...) and lambdas included)
        if kind == "method" and ref and meth and not ref.startswith("deferred:"):
            kind, ref = "func", f"{ref}.{meth}"  # self._hook / obj.hook: a method of that class
        if kind not in ("func", "local", "deferred") or not ref:
            return
        edge = self._edge("hook", ref, kind, node)
        if edge is not None:
            edge.arg0 = owner

    def _looks_like_module_compile(self, node: ast.Call) -> bool:
        func = node.func
        assert isinstance(func, ast.Attribute)
        if self.qualify(func.value) is not None:
            return False  # re.compile(...), regex.compile(...), torch.compile handled elsewhere
        if node.args:
            return False
        if any(kw.arg not in COMPILE_OPTION_KEYS for kw in node.keywords):
            return False
        recv = self.type_of(func.value)
        if recv.kind in (T.MODULE, T.ELEM, T.INSTANCE, T.DEFERRED):
            return True
        if isinstance(func.value, ast.Attribute) and self._module_chain(func.value, least=1) is not None:
            return True  # model.encoder.compile(), model = load_model(): a submodule compiled in place
        return self_path(func.value, self.scope.self_name) is not None or isinstance(func.value, ast.Name)

    def _children_from_varargs(self, node: ast.Call) -> None:
        """``super().__init__(*args)`` in ``__init__(self, *args)``: the modules the constructions pass
        become the children of a container subclass (``AugmentationSequential(Flip(), Jitter())``
        over ``nn.Sequential``), recorded as the class's ``T.CHILDREN`` spec; the project pass keeps
        it only where the class's MRO reaches a torch module container."""
        scope, cls = self.scope, self.ctx.cls
        func = scope.func
        if cls is None or func is None or func.name != "__init__":
            return
        star = [a for a in node.args if isinstance(a, ast.Starred)]
        if len(star) != 1 or not isinstance(star[0].value, ast.Name):
            return
        p = scope.params.get(star[0].value.id)
        if p is None or p.kind != "varargs":
            return
        ref = f"{T.PARAM_ELEMENTS}{self._class_ref(cls)}|{p.name}"
        cls.attrs[T.CHILDREN] = SubmoduleSpec("seq", (ref,), None, node_loc(node, self.index))

    def _passed_modules(self, node: ast.Call) -> tuple[tuple[str, str, str | None, str | None], ...]:
        """The arguments of a call (``"#i"`` from the first on, or the keyword) that are modules a
        reader can name, as compile targets: a local or parameter typed as a module, an element of
        a container (``m`` of ``for m in self.children()``, ``self.get_submodule(name)``) or a
        submodule attribute of ``self``; what a helper that calls its parameter runs
        (``self.ops.transform(x, module=m)`` then ``module(x)``)."""
        out: list[tuple[str, str, str | None, str | None]] = []
        given = [(f"#{i}", a) for i, a in enumerate(node.args) if not isinstance(a, ast.Starred)]
        given += [(kw.arg, kw.value) for kw in node.keywords if kw.arg is not None]
        cls = self.ctx.cls
        for key, arg in given:
            if isinstance(arg, ast.Name):
                ty = self._name_type(arg.id)
                if ty.kind in (T.MODULE, T.INSTANCE, T.ELEM) and ty.ref and not ty.ref.startswith("torch."):
                    kind, ref, meth = self._describe_value(ty, arg.id)
                    out.append((key, kind, ref, meth))
                elif ty.kind == T.MODLIST and ty.ref:
                    out.append((key, "modlist", ty.ref, None))  # `funcs = self.layers` handed on
                elif (bound := _bound_methods(ty)) is not None:
                    out.append((key, "modlist", *bound))  # `funcs = (t.inverse for t in self.ts)`
            elif isinstance(arg, (ast.GeneratorExp, ast.ListComp)):
                if (bound := _bound_methods(self.type_of(arg))) is not None:
                    out.append((key, "modlist", *bound))
            elif isinstance(arg, ast.Attribute) and cls is not None:
                sp = self_path(arg, self.scope.self_name)
                spec = cls.attrs.get(sp) if sp is not None and "." not in sp else None
                if spec is not None and spec.kind in ("instance", "param", "list", "seq", "dict"):
                    out.append((key, "attr", f"{self._class_ref(cls)}|{sp}", None))
        return tuple(out)

    def _module_args(self, node: ast.Call) -> tuple[tuple[str, str, str | None, str | None], ...]:
        """The arguments of a call after the first (``"#i"``) and its keywords that describe a
        module or a callable (``Bottleneck(enc, VectorQuantize(...))``, ``Wrapper(net=model)``), or
        a list of modules (``NormalizingFlow(base, [Planar(), Radial()])``); a ``*layers`` argument
        at position i is ``"*i"``, the list it spreads."""
        out = []
        named = [(f"#{i}", a) for i, a in enumerate(node.args) if i > 0 and not isinstance(a, ast.Starred)]
        named += [(kw.arg, kw.value) for kw in node.keywords if kw.arg is not None]
        for key, arg in named:
            if isinstance(arg, _TARGET_EXPRS):
                kind, ref, meth = self._describe_target(arg)
                if kind in _MODULE_KINDS and ref:
                    out.append((key, kind, ref, meth))
            elif (listed := self._module_list(arg)) is not None:
                out.append((key, "modlist", listed, None))
        for i, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred) and (listed := self._module_list(arg.value)) is not None:
                out.append((f"*{i}", "modlist", listed, None))
        return tuple(out)

    def _module_list(self, node: ast.expr) -> str | None:
        """The ``ref`` of a list of modules written as an expression (``[A(), B()]``, ``[A() for _ in
        range(n)] + [B()]``, a local list filled by ``append``): element classes ``@A;B`` or a
        container attribute's ``Class|path``; None for anything else."""
        ty = self.type_of(node)
        return ty.ref if ty.kind == T.MODLIST and ty.ref else None

    def _edge(
        self, kind: str, target: str, method: str, node: ast.Call, elem_count: int | None = None
    ) -> CallEdge | None:
        scope = self.scope
        if scope.eager_only:
            return None
        edge = CallEdge(
            kind=kind,
            target=target,
            method=method,
            loc=node_loc(node, self.index),
            in_loop=bool(scope.loops),
            cold=scope.cold[-1] if scope.cold else None,
            args=self._arg_kinds(node),
            elem_count=elem_count,
            unless=scope.unless[-1] if scope.unless else None,
        )
        if kind != "name" or not target.rsplit(".", 1)[-1].lstrip("_")[:1].isupper():
            edge.more_args = self._passed_modules(node)  # (a constructor's: set by the caller)
        if scope.func is not None:
            scope.func.calls.append(edge)
        else:
            self.facts.module_calls.append(edge)
        return edge

    def _attribute_read(self, node: ast.Attribute) -> None:
        """``self.p`` / ``obj.p`` read in a function: an edge of method ``@p`` (once per receiver
        and name), in case ``p`` is a ``@property`` of the receiver's class, whose getter runs
        where it is read (``Project.call_method_of_class`` keeps only property getters)."""
        scope = self.scope
        func = scope.func
        if func is None or scope.eager_only or node.attr.startswith("__"):
            return
        value = node.value
        if isinstance(value, ast.Name) and value.id == scope.self_name:
            kind, target = "self", ""
        elif (sp := self_path(value, scope.self_name)) is not None:
            kind, target = "self", sp
        else:
            recv = self.type_of(value)
            if recv.ref is None:
                return
            if recv.kind in (T.MODULE, T.INSTANCE):
                kind, target = "instance", recv.ref
            elif recv.kind == T.DEFERRED:
                kind, target = "deferred", recv.ref
            elif recv.kind == T.TENSOR and recv.ref.startswith(T.RESULT_OF):
                kind, target = "deferred", recv.ref[len(T.RESULT_OF) :] + ".forward"  # `model(x).variance`
            else:
                return
        method = "@" + node.attr
        reads = self.__dict__.setdefault("_attribute_reads", {})
        seen = reads.setdefault(id(func), (func, set()))[1]  # the function object kept alive with it
        if (kind, target, method) in seen:
            return
        seen.add((kind, target, method))
        func.calls.append(
            CallEdge(
                kind=kind,
                target=target,
                method=method,
                loc=node_loc(node, self.index),
                in_loop=bool(scope.loops),
                cold=scope.cold[-1] if scope.cold else None,
                unless=scope.unless[-1] if scope.unless else None,
            )
        )

    def _edge_for_value(self, ty: Ty, method: str, node: ast.Call) -> None:
        if ty.ref is None:
            return
        if ty.kind == T.ELEM:
            self._edge("elem", ty.ref, method, node)
        elif ty.kind in (T.MODULE, T.INSTANCE):
            edge = self._edge("instance", ty.ref, method, node)
            if (
                edge is not None
                and method not in ("__call__", "forward")
                and node.args
                and isinstance(node.args[0], _TARGET_EXPRS)
            ):
                # `trainer.fit(Regressor(), loader)`: in case the method compiles its parameter
                edge.arg0 = self._describe_target(node.args[0])
        elif ty.kind == T.MODLIST:
            self._edge("elem", ty.ref, method, node)
        elif ty.kind == T.DEFERRED:
            self._edge("deferred", ty.ref, method, node)
        elif ty.kind == T.COMPILED:
            self._edge("compiled", ty.ref, method, node)
        elif ty.kind == T.FUNC and not ty.ref.startswith("<"):
            for ref in ty.ref.split(T.UNION):  # a variable bound to one of several functions
                self._edge("name", ref, method, node)
        elif ty.kind == T.FUNC and ty.ref.startswith("<local>"):
            self._edge("local", ty.ref[7:], method, node)
        elif ty.kind == T.FUNC and ty.ref.startswith(T.SELF_MEMBER) and method == "__call__":
            # `fn = getattr(self, f"{kind}_reduction"); fn(x)`: the members of self of those names
            self._edge("self", ty.ref[len(T.SELF_MEMBER) :], method, node)

    def _maybe_ref_edge(self, arg: ast.expr, node: ast.Call) -> None:
        """A project function passed as a value is usually called by the callee (checkpoint, map)."""
        if isinstance(arg, ast.Name):
            local = self.scope.local_def(arg.id)
            if local is not None:
                self._edge("local", local, "__call__", node)
                return
            q = self.qualify(arg)
            if (
                q is not None
                and not q.startswith("torch.")
                and not is_external(q)
                and q.rsplit(".", 1)[-1][:1].islower()
            ):
                self._edge("ref", q, "__call__", node)
            elif q is None:
                # `estimator_fn = neumann_estimator if c else basic_estimator` then
                # `helper(estimator_fn, x)`: a local bound to project functions, called by the callee
                ty = self._name_type(arg.id)
                if ty.kind == T.FUNC and ty.ref and "<" not in ty.ref:
                    for ref in ty.ref.split(T.UNION):
                        if (
                            not ref.startswith("torch.")
                            and not is_external(ref)
                            and ref.rsplit(".", 1)[-1][:1].islower()
                        ):
                            self._edge("ref", ref, "__call__", node)
        elif isinstance(arg, ast.Attribute):
            sp = self_path(arg, self.scope.self_name)
            if sp is not None and "." not in sp:
                self._edge("self", sp, "__call__", node)

    def _arg_kinds(self, node: ast.Call) -> tuple[tuple[str, str], ...]:
        out = []
        for i, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                out.append((f"#{i}", "starred"))
                break
            out.append((f"#{i}", self._arg_kind(arg)))
        for kw in node.keywords:
            if kw.arg is not None:
                out.append((kw.arg, self._arg_kind(kw.value)))
            elif ("**", "starred") not in out:
                out.append(("**", "starred"))  # `f(x, **kwargs)`: any keyword may be given
        return tuple(out)

    def _arg_kind(self, arg: ast.expr) -> str:  # noqa: C901
        scope = self.scope
        if isinstance(arg, ast.Constant):
            return "const:" + repr(arg.value)[:40]
        if isinstance(arg, ast.JoinedStr):
            return "fstring"
        if isinstance(arg, ast.Name):
            if arg.id in scope.counters:
                return "counter"
            ty = self.type_of(arg)
            if ty.kind == T.TENSOR:
                return "tensor"
            if ty.kind == T.SCALAR and ty.dtype == "bool":
                return "bool"
            if ty.kind == T.COMPILED and ty.ref:
                return "compiled:" + ty.ref  # train(net) after net = torch.compile(...)
            return "name:" + arg.id
        if isinstance(arg, ast.Call):
            q = self.qualify(arg.func)
            if q in CLOCK_CALLS:
                return "clock"
            if isinstance(arg.func, ast.Name) and arg.func.id == "len" and q is None:
                return "len"
            if isinstance(arg.func, ast.Name) and arg.func.id in ("str", "int", "float") and arg.args:
                inner = self._arg_kind(arg.args[0])
                if inner in ("counter", "len", "clock"):
                    return inner
            ty = self.type_of(arg)
            if ty.kind == T.COMPILED and ty.ref:
                return "compiled:" + ty.ref  # Sampler(torch.compile(unet)): handed over inline
            return "tensor" if ty.kind == T.TENSOR else "call"
        if isinstance(arg, ast.BinOp):
            kinds = {self._arg_kind(arg.left), self._arg_kind(arg.right)}
            for k in ("counter", "len", "clock", "fstring"):
                if k in kinds:
                    return k
            ty = self.type_of(arg)
            return "tensor" if ty.kind == T.TENSOR else "expr"
        if isinstance(arg, ast.Attribute):
            ty = self.type_of(arg)
            if ty.kind == T.TENSOR:
                return "tensor"
            return "attr:" + (dotted(arg) or arg.attr)
        ty = self.type_of(arg)
        if ty.kind == T.TENSOR:
            return "tensor"
        if isinstance(arg, (ast.Compare, ast.BoolOp)) or (
            isinstance(arg, ast.UnaryOp) and isinstance(arg.op, ast.Not)
        ):
            return "bool"  # `step % 2 == 0`, `not warmup`: a Python bool decided per call
        return "expr"

    # ------------------------------------------------------------------ compile sites
    def _new_site_id(self) -> str:
        self._site_counter += 1
        return f"{self.module}#{self._site_counter}"

    def _compile_options(self, node: ast.Call | None, base_q: str | None = None) -> dict[str, Any]:
        opts: dict[str, Any] = {}
        if base_q is not None and base_q in self.facts.compile_functions:
            opts.update(self.facts.compile_functions[base_q])
        if node is None:
            return opts
        for kw in node.keywords:
            if kw.arg in COMPILE_OPTION_KEYS:
                value = literal(kw.value)
                opts[kw.arg] = "<expr>" if value is UNEVALUABLE else value
        if base_q in OPTIMIZE_FUNCS and node.args:
            value = literal(node.args[0])
            opts["backend"] = "<expr>" if value is UNEVALUABLE else value
        return opts

    def _compile_call(self, node: ast.Call, q: str, options_from: ast.Call | None = None) -> None:
        """``torch.compile(target, ...)``; a bare ``torch.compile(**kw)`` returns a decorator."""
        options = self._compile_options(options_from if options_from is not None else node, q)
        if options_from is None and q in OPTIMIZE_FUNCS:
            return
        if not node.args:
            # torch.compile(mode=...) used as a decorator factory: handled at the decorator.
            return
        target = node.args[0]
        kind, ref, meth = self._describe_target(target)
        if kind == "unknown":
            kind, ref, meth = self._param_target(target) or (kind, ref, meth)
        site = CompileSite(
            id=self._new_site_id(),
            how="optimize"
            if q in OPTIMIZE_FUNCS
            else ("partial" if q in self.facts.compile_functions else "call"),
            target_kind=kind,
            ref=ref,
            method=meth,
            loc=node_loc(node, self.index),
            func=self.scope.func.qualname if self.scope.func else None,
            owner=self._owner_ref(),
            options=options,
            text=self._short(node),
            in_loop=bool(self.scope.loops),
        )
        self.facts.compile_sites.append(site)
        self._types[id(node)] = Ty(T.COMPILED, T.HIGH, None, site.id)

    def _method_compile(self, node: ast.Call) -> None:
        func = node.func
        assert isinstance(func, ast.Attribute)
        kind, ref, meth = self._describe_target(func.value)
        if kind == "unknown":
            kind, ref, meth = self._param_target(func.value) or (kind, ref, meth)
        site = CompileSite(
            id=self._new_site_id(),
            how="method",
            target_kind=kind,
            ref=ref,
            method=meth,
            loc=node_loc(node, self.index),
            func=self.scope.func.qualname if self.scope.func else None,
            owner=self._owner_ref(),
            options=self._compile_options(node),
            text=self._short(node),
            in_loop=bool(self.scope.loops),
        )
        self.facts.compile_sites.append(site)

    def _owner_ref(self) -> str | None:
        cls = self.ctx.cls
        return self._class_ref(cls) if cls is not None else None

    def _short(self, node: ast.AST) -> str:
        text = " ".join(self.segment(node).split())
        return text if len(text) <= 80 else text[:77] + "..."

    def _describe_target(self, target: ast.expr) -> tuple[str, str | None, str | None]:  # noqa: C901
        scope = self.scope
        if isinstance(target, ast.Lambda):
            forwarded = _forwarded_call(target)
            if forwarded is not None:
                # torch.compile(lambda *a, **k: model(*a, **k)): the arguments reach `model` as
                # they are, so the guards and the code traced are model's
                return self._describe_target(forwarded)
            qual = self._lambda_function(target)
            return "local", qual, None
        cls = self.ctx.cls
        if isinstance(target, ast.Name) and target.id == scope.self_name and cls is not None:
            return "instance", self._class_ref(cls), None  # torch.compile(self)
        if isinstance(target, ast.Name):
            local = scope.local_def(target.id)
            if local is not None:
                return "local", local, None
            ty = self._name_type(target.id)
            if ty.kind == T.FUNC and ty.ref and not ty.ref.startswith("<"):
                return "func", ty.ref, None
            if (
                ty.kind == T.UNKNOWN
                and target.id in scope.params
                and scope.func is not None
                and scope.func.name == "__init__"
                and cls is not None
            ):
                # `def __init__(self, model): self.model = torch.compile(model)` (a Trainer or a
                # Server wrapping what its constructor is given): what the constructions pass
                return "ctorparam", f"{self._class_ref(cls)}|{target.id}", None
            return self._describe_value(ty, target.id)
        if isinstance(target, ast.Call):
            if target.args and self.qualify(target.func) == "functools.partial":
                return self._describe_target(target.args[0])  # torch.compile(partial(f, k=v))
            func = target.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in SELF_RETURNING_METHODS
                and isinstance(func.value, ast.Name)
                and func.value.id in scope.params
                and self._name_type(func.value.id).kind == T.UNKNOWN
            ):
                return self._describe_target(func.value)  # torch.compile(model.eval()): the module itself
            ty = self.type_of(target)
            if ty.kind in (T.INSTANCE, T.MODULE) and ty.ref:
                return "instance", ty.ref, None
            if ty.kind == T.DEFERRED and ty.ref:
                return "deferred", ty.ref, None
            if (
                ty.kind == T.UNKNOWN
                and isinstance(func, ast.Attribute)
                and func.attr not in SELF_RETURNING_METHODS
            ):
                recv = self.type_of(func.value)
                if recv.kind == T.INSTANCE and recv.ref and "|" not in recv.ref and recv.ref[:1] != "<":
                    # torch.compile(pipeline.first()) / torch.compile(Builder(cfg).build()): what that
                    # method of the instance's class returns
                    return "deferred", f"{recv.ref}.{func.attr}", None
            if ty.kind == T.MODLIST and (ty.ref or "").startswith(T.CLASSES):
                return "modlist", ty.ref, None  # torch.compile(nn.Sequential(A(), B()))
            # torch.compile(torch.compiler.disable(f)) and friends
            return "unknown", self._short(target), None
        if isinstance(target, ast.Attribute):
            sp = self_path(target, scope.self_name)
            cls = self.ctx.cls
            if sp is not None and cls is not None:
                head, _, rest = sp.partition(".")
                if not rest:
                    spec = cls.attrs.get(head)
                    if spec is None and head in cls.methods:
                        return "method", self._class_ref(cls), head
                    return "attr", f"{self._class_ref(cls)}|{head}", None
                if rest == "forward":
                    return "attr", f"{self._class_ref(cls)}|{head}", None
                return "attr", f"{self._class_ref(cls)}|{sp}", None
            q = self.qualify(target)
            if q is not None:
                return "func", q, None
            recv = self.type_of(target.value)
            if recv.kind in (T.INSTANCE, T.MODULE) and recv.ref:
                if target.attr == "forward" or target.attr[:1].islower() and target.attr not in ("layers",):
                    # model.forward / model.generate: a method of the instance's class, unless it
                    # is a known submodule attribute (resolved by the project pass).
                    return "method", recv.ref, target.attr
                return "attr", f"{recv.ref}|{target.attr}", None
            if recv.kind == T.DEFERRED and recv.ref:
                return "method", "deferred:" + recv.ref, target.attr
            if recv.kind == T.ELEM and recv.ref and target.attr[:1].islower():
                return "method", "elem:" + recv.ref, target.attr  # self.blocks[i].masked_forward
            if recv.kind == T.COMPILED and recv.ref:
                inner = self._compiled_method(recv.ref, target.attr)
                if inner is not None:
                    return inner
            chain = self._module_chain(target)
            if chain is not None:
                return "attr", chain, None  # model.decoder.decode_step, model = load_model()
            return "unknown", self._short(target), None
        if isinstance(target, ast.Subscript):
            sp = self_path(target.value, scope.self_name)
            cls = self.ctx.cls
            if sp is not None and cls is not None:
                return "elem", f"{self._class_ref(cls)}|{sp}", None
            recv = self.type_of(target.value)
            if recv.kind == T.MODLIST and recv.ref:
                return "elem", recv.ref, None
            base = target.value
            if isinstance(base, ast.Attribute):
                owner = self.type_of(base.value)
                if owner.kind in (T.INSTANCE, T.MODULE) and owner.ref:
                    return "elem", f"{owner.ref}|{base.attr}", None
            return "unknown", self._short(target), None
        return "unknown", self._short(target), None

    def _param_target(self, target: ast.expr) -> tuple[str, str | None, str | None] | None:
        """``torch.compile(model)`` / ``torch.compile(model.step)`` of a parameter of a module-level
        function or a method (``def train(model, steps): cmodel = torch.compile(model)``,
        ``Trainer.fit(self, module)``): what the callers pass there (kind "funcparam", ref
        ``qualname|param``, method the attribute)."""
        func = self.scope.func
        if func is None or func.qualname.count(".") > (func.cls is not None):
            return None  # nested functions: their callers are not followed
        meth = None
        if isinstance(target, ast.Attribute):
            meth, target = target.attr, target.value
        if not isinstance(target, ast.Name) or target.id not in self.scope.params:
            return None
        return "funcparam", f"{func.qualname}|{target.id}", meth

    def _module_chain(self, target: ast.Attribute, least: int = 2) -> str | None:
        """``model.decoder.decode_step`` / ``model.encoder``: an attribute path (two parts or more)
        on a name that holds a project module, an instance or what a project function returns
        (``model = load_translator()``), as the ``Class|path`` / ``deferred:pkg.fn|path`` reference
        of an "attr" target; the project pass follows the submodules and ends at a submodule or a
        method of the last one."""
        parts: list[str] = []
        node: ast.expr = target
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or len(parts) < least or node.id == self.scope.self_name:
            return None
        root = self._name_type(node.id)
        if not root.ref or T.UNION in root.ref:
            return None
        if root.kind in (T.INSTANCE, T.MODULE):
            owner = root.ref
        elif root.kind == T.DEFERRED:
            owner = "deferred:" + root.ref
        else:
            return None
        return f"{owner}|{'.'.join(reversed(parts))}"

    def _compiled_method(self, site_id: str, attr: str) -> tuple[str, str | None, str | None] | None:
        """``compiled.score`` / ``compiled._orig_mod`` for ``compiled = torch.compile(model)`` of
        this file: the compiled module forwards attribute access to the module it wraps, so this
        is that module's method (or the module itself)."""
        site = next((s for s in self.facts.compile_sites if s.id == site_id), None)
        if site is None or site.method is not None or not site.ref:
            return None
        if attr == "_orig_mod":
            return site.target_kind, site.ref, None
        if site.target_kind == "instance":
            return "method", site.ref, attr
        if site.target_kind == "deferred":
            return "method", "deferred:" + site.ref, attr
        return None

    def _describe_value(self, ty: Ty, name: str) -> tuple[str, str | None, str | None]:
        if ty.kind in (T.INSTANCE, T.MODULE) and ty.ref:
            return "instance", ty.ref, None
        if ty.kind == T.ELEM and ty.ref:
            return "elem", ty.ref, None
        if ty.kind == T.MODLIST and ty.ref:
            return "modlist", ty.ref, None
        if ty.kind == T.DEFERRED and ty.ref:
            return "deferred", ty.ref, None
        return "unknown", name, None

    def _lambda_function(self, node: ast.Lambda) -> str:
        qual = f"{self.scope.qualname + '.' if self.scope.qualname else ''}<lambda@{node.lineno}>"
        facts = FunctionFacts(
            qualname=qual,
            name="<lambda>",
            loc=node_loc(node, self.index),
            name_loc=node_loc(node, self.index),
            cls=None,
        )
        self.facts.functions[qual] = facts
        parent_scope = self.scope
        scope = self._push_function_scope(facts, node.args, is_method=False)
        try:
            self.expr(node.body)
            facts.returns = self.type_of(node.body)
        finally:
            self._pop_scope(scope)
        parent_scope.local_defs[qual] = qual
        return qual

    def _target_ref(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            local = self.scope.local_def(node.id)
            if local is not None:
                return f"{self.module}.{local}" if self.module else local
        q = self.qualify(node)
        if q is not None:
            return q
        if isinstance(node, ast.Attribute):
            cls = self.ctx.cls
            sp = self_path(node, self.scope.self_name)
            if sp is not None and cls is not None:
                return f"{self._class_ref(cls)}.{sp}"
        return None

    def _check_wrapper_return(self, node: ast.Return) -> None:
        """Notice project helpers that wrap torch.compile or is_compiling (``maybe_compile(fn)``,
        ``def is_tracing(): return is_torchdynamo_compiling() or torch.jit.is_tracing()``)."""
        scope = self.scope
        func = scope.func
        value = node.value
        if func is None or value is None:
            return
        if isinstance(value, ast.Name) and value.id in scope.pred_names:
            # `_is_tracing = is_torchdynamo_compiling() or ...; return _is_tracing`
            direct, refs = scope.pred_names[value.id]
        else:
            direct, refs = self._predicate_parts(value)
        plain = self.__dict__.setdefault("_plain_returns", set())
        if direct or refs:
            if func.qualname not in plain:
                func.compiling_predicate = func.compiling_predicate or direct
                func.predicate_refs = (*func.predicate_refs, *refs)
        elif not (isinstance(value, ast.Constant) and value.value in (False, None)):
            # `return bool(_torch_is_exporting())` on one path, `return is_compiling()` on a
            # fallback one (kornia's is_exporting): not true exactly under compile.  A constant
            # False (`if not available: return False`) is the eager answer and keeps it one.
            plain.add(func.qualname)
            func.compiling_predicate = False
            func.predicate_refs = ()
        if isinstance(value, ast.Name):
            self._check_compiled_param_return(value, func)
        self._check_param_return(value, func)
        if not isinstance(value, ast.Call):
            return
        q = self.qualify(value.func)
        if q in COMPILE_FUNCS and value.args and isinstance(value.args[0], ast.Name):
            names = [p.name for p in func.params]
            if value.args[0].id in names:
                func.compile_wrapper_param = names.index(value.args[0].id)
                # the site recorded for this call has an unknown (parameter) target: drop it
                self.facts.compile_sites = [
                    s
                    for s in self.facts.compile_sites
                    if not (s.func == func.qualname and s.target_kind in ("unknown", "funcparam"))
                ]
        elif q in COMPILING_PREDICATES and func.qualname not in self.__dict__.get("_plain_returns", ()):
            func.compiling_predicate = True

    def _check_param_return(self, value: ast.expr, func: FunctionFacts) -> None:
        """``def inject_lora(model, cfg): ...; return model``: a module-level function whose every
        return hands back one of its parameters as it came (untyped there: not rebound to a value
        the walk knows), so calling it gives what the call passes (``FunctionFacts.returns_param``)."""
        names = [p.name for p in func.params]
        index = -1
        if (
            func.cls is None
            and isinstance(value, ast.Name)
            and value.id in names
            and _as_given(self.type_of(value))
        ):
            index = names.index(value.id)
        seen = self.__dict__.setdefault("_param_returns", {})
        if seen.setdefault(func.qualname, index) != index:
            seen[func.qualname] = -1
        func.returns_param = seen[func.qualname] if seen[func.qualname] >= 0 else None

    def _check_compiled_param_return(self, value: ast.Name, func: FunctionFacts) -> None:
        """``model = torch.compile(model, mode=m); return model`` with ``model`` a parameter: the
        function wraps torch.compile like ``return torch.compile(model)`` does."""
        ty = self.type_of(value)
        if ty.kind != T.COMPILED or not ty.ref:
            return
        names = [p.name for p in func.params]
        for site in self.facts.compile_sites:
            if site.id == ty.ref:
                param = (site.ref or "").rpartition("|")[2] if site.target_kind == "funcparam" else site.ref
                if (
                    site.func == func.qualname
                    and site.target_kind in ("unknown", "funcparam")
                    and site.method is None
                    and param in names
                ):
                    func.compile_wrapper_param = names.index(param)
                    self.facts.compile_sites = [s for s in self.facts.compile_sites if s is not site]
                return

    def _decorator(self, dec: ast.expr, facts: FunctionFacts, node: ast.AST) -> str | None:
        call = dec if isinstance(dec, ast.Call) else None
        target = dec.func if isinstance(dec, ast.Call) else dec
        q = self.qualify(target)
        local_q = q
        if q is None and isinstance(target, ast.Name):
            local_q = target.id
        site_how = None
        if q in COMPILE_FUNCS or (q is not None and q in self.facts.compile_functions):
            site_how = "decorator"
        elif q in OPTIMIZE_FUNCS:
            site_how = "optimize"
        if site_how is not None:
            qual_ref = f"{self.module}.{facts.qualname}" if self.module else facts.qualname
            self.facts.compile_sites.append(
                CompileSite(
                    id=self._new_site_id(),
                    how=site_how,
                    target_kind="func",
                    ref=qual_ref,
                    method=None,
                    loc=node_loc(dec, self.index),
                    func=self.scope.func.qualname if self.scope.func else None,
                    owner=self._owner_ref(),
                    options=self._compile_options(call, q),
                    text="@" + self._short(dec),
                )
            )
        elif q in DISABLE_FUNCS:
            qual_ref = f"{self.module}.{facts.qualname}" if self.module else facts.qualname
            recursive = kw_bool(call, "recursive", True) if call is not None else True
            self.facts.disable_sites.append(DisableSite(qual_ref, recursive, node_loc(dec, self.index)))
        elif q == "torch.library.custom_op":
            self.facts.custom_ops[facts.qualname] = node_loc(dec, self.index)
        elif q == "torch.compiler.allow_in_graph":
            qual_ref = f"{self.module}.{facts.qualname}" if self.module else facts.qualname
            self.facts.allow_in_graph.append(DisableSite(qual_ref, True, node_loc(dec, self.index)))
        elif isinstance(target, ast.Attribute) and target.attr in (
            "register_fake",
            "register_kernel",
            "impl_abstract",
        ):
            base = dotted(target.value)
            if base:
                self.facts.fake_registrations.add(base)
        return local_q


def _bound_methods(ty: Ty) -> tuple[str, str] | None:
    """(the container's ref, the method) of a collection of bound methods of a module
    container's elements (``types.BOUND``), else None."""
    if ty.kind == T.CONTAINER and ty.ref and ty.dtype and ty.dtype.startswith(T.BOUND):
        return ty.ref, ty.dtype.removeprefix(T.BOUND)
    return None


def _as_given(ty: Ty) -> bool:
    """A returned parameter still holds what the caller passed: untyped, or typed only by a
    generic ``nn.Module`` annotation (not rebound to a project class, a wrapper, a compiled module)."""
    return ty.kind == T.UNKNOWN or (
        ty.kind == T.MODULE and ty.ref in ("torch.nn.Module", "torch.nn.modules.module.Module")
    )


def _forwarded_call(node: ast.Lambda) -> ast.expr | None:
    """The callee of a lambda that only forwards its parameters, in order (``lambda x: f(x)``,
    ``lambda *a, **k: m(*a, **k)``), else None."""
    body, args = node.body, node.args
    if not isinstance(body, ast.Call) or args.posonlyargs or args.kwonlyargs or args.defaults:
        return None
    wanted = [a.arg for a in args.args]
    got = []
    for arg in body.args:
        if isinstance(arg, ast.Name):
            got.append(arg.id)
        elif isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name) and args.vararg is not None:
            got.append("*" + arg.value.id)
        else:
            return None
    if args.vararg is not None:
        wanted.append("*" + args.vararg.arg)
    kw = [k for k in body.keywords]
    if args.kwarg is not None:
        if (
            len(kw) != 1
            or kw[0].arg is not None
            or not isinstance(kw[0].value, ast.Name)
            or kw[0].value.id != args.kwarg.arg
        ):
            return None
    elif kw:
        return None
    if got != wanted:
        return None
    names = set(wanted) | ({args.kwarg.arg} if args.kwarg else set())
    if any(isinstance(n, ast.Name) and n.id.lstrip("*") in names for n in ast.walk(body.func)):
        return None
    return body.func
