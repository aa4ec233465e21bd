"""Language-server latency: a change -> its published diagnostics, on 500/2,000/8,000-line files.

    python bench/server_latency.py                    # all sizes, 30 edits each, memory over 10,000 edits
    python bench/server_latency.py --quick            # 2,000 lines, 20 edits, memory over 1,000 edits
    python bench/server_latency.py --sizes 2000 --edits 50 --memory-edits 0 --json out.json
    python bench/server_latency.py --sizes 2000 --in-process --checkout /tmp/before --checkout /tmp/after

The real server runs as a child process and is driven over stdio.  The debounce is set to 0 (the
issue's target excludes it), so a latency is "didChange sent" -> "publishDiagnostics for that
version received", including the protocol, the JSON, the incremental analysis, the project pass
over every file of the workspace and the conversion to LSP.  Edits alternate the kinds of a
typing session: a character typed inside a method, a new line (Enter) with a new statement, and a
line deleted again.

In the same run, the same edited texts are linted from scratch by the CLI's pipeline
(``Linter.lint_files`` with the buffer text as an override): the "full re-lint" the server avoids.
The workspace has the model file plus a training script that compiles it (so every ``forward`` is
in a compiled region and carries findings).

Memory: the server's RSS (``/proc/<pid>/status``) over N consecutive edits of the 2,000-line
file; the report gives RSS after warm-up and at the end, and the growth in between.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
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

BLOCK = '''
class Block{i}(nn.Module):
    """One block of the generated model."""

    def __init__(self, dim: int = 64):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.scale = 0.5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        h = self.lin(h)
        if h.sum() > 0:
            h = h * 2
        s = h.mean().item()
        print("block {i}", s)
        h = F.gelu(h) * self.scale
        return h + x

'''


def model_source(lines: int) -> str:
    out = ["import torch", "import torch.nn as nn", "import torch.nn.functional as F", ""]
    text = "\n".join(out) + "\n"
    n = 0
    while text.count("\n") < lines - 12:
        text += BLOCK.replace("{i}", str(n))
        n += 1
    blocks = ", ".join(f"Block{i}()" for i in range(n))
    text += f"\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.blocks = nn.Sequential({blocks})\n\n    def forward(self, x):\n        return self.blocks(x)\n"
    return text


TRAIN = "import torch\n\nfrom model import Model\n\nmodel = torch.compile(Model())\n"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[k]


def cpu_ms(pid: int) -> float:
    """User + system CPU time of a process so far (from /proc), in milliseconds."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Editor:
    """Keeps the document text in step with the edits it sends (UTF-16 = code points here)."""

    def __init__(self, client: RawClient, uri: str, text: str) -> None:
        self.client, self.uri, self.text, self.version = client, uri, text, 1
        self.lines = text.split("\n")
        self.cpu: list[float] = []  # the server's CPU time per measured edit (ms)
        self.target = 0

    def _change(self, line: int, col: int, end_line: int, end_col: int, new: str) -> dict:
        lines = self.text.split("\n")
        start = sum(len(x) + 1 for x in lines[:line]) + col
        end = sum(len(x) + 1 for x in lines[:end_line]) + end_col
        self.text = self.text[:start] + new + self.text[end:]
        return {
            "range": {
                "start": {"line": line, "character": col},
                "end": {"line": end_line, "character": end_col},
            },
            "text": new,
        }

    def edit(self, n: int) -> dict:
        """The n-th edit of a typing session, cycling over three kinds around the middle of the
        file: a character typed in a method body, Enter and a new statement, then both undone
        (so the text comes back to the original every three edits, for any number of edits)."""
        lines = self.text.split("\n")
        kind = n % 3
        if kind == 0:
            targets = [i for i, x in enumerate(lines) if x.strip().startswith("s = h.mean().item()")]
            self.target = targets[(len(targets) // 2 + n // 3) % len(targets)]
            return self._change(self.target, 8, self.target, 8, "s")  # `ss = ...`
        target = self.target
        if kind == 1:
            return self._change(target, len(lines[target]), target, len(lines[target]), "\n        t = s + 1")
        nxt = target + 1  # delete the new line and the typed character in one change
        return self._change(target, 8, nxt, len(lines[nxt]), lines[target][9:])

    async def send(self, change: dict) -> float:
        self.version += 1
        version = self.version
        got = self.client.expect(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == self.uri
                and m["params"].get("version") == version
            )
        )
        cpu0 = cpu_ms(self.client.proc.pid)
        start = time.perf_counter()
        self.client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": self.uri, "version": version}, "contentChanges": [change]},
        )
        await asyncio.wait_for(got, 120)
        elapsed = (time.perf_counter() - start) * 1000
        self.cpu.append(cpu_ms(self.client.proc.pid) - cpu0)
        return elapsed


