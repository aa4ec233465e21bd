"""The ``tclint`` command.

``tclint [check] [PATH...]`` lints (ruff's options and exit codes: 0 clean, 1 findings,
2 usage or configuration error); ``tclint rule CODE`` / ``--all`` prints rule docs;
``tclint regions`` shows what torch.compile compiles; ``tclint probe ...`` runs code under Dynamo;
``tclint server`` starts the language server.  Subcommands import their packages lazily so that
``tclint check`` never pays for pygls or the probe.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from tclint.rules.version import TARGET_TORCH, __version__

SUBCOMMANDS = ("check", "rule", "regions", "variants", "probe", "bench", "server", "clean", "version")
FORMATS = ("concise", "full", "json", "json-lines", "sarif", "github")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # exit code 2 with ruff's shape of message
        raise UsageError(message)


def _check_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="tclint check", description="Lint Python files for torch.compile hazards.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to lint (default: .); '-' reads stdin")
    sel = p.add_argument_group("rule selection")
    sel.add_argument("--select", type=_csv, help="comma-separated rule codes or prefixes to enable (replaces the configured list)")
    sel.add_argument("--extend-select", type=_csv, action="append", default=[], help="codes or prefixes to enable in addition")
    sel.add_argument("--ignore", type=_csv, action="append", default=[], help="codes or prefixes to disable")
    sel.add_argument("--per-file-ignores", action="append", default=[], metavar="GLOB:CODES", help="ignore codes in files matching GLOB")
    sel.add_argument("--preview", action="store_true", default=None, help="enable preview rules")
    sel.add_argument("--no-preview", dest="preview", action="store_false")
    sel.add_argument("--min-confidence", choices=("high", "medium", "low"), help="hide findings below this confidence (default: medium)")
    reg = p.add_argument_group("compiled regions")
    reg.add_argument("--assume-compiled", action="append", default=[], metavar="MODULE:QUALNAME",
                     help="treat matching functions as compiled (globs allowed, e.g. 'pkg.models.*:*.forward')")
    reg.add_argument("--assume-compiled-forward", action="store_true", default=None,
                     help="treat every nn.Module.forward in the linted tree as compiled")
    reg.add_argument("--follow-libraries", action="store_true", default=None,
                     help="follow compiled regions into installed packages; TC312 summarises what they meet there")
    reg.add_argument("--target-torch-version", help=f"torch version to target (default: {TARGET_TORCH})")
    out = p.add_argument_group("output")
    out.add_argument("--output-format", choices=FORMATS, help="output format (default: concise)")
    out.add_argument("-o", "--output-file", help="write the report to a file instead of stdout")
    out.add_argument("--statistics", action="store_true", help="show counts per rule instead of each finding")
    out.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    out.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 if any fix was applied, even when nothing remains")
    out.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    out.add_argument("-s", "--silent", action="store_true", help="print nothing; use the exit code")
    fx = p.add_argument_group("fixes")
    fx.add_argument("--fix", action="store_true", default=None, help="apply safe fixes")
    fx.add_argument("--no-fix", dest="fix", action="store_false")
    fx.add_argument("--unsafe-fixes", action="store_true", default=None, help="also apply (or show) unsafe fixes")
    fx.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false")
    fx.add_argument("--diff", action="store_true", help="print the fixes as a diff instead of applying them; exit 1 if any")
    fx.add_argument("--add-noqa", action="store_true", help="add `# noqa` comments for every finding (adopt tclint on existing code)")
    cfg = p.add_argument_group("configuration")
    cfg.add_argument("--config", help="use this pyproject.toml / tclint.toml instead of discovery")
    cfg.add_argument("--isolated", action="store_true", help="ignore configuration files")
    cfg.add_argument("--exclude", type=_csv, action="append", default=[], help="replace the exclude list")
    cfg.add_argument("--extend-exclude", type=_csv, action="append", default=[], help="more files/folders to exclude")
    cfg.add_argument("--force-exclude", action="store_true", default=None, help="apply exclusions to paths given explicitly too (pre-commit)")
    cfg.add_argument("--no-force-exclude", dest="force_exclude", action="store_false")
    cfg.add_argument("--respect-gitignore", action="store_true", default=None)
    cfg.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false")
    cfg.add_argument("--stdin-filename", help="the path of the file read from stdin (for config, module name, output)")
    cfg.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    cfg.add_argument("--cache-dir", help="cache folder (default: .tclint_cache in the project)")
    cfg.add_argument("-j", "--jobs", type=int, help="worker processes (default: automatic; 1 under pre-commit)")
    cfg.add_argument("--no-project-index", action="store_true", help="analyse only the given paths, not the rest of the project")
    return p


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _flatten(groups: list[list[str]]) -> list[str]:
    return [x for g in groups for x in g]


def _overrides(args: argparse.Namespace) -> dict[str, Any]:  # noqa: C901 - long, not split yet (issue 16)
    from tclint.rules.registry import validate_selector

    o: dict[str, Any] = {}
    for name in ("select",):
        if getattr(args, name):
            o[name] = getattr(args, name)
    if args.extend_select:
        o["extend:extend_select"] = _flatten(args.extend_select)
    if args.ignore:
        o["extend:ignore"] = _flatten(args.ignore)
    for sel in [*o.get("select", []), *o.get("extend:extend_select", []), *o.get("extend:ignore", [])]:
        problem = validate_selector(sel)
        if problem:
            raise UsageError(problem)
    if args.per_file_ignores:
        table = {}
        for item in args.per_file_ignores:
            glob, _, codes = item.rpartition(":")
            if not glob:
                raise UsageError(f"--per-file-ignores expects GLOB:CODES, got {item!r}")
            table[glob] = _csv(codes)
            for code in table[glob]:
                problem = validate_selector(code)
                if problem:
                    raise UsageError(f"--per-file-ignores: {problem}")
        o["per_file_ignores"] = table
    if args.preview is not None:
        o["preview"] = args.preview
    if args.min_confidence:
        o["min_confidence"] = args.min_confidence
    if args.assume_compiled:
        o["extend:assume_compiled"] = args.assume_compiled
    if args.assume_compiled_forward:
        o["assume_compiled_forward"] = True
    if args.follow_libraries:
        o["follow_libraries"] = True
    if args.target_torch_version:
        from tclint.rules.config import ConfigError, _version

        try:
            o["target_torch_version"] = _version(args.target_torch_version, "--target-torch-version", None)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
    if args.exclude:
        o["exclude"] = _flatten(args.exclude)
    if args.extend_exclude:
        o["extend:extend_exclude"] = _flatten(args.extend_exclude)
    if args.force_exclude is not None:
        o["force_exclude"] = args.force_exclude
    if args.respect_gitignore is not None:
        o["respect_gitignore"] = args.respect_gitignore
    if args.unsafe_fixes is not None:
        o["unsafe_fixes"] = args.unsafe_fixes
    if args.output_format:
        o["output_format"] = args.output_format
    return o


def overrides_from_args(args: Sequence[str]) -> dict[str, Any]:
    """The configuration overrides that ``tclint check ARGS`` would apply, for tools that take
    extra CLI options from their user (the language server's ``tclint.args``): the same option
    table and validation as the command line, so both understand an option identically.  Paths
    are accepted and ignored.  Raises ``UsageError`` with the CLI's message."""
    try:
        namespace = _check_parser().parse_args(list(args))
    except SystemExit:  # --help / --version print and exit: not an override
        raise UsageError("--help and --version are not configuration options") from None
    return _overrides(namespace)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(argv)
    except UsageError as exc:
        print(f"tclint: error: {exc}", file=sys.stderr)
        print("Run `tclint --help` for usage.", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tclint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")  # silence the interpreter's flush
        except OSError:
            pass
        return 1


def _dispatch(argv: list[str]) -> int:
    if argv[:1] in (["--version"], ["-V"], ["version"]):
        print(f"tclint {__version__} (targets torch {TARGET_TORCH})")
        return 0
    if argv[:1] in (["-h"], ["--help"]):
        _print_help()
        return 0
    if argv and argv[0] in SUBCOMMANDS:
        command, rest = argv[0], argv[1:]
    else:
        command, rest = "check", argv
    if command == "check":
        return run_check(rest)
    if command == "rule":
        return run_rule(rest)
    if command == "regions":
        return run_regions(rest)
    if command == "variants":
        from tclint.rules.variants_cli import run_variants

        return run_variants(rest)
    if command == "clean":
        return run_clean(rest)
    if command == "probe":
        from tclint.runtime_probe.cli import main as probe_main

        return probe_main(rest)
    if command == "bench":
        from tclint.runtime_probe.bench_cli import main as bench_main

        return bench_main(rest)
    if command == "server":
        from tclint.server.__main__ import main as server_main

        return server_main(rest)
    raise UsageError(f"unknown command {command!r}")


def _print_help() -> None:
    print(
        f"""tclint {__version__}: a linter for torch.compile hazards (graph breaks, recompiles, compile-API misuse)

Usage:
  tclint [check] [PATH...] [OPTIONS]   lint files (default: .)
  tclint rule CODE | --all             explain a rule (Markdown)
  tclint regions [PATH...]             list compiled regions and the chains that make them
  tclint variants [PATH...]            predict the compiled variants of each compiled callable
  tclint probe FILE.py [ARGS...]       run a program under TorchDynamo and explain every compilation
  tclint probe -m MODULE [ARGS...]     ... the same for `python -m MODULE` (e.g. -m pytest)
  tclint probe FILE.py::FUNCTION       probe one function or module with declared/synthesised inputs
  tclint bench FILE.py::TARGET | SCRIPT.py [ARGS...]   cold start, warm-up, steady state, modes, budgets
  tclint server [--tcp HOST:PORT]      start the language server (stdio by default)
  tclint clean                         remove the cache
  tclint --version

Run `tclint check --help` (or `tclint probe --help`, ...) for the options of each command."""
    )


def under_pre_commit() -> bool:
    """Whether pre-commit runs this process as a hook (it sets PRE_COMMIT=1).  pre-commit splits a
    hook run into batches of files, run in parallel, so a per-process summary would speak for one
    batch only ("All checks passed!" from a clean batch above another batch's findings).  There
    tclint prints its findings and no summary: pre-commit's own Passed / Failed line is the one
    summary of the hook run, and it is true for all of its files."""
    return os.environ.get("PRE_COMMIT") == "1"


def _stdin_bytes() -> bytes:
    return sys.stdin.buffer.read()


def run_check(argv: list[str]) -> int:  # noqa: C901
    from tclint.rules.cache import Cache
    from tclint.rules.config import ConfigError, ConfigResolver, project_root
    from tclint.rules.engine import Linter
    from tclint.rules.reading import Texts

    parser = _check_parser()
    args = parser.parse_args(argv)
    if under_pre_commit():
        args.quiet = True
    if args.diff and args.fix:
        pass  # --diff wins: show, do not write (as ruff)
    try:
        overrides = _overrides(args)
        resolver = ConfigResolver(args.config, overrides, isolated=args.isolated)
        paths = args.paths or ["."]
        stdin_mode = paths == ["-"]
        if stdin_mode:
            paths = [args.stdin_filename or "stdin.py"]
        base_settings = resolver.for_file(paths[0]) if stdin_mode else resolver.for_dir(os.getcwd())
    except ConfigError as exc:
        print(f"tclint: configuration error: {exc}", file=sys.stderr)
        return 2
    if not stdin_mode:
        from tclint.rules.discovery import named_path_problem
        from tclint.rules.printable import printable

        for path in paths:
            problem = named_path_problem(path)
            if problem is not None:
                print(f"tclint: error: {printable(path)}: {problem}", file=sys.stderr)
                return 2
    cache = None
    if not args.no_cache and not stdin_mode:
        root = project_root(paths) or os.getcwd()
        cache_dir = args.cache_dir or os.path.join(root, base_settings.cache_dir)
        cache = Cache(cache_dir)
        if cache.refused:
            print(f"tclint: error: {cache.refused}: refusing to use it as the cache; set `cache-dir` (or "
                  "--cache-dir) to a new folder, or pass --no-cache", file=sys.stderr)
            return 2
    linter = Linter(resolver, cache, jobs=args.jobs, index_project=not args.no_project_index, exits_after_run=True)
    unsafe = bool(base_settings.unsafe_fixes if args.unsafe_fixes is None else args.unsafe_fixes)
    fmt = args.output_format or base_settings.output_format
    plain = cache is not None and not (args.add_noqa or args.fix or args.diff or args.silent or args.statistics)
    if plain:
        linter.output_lookup = lambda run_key: cache.get_output(cache.output_key(run_key, fmt, unsafe, args.quiet))
    try:
        if stdin_mode:
            data = _stdin_bytes()
            abs_path = os.path.abspath(paths[0])
            report, index = linter.collect([paths[0]]) if os.path.exists(paths[0]) or True else ([], [])
            if paths[0] not in report:
                report = [paths[0]]
                index = [paths[0], *[p for p in index if os.path.abspath(p) != abs_path]]
            result = linter.lint_files(report, index, overrides={abs_path: data})
        else:
            result = linter.lint_paths(paths, force_exclude=args.force_exclude)
    except ConfigError as exc:
        print(f"tclint: configuration error: {exc}", file=sys.stderr)
        return 2
    finally:
        if cache is not None:
            cache.flush()

    if result.output is not None:  # the same run printed the same way before
        text, count = result.output
        _emit(text, args.output_file)
        return 0 if args.exit_zero or not count else 1
    diags = result.diagnostics
    sources: Mapping[str, str | None] = Texts(result.sources)
    out = io.StringIO()
    fixed = 0
    any_fix = False

    writes = _Writes()
    if args.add_noqa:
        from tclint.rules.fixes import add_noqa

        total = 0
        for path in result.files:
            src = sources.get(path)
            file_diags = [d for d in diags if d.path == path]
            if src is None or not file_diags:
                continue
            if path.endswith(".ipynb"):
                from tclint.rules.notebook import add_noqa_to_notebook

                added = [0]

                def annotate(data: bytes, file_diags: list = file_diags, added: list = added) -> bytes:
                    new_data, added[0] = add_noqa_to_notebook(data, file_diags)
                    return new_data

                if writes.rewrite(path, result.sources[path].digest, annotate):
                    total += added[0]
                continue
            new, n = add_noqa(src, file_diags)
            if n and writes.rewrite(path, result.sources[path].digest, _text_edit(src, new)):
                total += n
        if not args.silent:
            print(f"Added {total} noqa directive{'s' if total != 1 else ''}.", file=sys.stderr)
            writes.summary()
        return writes.exit_code(0)

    if args.fix or args.diff:
        from tclint.rules.fixes import apply_fixes, fix_allowed, resolve_fixes, unified_diff

        remaining = []
        by_path: dict[str, list] = {}
        for d in diags:
            by_path.setdefault(d.path, []).append(d)
        for path, file_diags in by_path.items():
            src = sources.get(path)
            file_diags = resolve_fixes(file_diags, sources.get)  # codemod fixes: edits and final safety
            fixable = [d for d in file_diags if fix_allowed(d.fix, unsafe) and d.cell is None]
            if src is None or not fixable:
                remaining.extend(file_diags)
                continue
            new, n = apply_fixes(src, [d.fix for d in fixable])  # type: ignore[misc]
            if n and new != src:
                any_fix = True
                if args.diff:
                    out.write(unified_diff(path, src, new))
                else:
                    if stdin_mode:
                        out.write(new)
                        fixed += n
                    elif writes.rewrite(path, result.sources[path].digest, _text_edit(src, new)):
                        fixed += n
            if args.diff:
                remaining.extend(file_diags)
        if not args.diff and (fixed or writes.skipped):
            # re-lint to report what is left (fixes can expose or remove other findings; a file
            # skipped because it changed during the run is reported as it is now)
            again = linter.lint_paths(paths, force_exclude=args.force_exclude) if not stdin_mode else None
            remaining = again.diagnostics if again is not None else [d for d in diags if not fix_allowed(d.fix, unsafe)]
            if again is not None:
                sources = Texts(again.sources)
        elif not args.diff:
            remaining = diags
        diags = remaining
        if args.diff:
            text = out.getvalue()
            if not args.silent:
                sys.stdout.write(text)
                if not args.quiet:
                    n = sum(1 for d in diags if fix_allowed(d.fix, unsafe))
                    print(f"Would fix {n} problem{'s' if n != 1 else ''}.", file=sys.stderr) if text else None
            return 1 if text else 0

    if args.silent:
        pass
    elif args.statistics:
        from tclint.rules.report.text import statistics

        _emit(statistics(diags), args.output_file)
    else:
        text = render(fmt, diags, sources, unsafe, fixed, quiet=args.quiet or stdin_mode and args.fix)
        if plain and cache is not None and result.run_key is not None:
            cache.put_output(cache.output_key(result.run_key, fmt, unsafe, args.quiet), text, len(diags))
            cache.flush()
        _emit(text, args.output_file, prefix=out.getvalue() if stdin_mode and args.fix else "")
    if not args.silent:
        writes.summary()
    if writes.failed:
        return 2
    if args.exit_zero:
        return 0
    if args.exit_non_zero_on_fix and any_fix:
        return 1
    return 1 if diags else 0


def render(fmt: str, diags: list, sources: Mapping[str, str | None], unsafe: bool, fixed: int = 0, quiet: bool = False) -> str:
    if fmt in ("json", "json-lines", "sarif") and any(d.fix is not None and d.fix.codemod for d in diags):
        from tclint.rules.fixes import resolve_fixes

        diags = resolve_fixes(diags, sources.get)  # these formats carry the edits: compute codemod fixes
    if fmt == "concise":
        from tclint.rules.report.text import concise, summary

        return concise(diags, unsafe) + ("" if quiet else summary(diags, fixed, unsafe))
    if fmt == "full":
        from tclint.rules.report.text import full, summary

        return full(diags, sources, unsafe) + ("" if quiet else "\n" + summary(diags, fixed, unsafe))
    if fmt == "json":
        from tclint.rules.report.json_ import render as render_json

        return render_json(diags)
    if fmt == "json-lines":
        from tclint.rules.report.json_ import render_lines

        return render_lines(diags)
    if fmt == "sarif":
        from tclint.rules.report.sarif import render as render_sarif

        return render_sarif(diags)
    if fmt == "github":
        from tclint.rules.report.github import render as render_github

        return render_github(diags)
    raise UsageError(f"unknown output format {fmt!r}")


def _emit(text: str, output_file: str | None, prefix: str = "") -> None:
    if output_file:
        try:
            with open(output_file, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise UsageError(f"cannot write {output_file}: {exc.strerror or exc}") from None
        return
    stream = sys.stdout
    try:
        stream.write(prefix + text)
        stream.flush()
    except UnicodeEncodeError:
        sys.stdout.buffer.write((prefix + text).encode("utf-8", "replace"))
        sys.stdout.flush()


def _text_edit(old: str, new: str) -> Any:
    """The byte edit for ``writeback.rewrite`` that turns a file whose text is ``old`` into ``new``."""
    from tclint.rules.writeback import encode_like

    return lambda data: encode_like(data, old, new)


class _Writes:
    """The files ``--fix`` / ``--add-noqa`` write back, and the ones they could not: a file edited
    while the run was in progress is skipped (and counted), a write error is reported (exit 2)."""

    def __init__(self) -> None:
        self.skipped = 0
        self.failed = 0

    def rewrite(self, path: str, digest: str, edit: Any) -> bool:
        from tclint.rules.writeback import FileChanged, WriteError, rewrite

        try:
            return rewrite(path, digest, edit)
        except FileChanged as exc:
            self.skipped += 1
            print(f"tclint: warning: {exc}", file=sys.stderr)
        except WriteError as exc:
            self.failed += 1
            print(f"tclint: error: {exc}", file=sys.stderr)
        return False

    def summary(self) -> None:
        if self.skipped:
            print(f"Skipped {self.skipped} file{'s' if self.skipped != 1 else ''} changed during the run.", file=sys.stderr)
        if self.failed:
            print(f"Could not write {self.failed} file{'s' if self.failed != 1 else ''}.", file=sys.stderr)

    def exit_code(self, ok: int) -> int:
        return 2 if self.failed else 1 if self.skipped else ok


def run_rule(argv: list[str]) -> int:
    from tclint.rules import registry
    from tclint.rules.docs import render_rule

    p = _Parser(prog="tclint rule", description="Explain a rule.")
    p.add_argument("code", nargs="?", help="rule code, e.g. TC101")
    p.add_argument("--all", action="store_true", help="explain every rule")
    p.add_argument("--output-format", choices=("text", "json"), default="text")
    args = p.parse_args(argv)
    if not args.code and not args.all:
        raise UsageError("give a rule code or --all")
    if args.all:
        rules = list(registry.all_rules())
    else:
        rule = registry.get(args.code.upper())
        if rule is None:
            print(f"tclint: error: unknown rule code {args.code!r}", file=sys.stderr)
            return 2
        rules = [rule]
    if args.output_format == "json":
        payload = [
            {
                "code": r.code,
                "name": r.name,
                "summary": r.summary,
                "family": r.family,
                "lifecycle": r.lifecycle,
                "gb_ids": list(r.gb_ids),
                "torch_versions": r.torch_versions,
                "default_severity": r.default_severity.value,
                "fix": r.fix_applicability.value if r.fix_applicability else None,
                "explanation": render_rule(r),
            }
            for r in rules
        ]
        print(json.dumps(payload if args.all else payload[0], indent=2))
    else:
        print("\n\n".join(render_rule(r) for r in rules))
    return 0


def run_regions(argv: list[str]) -> int:
    from tclint.rules.config import ConfigError, ConfigResolver
    from tclint.rules.engine import Linter

    p = _Parser(prog="tclint regions", description="List the functions torch.compile will trace, and why.")
    p.add_argument("paths", nargs="*", default=["."])
    p.add_argument("--config")
    p.add_argument("--assume-compiled", action="append", default=[])
    p.add_argument("--assume-compiled-forward", action="store_true")
    p.add_argument("--follow-libraries", action="store_true")
    p.add_argument("--output-format", choices=("text", "json", "full"), default="text")
    args = p.parse_args(argv)
    overrides: dict[str, Any] = {}
    if args.assume_compiled:
        overrides["extend:assume_compiled"] = args.assume_compiled
    if args.assume_compiled_forward:
        overrides["assume_compiled_forward"] = True
    if args.follow_libraries:
        overrides["follow_libraries"] = True
    from tclint.rules.discovery import named_path_problem
    from tclint.rules.printable import printable

    for path in args.paths:
        problem = named_path_problem(path)
        if problem is not None:
            print(f"tclint: error: {printable(path)}: {problem}", file=sys.stderr)
            return 2
    try:
        resolver = ConfigResolver(args.config, overrides)
        result = Linter(resolver).lint_paths(args.paths, need_project=True)
    except ConfigError as exc:
        print(f"tclint: configuration error: {exc}", file=sys.stderr)
        return 2
    project = result.project
    assert project is not None
    shown = set(os.path.abspath(f) for f in result.files)
    rows = []
    from tclint.rules.libfollow import is_library_file

    for key, region in sorted(project.regions.items(), key=lambda kv: kv[0]):
        path, _, qual = key.partition("::")
        library = is_library_file(project, path)  # an installed package's file the regions reach
        if os.path.abspath(path) not in shown and not library:
            continue
        _ff, fn = project.functions[key]
        rows.append({"path": path, "line": fn.name_loc.line, "function": qual, "via": project.chain_text(region),
                     "multiplier": region.multiplier, "fullgraph": region.fullgraph, "library": library})
    unresolved = [{"path": u.path, "line": u.site.loc.line, "reason": u.reason} for u in project.unresolved
                  if os.path.abspath(u.path) in shown]
    if args.output_format == "json":
        print(json.dumps({"regions": rows, "unresolved": unresolved}, indent=2))
        return 0
    predicted = {}
    if args.output_format == "full":
        from tclint.rules.variants import variants

        predicted = variants(project)
    for key, r in zip((f"{r['path']}::{r['function']}" for r in rows), rows):
        extra = f" [{r['multiplier']}]" if r["multiplier"] else ""
        extra += " (library)" if r["library"] else ""
        print(f"{printable(r['path'])}:{r['line']}: {r['function']}{extra}\n    {printable(r['via'])}")
        if key in predicted:
            print(f"    variants: {predicted[key].summary()}")
    for u in unresolved:
        print(f"{printable(u['path'])}:{u['line']}: unresolved: {printable(u['reason'])} "
              "(declare it with assume-compiled or `# tclint: compiled`)")
    print(f"{len(rows)} compiled function{'s' if len(rows) != 1 else ''}, {len(unresolved)} unresolved compile site{'s' if len(unresolved) != 1 else ''}.")
    return 0


def run_clean(argv: list[str]) -> int:
    from tclint.rules import cachedir
    from tclint.rules.config import ConfigError, ConfigResolver, project_root

    p = _Parser(prog="tclint clean", description="Remove the cache folder (only one tclint created).")
    p.add_argument("paths", nargs="*", default=["."])
    args = p.parse_args(argv)
    root = project_root(args.paths) or os.getcwd()
    try:
        settings = ConfigResolver().for_dir(root)
    except ConfigError as exc:
        print(f"tclint: configuration error: {exc}", file=sys.stderr)
        return 2
    target = os.path.join(root, settings.cache_dir)
    if not os.path.isdir(target):
        return 0
    try:
        kept = cachedir.clean(target)
    except cachedir.CacheDirError as exc:
        print(f"tclint: error: {exc}: not a tclint cache, nothing removed", file=sys.stderr)
        return 2
    if kept:
        print(f"tclint: {target}: removed tclint's files; kept what tclint did not create: {', '.join(kept)}", file=sys.stderr)
        return 2
    print(f"Removed {target}")
    return 0

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
