"""``tclint bench``: cold start, warm-up and steady state measured apart, modes compared, a contract.

::

    tclint bench [OPTIONS] path/file.py::function|Class|Class.method
    tclint bench [OPTIONS] script.py [ARGS...]
    tclint bench [OPTIONS] -m module [ARGS...]

The same targets and probe-inputs files as ``tclint probe`` (each declared input is one shape /
state bucket).  Exit status: 0 measured (and, with ``--check``, every budget holds); 1 a budget
is broken (``--check``) or a mode could not be measured; 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from tclint.rules.config import ConfigError, ConfigResolver
from tclint.runtime_probe.options import ProbeOptions

FORMATS = ("concise", "json", "markdown", "html")
TAKES_VALUE = {
    "--modes",
    "--backend",
    "--iterations",
    "--seconds",
    "--warmup-calls",
    "--train-steps",
    "--timeout",
    "--python",
    "--device",
    "--inputs",
    "--output-format",
    "-o",
    "--output-file",
    "--config",
    "--cache-dir",
    "--report",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        self.print_usage(sys.stderr)
        print(f"tclint bench: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> _Parser:
    p = _Parser(
        prog="tclint bench",
        usage="tclint bench [OPTIONS] (FILE.py::TARGET | SCRIPT.py [ARGS...] | -m MODULE [ARGS...])",
        description="Benchmark compiled code in fresh processes: cold start (and with a populated compile cache), "
        "warm-up over every declared input bucket, steady-state latency with every recompile after warm-up, "
        "the eager baseline, and the budgets of [tool.tclint.bench] with --check.",
        epilog="Options go before the target; everything after the script or module is passed to it.",
    )
    p.add_argument("-m", dest="module", metavar="MODULE", help="benchmark a library module run as a script")
    p.add_argument(
        "--modes",
        help="comma-separated torch.compile modes, each in its own fresh process "
        "(default: default; e.g. default,reduce-overhead,max-autotune-no-cudagraphs,max-autotune)",
    )
    p.add_argument("--backend", help="torch.compile backend: inductor (default), aot_eager, eager, ...")
    p.add_argument("--iterations", type=int, help="steady-state calls (default 50)")
    p.add_argument(
        "--seconds", type=float, help="stop the steady state after this many seconds (function targets)"
    )
    p.add_argument(
        "--warmup-calls", type=int, help="program targets: calls after the first that are warm-up (default 3)"
    )
    p.add_argument(
        "--train-steps", type=int, help="optimizer steps compared eager against compiled (default 2)"
    )
    p.add_argument("--timeout", type=float, help="seconds before one run is killed (default 600)")
    p.add_argument(
        "--no-cache-run", action="store_true", help="skip the second cold run with a populated compile cache"
    )
    p.add_argument(
        "--cache-dir", help="keep the per-run compile cache in this folder (default: a temporary one)"
    )
    p.add_argument("--python", help="the interpreter to run the code with (default: this one)")
    p.add_argument("--device", help="device for synthesised inputs: auto, cpu or cuda")
    p.add_argument(
        "--inputs", action="append", default=[], metavar="FILE", help="a probe-inputs file (repeatable)"
    )
    p.add_argument("--fullgraph", action="store_true", default=None, help="compile with fullgraph=True")
    p.add_argument("--output-format", choices=FORMATS, help="report format (default: concise)")
    p.add_argument("-o", "--output-file", help="write the report here instead of stdout")
    p.add_argument("--check", action="store_true", help="exit 1 when a [tool.tclint.bench] budget is broken")
    p.add_argument("--config", help="use this configuration file")
    p.add_argument(
        "--report",
        metavar="FILE.json",
        help="read a saved JSON report instead of running anything "
        "(render it in another format, or --check it against the configured budgets)",
    )
    p.add_argument("target", nargs="?", help="FILE.py::TARGET or SCRIPT.py")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script or module")
    return p


def _split_bench(argv: list[str]) -> tuple[list[str], list[str]]:
    """Like the probe's split, with bench's own options that take a value."""
    import tclint.runtime_probe.cli as probe_cli

    ours: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in TAKES_VALUE and i + 1 < len(argv):
            ours += [arg, argv[i + 1]]
            i += 2
            continue
        if arg.startswith("-") and arg != "-" and arg != "-m" and arg != "--":
            ours.append(arg)
            i += 1
            continue
        rest_ours, program = probe_cli._split(argv[i:])
        return ours + rest_ours, program
    return ours, []


def main(argv: list[str]) -> int:
    ours, program_args = _split_bench(list(argv))
    try:
        args = build_parser().parse_args(ours)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        return _run(args, program_args)
    except ConfigError as exc:
        print(f"tclint: configuration error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tclint bench: interrupted", file=sys.stderr)
        return 130


def _positive(name: str, value: Any) -> None:
    if value is not None and value <= 0:
        raise ValueError(f"--{name} must be positive")


def _run(args: argparse.Namespace, program_args: list[str]) -> int:
    from tclint.runtime_probe import bench_contract, bench_run
    from tclint.runtime_probe.targets import TargetError, is_target, parse_target

    if args.report:
        return _from_report(args)
    if not args.module and not args.target:
        print(
            "tclint bench: error: give FILE.py::TARGET, a script or -m MODULE (see `tclint bench --help`)",
            file=sys.stderr,
        )
        return 2
    function_mode = bool(args.target and is_target(args.target) and not args.module)
    if function_mode and program_args:
        print(
            "tclint bench: error: a FILE.py::TARGET takes no arguments (declare calls in a probe-inputs file)",
            file=sys.stderr,
        )
        return 2
    try:
        for name in ("iterations", "seconds", "warmup_calls", "train_steps", "timeout"):
            _positive(name.replace("_", "-"), getattr(args, name))
    except ValueError as exc:
        print(f"tclint bench: error: {exc}", file=sys.stderr)
        return 2
    options, budgets = _options(args)
    if not function_mode and args.seconds is not None:
        print(
            "tclint bench: warning: --seconds applies to FILE.py::TARGET benchmarks; a program makes its own calls "
            "(its steady state is every call after --warmup-calls)",
            file=sys.stderr,
        )
    target = None
    program = None
    try:
        if function_mode:
            target = parse_target(args.target)
        elif args.module:
            program = {"kind": "module", "target": args.module, "argv": program_args}
        else:
            if not os.path.isfile(args.target):
                print(f"tclint bench: error: {args.target}: no such file", file=sys.stderr)
                return 2
            program = {"kind": "script", "target": os.path.abspath(args.target), "argv": program_args}
    except TargetError as exc:
        print(f"tclint bench: error: {exc}", file=sys.stderr)
        return 2
    progress = (lambda m: print(f"tclint bench: {m}", file=sys.stderr)) if sys.stderr.isatty() else None
    if args.cache_dir:
        os.makedirs(args.cache_dir, exist_ok=True)
    try:
        report = bench_run.bench(
            target,
            program,
            options,
            progress=progress,
            cache_dir=os.path.abspath(args.cache_dir) if args.cache_dir else None,
        )
    except (bench_run.BenchInputsError, bench_run.BenchCacheDirError) as exc:
        print(f"tclint bench: error: {exc}", file=sys.stderr)
        return 2
    except bench_run.BenchError as exc:
        print(f"tclint bench: error: {exc}", file=sys.stderr)
        return 1
    violations = bench_contract.check(report, budgets)
    bench_contract.attach(report, budgets, violations)
    return _finish(args, report, violations)


def _options(args: argparse.Namespace) -> tuple[Any, Any]:
    """The protocol (command line over ``[tool.tclint.bench]`` over the probe's settings) and the budgets."""
    from tclint.runtime_probe import bench_contract, bench_run

    resolver = ConfigResolver(args.config)
    anchor = args.target.partition("::")[0] if args.target else None
    settings = (
        resolver.for_file(anchor) if anchor and os.path.exists(anchor) else resolver.for_dir(os.getcwd())
    )
    probe = ProbeOptions.from_settings(settings)
    table = dict(settings.bench or {})
    budgets = bench_contract.Budgets.from_table(table, settings.path)
    modes = (
        [m.strip() for m in args.modes.split(",") if m.strip()]
        if args.modes
        else list(table.get("modes") or ["default"])
    )
    options = bench_run.BenchOptions(
        python=args.python or probe.python,
        backend=args.backend or table.get("backend") or "inductor",
        modes=modes,
        iterations=args.iterations or table.get("iterations") or 50,
        seconds=args.seconds or table.get("seconds"),
        warmup_calls=args.warmup_calls or table.get("warmup-calls") or 3,
        train_steps=args.train_steps or table.get("train-steps") or 2,
        timeout=args.timeout or table.get("timeout") or 600.0,
        cache_run=False if args.no_cache_run else bool(table.get("cache-run", True)),
        device=args.device or probe.device,
        inputs=[os.path.abspath(p) for p in args.inputs] + probe.inputs,
        env=dict(probe.env),
        fullgraph=args.fullgraph if args.fullgraph is not None else probe.fullgraph,
        dynamo=dict(probe.dynamo),
        cwd=probe.cwd,
    )
    return options, budgets


def _finish(args: argparse.Namespace, report: dict[str, Any], violations: list[Any]) -> int:
    """Write the report; the exit status."""
    from tclint.runtime_probe import bench_render

    fmt = args.output_format or "concise"
    text = bench_render.render(fmt, report)
    if args.output_file:
        with open(args.output_file, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    failed = [r for r in report["runs"] if r.get("status") == "error"]
    for r in failed:
        print(f"tclint bench: {r['mode']}: the run failed: {r.get('reason')}", file=sys.stderr)
        if r.get("traceback"):
            print(r["traceback"], file=sys.stderr)
    if failed or not any(r.get("status") == "ok" for r in report["runs"]):
        return 1
    if args.check and violations:
        for v in violations:
            print(f"tclint bench --check: {v.line()}", file=sys.stderr)
        return 1
    return 0


def _from_report(args: argparse.Namespace) -> int:
    """``--report FILE``: re-render a saved JSON report (nothing runs); with ``--check``, check it
    against the budgets configured now (without, the contract it was saved with is kept)."""
    import json

    from tclint.runtime_probe import bench_contract

    try:
        with open(args.report, encoding="utf-8") as fh:
            report = json.load(fh)
    except (OSError, ValueError) as exc:
        print(f"tclint bench: error: {args.report}: cannot read the report: {exc}", file=sys.stderr)
        return 2
    if not isinstance(report, dict) or report.get("tool") != "tclint bench":
        print(f"tclint bench: error: {args.report} is not a tclint bench JSON report", file=sys.stderr)
        return 2
    if not args.check and isinstance(report.get("contract"), dict):
        return _finish(
            args, report, []
        )  # re-rendered as saved: its contract is the one it was checked against
    _options_, budgets = _options(args)
    violations = bench_contract.check(report, budgets)
    bench_contract.attach(report, budgets, violations)
    return _finish(args, report, violations)
