"""Language-server edit latency inside a large workspace: a real file of the transformers package.

    python bench/scale_server.py --tree /path/to/site-packages/transformers
    python bench/scale_server.py --tree ... --checkout /tmp/before --checkout /tmp/after   # same run, A/B

The package is copied into a scratch workspace with ``assume-compiled =
["transformers.models.*:*.forward"]`` (so every model's forward is a compiled region and the
cross-file pass covers the whole package), the workspace's cache is filled by one ``tclint check``
(the server reads the CLI's cache where a project has one), then the real server is started over
stdio with the debounce at 0, ``models/llama/modeling_llama.py`` is opened, and once the server is
idle (its index done) edits are sent: a character typed at the start of an assignment inside a
``forward`` (``residual = ...`` -> ``sresidual = ...``), Enter and a new statement after it, both
undone (as ``bench/server_latency.py`` does on its generated files).  A latency is "didChange
sent" -> "publishDiagnostics for that version received".

``--checkout DIR`` (repeatable) runs the server from another copy of tclint (``DIR/tclint`` is the
package, e.g. ``git archive <commit>`` unpacked into ``DIR/tclint``), each in the same run on the
same workspace, so a before/after comparison shares the machine's load.
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
sys.path.insert(0, str(HERE))

from server_latency import Editor, cpu_ms, pct  # noqa: E402

from tests.helpers.rawlsp import RawClient  # noqa: E402

CONFIG = '[project]\nname = "scale-bench"\n\n[tool.tclint]\nassume-compiled = ["transformers.models.*:*.forward"]\n'
TARGET = "transformers/models/llama/modeling_llama.py"
PREFIX = "residual = hidden_states"


class PrefixEditor(Editor):
    """``Editor``'s typing session on the assignment lines starting with ``PREFIX``."""

    def edit(self, n: int) -> dict:
        lines = self.text.split("\n")
        kind = n % 3
        if kind == 0:
            targets = [i for i, x in enumerate(lines) if x.strip().startswith(PREFIX)]
            self.target = targets[(len(targets) // 2 + n // 3) % len(targets)]
            self.col = len(lines[self.target]) - len(lines[self.target].lstrip())
            return self._change(self.target, self.col, self.target, self.col, "s")
        target, col = self.target, self.col
        if kind == 1:
            return self._change(
                target, len(lines[target]), target, len(lines[target]), "\n" + " " * col + "t = 1"
            )
        nxt = target + 1
        return self._change(target, col, nxt, len(lines[nxt]), lines[target][col + 1 :])


def workspace(tree: Path, work: Path) -> Path:
    ws = work / "ws"
    if not ws.exists():
        shutil.copytree(tree, ws / "transformers", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        (ws / "pyproject.toml").write_text(CONFIG)
    return ws


def env_for(checkout: str | None) -> dict[str, str]:
    if checkout is None:
        return {}
    return {"PYTHONPATH": os.path.abspath(checkout) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def fill_cache(ws: Path, checkout: str | None) -> float:
    started = time.perf_counter()
    code = "import sys; from tclint.rules.cli import main; sys.exit(main())"
    subprocess.run(
        [sys.executable, "-c", code, "check", ".", "--quiet"],
        cwd=ws,
        env={**os.environ, **env_for(checkout)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


async def idle(pid: int, quiet: float = 2.0, limit: float = 600.0) -> None:
    """Wait until the server has used no CPU for ``quiet`` seconds (its background index done)."""
    deadline = time.monotonic() + limit
    last = cpu_ms(pid)
    while time.monotonic() < deadline:
        await asyncio.sleep(quiet)
        now = cpu_ms(pid)
        if now - last < 20:
            return
        last = now


async def measure(ws: Path, edits: int, checkout: str | None) -> dict:
    path = ws / TARGET
    text = path.read_text()
    client = await RawClient.start(cwd=str(ws), env=env_for(checkout))
    try:
        await client.initialize(
            str(ws),
            {"textDocument": {"publishDiagnostics": {"relatedInformation": True}}},
            {"settings": {"lintDebounce": 0}},
        )
        uri = path.as_uri()
        first = client.expect(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        t0 = time.perf_counter()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        await asyncio.wait_for(first, 600)
        open_ms = (time.perf_counter() - t0) * 1000
        await idle(client.proc.pid)
        ready_s = time.perf_counter() - t0
        editor = PrefixEditor(client, uri, text)
        for n in range(3):  # warm-up
            await editor.send(editor.edit(n))
        editor.cpu.clear()
        latencies: list[float] = []
        by_kind: dict[int, list[float]] = {0: [], 1: [], 2: []}
        for n in range(edits):
            ms = await editor.send(editor.edit(n))
            latencies.append(ms)
            by_kind[n % 3].append(ms)
            await asyncio.sleep(0.02)
    finally:
        await client.shutdown()
    return {
        "checkout": checkout or "(installed)",
        "open_ms": open_ms,
        "ready_s": ready_s,
        "edits": len(latencies),
        "median_ms": statistics.median(latencies),
        "p95_ms": pct(latencies, 0.95),
        "max_ms": max(latencies),
        "typing_p95_ms": pct(by_kind[0], 0.95),
        "newline_p95_ms": pct(by_kind[1], 0.95),
        "delete_p95_ms": pct(by_kind[2], 0.95),
        "server_cpu_median_ms": statistics.median(editor.cpu),
    }


def in_process(ws: Path, edits: int, reference: int) -> dict:
    """The same editing session against ``Workspace`` in this process (the server's lint thread
    without the protocol; its garbage-collector tuning applied): CPU and wall time per edit of
    ``Workspace.lint`` plus the code-lens entries the server computes for the publish.  Then, as a
    same-run reference, ``reference`` more edits with line moves handled as before ``Root.set_open``
    carried them (``_moved_back`` answers None: the project is built again).  Counts
    ``Project.build`` calls in each part."""
    import gc

    from tclint.rules.project import Project
    from tclint.server.__main__ import _tune_gc
    from tclint.server.workspace import Root, Workspace

    builds = [0]
    build = Project.build

    def counted(self: Project) -> None:
        builds[0] += 1
        build(self)

    Project.build = counted  # type: ignore[method-assign]
    _tune_gc()
    path = str(ws / TARGET)
    text = Path(path).read_text()
    work = Workspace()
    work.set_folders([str(ws)])
    started = time.perf_counter()
    work.lint(path, text, 1)
    root = work.docs[path].root
    while root.index_step(5.0):
        pass
    work.lint(path, text, 2)  # the first pass over the whole index
    ready_s = time.perf_counter() - started
    editor = PrefixEditor(None, "", text)  # type: ignore[arg-type]
    version = 2

    def one(n: int) -> tuple[int, float, float]:
        nonlocal version
        editor.edit(n)  # (keeps ``editor.text`` in step)
        version += 1
        cpu, wall = time.process_time(), time.perf_counter()
        work.lint(path, editor.text, version)
        facts = root.current_facts(path)
        if facts is not None and facts.error is None:
            root.entries(path, facts)
        return n % 3, (time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000

    def session(count: int, start: int) -> dict:
        before = builds[0]
        rows = [one(n) for n in range(start, start + count)]
        cpu = [c for _k, c, _w in rows]
        wall = [w for _k, _c, w in rows]
        kinds = {k: [c for kk, c, _w in rows if kk == k] for k in (0, 1, 2)}
        return {
            "edits": count,
            "cpu_median_ms": statistics.median(cpu),
            "cpu_p95_ms": pct(cpu, 0.95),
            "cpu_max_ms": max(cpu),
            "wall_median_ms": statistics.median(wall),
            "wall_p95_ms": pct(wall, 0.95),
            "typing_cpu_median_ms": statistics.median(kinds[0]),
            "newline_cpu_median_ms": statistics.median(kinds[1]),
            "delete_cpu_median_ms": statistics.median(kinds[2]),
            "builds": builds[0] - before,
        }

    for n in range(3):
        one(n)  # warm-up
    gc.collect()
    measured = session(edits, 3)
    carried = Root._moved_back
    Root._moved_back = lambda *args: None  # type: ignore[method-assign,assignment]
    try:
        ref = session(reference, 3 + edits)
    finally:
        Root._moved_back = carried  # type: ignore[method-assign]
    return {"ready_s": ready_s, "carried": measured, "rebuilt": ref}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tree", required=True, help="the transformers package folder (holding models/)")
    p.add_argument("--edits", type=int, default=30)
    p.add_argument(
        "--checkout", action="append", help="run the server from DIR/tclint (repeatable: A/B in one run)"
    )
    p.add_argument("--json", help="also write the results here")
    p.add_argument(
        "--in-process",
        type=int,
        metavar="N",
        help="measure Workspace in this process instead (``in_process``), then N edits rebuilding as before",
    )
    p.add_argument("--work", help="prepare (or reuse) the workspace and its cache in DIR/ws, kept afterwards")
    args = p.parse_args(argv)
    tree = Path(args.tree)
    files = sum(1 for _ in tree.rglob("*.py"))
    if args.in_process is not None:
        work = Path(args.work or tempfile.mkdtemp(prefix="tclint-scale-server-"))
        ws = workspace(tree, work)
        cache_s = fill_cache(ws, None)
        got = {"files": files, "cache_fill_s": cache_s, **in_process(ws, args.edits, args.in_process)}
        print(
            f"\nin process, {TARGET} inside the whole package ({files:,} files), load {os.getloadavg()[0]:.1f}"
        )
        for name in ("carried", "rebuilt"):
            r = got[name]
            print(
                f"{name:<8} {r['edits']:>3} edits  CPU median {r['cpu_median_ms']:.0f} ms  p95 {r['cpu_p95_ms']:.0f}  "
                f"max {r['cpu_max_ms']:.0f}  (typing/newline/delete median {r['typing_cpu_median_ms']:.0f}/"
                f"{r['newline_cpu_median_ms']:.0f}/{r['delete_cpu_median_ms']:.0f})  wall p95 {r['wall_p95_ms']:.0f} ms  "
                f"Project.build x{r['builds']}"
            )
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(got, fh, indent=1)
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="tclint-scale-server-") as tmp:
        ws = workspace(tree, Path(args.work or tmp))
        for checkout in args.checkout or [None]:
            cache_s = fill_cache(ws, checkout)
            row = asyncio.run(measure(ws, args.edits, checkout))
            row["cache_fill_s"] = cache_s
            rows.append(row)
            print(f"measured {row['checkout']}", file=sys.stderr)
    print(
        f"\ntclint server, edit -> diagnostics on {TARGET} inside the whole package ({files:,} files, "
        f"assume-compiled forwards), debounce 0, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n"
    )
    print(
        f"{'server':<28} {'edits':>5} {'median':>8} {'p95':>8} {'max':>8}  {'p95 typing/newline/delete':>25}  {'CPU med':>8}"
    )
    for r in rows:
        kinds = f"{r['typing_p95_ms']:.0f}/{r['newline_p95_ms']:.0f}/{r['delete_p95_ms']:.0f} ms"
        print(
            f"{r['checkout'][-28:]:<28} {r['edits']:>5} {r['median_ms']:>6.0f}ms {r['p95_ms']:>6.0f}ms {r['max_ms']:>6.0f}ms"
            f"  {kinds:>25}  {r['server_cpu_median_ms']:>6.0f}ms"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"files": files, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
