"""Language-server memory at repository scale (issue 20): 1,000 edits across 50 files of a tree.

    python bench/scale_memory.py --tree /path/to/transformers --assume "transformers.models.*:*.forward"
    python bench/scale_memory.py --tree .venv/lib/python3.11/site-packages/torch/_dynamo --files 20 --edits 300
    python bench/scale_memory.py --tree ... --checkout /tmp/before --checkout /tmp/after   # A/B, same run

The tree is copied into a scratch workspace (beside a ``pyproject.toml``; ``--assume`` sets
``assume-compiled`` there), and the real server (``python -m tclint.server``) is started over stdio
with the debounce at 0.  The ``--files`` largest files of the tree holding assignments inside
functions are opened one after another (each waits for its diagnostics), the server is left to
finish its background index, then ``--edits`` edits are sent round-robin, three per file in turn:
a character typed at the start of an assignment in a function (``x = ...`` -> ``sx = ...``), Enter
and a new statement after it, both undone (so every file's text is its original after each three
edits).  Each edit waits for the diagnostics of its version.  At the end every file is closed and
the server left idle again.

Memory is the server process's own, from ``/proc/<pid>/status``: ``VmRSS`` (resident now) and
``VmHWM`` (its peak so far).  References measured in the same run:
  libcst parse peak   a child process parsing the same files with libcst, one after another,
                      nothing kept (what any libcst-based tool pays at the least)
  after first open    the server's RSS once the files are open and its index is done
Reported: peak and final RSS as ratios against both, RSS sampled during the edits, and the growth
between the end of the warm-up (the first 10 % of the edits) and the end.  A growth over
``--leak-pct`` (default 10 %) or a second half that grows by more than half of it is flagged as a
leak (an edit loop that keeps something per edit).  Nothing here asserts: the figures go to
docs/performance.md; ``tests/server/test_memory.py`` is the regression check on one file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # tests.helpers.rawlsp
sys.path.insert(0, str(HERE))

from server_latency import Editor, cpu_ms  # noqa: E402

from tests.helpers.rawlsp import RawClient  # noqa: E402

# an assignment to a plain name inside a function or method body (indent >= 4 under a def)
ASSIGN = re.compile(r"^(?P<indent>\s{4,})(?P<name>[A-Za-z_]\w*) = \S")

PARSE = r"""
import sys, libcst
for path in sys.argv[1:]:
    with open(path, "rb") as fh:
        try:
            libcst.parse_module(fh.read())
        except Exception:
            pass
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        print(int(line.split()[1]))
"""


def memory_kib(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` of a process, in KiB (0 when it is gone)."""
    out = {"VmRSS": 0, "VmHWM": 0}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                key = line.split(":", 1)[0]
                if key in out:
                    out[key] = int(line.split()[1])
    except OSError:
        pass
    return out


def _assignment_lines(text: str) -> list[int]:
    """Lines ``name = value`` inside a ``def`` (a crude indentation test: a def above, deeper)."""
    out: list[int] = []
    def_indent: int | None = None
    for i, line in enumerate(text.split("\n")):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if stripped.startswith(("def ", "async def ")):
            def_indent = indent
            continue
        if def_indent is not None and stripped and indent <= def_indent:
            def_indent = None
        m = ASSIGN.match(line)
        if (
            def_indent is not None
            and m
            and indent > def_indent
            and not line.rstrip().endswith(("(", "[", "{", "\\", ","))
        ):
            out.append(i)
    return out


def pick_files(ws: Path, count: int) -> list[Path]:
    """The ``count`` largest ``.py`` files with at least one assignment in a function."""
    candidates = sorted(ws.rglob("*.py"), key=lambda p: (-p.stat().st_size, str(p)))
    out = []
    for path in candidates:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if "\r" not in text and _assignment_lines(text):
            out.append(path)
        if len(out) == count:
            break
    return out


