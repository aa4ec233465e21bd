"""``tclint probe``: run code under TorchDynamo and explain every compilation.

Modelled on ``coverage run``: options first, then what to run::

    tclint probe [OPTIONS] script.py [ARGS...]
    tclint probe [OPTIONS] -m module [ARGS...]          (e.g. -m pytest tests/x.py -k y)
    tclint probe [OPTIONS] path/file.py::function|Class|Class.method
    tclint probe --init-inputs path/file.py::target     (write a ready-to-fill inputs stub)

Exit status: 0 nothing found, 1 breaks / recompiles / errors / mismatches / a run that did not
complete, 2 usage or configuration error (including a target with no inputs, or synthesised
inputs that the eager code rejected).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any

from tclint.rules.config import ConfigError, ConfigResolver
from tclint.runtime_probe.options import ProbeOptions, parse_memory

FORMATS = ("concise", "full", "json", "sarif", "github")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # exit status 2 with one clear line, as the linter does
        self.print_usage(sys.stderr)
        print(f"tclint probe: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> _Parser:
    p = _Parser(
        prog="tclint probe",
        usage="tclint probe [OPTIONS] (SCRIPT.py [ARGS...] | -m MODULE [ARGS...] | FILE.py::TARGET)",
        description="Run code under TorchDynamo in a separate process and report every compile, "
        "recompile (with the guard that failed), graph break (with how often it was hit) and hard error.",
        epilog="Options go before the target; everything after the script or module is passed to it.",
    )
    p.add_argument(
        "-m", dest="module", metavar="MODULE", help="run a library module as a script (like python -m)"
    )
    p.add_argument("--timeout", type=float, help="seconds before the probe is killed (default 120)")
    p.add_argument("--max-calls", type=int, help="stop after N calls of compiled code")
    p.add_argument("--backend", help="torch.compile backend to route every compile to (default eager)")
    p.add_argument("--python", help="the interpreter to run the code with (default: this one)")
    p.add_argument(
        "--memory-limit", help="memory cap, e.g. 4G or 512M (default: 3/4 of RAM; 'none' for no cap)"
    )
    p.add_argument(
        "--map-cuda-to-cpu",
        action="store_true",
        default=None,
        help="run code that hard-codes 'cuda' on the CPU (breaks/recompiles are those of the CPU run)",
    )
    p.add_argument("--device", help="device for synthesised inputs: auto, cpu or cuda")
    p.add_argument(
        "--inputs",
        action="append",
        default=[],
        metavar="FILE",
        help="a probe-inputs file (function mode; repeatable; before the configured ones)",
    )
    p.add_argument("--mode", dest="compile_mode", help="torch.compile mode (function mode)")
    p.add_argument(
        "--fullgraph", action="store_true", default=None, help="compile with fullgraph=True (function mode)"
    )
    p.add_argument(
        "--output-format", choices=FORMATS, help="report format (default: the configured one, else concise)"
    )
    p.add_argument("--output-file", help="write the report here instead of stdout")
    p.add_argument("--no-static", action="store_true", help="do not merge the static linter's findings")
    p.add_argument(
        "--show-output", action="store_true", help="stream the probed code's stdout/stderr to stderr"
    )
    p.add_argument("--config", help="use this configuration file")
    p.add_argument(
        "--init-inputs", action="store_true", help="write a probe-inputs stub for FILE.py::TARGET and exit"
    )
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when problems are found")
    p.add_argument("target", nargs="?", help="SCRIPT.py, or FILE.py::TARGET")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script or module")
    return p


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    """Options before the target; everything after ``-m MODULE`` or the script is the program's."""
    takes_value = {
        "--timeout",
        "--max-calls",
        "--backend",
        "--python",
        "--memory-limit",
        "--device",
        "--inputs",
        "--mode",
        "--output-format",
        "--output-file",
        "--config",
    }
    ours: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "-m":
            if i + 1 >= len(argv):
                return ours + [arg], []
            return ours + ["-m", argv[i + 1]], argv[i + 2 :]
        if arg == "--":
            return ours, argv[i + 1 :]
        if arg.startswith("-") and arg != "-":
            ours.append(arg)
            if arg in takes_value and i + 1 < len(argv):
                ours.append(argv[i + 1])
                i += 1
            i += 1
            continue
        return ours + [arg], argv[i + 1 :]
    return ours, []


