from tclint.rules import callsites, variants
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule


class BoundedVariants(Rule):
    """
    ## What it does
    Points out compiled functions whose call sites pass a few distinct constant values to a
    specialised parameter (`training=True` here, `training=False` there; two modes; three sizes):
    a bounded number of compiled variants.

    ## Why is this bad?
    It is not, once warmed up: each value is one compile, paid on first use.  The hint exists so
    that benchmarks and serving warm-up cover every variant (otherwise the first request in the
    other mode pays a full compile), and so that the variant count is a known number.

    ## Example
    ```python
    @torch.compile
    def project(x, w, training: bool):
        return F.dropout(x @ w, 0.1, training)

    project(x, w, True)
    project(x, w, False)
    ```

    ## Use instead
    Keep it, and warm up every variant before measuring or serving.

    ## Fix safety
    No fix needed.

    ## References
    - https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html
    """

    code = "TC206"
    name = "bounded-compiled-variants"
    summary = "A compiled function is called with a few distinct values of a specialised argument"
    family = Family.RECOMPILE
    default_severity = Severity.HINT
    region_only = False

    def project_check(self, project):
        values: dict[tuple[str, str], set[str]] = {}
        params = {}
        whole = variants.dropped_whole(project)
        for call in callsites.calls_into_roots(project):
            if call.root_key in whole:
                continue  # Dynamo drops the frame before any graph of it: its arguments guard nothing
            for param, kind in callsites.map_args(call):
                if kind.startswith("const:"):
                    values.setdefault((call.root_key, param.name), set()).add(kind[6:])
                    params[(call.root_key, param.name)] = param
        for (key, name), vals in sorted(values.items()):
            if len(vals) < 2:
                continue
            param = params[(key, name)]
            region = project.regions[key]
            if callsites.specialisation(param, region.options.get("dynamic") is False) is None:
                continue
            ff, fn = project.functions[key]
            where = param.loc or fn.name_loc
            listed = ", ".join(sorted(vals))
            yield self.report(
                ff.path,
                where,
                f"compiled `{fn.qualname}` is called with {len(vals)} values of `{name}` ({listed}): {len(vals)} variants; warm each one up before measuring or serving",
            )

    invalid = (
        Example(
            """
import torch
import torch.nn.functional as F

@torch.compile
def project(x, training: bool):  # expect: TC206
    return F.dropout(x * 2, 0.1, training)

project(torch.randn(4), True)
project(torch.randn(4), False)
""",
            compiles=2,
        ),
    )
    valid = (
        Example(
            """
import torch
import torch.nn.functional as F

@torch.compile
def project(x, training: bool):
    return F.dropout(x * 2, 0.1, training)

project(torch.randn(4), True)
project(torch.randn(4), True)
""",
            compiles=1,
        ),
    )
