"""Worker side (stdlib + torch only): the calls a function-mode probe makes.

Two sources, in order (the parent has already decided which inputs files exist):

1. A declared input set in a probe-inputs file the user writes *outside* the target code.  It is
   plain Python (tclint need not be installed where it runs)::

       def make_Block():                 # the instance for `::Block` / `::Block.forward`
           return Block(dim=32)

       def inputs_Block():               # one item per call: the input matrix
           for batch in (2, 8):
               yield (torch.randn(batch, 16, 32),)
           yield {"args": (torch.randn(2, 16, 32),), "kwargs": {}, "mode": "eval", "label": "eval"}

   Target ``A.b`` looks for ``inputs_A__b`` (dots become ``__``).  ``inputs_*`` may take one
   parameter: the instance built by ``make_*`` (to size inputs after the model's config).

2. Inputs synthesised from the annotations: ``Tensor`` (shape ``(4, 8)``), jaxtyping
   ``Float[Tensor, "b 8"]`` (named dims get one size per name across all arguments), ``bool``
   (both values: the train/eval-style flag matrix), ``int`` / ``float`` (their default, else a
   small value), ``Literal["a", "b"]`` (every value), ``Optional[X]`` (as X); parameters with a
   default and no usable annotation keep their default.

When neither works, ``NeedInputs`` says exactly which parameter stopped synthesis.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import itertools
import os
import sys
import typing
from dataclasses import dataclass, field
from typing import Any

import torch

MAX_MATRIX = 16
PLAIN_TENSOR_SHAPE = (4, 8)
CALL_KEYS = {"args", "kwargs", "label", "mode"}
CALL_METHODS = ("forward", "__call__")  # calling the module is calling these

JAXTYPING_DTYPES = {
    "Float": torch.float32, "Float16": torch.float16, "Float32": torch.float32, "Float64": torch.float64,
    "BFloat16": torch.bfloat16, "Int": torch.int64, "Integer": torch.int64, "Int8": torch.int8,
    "Int16": torch.int16, "Int32": torch.int32, "Int64": torch.int64, "UInt8": torch.uint8,
    "UInt": torch.uint8, "Bool": torch.bool, "Complex": torch.complex64, "Complex64": torch.complex64,
    "Complex128": torch.complex128, "Shaped": torch.float32, "Num": torch.float32, "Real": torch.float32,
    "Inexact": torch.float32, "Key": torch.int64,
}  # fmt: skip
TENSOR_NAMES = {
    "Tensor",
    "torch.Tensor",
    "FloatTensor",
    "torch.FloatTensor",
    "Parameter",
    "nn.Parameter",
    "torch.nn.Parameter",
    "Array",
    "jaxtyping.Array",
}


class NeedInputs(Exception):
    """Synthesis is impossible: ``missing`` names the parameters (with why)."""

    def __init__(self, message: str, missing: list[str] | None = None) -> None:
        super().__init__(message)
        self.missing = missing or []


class InputsError(Exception):
    """The user's inputs file is wrong (raised, yields a bad item, ...)."""


@dataclass
class Call:
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    mode: str | None = None  # "train" / "eval" for module targets
    synthesised: dict[str, str] = field(default_factory=dict)  # parameter -> what was made up for it


def describe_value(value: Any) -> str:
    """``a float32 tensor of shape (4, 8)``, ``'mean' (its default)``: what a parameter was given."""
    if isinstance(value, torch.Tensor):
        return f"a {str(value.dtype).replace('torch.', '')} tensor of shape {tuple(value.shape)} on {value.device}"
    return repr(value)[:80]


# ---------------------------------------------------------------------------------------------
# declared inputs