def main(argv: list[str]) -> int:
    ours, program_args = _split(list(argv))
    parser = build_parser()
    try:
        args = parser.parse_args(ours)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        return _run(args, program_args)
    except ConfigError as exc:
        print(f"tclint: configuration error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tclint probe: interrupted", file=sys.stderr)
        return 130


class _Usage(Exception):
    """A usage error: printed as ``tclint probe: error: ...``, exit 2."""


def _run(args: argparse.Namespace, program_args: list[str]) -> int:
    try:
        return _probe_and_report(args, program_args)
    except _Usage as exc:
        print(f"tclint probe: error: {exc}", file=sys.stderr)
        return 2


def _probe_and_report(args: argparse.Namespace, program_args: list[str]) -> int:
    from tclint.runtime_probe.targets import is_target

    if not args.module and not args.target:
        raise _Usage("give a script, -m MODULE or FILE.py::TARGET (see `tclint probe --help`)")
    function_mode = bool(args.target and is_target(args.target) and not args.module)
    if args.init_inputs:
        return _init_inputs(args, function_mode)
    if function_mode and program_args:
        raise _Usage("a FILE.py::TARGET takes no arguments (declare calls in a probe-inputs file)")
    resolver = ConfigResolver(args.config)
    anchor = args.target.partition("::")[0] if args.target else None
    settings = (
        resolver.for_file(anchor) if anchor and os.path.exists(anchor) else resolver.for_dir(os.getcwd())
    )
    options = _options(args, settings)
    fmt = args.output_format or (
        settings.output_format
        if settings.output_format in ("concise", "full", "json", "sarif", "github")
        else "concise"
    )
    progress = _stderr_progress(args) if fmt in ("concise", "full") and sys.stderr.isatty() else None
    on_output = _stream_output if args.show_output else None
    report = _probe(args, program_args, function_mode, options, _chain(progress, on_output), resolver)
    if report.status in ("need-inputs", "inputs-error", "worker-error"):
        raise _Usage(report.message)
    diags = report.diagnostics()
    if not args.no_static:
        diags = _with_static(args, report, resolver)
    sources: dict[str, str | None] = {}
    for d in diags:
        if d.path not in sources and os.path.isfile(d.path):
            with open(d.path, encoding="utf-8", errors="replace") as fh:
                sources[d.path] = fh.read()
    from tclint.runtime_probe.render import render

    text = render(fmt, report, diags, sources)
    if args.output_file:
        with open(args.output_file, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    if args.exit_zero:
        return 0
    if report.status == "inputs-rejected":
        return 2  # like missing inputs: the user must declare them before anything can be probed
    return 1 if report.has_problems or diags else 0


def _init_inputs(args: argparse.Namespace, function_mode: bool) -> int:
    """``--init-inputs``: write a probe-inputs stub for the target."""
    from tclint.runtime_probe import api
    from tclint.runtime_probe.targets import TargetError, parse_target

    if not function_mode:
        raise _Usage("--init-inputs needs FILE.py::TARGET")
    try:
        stub_target = parse_target(args.target)
        path, written = api.write_inputs_stub(stub_target, args.inputs[0] if args.inputs else None)
    except (api.ProbeUsageError, TargetError) as exc:
        raise _Usage(str(exc)) from None
    rel = os.path.relpath(path)
    if written:
        # the same command as the stub's docstring (Target.display)
        print(
            f"Wrote a probe-inputs stub to {rel}: fill in the TODOs, then run `tclint probe {stub_target.display}`."
        )
    else:
        print(f"{rel} already declares inputs for this target; nothing written.")
    return 0


def _options(args: argparse.Namespace, settings: Any) -> ProbeOptions:
    """The configured probe options with the command line's over them."""
    overrides: dict[str, Any] = {
        "python": args.python,
        "backend": args.backend,
        "timeout": args.timeout,
        "max_calls": args.max_calls,
        "map_cuda_to_cpu": args.map_cuda_to_cpu,
        "device": args.device,
        "compile_mode": args.compile_mode,
        "fullgraph": args.fullgraph,
        "stream_output": args.show_output or None,
    }
    for name in ("timeout", "max_calls"):
        value = overrides[name]
        if value is not None and value <= 0:
            raise _Usage(f"--{name.replace('_', '-')} must be positive")
    options = ProbeOptions.from_settings(settings, **overrides)
    if args.memory_limit is not None:
        try:
            options.memory_limit = parse_memory(args.memory_limit, "--memory-limit")
        except ConfigError as exc:
            raise _Usage(str(exc)) from None
    if args.inputs:
        options.inputs = [os.path.abspath(p) for p in args.inputs] + options.inputs
    if options.python and not os.path.exists(options.python) and os.sep in options.python:
        raise _Usage(f"{options.python}: no such interpreter")
    return options


def _probe(
    args: argparse.Namespace,
    program_args: list[str],
    function_mode: bool,
    options: ProbeOptions,
    progress: Any,
    resolver: ConfigResolver,
) -> Any:
    """Run the probe; SIGTERM cancels it (the workers are stopped, the report says so)."""
    from tclint.runtime_probe import api

    cancel = threading.Event()
    old_handler = signal.getsignal(signal.SIGTERM)
    try:
        signal.signal(signal.SIGTERM, lambda *_: cancel.set())
    except ValueError:
        pass
    try:
        if function_mode:
            return api.probe_function(
                args.target, options=options, progress=progress, cancel=cancel, resolver=resolver
            )
        target = args.module or args.target
        return api.probe_program(
            target,
            program_args,
            module=bool(args.module),
            options=options,
            progress=progress,
            cancel=cancel,
            resolver=resolver,
        )
    except api.ProbeUsageError as exc:
        raise _Usage(str(exc)) from None
    except KeyboardInterrupt:
        cancel.set()
        raise
    finally:
        try:
            signal.signal(signal.SIGTERM, old_handler)
        except (ValueError, TypeError):
            pass


def _with_static(args: argparse.Namespace, report: Any, resolver: ConfigResolver) -> list[Any]:
    """The probe's findings merged with the static ones of the files it ran."""
    from tclint.runtime_probe import api

    files = sorted(
        set(report.files) | ({os.path.abspath(args.target.partition("::")[0])} if args.target else set())
    )
    try:
        static = api.static_diagnostics([f for f in files if f.endswith((".py", ".ipynb"))], resolver)
    except ConfigError:
        raise
    except Exception as exc:  # the probe result is worth showing even if static linting fails
        print(f"tclint probe: warning: static linting failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        static = []
    return api.merge(static, report)


def _chain(*fns: Any) -> Any:
    real = [f for f in fns if f is not None]
    if not real:
        return None

    def call(p: Any) -> None:
        for f in real:
            f(p)

    return call


def _stream_output(p: Any) -> None:
    if p.phase == "output":
        sys.stderr.write(p.message)
        sys.stderr.flush()


def _stderr_progress(args: argparse.Namespace) -> Any:
    state = {"last": ""}

    def show(p: Any) -> None:
        if p.phase == "output":
            return
        line = f"tclint probe: {p.message}"
        if line != state["last"]:
            state["last"] = line
            sys.stderr.write("\r\x1b[2K" + line[:120])
            sys.stderr.flush()
        if p.phase == "finishing":
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()

    return show
