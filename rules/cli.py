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
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tclint.rules.options import FORMATS as FORMATS  # re-exported: the option table lives in options.py
from tclint.rules.options import UsageError, _Parser
from tclint.rules.options import check_parser as _check_parser
from tclint.rules.options import overrides as _overrides
from tclint.rules.options import overrides_from_args as overrides_from_args
from tclint.rules.version import TARGET_TORCH, __version__

SUBCOMMANDS = ("check", "rule", "regions", "variants", "probe", "bench", "server", "clean", "version")


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


@dataclass
class _Check:
    """One ``tclint check`` run: its options and what they resolved to."""

    args: argparse.Namespace
    resolver: Any
    paths: list[str]
    stdin_mode: bool
    cache: Any
    linter: Any
    unsafe: bool
    fmt: str
    plain: bool  # a plain report: cached as printed, looked up before loading findings


def _prepare_check(argv: list[str]) -> _Check | int:
    """Parse the options and set up configuration, cache and linter (an exit status on errors)."""
    from tclint.rules.cache import Cache
    from tclint.rules.config import ConfigError, ConfigResolver, project_root
    from tclint.rules.engine import Linter

    args = _check_parser().parse_args(argv)
    if under_pre_commit():
        args.quiet = True
    # --diff with --fix: --diff wins, it shows and does not write (as ruff)
    try:
        resolver = ConfigResolver(args.config, _overrides(args), isolated=args.isolated)
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
        cache = Cache(args.cache_dir or os.path.join(root, base_settings.cache_dir))
        if cache.refused:
            print(
                f"tclint: error: {cache.refused}: refusing to use it as the cache; set `cache-dir` (or "
                "--cache-dir) to a new folder, or pass --no-cache",
                file=sys.stderr,
            )
            return 2
    linter = Linter(
        resolver, cache, jobs=args.jobs, index_project=not args.no_project_index, exits_after_run=True
    )
    unsafe = bool(base_settings.unsafe_fixes if args.unsafe_fixes is None else args.unsafe_fixes)
    fmt = args.output_format or base_settings.output_format
    plain = cache is not None and not (
        args.add_noqa or args.fix or args.diff or args.silent or args.statistics
    )
    if plain and cache is not None:
        found = cache
        linter.output_lookup = lambda run_key: found.get_output(
            found.output_key(run_key, fmt, unsafe, args.quiet)
        )
    return _Check(args, resolver, paths, stdin_mode, cache, linter, unsafe, fmt, plain)


def _lint(run: _Check) -> Any:
    """The lint result (an exit status on a configuration error found while linting)."""
    from tclint.rules.config import ConfigError

    linter, paths = run.linter, run.paths
    try:
        if run.stdin_mode:
            data = _stdin_bytes()
            abs_path = os.path.abspath(paths[0])
            report, index = linter.collect([paths[0]])
            if paths[0] not in report:
                report = [paths[0]]
                index = [paths[0], *[p for p in index if os.path.abspath(p) != abs_path]]
            return linter.lint_files(report, index, overrides={abs_path: data})
        return linter.lint_paths(paths, force_exclude=run.args.force_exclude)
    except ConfigError as exc:
        print(f"tclint: configuration error: {exc}", file=sys.stderr)
        return 2
    finally:
        if run.cache is not None:
            run.cache.flush()


def run_check(argv: list[str]) -> int:
    """``tclint check``: lint, then add noqa comments, fix / diff, or report."""
    from tclint.rules.reading import Texts

    run = _prepare_check(argv)
    if isinstance(run, int):
        return run
    result = _lint(run)
    if isinstance(result, int):
        return result
    args = run.args
    if result.output is not None:  # the same run printed the same way before
        text, count = result.output
        _emit(text, args.output_file)
        return 0 if args.exit_zero or not count else 1
    if run.linter.exits_after_run:
        # nothing past the lint reads the project pass (its indexes, regions, refined facts): let
        # it go before the JSON/SARIF report's codemods parse files with libcst (transformers:
        # 383 MiB after the project pass, 455 MiB and more in the report with it held)
        result.project = None
    writes = _Writes()
    if args.add_noqa:
        return _add_noqa(run, result, writes)
    diags = result.diagnostics
    # one file's text held at a time while the findings are fixed and reported (sorted by path)
    sources: Mapping[str, str | None] = Texts(result.sources, release=run.linter.exits_after_run)
    out = io.StringIO()
    fixed = 0
    any_fix = False
    if args.fix or args.diff:
        fixing = _fix(run, result, sources, writes, out)
        if isinstance(fixing, int):
            return fixing
        diags, sources, fixed, any_fix = fixing
    return _report(run, result, diags, sources, writes, out, fixed, any_fix)


