"""The eager-side context of every call in a file: what the variant analysis (issue 13) needs to
know about a call besides its arguments.

One pure pass over the module's AST, separate from the main walk: for each call it records the
global state Dynamo guards on that the surrounding code sets (grad mode from ``with
torch.no_grad()`` / ``inference_mode`` / ``enable_grad`` blocks and decorators, ``autocast``
blocks), which of its arguments come from a ``DataLoader`` that keeps its smaller last batch
(``drop_last`` not ``True``), which arguments are a choice between two constants (``"a" if c
else "b"``), and which classes read ``self.training`` (a module whose graph depends on train/eval).  Only calls with something to say are recorded, keyed ``"line:col"`` like
``CallEdge.loc``, so the project pass can join them with the resolved call edges.
"""

from __future__ import annotations

import ast
import bisect
import re

from tclint.rules.analysis.common import walk_statements
from tclint.rules.facts import VariantFacts

GRAD_CONTEXTS = {
    "no_grad": "no_grad",
    "inference_mode": "inference_mode",
    "enable_grad": "grad",
    "set_grad_enabled": "set_grad_enabled",
}
AUTOCAST = ("autocast",)
WALK_WORDS = (
    "no_grad",
    "inference_mode",
    "enable_grad",
    "set_grad_enabled",
    "autocast",
    "DataLoader",
    "requires_grad",
    ".half()",
    ".double()",
    ".bfloat16()",
    "float16",
    "float64",
    ".cuda(",
    "register_buffer",
    "global ",
    "torch.compile(",
    "torch.cat(",
    "unsqueeze(0)",
    "[None",
    "view(1,",
    "reshape(1,",
    ".train(",
    ".eval()",
)  # the full pass
CALL_CONTEXT_WORDS = (
    *WALK_WORDS,
    ".training",
    " else ",
)  # files worth a look at all (`a if c else b` choices)
# in-place tensor methods that copy their argument into the receiver (and its requires_grad with it)
INPLACE_WRITES = frozenset(
    (
        "copy_",
        "index_copy_",
        "index_put_",
        "scatter_",
        "masked_scatter_",
        "add_",
        "sub_",
        "mul_",
        "lerp_",
        "index_add_",
        "scatter_add_",
        "masked_fill_",
    )
)
CAST_METHODS = {
    "half": "dtype:float16",
    "double": "dtype:float64",
    "bfloat16": "dtype:bfloat16",
    "float": "dtype:float32",
    "cuda": "device:cuda",
    "cpu": "device:cpu",
}
TRAINING_SENSITIVE = ("Dropout", "BatchNorm", "InstanceNorm", "AlphaDropout", "SyncBatchNorm")


def _tail(node: ast.expr) -> str | None:
    """The last name of a callee: ``torch.no_grad`` -> ``no_grad``, ``amp.autocast`` -> ``autocast``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _context_tag(expr: ast.expr, _pos) -> str | None:  # type: ignore[no-untyped-def]
    """``grad:<mode>@<pos>`` / ``autocast:<dtype>@<pos>`` for a with-item or decorator, else None
    (``_pos(node)`` gives ``line:col:end_line:end_col``)."""
    tail = _tail(expr)
    if tail in GRAD_CONTEXTS:
        mode = GRAD_CONTEXTS[tail]
        if tail == "set_grad_enabled" and isinstance(expr, ast.Call) and expr.args:
            arg = expr.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, bool):
                mode = "grad" if arg.value else "no_grad"
            else:
                mode = "grad|no_grad"
        if tail == "inference_mode" and isinstance(expr, ast.Call) and expr.args:
            arg = expr.args[0]
            if isinstance(arg, ast.Constant) and arg.value is False:
                return None
        return f"grad:{mode}@{_pos(expr)}"
    if tail in AUTOCAST or (tail or "").endswith("autocast"):
        dtype = "default"
        if isinstance(expr, ast.Call):
            for kw in expr.keywords:
                if kw.arg == "dtype":
                    dtype = ast.unparse(kw.value).rsplit(".", 1)[-1]
                if kw.arg == "enabled" and isinstance(kw.value, ast.Constant) and kw.value.value is False:
                    return None
        return f"autocast:{dtype}@{_pos(expr)}"
    return None


def _keeps_last_batch(call: ast.Call) -> bool:
    """A ``DataLoader(...)`` whose last batch may be smaller: ``drop_last`` not given as ``True``,
    and a ``batch_size`` that is not ``None`` (``batch_size=None`` yields unbatched samples)."""
    for kw in call.keywords:
        if kw.arg == "drop_last":
            return not (isinstance(kw.value, ast.Constant) and kw.value.value is True)
        if kw.arg == "batch_sampler":
            return False
        if kw.arg == "batch_size" and isinstance(kw.value, ast.Constant) and kw.value.value is None:
            return False
    return True


def _names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _names(elt)]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return []


# torch factories and the arguments that give the size of what they make
_FACTORIES = frozenset(("randn", "rand", "zeros", "ones", "empty", "full", "randint", "arange", "randperm"))


def _factory_sizes(call: ast.Call) -> list[ast.expr]:
    """The size arguments of a ``torch.<factory>(...)`` call (``randint(low, high, size)``: the
    size; ``full(size, v)``: the size; ``arange``: every bound), else []."""
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr in _FACTORIES
        and isinstance(func.value, ast.Name)
        and func.value.id == "torch"
    ):
        return []
    kws = [kw.value for kw in call.keywords if kw.arg in ("size", "end", "start", "n")]
    if func.attr == "randint":
        return [*call.args[2:3], *kws] if len(call.args) >= 2 else [*call.args[1:2], *kws]
    if func.attr == "full":
        return [*call.args[:1], *kws]
    return [*call.args, *kws]


_FROM_DATA = frozenset(("tensor", "as_tensor", "stack", "pad_sequence"))
_DATA_SIZES = frozenset(("len", "max", "min"))


def _data_sized(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A function that builds a tensor whose size comes from its data (``torch.tensor(rows)``,
    ``torch.zeros(len(reqs), n)`` after ``n = max(len(r) for r in reqs)``, ``pad_sequence(seqs)``):
    called with other data per loop iteration, it returns other sizes."""
    from_len: set[str] = set()
    for node in _walk_here(fn):
        if isinstance(node, ast.Assign) and any(
            isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in _DATA_SIZES
            for c in ast.walk(node.value)
        ):
            from_len.update(n for t in node.targets for n in _names(t))
    for node in _walk_here(fn):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if name in _FROM_DATA and node.args and isinstance(node.args[0], (ast.ListComp, ast.Name, ast.List)):
            return True
        for arg in _factory_sizes(node):
            for sub in ast.walk(arg):
                if isinstance(sub, ast.Name) and sub.id in from_len:
                    return True
                if (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Name)
                    and sub.func.id in _DATA_SIZES
                ):
                    return True
    return False


def _grows(node: ast.Assign) -> bool:
    """``x = torch.cat([x, y], ...)`` (or ``torch.cat((x, y))``, ``torch.concat``): ``x`` grows."""
    value = node.value
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return False
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in ("cat", "concat", "concatenate")
        and value.args
        and isinstance(value.args[0], (ast.List, ast.Tuple))
    ):
        return False
    name = node.targets[0].id
    return any(isinstance(e, ast.Name) and e.id == name for e in value.args[0].elts)


def _walk_here(root: ast.AST):  # type: ignore[no-untyped-def]
    """The nodes of a statement or expression that run where it is, not descending into nested
    functions, classes or lambdas."""
    stack: list[ast.AST] = [root]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def _root_name(expr: ast.expr) -> str | None:
    """``x`` for ``x``, ``x["img"]``, ``x.img``, ``x[0].to(dev)``."""
    while True:
        if isinstance(expr, ast.Name):
            return expr.id
        if isinstance(expr, (ast.Subscript, ast.Attribute)):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _CASTS:
            expr = expr.func.value
        else:
            return None


