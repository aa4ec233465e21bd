"""The command line at repository scale (issue 20): warm runs, a run after one edit, start-up and
main-process memory, as ratios against references measured in the same run.

    python bench/scale_cli.py                                   # the torch and transformers trees
    python bench/scale_cli.py --tree torch --repeat 3
    python bench/scale_cli.py --transformers /path/to/transformers   # an unpacked transformers package
    python bench/scale_cli.py --tree examples --json out.json

Trees: the installed torch package's Python sources and a transformers package (the unpacked
wheel of ``bench/run.py``'s corpus, or ``--transformers``), each copied into
``bench/.work/scale/<name>/`` beside a ``pyproject.toml`` (for transformers ``assume-compiled =
["transformers.models.*:*.forward"]``: every model ``forward`` is compiled, the "lint my model
library" case), and ``examples/`` (a small tree, where start-up is the whole cost).  tclint runs
as ``tclint check .`` in that folder (its default cache folder, default output), as a user
would, with bytecode compiled as an installed package has it.

Rows, each a child process (CPU: user + sys of that child; peak: its own ``VmHWM``):
  python -c pass        the interpreter's start-up (with this environment's site packages)
  read + hash           reading every file and hashing it, in one process (what an unchanged
                        tree costs at the least)
  libcst parse peak     libcst parsing the tree's largest files one after another (nothing kept,
                        so the peak of parsing every file is set by the largest ones:
                        ``--libcst-files 0`` parses all of them)
  tclint cold           no cache: the run that fills it
  tclint warm           nothing changed (median of ``--repeat`` runs)
  tclint touched        one file edited before each run (a comment appended: a new digest, the
                        same definitions; median of ``--repeat`` runs, each a new edit)
  tclint lines moved    then lines inserted at the top of that file before each run (every line of
                        it moves: its positions change, not what it says; median, each a new move)
  tclint mtime only     the file's modification time changed, its bytes not (the stat table misses)
  tclint body edit      a string in one of its methods changed (what it defines and calls is kept)
  tclint interface change  a function appended to it (a new definition: the whole project pass)
and the modules a warm run imports (``-X importtime``).  Targets (issue 20): warm <= 1.5x read +
hash (<= 2x ``python -c pass`` on small trees), touched and lines moved <= 2.5x warm,
main-process peak <= 1.3x the libcst parse's peak.  Nothing here asserts a time: the figures go
to docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import run as bench_run  # noqa: E402  (bench/run.py: corpora, the child-process measure, the RSS wrapper)

PY = sys.executable
SCALE = os.path.join(bench_run.WORK, "scale")
# the file each run after an edit touches (a real model file of each tree)
TOUCH = {
    "transformers": "transformers/models/llama/modeling_llama.py",
    "torch": "torch/nn/modules/linear.py",
    "examples": "examples/tinylm/model.py",
}
# an edit of that file that keeps what it defines and calls: a string in a method changed, its
# length kept (a longer or shorter string moves the columns after it on its line, and columns
# are part of a file's interface: that edit runs the whole project pass); %d is the run's number
BODY_EDIT = {
    "transformers": (b"eps={self.variance_epsilon}", b"ep%d={self.variance_epsilon}"),
    "torch": (b"in_features={self.in_features}", b"in_feature%d={self.in_features}"),
    "examples": (b"NaN after attention", b"NaN after attentio%d"),
}
HEAVY = (
    "tclint.rules.analysis",
    "tclint.rules.project",
    "tclint.rules.catalog",
    "tclint.rules.facts",
    "tclint.rules.plaindata",
    "libcst",
    "pygls",
)

PARSE_LARGEST = r"""
import os, sys, libcst
root, limit = sys.argv[1], int(sys.argv[2])
files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".py")]
files.sort(key=os.path.getsize, reverse=True)
for path in files[:limit] if limit else files:
    try:
        libcst.parse_module(open(path, "rb").read())
    except Exception:
        pass
print(min(limit, len(files)) if limit else len(files))
"""


def child_env() -> dict[str, str]:
    """The children's environment: bytecode read and written as in an installed package."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("PRE_COMMIT", None)
    return env


