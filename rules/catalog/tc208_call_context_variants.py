import dataclasses

from tclint.rules import variants
from tclint.rules.model import Confidence, RelatedLocation, Severity, Span
from tclint.rules.rule import Example, Family, Rule


class CallContextVariants(Rule):
    """
    ## What it does
    Reports, at the line that makes it, each guard that differs between the calls of a compiled
    callable because of the eager code around the calls: a call under `torch.no_grad()` (or
    `inference_mode`) and one outside, a call inside `autocast` and one outside, `.train()` and
    `.eval()` on a module whose graph depends on the mode (Dropout, BatchNorm, `self.training`),
    a `DataLoader` that keeps its smaller last batch, a bool argument drawn at run time, an int or
    float argument that changes between calls (compiled for its first value, then once more with
    it dynamic: 2 compiles, none after).  The
    message names the compiled callable and the guard; related locations point at the other side
    of the flip.  `tclint variants` lists the whole variant set of each compiled callable.

    ## Why is this bad?
    Each side is one more compiled variant, paid on first use: the first evaluation pass after
    training, the first request under `inference_mode`, the last batch of the first epoch.  The
    set is bounded (cached after), so the goal is to know it and warm every variant up before
    timing or serving, or to remove the flip.

    ## Example
    ```python
    model = torch.compile(Net())          # Net has a Dropout
    for x in batches:
        model(x)
    with torch.no_grad():                 # grad mode differs from the training calls
        model(xv)
    ```

    ## Use instead
    Warm up both variants before measuring, call the compiled model under one grad mode, pass
    `drop_last=True` (or `torch._dynamo.mark_dynamic(x, 0)`), or pass a flag as a tensor.

    ## Fix safety
    No automatic fix.

    ## References
    - https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html
    """

    code = "TC208"
    name = "call-context-variants"
    summary = "The eager code around calls of a compiled callable makes a bounded set of variants"
    family = Family.RECOMPILE
    default_severity = Severity.INFO
    region_only = False

    def project_check(self, project):
        # One finding per line that makes the variant, naming every compiled callable it affects:
        # a freeze in a function that takes any model (``def prepare(model: PreTrainedModel)``)
        # affects every compiled forward of the package, and one line each was thousands of
        # findings on one line of transformers.
        groups: dict[
            tuple[str, int, int, str, str], list[tuple[str, variants.Variants, variants.Dimension]]
        ] = {}
        for key, v in sorted(variants.variants(project).items()):
            for dim in v.dims:
                if not dim.bounded or not dim.sources:
                    continue
                if dim.kind == "arg" and not any("passes const:" not in s.note for s in dim.sources):
                    continue  # distinct constants only: TC206's finding
                first = dim.sources[0]
                group = (first.path, first.loc.line, first.loc.col, dim.kind, dim.guard)
                groups.setdefault(group, []).append((key, v, dim))
        for members in groups.values():
            key, v, dim = members[0]
            first = dim.sources[0]
            others = [s for s in dim.sources[1:] if (s.path, s.loc.line) != (first.path, first.loc.line)][:4]
            related = tuple(
                RelatedLocation(s.path, Span.of(s.loc.line, s.loc.col, s.loc.end_line, s.loc.end_col), s.note)
                for s in others
            )
            values = "/".join(dim.values)
            more = len(members) - 1
            who = v.compiled_as() + (
                f" and {more} more compiled callable{'s' if more > 1 else ''}" if more else ""
            )
            diagnostic = self.report(
                first.path,
                first.loc,
                (
                    f"{first.note}: {who} {'get' if more else 'gets'} another variant here (guard "
                    f"`{dim.guard}`: {values}); overall, {v.summary()}"
                ),
                related=related,
                extra={
                    "target": key,
                    "targets": [member[0] for member in members],
                    # a dropped root's callees compiled on their own: the probe's recompiles of
                    # those frames are what this finding predicts (runtime_probe.merge)
                    "frames": sorted(
                        {f for member in members for f in variants.frames_on_their_own(project, member[0])}
                    ),
                    "dimension": dim.kind,
                    "variants": v.count,
                },
                help=dim.advice,
            )
            if all(variants.GUESSED_MODULE in s.note for s in dim.sources):
                # The module whose parameters change could not be told: counted for every
                # compiled module method as a guess, so shown only with min-confidence = "low".
                diagnostic = dataclasses.replace(diagnostic, confidence=Confidence.LOW)
            yield diagnostic

    invalid = (
        Example(
            """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.fc(x))

model = torch.compile(Net())

def train_then_validate(x):
    model(x).sum().backward()
    with torch.no_grad():  # expect: TC208
        return model(x)
""",
            run="train_then_validate(torch.randn(4, 8))",
            compiles=2,
            guard="grad_mode",
            title="grad mode differs between the training call and the validation call",
        ),
        Example(
            """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.fc(x))

net = Net()
model = torch.compile(net)

def epochs(x):
    for _ in range(3):
        net.train()
        model(x)
        net.eval()  # expect: TC208
        model(x)
""",
            run="epochs(torch.randn(4, 8))",
            compiles=2,
            guard=".training",
            title="train/eval toggled on the original module between calls",
        ),
        Example(
            """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.tanh(self.fc(x))

model = torch.compile(Net())

def adversarial_step(x):
    model(x).sum()
    adv = x.clone().requires_grad_()
    model(adv).sum().backward()  # expect: TC208
    return adv.grad
""",
            run="for _ in range(3): adversarial_step(torch.randn(4, 8))",
            compiles=2,
            guard="requires_grad mismatch",
            title="an adversarial input that requires grad at some calls only",
        ),
        Example(
            """
import torch

@torch.compile
def normalise(x):
    return (x - x.mean()) / (x.std() + 1e-5)

def evaluate(batches):
    for x in batches:
        normalise(x)
        normalise(x.double())  # expect: TC208
""",
            run="evaluate([torch.randn(4, 8) for _ in range(3)])",
            compiles=2,
            guard="dtype mismatch",
            title="the same compiled function called with float32 and float64 inputs",
        ),
        Example(
            """
import torch
import torch.nn as nn

class StaticCache(nn.Module):
    def __init__(self, dim=8, max_len=16):
        super().__init__()
        self.kv = nn.Linear(dim, dim)
        self.register_buffer("keys", torch.zeros(1, max_len, dim))

    def forward(self, x, pos):
        self.keys.index_copy_(1, pos, self.kv(x)[:, None])  # expect: TC208
        return self.keys.sum(1)

cache = torch.compile(StaticCache())

def decode(x):
    with torch.no_grad():
        pass
    for i in range(4):
        cache(x, torch.tensor([i]))
""",
            run="decode(torch.randn(1, 8))",
            compiles=2,
            guard="requires_grad mismatch",
            title="a grad-carrying value written into a buffer: the buffer requires grad from the second call",
        ),
        Example(
            """
import torch

FLAGS = {"fast": False}

@torch.compile
def step(x):
    return x * 2 if FLAGS["fast"] else x + 1

def train(x):
    for i in range(6):
        FLAGS["fast"] = i % 2 == 0  # expect: TC208
        step(x)
""",
            run="train(torch.randn(4))",
            compiles=2,
            guard="FLAGS",
            title="a module-level flag dict flipped between calls: 2 variants",
        ),
        Example(
            """
import torch

@torch.compile
def scale(x, steps):
    return x * steps

def run(x):
    for steps in range(1, 6):
        scale(x, steps)  # expect: TC208
""",
            run="run(torch.randn(4))",
            compiles=2,
            guard="steps",
            title="an int argument that changes: its first value, then dynamic (2 compiles, not 5)",
        ),
    )
    valid = (
        Example(
            """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.fc(x))

net = Net()
model = torch.compile(net)

def serve(requests):
    net.eval()
    with torch.no_grad():
        return [model(x) for x in requests]
""",
            run="serve([torch.randn(4, 8) for _ in range(5)])",
            compiles=1,
            title="one grad mode, one module mode: one variant",
        ),
        Example(
            """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.fc(x))

net = Net()
model = torch.compile(net)

def epochs(x):
    for _ in range(3):
        net.train()
        model(x)
        net.eval()
        model(x)
""",
            run="epochs(torch.randn(4, 8))",
            compiles=1,
            title="train/eval on a module without Dropout or BatchNorm: the graph does not read it, one compile",
        ),
    )
