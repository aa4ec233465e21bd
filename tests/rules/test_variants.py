"""The variant set of compiled callables, read from their call sites (issue 13): one row per shape
of eager code, with the dimensions and the predicted count the static analysis must give.
The counts were measured under torch 2.13 (tests/fixtures/corpus/recompiles, truth-table rows r01-r05)."""

from __future__ import annotations

import json
import textwrap

import pytest
from tclint.rules.variants import variants

from tests.helpers.lintutil import lint_code

NET = """
import random
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        {extra}

    def forward(self, x, flag: bool = False, mode: str = "a"):
        y = {body}
        if flag:
            y = y * 2
        if mode == "a":
            y = y + 1
        return y

net = Net()
model = torch.compile(net)
"""

DROPOUT = ("self.drop = nn.Dropout(0.1)", "self.drop(self.fc(x))")
PLAIN = ("pass", "self.fc(x)")
READS_TRAINING = ("pass", "self.fc(x) * (2 if self.training else 1)")

ROWS = [
    # (id, module kind, driver code, expected {dimension kind: values}, expected count)
    ("one-call", PLAIN, "def main(x):\n    return model(x)\n", {}, 1),
    (
        "no_grad-and-grad",
        PLAIN,
        "def main(x):\n    model(x)\n    with torch.no_grad():\n        model(x)\n",
        {"grad_mode": ["grad", "no_grad"]},
        2,
    ),
    (
        "inference_mode-is-a-third-variant",
        PLAIN,
        "def main(x):\n    model(x)\n    with torch.no_grad():\n        model(x)\n    with torch.inference_mode():\n        model(x)\n",
        {"grad_mode": ["grad", "no_grad", "inference_mode"]},
        3,
    ),
    (
        "no_grad-decorator",
        PLAIN,
        "@torch.no_grad()\ndef evaluate(x):\n    return model(x)\n\ndef main(x):\n    model(x)\n    evaluate(x)\n",
        {"grad_mode": ["grad", "no_grad"]},
        2,
    ),
    (
        "always-no_grad",
        PLAIN,
        "def main(x):\n    with torch.no_grad():\n        model(x)\n        model(x)\n",
        {},
        1,
    ),
    (
        "autocast-some-calls",
        PLAIN,
        "def main(x):\n    model(x)\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n        model(x)\n",
        {"autocast": ["fp32", "autocast(bfloat16)"]},
        2,
    ),
    (
        "train-eval-with-dropout",
        DROPOUT,
        "def main(x):\n    net.train()\n    model(x)\n    net.eval()\n    model(x)\n",
        {"training": ["train", "eval"]},
        2,
    ),
    (
        "train-eval-on-compiled-object",
        DROPOUT,
        "def main(x):\n    model.train()\n    model(x)\n    model.eval()\n    model(x)\n",
        {"training": ["train", "eval"]},
        2,
    ),
    (
        "train-eval-reading-self.training",
        READS_TRAINING,
        "def main(x):\n    for i in range(4):\n        net.train(i % 2 == 0)\n        model(x)\n",
        {"training": ["train", "eval"]},
        2,
    ),
    (
        "train-eval-without-dropout",
        PLAIN,
        "def main(x):\n    net.train()\n    model(x)\n    net.eval()\n    model(x)\n",
        {},
        1,
    ),
    (
        "dataloader-last-batch",
        PLAIN,
        "def main():\n    loader = DataLoader(TensorDataset(torch.randn(10, 4)), batch_size=4)\n    for (x,) in loader:\n        model(x)\n",
        {"batch": ["full batch", "last batch"]},
        2,
    ),
    (
        "size-set-per-iteration",
        PLAIN,
        "def main(n):\n    for start in range(0, n, 6):\n        bs = min(6, n - start)\n        x = torch.randn(bs, 4)\n        model(x)\n",
        {"size": ["first size", "dynamic"]},
        2,
    ),
    (
        "generation-grows-by-cat",
        PLAIN,
        "def main(x):\n    for _ in range(6):\n        y = model(x)\n        x = torch.cat([x, y[-1:]], dim=0)\n",
        {"size": ["first size", "dynamic"]},
        2,
    ),
    (
        "generator-yields-sized-batches",
        PLAIN,
        "def batches(k):\n    for b in range(k):\n        bs = 8 if b < k - 1 else 4\n        yield torch.rand(bs, 4)\n\n"
        "def main():\n    for x in batches(3):\n        x = x * 2\n        model(x)\n",
        {"size": ["first size", "dynamic"]},
        2,
    ),
    (
        # measured with requests of 2, 3, 5, 4 items: 2 compiles (a batch of 1 would add a third:
        # Dynamo specialises size 1, which tclint does not count)
        "helper-builds-a-batch-from-request-data",
        PLAIN,
        "def collate(reqs):\n    return torch.zeros(len(reqs), 4)\n\n"
        "def main(requests):\n    for reqs in requests:\n        x = collate(reqs)\n        model(x)\n",
        {"size": ["first size", "dynamic"]},
        2,
    ),
    (
        "same-size-per-iteration",
        PLAIN,
        "def main(bs):\n    for step in range(6):\n        x = torch.randn(bs, 4)\n        y = torch.randint(0, step + 2, (bs,))\n        model(x)\n        model(y)\n",
        {},
        1,
    ),
    (
        "dataloader-drop_last",
        PLAIN,
        "def main():\n    loader = DataLoader(TensorDataset(torch.randn(10, 4)), batch_size=4, drop_last=True)\n    for (x,) in loader:\n        model(x)\n",
        {},
        1,
    ),
    (
        "random-bool-draw",
        PLAIN,
        "def main(x):\n    for _ in range(5):\n        model(x, flag=random.random() < 0.5)\n",
        {"arg": ["False", "True"]},
        2,
    ),
    (
        "string-choice",
        PLAIN,
        "def main(x):\n    for i in range(5):\n        model(x, mode='a' if i % 2 else 'b')\n",
        {"arg": ["'a'", "'b'"]},
        2,
    ),
    (
        "requires_grad-some-calls",
        PLAIN,
        "def main(x):\n    model(x)\n    adv = x.clone().requires_grad_()\n    model(adv)\n",
        {"requires_grad": ["requires_grad=True", "requires_grad=False"]},
        2,
    ),
    (
        "requires_grad-statement",
        PLAIN,
        "def main(x):\n    model(x)\n    x.requires_grad_()\n    model(x)\n",
        {"requires_grad": ["requires_grad=True", "requires_grad=False"]},
        2,
    ),
    (
        "requires_grad-every-call",
        PLAIN,
        "def main(x):\n    x.requires_grad_()\n    model(x)\n    model(x)\n",
        {},
        1,
    ),
    (
        "dtype-some-calls",
        PLAIN,
        "def main(x):\n    model(x)\n    model(x.to(torch.bfloat16))\n",
        {"dtype": ["bfloat16", "as given"]},
        2,
    ),
    ("dtype-float-is-the-default", PLAIN, "def main(x):\n    model(x)\n    model(x.float())\n", {}, 1),
    (
        "device-two-moves",
        PLAIN,
        "def main(x):\n    model(x.cpu())\n    xc = x.cuda()\n    model(xc)\n",
        {"device": ["cpu", "cuda"]},
        2,
    ),
    ("device-one-move-is-not-evidence", PLAIN, "def main(x):\n    model(x)\n    model(x.cuda())\n", {}, 1),
    (
        "grad-times-train-eval",
        DROPOUT,
        "def main(x):\n    net.train()\n    model(x)\n    net.eval()\n    with torch.no_grad():\n        model(x)\n",
        {"grad_mode": ["grad", "no_grad"], "training": ["train", "eval"]},
        2,  # measured: 2 (the calls make train+grad and eval+no_grad, not all 4 combinations)
    ),
]