def load_inputs_module(path: str) -> Any:
    name = "_tclint_probe_inputs_" + str(abs(hash(path)))
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputsError(f"{path}: cannot load the inputs file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        raise InputsError(f"{path}: the inputs file raised {type(exc).__name__}: {exc}") from exc
    return module


def function_key(qualname: str) -> str:
    return qualname.replace(".", "__")


def find_declared(paths: list[str], qualname: str) -> tuple[Any, Any, str] | None:
    """(make function or None, inputs function or None, file) from the first file defining either
    for this target (``make_<Class>`` serves every method of that class; ``inputs_<Class>``, the
    calls of the module, serves ``Class.forward`` and ``Class.__call__`` too)."""
    key = function_key(qualname)
    cls, _, method = qualname.partition(".")
    for path in paths:
        module = load_inputs_module(path)
        inputs_fn = getattr(module, f"inputs_{key}", None)
        if inputs_fn is None and method in CALL_METHODS:
            inputs_fn = getattr(module, f"inputs_{cls}", None)
        make_fn = getattr(module, f"make_{key}", None) or getattr(module, f"make_{cls}", None)
        if inputs_fn is not None or make_fn is not None:
            return make_fn, inputs_fn, path
    return None


def declared_calls(inputs_fn: Any, instance: Any, where: str) -> list[Call]:
    try:
        params = list(inspect.signature(inputs_fn).parameters)
    except (TypeError, ValueError):
        params = []
    try:
        produced = inputs_fn(instance) if params else inputs_fn()
        items = list(produced) if produced is not None else []
    except BaseException as exc:
        raise InputsError(f"{where}: `{inputs_fn.__name__}` raised {type(exc).__name__}: {exc}") from exc
    calls = []
    for i, item in enumerate(items):
        calls.append(to_call(item, f"{where}: item {i} of `{inputs_fn.__name__}`"))
        if not calls[-1].label:
            calls[-1].label = f"#{i}"
    if not calls:
        raise InputsError(f"{where}: `{inputs_fn.__name__}` yielded no calls")
    return calls


def to_call(item: Any, where: str) -> Call:
    if isinstance(item, Call):
        return item
    if isinstance(item, dict):
        unknown = set(item) - CALL_KEYS
        if unknown:
            raise InputsError(
                f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}; a call is a tuple of "
                "positional arguments or a dict with keys args, kwargs, label, mode"
            )
        args = item.get("args", ())
        if not isinstance(args, (tuple, list)):
            args = (args,)
        kwargs = item.get("kwargs") or {}
        if not isinstance(kwargs, dict):
            raise InputsError(f"{where}: `kwargs` must be a dict")
        mode = item.get("mode")
        if mode not in (None, "train", "eval"):
            raise InputsError(f"{where}: `mode` must be 'train' or 'eval', got {mode!r}")
        return Call(tuple(args), dict(kwargs), str(item.get("label") or ""), mode)
    if isinstance(item, (tuple, list)):
        return Call(tuple(item))
    return Call((item,))


# ---------------------------------------------------------------------------------------------
# synthesis from annotations


@dataclass
class Spec:
    kind: str  # tensor | bool | int | float | str | literal | none | default
    dims: list[Any] = field(default_factory=list)
    dtype: Any = None
    values: list[Any] = field(default_factory=list)


