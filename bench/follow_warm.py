"""A warm open with ``follow-libraries`` against the same open without it (issue 21, "Speed").

    .venv/bin/python bench/follow_warm.py                                   # hf + timm scripts, CLI and server
    .venv/bin/python bench/follow_warm.py --scripts hf_user.py --reps 5 --json out.json
    .venv/bin/python bench/follow_warm.py --checkout /tmp/snap              # tclint from /tmp/snap/tclint

Each user script of ``bench/lib_scripts`` is copied into two workspaces that differ only in their
``pyproject.toml``: one with ``follow-libraries = true``, one without; both name the interpreter
whose site-packages hold the libraries (``[tool.tclint.probe] python``, default
``/work/venv_libmodels/bin/python``: transformers 5.24, timm 1.0.31, torchvision).  The user-level
cache (``XDG_CACHE_HOME``) is a fresh folder of the run, so the first open measures the library
cache empty ("first open" below); every other figure is warm.

Measured, alternating the two workspaces sample by sample (same run, same load: the ratio is what
to read; the machine is shared):

* CLI, ``tclint check <script>`` in a new process each time:
  ``unchanged`` (the second open of an unchanged script), ``edit`` (a comment appended: lines do
  not move) and ``moved`` (a line inserted at the top: every position below moves);
* server, ``tclint server`` started fresh for each sample (a new editor session opening the
  script the second time): from ``didOpen`` to the first ``publishDiagnostics``; and, in one
  session, an edit (a comment appended) to its diagnostics (``lintDebounce`` 0), once the
  server has finished the open's full lint (``settle`` seconds after the first diagnostics), and
  the first edit sent at once after the first diagnostics (``edit_at_once``).  The first
  editor session of each workspace (``first_session``) opens the script with no warm-open record
  yet (``server/warmopen.py``; the CLI runs before it leave none): it writes the record the
  sampled sessions open from.

Each follow run's JSON output is compared with a ``--no-cache`` run of the same text (a cold
computation): ``equal`` says whether every warm result was exactly the cold one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # tests.helpers.rawlsp

from tests.helpers.rawlsp import RawClient  # noqa: E402

SCRIPTS = HERE / "lib_scripts"
DEFAULT_PYTHON = "/work/venv_libmodels/bin/python"


def _pyproject(python: str, follow: bool) -> str:
    flag = "follow-libraries = true\n" if follow else ""
    return f'[project]\nname = "bench"\n\n[tool.tclint]\n{flag}\n[tool.tclint.probe]\npython = "{python}"\n'


def _env(checkout: str | None, xdg: str) -> dict[str, str]:
    env = {**os.environ, "XDG_CACHE_HOME": xdg}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user's install: tclint's own modules compiled once
    if checkout is not None:
        env["PYTHONPATH"] = os.path.abspath(checkout) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _check(ws: Path, script: str, env: dict[str, str], *extra: str) -> tuple[float, str]:
    """(wall seconds, JSON output) of one ``tclint check`` in a new process."""
    out = ws / "out.json"
    cmd = [sys.executable, "-m", "tclint.rules", "check", script, "--exit-zero", "-q"]
    cmd += ["--output-format", "json", "-o", str(out), *extra]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ws, env=env, capture_output=True, text=True)
    secs = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"tclint check failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return secs, out.read_text()


def _edit(path: Path, kind: str, n: int) -> None:
    text = path.read_text()
    if kind == "edit":
        text += f"# edit {n}\n"
    elif kind == "moved":
        text = f"# moved {n}\n" + text
    path.write_text(text)
    old = time.time() - 3600  # not within the racy-timestamp margin (a user's edit is seconds old)
    os.utime(path, (old, old))


async def _server_open(
    ws: Path, script: str, env: dict[str, str], edits: int, settle: float = 0.0
) -> tuple[float, list[float]]:
    """(seconds from didOpen to the first diagnostics, seconds per appended-comment edit, the
    first sent ``settle`` seconds after those diagnostics)."""
    client = await RawClient.start(cwd=str(ws), env=env)
    try:
        await client.initialize(
            str(ws),
            {"textDocument": {"publishDiagnostics": {"relatedInformation": True}}},
            {"settings": {"lintDebounce": 0}},
        )
        path = ws / script
        uri = path.as_uri()
        text = path.read_text()
        first = client.expect(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        t0 = time.perf_counter()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        await asyncio.wait_for(first, 600)
        opened = time.perf_counter() - t0
        await asyncio.sleep(settle)
        lines = text.split("\n")
        times = []
        for n in range(edits):
            version = n + 2
            got = client.expect(
                lambda m, v=version: (
                    m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"]["uri"] == uri
                    and m["params"].get("version") == v
                )
            )
            end = len(lines) - 1
            t0 = time.perf_counter()
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [
                        {
                            "range": {
                                "start": {"line": end, "character": 0},
                                "end": {"line": end, "character": 0},
                            },
                            "text": f"# edit {n}\n",
                        }
                    ],
                },
            )
            await asyncio.wait_for(got, 600)
            times.append(time.perf_counter() - t0)
            lines.insert(end, f"# edit {n}")
    finally:
        await client.shutdown()
    return opened, times


def _ratio(a: list[float], b: list[float]) -> float:
    return round(statistics.median(a) / statistics.median(b), 2)


def measure(
    script: str, python: str, reps: int, checkout: str | None, server: bool, cli: bool = True
) -> dict:
    work = Path(tempfile.mkdtemp(prefix="follow_warm_"))
    xdg = str(work / "xdg")
    env = _env(checkout, xdg)
    spaces = {}
    for mode in ("follow", "plain"):
        ws = work / mode
        ws.mkdir()
        (ws / "pyproject.toml").write_text(_pyproject(python, mode == "follow"))
        shutil.copy(SCRIPTS / script, ws / script)
        _edit(ws / script, "none", 0)
        spaces[mode] = ws
    out: dict = {"script": script}
    first, _ = _check(spaces["follow"], script, env)
    out["first_open_s"] = round(first, 2)
    _check(spaces["plain"], script, env)
    if cli:
        out.update(_cli(spaces, script, env, reps))
    if server:
        out["server"] = _server(spaces, script, env, reps)
    shutil.rmtree(work, ignore_errors=True)
    return out


def _cli(spaces: dict[str, Path], script: str, env: dict[str, str], reps: int) -> dict:
    equal = True
    out: dict = {}
    cli: dict[str, dict[str, list[float]]] = {
        k: {"follow": [], "plain": []} for k in ("unchanged", "edit", "moved")
    }
    for n in range(reps):
        for kind in ("unchanged", "edit", "moved"):
            for mode in ("follow", "plain"):
                ws = spaces[mode]
                _edit(ws / script, kind if kind != "unchanged" else "none", n)
                secs, text = _check(ws, script, env)
                cli[kind][mode].append(secs)
                if mode == "follow" and n == 0:
                    _cold, cold_text = _check(ws, script, env, "--no-cache")
                    equal &= cold_text == text
    out["cli"] = {
        kind: {
            "follow_median_s": round(statistics.median(v["follow"]), 3),
            "plain_median_s": round(statistics.median(v["plain"]), 3),
            "ratio": _ratio(v["follow"], v["plain"]),
        }
        for kind, v in cli.items()
    }
    out["equal_to_cold"] = equal
    return out


def _server(spaces: dict[str, Path], script: str, env: dict[str, str], reps: int) -> dict:
    """Fresh-session opens, edits after they settle and edits at once (see the module doc)."""
    first_session: dict[str, float] = {}
    for mode in ("follow", "plain"):  # no warm-open record yet: this session writes it
        _edit(spaces[mode] / script, "none", 0)
        first_session[mode], _times = asyncio.run(_server_open(spaces[mode], script, env, 0))
    settle = 1.0 + 2 * max(first_session.values())
    opens: dict[str, list[float]] = {"follow": [], "plain": []}
    edits: dict[str, list[float]] = {"follow": [], "plain": []}
    at_once: dict[str, list[float]] = {"follow": [], "plain": []}
    for _n in range(reps):
        for mode in ("follow", "plain"):
            opened, times = asyncio.run(_server_open(spaces[mode], script, env, 3, settle))
            opens[mode].append(opened)
            edits[mode].extend(times)
            _opened, times = asyncio.run(_server_open(spaces[mode], script, env, 1))
            at_once[mode].extend(times)
    return {
        "first_session_open_s": {k: round(v, 3) for k, v in first_session.items()},
        "open_follow_median_s": round(statistics.median(opens["follow"]), 3),
        "open_plain_median_s": round(statistics.median(opens["plain"]), 3),
        "open_ratio": _ratio(opens["follow"], opens["plain"]),
        "edit_follow_median_s": round(statistics.median(edits["follow"]), 3),
        "edit_plain_median_s": round(statistics.median(edits["plain"]), 3),
        "edit_ratio": _ratio(edits["follow"], edits["plain"]),
        "edit_at_once_follow_median_s": round(statistics.median(at_once["follow"]), 3),
        "edit_at_once_plain_median_s": round(statistics.median(at_once["plain"]), 3),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scripts", nargs="+", default=["hf_user.py", "timm_user.py"])
    ap.add_argument(
        "--python", default=DEFAULT_PYTHON, help="the interpreter whose site-packages hold the libraries"
    )
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--checkout", help="a folder holding a tclint/ tree to run instead of this one")
    ap.add_argument("--no-server", action="store_true", help="the CLI only")
    ap.add_argument("--no-cli", action="store_true", help="the server only")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    results = []
    for script in args.scripts:
        res = measure(script, args.python, args.reps, args.checkout, not args.no_server, not args.no_cli)
        results.append(res)
        print(json.dumps(res), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
