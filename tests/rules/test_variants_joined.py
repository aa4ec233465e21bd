"""Variant counts that must not over-approximate (issue 12): a requires_grad change counts only
for the compiled callables that read the frozen module's parameters, and dimensions that always
change together at the calls (train/eval with grad mode, grad mode with autocast, an input that
requires grad on one call) count the combinations the calls make, not their product.

Each program's compile counts per function were measured with torch 2.13 CPU (backend eager);
the static test checks the prediction against them, the ``dynamo`` test re-measures them."""

from __future__ import annotations

import textwrap

import pytest
from tclint.rules.variants import variants

from tests.helpers.lintutil import lint_code

GAN = """
import torch
import torch.nn as nn


class Gen(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, z):
        return torch.tanh(self.fc(z))


class Disc(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x)
"""

DROPNET = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.fc(x))


model = torch.compile(Net(), backend="eager")
"""

# LoRA: the base frozen and the adapter made trainable once, before the compile and the loop
LORA = """
import torch
import torch.nn as nn


class Adapted(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Linear(4, 4)
        self.lora = nn.Linear(4, 4, bias=False)

    def forward(self, x):
        return self.base(x) + self.lora(x)


def main():
    model = Adapted()
    model.base.requires_grad_(False)
    for p in model.lora.parameters():
        p.requires_grad = True
    cmodel = torch.compile(model, backend="eager")
    for step in range(4):
        cmodel(torch.randn(8, 4)).sum().backward()
"""

# an encoder frozen once, in the loop, after two compiled calls
FREEZE_LATE = """
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


def main():
    enc = Encoder()
    cenc = torch.compile(enc, backend="eager")
    x = torch.randn(2, 4)
    for epoch in range(4):
        if epoch == 2:
            enc.requires_grad_(False)
        cenc(x)
"""

LORA_MODULE_LEVEL = """
import torch
import torch.nn as nn


class Adapted(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Linear(4, 4)
        self.lora = nn.Linear(4, 4, bias=False)

    def forward(self, x):
        return self.base(x) + self.lora(x)


model = Adapted()
cmodel = torch.compile(model, backend="eager")
model.base.requires_grad_(False)
for p in model.lora.parameters():
    p.requires_grad_(True)


def main():
    for step in range(4):
        cmodel(torch.randn(8, 4)).sum().backward()
"""

NET = """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)
"""

TNET = """
import torch
import torch.nn as nn


class TNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, t):
        return self.fc(x) * t
"""

# (id, program, {compiled qualname: compiles measured})
CASES = [
    (
        "gan-freezes-D-through-a-helper",
        GAN
        + """
G = Gen()
D = Disc()
cG = torch.compile(G, backend="eager")
cD = torch.compile(D, backend="eager")


def set_requires_grad(net, flag):
    for p in net.parameters():
        p.requires_grad_(flag)


def main():
    for step in range(3):
        z = torch.randn(8, 4)
        set_requires_grad(D, True)
        (cD(torch.randn(8, 4)).mean() - cD(cG(z).detach()).mean()).backward()
        set_requires_grad(D, False)
        (-cD(cG(z)).mean()).backward()
""",
        {"Disc.forward": 2, "Gen.forward": 1},
    ),
    (
        # Head inlines the Encoder compiled on its own too (regions keep Encoder.forward in the
        # encoder's own region): its graph reads the frozen parameters and compiles again.
        "frozen-module-inside-another-compiled-one",
        """
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class Head(nn.Module):
    def __init__(self, enc):
        super().__init__()
        self.enc = enc
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        return self.out(self.enc(x))


