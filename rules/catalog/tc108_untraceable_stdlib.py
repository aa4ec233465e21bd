from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.types import PY_RANDOM_SKIPPED

# measured on torch 2.13 (see the truth table and the measurement notes)
SKIPPED = {
    "time.time": "GB0007", "time.perf_counter": "GB0007", "time.monotonic": "GB0007",
    "time.time_ns": "GB0007", "time.perf_counter_ns": "GB0007", "time.process_time": "GB0007",
    "time.monotonic_ns": "GB0007", "time.sleep": "GB0007",
    "random.seed": "GB0007", "os.getpid": "GB0007", "uuid.uuid4": "GB0007", "uuid.uuid1": "GB0007",
    "torch.manual_seed": "GB0007", "torch.cuda.manual_seed": "GB0007", "torch.cuda.manual_seed_all": "GB0007",
    "torch.seed": "GB0007", "torch.jit.isinstance": "GB0007",
    "datetime.datetime.now": "GB0156", "datetime.datetime.utcnow": "GB0156", "datetime.now": "GB0156",
    "numpy.random.rand": "GB0033", "numpy.random.randn": "GB0033", "numpy.random.uniform": "GB0033",
    "numpy.random.randint": "GB0033", "numpy.random.normal": "GB0033", "numpy.random.random": "GB0033",
    "numpy.random.choice": "GB0033", "numpy.random.random_sample": "GB0033",
} | dict.fromkeys(PY_RANDOM_SKIPPED, "GB0007")  # fmt: skip

# NumPy's module-level random functions that torch._numpy.random does not implement (numpy 2.4's
# ``numpy.random`` functions minus torch 2.13's ``torch._numpy.random.__all__``; re-derived by
# tests/rules/test_numpy_random_untraced.py): Dynamo breaks at each call, "attempted to trace numpy
# function unsupported by PyTorch" (GB0294; measured for geometric, poisson, binomial, beta,
# permutation, default_rng, get_state, ...), whether or not the value is used.
NUMPY_RANDOM_UNTRACED = frozenset(
    {
        "beta", "binomial", "bytes", "chisquare", "default_rng", "dirichlet", "exponential", "f",
        "gamma", "geometric", "get_bit_generator", "get_state", "gumbel", "hypergeometric", "laplace",
        "logistic", "lognormal", "logseries", "multinomial", "multivariate_normal",
        "negative_binomial", "noncentral_chisquare", "noncentral_f", "pareto", "permutation",
        "poisson", "power", "random_integers", "ranf", "rayleigh", "set_bit_generator", "set_state",
        "standard_cauchy", "standard_exponential", "standard_gamma", "standard_normal", "standard_t",
        "triangular", "vonmises", "wald", "weibull", "zipf",
    }
)  # fmt: skip
SKIPPED |= dict.fromkeys((f"numpy.random.{n}" for n in NUMPY_RANDOM_UNTRACED), "GB0294")


def _guarded_confidence(ctx) -> int:
    """``self.layer_dropout > 0. and random() < self.layer_dropout``: the call runs only when the
    Python values before it in the ``and`` are true -- capped as TC102 caps a tensor test there
    (low for a rate compared with zero, medium for another flag, no cap for ``self.training``)."""
    from tclint.rules import types as T
    from tclint.rules.catalog.tc102_data_dependent_branch import _guard_confidence

    conf = T.HIGH
    for guard in ctx.scope.guards:
        cap = _guard_confidence(ctx, guard)
        if cap is not None:
            conf = max(conf, cap)
    return conf