def full_relint_ms(path: str, text: str, root: str, reps: int) -> list[float]:
    """The CLI's pipeline from scratch on the same text (project index included)."""
    from tclint.rules.config import ConfigResolver
    from tclint.rules.engine import Linter

    out = []
    for _ in range(reps):
        start = time.perf_counter()
        Linter(ConfigResolver(), cache=None, jobs=1).lint_files(
            [path], [path, os.path.join(root, "train.py")], {os.path.abspath(path): text.encode()}
        )
        out.append((time.perf_counter() - start) * 1000)
    return out


def server_env(checkout: str | None) -> dict[str, str] | None:
    """The server's environment for ``--checkout DIR``: tclint imported from ``DIR/tclint``."""
    if checkout is None:
        return None
    return {"PYTHONPATH": os.path.abspath(checkout) + os.pathsep + os.environ.get("PYTHONPATH", "")}


async def measure(size: int, edits: int, workdir: Path, reps: int, checkout: str | None = None) -> dict:
    root = workdir / f"ws{size}"
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[project]\nname = "bench"\n\n[tool.tclint]\n')
    text = model_source(size)
    model = root / "model.py"
    model.write_text(text)
    (root / "train.py").write_text(TRAIN)
    client = await RawClient.start(cwd=str(root), env=server_env(checkout))
    try:
        await client.initialize(
            str(root),
            {"textDocument": {"publishDiagnostics": {"relatedInformation": True}}},
            {"settings": {"lintDebounce": 0}},
        )
        uri = model.as_uri()
        first = client.expect(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        t0 = time.perf_counter()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        opened = await asyncio.wait_for(first, 300)
        open_ms = (time.perf_counter() - t0) * 1000
        editor = Editor(client, uri, text)
        for n in range(3):  # warm-up
            await editor.send(editor.edit(n))
        editor.cpu.clear()
        latencies = []
        by_kind: dict[int, list[float]] = {0: [], 1: [], 2: []}
        counts = []
        for n in range(edits):
            ms = await editor.send(editor.edit(n))
            latencies.append(ms)
            by_kind[n % 3].append(ms)
            await asyncio.sleep(0.02)
        for _t, m in client.publications(uri)[-1:]:
            counts.append(len(m["diagnostics"]))
        full = full_relint_ms(str(model), editor.text, str(root), reps)
    finally:
        await client.shutdown()
    return {
        "lines": text.count("\n"),
        "findings": len(opened["params"]["diagnostics"]),
        "open_ms": open_ms,
        "edits": len(latencies),
        "median_ms": statistics.median(latencies),
        "p95_ms": pct(latencies, 0.95),
        "max_ms": max(latencies),
        "typing_p95_ms": pct(by_kind[0], 0.95),
        "newline_p95_ms": pct(by_kind[1], 0.95),
        "delete_p95_ms": pct(by_kind[2], 0.95),
        "server_cpu_median_ms": statistics.median(editor.cpu),
        "server_cpu_p95_ms": pct(editor.cpu, 0.95),
        "full_relint_median_ms": statistics.median(full),
        "full_relint_p95_ms": pct(full, 0.95),
    }


def in_process(size: int, edits: int) -> dict:
    """The same edits through ``Workspace.lint`` in this process, without the protocol and the
    conversion to LSP: the CPU time (``time.process_time``) of each edit's analysis, project pass
    and diagnostics, with the garbage collector tuned as the server tunes it at start-up."""
    from tclint.server.__main__ import _tune_gc
    from tclint.server.workspace import Workspace

    _tune_gc()
    root = Path(tempfile.mkdtemp(prefix="tclint-inprocess-"))
    (root / "pyproject.toml").write_text('[project]\nname = "bench"\n\n[tool.tclint]\n')
    text = model_source(size)
    path = str(root / "model.py")
    (root / "model.py").write_text(text)
    (root / "train.py").write_text(TRAIN)
    ws = Workspace()
    ws.set_folders([str(root)])
    ws.lint(path, text, 1)
    while ws.index_pending():
        ws.index_step(5.0)
    ws.lint(path, text, 1)
    editor = Editor(None, "", text)  # type: ignore[arg-type]  # only its texts are used
    version = 1
    for n in range(3):  # warm-up, as the server runs
        editor.edit(n)
        version += 1
        ws.lint(path, editor.text, version)
    cpu: list[float] = []
    by_kind: dict[int, list[float]] = {0: [], 1: [], 2: []}
    for n in range(edits):
        editor.edit(n)
        version += 1
        start = time.process_time()
        ws.lint(path, editor.text, version)
        ms = (time.process_time() - start) * 1000
        cpu.append(ms)
        by_kind[n % 3].append(ms)
    shutil.rmtree(root, ignore_errors=True)
    return {
        "lines": text.count("\n"),
        "edits": edits,
        "cpu_median_ms": statistics.median(cpu),
        "cpu_p95_ms": pct(cpu, 0.95),
        "cpu_max_ms": max(cpu),
        "kind_medians_ms": [statistics.median(by_kind[k]) for k in range(3)],
    }


def in_process_rows(sizes: list[int], edits: int, checkouts: list[str | None]) -> list[dict]:
    """``in_process`` in a child per checkout (its own ``tclint``), in the same run."""
    rows = []
    for checkout in checkouts:
        for size in sizes:
            env = {**os.environ, **(server_env(checkout) or {})}
            code = f"import json, sys; sys.path.insert(0, {str(HERE)!r}); import server_latency as b; print(json.dumps(b.in_process({size}, {edits})))"
            done = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            )
            row = json.loads(done.stdout.strip().splitlines()[-1])
            row["checkout"] = checkout or "(installed)"
            rows.append(row)
    return rows


