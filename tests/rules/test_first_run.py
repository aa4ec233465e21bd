"""What a new user reads on a first run (issue 19 item 5): the fix summary of `--diff`, hints for
misspelt configuration keys, source snippets for findings in notebook cells, and the command the
`--init-inputs` stub names being the one the CLI prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration  # runs tclint as a subprocess (make test-fast leaves it out)

TC104_FIXABLE = "import torch\n\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x * 2\n"


def tclint(*args: str, cwd: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PRE_COMMIT"}
    return subprocess.run(
        [sys.executable, "-m", "tclint.rules", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_diff_summary_is_pluralised(tmp_path):
    (tmp_path / "one.py").write_text(TC104_FIXABLE)
    proc = tclint("one.py", "--select", "TC104", "--unsafe-fixes", "--diff", "--no-cache", cwd=str(tmp_path))
    assert proc.returncode == 1, proc.stderr
    assert "Would fix 1 problem." in proc.stderr, proc.stderr
    (tmp_path / "two.py").write_text(TC104_FIXABLE)
    proc = tclint(
        "one.py", "two.py", "--select", "TC104", "--unsafe-fixes", "--diff", "--no-cache", cwd=str(tmp_path)
    )
    assert "Would fix 2 problems." in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    ("table", "hint"),
    [
        ('[tool.tclint]\nignroe = ["TC101"]\n', "unknown key `ignroe` (did you mean `ignore`?)"),
        (
            '[tool.tclint]\nextend_select = ["TC1"]\n',
            "unknown key `extend_select` (did you mean `extend-select`?)",
        ),
        (
            "[tool.tclint.dynamo]\ncapture_scaler_outputs = true\n",
            "did you mean `dynamo.capture_scalar_outputs`?",
        ),
        ("[tool.tclint.probe]\ntimout = 3\n", "did you mean `probe.timeout`?"),
    ],
)
def test_misspelt_keys_get_a_did_you_mean(tmp_path, table, hint):
    (tmp_path / "pyproject.toml").write_text(table)
    (tmp_path / "a.py").write_text("x = 1\n")
    proc = tclint("a.py", cwd=str(tmp_path))
    assert proc.returncode == 2
    assert hint in proc.stderr, proc.stderr


def test_an_unrelated_key_gets_no_guess(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.tclint]\nwibble = 1\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    proc = tclint("a.py", cwd=str(tmp_path))
    assert (
        proc.returncode == 2 and "unknown key `wibble`" in proc.stderr and "did you mean" not in proc.stderr
    )


def notebook(cells: list[tuple[str, str]]) -> str:
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": kind,
                    "metadata": {},
                    "source": src,
                    **({"outputs": [], "execution_count": None} if kind == "code" else {}),
                }
                for kind, src in cells
            ],
            "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def test_full_format_shows_the_cell_source_of_notebook_findings(tmp_path):
    (tmp_path / "nb.ipynb").write_text(
        notebook(
            [
                ("markdown", "# Explore"),
                ("code", "import torch"),
                (
                    "code",
                    "%load_ext autoreload\n@torch.compile\ndef f(x):\n    y = x * 2\n    return y.sum().item()",
                ),
            ]
        )
    )
    proc = tclint("nb.ipynb", "--output-format", "full", "--no-cache", cwd=str(tmp_path))
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "nb.ipynb:cell 3:5:12: TC101" in out, out
    # the cell's own lines, numbered within the cell, with the caret under `y.sum().item()`
    assert "4 |     y = x * 2\n" in out, out
    assert "5 |     return y.sum().item()\n" in out, out
    assert "  |            ^^^^^^^^^^^^^^ TC101" in out, out


def test_init_inputs_names_one_command_in_the_stub_and_the_message(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text(
        "import torch\n\n\nclass Block(torch.nn.Module):\n    def __init__(self, dim):\n"
        "        super().__init__()\n\n    def forward(self, x):\n        return x\n"
    )
    proc = tclint("probe", "--init-inputs", "pkg/model.py::Block", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "then run `tclint probe pkg/model.py::Block`." in proc.stdout, proc.stdout
    stubs = [p for p in pkg.iterdir() if "probe_inputs" in p.name]
    assert len(stubs) == 1, list(pkg.iterdir())
    assert "`tclint probe pkg/model.py::Block`" in stubs[0].read_text()


def test_under_pre_commit_a_batch_prints_findings_and_no_summary(tmp_path):
    """pre-commit runs a hook on batches of files in parallel: a batch's "All checks passed!" or
    "Found 1 problem." would speak for that batch only, so under PRE_COMMIT=1 none is printed."""
    (tmp_path / "bad.py").write_text(TC104_FIXABLE)
    (tmp_path / "good.py").write_text("import torch\n\n\n@torch.compile\ndef g(x):\n    return x * 2\n")
    env = {k: v for k, v in os.environ.items() if k != "PRE_COMMIT"}
    run = lambda *args, **extra: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "tclint.rules", "check", "--force-exclude", *args],
        cwd=str(tmp_path),
        env={**env, **extra},
        capture_output=True,
        text=True,
        timeout=120,
    )
    clean = run("good.py", PRE_COMMIT="1")
    assert (clean.returncode, clean.stdout, clean.stderr) == (0, "", "")
    failing = run("bad.py", PRE_COMMIT="1")
    assert failing.returncode == 1
    assert failing.stdout.splitlines() and all(": TC104 " in line for line in failing.stdout.splitlines()), (
        failing.stdout
    )
    assert "Found" not in failing.stdout + failing.stderr
    # outside pre-commit the summary stays
    assert "All checks passed!" in run("good.py").stdout
    assert "Found 1 problem." in run("bad.py").stdout
