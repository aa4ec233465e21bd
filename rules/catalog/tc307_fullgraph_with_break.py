from tclint.rules import registry
from tclint.rules.catalog.tc103_tolist import captured_when_scalars_are
from tclint.rules.model import RelatedLocation, Severity
from tclint.rules.project import span_of
from tclint.rules.rule import Example, Family, Lifecycle, Rule

# Breaks that fullgraph=True tolerates, because it turns on scalar and dynamic-output-shape
# capture (measured: .item() not in control flow, float(t), nonzero, unique, boolean masks,
# int .tolist()).
TOLERATED = {"TC101", "TC109"}


class FullgraphWithGraphBreak(Rule):
    """
    ## What it does
    Flags `torch.compile(..., fullgraph=True)` on code where tclint finds a graph break that
    fullgraph does not tolerate.

    ## Why is this bad?
    With `fullgraph=True` a graph break is an error: the first call raises
    `torch._dynamo.exc.Unsupported`.  fullgraph also turns on `capture_scalar_outputs` and
    `capture_dynamic_output_shape_ops`, so `.item()` / `float(t)` not used in control flow,
    `nonzero`, `unique` and boolean masks compile fine under it and are not counted; control flow
    on their values, float `.tolist()`, `print`, logging and the other breaks still raise.

    ## Example
    ```python
    @torch.compile(fullgraph=True)
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    ```

    ## Use instead
    Remove the break (the TC1xx finding at the same place says how), or drop `fullgraph=True`
    if the break is acceptable.

    ## Fix safety
    No automatic fix.

    ## References
    - https://docs.pytorch.org/docs/stable/generated/torch.compile.html
    """

    code = "TC307"
    name = "fullgraph-with-graph-break"
    summary = "fullgraph=True on code that graph-breaks: the compiled call raises"
    family = Family.COMPILE_API
    default_severity = Severity.ERROR
    region_only = False

    def project_check(self, project):
        by_site: dict[str, list] = {}
        for key, region in project.regions.items():
            if not region.fullgraph or region.site is None:
                continue
            ff, fn = project.functions[key]
            for cand in ff.candidates:
                if cand.func != fn.qualname or cand.code in TOLERATED:
                    continue
                rule = registry.get(cand.code)
                if (
                    rule is None
                    or rule.family is not Family.GRAPH_BREAK
                    or rule.lifecycle is not Lifecycle.STABLE
                ):
                    continue
                if cand.code == "TC103" and captured_when_scalars_are(cand):
                    continue
                if cand.requires:
                    continue
                by_site.setdefault(region.site.id, []).append((ff, cand))
        for site_id, found in by_site.items():
            if site_id not in project.sites:
                continue
            sff, site = project.sites[site_id]
            ff, cand = min(found, key=lambda fc: (fc[0].path, fc[1].loc.line))
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            yield self.report(
                sff.path,
                site.loc,
                f"`{site.text}` uses fullgraph=True, but the code breaks at {ff.path}:{cand.loc.line} ({cand.code}){more}: the compiled call raises torch._dynamo.exc.Unsupported",
                related=tuple(
                    RelatedLocation(f.path, span_of(c.loc), f"{c.code}: {c.message}") for f, c in found[:10]
                ),
                help="remove the break, or drop fullgraph=True",
            )

    invalid = (
        Example(
            """
import torch

@torch.compile(fullgraph=True)  # expect: TC307
def f(x):
    if x.sum() > 0:  # expect: TC102
        return x
    return -x
""",
            run="f(torch.randn(4))",
            raises="Unsupported",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile(fullgraph=True)
def f(x):
    s = x.sum().item()
    return x.nonzero(), x * s
""",
            run="f(torch.randn(4))",
            raises="never",
            title="scalar and dynamic-shape capture are on under fullgraph",
        ),
    )
