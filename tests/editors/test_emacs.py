"""The packaged Emacs config (editors/emacs/tclint-eglot.el) in real Emacs 28 + eglot 1.9 (Debian
elpa-eglot), --batch, against the real tclint server: diagnostics, a quick fix, `tclint-probe'."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.helpers.editorutil import EDITORS, PYTHON, UNUSED_NOQA, ensure_apt, require_server, server_env

pytestmark = [pytest.mark.editor, pytest.mark.slow]

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "emacs", "driver.el")


def test_emacs_eglot_diagnostics_quick_fix_and_probe(project, tmp_path):
    require_server()
    ensure_apt("emacs-nox", "elpa-eglot")
    out = tmp_path / "emacs.json"
    env = server_env()
    env.update(
        HOME=str(tmp_path / "home"),
        TCLINT_EMACS_DIR=os.path.join(EDITORS, "emacs"),
        TCLINT_PYTHON=PYTHON,
        TCLINT_FILE=os.path.join(project, "model.py"),
        TCLINT_OUT=str(out),
        TCLINT_FIX_CODE=UNUSED_NOQA,
        TCLINT_PROBE_LINE="8",
        TCLINT_TIMEOUT="120",
    )
    os.makedirs(env["HOME"], exist_ok=True)
    proc = subprocess.run(["emacs", "--batch", "-q", "-l", DRIVER], cwd=project, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert out.exists(), f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(out.read_text())
    assert proc.returncode == 0 and "error" not in result, f"{result}\n{proc.stderr[-3000:]}"
    # the console script beside the interpreter, never `python -m` (test_editor_launch.py)
    assert result["server_command"] == [os.path.join(os.path.dirname(PYTHON), "tclint"), "server"]
    found = {(d["code"], d["line"]) for d in result["diagnostics"]}
    assert {("TC104", 9), ("TC101", 10), (UNUSED_NOQA, 15)} <= found, found
    assert result["fixed_gone"] is True
    assert "    return x + 1\n" in result["buffer"]
    text = result["probe_text"]
    assert "## Compilations" in text and "## Graph breaks" in text, text
    assert "GB0124" in text or "GB0059" in text, text


REPORT = os.path.join(EDITORS, "vscode", "test", "fixtures", "probe-report.json")  # a real probe of examples/serve.py


def test_probe_report_formatting(tmp_path):
    ensure_apt("emacs-nox", "elpa-eglot")
    out = tmp_path / "out.txt"
    form = f"""(progn (add-to-list 'load-path "{os.path.join(EDITORS, 'emacs')}") (require 'tclint-eglot) (require 'json)
      (let* ((json-object-type 'plist) (json-array-type 'vector) (json-null :null) (json-false :json-false)
             (data (json-read-file "{REPORT}")))
        (with-temp-file "{out}" (insert (mapconcat #'identity (tclint-format-probe data "t") "\\n")))))"""
    subprocess.run(["emacs", "--batch", "-q", "--eval", form], env=dict(os.environ, HOME=str(tmp_path)),
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=True)
    text = out.read_text()
    assert "# tclint probe: serve.py" in text
    assert "## Compilations (8)" in text
    assert "2. decode_step (serve.py:11)  trigger: guard failed: tensor 'tokens' size mismatch at index 1" in text
    assert "- GB0124 x3 Unsupported Tensor.item() call" in text and "at serve.py:34" in text
    assert "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html" in text


VERDICTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "runtime_probe", "verdicts")
CLEAN = "No graph break: the code compiled into whole graphs."


@pytest.mark.parametrize("case, said", [
    ("raised", "Probe failed: raised ValueError at "),
    ("timeout", "Probe failed: timed out after 4 s"),
    ("crashed", "Probe failed: the process crashed (SIGSEGV)"),
    ("inputs_rejected", "Probe failed: the synthesised inputs were rejected by eager code"),
    ("no_graph", "Verdict: no graph produced"),
    ("hard_error", "Verdict: 1 hard error"),
])
def test_probe_buffer_says_the_truth_in_the_worst_cases(case, said, tmp_path):
    """Real reports (tests/helpers/make_verdict_reports.py), as in the Neovim and VS Code tests."""
    ensure_apt("emacs-nox", "elpa-eglot")
    report = os.path.join(VERDICTS, f"{case}.json")
    out = tmp_path / "out.txt"
    form = f"""(progn (add-to-list 'load-path "{os.path.join(EDITORS, 'emacs')}") (require 'tclint-eglot) (require 'json)
      (let* ((json-object-type 'plist) (json-array-type 'vector) (json-null :null) (json-false :json-false)
             (data (json-read-file "{report}")))
        (with-temp-file "{out}" (insert (mapconcat #'identity (tclint-format-probe data "t") "\\n")))))"""
    proc = subprocess.run(["emacs", "--batch", "-q", "--eval", form], env=dict(os.environ, HOME=str(tmp_path)),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    with open(report, encoding="utf-8") as fh:
        verdict = json.load(fh)["verdict"]
    assert said in text and text.index(said) < text.index("## Compilations"), text
    assert f"Verdict: {verdict}\n" in text
    assert CLEAN not in text
    if case == "no_graph":
        assert "DROPPED by Dynamo: the whole frame runs eagerly on every call (Unsupported:" in text
        assert "- GB0059 x? (hits not counted) Failed to trace builtin operator" in text
    if case == "hard_error":
        assert text.index("## Errors (1)") < text.index("## Compilations")
        assert "No graph break, but no graph was produced either" in text
