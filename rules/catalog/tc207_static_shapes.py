from tclint.rules.model import Applicability, Fix, Severity, Span
from tclint.rules.rule import Example, Family, Rule


class StaticShapes(Rule):
    """
    ## What it does
    Flags settings that make every new input shape compile a new variant:
    `torch.compile(..., dynamic=False)` and `torch._dynamo.config.automatic_dynamic_shapes =
    False`.  A compiled function with `dynamic=False` that is called inside a loop (where batch
    sizes and sequence lengths usually vary) is a warning; otherwise a note.

    ## Why is this bad?
    By default Dynamo compiles the first shape statically, then makes a changing dimension
    dynamic: a batch size that varies costs 2 compiles.  With `dynamic=False` or automatic dynamic
    shapes turned off, each distinct size is its own compile (measured: 5 sizes, 5 compiles) until
    the recompile limit (8), after which the function runs eagerly.  Right for a fixed-shape
    CUDA-graph deployment, wrong for variable sequence lengths.

    ## Example
    ```python
    encoder = torch.compile(Encoder(), dynamic=False)
    for batch in loader:          # variable sequence lengths
        encoder(batch.tokens)
    ```

    ## Use instead
    Keep the default (`dynamic=None`), or bucket/pad lengths to a few sizes and warm them up, or
    mark the varying dimension with `torch._dynamo.mark_dynamic(x, 1, min=..., max=...)` *before*
    the call.

    ## Fix safety
    Alternatives for `dynamic=False` (the first is the one `--fix --unsafe-fixes` applies):
    1. `dynamic=True` (unsafe): one dynamic-shape compile serves every size, but a kernel
       specialised for one shape can be faster, and a fixed-shape deployment (CUDA graphs) may
       have meant it;
    2. the option removed (unsafe): Dynamo's default, a second compile makes a changing
       dimension dynamic;
    3. keep it and mark the varying dimension with `torch._dynamo.mark_dynamic(x, dim)` before
       the call (display-only: tclint does not know which dimension varies).

    ## References
    - https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html
    """

    code = "TC207"
    name = "static-shape-recompiles"
    summary = "Static shapes requested: every new input size compiles a new variant"
    family = Family.RECOMPILE
    default_severity = Severity.INFO
    fix_applicability = Applicability.UNSAFE
    region_only = False

    def visit_Assign(self, node, ctx):
        for target in node.targets:
            q = ctx.qualify(target)
            if (
                q == "torch._dynamo.config.automatic_dynamic_shapes"
                and getattr(node.value, "value", None) is False
            ):
                ctx.report(
                    self.code,
                    node,
                    "automatic dynamic shapes are off: every distinct input shape compiles a new variant, up to the recompile limit",
                    help="leave automatic_dynamic_shapes on, or bucket input shapes",
                    severity=Severity.WARNING,
                )

    def finalize(self, cand, env):
        return cand

    def project_check(self, project):
        from tclint.rules import callsites, variants

        in_loop: dict[str, bool] = {}
        for call in callsites.calls_into_roots(project):
            in_loop[call.root_key] = in_loop.get(call.root_key, False) or call.edge.in_loop
        for site_id, keys in project.site_targets.items():
            ff, site = project.sites[site_id]
            if site.options.get("dynamic") is not False:
                continue
            looped = any(in_loop.get(k, False) for k in keys)
            names = ", ".join(sorted({project.functions[k][1].qualname for k in keys})) or "it"
            yield self.report(
                ff.path,
                site.loc,
                (
                    f"`dynamic=False` on {names}: every distinct input shape compiles a new variant (up to the recompile limit, then eager)"
                    + (
                        "; it is called in a loop, where sizes usually vary: the 9th new size hits the recompile limit (8) "
                        "and from then on it runs eagerly"
                        if looped
                        else ""
                    )
                ),
                severity=Severity.ERROR if looped else None,
                extra={
                    "target": keys[0] if keys else None,
                    "looped": looped,
                    # a size guard is what fails (runtime_probe.merge), on the compiled function or,
                    # where a break drops its frame, on the functions it calls (compiled on their own)
                    "dimension": "batch",
                    "frames": sorted(
                        {*keys[1:], *(f for k in keys for f in variants.frames_on_their_own(project, k))}
                    ),
                },
                help="keep dynamic=None unless shapes are fixed; bucket lengths, or mark_dynamic before the call",
                fix=_dynamic_fixes(site.loc),
            )

    invalid = (
        Example(
            """
import torch

def encode(x):
    return x.cumsum(0) * 2

encoder = torch.compile(encode, dynamic=False)  # expect: TC207

def run_all():
    outs = []
    for n in (8, 16, 32, 64, 128):
        outs.append(encoder(torch.ones(n)))
    return outs
""",
            run="outs = run_all()",
            compiles=5,
            fixed="""
import torch

def encode(x):
    return x.cumsum(0) * 2

encoder = torch.compile(encode, dynamic=True)  # expect: TC207

def run_all():
    outs = []
    for n in (8, 16, 32, 64, 128):
        outs.append(encoder(torch.ones(n)))
    return outs
""",
        ),
    )
    valid = (
        Example(
            """
import torch

def encode(x):
    return x.cumsum(0) * 2

encoder = torch.compile(encode)

def run_all():
    for n in (8, 16, 32, 64, 128):
        encoder(torch.randn(n))
""",
            run="run_all()",
            compiles=2,
        ),
    )


def _dynamic_fixes(loc) -> tuple[Fix, ...]:
    """The alternatives for `dynamic=False` at the compile call ``loc`` (see Fix safety)."""
    at = Span.of(loc.line, loc.col, loc.end_line, loc.end_col)
    return (
        Fix(
            "Compile with dynamic shapes (`dynamic=True`)",
            (),
            Applicability.UNSAFE,
            codemod=("compile-keyword", at, "dynamic", "True"),
        ),
        Fix(
            "Remove `dynamic=False` (a second compile makes a changing dimension dynamic)",
            (),
            Applicability.UNSAFE,
            codemod=("compile-keyword", at, "dynamic", ""),
        ),
        Fix(
            "Keep `dynamic=False` and call `torch._dynamo.mark_dynamic(x, dim)` on the varying dimension before the call",
            (),
            Applicability.DISPLAY_ONLY,
        ),
    )