class Other(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


def main():
    enc = Encoder()
    cenc = torch.compile(enc, backend="eager")
    chead = torch.compile(Head(enc), backend="eager")
    cother = torch.compile(Other(), backend="eager")
    x = torch.randn(2, 4)
    for epoch in range(4):
        enc.requires_grad_(epoch < 2)
        cenc(x)
        chead(x)
        cother(x)
""",
        {"Encoder.forward": 2, "Head.forward": 2, "Other.forward": 1},
    ),
    (
        "gan-locals-in-main",
        GAN
        + """
def set_requires_grad(net, flag):
    for p in net.parameters():
        p.requires_grad = flag


def main():
    G = Gen()
    D = Disc()
    cG = torch.compile(G, backend="eager")
    cD = torch.compile(D, backend="eager")
    for step in range(3):
        z = torch.randn(8, 4)
        D.requires_grad_(True)
        (cD(torch.randn(8, 4)).mean() - cD(cG(z).detach()).mean()).backward()
        set_requires_grad(D, False)
        (-cD(cG(z)).mean()).backward()
""",
        {"Disc.forward": 2, "Gen.forward": 1},
    ),
    (
        "gan-trainer-attributes",
        GAN
        + """
class Trainer:
    def __init__(self):
        self.G = Gen()
        self.D = Disc()
        self.cG = torch.compile(self.G, backend="eager")
        self.cD = torch.compile(self.D, backend="eager")

    def step(self):
        z = torch.randn(8, 4)
        for p in self.D.parameters():
            p.requires_grad = True
        (self.cD(torch.randn(8, 4)).mean() - self.cD(self.cG(z).detach()).mean()).backward()
        for p in self.D.parameters():
            p.requires_grad = False
        (-self.cD(self.cG(z)).mean()).backward()


def main():
    t = Trainer()
    for _ in range(3):
        t.step()
""",
        {"Disc.forward": 2, "Gen.forward": 1},
    ),
    (
        "staged-fine-tune-of-one-model-next-to-a-critic",
        """
import torch
import torch.nn as nn


class Adapted(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Linear(4, 4)
        self.lora = nn.Linear(4, 4, bias=False)

    def forward(self, x):
        return self.base(x) + self.lora(x)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x)


model = Adapted()
critic = Critic()
cmodel = torch.compile(model, backend="eager")
ccritic = torch.compile(critic, backend="eager")


def main():
    for epoch in range(4):
        model.base.requires_grad_(epoch >= 2)
        ccritic(cmodel(torch.randn(8, 4))).mean().backward()
""",
        {"Adapted.forward": 2, "Critic.forward": 1},
    ),
    # when the requires_grad changes run: before any call they are the state every call sees;
    # one value set after calls is a change from the state at the first call
    ("lora-frozen-once-before-the-compile", LORA, {"Adapted.forward": 1}),
    ("lora-frozen-after-the-compile-before-the-first-call", LORA_MODULE_LEVEL, {"Adapted.forward": 1}),
    (
        "lora-base-unfrozen-after-calls",
        LORA.replace(
            "        cmodel(",
            "        if step == 2:\n            model.base.requires_grad_(True)\n        cmodel(",
        ),
        {"Adapted.forward": 2},
    ),
    (
        "lora-base-frozen-again-after-calls",  # already frozen at the first call: no change
        LORA.replace(
            "        cmodel(",
            "        if step == 2:\n            model.base.requires_grad_(False)\n        cmodel(",
        ),
        {"Adapted.forward": 1},
    ),
    (
        "lora-set-by-a-factory-the-compile-site-calls",  # a computed flag, in a .parameters() loop
        LORA.split("def main")[0]
        + """def inject(model):
    for n, p in model.named_parameters():
        p.requires_grad = n.startswith("lora")
    return model


def main():
    cmodel = torch.compile(inject(Adapted()), backend="eager")
    for step in range(4):
        cmodel(torch.randn(8, 4)).sum().backward()
""",
        {"Adapted.forward": 1},
    ),
    ("frozen-once-after-compiled-calls", FREEZE_LATE, {"Encoder.forward": 2}),
    (
        "made-trainable-after-calls-of-a-module-built-trainable",  # as built: True, no change
        FREEZE_LATE.replace("enc.requires_grad_(False)", "enc.fc.requires_grad_(True)"),
        {"Encoder.forward": 1},
    ),
    (
        "train-then-eval-under-no-grad-each-epoch",
        DROPNET
        + """
def main():
    for epoch in range(3):
        model.train()
        for _ in range(2):
            model(torch.randn(8, 4)).sum().backward()
        model.eval()
        with torch.no_grad():
            for _ in range(2):
                model(torch.randn(8, 4))
""",
        {"Net.forward": 2},
    ),
    (
        "eval-also-called-in-grad-mode",  # a third combination: eval + grad (a saliency check)
        DROPNET
        + """
def main():
    for epoch in range(3):
        model.train()
        for _ in range(2):
            model(torch.randn(8, 4)).sum().backward()
        model.eval()
        model(torch.randn(8, 4)).sum().backward()
        with torch.no_grad():
            model(torch.randn(8, 4))
""",
        {"Net.forward": 3},
    ),
    (
        "periodic-validation-that-restores-train-mode",
        DROPNET
        + """
def main():
    model.train()
    for step in range(6):
        model(torch.randn(8, 4)).sum().backward()
        if step % 3 == 2:
            model.eval()
            with torch.no_grad():
                model(torch.randn(8, 4))
            model.train()
""",
        {"Net.forward": 2},
    ),
    (
        "validation-that-leaves-eval-mode-on",  # the training calls after it run in eval mode
        DROPNET
        + """
def main():
    model.train()
    for step in range(6):
        model(torch.randn(8, 4)).sum().backward()
        if step % 3 == 2:
            model.eval()
            with torch.no_grad():
                model(torch.randn(8, 4))
""",
        {"Net.forward": 3},
    ),
    (
        "warm-up-under-no-grad-then-inference-mode-with-some-autocast",
        """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


model = torch.compile(Net(), backend="eager")


def main():
    x = torch.randn(8, 4)
    with torch.no_grad():
        model(x)
    for i in range(6):
        with torch.inference_mode():
            if i % 3 == 0:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    model(x)
            else:
                model(x)
""",
        {"Net.forward": 3},
    ),
    (
        "saliency-input-in-grad-mode-plain-input-under-no-grad",
        DROPNET.replace("self.drop(self.fc(x))", "self.fc(x)")
        + """
def main():
    x = torch.randn(8, 4)
    for i in range(4):
        model(x.clone().requires_grad_()).sum().backward()
        with torch.no_grad():
            model(x)
""",
        {"Net.forward": 2},
    ),
]

AGENT = """
import torch
import torch.nn as nn


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)

    def forward(self, obs):
        return self.net(obs)

    def act(self, obs):
        with torch.no_grad():
            return self(obs)