def _add_noqa(run: _Check, result: Any, writes: _Writes) -> int:
    """--add-noqa: a ``# noqa`` comment for every finding, written back."""
    from tclint.rules.fixes import add_noqa
    from tclint.rules.reading import Texts

    diags = result.diagnostics
    sources = Texts(result.sources)
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
    if not run.args.silent:
        print(f"Added {total} noqa directive{'s' if total != 1 else ''}.", file=sys.stderr)
        writes.summary()
    return writes.exit_code(0)


def _fix(
    run: _Check, result: Any, sources: Mapping[str, str | None], writes: _Writes, out: io.StringIO
) -> tuple[list, Mapping[str, str | None], int, bool] | int:
    """--fix / --diff: (what remains to report, its sources, fixes applied, any fix) or, for
    --diff, the exit status once the diff is printed."""
    from tclint.rules.fixes import apply_fixes, preferred, resolve_fixes, unified_diff
    from tclint.rules.reading import Texts

    args, unsafe, diags = run.args, run.unsafe, result.diagnostics
    fixed = 0
    any_fix = False
    remaining = []
    by_path: dict[str, list] = {}
    for d in diags:
        by_path.setdefault(d.path, []).append(d)
    for path, file_diags in by_path.items():
        src = sources.get(path)
        file_diags = resolve_fixes(  # codemod fixes: edits and final safety (a notebook's in its cells)
            file_diags, sources.get, lambda p: result.sources[p].cells if p in result.sources else None
        )
        if path.endswith(".ipynb") and not run.stdin_mode:
            changed, written = _fix_notebook(run, path, result.sources[path].digest, file_diags, writes, out)
            any_fix |= changed
            fixed += written
            remaining.extend(file_diags)  # read by --diff only (a write re-lints)
            continue
        fixable = [f for f in (preferred(d, unsafe) for d in file_diags if d.cell is None) if f is not None]
        if src is None or not fixable:
            remaining.extend(file_diags)
            continue
        new, n = apply_fixes(src, fixable)
        if n and new != src:
            any_fix = True
            if args.diff:
                out.write(unified_diff(path, src, new))
            elif run.stdin_mode:
                out.write(new)
                fixed += n
            elif writes.rewrite(path, result.sources[path].digest, _text_edit(src, new)):
                fixed += n
        if args.diff:
            remaining.extend(file_diags)
    if args.diff:
        text = out.getvalue()
        if not args.silent:
            sys.stdout.write(text)
            if not args.quiet and text:
                n = sum(1 for d in remaining if preferred(d, unsafe) is not None)
                print(f"Would fix {n} problem{'s' if n != 1 else ''}.", file=sys.stderr)
        return 1 if text else 0
    if fixed or writes.skipped:
        # re-lint to report what is left (fixes can expose or remove other findings; a file
        # skipped because it changed during the run is reported as it is now)
        if run.stdin_mode:
            return [d for d in diags if preferred(d, unsafe) is None], sources, fixed, any_fix
        again = run.linter.lint_paths(run.paths, force_exclude=args.force_exclude)
        return again.diagnostics, Texts(again.sources), fixed, any_fix
    return diags, sources, fixed, any_fix


def _fix_notebook(
    run: _Check, path: str, digest: str, diags: list, writes: _Writes, out: io.StringIO
) -> tuple[bool, int]:
    """--fix / --diff for one notebook: the cells' fixes (``notebook.fix_notebook``) written back
    through writeback, or for --diff the notebook's JSON before and after.  Returns (whether a
    fix changed it, fixes written)."""
    from tclint.rules.fixes import unified_diff
    from tclint.rules.notebook import fix_notebook
    from tclint.rules.reading import read_regular

    if run.args.diff:
        try:
            data = read_regular(path)
        except OSError:
            return False, 0
        new, n = fix_notebook(data, diags, run.unsafe)
        if n:
            out.write(unified_diff(path, data.decode("utf-8", "replace"), new.decode("utf-8", "replace")))
        return n > 0, 0
    applied = [0]

    def edit(data: bytes) -> bytes:
        new, applied[0] = fix_notebook(data, diags, run.unsafe)
        return new

    written = writes.rewrite(path, digest, edit)
    return applied[0] > 0, applied[0] if written else 0


