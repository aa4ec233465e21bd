"""tclint's speed and memory against its peers, measured side by side in one run.

    make bench                      # this (~40 minutes on 2 cores, most of it TorchFix), then the server and probe benchmarks
    python bench/run.py --quick     # examples/ and a 300-file torch sample (~2 minutes)
    python bench/run.py --corpus torch --corpus transformers

Corpora: the Python sources of the installed torch package (~2,300 files, 1.2 M lines), the
`transformers` models tree (from the transformers wheel, downloaded once into bench/.work; with
`assume-compiled = ["*:*.forward"]` so every model forward counts as compiled, the realistic
"lint my model library" case), and examples/.  Each corpus is copied into bench/.work first, so
nothing (a .gitignore above, an editable install) changes what is linted.

Every tool runs as a child process and is measured by its CPU time (user + sys, from
RUSAGE_CHILDREN) and peak RSS; the machines here are noisy, so the table reports *ratios against
references measured in the same run*: a bare libcst parse of the same files (the floor for any
libcst-based linter), `ast.parse`, reading + hashing every file, TorchFix (in its own venv: it pins
an older libcst) and ruff.  Nothing here asserts a time: see README.md for the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(HERE, ".work")
PY = sys.executable


@dataclass
class Measure:
    name: str
    cpu: float
    wall: float
    rss_mb: float
    note: str = ""
    worker_rss_mb: float = 0.0  # largest peak among the worker processes (0: none ran)


def child(cmd: list[str], cwd: str | None = None, env: dict | None = None) -> Measure:
    """Run a command; CPU time and peak RSS of that child alone."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{cmd[:3]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    # ru_maxrss of RUSAGE_CHILDREN is the max over all children so far: report this child's own
    # peak through /usr/bin/time-like parsing of its own rusage (printed by the helpers below).
    rss = worker_rss = 0.0
    for line in proc.stderr.splitlines():
        if line.startswith("BENCH_RSS_KB="):
            rss = int(line.split("=", 1)[1]) / 1024
        elif line.startswith("BENCH_CHILD_RSS_KB="):
            worker_rss = int(line.split("=", 1)[1]) / 1024
    return Measure(
        " ".join(os.path.basename(c) for c in cmd[:2]), cpu, wall, rss, proc.stdout.strip()[-200:], worker_rss
    )


RSS_WRAPPER = r"""
import resource, runpy, sys
sys.argv = sys.argv[1:]
try:
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True) if not sys.argv[0].endswith(".py") else runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit:
    pass
finally:
    # VmHWM is this process image's own peak; ru_maxrss can carry over a larger peak from before
    # exec (Linux keeps it in the signal struct), which made rows report a predecessor's peak.
    try:
        kb = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("BENCH_RSS_KB=%d" % kb, file=sys.stderr)
    # the largest peak among the processes this one started and waited for (tclint's workers)
    print("BENCH_CHILD_RSS_KB=%d" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
"""

PARSE_LIBCST = r"""
import os, sys, libcst
n = 0
for root in sys.argv[1:]:
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith(".py"):
                try:
                    libcst.parse_module(open(os.path.join(dirpath, f), "rb").read())
                except Exception:
                    pass
                n += 1
print(n)
"""

PARSE_AST = r"""
import ast, os, sys
n = 0
for root in sys.argv[1:]:
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith(".py"):
                try:
                    ast.parse(open(os.path.join(dirpath, f), "rb").read())
                except Exception:
                    pass
                n += 1
print(n)
"""

READ_HASH = r"""
import hashlib, os, sys
n = 0
for root in sys.argv[1:]:
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith(".py"):
                hashlib.blake2b(open(os.path.join(dirpath, f), "rb").read(), digest_size=16).hexdigest()
                n += 1
print(n)
"""


def script(name: str, body: str) -> str:
    path = os.path.join(WORK, name)
    with open(path, "w") as fh:
        fh.write(body)
    return path


def py_with_rss(args: list[str], python: str = PY) -> list[str]:
    return [python, "-c", RSS_WRAPPER, *args]