def main():
    agent = Agent()
    agent.compile(backend="eager")
    obs = torch.randn(3, 4)
    for _ in range(3):
        agent(obs).sum().backward()
        agent.act(obs)
"""

# calls of a module compiled in place (`m.compile()` compiles its __call__) made through another
# name: `self(obs)` in its own method, `self.encoder(src)` in the module that holds it
CASES += [
    ("self-call-after-in-place-compile", AGENT, {"Agent.forward": 2}),
    (
        "self-forward-bypasses-the-in-place-compile",
        AGENT.replace("return self(obs)", "return self.forward(obs)"),
        {"Agent.forward": 1},
    ),
    (
        "submodule-compiled-in-place-called-through-self",
        """
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, src):
        return torch.relu(self.fc(src))


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(4, 2)

    def forward(self, src):
        return self.head(self.encoder(src))

    def translate(self, src):
        with torch.no_grad():
            return self.head(self.encoder(src))


def main():
    model = Seq2Seq()
    model.encoder.compile(backend="eager")
    for _ in range(3):
        model(torch.randn(8, 4)).sum().backward()
        model.translate(torch.randn(8, 4))
""",
        {"Encoder.forward": 2},
    ),
    # the call sets no grad mode / autocast itself: it runs under its function's callers'
    (
        "no-grad-around-the-method-that-calls-self",
        AGENT.replace(
            "        with torch.no_grad():\n            return self(obs)", "        return self(obs)"
        ).replace("        agent.act(obs)", "        with torch.no_grad():\n            agent.act(obs)"),
        {"Agent.forward": 2},
    ),
    (
        "autocast-two-functions-above-the-call",
        """