@pytest.mark.parametrize(
    ("module", "driver", "dims", "count"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS]
)
def test_variant_dimensions(tmp_path, module, driver, dims, count):
    extra, body = module
    code = textwrap.dedent(NET).replace("{extra}", extra).replace("{body}", body) + "\n" + driver
    result = lint_code(tmp_path, code)
    found = variants(result.project)
    (v,) = [v for k, v in found.items() if k.endswith("Net.forward")]
    assert {d.kind: d.values for d in v.dims} == dims
    assert v.count == count
    assert v.bounded


def test_unbounded_counter_and_dynamic_scalars(tmp_path):
    code = textwrap.dedent("""
        import torch

        @torch.compile
        def rollout(x, n: int):
            for _ in range(n):
                x = torch.tanh(x)
            return x

        @torch.compile
        def scaled(x, t: float, s: float):
            return x * t + s

        def main(x):
            for step in range(100):
                rollout(x, step)
                scaled(x, step / 10, step * 2.0)
        """)
    found = {v.qualname: v for v in variants(lint_code(tmp_path, code).project).values()}
    assert found["rollout"].count is None and not found["rollout"].bounded
    assert "recompile limit" in found["rollout"].summary() or "limit (8)" in found["rollout"].summary()
    # two floats changing together go dynamic in one recompile: 2 variants, not 4 (measured)
    assert found["scaled"].count == 2


