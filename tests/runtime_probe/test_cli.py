"""`tclint probe` end to end, as a user runs it: cold worker, formats, exit status, config."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers.probeutil import FIX, fixture

pytestmark = [pytest.mark.dynamo, pytest.mark.slow]

TCLINT = [sys.executable, "-m", "tclint.rules"]


def tclint(*args: str, cwd: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TCLINT, "probe", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_program_mode_concise_merges_the_static_findings():
    train = fixture("train")
    proc = tclint("train.py", "--steps", "3", cwd=train)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    confirmed = [line for line in lines if "[confirmed by probe, 3 hits]" in line]
    assert {line.split(":")[1] for line in confirmed} == {"35", "37"}  # the print and the tensor `if`
    # the short last batch: one info finding (the continuation after the print folded into it)
    (recompile,) = [line for line in lines if "TC902" in line]
    assert "`TinyClassifier.forward` recompiled 1 time: `tokens` changed size in dim 0: 8 -> 4" in recompile
    assert (
        "1 continuation after graph breaks recompiled with it" in recompile and "probe only" not in recompile
    )
    assert lines[-1].startswith("Probe ok: completed;") and "2 graph-break sites (6 hits)" in lines[-1]
    assert "tick" not in proc.stdout  # the program's own output never mixes with the report


def test_json_report_has_every_section(tmp_path):
    out = tmp_path / "report.json"
    proc = tclint(
        "--output-format",
        "json",
        "--output-file",
        str(out),
        "--no-static",
        "--show-output",
        "train.py",
        "--steps",
        "2",
        cwd=fixture("train"),
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("tick\n") == 2 and "step 0 loss" in proc.stderr  # streamed, on stderr
    data = json.loads(out.read_text())
    for key in ("diagnostics", "environment", "correctness", "compiles", "graph_breaks", "errors", "run"):
        assert key in data
    assert data["environment"]["torch"].startswith("2.13")
    assert data["environment"]["backend"] == "eager"
    codes = sorted(d["code"] for d in data["diagnostics"])
    assert codes.count("TC901") == 2 and all(d["origin"] == "probe" for d in data["diagnostics"])
    tc901 = [d for d in data["diagnostics"] if d["code"] == "TC901"]
    assert {d["hits"] for d in tc901} == {2} and not any(d["unpredicted"] for d in tc901)  # --no-static
    assert all(
        d["url"].startswith("https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0") for d in tc901
    )
    assert data["run"]["cold_start"] is True


def test_function_mode_full_report_and_formats():
    funcs = fixture("funcs")
    proc = tclint("--output-format", "full", "blocks.py::Scorer", cwd=funcs)
    assert proc.returncode == 1, proc.stderr
    text = proc.stdout
    order = [
        text.index(h) for h in ("Environment", "Correctness", "Compilations", "Graph breaks", "Diagnostics")
    ]
    assert order == sorted(order)
    assert "[ok ] call eval b=4: match" in text and "3 hits" in text
    sarif = json.loads(
        tclint("--output-format", "sarif", "--no-static", "blocks.py::gated", cwd=funcs).stdout
    )
    assert sarif["version"] == "2.1.0"
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == {"TC902"}
    github = tclint("--output-format", "github", "--no-static", "blocks.py::gated", cwd=funcs).stdout
    assert github.startswith("::warning title=tclint (TC902),file=")


def test_exit_status_zero_when_nothing_is_found(tmp_path):
    (tmp_path / "clean.py").write_text(
        "import torch\n\n@torch.compile\ndef f(x):\n    return x * 2\n\nf(torch.ones(3))\n"
    )
    proc = tclint("clean.py", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 graph-break sites" in proc.stdout


def test_usage_errors_exit_2(tmp_path):
    assert tclint("missing.py").returncode == 2
    proc = tclint("blocks.py::nope", cwd=fixture("funcs"))
    assert proc.returncode == 2 and "has no top-level `nope`" in proc.stderr
    proc = tclint("--memory-limit", "lots", "x.py")
    assert proc.returncode == 2 and "memory-limit" in proc.stderr
    proc = tclint("blocks.py::needs_config", cwd=fixture("funcs"))
    assert (
        proc.returncode == 2 and "def inputs_needs_config" in proc.stderr and "--init-inputs" in proc.stderr
    )
    assert tclint().returncode == 2
    (tmp_path / "pyproject.toml").write_text("[tool.tclint.probe]\ntimeout = 'soon'\n")
    (tmp_path / "s.py").write_text("print('hi')\n")
    proc = tclint("s.py", cwd=str(tmp_path))
    assert proc.returncode == 2 and "probe.timeout" in proc.stderr


def test_config_and_module_mode(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.tclint.probe]\nmax-calls = 2\ntimeout = 120\n\n[tool.tclint.dynamo]\ncapture_scalar_outputs = true\n"
    )
    (tmp_path / "loop.py").write_text(
        "import torch\n\n@torch.compile\ndef f(x):\n    return x * x.sum().item()\n\n"
        "for _ in range(10):\n    f(torch.ones(3))\n"
    )
    proc = tclint("--output-format", "json", "-m", "loop", cwd=str(tmp_path))
    data = json.loads(proc.stdout)
    assert data["status"] == "stopped" and data["run"]["compiled_calls"] == 2
    assert data["environment"]["config"]["capture_scalar_outputs"] is True
    assert data["graph_breaks"] == []  # captured: .item() stays in the graph


def test_init_inputs_cli(tmp_path):
    import shutil

    shutil.copy(os.path.join(FIX, "funcs", "blocks.py"), tmp_path / "blocks.py")
    proc = tclint("--init-inputs", "blocks.py::Scorer", cwd=str(tmp_path))
    assert proc.returncode == 0 and "blocks_probe_inputs.py" in proc.stdout
    text = (tmp_path / "blocks_probe_inputs.py").read_text()
    assert "def make_Scorer():" in text and "Scorer(dim=1)" in text and "def inputs_Scorer(model):" in text


def _in_folder(folder: str) -> list[int]:
    """Live processes whose working directory is ``folder`` (the worker, its forks and what the
    probed code started all run there; other jobs on the machine do not)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{name}/cwd")
            with open(f"/proc/{name}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cwd == folder and state not in ("Z", "X"):
            out.append(int(name))
    return out


def test_no_processes_left_after_a_cli_timeout(tmp_path):
    (tmp_path / "hang.py").write_text(
        "import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "time.sleep(600)\n"
    )
    proc = tclint("--timeout", "3", "hang.py", cwd=str(tmp_path), timeout=120)
    assert proc.returncode == 1 and "timed out after 3 s" in proc.stdout
    assert "hang.py:3" in proc.stdout
    assert _in_folder(os.path.realpath(tmp_path)) == []


def _marked(marker: str) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmd = fh.read().decode("utf-8", "replace")
            with open(f"/proc/{name}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmd and state not in ("Z", "X"):
            out.append(int(name))
    return out


def test_killing_the_caller_takes_the_probe_down(tmp_path):
    """The editor (or a terminal) dies mid-probe: the worker notices its control pipe closing and
    kills the probed process tree; nothing keeps running."""
    import signal
    import time

    marker = f"tclint-orphan-marker-{os.getpid()}"
    (tmp_path / "hang.py").write_text(
        f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{marker}'])\n"
        "time.sleep(600)\n"
    )
    caller = subprocess.Popen(
        [*TCLINT, "probe", "--timeout", "300", "hang.py"],
        cwd=str(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not _marked(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _marked(marker), "the probed program never started"
    scratch = [_scratch_of(pid) for pid in _in_folder(os.path.realpath(tmp_path))]
    (scratch,) = {s for s in scratch if s}  # the worker's folder, given on its command line
    assert os.path.isdir(scratch)
    caller.send_signal(signal.SIGKILL)
    caller.wait(10)
    deadline = time.monotonic() + 10
    while (_marked(marker) or os.path.exists(scratch)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _marked(marker) == []
    assert not os.path.exists(scratch)  # the worker removes it when its parent is gone


def _scratch_of(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            args = fh.read().decode("utf-8", "replace").split("\0")
    except OSError:
        return None
    return (
        args[args.index("--scratch") + 1] if "--scratch" in args and "worker.py" in " ".join(args) else None
    )