class AssignEditor(Editor):
    """``Editor``'s three-edit typing cycle on the assignments of a file's functions."""

    def __init__(self, client: RawClient, uri: str, text: str) -> None:
        super().__init__(client, uri, text)
        self.targets = _assignment_lines(text)
        self.cycle = 0
        self.col = 0

    def edit(self, n: int) -> dict:
        lines = self.text.split("\n")
        kind = n % 3
        if kind == 0:
            self.target = self.targets[(len(self.targets) // 2 + self.cycle) % len(self.targets)]
            self.cycle += 1
            self.col = len(lines[self.target]) - len(lines[self.target].lstrip())
            return self._change(self.target, self.col, self.target, self.col, "s")
        target, col = self.target, self.col
        if kind == 1:
            end = len(lines[target])
            return self._change(target, end, target, end, "\n" + " " * col + "t = 1")
        nxt = target + 1  # the new line and the typed character removed in one change
        return self._change(target, col, nxt, len(lines[nxt]), lines[target][col + 1 :])


def workspace(tree: Path, work: Path, assume: list[str]) -> Path:
    ws = work / "ws"
    shutil.copytree(tree, ws / tree.name, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
    settings = f"assume-compiled = {json.dumps(assume)}\n" if assume else ""
    (ws / "pyproject.toml").write_text(f'[project]\nname = "scale-memory"\n\n[tool.tclint]\n{settings}')
    return ws


def env_for(checkout: str | None) -> dict[str, str]:
    if checkout is None:
        return {}
    return {"PYTHONPATH": os.path.abspath(checkout) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def libcst_peak_mib(files: list[Path]) -> float:
    proc = subprocess.run(
        [sys.executable, "-c", PARSE, *map(str, files)], capture_output=True, text=True, check=True
    )
    return int(proc.stdout.split()[-1]) / 1024


async def idle(pid: int, quiet: float = 2.0, limit: float = 900.0) -> None:
    """Until the server has used no CPU for ``quiet`` seconds (its background work done)."""
    deadline = time.monotonic() + limit
    last = cpu_ms(pid)
    while time.monotonic() < deadline:
        await asyncio.sleep(quiet)
        now = cpu_ms(pid)
        if now - last < 20:
            return
        last = now


async def measure(ws: Path, files: list[Path], edits: int, checkout: str | None, timeout: float) -> dict:
    client = await RawClient.start(cwd=str(ws), env=env_for(checkout))
    pid = client.proc.pid
    samples: list[tuple[int, int]] = []  # (edits done, RSS KiB)
    timeouts = 0
    t0 = time.perf_counter()
    try:
        await client.initialize(
            str(ws),
            {"textDocument": {"publishDiagnostics": {"relatedInformation": True}}},
            {"settings": {"lintDebounce": 0}},
        )
        started = memory_kib(pid)
        editors: list[AssignEditor] = []
        for path in files:
            text = path.read_text(encoding="utf-8")
            uri = path.as_uri()
            first = client.expect(
                lambda m, uri=uri: (
                    m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                )
            )
            client.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
            )
            try:
                await asyncio.wait_for(first, timeout)
            except asyncio.TimeoutError:
                timeouts += 1
            editors.append(AssignEditor(client, uri, text))
        await idle(pid)
        opened = memory_kib(pid)
        print(f"  {len(files)} files open: RSS {opened['VmRSS'] / 1024:.0f} MiB", file=sys.stderr, flush=True)
        open_s = time.perf_counter() - t0
        samples.append((0, opened["VmRSS"]))
        step = max(1, edits // 40)
        latencies: list[float] = []
        for n in range(edits):
            editor = editors[(n // 3) % len(editors)]
            try:
                latencies.append(await editor.send(editor.edit(n)))
            except asyncio.TimeoutError:
                timeouts += 1
            if n % 30 == 0:
                client.received.clear()  # the bench's own client must not be what grows
            if (n + 1) % step == 0 or n == edits - 1:
                samples.append((n + 1, memory_kib(pid)["VmRSS"]))
                print(f"  {n + 1} edits: RSS {samples[-1][1] / 1024:.0f} MiB", file=sys.stderr, flush=True)
        after_edits = memory_kib(pid)
        for editor in editors:
            client.notify("textDocument/didClose", {"textDocument": {"uri": editor.uri}})
        await idle(pid)
        closed = memory_kib(pid)
    finally:
        await client.shutdown()
    warm_index = next((i for i, (n, _k) in enumerate(samples) if n >= edits // 10), 0)
    warm = samples[warm_index][1]
    half = samples[(warm_index + len(samples) - 1) // 2][1]
    end = samples[-1][1]
    latencies.sort()
    return {
        "checkout": checkout or "(installed)",
        "files": len(files),
        "edits": edits,
        "timeouts": timeouts,
        "open_s": open_s,
        "median_ms": latencies[len(latencies) // 2] if latencies else None,
        "p95_ms": latencies[int(0.95 * (len(latencies) - 1))] if latencies else None,
        "rss_started_mib": started["VmRSS"] / 1024,
        "rss_after_open_mib": opened["VmRSS"] / 1024,
        "peak_after_open_mib": opened["VmHWM"] / 1024,
        "rss_after_warmup_mib": warm / 1024,
        "rss_after_edits_mib": after_edits["VmRSS"] / 1024,
        "peak_mib": max(after_edits["VmHWM"], closed["VmHWM"]) / 1024,
        "rss_after_close_mib": closed["VmRSS"] / 1024,
        "growth_after_warmup_pct": (end - warm) / warm * 100 if warm else 0.0,
        "growth_second_half_pct": (end - half) / half * 100 if half else 0.0,
        "samples": samples,
    }


def report(row: dict, parse_mib: float, leak_pct: float) -> list[str]:
    opened = row["rss_after_open_mib"]
    leak = row["growth_after_warmup_pct"] > leak_pct or row["growth_second_half_pct"] > leak_pct / 2
    return [
        f"## {row['checkout']}: {row['files']} files open, {row['edits']:,} edits"
        f" ({row['timeouts']} without an answer in time), open + index {row['open_s']:.0f} s,"
        f" edit median {row['median_ms'] or 0:.0f} ms, p95 {row['p95_ms'] or 0:.0f} ms",
        f"- RSS after the first open (index done): {opened:.0f} MiB = {opened / parse_mib:.2f}x the libcst parse peak",
        f"- peak RSS over the run: {row['peak_mib']:.0f} MiB = {row['peak_mib'] / parse_mib:.2f}x the libcst parse peak,"
        f" {row['peak_mib'] / opened:.2f}x after the first open",
        f"- RSS after the edits: {row['rss_after_edits_mib']:.0f} MiB = {row['rss_after_edits_mib'] / parse_mib:.2f}x the parse peak,"
        f" {row['rss_after_edits_mib'] / opened:.2f}x after the first open; after closing every file:"
        f" {row['rss_after_close_mib']:.0f} MiB",
        f"- growth: {row['growth_after_warmup_pct']:+.1f}% from the end of the warm-up to the end,"
        f" {row['growth_second_half_pct']:+.1f}% over the second half"
        + ("  ** LEAK? memory keeps growing with the edits **" if leak else "  (flat: no leak)"),
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tree", required=True, help="the folder copied as the workspace (a package)")
    p.add_argument("--assume", action="append", default=[], help="an assume-compiled pattern (repeatable)")
    p.add_argument("--files", type=int, default=50, help="files opened and edited (the largest ones)")
    p.add_argument("--edits", type=int, default=1000, help="edits in all, three per file in turn")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for one answer")
    p.add_argument("--leak-pct", type=float, default=10.0, help="growth after warm-up flagged as a leak")
    p.add_argument(
        "--checkout", action="append", help="run the server from DIR/tclint (repeatable: A/B in one run)"
    )
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args(argv)
    tree = Path(args.tree).resolve()
    rows = []
    with tempfile.TemporaryDirectory(prefix="tclint-scale-memory-") as tmp:
        ws = workspace(tree, Path(tmp), args.assume)
        files = pick_files(ws, args.files)
        parse_mib = libcst_peak_mib(files)
        for checkout in args.checkout or [None]:
            rows.append(asyncio.run(measure(ws, files, args.edits, checkout, args.timeout)))
            print(f"measured {rows[-1]['checkout']}", file=sys.stderr)
    total = sum(1 for _ in tree.rglob("*.py"))
    print(
        f"\ntclint server memory: {tree.name} ({total:,} files) as the workspace, {len(files)} largest files edited,"
        f" {time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()}, {os.cpu_count()} CPUs,"
        f" load {os.getloadavg()[0]:.1f}; libcst parse peak of the same files: {parse_mib:.0f} MiB\n"
    )
    for row in rows:
        print("\n".join(report(row, parse_mib, args.leak_pct)))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"tree": str(tree), "libcst_peak_mib": parse_mib, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