def count_lines(root: str) -> tuple[int, int]:
    files = lines = 0
    for dirpath, _, names in os.walk(root):
        for f in names:
            if f.endswith(".py"):
                files += 1
                with open(os.path.join(dirpath, f), "rb") as fh:
                    lines += fh.read().count(b"\n")
    return files, lines


# -------------------------------------------------------------------------------------- corpora


def corpus_torch(limit: int | None = None) -> str:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        raise SystemExit("torch is not installed in this environment (make test installs it)")
    src = os.path.dirname(spec.origin)
    dest = os.path.join(WORK, "corpora", "torch" if limit is None else f"torch-{limit}")
    if not os.path.isdir(dest):
        n = 0
        for dirpath, _, names in os.walk(src):
            for f in sorted(names):
                if f.endswith(".py"):
                    if limit is not None and n >= limit:
                        break
                    rel = os.path.relpath(os.path.join(dirpath, f), os.path.dirname(src))
                    os.makedirs(os.path.join(dest, os.path.dirname(rel)), exist_ok=True)
                    shutil.copyfile(os.path.join(dirpath, f), os.path.join(dest, rel))
                    n += 1
    return dest


def corpus_transformers() -> str:
    dest = os.path.join(WORK, "corpora", "transformers")
    if os.path.isdir(dest):
        return dest
    wheels = os.path.join(WORK, "wheels")
    os.makedirs(wheels, exist_ok=True)
    subprocess.run([PY, "-m", "pip", "download", "--no-deps", "-q", "-d", wheels, "transformers"], check=True)
    wheel = next(os.path.join(wheels, w) for w in os.listdir(wheels) if w.startswith("transformers-"))
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith("transformers/") and name.endswith(".py"):
                zf.extract(name, os.path.join(WORK, "corpora", "_tf"))
    shutil.move(os.path.join(WORK, "corpora", "_tf", "transformers"), dest)
    shutil.rmtree(os.path.join(WORK, "corpora", "_tf"), ignore_errors=True)
    return dest


def corpus_examples() -> str:
    dest = os.path.join(WORK, "corpora", "examples")
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(os.path.join(ROOT, "examples"), dest)
    return dest


def torchfix_python() -> str | None:
    venv = os.path.join(WORK, "torchfix-venv")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([PY, "-m", "venv", venv], check=True)
        proc = subprocess.run(
            [python, "-m", "pip", "install", "-q", "torchfix"], capture_output=True, text=True
        )
        if proc.returncode != 0:
            print("TorchFix could not be installed:", proc.stderr[-500:], file=sys.stderr)
            return None
    return python


# -------------------------------------------------------------------------------------- runs


def tclint_cmd(target: str, extra: list[str]) -> list[str]:
    return py_with_rss(["tclint.rules", target, "--exit-zero", "-q", "--output-format", "json", *extra])


def subset(root: str, name: str, max_lines: int) -> str:
    """A deterministic sample of a corpus (whole files in sorted order, up to ``max_lines``), for
    the slow peer: TorchFix needs ~20x a parse, so a 1.2 M-line tree would take most of an hour."""
    dest = os.path.join(WORK, "corpora", f"{name}-sample-{max_lines}")
    if os.path.isdir(dest):
        return dest
    total = 0
    for dirpath, dirnames, names in sorted(os.walk(root)):
        dirnames.sort()
        for f in sorted(names):
            if not f.endswith(".py") or total >= max_lines:
                continue
            src = os.path.join(dirpath, f)
            with open(src, "rb") as fh:
                total += fh.read().count(b"\n")
            rel = os.path.relpath(src, root)
            os.makedirs(os.path.join(dest, os.path.dirname(rel)), exist_ok=True)
            shutil.copyfile(src, os.path.join(dest, rel))
    return dest


def measure(rows: dict[str, Measure], key: str, cmd: list[str]) -> None:
    rows[key] = m = child(cmd)
    rss = f"{m.rss_mb:.0f} MiB" if m.rss_mb else "not measured"
    workers = f", largest worker {m.worker_rss_mb:.0f} MiB" if m.worker_rss_mb else ""
    print(f"  {key}: cpu {m.cpu:.2f} s, wall {m.wall:.2f} s, rss {rss}{workers}", flush=True)


