"""What every job of the walk shares: the API tables it recognises, node helpers, and the state
``Analyzer.__init__`` sets up for the job mixins (``AnalyzerBase``)."""

from __future__ import annotations

import ast
import re
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tclint.rules import types as T
from tclint.rules.facts import FileFacts, Loc
from tclint.rules.names import AliasTable, dotted
from tclint.rules.nn_module_methods import SELF_RETURNING_METHODS
from tclint.rules.source import LineIndex
from tclint.rules.types import Ty

if TYPE_CHECKING:
    from tclint.rules.analysis.api import RuleContext, RuleSet, Scope
    from tclint.rules.facts import FunctionFacts, Param

COMPILE_FUNCS = frozenset({"torch.compile"})
OPTIMIZE_FUNCS = frozenset({"torch._dynamo.optimize"})
DISABLE_FUNCS = frozenset({"torch.compiler.disable"})
COMPILING_PREDICATES = frozenset({"torch.compiler.is_compiling"})
NOT_TRACED_PREDICATES = frozenset(
    {"torch.jit.is_scripting", "torch.jit.is_tracing", "torch._C._get_tracing_state"}
)
COMPILING_NAME = re.compile(r"(^|_)is_(torch)?(dynamo_)?compiling$|^is_torchdynamo_compiling$")
COLD_NAME = re.compile(r"debug|verbose|log|trace|profil|print|dump|visuali[sz]|plot|monitor", re.I)
MARKER = re.compile(r"#\s*tclint:\s*compiled\b")
NON_TENSOR_PARAM = re.compile(
    r"^(use|output|return|is|has|do|enable|disable|apply|skip|need|should|with|allow|keep|"
    r"interpolate|train|training|eval|inference|debug|verbose|compute|num|n|max|min)(_|$)|"
    r"(_flag|_mode|_config|config|cfg|cache|caches|cache_position|past_key_values?|kwargs|_kwargs|_fn|_func|"
    r"_name|_type|_idx|_index|_size|_len|_length|_dim|_steps?|_layers?)$|^(layer_idx|mode|name|dim|size|labels?_smoothing)$"
)
CLOCK_CALLS = frozenset(
    {"time.time", "time.perf_counter", "time.monotonic", "time.time_ns", "time.perf_counter_ns",
     "datetime.datetime.now", "uuid.uuid4", "random.random", "random.randint", "os.getpid"}
)  # fmt: skip
HOOK_METHODS = frozenset(
    {"register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
     "register_full_backward_pre_hook", "register_backward_hook"}
)  # fmt: skip
# Hooks that run inside the frame calling the module (measured: Dynamo traces them, a break in
# one is a graph break); backward hooks run in the backward pass, eagerly, and are not listed.
FORWARD_HOOK_METHODS = frozenset({"register_forward_hook", "register_forward_pre_hook"})
COMPILE_OPTION_KEYS = ("fullgraph", "dynamic", "backend", "mode", "options", "disable", "recompile_limit")


def chained_module_root(node: ast.expr) -> ast.expr:
    """``model.to(device).eval()``: the receiver that nn.Module methods returning ``self`` were
    chained on (``model``); ``node`` itself when it is no such call."""
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in SELF_RETURNING_METHODS
    ):
        node = node.func.value
    return node


def module_only_chain(node: ast.expr) -> bool:
    """A chain of self-returning calls holding one that only ``nn.Module`` has (``.eval()``,
    ``.train(b)``, ``.apply(fn)``, ``.to_empty(...)``; a tensor has ``.to()`` / ``.cuda()`` too)."""
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in SELF_RETURNING_METHODS
    ):
        if node.func.attr in ("eval", "train", "apply", "to_empty"):
            return True
        node = node.func.value
    return False


def node_loc(node: ast.AST, index: LineIndex) -> Loc:
    line = getattr(node, "lineno", 1)
    end_line = getattr(node, "end_lineno", None) or line
    col = index.char_col(line, getattr(node, "col_offset", 0))
    end_col = index.char_col(end_line, getattr(node, "end_col_offset", None) or 0)
    return Loc(line, col, end_line, end_col)