import torch


def score(x):
    return (x.sin() @ x.T).sum()


fast_score = torch.compile(score, backend="eager")


def evaluate(x):
    return fast_score(x)


def run(x):
    return evaluate(x)


def main():
    x = torch.randn(8, 8)
    for _ in range(3):
        run(x)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            run(x)
""",
        {"score": 2},
    ),
    # a compiled module handed to another object's constructor, called there through `self.model`
    (
        "compiled-module-handed-to-a-sampler",
        """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class Sampler:
    def __init__(self, model, steps=3):
        self.model = model
        self.steps = steps

    def sample(self, x):
        with torch.no_grad():
            for _ in range(self.steps):
                x = self.model(x)
        return x


def main():
    net = Net()
    fast = torch.compile(net, backend="eager")
    sampler = Sampler(fast)
    for _ in range(3):
        fast(torch.randn(2, 4)).sum().backward()
        sampler.sample(torch.randn(2, 4))
""",
        {"Net.forward": 2},
    ),
    (
        "plain-module-handed-to-a-sampler-next-to-its-compiled-wrapper",
        """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class Sampler:
    def __init__(self, model):
        self.model = model

    def sample(self, x):
        with torch.no_grad():
            return self.model(x)


def main():
    net = Net()
    fast = torch.compile(net, backend="eager")
    sampler = Sampler(net)
    for _ in range(3):
        fast(torch.randn(2, 4)).sum().backward()
        sampler.sample(torch.randn(2, 4))
""",
        {"Net.forward": 1},
    ),
    # automatic dynamic: the first size change marks the size dynamic for the frame, so the later
    # no_grad compile is dynamic already: one compile more, not one per grad mode (4 before)
    (
        "grad-modes-with-a-last-short-batch-add-one-compile",
        NET
        + """

def main():
    fast = torch.compile(Net(), backend="eager")
    loader = DataLoader(TensorDataset(torch.randn(10, 4)), batch_size=4)
    for epoch in range(2):
        for (x,) in loader:
            fast(x).sum().backward()
        with torch.no_grad():
            for (x,) in loader:
                fast(x)
""",
        {"Net.forward": 3},
    ),
    # a counter changes on the second iteration, the last batch on the third: two recompiles (2 before)
    (
        "a-counter-and-the-last-batch-change-at-different-times",
        NET
        + """

def step(x, t):
    return x * t


cstep = torch.compile(step, backend="eager")


def main():
    loader = DataLoader(TensorDataset(torch.randn(10, 4)), batch_size=4)
    for epoch in range(2):
        for i, (x,) in enumerate(loader):
            cstep(x, i)
""",
        {"step": 3},
    ),
    # arguments handed on through the calling function's parameters (1 before each)
    (
        "a-timestep-handed-on-through-a-helper",
        TNET
        + """

def denoise(model, x, t):
    return model(x, t)


def main():
    fast = torch.compile(TNet(), backend="eager")
    x = torch.randn(2, 4)
    for t in range(5):
        x = denoise(fast, x, t)
""",
        {"TNet.forward": 2},
    ),
    (
        "a-timestep-handed-on-through-a-sampler-method",
        TNET
        + """

class Sampler:
    def __init__(self, model):
        self.model = model

    def step(self, x, t):
        return self.model(x, t)

    @torch.no_grad()
    def sample(self, x, steps=4):
        for t in range(steps):
            x = self.step(x, t)
        return x


def main():
    fast = torch.compile(TNet(), backend="eager")
    sampler = Sampler(fast)
    sampler.sample(torch.randn(2, 4))
    sampler.sample(torch.randn(2, 4))