def bench_corpus(name: str, root: str, tf_python: str | None, assume: list[str], tf_lines: int) -> dict:
    files, lines = count_lines(root)
    print(f"# {name}: {files:,} files, {lines:,} lines", flush=True)
    cache = os.path.join(WORK, "cache", name)
    shutil.rmtree(cache, ignore_errors=True)
    roots = [a for x in assume for a in ("--assume-compiled", x)]
    common = ["--cache-dir", cache, "--isolated", *roots]
    rows: dict[str, Measure] = {}
    measure(rows, "read+hash", py_with_rss([script("read_hash.py", READ_HASH), root]))
    measure(rows, "ast.parse", py_with_rss([script("parse_ast.py", PARSE_AST), root]))
    measure(rows, "libcst parse", py_with_rss([script("parse_libcst.py", PARSE_LIBCST), root]))
    measure(rows, "tclint cold -j1", tclint_cmd(root, [*common, "--no-cache", "-j", "1"]))
    measure(rows, "tclint cold -j2", tclint_cmd(root, [*common, "--no-cache", "-j", "2"]))
    # the plain `tclint check` (text output): codemod fixes are recorded, never computed, libcst is
    # not imported; the JSON rows above compute them (JSON carries the edits)
    measure(
        rows,
        "tclint cold -j1, text output",
        tclint_cmd(root, [*common, "--no-cache", "-j", "1", "--output-format", "concise"]),
    )
    measure(rows, "tclint cold (fills cache)", tclint_cmd(root, [*common, "-j", "1"]))
    measure(rows, "tclint warm (unchanged)", tclint_cmd(root, [*common]))
    victim = next(
        os.path.join(d, f) for d, _, fs in sorted(os.walk(root)) for f in sorted(fs) if f.endswith(".py")
    )
    with open(victim, "a") as fh:
        fh.write("\n# touched by bench/run.py\n")
    measure(rows, "tclint warm (1 file touched)", tclint_cmd(root, [*common]))
    ruff = shutil.which("ruff") or os.path.join(os.path.dirname(PY), "ruff")
    if os.path.exists(ruff):
        measure(
            rows,
            "ruff check --select ALL",
            [ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", "--isolated", root],
        )
    s_lines = 0
    if tf_python is not None:
        sample = subset(root, name, tf_lines) if lines > tf_lines else root
        s_files, s_lines = count_lines(sample)
        print(f"  TorchFix sample: {s_files:,} files, {s_lines:,} lines", flush=True)
        measure(rows, "sample: libcst parse", py_with_rss([script("parse_libcst.py", PARSE_LIBCST), sample]))
        measure(
            rows,
            "sample: tclint cold -j2",
            tclint_cmd(sample, ["--isolated", "--no-cache", "-j", "2", *roots]),
        )
        measure(
            rows,
            "sample: TorchFix --select ALL -j1",
            py_with_rss(["torchfix", "--select", "ALL", "-j", "1", sample], tf_python),
        )
        measure(
            rows,
            "sample: TorchFix --select ALL (2 workers)",
            py_with_rss(["torchfix", "--select", "ALL", sample], tf_python),
        )
    return {"files": files, "lines": lines, "rows": rows, "sample_lines": s_lines}


def print_table(name: str, result: dict) -> None:
    rows: dict[str, Measure] = result["rows"]
    lines = result["lines"]
    parse = rows["libcst parse"].cpu
    rh = rows["read+hash"].wall
    print(f"\n## {name}: {result['files']:,} files, {lines:,} lines")
    print(
        "| tool | CPU s | wall s | lines/s (wall) | CPU vs libcst parse | peak RSS MiB (main / largest worker) |"
    )
    print("|---|---|---|---|---|---|")
    s_lines = result.get("sample_lines") or lines
    s_parse = rows["sample: libcst parse"].cpu if "sample: libcst parse" in rows else parse
    for key, m in rows.items():
        n, ref = (s_lines, s_parse) if key.startswith("sample:") else (lines, parse)
        rss = f"{m.rss_mb:.0f}" if m.rss_mb else "–"
        if m.worker_rss_mb:
            rss += f" / {m.worker_rss_mb:.0f}"
        print(f"| {key} | {m.cpu:.2f} | {m.wall:.2f} | {n / m.wall:,.0f} | {m.cpu / ref:.2f}x | {rss} |")
    cold = rows["tclint cold -j1"]
    print()
    print(
        f"- cold, 1 process: {cold.cpu / parse:.2f}x the CPU of a bare libcst parse (target <= 2.5x); "
        f"peak RSS {cold.rss_mb / max(rows['libcst parse'].rss_mb, 1):.2f}x libcst's parse peak (target <= 1.3x)"
    )
    cold2 = rows["tclint cold -j2"]
    print(
        f"- cold, 2 processes: {lines / cold2.wall:,.0f} lines/s wall (target >= 10,000); largest worker peak "
        f"{cold2.worker_rss_mb / max(rows['libcst parse'].rss_mb, 1):.2f}x libcst's parse peak, the main process "
        f"(which holds every file's facts for the project pass) {cold2.rss_mb / max(rows['libcst parse'].rss_mb, 1):.2f}x"
    )
    if "sample: tclint cold -j2" in rows:
        ours = rows["sample: tclint cold -j2"]
        for tf in ("sample: TorchFix --select ALL (2 workers)", "sample: TorchFix --select ALL -j1"):
            print(
                f"- {tf[8:]}: on the same {s_lines:,}-line sample tclint -j2 is {rows[tf].wall / ours.wall:.1f}x faster (wall); "
                f"TorchFix costs {rows[tf].cpu / s_parse:.1f}x a libcst parse (CPU), tclint {ours.cpu / s_parse:.1f}x"
            )
    plain = rows["tclint cold -j1, text output"]
    print(
        f"- plain check (text output, fixes not computed): {plain.cpu / parse:.2f}x the CPU of a bare libcst parse, "
        f"{plain.cpu / cold.cpu:.2f}x the JSON run that computes the codemod fixes (same run)"
    )
    warm = rows["tclint warm (unchanged)"]
    print(
        f"- warm, unchanged tree: {warm.wall:.2f} s = {warm.wall / rh:.2f}x reading + hashing every file (target <= 1.5x)"
    )
    touched = rows["tclint warm (1 file touched)"]
    print(
        f"- one file touched: {touched.wall:.2f} s, {cold.wall / touched.wall:.1f}x faster than cold (target >= 10x)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", action="append", choices=("torch", "transformers", "examples"))
    parser.add_argument("--quick", action="store_true", help="examples/ and a 300-file torch sample")
    parser.add_argument("--no-torchfix", action="store_true")
    parser.add_argument(
        "--torchfix-lines",
        type=int,
        default=150_000,
        help="TorchFix runs on a sample of this many lines of each corpus (default 150,000)",
    )
    parser.add_argument("--json", help="also write the measurements to this file")
    args = parser.parse_args(argv)
    os.makedirs(WORK, exist_ok=True)
    corpora = args.corpus or (
        ["examples", "torch-sample"] if args.quick else ["torch", "transformers", "examples"]
    )
    tf_python = None if args.no_torchfix else torchfix_python()
    print(
        f"# tclint benchmark, {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}",
        flush=True,
    )
    out = {}
    for name in corpora:
        if name == "torch":
            root, assume = corpus_torch(), []
        elif name == "torch-sample":
            root, assume = corpus_torch(300), []
        elif name == "transformers":
            root, assume = os.path.join(corpus_transformers(), "models"), ["*:*.forward"]
        else:
            root, assume = corpus_examples(), []
        result = bench_corpus(name, root, tf_python, assume, args.torchfix_lines)
        print_table(name, result)
        out[name] = {
            "files": result["files"],
            "lines": result["lines"],
            "sample_lines": result["sample_lines"],
            "rows": {k: vars(v) for k, v in result["rows"].items()},
        }
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