def literal(node: ast.expr | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return UNEVALUABLE


class _UnevaluableType:
    def __repr__(self) -> str:
        return "<expr>"


UNEVALUABLE = _UnevaluableType()


def dtype_of(node: ast.expr) -> str | None:
    text = dotted(node)
    if text is None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return T.DTYPE_NAMES.get(node.value)
        return None
    return T.DTYPE_NAMES.get(text.rsplit(".", 1)[-1])


def kw_bool(node: ast.Call | None, name: str, default: bool) -> bool:
    if node is None:
        return default
    for kw in node.keywords:
        if kw.arg == name:
            value = literal(kw.value)
            return bool(value) if isinstance(value, bool) else default
    return default


# Modules that are never part of the linted project: calls into them get no call edge.
_NEVER_PROJECT_ROOTS = frozenset(
    {"numpy", "np", "math", "os", "sys", "re", "json", "time", "random", "logging", "warnings",
     "functools", "itertools", "collections", "typing", "dataclasses", "copy", "pickle",
     "builtins", "abc", "contextlib", "enum", "inspect", "pathlib", "einops", "scipy", "sklearn",
     "pdb", "traceback", "tqdm", "operator", "string", "io", "shutil", "subprocess",
     "threading", "multiprocessing", "datetime", "uuid", "struct", "ctypes", "types", "weakref",
     "pandas", "PIL", "cv2", "yaml", "argparse", "typing_extensions", "importlib", "textwrap"}
)  # fmt: skip
# Third-party ML libraries: usually not the project, but they may be (linting transformers
# itself), so calls into them keep their edges and the project pass decides; they are never
# treated as the user's own context managers.
_LIBRARY_ROOTS = _NEVER_PROJECT_ROOTS | frozenset(
    {"transformers", "triton", "torchvision", "torchaudio", "safetensors", "huggingface_hub",
     "accelerate", "deepspeed", "apex", "xformers", "flash_attn", "timm", "lightning",
     "pytorch_lightning", "hydra", "omegaconf", "wandb", "tensorboard", "diffusers", "peft"}
)  # fmt: skip


def is_external(q: str) -> bool:
    """Never project code: no call edge."""
    return q.split(".", 1)[0] in _NEVER_PROJECT_ROOTS


def is_library(q: str) -> bool:
    """Probably someone else's code (but it could be the project being linted)."""
    return q.split(".", 1)[0] in _LIBRARY_ROOTS


_HOLDS_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)


def walk_statements(root: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk(root)`` without the expressions (which hold no statement): the statements under
    ``root`` (and it), with the except handlers and match cases between, in ``ast.walk``'s order
    (breadth first, same depths), for a pass that only looks at statements."""
    todo = deque([root])
    while todo:
        node = todo.popleft()
        todo.extend(c for c in ast.iter_child_nodes(node) if isinstance(c, _HOLDS_STATEMENTS))
        yield node


class AnalyzerBase:
    """The state of one file's walk, shared by the job mixins (set by ``Analyzer.__init__``).

    Under ``TYPE_CHECKING`` it also lists the methods one job calls on another, so that each
    mixin type-checks on its own and the coupling between the jobs is written down in one place.
    """

    text: str
    path: str
    module: str
    is_package: bool
    index: LineIndex
    ruleset: RuleSet
    facts: FileFacts
    module_aliases: AliasTable
    module_scope: Scope
    scope: Scope
    ctx: RuleContext
    extra_predicates: frozenset[str]
    marker_lines: set[int]
    _types: dict[int, Ty]
    _site_counter: int
    _alone: list[bool]
    _attr_stores: set[str]  # local names with attributes assigned (`holder.fn = ...`)
    _setters: dict[str, dict[str, dict[str, str]]]  # class qualname -> submodules.setter_params
    _records: dict[str, tuple[str, ...]]  # named tuples defined in the file: name -> fields
    _late_globals: set[str]  # module-level names bound to a call's result (Analyzer._prebind)

    if TYPE_CHECKING:

        def segment(self, node: ast.AST) -> str: ...
        # types_infer.TypeInference
        def qualify(self, node: ast.expr) -> str | None: ...
        def type_of(self, node: ast.expr) -> Ty: ...
        def _eval_type(self, node: ast.expr) -> Ty: ...
        def _name_type(self, name: str) -> Ty: ...
        def _self_attr_type(self, path: str) -> Ty: ...
        def _class_ref(self, cls: Any) -> str: ...
        def _annotation_type(self, ann: ast.expr | None) -> tuple[Ty, str | None]: ...
        def _iter_element(self, iter_node: ast.expr, it: Ty) -> Ty: ...
        # callgraph.CallGraph
        def _call(self, node: ast.Call) -> None: ...
        def _attribute_read(self, node: ast.Attribute) -> None: ...
        def _compile_options(self, node: ast.Call | None, base_q: str | None = None) -> dict[str, Any]: ...
        def _describe_target(self, target: ast.expr) -> tuple[str, str | None, str | None]: ...
        def _decorator(self, dec: ast.expr, facts: FunctionFacts, node: ast.AST) -> str | None: ...
        def _check_wrapper_return(self, node: ast.Return) -> None: ...
        def _short(self, node: ast.AST) -> str: ...
        # walker.Walker
        def expr(self, node: ast.expr | None) -> Ty: ...
        def _dispatch(self, node: ast.AST) -> None: ...
        def _note_param_use(self, node: ast.expr, use: str) -> None: ...
        def _predicate_parts(self, value: ast.expr) -> tuple[bool, tuple[str, ...]]: ...
        def _config_call(self, node: ast.Call) -> None: ...
        def _push_function_scope(
            self, facts: FunctionFacts | None, args: ast.arguments, is_method: bool
        ) -> Scope: ...
        def _pop_scope(self, scope: Scope) -> None: ...
        def _param(self, arg: ast.arg, default: ast.expr | None, kind: str, is_forward: bool) -> Param: ...
