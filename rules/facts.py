"""What one file says, once parsed: the per-file summary the project pass works from.

A file is parsed and walked exactly once.  The walk (``analyze``) records two things:
the *structure* the region pass needs (functions, classes, their calls and submodules, compile
sites), and *candidates*: every hazard the rules see in every function, whether or not that
function turns out to be compiled.  Which candidates become diagnostics is decided later, across
files, by ``regions``.  Everything here is plain data (picklable), so it is also what the cache
stores per content hash.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from typing import Any

from tclint.rules.model import Fix, Severity
from tclint.rules.types import Ty
from tclint.rules.version import FACTS_SCHEMA as FACTS_SCHEMA


def _fast_pickle(cls: type) -> type:
    """Pickle as ``cls(*values)``: ~2-3x faster to load than the default state dict of a slots
    dataclass, and the warm cache loads hundreds of thousands of these."""
    names = tuple(f.name for f in fields(cls))

    def __reduce__(self: Any) -> tuple[Any, tuple[Any, ...]]:
        return (cls, tuple(getattr(self, n) for n in names))

    cls.__reduce__ = __reduce__  # type: ignore[method-assign,assignment]
    return cls


@_fast_pickle
@dataclass(slots=True)
class Loc:
    line: int
    col: int
    end_line: int
    end_col: int


@_fast_pickle
@dataclass(slots=True)
class CallEdge:
    """A call made by a function, described symbolically for cross-file resolution.

    kind:
      "name"     target = qualified name of the callee (function or class), e.g. ``pkg.m.helper``
      "self"     target = attribute path on ``self`` (``"attn"``, ``"layers"``), method = method
                 called on it (``"__call__"`` for ``self.attn(x)``, ``"forward"``, ``"reset"``)
      "elem"     target = self path of a module container whose *elements* are called
      "super"    method = the method called on ``super()``
      "local"    target = qualname of a function nested in this one
      "instance" target = a class reference (qualified) whose instance is called / method used
      "deferred" target = qualified name of a project function whose *return value* is called
      "ref"      target = qualified name of a function passed as a value (checkpoint(fn, x))
      "hook"     ``module.register_forward_hook(fn)`` / ``register_forward_pre_hook``: target = the
                 hook function (method = how it is described: "func" qualified, "local" nested
                 qualname, "deferred" a project function returning it), arg0 = the module it is
                 registered on, described as a compile target
    """

    kind: str
    target: str
    method: str
    loc: Loc
    in_loop: bool = False
    cold: str | None = None
    args: tuple[tuple[str, str], ...] = ()  # per-argument (keyword or "#i", ArgKind description)
    elem_count: int | None = None
    arg0: tuple[str, str | None, str | None] | None = None  # first argument as a compile target
    # the other arguments that may be modules, as compile targets: ("#i" position or keyword name,
    # kind, ref, method); what a constructor stores (`Bottleneck(enc, quantizer=VQ())`)
    more_args: tuple[tuple[str, str, str | None, str | None], ...] = ()
    unless: str | None = (
        None  # not taken under compile if this project function is an is_compiling() predicate
    )
    # `self(x)` itself (kind "self", target "forward"), not `self.forward(x)`: only the former goes
    # through __call__, which `module.compile()` compiles in place
    on_self: bool = False


@_fast_pickle
@dataclass(slots=True)
class Param:
    name: str
    ty: Ty
    annotation: str | None
    default: str | None  # literal repr, "None", or "<expr>"
    kind: str = "pos"  # pos | kwonly | varargs | varkw
    uses: tuple[str, ...] = ()  # how the body uses it: range, len, cond, index, key, load
    loc: Loc | None = None


@_fast_pickle
@dataclass(slots=True)
class CompileSite:
    """One place where torch.compile (or an equivalent) is applied to something.

    target kinds: "func" (ref = qualified function), "local" (ref = nested qualname),
    "instance" (ref = class reference), "self" (ref = self path in class ``owner``),
    "elem"/"modlist" (ref = ``Class|path`` of a container attribute, ``Class|*`` / ``Class|**``
    for its submodules, or ``@A;B`` for the element classes of a local container), "method"
    (ref = class, method = name), "deferred" (ref = project function returning the target, ``f[i]``
    for item i of the tuple it returns), "funcparam" (ref = ``qualname|param`` of a module-level
    function's parameter, method = an attribute of it), "ctorparam" (``Class|param`` of an
    ``__init__``), "attr" (``Class|path``, ``deferred:pkg.fn|path``), "unknown".  Class refs may
    join several classes: ``A;B``.
    """

    id: str
    how: str  # "decorator", "call", "method", "partial", "optimize", "wrapper"
    target_kind: str
    ref: str | None
    method: str | None
    loc: Loc
    func: str | None  # qualname of the function containing the site (None: module level)
    owner: str | None  # enclosing class qualname (for "self" targets)
    options: dict[str, Any] = field(default_factory=dict)  # fullgraph, dynamic, backend, mode
    text: str = ""
    in_loop: bool = False


@_fast_pickle
@dataclass(slots=True)
class DisableSite:
    ref: str  # qualified name (function) or local qualname
    recursive: bool
    loc: Loc


@_fast_pickle
@dataclass(slots=True)
class SubmoduleSpec:
    """What ``self.<attr>`` holds, as assigned in the class's methods."""

    kind: str  # "instance" | "list" | "seq" | "dict" | "torch" | "func" | "compiled" | "tensor" | "int" | "float" | "bool" | "str" | "listattr" | "dictattr" | "other"
    refs: tuple[str, ...] = ()
    count: int | None = None
    loc: Loc | None = None