def test_compiled_attribute_called_through_self(tmp_path):
    code = textwrap.dedent("""
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return self.fc(x)

        class Server:
            def __init__(self):
                self.model = Head()
                self.fast = torch.compile(self.model)

            def warmup(self, x):
                with torch.no_grad():
                    self.fast(x)

            def handle(self, x):
                with torch.inference_mode():
                    return self.fast(x)
        """)
    (v,) = variants(lint_code(tmp_path, code).project).values()
    assert v.calls == 2
    assert [(d.kind, d.values) for d in v.dims] == [("grad_mode", ["no_grad", "inference_mode"])]


def test_tc208_reports_the_line_to_change_with_the_other_side_related(tmp_path):
    code = textwrap.dedent(NET).replace("{extra}", DROPOUT[0]).replace(
        "{body}", DROPOUT[1]
    ) + textwrap.dedent("""
        def main(x, xv):
            net.train()
            model(x)
            net.eval()
            with torch.no_grad():
                model(xv)
        """)
    result = lint_code(tmp_path, code)
    got = sorted((d.span.start.line, d.extra["dimension"]) for d in result.diagnostics if d.code == "TC208")
    lines = code.splitlines()
    with_line = next(i for i, t in enumerate(lines, 1) if "with torch.no_grad()" in t)
    eval_line = next(i for i, t in enumerate(lines, 1) if "net.eval()" in t)
    assert got == [(eval_line, "training"), (with_line, "grad_mode")]
    grad = next(d for d in result.diagnostics if d.code == "TC208" and d.extra["dimension"] == "grad_mode")
    assert "Net.forward" in grad.message and "grad_mode" in grad.message
    assert grad.related and grad.related[0].span.start.line == next(
        i for i, t in enumerate(lines, 1) if t.strip() == "model(x)"
    )