class UntraceableStdlibCall(Rule):
    """
    ## What it does
    Flags calls Dynamo skips or cannot trace that model code uses for timing, seeding and
    randomness: `time.time()` / `perf_counter()` / `monotonic()` / `sleep()`, `random.seed()`,
    `torch.manual_seed()`, `os.getpid()`, `uuid.uuid4()`, `datetime.now()`, `np.random.*`
    draws and the Python `random` draws Dynamo does not trace: `random.random()`, `gauss()`,
    `choice()`, `choices()`, `sample()`, `shuffle()`, `getrandbits()` and the `*variate()` family;
    also `torch.jit.isinstance()`, which TorchScript-compatible model code uses to refine a type
    (MONAI's `if x_e is not None and torch.jit.isinstance(x_e, torch.Tensor):`).

    ## Why is this bad?
    Each one breaks the graph where it is called: the time and seeding functions and those
    `random` draws are marked as skipped (GB0007: `random.random` is a C method bound to the
    module's generator, the others live in `random.py`, a file Dynamo skips; so is
    `torch.jit.isinstance`, in `torch/jit/__init__.py`), `datetime.now()`
    is an unsupported method call (GB0156), the NumPy random draws torch's NumPy layer
    implements (`np.random.rand`, `randn`, `uniform`, `normal`, ...) are data-dependent operators
    (GB0033) and the other `np.random` functions (`geometric`, `poisson`, `binomial`,
    `permutation`, `default_rng`, ...) are NumPy functions Dynamo cannot trace (GB0294).  Timing
    inside compiled code also measures nothing useful: the graph around it runs asynchronously or
    fused.

    Not flagged, because they do not break in torch 2.13: `random.uniform()` / `random.randint()`
    / `random.randrange()` used as values (Dynamo replays them as run-time values; branching on
    them is TC102), `np.random.seed()` and `torch.rand*`.  A branch on a skipped draw
    (`if random.random() < p:`) breaks at the call, so it is this rule, not TC102.

    ## Example
    ```python
    @torch.compile
    def step(x):
        t0 = time.perf_counter()
        y = x @ x.T
        return y, time.perf_counter() - t0
    ```

    ## Use instead
    Time and seed in the eager caller; draw randomness with `torch.rand` / `torch.randint`
    (which stay in the graph) and a `torch.Generator` if you need reproducibility.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0007.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0033.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0294.html
    """

    code = "TC108"
    name = "untraceable-stdlib-call"
    summary = "A timing, seeding or random-draw call Dynamo cannot trace"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0007", "GB0156", "GB0033", "GB0294")
    default_severity = Severity.WARNING
    CALLS = frozenset(SKIPPED) | frozenset(
        k.replace("numpy.", "np.") for k in SKIPPED if k.startswith("numpy.")
    )

    def check_call(self, node, ctx, qualified, method):
        gb = SKIPPED.get(qualified) or SKIPPED.get((qualified or "").replace("np.", "numpy.", 1))
        if gb is None:
            return
        if qualified.startswith(("numpy.random", "np.random")):
            hint = "draw with torch.rand / torch.randint instead (they stay in the graph)"
        elif qualified in PY_RANDOM_SKIPPED:
            hint = (
                "draw with torch.rand / torch.randint (they stay in the graph), or draw in the"
                " eager caller and pass the value in"
            )
        elif qualified == "torch.jit.isinstance":
            hint = "use the builtin isinstance (Dynamo traces it; TorchScript refines types with it too)"
        elif "seed" in qualified:
            hint = "seed in the eager caller, or pass a torch.Generator"
        else:
            hint = "time and log in the eager caller"
        ctx.report(
            self.code,
            node,
            f"`{qualified}()` cannot be traced: the graph breaks here",
            gb_ids=(gb,),
            help=hint,
            confidence=_guarded_confidence(ctx),
        )

    invalid = (
        Example(
            """
import time
import torch

@torch.compile
def timed(x):
    y = x @ x.T
    elapsed = time.perf_counter()  # expect: TC108
    return y, elapsed
""",
            run="timed(torch.randn(4, 4))",
        ),
        Example(
            """
import numpy as np
import torch

@torch.compile
def jitter(x):
    y = x * 2
    r = np.random.uniform()  # expect: TC108
    return y * r
""",
            run="jitter(torch.randn(4))",
            gb=("GB0033",),
            title="NumPy random draws",
        ),
        Example(
            """
import numpy as np
import torch

@torch.compile
def power_series(x, p: float = 0.5):
    n = np.random.geometric(p, 1)  # expect: TC108
    return x * float(n.max())
""",
            run="power_series(torch.randn(4))",
            gb=("GB0294",),
            title="a NumPy draw torch's NumPy layer does not implement",
        ),
        Example(
            """
import torch

@torch.compile
def reseed(x):
    y = x * 2
    torch.manual_seed(0)  # expect: TC108
    return y + torch.rand(4)
""",
            run="reseed(torch.randn(4))",
        ),
        Example(
            """
import random
import torch

@torch.compile
def layer_drop(x, p: float = 0.1):
    y = torch.relu(x)
    if random.random() < p:  # expect: TC108
        return y
    return y * 2
""",
            run="layer_drop(torch.randn(4))",
            title="a Python random draw Dynamo skips",
        ),
    )
    valid = (
        Example(
            """
import random
import numpy as np
import torch

@torch.compile
def jitter(x):
    np.random.seed(0)
    scale = random.uniform(0.9, 1.1)
    return x * scale + torch.rand(4)
""",
            run="jitter(torch.randn(4))",
            title="Python random values and np.random.seed are traced",
        ),
    )