""",
        {"TNet.forward": 2},
    ),
    (
        "batch-sizes-handed-on-through-a-helper",
        NET
        + """

def evaluate(model, x):
    return model(x)


def main():
    fast = torch.compile(Net(), backend="eager")
    for n in (4, 3, 2, 5):
        x = torch.randn(n, 4)
        evaluate(fast, x)
""",
        {"Net.forward": 2},
    ),
    # requires_grad changed on a plain name: unfrozen with `requires_grad_(True)` after calls,
    # frozen through a list of its parameters kept earlier (1 before each)
    (
        "a-plain-name-unfrozen-after-calls",
        NET
        + """

def main():
    enc = Net()
    enc.requires_grad_(False)
    cenc = torch.compile(enc, backend="eager")
    x = torch.randn(2, 4)
    for epoch in range(4):
        if epoch == 2:
            enc.requires_grad_(True)
        cenc(x)
""",
        {"Net.forward": 2},
    ),
    (
        "parameters-kept-in-a-list-frozen-after-calls",
        NET
        + """

def main():
    enc = Net()
    cenc = torch.compile(enc, backend="eager")
    params = list(enc.parameters())
    x = torch.randn(2, 4)
    for epoch in range(4):
        if epoch == 2:
            for p in params:
                p.requires_grad = False
        cenc(x)
""",
        {"Net.forward": 2},
    ),
    # an input tensor made to require grad on a plain name is no parameter change
    (
        "an-input-made-to-require-grad-is-not-a-parameter-change",
        NET
        + """

def main():
    cenc = torch.compile(Net(), backend="eager")
    for epoch in range(3):
        x = torch.randn(2, 4)
        x.requires_grad_(True)
        cenc(x)
""",
        {"Net.forward": 1},
    ),
    # multi-task: the task name from the caller's loop over constants, through a helper (1 before)
    (
        "task-heads-picked-by-a-name-from-the-callers-loop",
        NET
        + """

class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 4)
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 2), "reg": nn.Linear(4, 1)})

    def forward(self, x, task):
        return self.heads[task](self.trunk(x))


def train_step(model, x, task):
    return model(x, task).sum()


def main():
    model = torch.compile(MultiTask(), backend="eager")
    x = torch.randn(2, 4)
    for step in range(3):
        for task in ("cls", "reg"):
            train_step(model, x, task).backward()
""",
        {"MultiTask.forward": 2},
    ),
    (
        "a-task-flag-compared-to-strings-over-a-module-level-list",
        NET
        + """

TASKS = ["a", "b", "c"]


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, task):
        if task == "a":
            return self.fc(x)
        if task == "b":
            return self.fc(x) * 2
        return -self.fc(x)


def main():
    model = torch.compile(Branchy(), backend="eager")
    x = torch.randn(2, 4)
    for step in range(2):
        for task in TASKS:
            model(x, task)
""",
        {"Branchy.forward": 3},
    ),
    # example batches of different literal shapes looped over, handed on to an encoder compiled
    # in place (1 before)
    (
        "a-list-of-differently-shaped-batches-through-a-method",
        NET
        + """

class Translator(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Net()

    @torch.no_grad()
    def greedy(self, src):
        return self.encoder(src)


def main():
    model = Translator()
    model.encoder.compile(backend="eager")
    batches = [torch.randn(2, 4), torch.randn(3, 4)]
    for epoch in range(2):
        for src in batches:
            model.greedy(src)
""",
        {"Net.forward": 2},
    ),
    # a sampler's timesteps as a list made from a range, looped with enumerate (1 before)
    (
        "timesteps-from-a-list-of-a-range",
        TNET
        + """

def main():
    fast = torch.compile(TNet(), backend="eager")
    x = torch.randn(2, 4)
    ts = list(range(999, 0, -250))
    for i, t in enumerate(ts):
        x = fast(x, t)
""",
        {"TNet.forward": 2},
    ),
    # a batch passed whole at one call of the helper and sliced at another (1 before); a batch
    # always sliced alike compiles once
    (
        "a-batch-sliced-at-one-call-of-the-helper",
        NET
        + """

def evaluate(model, x):
    return model(x)


def main():
    fast = torch.compile(Net(), backend="eager")
    x = torch.randn(4, 4)
    for _ in range(2):
        evaluate(fast, x)
        evaluate(fast, x[:2])
""",
        {"Net.forward": 2},
    ),
    (
        "a-batch-always-sliced-alike",
        NET
        + """

def main():
    fast = torch.compile(Net(), backend="eager")
    x = torch.randn(4, 4)
    for _ in range(3):
        fast(x[:2])
""",
        {"Net.forward": 1},
    ),
]


SAMPLER = """
import torch
import torch.nn as nn


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, t):
        return self.fc(x) * t