async def memory(edits: int, workdir: Path) -> dict:
    root = workdir / "mem"
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[project]\nname = "bench"\n\n[tool.tclint]\n')
    text = model_source(2000)
    model = root / "model.py"
    model.write_text(text)
    (root / "train.py").write_text(TRAIN)
    client = await RawClient.start(cwd=str(root))
    samples: list[tuple[int, int]] = []
    try:
        await client.initialize(
            str(root), {"textDocument": {"publishDiagnostics": {}}}, {"settings": {"lintDebounce": 0}}
        )
        uri = model.as_uri()
        first = client.expect(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        await asyncio.wait_for(first, 300)
        editor = Editor(client, uri, text)
        step = max(1, edits // 20)
        for n in range(edits):
            await editor.send(editor.edit(n))
            if n % 50 == 0:
                client.received.clear()  # the test client must not be what grows
            if n % step == 0 or n == edits - 1:
                samples.append((n, rss_kib(client.proc.pid)))
    finally:
        await client.shutdown()
    warm = [kib for n, kib in samples if n >= edits // 10] or [samples[-1][1]]
    return {
        "edits": edits,
        "rss_start_mib": samples[0][1] / 1024,
        "rss_after_warmup_mib": warm[0] / 1024,
        "rss_end_mib": samples[-1][1] / 1024,
        "rss_max_mib": max(k for _n, k in samples) / 1024,
        "growth_after_warmup_pct": (samples[-1][1] - warm[0]) / warm[0] * 100 if warm[0] else 0.0,
        "samples": samples,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[500, 2000, 8000])
    p.add_argument("--edits", type=int, default=30, help="measured edits per size (>= 20)")
    p.add_argument("--full-reps", type=int, default=5, help="full re-lints per size")
    p.add_argument("--memory-edits", type=int, default=10_000, help="edits for the memory run (0: skip)")
    p.add_argument("--quick", action="store_true", help="2,000 lines, 20 edits, 1,000 edits for memory")
    p.add_argument("--json", help="also write the results here")
    p.add_argument(
        "--checkout",
        action="append",
        help="run the server from DIR/tclint (repeatable: each checkout measured in the same run)",
    )
    p.add_argument(
        "--in-process",
        action="store_true",
        help="no server process: the same edits through Workspace.lint, CPU per edit (each checkout in a child)",
    )
    args = p.parse_args(argv)
    if args.in_process:
        rows = in_process_rows(args.sizes, args.edits, args.checkout or [None])
        print(
            f"\nWorkspace.lint in process, CPU per edit (server GC tuning), load {os.getloadavg()[0]:.1f}\n"
        )
        print(
            f"{'tclint':<28} {'lines':>6} {'edits':>5} {'median':>8} {'p95':>8} {'max':>8}  typed/Enter/undo medians"
        )
        for r in rows:
            kinds = "/".join(f"{x:.0f}" for x in r["kind_medians_ms"])
            print(
                f"{r['checkout'][-28:]:<28} {r['lines']:>6} {r['edits']:>5} {r['cpu_median_ms']:>6.0f}ms"
                f" {r['cpu_p95_ms']:>6.0f}ms {r['cpu_max_ms']:>6.0f}ms  {kinds} ms"
            )
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"in_process": rows}, fh, indent=1)
        return 0
    if args.quick:
        args.sizes, args.edits, args.memory_edits, args.full_reps = [2000], 20, 1000, 3
    results: dict = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d"),
    }
    with tempfile.TemporaryDirectory(prefix="tclint-server-bench-") as tmp:
        work = Path(tmp)
        rows = []
        for checkout in args.checkout or [None]:
            for size in args.sizes:
                row = asyncio.run(measure(size, args.edits, work, args.full_reps, checkout))
                row["checkout"] = checkout or "(installed)"
                rows.append(row)
                print(f"measured {size} lines ({row['checkout']})", file=sys.stderr)
        results["latency"] = rows
        if args.memory_edits:
            results["memory"] = asyncio.run(memory(args.memory_edits, work))
    print(
        f"\ntclint server latency: change -> published diagnostics (debounce 0), {results['machine']}, {results['date']}\n"
    )
    print(
        f"{'server':<20} {'lines':>6} {'findings':>8} {'open':>8} {'edits':>5} {'median':>8} {'p95':>8} {'max':>8}  {'p95 typing/newline/delete':>25}  {'server CPU med/p95':>18}  {'full re-lint':>12} {'speed-up':>8}"
    )
    for r in results["latency"]:
        kinds = f"{r['typing_p95_ms']:.0f}/{r['newline_p95_ms']:.0f}/{r['delete_p95_ms']:.0f} ms"
        cpu = f"{r['server_cpu_median_ms']:.0f}/{r['server_cpu_p95_ms']:.0f} ms"
        print(
            f"{r['checkout'][-20:]:<20} {r['lines']:>6} {r['findings']:>8} {r['open_ms']:>6.0f}ms {r['edits']:>5} {r['median_ms']:>6.1f}ms {r['p95_ms']:>6.1f}ms {r['max_ms']:>6.1f}ms"
            f"  {kinds:>25}  {cpu:>18}  {r['full_relint_median_ms']:>10.0f}ms {r['full_relint_median_ms'] / r['median_ms']:>7.1f}x"
        )
    print(
        f"\n(load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; 'server CPU' is the server process's user+system time per edit)"
    )
    if "memory" in results:
        m = results["memory"]
        print(
            f"\nmemory over {m['edits']:,} edits of the 2,000-line file: RSS {m['rss_start_mib']:.0f} MiB at the start, "
            f"{m['rss_after_warmup_mib']:.0f} MiB after warm-up, {m['rss_end_mib']:.0f} MiB at the end "
            f"(max {m['rss_max_mib']:.0f} MiB; {m['growth_after_warmup_pct']:+.1f}% after warm-up)"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