def measure(cmd: list[str], cwd: str) -> bench_run.Measure:
    """One child process: CPU, wall and (for commands run through the RSS wrapper) its peak."""
    before = os.times()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=child_env(), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = os.times()
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{cmd[:4]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    rss = 0.0
    for line in proc.stderr.splitlines():
        if line.startswith("BENCH_RSS_KB="):
            rss = int(line.split("=", 1)[1]) / 1024
    return bench_run.Measure(os.path.basename(cmd[0]), cpu, wall, rss, proc.stdout.strip()[-200:])


def median(rows: list[bench_run.Measure]) -> bench_run.Measure:
    return bench_run.Measure(
        rows[0].name,
        statistics.median(m.cpu for m in rows),
        statistics.median(m.wall for m in rows),
        max(m.rss_mb for m in rows),
    )


def prepare(name: str, transformers: str | None) -> str:
    """The tree's project folder under bench/.work/scale (copied once, then edits are undone)."""
    dest = os.path.join(SCALE, name)
    if name == "examples":
        source, package, settings = os.path.join(ROOT, "examples"), "examples", ""
    elif name == "torch":
        source, package, settings = (
            os.path.join(bench_run.corpus_torch(), "torch"),
            "torch",
            "",
        )  # corpora/torch/torch
    else:
        source = transformers or bench_run.corpus_transformers()
        package, settings = "transformers", 'assume-compiled = ["transformers.models.*:*.forward"]\n'
    if not os.path.isdir(os.path.join(dest, package)):
        os.makedirs(dest, exist_ok=True)
        shutil.copytree(
            source, os.path.join(dest, package), ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    with open(os.path.join(dest, "pyproject.toml"), "w") as fh:
        fh.write(f"[tool.tclint]\n{settings}")
    shutil.rmtree(os.path.join(dest, ".tclint_cache"), ignore_errors=True)
    return dest


def tclint(*args: str, rss: bool = False) -> list[str]:
    argv = ["tclint.rules", "check", ".", "--exit-zero", "-q", *args]
    return bench_run.py_with_rss(argv) if rss else [PY, "-m", *argv]


def warm_imports(project: str) -> dict:
    """What a warm run imports: the number of modules and the heavy ones among them."""
    proc = subprocess.run(
        [PY, "-X", "importtime", *tclint()[1:]], cwd=project, env=child_env(), capture_output=True, text=True
    )
    names = [
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]
    names = [n for n in names if n != "package"]
    return {
        "modules": len(names),
        "tclint": sorted(n for n in names if n.startswith("tclint")),
        "heavy": sorted(n for n in names if n.startswith(HEAVY)),
    }


def bench_tree(name: str, transformers: str | None, repeat: int, libcst_files: int) -> dict:
    project = prepare(name, transformers)
    package = os.path.join(project, os.path.dirname(TOUCH[name]).split("/")[0])
    files, lines = bench_run.count_lines(package)
    print(f"# {name}: {files:,} files, {lines:,} lines ({project})", flush=True)
    rows: dict[str, bench_run.Measure] = {}

    def show(key: str, m: bench_run.Measure) -> None:
        rows[key] = m
        peak = f", peak {m.rss_mb:.0f} MiB" if m.rss_mb else ""
        print(f"  {key}: cpu {m.cpu:.3f} s, wall {m.wall:.3f} s{peak}", flush=True)

    pass_runs, hash_runs = [], []
    read_hash = bench_run.script("read_hash.py", bench_run.READ_HASH)
    for _ in range(repeat):
        pass_runs.append(measure([PY, "-c", "pass"], project))
        hash_runs.append(measure([PY, read_hash, package], project))
    show("python -c pass", median(pass_runs))
    show("read + hash", median(hash_runs))
    parse = bench_run.script("parse_largest.py", PARSE_LARGEST)
    show("libcst parse peak", measure(bench_run.py_with_rss([parse, package, str(libcst_files)]), project))
    show("tclint cold (fills the cache)", measure(tclint(rss=True), project))
    show("tclint warm, peak", measure(tclint(rss=True), project))
    show("tclint warm", median([measure(tclint(), project) for _ in range(repeat)]))
    victim = os.path.join(project, TOUCH[name])
    with open(victim, "rb") as fh:
        original = fh.read()
    touched, touched_peak = [], 0.0
    try:
        for i in range(repeat):
            with open(victim, "wb") as fh:
                fh.write(original + f"\n# edited by bench/scale_cli.py ({i})\n".encode())
            m = measure(tclint(rss=True), project)
            touched.append(m)
            touched_peak = max(touched_peak, m.rss_mb)
    finally:
        with open(victim, "wb") as fh:
            fh.write(original)
    show("tclint touched", median(touched))
    moved = []
    try:
        for i in range(repeat):  # each run i + 1 lines above the file's code: every line moves
            with open(victim, "wb") as fh:
                fh.write(
                    b"".join(b"# moved by bench/scale_cli.py (%d)\n" % k for k in range(i + 1)) + original
                )
            moved.append(measure(tclint(rss=True), project))
    finally:
        with open(victim, "wb") as fh:
            fh.write(original)
    show("tclint lines moved", median(moved))
    mtime = []
    for i in range(repeat):  # the same bytes, a new modification time: the stat table misses
        st = os.stat(victim)
        os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9 * (i + 1)))
        mtime.append(measure(tclint(rss=True), project))
    show("tclint mtime only", median(mtime))
    old, new = BODY_EDIT[name]
    show(
        "tclint body edit",
        edited(project, victim, original, lambda i: original.replace(old, new % (i % 10), 1), repeat),
    )
    show(
        "tclint interface change",
        edited(
            project,
            victim,
            original,
            lambda i: original + b"\n\ndef bench_added_%d(x):\n    return x + %d\n" % (i, i),
            max(1, repeat // 2),
        ),
    )
    imports = warm_imports(project)
    print(
        f"  a warm run imports {imports['modules']} modules; heavy ones: {', '.join(imports['heavy']) or 'none'}"
    )
    return {"files": files, "lines": lines, "rows": rows, "imports": imports}


def edited(project: str, victim: str, original: bytes, make, runs: int) -> bench_run.Measure:
    """The median of ``runs`` runs, each after ``victim`` is written as ``make(i)``; then the file
    is put back and one more run brings the cache back to the unchanged tree."""
    out = []
    try:
        for i in range(runs):
            with open(victim, "wb") as fh:
                fh.write(make(i))
            out.append(measure(tclint(rss=True), project))
    finally:
        with open(victim, "wb") as fh:
            fh.write(original)
        measure(tclint(), project)
    return median(out)


def summary(name: str, result: dict) -> list[str]:
    """The ratios against the same run's references (CPU and wall: on a loaded machine the CPU
    ratios are the ones to read)."""
    r = result["rows"]
    warm, touched, rh, start = r["tclint warm"], r["tclint touched"], r["read + hash"], r["python -c pass"]
    moved = r["tclint lines moved"]
    cold = r["tclint cold (fills the cache)"]
    parse_peak = max(r["libcst parse peak"].rss_mb, 1.0)
    return [
        f"## {name}: {result['files']:,} files, {result['lines']:,} lines",
        f"- warm, unchanged: {warm.cpu:.3f} s CPU, {warm.wall:.3f} s wall = {warm.cpu / rh.cpu:.2f}x read + hash "
        f"(CPU; wall {warm.wall / rh.wall:.2f}x; target <= 1.5x), {warm.cpu / start.cpu:.2f}x `python -c pass` "
        f"(CPU; wall {warm.wall / start.wall:.2f}x; small trees: <= 2x)",
        f"- one file touched: {touched.cpu:.3f} s CPU, {touched.wall:.3f} s wall = {touched.cpu / warm.cpu:.2f}x the warm run "
        f"(CPU; wall {touched.wall / warm.wall:.2f}x; target <= 2.5x)",
        f"- lines moved in that file (comment lines inserted at its top): {moved.cpu:.3f} s CPU, {moved.wall:.3f} s wall = "
        f"{moved.cpu / warm.cpu:.2f}x the warm run (CPU; wall {moved.wall / warm.wall:.2f}x; target <= 2.5x)",
        *(
            f"- {label}: {r[key].cpu:.3f} s CPU, {r[key].wall:.3f} s wall = {r[key].cpu / warm.cpu:.2f}x the warm run "
            f"(CPU; wall {r[key].wall / warm.wall:.2f}x), peak {r[key].rss_mb:.0f} MiB"
            for key, label in (
                ("tclint mtime only", "modification time only"),
                ("tclint body edit", "a string in a method changed"),
                ("tclint interface change", "a function added (interface change)"),
            )
        ),
        f"- main-process peak: cold {cold.rss_mb:.0f} MiB = {cold.rss_mb / parse_peak:.2f}x, touched {touched.rss_mb:.0f} MiB = "
        f"{touched.rss_mb / parse_peak:.2f}x, warm {r['tclint warm, peak'].rss_mb:.0f} MiB = "
        f"{r['tclint warm, peak'].rss_mb / parse_peak:.2f}x the libcst parse's peak ({parse_peak:.0f} MiB; target <= 1.3x)",
        f"- cold run: {cold.cpu:.1f} s CPU, {cold.wall:.1f} s wall",
        f"- a warm run imports {result['imports']['modules']} modules, heavy: {', '.join(result['imports']['heavy']) or 'none'}",
    ]


def main(argv: list[str] | None = None) -> int:
    global SCALE
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tree", action="append", choices=("transformers", "torch", "examples"))
    parser.add_argument(
        "--transformers", help="an unpacked transformers package folder (default: bench/run.py's corpus)"
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs per timed row (median; default 5)")
    parser.add_argument(
        "--libcst-files",
        type=int,
        default=40,
        help="libcst parses this many of the largest files for its peak (0: every file)",
    )
    parser.add_argument("--json", help="also write the measurements to this file")
    parser.add_argument("--work", help=f"the folder the trees are copied into (default {SCALE})")
    args = parser.parse_args(argv)
    SCALE = args.work or SCALE
    os.makedirs(SCALE, exist_ok=True)
    import importlib.util

    spec = importlib.util.find_spec(
        "tclint.rules"
    )  # the tclint the children import (PYTHONPATH may pick one)
    package = (
        os.path.dirname(list(spec.submodule_search_locations)[0])
        if spec and spec.submodule_search_locations
        else ROOT
    )
    subprocess.run(
        [PY, "-m", "compileall", "-q", os.path.join(package, "rules"), os.path.join(package, "server")],
        env=child_env(),
        check=False,
        stdout=subprocess.DEVNULL,
    )
    print(
        f"# tclint at scale, {time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    results = {
        name: bench_tree(name, args.transformers, args.repeat, args.libcst_files)
        for name in args.tree or ["transformers", "torch"]
    }
    print()
    for name, result in results.items():
        print("\n".join(summary(name, result)))
    print(f"(load average at the end: {os.getloadavg()[0]:.1f})")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    name: {
                        **{k: v for k, v in r.items() if k != "rows"},
                        "rows": {k: vars(m) for k, m in r["rows"].items()},
                    }
                    for name, r in results.items()
                },
                fh,
                indent=2,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