class Sampler:
    def __init__(self, model):
        self.model = model

    def run(self, x):
        for t in range(5, 0, -1):
            x = x - 0.1 * self.model(x, t)
        return x


def main():
    sampler = Sampler(torch.compile(Denoiser(), backend="eager"))
    with torch.no_grad():
        sampler.run(torch.randn(2, 4))
"""

# a compiled module handed to a constructor inline (no name in between) is called by its methods:
# the step number it is given becomes dynamic after the second value (2 compiles)
CASES += [
    ("compiled-module-handed-over-inline", SAMPLER, {"Denoiser.forward": 2}),
    (
        "compiled-module-handed-over-by-name",
        SAMPLER.replace(
            'sampler = Sampler(torch.compile(Denoiser(), backend="eager"))',
            'fast = torch.compile(Denoiser(), backend="eager")\n    sampler = Sampler(fast)',
        ),
        {"Denoiser.forward": 2},
    ),
    (
        "timesteps-stored-on-self-as-a-range",
        SAMPLER.replace(
            "        self.model = model\n",
            "        self.model = model\n        self.ts = list(range(5, 0, -1))\n",
        ).replace("for t in range(5, 0, -1):", "for t in self.ts:"),
        {"Denoiser.forward": 2},
    ),
]


def _predicted(result) -> dict[str, int | None]:
    return {v.qualname: v.count for v in variants(result.project).values()}


@pytest.mark.parametrize(("program", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_predicted_variant_counts_match_the_measured_compiles(tmp_path, program, expected):
    result = lint_code(tmp_path, textwrap.dedent(program))
    assert _predicted(result) == expected


@pytest.mark.dynamo
@pytest.mark.parametrize(("program", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_measured_compiles_are_what_dynamo_does(tmp_path, program, expected):
    pytest.importorskip("torch")
    from tests.helpers.dynamo_harness import run_example

    code = textwrap.dedent(program)
    result = lint_code(tmp_path, code)
    lines = {
        v.qualname: result.project.functions[v.key][1].loc.line for v in variants(result.project).values()
    }
    ran = run_example(str(tmp_path / "measured.py"), code, "main()")
    assert ran.error is None, ran.error_text
    got = {q: sum(n for (name, line), n in ran.frames.items() if line == lines[q]) for q in expected}
    assert got == expected, ran.recompile_reasons


def test_a_call_whose_mode_comes_from_its_caller_takes_both_modes_and_says_so(tmp_path):
    """``train_step()`` calls the compiled model with the mode ``main`` set before calling it: the
    join cannot see it, so that call takes train and eval (3 combinations, Dynamo compiles 2), and
    the summary says the count is partly assumed."""
    code = textwrap.dedent(DROPNET) + textwrap.dedent("""
        def train_step():
            model(torch.randn(8, 4)).sum().backward()

        def main():
            for epoch in range(3):
                model.train()
                train_step()
                model.eval()
                with torch.no_grad():
                    model(torch.randn(8, 4))
        """)
    (v,) = variants(lint_code(tmp_path, code).project).values()
    assert v.count == 3
    assert "as called (3 combinations; every value assumed at 1 call)" in v.summary()
    assert v.as_json()["joined"]["guessed_calls"] == 1