def _report(
    run: _Check,
    result: Any,
    diags: list,
    sources: Mapping[str, str | None],
    writes: _Writes,
    out: io.StringIO,
    fixed: int,
    any_fix: bool,
) -> int:
    """Print the findings (or their statistics) and decide the exit status."""
    args, cache = run.args, run.cache
    if args.silent:
        pass
    elif args.statistics:
        from tclint.rules.report.text import statistics

        _emit(statistics(diags), args.output_file)
    else:
        text = render(
            run.fmt, diags, sources, run.unsafe, fixed, quiet=args.quiet or run.stdin_mode and args.fix
        )
        if run.plain and cache is not None and result.run_key is not None:
            cache.put_output(
                cache.output_key(result.run_key, run.fmt, run.unsafe, args.quiet), text, len(diags)
            )
            cache.flush()
        _emit(text, args.output_file, prefix=out.getvalue() if run.stdin_mode and args.fix else "")
    if not args.silent:
        writes.summary()
    if writes.failed:
        return 2
    if args.exit_zero:
        return 0
    if args.exit_non_zero_on_fix and any_fix:
        return 1
    return 1 if diags else 0


def render(
    fmt: str,
    diags: list,
    sources: Mapping[str, str | None],
    unsafe: bool,
    fixed: int = 0,
    quiet: bool = False,
) -> str:
    if fmt in ("json", "json-lines", "sarif") and any(
        f.codemod for d in diags for f in (d.fix, *d.alternatives) if f
    ):
        from tclint.rules.fixes import resolve_fixes

        diags = resolve_fixes(  # these formats carry the edits: compute codemod fixes
            diags, sources.get, getattr(sources, "cell_map", None)
        )
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
            print(
                f"Skipped {self.skipped} file{'s' if self.skipped != 1 else ''} changed during the run.",
                file=sys.stderr,
            )
        if self.failed:
            print(f"Could not write {self.failed} file{'s' if self.failed != 1 else ''}.", file=sys.stderr)

    def exit_code(self, ok: int) -> int:
        return 2 if self.failed else 1 if self.skipped else ok


def run_rule(argv: list[str]) -> int:
    from tclint.rules import registry
    from tclint.rules.ruledoc import render_rule

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
                "family": r.family.value,
                "lifecycle": r.lifecycle.value,
                "gb_ids": list(r.gb_ids),
                "torch_versions": r.torch_versions,
                "default_severity": r.default_severity.value,
                "fix": r.fix_applicability.value if r.fix_applicability else None,
                "explanation": render_rule(r),
            }
            for r in rules
        ]
        import json

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
        rows.append(
            {
                "path": path,
                "line": fn.name_loc.line,
                "function": qual,
                "via": project.chain_text(region),
                "multiplier": region.multiplier,
                "fullgraph": region.fullgraph,
                "library": library,
            }
        )
    unresolved = [
        {"path": u.path, "line": u.site.loc.line, "reason": u.reason}
        for u in project.unresolved
        if os.path.abspath(u.path) in shown
    ]
    torch_only = [
        {"path": u.path, "line": u.site.loc.line, "reason": u.reason}
        for u in project.torch_only
        if os.path.abspath(u.path) in shown
    ]
    if args.output_format == "json":
        import json

        print(json.dumps({"regions": rows, "unresolved": unresolved, "torch_only": torch_only}, indent=2))
        return 0
    predicted = {}
    if args.output_format == "full":
        from tclint.rules.variants import variants

        predicted = variants(project)
    for key, r in zip((f"{r['path']}::{r['function']}" for r in rows), rows, strict=True):
        extra = f" [{r['multiplier']}]" if r["multiplier"] else ""
        extra += " (library)" if r["library"] else ""
        print(
            f"{printable(str(r['path']))}:{r['line']}: {r['function']}{extra}\n    {printable(str(r['via']))}"
        )
        if key in predicted:
            print(f"    variants: {predicted[key].summary()}")
    for u in torch_only:
        print(
            f"{printable(str(u['path']))}:{u['line']}: torch only: {printable(str(u['reason']))} "
            "(nothing of this project to check)"
        )
    for u in unresolved:
        print(
            f"{printable(str(u['path']))}:{u['line']}: unresolved: {printable(str(u['reason']))} "
            "(declare it with assume-compiled or `# tclint: compiled`)"
        )
    print(
        f"{len(rows)} compiled function{'s' if len(rows) != 1 else ''}, {len(unresolved)} unresolved compile site{'s' if len(unresolved) != 1 else ''}."
    )
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
        print(
            f"tclint: {target}: removed tclint's files; kept what tclint did not create: {', '.join(kept)}",
            file=sys.stderr,
        )
        return 2
    print(f"Removed {target}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