def _cast_tag(expr: ast.expr) -> str | None:
    """``dtype:<d>`` / ``device:<d>`` / ``requires_grad`` for an argument written as a cast of a
    tensor (``x.half()``, ``x.to(torch.bfloat16)``, ``x.to("cuda")``, ``x.detach().requires_grad_()``,
    ``torch.randn(..., requires_grad=True)``); None when it says nothing about them."""
    if not isinstance(expr, ast.Call) or not isinstance(expr.func, ast.Attribute):
        return None
    attr = expr.func.attr
    if attr in CAST_METHODS and not expr.args:
        return CAST_METHODS[attr]
    if attr == "requires_grad_":
        if expr.args and isinstance(expr.args[0], ast.Constant) and expr.args[0].value is False:
            return None
        return "requires_grad"
    if any(
        kw.arg == "requires_grad" and isinstance(kw.value, ast.Constant) and kw.value.value is True
        for kw in expr.keywords
    ):
        return "requires_grad"
    if attr in ("to", "type"):
        for arg in [*expr.args, *(kw.value for kw in expr.keywords if kw.arg in ("dtype", "device"))]:
            if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "torch":
                return f"dtype:{arg.attr}"
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                return f"device:{arg.value.split(':', 1)[0]}"
    return None


_CASTS = ("to", "cuda", "float", "half", "contiguous")  # methods that keep a tensor's size