def test_variants_command_text_and_json(tmp_path, capsys):
    from tclint.rules.cli import main

    (tmp_path / "train.py").write_text(
        textwrap.dedent("""
        import torch

        @torch.compile
        def step(x, training: bool):
            return torch.nn.functional.dropout(x, 0.1, training)

        def main(x):
            step(x, True)
            with torch.no_grad():
                step(x, False)
        """)
    )
    assert main(["variants", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # measured: 2 compiles (True under grad, False under no_grad: 2 of the 4 combinations)
    assert "step: ≈ 2 variants: grad/no_grad × False/True as called (2 combinations) — bounded" in out
    assert "1 compiled callable, 0 with unbounded variants." in out
    assert main(["variants", "--output-format", "json", str(tmp_path)]) == 0
    (row,) = json.loads(capsys.readouterr().out)["callables"]
    assert row["qualname"] == "step" and row["variants"] == 2 and row["bounded"] is True
    assert {d["kind"] for d in row["dimensions"]} == {"grad_mode", "arg"}
    assert row["joined"] == {"kinds": ["grad_mode", "arg"], "combinations": 2, "guessed_calls": 0}
    assert main(["regions", "--output-format", "full", str(tmp_path)]) == 0
    assert "variants: ≈ 2 variants" in capsys.readouterr().out


def test_hover_text_of_a_compile_site_has_the_variant_summary(tmp_path):
    from tclint.server.entries import compute

    code = textwrap.dedent(NET).replace("{extra}", PLAIN[0]).replace("{body}", PLAIN[1]) + (
        "def main(x):\n    model(x)\n    with torch.no_grad():\n        model(x)\n"
    )
    result = lint_code(tmp_path, code)
    (ff,) = result.project.files.values()
    (site,) = [e for e in compute(ff.path, ff, result.project) if e.kind == "site"]
    assert site.variants == "≈ 2 variants: grad/no_grad — bounded, warm each one up"
    assert "**Variants:** ≈ 2 variants" in site.markdown


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
"""

# (id, program after DROPNET, the marker of the line TC208 must report its training flip at, or
# None for no training dimension).  A mode set before the compiled callable exists is its initial
# state, not a flip; the mode is tracked through every holder of the module or the compiled object.
MODE_ROWS = [
    (
        "eval-in-the-compiled-argument",
        "model = torch.compile(Net().eval())\ndef main(x):\n    for i in range(4):\n        model.train(i % 2 == 0)  # flip\n        model(x)\n",
        "# flip",
    ),
    (
        "eval-statement-before-compile",
        "m = Net()\nm.eval()\nmodel = torch.compile(m)\ndef main(x):\n    model(x)\n    m.train()  # flip\n    model(x)\n",
        "# flip",
    ),
    (
        "eval-in-a-factory",
        "def load():\n    m = Net()\n    return m.eval()\nmodel = torch.compile(load())\ndef main(x):\n    model(x)\n    model.train()  # flip\n    model(x)\n",
        "# flip",
    ),
    (
        "eval-before-compile-in-main",
        "def main(x):\n    m = Net().eval()\n    model = torch.compile(m)\n    model(x)\n    m.train()  # flip\n    model(x)\n",
        "# flip",
    ),
    (
        "modes-set-only-before-compile",
        "m = Net()\nm.train()\nm.eval()\nmodel = torch.compile(m)\ndef main(x):\n    model(x)\n    model(x)\n",
        None,
    ),
    (
        "factory-also-called-between-calls",
        "net = Net()\ndef reset():\n    net.eval()  # flip\nreset()\nmodel = torch.compile(net)\ndef main(x):\n    net.train()\n    model(x)\n    reset()\n    model(x)\n",
        "# flip",
    ),
    (
        "flip-on-a-module-a-factory-returned",
        "def make():\n    return Net()\nmodel = make().eval()\ncompiled = torch.compile(model)\ndef main(x):\n    for i in range(4):\n        model.train()\n        compiled(x)\n        model.eval()  # flip\n        compiled(x)\n",
        "# flip",
    ),
    (
        "element-of-a-module-list",
        "outer = nn.ModuleList([Net()])\nfor i, blk in enumerate(outer):\n    outer[i] = torch.compile(blk)\nnet = outer[0]\n"
        "def main(x):\n    for i in range(4):\n        net.train(i % 2 == 0)  # flip\n        net(x)\n",
        "# flip",
    ),
]


@pytest.mark.parametrize(("program", "marker"), [r[1:] for r in MODE_ROWS], ids=[r[0] for r in MODE_ROWS])
def test_train_eval_flip_is_a_change_between_calls(tmp_path, program, marker):
    code = textwrap.dedent(DROPNET) + "\n" + program
    result = lint_code(tmp_path, code)
    got = [
        d.span.start.line
        for d in result.diagnostics
        if d.code == "TC208" and d.extra["dimension"] == "training"
    ]
    lines = code.splitlines()
    assert got == ([] if marker is None else [next(i for i, t in enumerate(lines, 1) if marker in t)])


GLOBAL_ROWS = [
    # (id, program, expected (kind, bounded, values) of the global dimension or None, variant count)
    (
        "float-global",
        "SCALE = 1.0\n@torch.compile\ndef f(x):\n    return x * SCALE\n"
        "def main(x):\n    global SCALE\n    for i in range(10):\n        SCALE = 1.0 + i / 10\n        f(x)\n",
        (True, ["first value", "dynamic"]),
        2,
    ),
    (
        "int-global-counter",
        "STEP = 0\n@torch.compile\ndef f(x):\n    return x * STEP\n"
        "def main(x):\n    global STEP\n    for i in range(10):\n        STEP += 1\n        f(x)\n",
        (False, ["a new value per rebinding"]),
        None,
    ),
    (
        "int-global-loop-variable",
        "STEP = 0\n@torch.compile\ndef f(x):\n    return x * STEP\n"
        "def main(x):\n    global STEP\n    for i in range(10):\n        STEP = i\n        f(x)\n",
        (False, ["a new value per rebinding"]),
        None,
    ),
    (
        "bool-flag-dict",
        "FLAGS = {'fast': False}\n@torch.compile\ndef f(x):\n    return x * 2 if FLAGS['fast'] else x\n"
        "def main(x):\n    for i in range(10):\n        FLAGS['fast'] = i % 2 == 0\n        f(x)\n",
        (True, ["False", "True"]),
        2,
    ),
    (
        "global-written-inside-the-compiled-code-only",
        "CALLS = 0\n@torch.compile\ndef f(x):\n    global CALLS\n    CALLS += 1\n    return x\n"
        "def main(x):\n    f(x)\n",
        None,
        None,
    ),
    (
        "bool-set-once-in-setup",
        "DEBUG = False\n@torch.compile\ndef f(x):\n    return x * 2 if DEBUG else x\n"
        "def setup(flag):\n    global DEBUG\n    DEBUG = flag\ndef main(x):\n    setup(True)\n    for i in range(10):\n        f(x)\n",
        None,
        1,
    ),
    (
        "counter-in-a-hook-called-per-step",
        "STEP = 0\n@torch.compile\ndef f(x):\n    return x * STEP\n"
        "def on_step():\n    global STEP\n    STEP += 1\ndef main(x):\n    for i in range(10):\n        on_step()\n        f(x)\n",
        (False, ["a new value per rebinding"]),
        None,
    ),
    (
        "global-never-rebound",
        "SCALE = 2.0\n@torch.compile\ndef f(x):\n    return x * SCALE\n"
        "def main(x):\n    for i in range(10):\n        f(x)\n",
        None,
        1,
    ),
]


@pytest.mark.parametrize(
    ("program", "expected", "count"), [r[1:] for r in GLOBAL_ROWS], ids=[r[0] for r in GLOBAL_ROWS]
)
def test_globals_read_inside_and_rebound_by_eager_code(tmp_path, program, expected, count):
    result = lint_code(tmp_path, "import torch\n" + program)
    (v,) = variants(result.project).values()
    dims = [(d.bounded, d.values) for d in v.dims if d.kind == "global"]
    assert dims == ([] if expected is None else [expected])
    if expected is not None:
        assert v.count == count
    tc209 = [d for d in result.diagnostics if d.code == "TC209"]
    assert bool(tc209) == (expected is not None and not expected[0])
    assert all(d.severity.value == "error" and "recompile limit (8)" in d.message for d in tc209)


def test_buffer_written_with_a_grad_value_requires_grad_after_the_first_call(tmp_path):
    code = textwrap.dedent("""
        import torch
        import torch.nn as nn

        class Cache(nn.Module):
            def __init__(self):
                super().__init__()
                self.kv = nn.Linear(4, 4)
                self.register_buffer("keys", torch.zeros(1, 8, 4))
                self.register_buffer("seen", torch.zeros(1, 8, 4))

            def forward(self, x, pos):
                self.keys.index_copy_(1, pos, self.kv(x)[:, None])
                self.seen.index_copy_(1, pos, self.kv(x).detach()[:, None])
                return self.keys.sum(1)

        cache = torch.compile(Cache())

        def decode(x):
            for i in range(4):
                cache(x, torch.tensor([i]))

        def decode_without_grad(x):
            with torch.no_grad():
                cache(x, torch.tensor([0]))
        """)
    (v,) = variants(lint_code(tmp_path, code).project).values()
    assert sorted(d.kind for d in v.dims) == ["grad_mode", "requires_grad"]
    (dim,) = [d for d in v.dims if d.kind == "requires_grad"]
    assert (dim.guard, v.count) == ("tensor 'self._buffers['keys']' requires_grad mismatch", 4)
    assert [s.loc.line for s in dim.sources] == [13]  # the detached write into `seen` is not one
    only_no_grad = code.replace(
        "\ndef decode(x):\n    for i in range(4):\n        cache(x, torch.tensor([i]))\n", "\n"
    )
    assert "def decode(x)" not in only_no_grad
    (v,) = variants(lint_code(tmp_path, only_no_grad).project).values()
    assert v.dims == []


def test_new_instance_compiled_per_iteration_is_unbounded(tmp_path):
    code = textwrap.dedent("""
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.fc = nn.Linear(8, n)

            def forward(self, x):
                return self.fc(x)

        def episodes(x, sizes):
            for n in sizes:
                head = Head(n)
                policy = torch.compile(head)
                policy(x)
            for _ in range(3):
                same = torch.compile(Head(4))
                same(x)
            for n in sizes:
                lin = torch.compile(nn.Linear(8, n))
                lin(x)
        """)
    result = lint_code(tmp_path, code)
    (v,) = variants(result.project).values()
    assert [(d.kind, d.bounded) for d in v.dims] == [("instance", False)] and v.count is None
    got = sorted((d.span.start.line, d.severity.value) for d in result.diagnostics if d.code == "TC209")
    assert got == [(16, "error"), (22, "error")]


def test_unbounded_call_argument_is_an_error_that_says_when_the_limit_is_hit(tmp_path):
    code = textwrap.dedent("""
        import torch

        @torch.compile(dynamic=False)
        def pad(x, n: int):
            return x * n

        def main(x):
            for step in range(100):
                pad(x, step)
        """)
    (d,) = [d for d in lint_code(tmp_path, code).diagnostics if d.code == "TC205"]
    assert d.severity.value == "error"
    assert "9th new value hits the recompile limit (8)" in d.message and "runs eagerly" in d.message


def test_calls_through_a_returned_compiled_module_and_an_instance_attribute(tmp_path):
    # from fresh user programs (measured with tclint probe, torch 2.13): a serving factory that
    # returns torch.compile(...), and an agent whose method stored self.update = torch.compile(...)
    # called as agent.update(...) with a per-step float (2 compiles: static, then dynamic)
    code = textwrap.dedent("""
        import torch
        import torch.nn as nn

        class Enc(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return self.fc(x)

        def load():
            return torch.compile(Enc().eval())

        class Agent:
            def __init__(self):
                self.q = Enc()
                self.update = torch.compile(self._loss)

            def _loss(self, obs, scale):
                return self.q(obs).sum() * scale

        def main(x):
            model = load()
            model(x)
            with torch.no_grad():
                model(x)
            agent = Agent()
            for ep in range(10):
                agent.update(x, 1.0 / (ep + 1))
        """)
    found = {v.qualname: v for v in variants(lint_code(tmp_path, code).project).values()}
    assert found["Enc.forward"].calls == 2
    assert [(d.kind, d.values) for d in found["Enc.forward"].dims] == [("grad_mode", ["grad", "no_grad"])]
    assert found["Agent._loss"].calls == 1 and found["Agent._loss"].count == 2


def test_loop_derived_numbers_and_computed_flags_at_unannotated_parameters(tmp_path):
    # a training step compiled with @torch.compile, called with a decayed learning rate and a flag
    # computed per step (measured, torch 2.13 eager: 3 compiles, `lr == 0.1` then `use_fix ==
    # False`: the float goes dynamic in the second compile, so the flag's other value adds one
    # compile, not two)
    code = textwrap.dedent("""
        import torch

        @torch.compile
        def train_step(x, lr, use_fix):
            y = x * lr
            if use_fix:
                y = y - y.mean()
            return y

        def main(x):
            base_lr = 0.1
            for step in range(5):
                lr = base_lr * (0.5 ** step)
                train_step(x, lr, step % 2 == 0)
        """)
    (v,) = variants(lint_code(tmp_path, code).project).values()
    assert sorted(d.guard for d in v.dims) == ["lr == <value>, then dynamic", "use_fix == <True/False>"]
    assert v.bounded and v.count == 3


def test_a_number_the_loop_carries_to_the_next_iteration_read_before_its_update(tmp_path):
    # an RL loop: `select(obs, epsilon)` at the top of the body, `epsilon = max(0.05, epsilon * 0.7)`
    # at its end (measured with Dynamo, backend eager: select compiles twice, guard `epsilon == 1.0`,
    # then epsilon is dynamic).  The step counter `steps += 1` after the call is read in the
    # while test only, so it is not an argument here.
    code = textwrap.dedent("""
        import torch

        @torch.compile
        def select(obs, epsilon):
            return torch.where(torch.rand(()) < epsilon, obs, obs * 2)

        def main(obs):
            epsilon, steps = 1.0, 0
            for episode in range(4):
                done = False
                while not done:
                    obs = select(obs, epsilon)
                    steps += 1
                    done = steps % 5 == 0
                epsilon = max(0.05, epsilon * 0.7)
        """)
    (v,) = variants(lint_code(tmp_path, code).project).values()
    assert [d.guard for d in v.dims] == ["epsilon == <value>, then dynamic"]
    assert v.bounded and v.count == 2


def test_a_compiled_global_bound_below_the_function_that_calls_it(tmp_path):
    # generation code: `sampler = torch.compile(sample_next)` at the bottom of the module, called
    # from `generate` above it (bound at import time, before generate runs); measured with Dynamo:
    # the growing `ids` compiles sample_next twice (static, then dynamic)
    code = textwrap.dedent("""
        import torch

        def sample_next(logits, k):
            return torch.topk(logits, k).indices[..., :1]

        def generate(ids, steps):
            for _ in range(steps):
                ids = torch.cat([ids, sampler(ids.float(), 2)], dim=1)
            return ids

        sampler = torch.compile(sample_next)
        """)
    (v,) = variants(lint_code(tmp_path, code).project).values()
    assert v.calls == 1
    assert [d.kind for d in v.dims] == ["size"] and v.count == 2


SETTER = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.use_ckpt = False
        self.unused = 0

    def enable_ckpt(self):
        self.use_ckpt = True

    def bump(self):
        self.unused = 1

    def forward(self, x):
        if self.use_ckpt:
            return self.fc(x) * 2
        return self.fc(x)


net = Net()
{setup}
model = torch.compile(net)


def main(x):
    for epoch in range(3):
        {in_loop}
        model(x)
"""


@pytest.mark.parametrize(
    ("setup", "in_loop", "count"),
    [
        ("pass", "if epoch == 1:\n            model.enable_ckpt()", 2),  # measured: 2 compiles
        ("net.enable_ckpt()", "pass", 1),  # set before it is compiled: the initial value
        ("pass", "model.bump()", 1),  # an attribute forward never reads guards nothing
    ],
    ids=["flipped-between-calls", "set-before-compiling", "not-read-by-forward"],
)
def test_a_flag_the_caller_sets_through_a_method_of_the_compiled_module(tmp_path, setup, in_loop, count):
    # gradient_checkpointing_enable()-style setters called on the compiled wrapper (it forwards
    # them to the original module, whose attribute forward reads and Dynamo guards by value)
    code = SETTER.format(setup=setup, in_loop=in_loop)
    (v,) = variants(lint_code(tmp_path, code).project).values()
    assert v.count == count, v.summary()
    assert [d.kind for d in v.dims] == (["attribute"] if count == 2 else [])


DROPPED_ROOT = """
import torch
import torch.nn as nn


def scale(h):
    return h.norm(dim=-1, keepdim=True)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        if scale(h).max() > 100:
            h = h / 100
        return h


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(2)])
        self.seen = 0

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        self.seen += 1
        return x


net = Net()
model = torch.compile(net)


def main():
    for _ in range(12):
        model(torch.randn(4, 8))
    with torch.no_grad():
        model(torch.randn(4, 8))
"""


def test_a_root_dropped_by_a_loop_callee_break_guards_nothing_of_its_own(tmp_path):
    """A break in a callee called from the root's loop makes Dynamo give up on the root's frame
    (truth table h02: 0 graphs), so the counter after the loop is never traced and guards nothing:
    the variant set is bounded (grad/no_grad, on the callee frames compiled on their own), not
    'unbounded: state mutated inside the compiled code'.  The old code called it unbounded."""
    result = lint_code(tmp_path, DROPPED_ROOT)
    (v,) = [v for k, v in variants(result.project).items() if k.endswith("Net.forward")]
    loop_line = DROPPED_ROOT.splitlines().index("        for blk in self.blocks:") + 1
    assert v.runs_eagerly_from in (loop_line, loop_line + 1)
    assert "state" not in {d.kind for d in v.dims}
    assert v.bounded and v.count == 2
    tc208 = [d for d in result.diagnostics if d.code == "TC208"]
    assert tc208 and all("runs eagerly from" in d.message for d in tc208)
    assert not [d for d in result.diagnostics if d.code == "TC209"]


@pytest.mark.dynamo
def test_a_dropped_root_compiles_no_frame_of_its_own_and_its_counter_does_not_recompile(tmp_path):
    """What the prediction above rests on, under the real Dynamo: Net.forward gets no graph (its
    frame is skipped), the 12 calls with a growing counter recompile nothing, and the callee's
    frames meet the grad-mode change."""
    pytest.importorskip("torch")
    from tests.helpers.dynamo_harness import run_example

    path = str(tmp_path / "dropped.py")
    ran = run_example(path, DROPPED_ROOT, "main()")
    assert ran.error is None, ran.error_text
    assert "forward" in ran.fallbacks  # Net.forward: compiled with no graph, runs eagerly
    assert not [r for r in ran.recompile_reasons if "seen" in r]
    assert any("grad_mode" in r for r in ran.recompile_reasons)


def test_calls_through_a_function_parameter_given_the_compiled_module(tmp_path):
    # train(net) / @torch.no_grad() sample(net): the usual training-script shape (a fresh diffusion
    # program, measured with tclint probe: the forward compiles twice, grad then no_grad)
    code = textwrap.dedent("""
        import torch
        import torch.nn as nn

        class Denoiser(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return self.fc(x)

        def train(model, steps=2):
            for _ in range(steps):
                model(torch.randn(2, 4)).sum().backward()

        @torch.no_grad()
        def sample(model):
            return model(torch.randn(2, 4))

        if __name__ == "__main__":
            net = torch.compile(Denoiser())
            train(net)
            sample(model=net)
        """)
    (v,) = variants(lint_code(tmp_path, code).project).values()
    assert v.calls == 2
    assert [(d.kind, d.values) for d in v.dims] == [("grad_mode", ["grad", "no_grad"])]


LOOP_BREAK_ROLLOUT = """
import torch


@torch.compile
def rollout(x, n: int):
    for _ in range(n):
        x = torch.tanh(x)
        print(x.sum())
    return x


def main():
    for step in range(1, 12):
        rollout(torch.randn(4), step)
"""


def test_arguments_of_a_root_dropped_before_any_graph_guard_nothing(tmp_path):
    """A print in the loop body makes Dynamo drop `rollout` before it has any graph, so its `n`
    is never guarded: no TC205 'each new value compiles another variant' (the old code said so)."""
    result = lint_code(tmp_path, LOOP_BREAK_ROLLOUT)
    assert [d.code for d in result.diagnostics] == ["TC104"]
    (v,) = variants(result.project).values()
    assert v.runs_eagerly_from == 9 and not v.dims


@pytest.mark.dynamo
def test_a_root_dropped_before_any_graph_does_not_recompile_per_argument_value(tmp_path):
    pytest.importorskip("torch")
    from tests.helpers.dynamo_harness import run_example

    ran = run_example(str(tmp_path / "rollout.py"), LOOP_BREAK_ROLLOUT, "main()")
    assert ran.error is None, ran.error_text
    assert ran.fallbacks == ["rollout"] and ran.compiles == {"rollout": 1} and not ran.recompile_reasons
