from tclint.rules import callsites, variants
from tclint.rules import types as T
from tclint.rules.model import Applicability, Fix, Severity, Span
from tclint.rules.rule import Example, Family, Rule


class SpecializedArgument(Rule):
    """
    ## What it does
    Flags parameters of a compiled function (the function given to `torch.compile`, or the
    `forward` of a compiled module) that Dynamo specialises on by value: an `int` used in
    `range(n)` or as a list / `ModuleList` index, and a Python list whose length is used
    (`len(xs)` — the length is guarded even when only used in arithmetic, and so is iterating it).

    Ints used only in arithmetic or as sizes are *not* flagged: Dynamo makes them dynamic after
    the second distinct value (2 compiles in total).

    ## Why is this bad?
    Each distinct value compiles a new variant (guard `n == 3`, `len(xs) == 4`).  After the
    recompile limit (8 in torch 2.13) the function runs eagerly for good.  The hazard is real when
    call sites pass values that vary without bound (TC205 flags those call sites); with a few known
    values it is a warm-up matter (TC206).

    ## Example
    ```python
    @torch.compile
    def unroll(x, n_steps: int):
        for _ in range(n_steps):
            x = torch.tanh(x)
        return x
    ```

    ## Use instead
    Pass the count as a tensor and use `torch.cond`/`while_loop`, fix it at construction time
    (a module attribute set once), bucket it to a few values, or stack list arguments into one
    tensor.

    ## Fix safety
    An unsafe fix for a `float` parameter of a `dynamic=False` function that is only used in
    arithmetic, unless every call passes the same constant (one compile: nothing to remove; with
    default settings a float is not flagged: it recompiles once and then is dynamic, measured on
    torch 2.13, while under `dynamic=False` each value compiles, 8 and then the limit): every call in the file passes `torch.tensor(value, dtype=torch.float64)` (a 0-d
    tensor, whose value Dynamo does not guard on) and a `float` annotation becomes `torch.Tensor`.
    Code that needs the Python number back must call `.item()` outside the compiled code.

    ## References
    - https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html
    """

    code = "TC203"
    name = "value-specialized-argument"
    summary = "A compiled function's argument is specialised by value: one compile per distinct value"
    family = Family.RECOMPILE
    default_severity = Severity.WARNING
    fix_applicability = Applicability.UNSAFE
    region_only = False

    def project_check(self, project):
        calls: dict[str, list] = {}
        for call in callsites.calls_into_roots(project):
            calls.setdefault(call.root_key, []).append(call)
        for key, region, ff, fn in callsites.roots(project):
            if key in variants.dropped_whole(project):
                continue  # Dynamo drops the frame before any graph of it: its arguments guard nothing
            dynamic_false = region.options.get("dynamic") is False
            for p in callsites.frame_params(fn):
                guard = callsites.specialisation(p, dynamic_false)
                if guard is None or guard.startswith(f"{p.name} == '") or "True/False" in guard:
                    continue  # strings: TC204; bools: bounded (TC206)
                if p.loc is None:
                    continue
                kinds = [
                    kind for call in calls.get(key, ()) for prm, kind in callsites.map_args(call) if prm is p
                ]
                bounded = bool(kinds) and all(k.startswith("const:") or k == "bool" for k in kinds)
                values = sorted({k[6:] for k in kinds if k.startswith("const:")})
                # with no call site in view (configured roots, library code) the variation is unknown:
                # say so at information level instead of claiming a recompile storm
                unknown = not kinds
                severity = Severity.INFO if (bounded or unknown) else self.default_severity
                how = {
                    "range": f"`range({p.name})`",
                    "index": f"an index (`[{p.name}]`)",
                    "len": f"`len({p.name})`",
                }
                fallback = (
                    "a list whose length is guarded"
                    if guard.startswith("len(")
                    else "a computation under `dynamic=False`"
                )
                used = next((how[u] for u in ("range", "index", "len") if u in p.uses), fallback)
                if bounded:
                    tail = f"; call sites pass {len(values)} value{'s' if len(values) != 1 else ''} ({', '.join(values)})"
                elif unknown:
                    tail = "; if it varies between calls, each value compiles a new variant, up to the recompile limit (8)"
                else:
                    tail = "; every new value compiles a new variant, up to the recompile limit (8), then it runs eagerly"
                yield self.report(
                    ff.path,
                    p.loc,
                    f"`{p.name}` of compiled `{fn.qualname}` is used in {used}: Dynamo specialises on it (guard `{guard}`){tail}",
                    project=project,
                    region=region,
                    severity=severity,
                    help="bucket the value, fix it at construction time, or pass it as a tensor",
                    # a tensor is not guarded by value: the fix removes the recompiles when the
                    # value varies (not when every call passes the same constant: one compile)
                    fix=_tensor_fix(ff, p) if dynamic_false and not (bounded and len(values) <= 1) else None,
                )

    invalid = (
        Example(
            """
import torch

@torch.compile
def unroll(x, n_steps: int):  # expect: TC203
    for _ in range(n_steps):
        x = torch.tanh(x)
    return x
""",
            run="for n in range(1, 12):\n    unroll(torch.randn(4), n)",
            compiles=8,
        ),
        Example(
            """
import torch

@torch.compile(dynamic=False)  # expect: TC207
def scale(x, alpha: float):  # expect: TC203
    return x * alpha + 1

outs = [scale(torch.ones(4), step / 10) for step in range(1, 12)]
""",
            compiles=8,
            title="a float under `dynamic=False`: each value compiles a variant",
            fixed="""
import torch

@torch.compile(dynamic=False)  # expect: TC207
def scale(x, alpha: torch.Tensor):  # expect: TC203
    return x * alpha + 1

outs = [scale(torch.ones(4), torch.tensor(step / 10, dtype=torch.float64)) for step in range(1, 12)]
""",
        ),
        Example(
            """
import torch

@torch.compile
def total(x, parts: list[torch.Tensor]):  # expect: TC203
    return x * len(parts)
""",
            run="for n in range(1, 12):\n    total(torch.randn(4), [torch.randn(2)] * n)",
            compiles=8,
            title="the length of a list argument is guarded even in arithmetic",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def scale(x, k: int):
    return x * k + x.new_zeros(k).sum()
""",
            run="for k in range(1, 12):\n    scale(torch.randn(4), k)",
            compiles=2,
            title="ints used as values or sizes become dynamic",
        ),
    )


def _tensor_fix(ff, p) -> Fix | None:
    """A float parameter used only as a value: pass it as a 0-d tensor (codemod ``float-arg-as-tensor``)."""
    torch_name = next((local for local, q in ff.aliases.items() if q == "torch"), None)
    if (
        torch_name is None
        or p.loc is None
        or not (p.ty.kind == T.SCALAR and p.ty.dtype == "float")
        or set(p.uses) != {"load"}
    ):
        return None
    return Fix(
        f"Pass `{p.name}` as a 0-d tensor (`{torch_name}.tensor(..., dtype={torch_name}.float64)`) at the calls "
        "(Dynamo does not guard a tensor's value: one compile instead of one per value)",
        (),
        Applicability.UNSAFE,
        codemod=(
            "float-arg-as-tensor",
            Span.of(p.loc.line, p.loc.col, p.loc.end_line, p.loc.end_col),
            torch_name,
        ),
    )