def _through_casts(expr: ast.expr) -> ast.expr:
    """``x`` of ``x.to(device)`` / ``x.cuda()`` / ``x.float()`` ... (any chain of them): a cast
    keeps the tensor's size."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _CASTS:
        expr = expr.func.value
    return expr


def _one_sample(expr: ast.expr) -> str | None:
    """``single:1`` for an argument written as one sample made a batch of one (``x.unsqueeze(0)``,
    ``x[None]``, ``x[None, ...]``, ``x.view(1, ...)`` / ``reshape(1, ...)``, through ``.to(...)``):
    Dynamo specialises a size of 1, so it compiles a graph of its own next to batched calls
    (measured, torch 2.13: a serving call after batched scoring recompiles)."""
    expr = _through_casts(expr)
    if isinstance(expr, ast.Subscript):
        first = expr.slice.elts[0] if isinstance(expr.slice, ast.Tuple) and expr.slice.elts else expr.slice
        return "single:1" if isinstance(first, ast.Constant) and first.value is None else None
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)):
        return None
    args = [*expr.args, *(kw.value for kw in expr.keywords if kw.arg == "dim")]
    one = bool(args) and isinstance(args[0], ast.Constant) and args[0].value in (0, 1)
    if expr.func.attr == "unsqueeze" and one and args[0].value == 0:  # type: ignore[attr-defined]
        return "single:1"
    if expr.func.attr in ("view", "reshape") and len(expr.args) >= 2 and one and args[0].value == 1:  # type: ignore[attr-defined]
        return "single:1"
    return None


def _sliced(expr: ast.expr) -> str | None:
    """``sliced:<slice text>`` for an argument written as a bounded slice (``labels[:2]``,
    ``x[:, :3]``, through ``.to(...)``): it has another size than the tensor passed whole."""
    expr = _through_casts(expr)
    if not isinstance(expr, ast.Subscript):
        return None
    parts = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
    if any(isinstance(p, ast.Slice) and (p.lower is not None or p.upper is not None) for p in parts):
        return f"sliced:{ast.unparse(expr.slice)[:40]}"
    return None


def _mentions(expr: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(expr))


def _parameters_of(value: ast.expr) -> ast.expr | None:
    """The module of ``m.parameters()`` / ``m.named_parameters()``, also as ``list(...)`` or
    ``tuple(...)`` of it (a list of parameters kept to freeze later), else None."""
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("list", "tuple")
        and len(value.args) == 1
    ):
        value = value.args[0]
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in ("parameters", "named_parameters")
    ):
        return value.func.value
    return None


def _flag(value: ast.expr) -> str:
    """``True`` / ``False`` for a constant flag, ``?`` for one computed at run time."""
    if isinstance(value, ast.Constant) and isinstance(value.value, bool):
        return str(value.value)
    return "?"


def _strided_slice(expr: ast.expr, strided: set[str]) -> bool:
    """``data[i:i + bs]`` (through ``.to(...)``) for ``i`` of a ``range(a, n, bs)`` loop: the
    last slice is shorter unless ``bs`` divides ``n``."""
    expr = _through_casts(expr)
    if not isinstance(expr, ast.Subscript):
        return False
    sl = expr.slice.elts[0] if isinstance(expr.slice, ast.Tuple) and expr.slice.elts else expr.slice
    return (
        isinstance(sl, ast.Slice)
        and isinstance(sl.lower, ast.Name)
        and sl.lower.id in strided
        and isinstance(sl.upper, ast.BinOp)
        and isinstance(sl.upper.op, ast.Add)
        and any(isinstance(n, ast.Name) and n.id == sl.lower.id for n in (sl.upper.left, sl.upper.right))
    )


def _iterated(it: ast.expr, names: set[str]) -> set[str]:
    """The parameters a loop over ``it`` takes its count from: a bare parameter (``for n in
    names``) or one inside ``range(...)`` / ``enumerate(...)`` / ``zip(...)``; not a subscript or
    attribute of one (``for k in batch[0]``: a collate function keeps its input's keys)."""
    if isinstance(it, ast.Name):
        return {it.id} & names
    if isinstance(it, ast.Call) and _tail(it.func) in ("range", "enumerate", "zip"):
        ranged = _tail(it.func) == "range"
        return {
            n.id
            for a in it.args
            for n in ast.walk(a)
            if isinstance(n, ast.Name) and n.id in names and (a is n or ranged)
        }
    return set()


def _note_build(
    node: ast.AST, over: set[str], names: set[str], built: dict[str, tuple[str, set[str]]]
) -> None:
    """``d[<key from a parameter>] = ...`` (or any store under a loop / ``if`` over ``over``, the
    parameters their headers mention) -> ``d`` has keys from them; ``out.append(...)`` under such a
    loop -> ``out`` has a length from them."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            key_params = {n.id for n in ast.walk(target.slice) if isinstance(n, ast.Name) and n.id in names}
            if key_params | over:
                built.setdefault(target.value.id, ("keys", set()))[1].update(key_params | over)
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "append"
        and isinstance(node.func.value, ast.Name)
        and over
    ):
        built.setdefault(node.func.value.id, ("length", set()))[1].update(over)


def _shaped(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, tuple[str, ...], frozenset[str]] | None:
    """``(how, positional parameters, shaping parameters)`` for a function returning a container
    whose structure follows its arguments: a dict whose keys come from a parameter (``{n: ... for
    n in names}``, ``d[name] = ...``, a key stored under ``if <parameter ...>:``) -> ``"keys"``; a
    list whose length does (``[f(i) for i in range(n)]``, appends in ``for k in range(n)``) ->
    ``"length"``.  Dynamo guards a dict's keys and a list's length exactly: each new one compiles
    (measured, torch 2.13: ``len(feats) != 2``, ``crops`` changed length).  Only a function whose
    last statement returns such a container (a name or a comprehension) is looked into."""
    last = fn.body[-1]
    if not (isinstance(last, ast.Return) and isinstance(last.value, (ast.Name, ast.DictComp, ast.ListComp))):
        return None
    params = tuple(a.arg for a in [*fn.args.posonlyargs, *fn.args.args])
    names = set(params) | {a.arg for a in fn.args.kwonlyargs}
    if not names:
        return None
    built: dict[str, tuple[str, set[str]]] = {}  # container name -> (how, shaping params)
    returns: list[ast.expr] = []
    stack: list[tuple[ast.AST, set[str]]] = [(s, set()) for s in fn.body]
    while stack:  # each node with the parameters its enclosing `for` / `if` headers mention
        node, over = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            returns.append(node.value)
        inner = over
        if isinstance(node, (ast.For, ast.AsyncFor)):
            inner = over | _iterated(node.iter, names)
        elif isinstance(node, ast.If):
            inner = over | {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name) and n.id in names}
        _note_build(node, over, names, built)
        for child in ast.iter_child_nodes(node):
            stack.append((child, inner))
    for value in returns:
        if isinstance(value, (ast.DictComp, ast.ListComp)):
            shaping = {n for g in value.generators for n in _iterated(g.iter, names)}
            if shaping:
                return ("keys" if isinstance(value, ast.DictComp) else "length", params, frozenset(shaping))
        if isinstance(value, ast.Name) and value.id in built:
            how, shaping = built[value.id]
            return how, params, frozenset(shaping)
    return None


def _value_kind(value: ast.expr, ints: set[str]) -> str:
    """What a global is rebound to: ``const:<repr>``, ``bool``, ``int``, ``float``, ``str`` or
    ``unknown`` (``ints``: names known to hold ints here, e.g. ``range`` loop variables)."""
    if isinstance(value, ast.Constant):
        return f"const:{repr(value.value)[:40]}"
    if (
        isinstance(value, (ast.Compare, ast.BoolOp))
        or isinstance(value, ast.UnaryOp)
        and isinstance(value.op, ast.Not)
    ):
        return "bool"
    if isinstance(value, ast.JoinedStr):
        return "str"
    if isinstance(value, ast.Name):
        return "int" if value.id in ints else "unknown"
    if isinstance(value, ast.Call):
        tail = _tail(value.func)
        return {
            "len": "int",
            "int": "int",
            "round": "int",
            "float": "float",
            "time": "float",
            "perf_counter": "float",
            "monotonic": "float",
            "random": "float",
            "uniform": "float",
            "randint": "int",
            "str": "str",
        }.get(tail or "", "unknown")
    if isinstance(value, ast.BinOp):
        parts = list(ast.walk(value))
        if any(isinstance(n, ast.Div) for n in parts) or any(
            isinstance(n, ast.Constant) and isinstance(n.value, float) for n in parts
        ):
            return "float"
        if any(isinstance(n, ast.Name) and n.id in ints for n in parts) or any(
            isinstance(n, ast.Constant) and type(n.value) is int for n in parts
        ):
            return "int"
    return "unknown"


def _self_attr(expr: ast.expr) -> str | None:
    """``b`` for ``self.b``."""
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        return expr.attr
    return None


def _carries_grad(expr: ast.expr) -> bool:
    """Whether a value written into a buffer comes out of a submodule call (``self.kv(x)``), so it
    requires grad in grad mode; a ``.detach()`` anywhere on it says it does not."""
    found = False
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("detach", "detach_"):
                return False
            if _self_attr(node.func) is not None:
                found = True
    return found


def _module_dicts(tree: ast.Module) -> list[str]:
    """Module-level names bound to a dict literal (flag dicts: ``FLAGS = {"fast": False}``)."""
    out: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Dict):
            out.extend(t.id for t in stmt.targets if isinstance(t, ast.Name))
    return out


# what makes a line worth scanning outside grad/autocast blocks: a `a if c else b` choice (an
# `else` that does not open a block), a cast, a buffer, a compile, a read of `.training` (and, added
# per file, the names of rebound globals); plain substring searches, no regex over the whole text
_LINE_WORDS = (
    "else",
    ".half(",
    ".double(",
    ".bfloat16(",
    ".float(",
    ".to(",
    ".type(",
    ".cuda(",
    ".cpu(",
    "requires_grad",
    "register_buffer",
    "compile(",
    ".training",
    "unsqueeze(0)",
    "[None",
    "view(1,",
    "reshape(1,",
    "[:",
    ":]",
)
_GLOBAL_DECL = re.compile(r"^[ \t]*global[ \t]+([\w \t,]+)$", re.M)


def _interesting_lines(text: str, names: set[str], words: tuple[str, ...] = _LINE_WORDS) -> list[int]:
    """The sorted 1-based numbers of the lines the expression scan must look at (a superset: a
    name found inside a longer word only costs a scan)."""
    starts = None
    hits: set[int] = set()
    for word in (*words, *names):
        at = text.find(word)
        if at < 0:
            continue
        if starts is None:
            starts = [0] + [m.end() for m in re.finditer("\n", text)]
        while at >= 0:
            after = at + len(word)
            if word != "else" or text[after : after + 8].lstrip(" \t")[:1] != ":":
                hits.add(bisect.bisect_right(starts, at))
            at = text.find(word, after)
    return sorted(hits)


def _rebound_names(tree: ast.Module, text: str, flags: list[str]) -> set[str]:
    """Names a function declares ``global``, flag dicts, and names assigned in module-level loops:
    the only globals whose reads the pass records."""
    names = (
        {n.strip() for m in _GLOBAL_DECL.finditer(text) for n in m.group(1).split(",") if n.strip()}
        if "global" in text
        else set()
    )
    names.update(flags)
    for stmt in tree.body:
        if isinstance(stmt, (ast.For, ast.While)):
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
    return names


class _Pass:
    """Statements are walked one by one (they carry the with-contexts, loops and scopes);
    the expressions inside a statement are scanned flat with ``ast.walk``."""

    def __init__(self, char_col, lines: list[int] | None = None, globals_: set[str] | None = None) -> None:  # type: ignore[no-untyped-def]
        self.char_col = char_col
        self.lines = lines  # None: scan every expression
        self.globals = globals_ or set()
        self.facts = VariantFacts()
        self.ctx: list[str] = []
        self.loaders: list[dict[str, str]] = [{}]  # per function scope: loader name -> DataLoader position
        self.batches: list[dict[str, str]] = [{}]  # per function scope: batch name -> DataLoader position
        # per function scope: name -> "<pos>|grows" / "<pos>|varies" (a tensor whose size changes
        # between iterations of an enclosing loop: _sized_value)
        self.sized: list[dict[str, str]] = [{}]
        self.size_bound: list[set[str]] = []  # per enclosing loop of this scope: the names it binds
        self.varying_gens: set[str] = (
            set()
        )  # module functions yielding such tensors (`def loader(): ... yield`)
        # module functions seen so far, by name (each definition of it), and whether one returns a
        # tensor sized by its data (``_data_sized``: worked out when a call in a loop asks, not
        # for every function: most are never asked about)
        self.module_defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self.sized_memo: dict[tuple[str, int], bool] = {}
        # module functions returning a dict / list shaped by their arguments (_shaped)
        self.shaped: dict[str, tuple[str, tuple[str, ...], frozenset[str]]] = {}
        # loop variables over `<module>.parameters()` here -> the module (``_Pass.receiver``)
        self.param_vars: dict[str, str] = {}
        self.param_depth: dict[str, int] = {}  # such a variable -> how many loops hold its loop
        # (function qualname or "", name) -> the module of `name = list(<module>.parameters())`
        self.param_lists: dict[tuple[str, str], str] = {}
        self.const_lists: dict[str, tuple[str, ...]] = {}  # module-level `TASKS = ("a", "b")`
        # (function qualname or "", name) bound to a list of tensors of different literal shapes
        self.shaped_lists: set[tuple[str, str]] = set()
        # (function qualname or "", loop variable) -> the constants a `for task in TASKS:` loop binds
        self.const_loops: dict[tuple[str, str], tuple[str, ...]] = {}
        # (function qualname or "", name) -> the position of the last call assigned to the name there
        # (``model = Net()``): what the variant analysis types a frozen module's name by
        self.origins: dict[tuple[str, str], str] = {}
        self.strided: set[str] = set()  # `range(a, b, step)` loop variables here (x[i:i + step])
        self.param_grads: list[str] = []
        self.cls: list[str] = []
        self.training_readers: set[str] = set()
        self.marks: list[dict[str, str]] = [{}]  # per function scope: name -> cast tag of the tensor it holds
        self.funcs: list[str] = []  # qualnames of the enclosing functions
        self.declared: list[set[str]] = [set()]  # per function scope: names declared `global`
        self.ints: list[set[str]] = [set()]  # per function scope: `range` loop variables
        self.loop_names: list[set[str]] = []  # names bound in each enclosing loop of the current scope
        self.flag_dicts: set[str] = set()  # module-level dict names (flags read by name, written by item)
        self.reads: dict[str, set[str]] = {}  # function qualname -> global names loaded
        self.writes: list[str] = []
        self.buffers: dict[str, set[str]] = {}  # class qualname -> registered buffer names
        self.buffer_writes: list[tuple[str, str, str]] = []  # (class, attr, pos)
        self.fresh: list[str] = []
        # the enclosing `for`/`while` statements of the current scope (what they bind is computed
        # only for a torch.compile call in one: _stored_paths)
        self.loop_stores: list[ast.For | ast.AsyncFor | ast.While] = []
        self.rewraps: list[str] = []
        # per function scope: call (lineno, col_offset) -> the mode statements that may have run
        # last on each receiver (_ModeFlow; empty in a scope without one)
        self.modes_at: list[dict[tuple[int, int], ModeState]] = [{}]
        self.mode_funcs: set[str] = set()  # names of the file's functions holding a mode statement
        self.mode_lines: list[int] = []  # the lines mentioning `.train(` / `.eval()` (sorted)

    def mode_flow(self, body: list[ast.stmt]) -> dict[tuple[int, int], ModeState]:
        """The train/eval state at each call of a scope's body (empty: no mode statement in it;
        only bodies spanning a line that mentions ``.train(`` / ``.eval()`` are looked into)."""
        if not self.sets_modes(body):
            return {}
        flow = _ModeFlow(self.pos, self.mode_funcs)
        flow.block(body, {})
        return flow.at

    def sets_modes(self, body: list[ast.stmt]) -> bool:
        """Whether a body holds a ``.train()`` / ``.eval()`` statement of its own (looked for only
        when one of its lines mentions one: ``mode_lines``)."""
        lines = self.mode_lines
        if not lines or not body:
            return False
        i = bisect.bisect_left(lines, body[0].lineno)
        return i < len(lines) and lines[i] <= (body[-1].end_lineno or 0) and _has_setter(body)

    def pos(self, node: ast.AST) -> str:
        """``line:col:end_line:end_col`` of a node, in the character columns of ``node_loc``."""
        line, end = node.lineno, node.end_lineno  # type: ignore[attr-defined]
        return (
            f"{line}:{self.char_col(line, node.col_offset)}:{end}:{self.char_col(end, node.end_col_offset)}"  # type: ignore[attr-defined]
        )

    # statements
    def body(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            self.stmt(stmt)

    def stmt(self, node: ast.stmt) -> None:  # noqa: C901 - one branch per statement kind
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                self.scan(dec)
            self.scan(node.args)
            tags = [t for t in (_context_tag(d, self.pos) for d in node.decorator_list) if t is not None]
            saved = self.ctx
            self.ctx = saved + tags  # a decorator's context holds for the whole body
            self.loaders.append(dict(self.loaders[0]))
            self.batches.append({})
            self.sized.append({})
            self.marks.append({})
            self.declared.append(set())
            self.ints.append(set())
            saved_loops, self.loop_names = self.loop_names, []
            saved_bound, self.size_bound = self.size_bound, []
            saved_stores, self.loop_stores = self.loop_stores, []
            parent = self.funcs[-1] + ".<locals>." if self.funcs else (self.cls[-1] + "." if self.cls else "")
            if not parent:
                self.module_defs.setdefault(node.name, []).append(node)
            self.funcs.append(parent + node.name)
            self.modes_at.append(self.mode_flow(node.body))
            self.body(node.body)
            self.modes_at.pop()
            self.funcs.pop()
            self.loop_names = saved_loops
            self.size_bound = saved_bound
            self.loop_stores = saved_stores
            self.ints.pop()
            self.declared.pop()
            self.marks.pop()
            self.loaders.pop()
            self.batches.pop()
            self.sized.pop()
            self.ctx = saved
        elif isinstance(node, ast.ClassDef):
            for expr in [*node.decorator_list, *node.bases, *(kw.value for kw in node.keywords)]:
                self.scan(expr)
            self.cls.append(node.name if not self.cls else f"{self.cls[-1]}.{node.name}")
            self.body(node.body)
            self.cls.pop()
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            tags = []
            for item in node.items:
                self.scan(item.context_expr)
                if item.optional_vars is not None:
                    self.scan(item.optional_vars)
                tag = _context_tag(item.context_expr, self.pos)
                if tag is not None:
                    tags.append(tag)
            saved = self.ctx
            self.ctx = saved + tags
            self.body(node.body)
            self.ctx = saved
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.loop_stores.append(node)
            self.for_(node)
            self.loop_stores.pop()
        elif isinstance(node, ast.While):
            self.loop_stores.append(node)
            self.scan(node.test)
            before = self.enter_loop(node.body, set())
            self.body(node.body)
            self.body(node.orelse)
            self.leave_loop(before)
            self.loop_stores.pop()
        elif isinstance(node, ast.Assign):
            self.scan(node.value)
            for target in node.targets:
                self.scan(target)
            self.assign(node)
            value = node.value
            if isinstance(value, ast.Call) and _tail(value.func) == "DataLoader" and _keeps_last_batch(value):
                for target in node.targets:
                    for name in _names(target):
                        self.loaders[-1][name] = self.pos(value)
                        if len(self.loaders) == 1:
                            self.loaders[0][name] = self.pos(value)
        elif isinstance(node, ast.Global):
            self.declared[-1].update(node.names)
        elif isinstance(node, ast.AugAssign):
            self.scan(node.value)
            self.scan(node.target)
            if isinstance(node.target, ast.Name) and self.rebinds(node.target.id):
                v = node.value
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    kind = "str"
                elif (
                    isinstance(v, ast.Constant)
                    and isinstance(v.value, float)
                    or _value_kind(v, self.ints[-1]) == "float"
                ):
                    kind = "float"
                else:
                    kind = "int"  # `STEP += 1`: a counter
                self.write(node.target.id, kind, node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, (ast.Yield, ast.YieldFrom)):
            self.scan(node.value)
            yielded = node.value.value
            if yielded is not None and len(self.funcs) == 1 and not self.cls and self.sized_value(yielded):
                self.varying_gens.add(self.funcs[0])
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self.scan(node.value)
            call = node.value
            if (
                isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name)
                and _cast_tag(call) == "requires_grad"
            ):
                self.marks[-1][call.func.value.id] = "requires_grad"  # x.requires_grad_()
            self.module_grad(call)
            self.inplace(call)
        else:
            for _field, value in ast.iter_fields(node):
                if isinstance(value, list):
                    for item in value:
                        if isinstance(item, ast.stmt):
                            self.stmt(item)
                        elif isinstance(item, ast.ExceptHandler):
                            if item.type is not None:
                                self.scan(item.type)
                            self.body(item.body)
                        elif isinstance(item, ast.match_case):
                            if item.guard is not None:
                                self.scan(item.guard)
                            self.body(item.body)
                        elif isinstance(item, ast.AST):
                            self.scan(item)
                elif isinstance(value, ast.AST):
                    self.scan(value)

    # globals, casts, buffers
    def rebinds(self, name: str) -> bool:
        """Whether assigning ``name`` here rebinds a module global: declared ``global`` in this
        function, or a module-level assignment inside a loop."""
        return name in self.declared[-1] if self.funcs else bool(self.loop_names) and not self.cls

    def write(self, name: str, kind: str, node: ast.stmt) -> None:
        """``name|kind|pos|writer|L`` (``L``: inside a loop of the writer, so it rebinds repeatedly)."""
        loop = "L" if self.loop_names else ""
        self.writes.append(f"{name}|{kind}|{self.pos(node)}|{self.funcs[-1] if self.funcs else ''}|{loop}")

    def assign(self, node: ast.Assign) -> None:
        """Cast tags of names (``xh = x.half()``), rebound globals, flag-dict items, subscript
        writes into buffers (``self.keys[:, i] = self.kv(x)``) and names bound in a loop."""
        value = node.value
        tag = _cast_tag(value) or _one_sample(value) or _sliced(value)
        sized = self.sized[-1]
        how = self.sized_value(value) if self.size_bound or sized else None
        for target in node.targets:
            for name in _names(target):
                if how is not None and (isinstance(target, ast.Name) or name in sized):
                    sized[name] = f"{self.pos(value)}|{how}"
                elif how is None:
                    sized.pop(name, None)
            if isinstance(target, ast.Name):
                if isinstance(value, ast.Call):  # (a whole position: rules/relocate.py moves it)
                    self.origins[(self.funcs[-1] if self.funcs else "", target.id)] = self.pos(value)
                self.note_list(target.id, value)
                if tag is not None:
                    self.marks[-1][target.id] = tag
                else:
                    self.marks[-1].pop(target.id, None)
                if self.rebinds(target.id):
                    self.write(target.id, _value_kind(value, self.ints[-1]), node)
                if self.loop_names:
                    self.loop_names[-1].add(target.id)
                    if self.fresh_ctor(value):
                        self.loop_names[-1].add(
                            "@" + target.id
                        )  # holds a new instance built from loop values
            elif isinstance(target, ast.Subscript):
                root = target.value
                if isinstance(root, ast.Name) and root.id in self.flag_dicts and self.funcs:
                    self.write(root.id, _value_kind(value, self.ints[-1]), node)
                attr = _self_attr(root)
                if (
                    attr is not None
                    and self.cls
                    and self.funcs
                    and _carries_grad(value)
                    and not self.no_grad()
                ):
                    self.buffer_writes.append((self.cls[-1], attr, self.pos(node)))
            elif isinstance(target, ast.Attribute):
                self.requires_grad_write(target, value, node)

    def note_list(self, name: str, value: ast.expr) -> None:
        """``params = list(enc.parameters())``: a later ``for p in params: p.requires_grad = ...``
        changes ``enc``'s parameters (``param_lists``); ``batches = [torch.randn(2, 7),
        torch.randn(3, 5)]``: a loop over it passes other sizes (``shaped_lists``); any other
        value unbinds the name from both."""
        listed, where = _parameters_of(value), (self.funcs[-1] if self.funcs else "", name)
        if listed is not None:
            self.param_lists[where] = self.receiver(listed)
        else:
            self.param_lists.pop(where, None)
        if _differently_shaped(value):
            self.shaped_lists.add(where)
        else:
            self.shaped_lists.discard(where)

    def requires_grad_write(self, target: ast.Attribute, value: ast.expr, node: ast.stmt) -> None:
        """``x.requires_grad = True`` marks an input tensor; ``p.requires_grad = flag`` for ``p`` of a
        ``for p in m.parameters()`` loop freezes or unfreezes parameters."""
        if target.attr != "requires_grad" or not isinstance(target.value, ast.Name):
            return
        if isinstance(value, ast.Constant) and value.value is True:
            self.marks[-1][target.value.id] = "requires_grad"
        if target.value.id in self.param_vars:
            self.flip(node, _flag(value), self.param_vars[target.value.id], target.value.id)

    def flip(
        self, node: ast.AST, flag: str, module: str, var: str | None = None, named: bool = False
    ) -> None:
        """Record a change of parameters' requires_grad made after construction (not in an
        ``__init__``: what a module freezes while it is built is the state every call sees), with
        the module whose parameters change (``receiver``) and ``|L`` when it runs in a loop of
        its function (for a ``for p in m.parameters()`` variable ``var``: a loop around that one);
        ``N`` (``named``) for ``enc.requires_grad_(True)`` on a plain name, which a tensor input
        (``x.requires_grad_()``) writes alike: a change only where the name holds a module."""
        if not (self.funcs and self.funcs[-1].rpartition(".")[2] == "__init__"):
            looped = self.param_depth.get(var, 1) > 1 if var is not None else bool(self.loop_stores)
            marks = ("L" if looped else "") + ("N" if named else "")
            self.param_grads.append(f"{self.pos(node)}|{flag}|{module}|{marks}")

    def receiver(self, expr: ast.expr) -> str:
        """``<dotted path>@<origin>`` for the module an expression names (``D``, ``model.base``,
        ``self.backbone``): the origin is the position of the call last assigned to its first
        name in this function (``model = Net()``), or empty; ``""`` for anything else."""
        dotted = _dotted(expr)
        if dotted is None:
            return ""
        scope = self.funcs[-1] if self.funcs else ""
        return f"{dotted}@{self.origins.get((scope, dotted.split('.', 1)[0]), '')}"

    def module_grad(self, call: ast.Call) -> None:
        """``m.backbone.requires_grad_(False)`` (a module's or a loop parameter's, not a plain
        tensor name's: ``x.requires_grad_()`` marks an input) sets parameters' requires_grad."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "requires_grad_"):
            return
        recv = func.value
        value = (
            call.args[0]
            if call.args
            else next((k.value for k in call.keywords if k.arg == "requires_grad"), None)
        )
        flag = "True" if value is None else _flag(value)
        if isinstance(recv, ast.Name) and recv.id in self.param_vars:
            self.flip(call, flag, self.param_vars[recv.id], recv.id)
        elif (isinstance(recv, ast.Attribute) and _dotted(recv) is not None) or flag != "True":
            self.flip(call, flag, self.receiver(recv))
        elif isinstance(recv, ast.Name):  # `enc.requires_grad_(True)`, or an input's `x.requires_grad_()`
            self.flip(call, flag, self.receiver(recv), named=True)

    def no_grad(self) -> bool:
        return any(t.startswith(("grad:no_grad", "grad:inference_mode")) for t in self.ctx)

    def inplace(self, call: ast.Call) -> None:
        """``self.<b>.index_copy_(..., self.kv(x))``: an in-place write of a value that requires
        grad into an attribute of ``self`` (kept when the attribute is a registered buffer)."""
        func = call.func
        while (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Attribute)
        ):
            func = func.value.func  # self.ema.mul_(d).add_(v): the receiver is self.ema
        if (
            not isinstance(call.func, ast.Attribute)
            or call.func.attr not in INPLACE_WRITES
            or not self.cls
            or not self.funcs
        ):
            return
        attr = _self_attr(func.value) if isinstance(func, ast.Attribute) else None
        if attr is None or self.no_grad():
            return
        if any(_carries_grad(a) for a in [*call.args, *(kw.value for kw in call.keywords)]):
            self.buffer_writes.append((self.cls[-1], attr, self.pos(call)))

    def fresh_ctor(self, value: ast.expr) -> bool:
        """A constructor call (``Head(n_actions)``) whose arguments use names bound in the
        enclosing loops: a new instance with other shapes / attributes per iteration."""
        if not isinstance(value, ast.Call) or not (_tail(value.func) or "")[:1].isupper():
            return False
        bound = set().union(*self.loop_names) if self.loop_names else set()
        return any(
            isinstance(n, ast.Name) and n.id in bound
            for a in [*value.args, *(k.value for k in value.keywords)]
            for n in ast.walk(a)
        )

    def for_(self, node: ast.For | ast.AsyncFor) -> None:
        self.scan(node.iter)
        self.scan(node.target)
        self.loop_names.append(set(_names(node.target)))
        if isinstance(node.iter, ast.Call) and _tail(node.iter.func) in ("range", "enumerate", "trange"):
            names = _names(node.target)
            self.ints[-1].update(names[:1])
        source = node.iter
        target = node.target
        if isinstance(source, ast.Call) and _tail(source.func) == "enumerate" and source.args:
            source = source.args[0]
            if isinstance(target, ast.Tuple) and len(target.elts) == 2:
                target = target.elts[1]
        where = self.loaders[-1].get(source.id) if isinstance(source, ast.Name) else None
        if (
            where is None
            and isinstance(source, ast.Call)
            and _tail(source.func) == "DataLoader"
            and _keeps_last_batch(source)
        ):
            where = self.pos(source)
        added = []
        if where is not None:
            for name in _names(target):
                if name not in self.batches[-1]:
                    self.batches[-1][name] = where
                    added.append(name)
        before = self.enter_loop(node.body, set(_names(node.target)))
        gen = node.iter.func if isinstance(node.iter, ast.Call) else None
        if isinstance(gen, ast.Name) and gen.id in self.varying_gens:
            for name in _names(node.target):
                self.sized[-1][name] = f"{self.pos(node.iter)}|varies"
        elif (
            isinstance(node.iter, (ast.Name, ast.List, ast.Tuple))
            and where is None
            and isinstance(target, ast.Name)
        ):
            # `for cfg in phases`: another object each time; `for src in batches` over tensors
            # made with other literal shapes: another size each time
            how = "varies" if self.shapes_differ(node.iter) else "items"
            self.sized[-1][target.id] = f"{self.pos(node.iter)}|{how}"
        params, owner = self.parameter_loop(source, target)
        constant = self.constant_loop(source, target)
        strided = (
            [node.target.id]
            if isinstance(node.iter, ast.Call)
            and _tail(node.iter.func) == "range"
            and len(node.iter.args) == 3
            and isinstance(node.target, ast.Name)
            else []
        )
        self.param_vars.update(dict.fromkeys(params, owner))
        self.param_depth.update(dict.fromkeys(params, len(self.loop_stores)))  # (this loop counted)
        self.strided.update(strided)
        self.body(node.body)
        self.body(node.orelse)
        for name in params:
            self.param_vars.pop(name, None)
            self.param_depth.pop(name, None)
        if constant is not None:
            self.const_loops.pop(constant, None)
        self.strided.difference_update(strided)
        self.leave_loop(before)
        self.loop_names.pop()
        for name in added:
            self.batches[-1].pop(name, None)

    def parameter_loop(self, source: ast.expr, target: ast.expr) -> tuple[list[str], str]:
        """(the loop variable, its module's ``receiver``) for ``for p in m.parameters()`` (or
        ``named_parameters()``, or a name bound to ``list(m.parameters())`` in this function);
        ([], "") for any other loop."""
        if isinstance(source, ast.Call) and _tail(source.func) in ("parameters", "named_parameters"):
            owner = self.receiver(source.func.value) if isinstance(source.func, ast.Attribute) else ""
            return _names(target)[-1:], owner
        listed = (self.funcs[-1] if self.funcs else "", source.id) if isinstance(source, ast.Name) else None
        if listed is not None and listed in self.param_lists:
            return _names(target)[-1:], self.param_lists[listed]
        return [], ""

    def shapes_differ(self, it: ast.expr) -> bool:
        """Whether a loop's iterable is a list / tuple of tensors made with different literal
        shapes (``[torch.randint(3, 40, (2, 7)), torch.randint(3, 40, (3, 5))]``, or a name bound
        to one in this function)."""
        if isinstance(it, ast.Name):
            return (self.funcs[-1] if self.funcs else "", it.id) in self.shaped_lists
        return _differently_shaped(it)

    def constant_loop(self, source: ast.expr, target: ast.expr) -> tuple[str, str] | None:
        """``for task in ("cls", "reg"):`` (or over a module-level tuple of constants): record the
        constants its variable takes (``const_loops``) and return its key, else None."""
        values = _constant_items(source, self.const_lists)
        if values is None or not isinstance(target, ast.Name):
            return None
        key = (self.funcs[-1] if self.funcs else "", target.id)
        self.const_loops[key] = values
        return key

    # tensors whose size changes between loop iterations
    def enter_loop(self, body: list[ast.stmt], targets: set[str]) -> dict[str, str]:
        """Enter a loop body (``targets``: what its header binds): the names it rebinds to
        ``torch.cat`` of themselves (``ids = torch.cat([ids, nxt], 1)``) grow from the first
        iteration on, even where they are read before that line; returns what was sized before."""
        bound = set(targets)
        before = dict(self.sized[-1])
        sized = self.sized[-1]
        for stmt in body:  # one walk: the plain names assigned (nested blocks too) and the growing ones
            for node in _walk_here(stmt):
                if isinstance(node, ast.Name):
                    if isinstance(node.ctx, ast.Store):
                        bound.add(node.id)
                elif isinstance(node, ast.Assign) and _grows(node):
                    for name in _names(node.targets[0]):
                        sized[name] = f"{self.pos(node.value)}|grows"
        self.size_bound.append(bound)
        return before

    def leave_loop(self, before: dict[str, str]) -> None:
        """After the loop a name bound in it holds its last value: one size for later calls."""
        self.size_bound.pop()
        sized = self.sized[-1]
        for name in [n for n in sized if n not in before]:
            del sized[name]

    def data_sized(self, name: str) -> bool:
        """Whether a module function ``name`` defined so far (any of its definitions) builds a
        tensor sized by its data (``_data_sized``), memoised per number of definitions."""
        defs = self.module_defs.get(name, [])
        key = (name, len(defs))
        known = self.sized_memo.get(key)
        if known is None:
            known = self.sized_memo[key] = any(_data_sized(fn) for fn in defs)
        return known

    def sized_value(self, value: ast.expr) -> str | None:
        """``"grows"`` / ``"varies"`` when ``value`` is a tensor whose size changes between
        iterations of the enclosing loops: a factory (``torch.randn(n, 4)``, ``torch.zeros(len(b),
        t)``, ``torch.randint(0, 9, (n,))``) given a size bound in the loop, ``torch.cat`` of the
        name it rebinds, or an expression of a name already sized (``x = aug(x)``: the size follows)."""
        sized = self.sized[-1]
        bound = set().union(*self.size_bound) if self.size_bound else set()
        if self.strided and _strided_slice(value, self.strided):
            return "last"
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in self.shaped:
            how, params, shaping = self.shaped[value.func.id]
            given = [
                *((params[i] if i < len(params) else "", a) for i, a in enumerate(value.args)),
                *((kw.arg or "", kw.value) for kw in value.keywords),
            ]
            if any(name in shaping and _mentions(arg, bound) for name, arg in given):
                return how  # `make_batch(32, names)` with `names` picked per iteration
        for node in ast.walk(value):
            if isinstance(node, ast.Name) and node.id in sized:
                return sized[node.id].rpartition("|")[2]
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in self.module_defs
                and any(isinstance(n, ast.Name) and n.id in bound for a in node.args for n in ast.walk(a))
                and self.data_sized(node.func.id)
            ):
                return "varies"  # `ids = tokenize(texts)` for each request in the loop
            if isinstance(node, ast.Call) and bound:
                sizes = _factory_sizes(node)
                if any(isinstance(n, ast.Name) and n.id in bound for a in sizes for n in ast.walk(a)):
                    return "varies"
        return None

    # expressions
    def scan(self, root: ast.AST) -> None:
        """Record every call (and ``self.training`` read) in an expression; a lambda's body runs
        where the lambda is called, so its calls get no context from here."""
        lines = self.lines
        if lines is not None and not (
            self.ctx
            or self.batches[-1]
            or self.marks[-1]
            or self.sized[-1]
            or self.strided
            or self.modes_at[-1]
            or self.const_loops
        ):
            first = getattr(root, "lineno", None)
            if first is not None:
                i = bisect.bisect_left(lines, first)
                if i == len(lines) or lines[i] > root.end_lineno:  # type: ignore[attr-defined]
                    return  # nothing on these lines can matter here
        in_lambda: set[int] = set()
        reads = (
            self.reads.setdefault(self.funcs[-1], set())
            if self.funcs and self.globals and not self.declared[-1]
            else None
        )
        for node in ast.walk(root):
            if isinstance(node, ast.Call):
                self.call(node, id(node) not in in_lambda)
            elif isinstance(node, ast.Name):
                if reads is not None and node.id in self.globals and isinstance(node.ctx, ast.Load):
                    reads.add(node.id)
            elif isinstance(node, ast.Attribute):
                if (
                    node.attr == "training"
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "self"
                    and self.cls
                ):
                    self.training_readers.add(self.cls[-1])
            elif isinstance(node, ast.Lambda):
                in_lambda.update(id(n) for n in ast.walk(node.body))

    def call(self, node: ast.Call, here: bool) -> None:
        key = (
            f"{node.lineno}:{self.char_col(node.lineno, node.col_offset)}"
            if self.ctx or self.batches[-1] or self.sized[-1]
            else ""
        )
        if self.ctx and here:
            self.facts.contexts[key] = tuple(self.ctx)
        state = self.modes_at[-1].get((node.lineno, node.col_offset)) if here and self.modes_at[-1] else None
        if state:
            modes = tuple(
                f"{recv}={'|'.join(sorted(elems))}" for recv, elems in sorted(state.items()) if elems != _INIT
            )
            if modes:
                self.facts.modes[key or f"{node.lineno}:{self.char_col(node.lineno, node.col_offset)}"] = (
                    modes
                )
        if not (node.args or node.keywords):
            return
        key = key or f"{node.lineno}:{self.char_col(node.lineno, node.col_offset)}"
        picks = _choices(node)
        if self.const_loops:
            picks += self.loop_constants(node)
        if picks:
            self.facts.choices[key] = picks
        self.call_args(node, key)
        batches = self.batches[-1]
        if batches:
            fed = []
            for i, arg in enumerate(node.args):
                name = _root_name(arg)
                if name in batches:
                    fed.append(f"#{i}@{batches[name]}")
            for kw in node.keywords:
                name = _root_name(kw.value) if kw.arg is not None else None
                if name in batches:
                    fed.append(f"{kw.arg}@{batches[name]}")
            if fed:
                self.facts.batches[key] = tuple(fed)
        if self.size_bound:
            self.fed_sizes(node, key)

    def loop_constants(self, node: ast.Call) -> tuple[str, ...]:
        """``"<arg key>=<repr>|<repr>"`` for each argument that is the variable of an enclosing
        ``for task in ("cls", "reg"):`` loop (or a loop over a module-level tuple of constants):
        the call passes each of them in turn, as a ``"a" if c else "b"`` choice does."""
        scope = self.funcs[-1] if self.funcs else ""
        picks = []
        for argkey, arg in [
            *((f"#{i}", a) for i, a in enumerate(node.args)),
            *((kw.arg, kw.value) for kw in node.keywords if kw.arg),
        ]:
            if isinstance(arg, ast.Starred):
                break
            values = self.const_loops.get((scope, arg.id)) if isinstance(arg, ast.Name) else None
            if values:
                picks.append(f"{argkey}={'|'.join(values)}")
        return tuple(picks)

    def fed_sizes(self, node: ast.Call, key: str) -> None:
        """The arguments of a call in a loop whose size or structure changes per iteration: a name
        sized earlier, or an expression written in the call (``f(make_crops(img, n))``,
        ``m(x[i:i + bs])``)."""
        sized = self.sized[-1]
        grown = []
        for argkey, arg in [
            *((f"#{i}", a) for i, a in enumerate(node.args)),
            *((kw.arg, kw.value) for kw in node.keywords if kw.arg),
        ]:
            name = _root_name(arg)
            if name is not None and name in sized:
                grown.append(f"{argkey}@{sized[name]}")
            elif isinstance(arg, (ast.Call, ast.Subscript)) and (self.strided or self.shaped):
                how = self.sized_value(arg)
                if how is not None:
                    grown.append(f"{argkey}@{self.pos(arg)}|{how}")
        if grown:
            self.facts.sizes[key] = tuple(grown)

    def call_args(self, node: ast.Call, key: str) -> None:
        """Cast tags of the arguments; ``self.register_buffer("b", ...)``; ``torch.compile`` of a
        new instance built from loop values."""
        func = node.func
        if isinstance(func, ast.Attribute):
            if (
                func.attr == "register_buffer"
                and self.cls
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                self.buffers.setdefault(self.cls[-1], set()).add(str(node.args[0].value))
            elif (
                func.attr == "compile"
                and isinstance(func.value, ast.Name)
                and func.value.id == "torch"
                and (self.loop_names or self.loop_stores)
                and node.args
            ):
                arg = node.args[0]
                fresh = bool(self.loop_names) and (
                    self.fresh_ctor(arg)
                    or isinstance(arg, ast.Name)
                    and "@" + arg.id in set().union(*self.loop_names)
                )
                if fresh:
                    self.fresh.append(f"{self.pos(node)}|{ast.unparse(arg)[:80]}")
                elif self.loop_stores and _loop_free(node, _stored_paths(self.loop_stores[-1])):
                    self.rewraps.append(f"{self.pos(node)}|{ast.unparse(arg)[:80]}")
        marks = self.marks[-1]
        tags = []
        for argkey, arg in [
            *((f"#{i}", a) for i, a in enumerate(node.args)),
            *((kw.arg, kw.value) for kw in node.keywords if kw.arg),
        ]:
            tag = _cast_tag(arg) or _one_sample(arg) or _sliced(arg)
            if tag is None and marks:
                name = arg.id if isinstance(arg, ast.Name) else None
                tag = marks.get(name) if name is not None else None
            if tag is not None:
                tags.append(f"{argkey}={tag}")
        if tags:
            self.facts.casts[key] = tuple(tags)

    def finish(self, module: str) -> VariantFacts:
        prefix = f"{module}." if module else ""
        facts = self.facts
        facts.training_readers = tuple(sorted(prefix + c for c in self.training_readers))
        written = {w.split("|", 1)[0] for w in self.writes}
        facts.global_writes = tuple(self.writes)
        facts.global_reads = {
            q: tuple(sorted(names & written)) for q, names in self.reads.items() if names & written
        }
        facts.buffer_writes = tuple(
            f"{c}|{a}|{p}" for c, a, p in self.buffer_writes if a in self.buffers.get(c, ())
        )
        facts.fresh_compiles = tuple(self.fresh)
        facts.loop_compiles = tuple(self.rewraps)
        facts.param_grads = tuple(self.param_grads)
        return facts


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _stored_paths(loop: ast.For | ast.AsyncFor | ast.While) -> set[str]:
    """Every name and ``a.b`` attribute path the loop (its header and body, nested blocks
    included) binds: assignment targets of every kind, loop and ``with`` targets, imports,
    ``def``/``class`` names, ``del``."""
    out: set[str] = set()
    for node in ast.walk(loop):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            path = _dotted(node)
            if path is not None:
                out.add(path)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
    return out


def _loop_free(call: ast.Call, stores: set[str]) -> bool:
    """``torch.compile(TARGET, k=V...)`` in a loop whose TARGET is a name or an attribute path and
    whose options are constants or such paths, none of them (nor a prefix of one) bound by the
    loop: the same callable compiled again on every iteration."""
    if len(call.args) != 1 or any(kw.arg is None for kw in call.keywords):
        return False
    for expr in [call.args[0], *(kw.value for kw in call.keywords)]:
        if isinstance(expr, ast.Constant) and expr is not call.args[0]:
            continue
        path = _dotted(expr)
        if path is None:
            return False
        parts = path.split(".")
        if any(".".join(parts[: i + 1]) in stores for i in range(len(parts))):
            return False
    return True


def _differently_shaped(value: ast.expr) -> bool:
    """A list / tuple literal of ``torch.<factory>(...)`` calls whose size arguments are not all
    written alike (``[torch.randn(2, 7), torch.randn(3, 5)]``): a loop over it passes another
    size each iteration (measured, torch 2.13: a translator's encoder fed two such batches
    compiles twice)."""
    if not isinstance(value, (ast.List, ast.Tuple)) or len(value.elts) < 2:
        return False
    shapes = set()
    for elt in value.elts:
        sizes = _factory_sizes(elt) if isinstance(elt, ast.Call) else []
        if not sizes:
            return False
        shapes.add(tuple(ast.dump(s) for s in sizes))
    return len(shapes) > 1


def _constant_items(it: ast.expr, named: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """The reprs of the items of a tuple / list literal of two or more constants (``("cls",
    "reg")``, or a module-level name bound to one: ``named``), else None."""
    if isinstance(it, ast.Name):
        return named.get(it.id)
    if (
        isinstance(it, (ast.Tuple, ast.List))
        and len(it.elts) >= 2
        and all(isinstance(e, ast.Constant) and not isinstance(e.value, bool) for e in it.elts)
    ):
        return tuple(dict.fromkeys(repr(e.value)[:40] for e in it.elts))  # type: ignore[attr-defined]
    return None


def _choices(node: ast.Call) -> tuple[str, ...]:
    """``"<arg key>=<repr>|<repr>"`` for each argument written ``<const> if c else <const>``."""
    picks = []
    for argkey, arg in [
        *((f"#{i}", a) for i, a in enumerate(node.args)),
        *((kw.arg, kw.value) for kw in node.keywords if kw.arg),
    ]:
        if isinstance(arg, ast.Starred):
            break
        if (
            isinstance(arg, ast.IfExp)
            and isinstance(arg.body, ast.Constant)
            and isinstance(arg.orelse, ast.Constant)
        ):
            picks.append(f"{argkey}={repr(arg.body.value)[:40]}|{repr(arg.orelse.value)[:40]}")
    return tuple(picks)


# -- train / eval mode at each call ---------------------------------------------------------------------
ModeState = dict[str, frozenset[str]]  # receiver text -> the setters that may have run last
_INIT = frozenset(("init",))  # no setter of this function has run on the receiver (the mode it came in with)
_UNKNOWN = frozenset(("?",))  # handed to a call that may set it


def _mode_setter(stmt: ast.stmt) -> tuple[str, str] | None:
    """``(receiver, mode)`` for a statement ``X.train()`` / ``X.eval()`` / ``X.train(flag)``
    (``mode``: ``train``, ``eval``, or ``?`` for a flag computed at run time)."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("train", "eval")):
        return None
    recv = _dotted(func.value)
    if recv is None:
        return None
    if func.attr == "eval":
        return recv, "eval"
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "mode"), None)
    if arg is None:
        return recv, "train"
    if isinstance(arg, ast.Constant) and isinstance(arg.value, bool):
        return recv, "train" if arg.value else "eval"
    return recv, "?"


def _join(a: ModeState | None, b: ModeState | None) -> ModeState | None:
    """Both paths' setters (None: a path that does not get here: return, raise, break)."""
    if a is None:
        return b
    if b is None:
        return a
    return {k: a.get(k, _INIT) | b.get(k, _INIT) for k in a.keys() | b.keys()}


class _ModeFlow:
    """Which ``.train()`` / ``.eval()`` statements of one function may have run last, on each
    receiver, when each call of the function is made: a reaching-definitions pass over the
    statements (branches joined, loops to a fixed point, ``return`` / ``break`` / ``continue``
    followed).  A call that hands the receiver on (``evaluate(model)``) or calls a function of the
    file that sets a mode makes its mode unknown (``?``) from there.  ``pos`` gives a node's
    ``line:col``; ``setters``: the file's functions holding a mode statement."""

    def __init__(self, pos, setters: set[str]) -> None:  # type: ignore[no-untyped-def]
        self.pos = pos
        self.setters = setters
        self.at: dict[tuple[int, int], ModeState] = {}  # call (lineno, col_offset) -> state
        self.loops: list[tuple[list[ModeState | None], list[ModeState | None]]] = []

    def block(self, stmts: list[ast.stmt], st: ModeState | None) -> ModeState | None:
        for stmt in stmts:
            if st is None:
                return None
            st = self.stmt(stmt, st)
        return st

    def stmt(self, s: ast.stmt, st: ModeState) -> ModeState | None:  # noqa: C901 - one branch per statement kind
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return st
        if isinstance(s, ast.If):
            self.exprs(s.test, st)
            return _join(self.block(s.body, st), self.block(s.orelse, st))
        if isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            self.exprs(s.iter if isinstance(s, (ast.For, ast.AsyncFor)) else s.test, st)
            head: ModeState = st
            breaks: list[ModeState | None] = []
            for _ in range(12):
                self.loops.append(([], []))
                end = self.block(s.body, head)
                conts, breaks = self.loops.pop()
                new = st
                for other in (end, *conts):
                    new = _join(new, other) or new
                if new == head:
                    break
                head = new
            out: ModeState | None = head
            for other in breaks:
                out = _join(out, other)
            return self.block(s.orelse, out)
        if isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                self.exprs(item.context_expr, st)
            return self.block(s.body, st)
        if isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            body = self.block(s.body, st)  # type: ignore[attr-defined]
            out = self.block(s.orelse, body)  # type: ignore[attr-defined]
            for handler in s.handlers:  # type: ignore[attr-defined]
                out = _join(out, self.block(handler.body, _join(st, body)))
            final = self.block(s.finalbody, _join(st, out))  # type: ignore[attr-defined]
            return final if out is not None else None
        if isinstance(s, ast.Match):
            self.exprs(s.subject, st)
            out = st
            for case in s.cases:
                out = _join(out, self.block(case.body, st))
            return out
        self.exprs(s, st)
        if isinstance(s, (ast.Return, ast.Raise)):
            return None
        if isinstance(s, (ast.Continue, ast.Break)):
            if self.loops:
                self.loops[-1][0 if isinstance(s, ast.Continue) else 1].append(st)
            return None
        setter = _mode_setter(s)
        if setter is not None:
            recv, mode = setter
            return {**st, recv: frozenset((f"{self.pos(s.value)}={mode}",))}  # type: ignore[attr-defined]
        return self.handed_on(s, st)

    def handed_on(self, s: ast.stmt, st: ModeState) -> ModeState:
        """The state after a statement whose calls may set a mode somewhere else."""
        if not st:
            return st
        roots = {k.split(".", 1)[0]: k for k in st}
        out = st
        for node in _walk_here(s):
            if not isinstance(node, ast.Call):
                continue
            callee = node.func.id if isinstance(node.func, ast.Name) else None
            if callee is None and isinstance(node.func, ast.Attribute):
                callee = node.func.attr  # self.validate(), trainer.evaluate()
            if callee in self.setters:
                return {k: v | _UNKNOWN for k, v in st.items()}
            for arg in [*node.args, *(kw.value for kw in node.keywords)]:
                dotted = _dotted(arg.value if isinstance(arg, ast.Starred) else arg)
                key = roots.get(dotted.split(".", 1)[0]) if dotted is not None else None
                if key is not None:
                    out = {**out, key: out[key] | _UNKNOWN}
        return out

    def exprs(self, node: ast.AST, st: ModeState) -> None:
        if not st:
            return
        for sub in _walk_here(node):
            if isinstance(sub, ast.Call):
                self.at[(sub.lineno, sub.col_offset)] = st


def _has_setter(body: list[ast.stmt]) -> bool:
    return any(
        isinstance(node, ast.stmt) and _mode_setter(node) is not None
        for stmt in body
        for node in _walk_here(stmt)
    )


def file_variant_facts(tree: ast.Module, char_col, module: str, text: str) -> VariantFacts | None:  # type: ignore[no-untyped-def]
    """``FileFacts.variant_facts`` of a whole parsed file: None for a file that mentions no context
    word.  One function for the analyser and the server's incremental merge (which re-runs this
    whole-file pass on the new text instead of attributing contexts to statements)."""
    if not worth_a_look(text):
        return None
    return call_contexts(tree, char_col, module, text)


# `for cfg in phases:`: a loop over the items of a plain name (each may be another config object)
_ITEM_LOOP = re.compile(r"^[ \t]*(?:async[ \t]+)?for[ \t]+\w+[ \t]+in[ \t]+(?:\w+[ \t]*:|[\[(])", re.M)


def worth_a_look(text: str) -> bool:
    """Whether a file's text can hold anything the pass records (a context word, or a loop over
    the items of a name): the others get no VariantFacts at all."""
    return any(word in text for word in CALL_CONTEXT_WORDS) or _ITEM_LOOP.search(text) is not None


def call_contexts(tree: ast.Module, char_col, module: str, text: str) -> VariantFacts:  # type: ignore[no-untyped-def]
    """The VariantFacts of one parsed file (``char_col(line, utf8_col)`` converts columns the way
    ``node_loc`` does, so keys match ``CallEdge.loc``).  A file that mentions none of the context
    words only gets the cheap scan for constant choices."""
    flags = [n for n in _module_dicts(tree) if f"{n}[" in text] if "{" in text else []
    if not flags and not any(word in text for word in WALK_WORDS) and _ITEM_LOOP.search(text) is None:
        return _cheap(tree, char_col, module, text)
    names = _rebound_names(tree, text, flags)
    # module functions returning a dict / list shaped by their arguments: the lines calling
    # them are worth a scan (a call in a loop may feed another structure per iteration)
    shaped = {
        stmt.name: found
        for stmt in tree.body
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and (found := _shaped(stmt)) is not None
    }
    p = _Pass(char_col, _interesting_lines(text, names | set(shaped)), names)
    p.shaped = shaped
    p.flag_dicts.update(flags)
    p.const_lists = {
        t.id: values
        for stmt in tree.body
        if isinstance(stmt, ast.Assign) and (values := _constant_items(stmt.value, {})) is not None
        for t in stmt.targets
        if isinstance(t, ast.Name)
    }
    p.mode_lines = _interesting_lines(text, set(), (".train(", ".eval()"))
    if p.mode_lines:
        p.mode_funcs = {
            node.name
            for node in walk_statements(tree)  # a def is a statement: no expression walked
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and p.sets_modes(node.body)
        }
        p.modes_at = [p.mode_flow(tree.body)]
    p.body(tree.body)
    return p.finish(module)


def _cheap(tree: ast.Module, char_col, module: str, text: str) -> VariantFacts:  # type: ignore[no-untyped-def]
    """The facts of a file without grad/autocast contexts or DataLoaders, without the full pass:
    constant choices in call arguments, and the classes whose source mentions ``self.training``."""
    facts = VariantFacts()
    lines = text.splitlines() if "self.training" in text else None
    choice_lines = _interesting_lines(
        text, set(), ("else",)
    )  # a `a if c else b` is on (or spans) one of them
    readers = []
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, cls = stack.pop()
        for child in ast.iter_child_nodes(node):
            first = getattr(child, "lineno", None)
            if first is not None and (lines is None or isinstance(child, ast.expr)):
                i = bisect.bisect_left(choice_lines, first)
                if i == len(choice_lines) or choice_lines[i] > child.end_lineno:  # type: ignore[attr-defined]
                    continue  # no choice in it, and (an expression) no class either
            if isinstance(child, ast.Call) and (child.args or child.keywords):
                picks = _choices(child)
                if picks:
                    facts.choices[f"{child.lineno}:{char_col(child.lineno, child.col_offset)}"] = picks
            if isinstance(child, ast.ClassDef):
                qual = f"{cls}.{child.name}" if cls else child.name
                if lines is not None and any(
                    "self.training" in ln for ln in lines[child.lineno - 1 : child.end_lineno]
                ):
                    readers.append(qual)
                stack.append((child, qual))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.append((child, f"{cls}.{child.name}.<locals>" if cls else f"{child.name}.<locals>"))
            else:
                stack.append((child, cls))
    prefix = f"{module}." if module else ""
    facts.training_readers = tuple(sorted(prefix + c for c in readers))
    return facts
