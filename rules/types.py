"""Just enough typing to know what is a tensor.

Dynamo breaks on a tensor's *value* reaching Python (``if t:``, ``t.item()``), never on a Python
value's; so every TC1xx rule asks one question of an expression: is it a tensor?  ``Ty`` answers
with a kind and a confidence, and the tables below hold what torch 2.13 returns.  Unknown stays
unknown: rules only speak loudly on HIGH confidence.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

# kinds
TENSOR = "tensor"  # a torch.Tensor (dtype hint in .dtype: "float" | "int" | "bool" | None)
SCALAR = "scalar"  # a Python number/bool/str/None (python type name in .dtype)
SIZE = "size"  # torch.Size, shape tuples
MODULE = "module"  # an nn.Module instance (.ref: class qualified name, may be external)
MODLIST = "modlist"  # an nn.ModuleList / Sequential / ModuleDict (.ref: self path or class refs)
ELEM = "elem"  # an element of a module container (.ref: the container's self path)
INSTANCE = "instance"  # an instance of a (project or external) class (.ref: class name)
FUNC = "func"  # a function object (.ref: qualified name)
COMPILED = "compiled"  # the result of torch.compile(...) (.ref: compile-site id)
DEFERRED = "deferred"  # the return value of a project function, resolved across files (.ref)
TLIST = "tlist"  # a Python list/tuple of tensors
CONTAINER = "container"  # another Python list/dict/set/tuple
UNKNOWN = "unknown"

HIGH, MEDIUM, LOW = 0, 1, 2


class Ty(NamedTuple):
    kind: str
    conf: int = HIGH
    dtype: str | None = None
    ref: str | None = None

    def weaker(self, conf: int) -> Ty:
        return self._replace(conf=max(self.conf, conf))


T_UNKNOWN = Ty(UNKNOWN, LOW)
T_TENSOR = Ty(TENSOR)
T_BOOL_TENSOR = Ty(TENSOR, HIGH, "bool")
T_INT = Ty(SCALAR, HIGH, "int")
T_FLOAT = Ty(SCALAR, HIGH, "float")
T_BOOL = Ty(SCALAR, HIGH, "bool")
T_STR = Ty(SCALAR, HIGH, "str")
T_NONE = Ty(SCALAR, HIGH, "none")
T_SIZE = Ty(SIZE)
# Python scalars whose value is only known at run time inside a compiled region: `.item()` results
# (with capture_scalar_outputs) and Python `random` draws.  Branching on them breaks the graph.
DATA_DEPENDENT_SCALARS = frozenset({"item", "random"})
# `random` draws Dynamo 2.13 traces (RandomVariable replays them): run-time values, so a branch on
# one breaks (TC102).  Every other draw of the module is skipped (GB0007: `random.random` is a
# pre-bound C method, the rest live in a skipped file): the call itself breaks (TC108) and its
# result is a plain Python number in the frame that resumes after it.
PY_RANDOM_VALUES = frozenset({"random.uniform", "random.randint", "random.randrange"})
PY_RANDOM_SKIPPED = frozenset(
    {"random.random", "random.gauss", "random.normalvariate", "random.lognormvariate",
     "random.betavariate", "random.expovariate", "random.triangular", "random.gammavariate",
     "random.vonmisesvariate", "random.paretovariate", "random.weibullvariate",
     "random.choice", "random.choices", "random.shuffle", "random.sample", "random.getrandbits"}
)  # fmt: skip
T_OTHER = Ty(CONTAINER, HIGH)
# a dict built in the function (a literal, a comprehension): indexing it hashes the key (a tensor
# key by identity), no conversion to an int
T_DICT = Ty(CONTAINER, HIGH, "dict")


# A value that is an instance of one of several classes (`A() if cfg.big else B()`) has the class
# references joined by UNION in its ``ref``.  A module container or container element whose ``ref``
# names its element classes (a local `nn.ModuleList([A(), B()])`), rather than the `Class|path` of
# a submodule attribute, has the CLASSES prefix: ``"@pkg.A;pkg.B"``.
UNION = ";"
CLASSES = "@"
# Ty.ref of a TENSOR the project pass knows a function returns only because its parameters were
# seeded from its region call sites (`def default(val, d): return val if val is not None else d`):
# a call gets it only when it passes a tensor itself (rules.analysis.seeds)
FROM_ARGS = "<from-args>"
# Ty.ref of the value a call of a project module or object returns, typed TENSOR as a module call is
# (``flow(c)``, ``self.net(x)``), when the callee's class is known: ``"<result-of>pkg.Flow"``.  A method
# called on it that is not a tensor's (``flow(c).log_prob(x)``) is the method of what that class's
# ``forward`` returns (a distribution, a structured output), followed as a deferred call edge.
RESULT_OF = "<result-of>"
# Ty.ref of a FUNC that is a member of ``self`` picked by name: ``getattr(self, f"{kind}_reduction")``
# (``"<self>*_reduction"``: a ``*`` for each part computed at run time), ``getattr(self, "layer%d" % i)``.
# Calling it runs the methods (or submodules) of the class of ``self`` whose names match.
SELF_MEMBER = "<self>"
# A class reference in the ``refs`` of a module container attribute filled from a constructor
# parameter (``self.flows = nn.ModuleList(flows)``, ``self.ts = ts`` of ``*ts``): its elements are the
# modules the project's constructions pass there, ``"<param>pkg.Model|flows"`` (Project.param_elements).
PARAM_ELEMENTS = "<param>"
# The ``ClassFacts.attrs`` key of the children a container subclass is given through its constructor's
# ``*args`` (``class Pipeline(nn.Sequential): def __init__(self, *args): super().__init__(*args)``): a
# "seq" spec whose refs are ``PARAM_ELEMENTS`` (Project.submodule_classes keeps it only for a class
# whose MRO reaches a torch module container).
CHILDREN = "<children>"
# A ref in the ``refs`` of a module container attribute filled with what a method of ``self`` returns
# (``self.convs.append(self.init_conv(...))``, ``"<self-result>init_conv"``): the modules that method
# of the class of ``self`` returns, a subclass's override where the receiver is known
# (Project.spec_classes).
SELF_RESULT = "<self-result>"
# Ty.ref of a FUNC (a class) / INSTANCE (its instance) taken from a module-level dict that class
# decorators fill (``MODELS[cfg.name](cfg)``, ``@register("mlp")`` storing ``MODELS[name] = cls``):
# ``"<registry>pkg.registry.MODELS"`` or, for a literal key, ``"<registry>pkg.registry.MODELS|mlp"``;
# the project expands it into the registered classes (Project.registry_classes).
REGISTRY = "<registry>"
# Ty.ref of a TENSOR that is a 0-d NumPy value computed from Python numbers only (``np.ceil(h / w)``,
# ``np.sqrt(n)``, arithmetic on them with numbers): Dynamo 2.13 traces it as an ndarray whose value
# the fake tensor knows, so ``int()`` / ``float()`` of it fold to a constant when its dtype
# (``Ty.dtype``) is "float", and break (GB0208) when it is "int"; an ``if`` on it breaks (GB0170).
NUMPY_SCALAR = "<np-scalar>"
# Ty.dtype prefix of a CONTAINER of bound methods of a module container's elements
# (``(t.inverse for t in self._transforms[::-1])``, ``[m.encode for m in self.blocks]``):
# ``"bound:inverse"``, its ``ref`` the container's; a helper calling each item runs that method
# of each element (Project._passed_classes).
BOUND = "bound:"


def call_result(callee: Ty, conf: int) -> Ty:
    """The type of calling ``callee`` (a module or an instance): a tensor, marked with the callee's
    class when that is one project-or-library class (not torch's own, not a union)."""
    ref = callee.ref
    if (
        callee.kind in (MODULE, INSTANCE)
        and ref
        and not ref.startswith(("torch.", "<", CLASSES))
        and UNION not in ref
        and "|" not in ref
    ):
        return Ty(TENSOR, conf, None, RESULT_OF + ref)
    return Ty(TENSOR, conf)


def union_ref(refs: Iterable[str]) -> str | None:
    """One ``ref`` for several class references (each once, in order); None when there are none."""
    out: list[str] = []
    for ref in refs:
        for part in ref.split(UNION):
            if part and part not in out:
                out.append(part)
    return UNION.join(out) if out else None


def ref_classes(ref: str | None) -> tuple[str, ...]:
    """The class references a (possibly joined, possibly CLASSES-prefixed) ``ref`` stands for."""
    if not ref:
        return ()
    return tuple(r for r in ref.removeprefix(CLASSES).split(UNION) if r)


def _class_like(ref: str) -> bool:
    """Whether every reference in a (joined) ``ref`` names a class by its spelling (``pkg.m.Name``)."""
    parts = ref_classes(ref)
    return bool(parts) and all(p[:1] != "<" and p.rsplit(".", 1)[-1][:1].isupper() for p in parts)


def join(a: Ty, b: Ty) -> Ty:
    """The type of a variable that holds ``a`` on one path and ``b`` on another."""
    if a == b:
        return a
    if a.kind == b.kind == FUNC and a.ref and b.ref and "<" not in a.ref + b.ref:
        # `spline_fn = splines.linear` on one path, `splines.circular` on another (normflows): either
        # function is what a later `spline_fn(x)` calls
        return Ty(FUNC, max(a.conf, b.conf), None, union_ref((a.ref, b.ref)))
    if a.kind in (INSTANCE, MODULE) and b.kind in (INSTANCE, MODULE) and a.ref and b.ref and a.ref != b.ref:
        # `A() if c else B()`: either class; an instance of a project class wins over a torch module
        kind = INSTANCE if INSTANCE in (a.kind, b.kind) else MODULE
        return Ty(kind, max(a.conf, b.conf), None, union_ref((a.ref, b.ref)))
    if a.kind == b.kind == FUNC and a.ref and b.ref and _class_like(a.ref) and _class_like(b.ref):
        # `return InputOps` on one path, `return MaskOps` on another (a method picking the class
        # whose classmethod runs): either class
        return Ty(FUNC, max(a.conf, b.conf), None, union_ref((a.ref, b.ref)))
    if a.kind == b.kind:
        dtype = a.dtype if a.dtype == b.dtype else None
        ref = a.ref if a.ref == b.ref else None
        return Ty(a.kind, max(a.conf, b.conf), dtype, ref)
    for x, y in ((a, b), (b, a)):
        if x.kind == TENSOR and y.kind == SCALAR and y.dtype == "none":
            return x  # Optional[Tensor]: still a tensor when it is used as one
        if x.kind in (FUNC, INSTANCE, MODULE, COMPILED) and x.ref and y.kind == SCALAR and y.dtype == "none":
            return x  # `self.fn = helper if cfg.x else None`: the callable, where it is one
        if x.kind == TENSOR and y.kind in (UNKNOWN, DEFERRED):
            return x.weaker(MEDIUM)
        if (
            x.kind == MODLIST
            and (x.ref or "").startswith(CLASSES)
            and y.kind == CONTAINER
            and y.dtype is None
        ):
            return x  # `layers = []` filled with modules in a loop: the modules, where it has them
        if x.kind == TENSOR and y.kind == SCALAR and y.dtype in ("bool", "int", "float"):
            # `skip = False` ... `if self.training: skip = torch.rand([]) < p`: a tensor on one path
            return x.weaker(MEDIUM)
    return T_UNKNOWN


# ---------------------------------------------------------------------------------------------
# What torch returns.

# Tensor attributes that are not tensors.
TENSOR_META_ATTRS = frozenset(
    {
        "shape", "dtype", "device", "ndim", "requires_grad", "is_cuda", "is_leaf", "is_sparse",
        "is_quantized", "is_meta", "is_cpu", "layout", "names", "grad_fn", "itemsize", "nbytes",
        "is_nested", "is_mps", "is_xpu",
    }
)  # fmt: skip

# Tensor methods returning Python values (not tensors).
TENSOR_META_METHODS = {
    "size": SIZE, "dim": "int", "ndimension": "int", "numel": "int", "nelement": "int",
    "element_size": "int", "data_ptr": "int", "get_device": "int", "stride": SIZE,
    "is_contiguous": "bool", "is_floating_point": "bool", "is_complex": "bool",
    "is_pinned": "bool", "is_shared": "bool", "is_set_to": "bool", "storage_offset": "int",
    "type": "str", "untyped_storage": "other", "storage": "other", "has_names": "bool",
    "is_inference": "bool", "is_signed": "bool", "__len__": "int", "dim_order": "other",
    "register_hook": "other", "retain_grad": "none", "backward": "none",
}  # fmt: skip

# Methods whose result dtype is known.
INT_RESULT_METHODS = frozenset(
    {"long", "int", "short", "argmax", "argmin", "argsort", "nonzero", "count_nonzero", "byte",
     "char", "bincount", "indices", "searchsorted", "bucketize", "argwhere"}
)  # fmt: skip
FLOAT_RESULT_METHODS = frozenset(
    {"float", "double", "half", "bfloat16", "mean", "softmax", "log_softmax", "sigmoid", "tanh",
     "exp", "log", "sqrt", "rsqrt", "norm", "std", "var", "sin", "cos", "erf", "reciprocal"}
)  # fmt: skip
BOOL_RESULT_METHODS = frozenset(
    {"bool", "any", "all", "isnan", "isinf", "isfinite", "eq", "ne", "gt", "lt", "ge", "le",
     "logical_and", "logical_or", "logical_not", "logical_xor", "isclose", "isneginf", "isposinf",
     "greater", "less", "equal", "not_equal", "greater_equal", "less_equal", "signbit"}
)  # fmt: skip

# Method names that only tensors (or numpy arrays, which Dynamo also traces as tensors) have;
# a call of one on an unknown receiver makes the result a likely tensor.  Names that lists,
# dicts, strings or ints also have (count, index, copy, sort, split, get, ...) are left out.
TENSORISH_METHODS = frozenset(
    {"sum", "mean", "max", "min", "amax", "amin", "any", "all", "abs", "norm", "std", "var",
     "prod", "argmax", "argmin", "float", "long", "half", "double", "bfloat16", "view",
     "reshape", "permute", "transpose", "unsqueeze", "squeeze", "flatten", "contiguous",
     "detach", "clone", "cpu", "cuda", "softmax", "log_softmax", "sigmoid", "tanh", "exp",
     "log", "sqrt", "rsqrt", "pow", "matmul", "masked_fill", "masked_fill_", "eq", "ne", "gt",
     "lt", "ge", "le", "isnan", "isinf", "isfinite", "expand", "expand_as", "view_as",
     "type_as", "new_zeros", "new_ones", "new_full", "new_empty", "cumsum", "cumprod",
     "clamp", "clamp_", "clip", "masked_select", "gather", "scatter", "scatter_add", "index_select",
     "topk", "sort", "argsort", "chunk", "unbind", "repeat", "roll", "flip", "tril", "triu",
     "logsumexp", "square", "neg", "sign", "round", "floor", "ceil", "trunc", "frac",
     "mul", "add", "sub", "div", "addmm", "bmm", "mm", "dot", "outer", "t", "narrow",
     "unfold", "softplus", "relu", "gelu", "nonzero", "item", "tolist", "bool", "to",
     "element_size", "numel", "dim", "size", "logical_not", "logical_and", "logical_or",
     "count_nonzero", "bincount", "isclose", "allclose", "equal", "nansum", "nanmean",
     "cummax", "cummin", "median", "mode", "kthvalue", "quantile", "diff", "float_power"}
)  # fmt: skip

# Methods of dicts, lists and strings that torch.Tensor does not have: a receiver typed as a likely
# tensor (a ``forward`` parameter, a module call's result) that is called with one is a Python
# container, so the result is not a tensor (``for k, v in outputs.items()`` yields string keys).
# ``values`` is left out: a sparse tensor has it.
PY_CONTAINER_METHODS = frozenset(
    {"items", "keys", "get", "setdefault", "popitem", "update", "append", "extend",
     "insert", "remove", "startswith", "endswith", "join", "lower", "upper", "strip", "format",
     "copy", "pop", "count", "clear", "reverse", "replace", "lstrip", "rstrip", "splitlines",
     "discard", "union", "intersection", "difference", "encode"}
)  # fmt: skip

# torch.* callables that do not return tensors.  Everything else under torch.* does.
NON_TENSOR_TORCH = frozenset(
    {"torch.is_tensor", "torch.is_storage", "torch.is_complex", "torch.is_floating_point",
     "torch.is_nonzero", "torch.is_grad_enabled", "torch.is_inference_mode_enabled",
     "torch.is_autocast_enabled", "torch.numel", "torch.get_default_dtype", "torch.device",
     "torch.dtype", "torch.Size", "torch.finfo", "torch.iinfo", "torch.manual_seed",
     "torch.seed", "torch.initial_seed", "torch.get_rng_state", "torch.set_rng_state",
     "torch.no_grad", "torch.enable_grad", "torch.set_grad_enabled", "torch.inference_mode",
     "torch.autocast", "torch.compile", "torch.cond", "torch.Generator", "torch.get_num_threads",
     "torch.set_num_threads", "torch.use_deterministic_algorithms", "torch.typename",
     "torch.result_type", "torch.promote_types", "torch.can_cast", "torch.set_printoptions",
     "torch.broadcast_shapes", "torch.sym_int", "torch.sym_float", "torch.sym_max",
     "torch.sym_min", "torch.sym_not", "torch.get_default_device", "torch.set_default_dtype",
     "torch.set_default_device", "torch.is_deterministic_algorithms_warn_only_enabled",
     "torch.are_deterministic_algorithms_enabled", "torch.load", "torch.save"}
)  # fmt: skip
NON_TENSOR_TORCH_PREFIXES = (
    "torch.cuda.", "torch.backends.", "torch.distributed.", "torch.compiler.", "torch._dynamo.",
    "torch.jit.", "torch.utils.data.", "torch.fx.", "torch.export.", "torch.library.",
    "torch.profiler.", "torch.autograd.profiler.", "torch.hub.", "torch.onnx.",
    "torch.testing.", "torch.overrides.", "torch.mps.", "torch.xpu.", "torch.accelerator.",
    "torch.amp.", "torch.cpu.", "torch.random.", "torch.multiprocessing.", "torch.package.",
    "torch._C.", "torch._logging.", "torch.optim.", "torch.nn.init.calculate_gain",
    "torch.nn.utils.", "torch.types.", "torch._guards.",
)  # fmt: skip
# torch.* results that *are* tensors inside those prefixes.
TENSOR_TORCH_EXCEPTIONS = frozenset(
    {"torch.autograd.grad", "torch.cuda.FloatTensor", "torch.utils.checkpoint.checkpoint",
     "torch.distributed.all_reduce", "torch.nn.utils.rnn.pad_sequence"}
)  # fmt: skip

INT_RESULT_TORCH = frozenset(
    {"torch.arange", "torch.randint", "torch.randperm", "torch.argmax", "torch.argmin",
     "torch.argsort", "torch.nonzero", "torch.bincount", "torch.searchsorted", "torch.bucketize",
     "torch.argwhere", "torch.count_nonzero", "torch.randint_like", "torch.tril_indices",
     "torch.triu_indices", "torch.cumsum_int"}
)  # fmt: skip
FLOAT_RESULT_TORCH = frozenset(
    {"torch.rand", "torch.randn", "torch.rand_like", "torch.randn_like", "torch.linspace",
     "torch.logspace", "torch.softmax", "torch.sigmoid", "torch.tanh", "torch.exp", "torch.log",
     "torch.mean", "torch.normal", "torch.sqrt", "torch.erf", "torch.nn.functional.softmax"}
)  # fmt: skip
BOOL_RESULT_TORCH = frozenset(
    {"torch.isnan", "torch.isinf", "torch.isfinite", "torch.any", "torch.all", "torch.eq",
     "torch.ne", "torch.gt", "torch.lt", "torch.ge", "torch.le", "torch.logical_and",
     "torch.logical_or", "torch.logical_not", "torch.isin", "torch.isclose", "torch.bernoulli_bool"}
)  # fmt: skip
DTYPE_NAMES = {
    "float": "float", "float16": "float", "float32": "float", "float64": "float", "half": "float",
    "double": "float", "bfloat16": "float", "long": "int", "int": "int", "int64": "int",
    "int32": "int", "int16": "int", "int8": "int", "uint8": "int", "short": "int", "bool": "bool",
    "complex64": "float", "complex128": "float", "float8_e4m3fn": "float", "float8_e5m2": "float",
}  # fmt: skip

# Annotations that mean "a tensor": torch.Tensor and the jaxtyping / torchtyping families.
TENSOR_ANNOTATIONS = frozenset(
    {"torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor",
     "torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.IntTensor",
     "torch.HalfTensor", "torch.DoubleTensor", "torch.ByteTensor", "Tensor", "torchtyping.TensorType"}
)  # fmt: skip
JAXTYPING_DTYPES = {
    "Float": "float", "Float32": "float", "Float64": "float", "Float16": "float", "BFloat16": "float",
    "Int": "int", "Int64": "int", "Int32": "int", "Int8": "int", "UInt8": "int", "Integer": "int",
    "Bool": "bool", "Shaped": None, "Num": None, "Real": None, "Inexact": "float", "Complex": "float",
}  # fmt: skip

# torch.nn module classes: calling one gives a tensor; constructing one is cheap and traceable.
TORCH_MODULE_PREFIX = "torch.nn."
MODULE_CONTAINERS = {
    "torch.nn.ModuleList": "list",
    "torch.nn.Sequential": "seq",
    "torch.nn.ModuleDict": "dict",
    "torch.nn.ParameterList": "params",
    "torch.nn.ParameterDict": "params",
}


# Wrappers whose forward runs the module they wrap: what `torch.compile(DDP(model))` traces is
# `model.forward` (inside the wrapper's), and `FSDP(model)` / `fully_shard(model)` stand for it.
MODULE_WRAPPERS = frozenset(
    {"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
     "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel",
     "torch.distributed.fsdp.FullyShardedDataParallel",
     "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
     "torch.distributed.fsdp.fully_shard", "torch.distributed._composable.fsdp.fully_shard",
     "torch.distributed._composable.fsdp.fully_shard.fully_shard"}
)  # fmt: skip


# torch functions / tensor methods that compare tensors' values and return a Python bool: the graph
# breaks at the call (GB0033, TC101); the bool it returns is then an ordinary Python value
TENSOR_COMPARE_TO_BOOL = frozenset({"equal", "allclose"})


def torch_call_result(qualified: str, dtype_kw: str | None = None) -> Ty:
    """The type of ``qualified(...)`` for a callable under ``torch``."""
    if qualified.startswith("torch.") and qualified[6:] in TENSOR_COMPARE_TO_BOOL:
        return T_BOOL
    if qualified in NON_TENSOR_TORCH:
        return Ty(
            SCALAR if qualified.startswith("torch.is_") else CONTAINER,
            HIGH,
            "bool" if ".is_" in qualified else None,
        )
    if qualified in TENSOR_TORCH_EXCEPTIONS:
        return T_TENSOR
    if qualified.startswith(NON_TENSOR_TORCH_PREFIXES):
        return Ty(UNKNOWN, LOW)
    last = qualified.rsplit(".", 1)[-1]
    if last[:1].isupper():
        # A class: torch.nn.Linear(...) builds a module, torch.Tensor(...) a tensor.
        if qualified.startswith(TORCH_MODULE_PREFIX) and qualified not in ("torch.nn.Parameter",):
            if qualified in MODULE_CONTAINERS:
                return Ty(MODLIST, HIGH, None, qualified)
            return Ty(MODULE, HIGH, None, qualified)
        if qualified in TENSOR_ANNOTATIONS or qualified == "torch.nn.Parameter":
            return Ty(TENSOR, HIGH, "float")
        return Ty(INSTANCE, HIGH, None, qualified)
    if dtype_kw is not None:
        return Ty(TENSOR, HIGH, DTYPE_NAMES.get(dtype_kw))
    if qualified in INT_RESULT_TORCH:
        return Ty(TENSOR, HIGH, "int")
    if qualified in BOOL_RESULT_TORCH:
        return T_BOOL_TENSOR
    if qualified in FLOAT_RESULT_TORCH:
        return Ty(TENSOR, HIGH, "float")
    return T_TENSOR


def tensor_method_result(method: str, receiver: Ty, dtype_kw: str | None = None) -> Ty:
    """The type of ``t.method(...)`` for a tensor ``t`` (or likely tensor)."""
    conf = receiver.conf
    if method in PY_CONTAINER_METHODS:
        return T_UNKNOWN  # not a tensor method: the receiver was a dict, list or str after all
    meta = TENSOR_META_METHODS.get(method)
    if meta is not None:
        if meta == SIZE:
            return Ty(SIZE, conf)
        return Ty(SCALAR, conf, meta)
    if method in TENSOR_COMPARE_TO_BOOL:
        return Ty(SCALAR, conf, "bool")
    if method == "item":
        # a data-dependent Python scalar: under capture_scalar_outputs, branching on it breaks
        return Ty(SCALAR, conf, "item")
    if method == "tolist":
        return Ty(CONTAINER, conf, "tolist")
    if method in ("to", "type") and dtype_kw is not None:
        return Ty(TENSOR, conf, DTYPE_NAMES.get(dtype_kw))
    if method in INT_RESULT_METHODS:
        return Ty(TENSOR, conf, "int")
    if method in BOOL_RESULT_METHODS:
        return Ty(TENSOR, conf, "bool")
    if method in FLOAT_RESULT_METHODS:
        return Ty(TENSOR, conf, "float")
    if method in ("split", "chunk", "unbind", "tensor_split"):
        return Ty(TLIST, conf, receiver.dtype)
    if method in ("topk", "sort", "max", "min", "median", "mode", "kthvalue", "cummax", "cummin"):
        # (values, indices) named tuples when a dim is given; a tensor otherwise.  Both index
        # and attribute access on the result stay tensors, so TENSOR is the useful answer.
        return Ty(TENSOR, conf, receiver.dtype)
    return Ty(TENSOR, conf, receiver.dtype)