@_fast_pickle
@dataclass(slots=True)
class FunctionFacts:
    qualname: str
    name: str
    loc: Loc  # the `def` line .. end of body
    name_loc: Loc  # the function name (for code lenses, hover, chain links)
    cls: str | None  # qualname of the enclosing class, for methods
    params: list[Param] = field(default_factory=list)
    is_generator: bool = False
    is_async: bool = False
    calls: list[CallEdge] = field(default_factory=list)
    returns: Ty | None = None
    returns_declared: Ty | None = None  # `-> Class` (a class instance), for returns no walk can follow
    compile_marker: bool = False  # `# tclint: compiled` on the def
    decorators: tuple[str, ...] = ()  # qualified decorator names (for hover / wrappers)
    compile_wrapper_param: int | None = None  # body returns torch.compile(<param i>)
    returns_param: int | None = None  # every return is <param i> as given (`...; return model`)
    # (qualified module-level dict, i): the body stores <param i> into it (`MODELS[name] = cls`)
    stores_param: tuple[str, int] | None = None
    compiling_predicate: bool = False  # body returns torch.compiler.is_compiling()
    predicate_refs: tuple[str, ...] = ()  # project functions its `return a() or b()` may delegate to
    calls_outer_param: bool = False  # calls a parameter of an enclosing function (a decorator's wrapper)
    self_name: str | None = None
    attr_writes: list[tuple[str, str, Loc]] = field(default_factory=list)  # (path, how, loc)
    global_writes: list[tuple[str, str, Loc]] = field(default_factory=list)
    returns_items: tuple[Ty, ...] = ()  # `return a, b`: the types of the items (one return only)
    placeholder: bool = False  # abstract, or a body of only pass / ... / raise NotImplementedError


@_fast_pickle
@dataclass(slots=True)
class ClassFacts:
    qualname: str
    name: str
    loc: Loc
    bases: tuple[str, ...]  # qualified (or dotted text when unresolved)
    methods: dict[str, str] = field(default_factory=dict)  # method name -> function qualname
    attrs: dict[str, SubmoduleSpec] = field(default_factory=dict)
    is_dataclass: bool = False
    # (qualified decorator, called, literal first argument): `@register("mlp")` is
    # ("pkg.registry.register", True, "mlp"), `@register` ("pkg.registry.register", False, None)
    decorators: tuple[tuple[str, bool, str | None], ...] = ()


class FrameEffect(enum.Enum):
    """What a graph break does to the frame it is in."""

    RESUMES = "resumes"  # the graph breaks and Dynamo resumes after it (unless a loop body or a user context manager holds it)
    WHOLE_FRAME = "whole-frame"  # Dynamo gives up on the whole function, which runs eagerly


class Need(enum.Enum):
    """What a ``Requirement`` asks of the project before its candidate stands."""

    RETURNS_TENSOR = "returns_tensor"  # ref returns a tensor (its return type's confidence then decides)
    NOT_COMPILING_PREDICATE = (
        "not_compiling_predicate"  # ref is not an is_compiling() predicate (else the code is eager-only)
    )


@_fast_pickle
@dataclass(frozen=True, slots=True)
class Requirement:
    """A fact about another function that a candidate needs: ``ref`` is its qualified name (as the
    walk saw it; the project resolves it)."""

    need: Need
    ref: str


@_fast_pickle
@dataclass(slots=True)
class Candidate:
    """A hazard seen by a rule, pending the decision whether its function is compiled.

    What the engine reads is typed here: ``frame`` (what the break does to its frame),
    ``severity`` (the rule's own severity for this finding), ``requires`` (project facts that must
    hold), and the walk's context (``loop_line``, ``user_ctx``, ``cold``); the severity and the
    heat notes are decided from them in one place, ``engine.candidate_to_diagnostic``.  ``data``
    is private to the rule that made the candidate: only its own ``finalize`` reads it."""

    code: str
    func: str | None  # qualname of the function it is in; None: module level
    loc: Loc
    message: str
    gb_ids: tuple[str, ...] = ()
    confidence: int = 0  # types.HIGH / MEDIUM / LOW
    loop_line: int | None = None  # a for/while body in the same function contains it
    cold: str | None = None  # why the path is rarely taken
    requires: tuple[Requirement, ...] = ()
    fix: Fix | tuple[Fix, ...] | None = None  # a tuple: alternatives the user picks from, preferred first
    help: str | None = None
    data: dict[str, Any] = field(default_factory=dict)  # the rule's own notes for its finalize
    frame: FrameEffect = FrameEffect.RESUMES
    severity: Severity | None = None  # over the rule's default_severity and the heat (None: those decide)
    user_ctx: int | None = None  # the line of the enclosing `with` of a user context manager
    mode: str | None = (
        None  # "train" / "eval": an enclosing `if` runs it only in that mode (`if self.training and ...:`)
    )


