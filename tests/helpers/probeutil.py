"""Helpers for the runtime-probe tests.

``reference()`` runs ``reference_trace.py`` (torch's own tools, no tclint code) on the same
program as a probe, so the probe's numbers are checked against an independent computation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(os.path.dirname(HERE), "fixtures", "runtime_probe")
PYTHON = sys.executable


def fixture(*parts: str) -> str:
    return os.path.join(FIX, *parts)


def probe_program_json(folder: str, script: str, out: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """``tclint probe SCRIPT`` run as a program in the fixture folder ``folder``, its JSON report
    written to ``out``: (the process, the report's diagnostics)."""
    proc = subprocess.run(
        [PYTHON, "-m", "tclint.rules", "probe", "--output-format", "json", "--output-file", out, script],
        cwd=fixture(folder),
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    if not os.path.exists(out):
        return proc, []
    with open(out, encoding="utf-8") as fh:
        return proc, json.load(fh)["diagnostics"]


def reference(
    target: str, args: list[str] | None = None, module: bool = False, cwd: str | None = None, tmp_path=None
) -> dict:
    out = os.path.join(str(tmp_path), "reference.json")
    cmd = [PYTHON, os.path.join(HERE, "reference_trace.py"), out]
    cmd += ["-m", target] if module else [target]
    cmd += list(args or [])
    proc = subprocess.run(
        cmd,
        cwd=cwd or os.path.dirname(target) if not module else cwd,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert os.path.exists(out), proc.stderr[-3000:]
    with open(out) as fh:
        data = json.load(fh)
    data["stdout"] = proc.stdout
    return data


def reference_sites(ref: dict) -> dict[tuple[str, int, str | None], int | None]:
    """(file, line, gb id) -> hits, computed from the reference run alone.

    The site is the innermost traceback frame in the fixtures folder; its hits are the profiled
    calls of the resume functions Dynamo made for that function at that line."""
    sites: dict[tuple[str, int, str | None], int | None] = {}
    for ev in ref["breaks"]:
        user = [f for f in ev["frames"] if f[0].startswith(os.path.realpath(FIX)) and f[2] != "<module>"]
        if not user:
            continue
        path, line, fn = user[-1]
        sites[(path, line, ev["gb_id"])] = ref["hits"].get(f"{path}|{fn}|{line}")
    return sites


def probe_sites(report) -> dict[tuple[str, int, str | None], int | None]:
    return {(os.path.realpath(b["file"]), b["line"], b["gb_id"]): b["hits"] for b in report.graph_breaks}


def pids_alive(pids: list[int]) -> list[int]:
    """Which of these processes still exist (zombies count as gone)."""
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            alive.append(pid)
    return alive


def session_processes(sid: int) -> list[int]:
    """Every live process in session ``sid`` (the worker runs in a session of its own)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] not in ("Z", "X") and int(fields[3]) == sid:
            out.append(int(name))
    return sorted(out)
