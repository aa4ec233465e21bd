"""Probe latency: a cold worker (a fresh process that imports torch) against a warm one (a fork
of a worker that already has), end to end through the public API, in one run.

    .venv/bin/python bench/probe_latency.py [--repeat N] [--python PATH]

Prints the median / p90 of each case and the cold/warm ratios measured side by side.  The
probed targets are small on purpose (the editor's case: one function, a handful of calls):

* ``function``: ``probe_function`` on a 3-line function with a graph break (synthesised inputs,
  eager-vs-compiled comparison included);
* ``program``: ``probe_program`` on a 10-line script that compiles with the default backend
  (routed to ``eager``) and calls it 5 times.

The numbers vary with machine load (other processes share these 2 cores); the ratios are
what to compare across runs.  No threshold is asserted here: the issue's target (a repeated
warm probe of a small function under 1 s) is read off the table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

FUNCTION_SRC = """\
import torch
from torch import Tensor


def scale(x: Tensor, training: bool) -> Tensor:
    y = x * 2
    print("break")
    return y + 1 if training else y - 1
"""

PROGRAM_SRC = """\
import torch


@torch.compile
def step(x):
    y = x.sin()
    print("break")
    return y * 2


for _ in range(5):
    step(torch.ones(16))
"""


def _stats(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return statistics.median(ordered), p90


def main(argv: list[str] | None = None) -> int:
    from tclint.runtime_probe.api import ProbePool, probe_function, probe_program
    from tclint.runtime_probe.options import ProbeOptions

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeat", type=int, default=5, help="warm runs per case (cold: max(2, repeat // 2))"
    )
    parser.add_argument("--python", default=None, help="the interpreter that runs the worker")
    args = parser.parse_args(argv)

    work = tempfile.mkdtemp(prefix="tclint-probe-bench-")
    fn_file = os.path.join(work, "small.py")
    prog_file = os.path.join(work, "prog.py")
    with open(fn_file, "w") as fh:
        fh.write(FUNCTION_SRC)
    with open(prog_file, "w") as fh:
        fh.write(PROGRAM_SRC)
    opts = ProbeOptions(python=args.python, timeout=300)
    cases = {
        "function": lambda pool: probe_function(f"{fn_file}::scale", options=opts, pool=pool),
        "program": lambda pool: probe_program(prog_file, options=opts, pool=pool),
    }

    def timed(run, pool) -> float:
        start = time.perf_counter()
        report = run(pool)
        elapsed = time.perf_counter() - start
        if report.status != "ok" or not report.graph_breaks:
            raise SystemExit(f"probe failed: {report.status}: {report.message}")
        return elapsed

    results: dict[str, dict[str, list[float]]] = {name: {"cold": [], "warm": []} for name in cases}
    cold_runs = max(2, args.repeat // 2)
    for name, run in cases.items():
        for _ in range(cold_runs):
            results[name]["cold"].append(timed(run, None))
    pool = ProbePool()
    start = time.perf_counter()
    ready = pool.start(python=args.python, wait=True) or {}
    pool_start = time.perf_counter() - start
    try:
        for name, run in cases.items():
            timed(run, pool)  # the first warm probe of a kind pays its own first-use costs
            for _ in range(args.repeat):
                results[name]["warm"].append(timed(run, pool))
    finally:
        pool.stop()

    print(
        f"tclint probe latency ({ready.get('python', sys.executable)}, torch {ready.get('torch', '?')}, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})"
    )
    print(
        f"warm worker start (import torch {ready.get('import_s', 0):.2f} s + warm-up "
        f"{ready.get('warmup_s', 0):.2f} s): {pool_start:.2f} s, paid once per editor session"
    )
    print()
    print(
        f"{'case':<10} {'cold median':>12} {'cold p90':>10} {'warm median':>12} {'warm p90':>10} {'cold/warm':>10}"
    )
    for name, r in results.items():
        c_med, c_p90 = _stats(r["cold"])
        w_med, w_p90 = _stats(r["warm"])
        print(
            f"{name:<10} {c_med:>11.3f}s {c_p90:>9.3f}s {w_med:>11.3f}s {w_p90:>9.3f}s {c_med / w_med:>9.1f}x"
        )
    print()
    worst = max(_stats(r["warm"])[1] for r in results.values())
    print(
        f"target: a repeated warm probe of a small function < 1 s end to end: p90 {worst:.3f} s "
        f"({'met' if worst < 1.0 else 'NOT met'} in this run)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