@_fast_pickle
@dataclass(slots=True)
class VariantFacts:
    """The eager-side context of calls, for the variant analysis (``analysis.callctx``): keys are
    ``"line:col"`` of a call, as in ``CallEdge.loc``."""

    contexts: dict[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # grad:<mode>@line, autocast:<dtype>@line
    batches: dict[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # "<arg key>@<DataLoader line>" (last batch smaller)
    training_readers: tuple[str, ...] = ()  # qualified classes whose methods read self.training
    choices: dict[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # "<arg key>=<repr>|<repr>": `a if c else b` of constants
    casts: dict[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # "<arg key>=dtype:<d>" / "=device:<d>" / "=requires_grad" / "=single:1" / "=sliced:<slice text>"
    global_reads: dict[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # function qualname -> rebound globals it reads
    global_writes: tuple[
        str, ...
    ] = ()  # "<name>|<value kind>|<pos>|<writer qualname>|<L: in a loop>" (eager rebinding)
    buffer_writes: tuple[
        str, ...
    ] = ()  # "<class qualname>|<buffer>|<pos>": in-place write of a grad value into a buffer
    fresh_compiles: tuple[
        str, ...
    ] = ()  # "<pos>|<class text>": torch.compile(<new instance from loop values>) in a loop
    loop_compiles: tuple[
        str, ...
    ] = ()  # "<pos>|<target text>": torch.compile(<a callable the loop does not rebind>) in a loop
    sizes: dict[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # "<arg key>@<pos>|grows" / "|varies" / "|last": a tensor whose size changes between loop
    # iterations; "|keys" / "|length" / "|items": a dict's keys, a list's length, a config object
    param_grads: tuple[
        str, ...
    ] = ()  # "<pos>|False|<module>|<L>" / "|True|" / "|?|": eager code setting parameters' requires_grad
    # (freezing); <module>: "<dotted receiver>@<line:col:end_line:end_col of the call its first name was assigned
    # from in that function, or empty>", or empty when the parameters' module is not a name; <L>: "L" when
    # it runs in a loop of its function (other than its own `for p in m.parameters()` loop), else empty,
    # then "N" for `name.requires_grad_(True)` on a plain name (kept only where the name holds a module)
    modes: dict[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # call "line:col" -> "<receiver>=<line:col:end_line:end_col>=<train|eval|?>|...": the
    # .train()/.eval() statements of the calling function that may have run last on each receiver
    # ("init": none of them, "?": handed to a call that may set it)


@_fast_pickle
@dataclass(slots=True)
class FileFacts:
    path: str
    module: str
    is_package: bool
    root: str  # the import root this module name is relative to
    functions: dict[str, FunctionFacts] = field(default_factory=dict)
    classes: dict[str, ClassFacts] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)  # module-level name -> qualified
    module_vars: dict[str, Ty] = field(default_factory=dict)  # module-level variable types
    compile_sites: list[CompileSite] = field(default_factory=list)
    disable_sites: list[DisableSite] = field(default_factory=list)
    compile_functions: dict[str, dict[str, Any]] = field(
        default_factory=dict
    )  # partial(torch.compile) aliases
    dynamo_config: dict[str, tuple[Any, Loc]] = field(default_factory=dict)  # torch._dynamo.config.X = v
    candidates: list[Candidate] = field(default_factory=list)
    module_calls: list[CallEdge] = field(default_factory=list)  # calls made at module level
    error: str | None = None  # could not be parsed/read: the TC000/TC011 message
    error_code: str | None = None
    error_loc: Loc | None = None
    line_count: int = 0
    custom_ops: dict[str, Loc] = field(default_factory=dict)  # op function qualname -> loc
    fake_registrations: set[str] = field(default_factory=set)  # names registered with register_fake
    int_globals: dict[str, Loc] = field(default_factory=dict)  # module-level int/list globals
    allow_in_graph: list[DisableSite] = field(default_factory=list)  # torch.compiler.allow_in_graph(fn)
    api_calls: dict[str, list[str]] = field(default_factory=dict)  # torch API -> dotted first arguments
    variant_facts: VariantFacts | None = None  # call contexts for the variant analysis (issue 13)
    star_imports: tuple[str, ...] = ()  # modules this module star-imports (`from .core import *`)
    exports: tuple[str, ...] | None = None  # a literal `__all__` (what a star import of it takes)