def _string_spec(text: str) -> Spec | None:
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    return _node_spec(node)


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _node_spec(node: ast.AST) -> Spec | None:
    name = _dotted(node)
    if name is not None:
        short = name.rsplit(".", 1)[-1]
        if name in TENSOR_NAMES or short in ("Tensor", "Parameter"):
            return Spec("tensor", list(PLAIN_TENSOR_SHAPE))
        if short in ("bool", "int", "float", "str"):
            return Spec(short)
        if short == "None":
            return Spec("none")
        return None
    if isinstance(node, ast.Constant) and node.value is None:
        return Spec("none")
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _string_spec(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([_node_spec(node.left), _node_spec(node.right)])
    if isinstance(node, ast.Subscript):
        head = (_dotted(node.value) or "").rsplit(".", 1)[-1]
        inner = node.slice
        elts = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
        if head in ("Optional", "Union"):
            return _union([_node_spec(e) for e in elts])
        if head == "Annotated":
            return _node_spec(elts[0])
        if head == "Literal":
            values = [e.value for e in elts if isinstance(e, ast.Constant)]
            return Spec("literal", values=values) if values else None
        if head in JAXTYPING_DTYPES and len(elts) == 2 and isinstance(elts[1], ast.Constant):
            return Spec("tensor", parse_dims(str(elts[1].value)), JAXTYPING_DTYPES[head])
    return None


def _union(specs: list[Spec | None]) -> Spec | None:
    real = [s for s in specs if s is not None and s.kind != "none"]
    return real[0] if real else None


def _object_spec(ann: Any) -> Spec | None:
    if isinstance(ann, str):
        return _string_spec(ann)
    if ann is None or ann is type(None):
        return Spec("none")
    if isinstance(ann, type) and issubclass(ann, torch.Tensor):
        return Spec("tensor", list(PLAIN_TENSOR_SHAPE))
    if ann in (bool, int, float, str):
        return Spec(ann.__name__)
    dim_str = getattr(ann, "dim_str", None)
    if isinstance(dim_str, str):  # a jaxtyping array type: Float[Tensor, "b 8"]
        dtype = torch.float32
        for d in getattr(ann, "dtypes", None) or []:
            if isinstance(d, str) and hasattr(torch, d) and isinstance(getattr(torch, d), torch.dtype):
                dtype = getattr(torch, d)
                if d == "float32":
                    break
        return Spec("tensor", parse_dims(dim_str), dtype)
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Literal:
        return Spec("literal", values=list(args))
    if origin is typing.Annotated:
        return _object_spec(args[0])
    if origin is typing.Union or type(ann).__name__ == "UnionType":
        return _union([_object_spec(a) for a in args])
    return None


def parse_dims(dim_str: str) -> list[Any]:
    """jaxtyping shape string -> a list of ints and names (names sized later, consistently)."""
    out: list[Any] = []
    for token in dim_str.split():
        if token == "...":
            continue
        token = token.lstrip("#?")
        if token.startswith("*"):
            out.append(("name", token.lstrip("*_") or "_variadic"))
            continue
        if "=" in token:
            token = token.split("=", 1)[1]
        token = token.lstrip("_") or "_"
        if token.isdigit():
            out.append(int(token))
        elif token.isidentifier():
            out.append(("name", token))
        else:
            out.append(("expr", token))
    return out


class Sizes:
    """One size per dimension name across all arguments of a call (4, 5, 6, ...: never 0/1, which
    Dynamo specialises, and all distinct so transposition bugs show)."""

    def __init__(self) -> None:
        self.named: dict[str, int] = {}

    def of(self, dim: Any) -> int:
        if isinstance(dim, int):
            return dim
        kind, text = dim
        if kind == "name":
            if text not in self.named:
                self.named[text] = 4 + len(self.named)
            return self.named[text]
        try:
            return int(eval(text, {"__builtins__": {}}, dict(self.named)))  # shape arithmetic
        except Exception:
            return 4


def _param_values(
    param: inspect.Parameter, spec: Spec | None, sizes: Sizes, device: str, gen: torch.Generator
) -> list[Any] | None:
    has_default = param.default is not inspect.Parameter.empty
    if spec is None or spec.kind == "none":
        return [param.default] if has_default else None
    if spec.kind == "tensor":
        shape = tuple(sizes.of(d) for d in spec.dims)
        dtype = spec.dtype or torch.float32
        if dtype.is_floating_point or dtype.is_complex:
            value = torch.randn(
                shape, generator=gen, dtype=dtype if dtype.is_floating_point else torch.float32
            )
            value = value.to(dtype)
        elif dtype == torch.bool:
            value = torch.randint(0, 2, shape, generator=gen).bool()
        else:
            value = torch.randint(0, 4, shape, generator=gen).to(dtype)
        return [value.to(device)]
    if spec.kind == "bool":
        return [False, True]
    if spec.kind == "literal":
        return list(spec.values)
    if has_default:
        return [param.default]
    defaults: dict[str, list[Any] | None] = {"int": [3], "float": [0.5], "str": None}
    return defaults.get(spec.kind)


def resolve_annotations(fn: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:
        return dict(getattr(fn, "__annotations__", {}) or {})


def synthesize(fn: Any, device: str, what: str) -> list[Call]:
    """Calls built from ``fn``'s annotations (``fn`` bound: ``self`` is not a parameter)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise NeedInputs(f"cannot read the signature of {what}: {exc}") from exc
    hints = resolve_annotations(fn)
    sizes = Sizes()
    gen = torch.Generator().manual_seed(0)
    names: list[str] = []
    choices: list[list[Any]] = []
    kinds: list[inspect._ParameterKind] = []
    missing: list[str] = []
    for name, param in sig.parameters.items():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        ann = hints.get(name, param.annotation)
        spec = None if ann is inspect.Parameter.empty else _object_spec(ann)
        values = _param_values(param, spec, sizes, device, gen)
        if values is None:
            why = (
                "no annotation"
                if ann is inspect.Parameter.empty
                else f"annotation `{_ann_text(ann)}` cannot be synthesised"
            )
            missing.append(f"{name} ({why}, no default)")
            continue
        names.append(name)
        choices.append(values)
        kinds.append(param.kind)
    if missing:
        raise NeedInputs(f"cannot synthesise inputs for {what}: " + "; ".join(missing), missing)
    calls = []
    for combo in itertools.islice(itertools.product(*choices), MAX_MATRIX):
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        label_parts = []
        made: dict[str, str] = {}
        for name, kind, value, options in zip(names, kinds, combo, choices, strict=False):
            if kind == inspect.Parameter.KEYWORD_ONLY:
                kwargs[name] = value
            else:
                args.append(value)
            if len(options) > 1:
                label_parts.append(f"{name}={value!r}")
            is_default = (
                sig.parameters[name].default is not inspect.Parameter.empty
                and sig.parameters[name].default is value
            )
            made[name] = describe_value(value) + (" (its default)" if is_default else "")
        calls.append(Call(tuple(args), kwargs, ", ".join(label_parts) or "synthesised", synthesised=made))
    return calls


def _ann_text(ann: Any) -> str:
    if isinstance(ann, str):
        return ann
    return getattr(ann, "__name__", None) or repr(ann)


def default_device(requested: str | None) -> str:
    if requested and requested != "auto":
        return requested
    return "cuda" if torch.cuda.is_available() else "cpu"


def instance_for(cls: type, make_fn: Any, where: str) -> Any:
    """The object a ``Class`` / ``Class.method`` target runs on."""
    if make_fn is not None:
        try:
            return make_fn()
        except BaseException as exc:
            raise InputsError(f"{where}: `{make_fn.__name__}` raised {type(exc).__name__}: {exc}") from exc
    try:
        sig = inspect.signature(cls)
        required = [
            p.name
            for p in sig.parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        ]
    except (TypeError, ValueError):
        required = []
    if required:
        raise NeedInputs(
            f"cannot build a `{cls.__name__}` instance: its constructor needs {', '.join(required)}",
            [f"make_{cls.__name__} (constructor needs {', '.join(required)})"],
        )
    try:
        return cls()
    except BaseException as exc:
        raise InputsError(f"`{cls.__name__}()` raised {type(exc).__name__}: {exc}") from exc


def existing(paths: list[str]) -> list[str]:
    return [p for p in paths if os.path.isfile(p)]
