"""The options of ``tclint check`` and the configuration overrides they stand for.

One option table (``check_parser``) for the command line and for every tool that takes extra
``tclint check`` options from its user (the language server's ``tclint.args``:
``overrides_from_args``), so both understand an option identically.  Parsing errors raise
``UsageError`` with ruff's shape of message (the CLI exits 2 with it).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from tclint.rules.version import TARGET_TORCH

FORMATS = ("concise", "full", "json", "json-lines", "sarif", "github")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # exit code 2 with ruff's shape of message
        raise UsageError(message)


def check_parser() -> argparse.ArgumentParser:
    """The option table of ``tclint check``."""
    p = _Parser(prog="tclint check", description="Lint Python files for torch.compile hazards.")
    p.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or folders to lint (default: .); '-' reads stdin"
    )
    sel = p.add_argument_group("rule selection")
    sel.add_argument(
        "--select",
        type=_csv,
        help="comma-separated rule codes or prefixes to enable (replaces the configured list)",
    )
    sel.add_argument(
        "--extend-select",
        type=_csv,
        action="append",
        default=[],
        help="codes or prefixes to enable in addition",
    )
    sel.add_argument("--ignore", type=_csv, action="append", default=[], help="codes or prefixes to disable")
    sel.add_argument(
        "--per-file-ignores",
        action="append",
        default=[],
        metavar="GLOB:CODES",
        help="ignore codes in files matching GLOB",
    )
    sel.add_argument("--preview", action="store_true", default=None, help="enable preview rules")
    sel.add_argument("--no-preview", dest="preview", action="store_false")
    sel.add_argument(
        "--min-confidence",
        choices=("high", "medium", "low"),
        help="hide findings below this confidence (default: medium)",
    )
    reg = p.add_argument_group("compiled regions")
    reg.add_argument(
        "--assume-compiled",
        action="append",
        default=[],
        metavar="MODULE:QUALNAME",
        help="treat matching functions as compiled (globs allowed, e.g. 'pkg.models.*:*.forward')",
    )
    reg.add_argument(
        "--assume-compiled-forward",
        action="store_true",
        default=None,
        help="treat every nn.Module.forward in the linted tree as compiled",
    )
    reg.add_argument(
        "--follow-libraries",
        action="store_true",
        default=None,
        help="follow compiled regions into installed packages; TC312 summarises what they meet there",
    )
    reg.add_argument("--target-torch-version", help=f"torch version to target (default: {TARGET_TORCH})")
    out = p.add_argument_group("output")
    out.add_argument("--output-format", choices=FORMATS, help="output format (default: concise)")
    out.add_argument("-o", "--output-file", help="write the report to a file instead of stdout")
    out.add_argument("--statistics", action="store_true", help="show counts per rule instead of each finding")
    out.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    out.add_argument(
        "--exit-non-zero-on-fix",
        action="store_true",
        help="exit 1 if any fix was applied, even when nothing remains",
    )
    out.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    out.add_argument("-s", "--silent", action="store_true", help="print nothing; use the exit code")
    fx = p.add_argument_group("fixes")
    fx.add_argument("--fix", action="store_true", default=None, help="apply safe fixes")
    fx.add_argument("--no-fix", dest="fix", action="store_false")
    fx.add_argument(
        "--unsafe-fixes", action="store_true", default=None, help="also apply (or show) unsafe fixes"
    )
    fx.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false")
    fx.add_argument(
        "--diff",
        action="store_true",
        help="print the fixes as a diff instead of applying them; exit 1 if any",
    )
    fx.add_argument(
        "--add-noqa",
        action="store_true",
        help="add `# noqa` comments for every finding (adopt tclint on existing code)",
    )
    cfg = p.add_argument_group("configuration")
    cfg.add_argument("--config", help="use this pyproject.toml / tclint.toml instead of discovery")
    cfg.add_argument("--isolated", action="store_true", help="ignore configuration files")
    cfg.add_argument("--exclude", type=_csv, action="append", default=[], help="replace the exclude list")
    cfg.add_argument(
        "--extend-exclude", type=_csv, action="append", default=[], help="more files/folders to exclude"
    )
    cfg.add_argument(
        "--force-exclude",
        action="store_true",
        default=None,
        help="apply exclusions to paths given explicitly too (pre-commit)",
    )
    cfg.add_argument("--no-force-exclude", dest="force_exclude", action="store_false")
    cfg.add_argument("--respect-gitignore", action="store_true", default=None)
    cfg.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false")
    cfg.add_argument(
        "--stdin-filename", help="the path of the file read from stdin (for config, module name, output)"
    )
    cfg.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    cfg.add_argument("--cache-dir", help="cache folder (default: .tclint_cache in the project)")
    cfg.add_argument(
        "-j", "--jobs", type=int, help="worker processes (default: automatic; 1 under pre-commit)"
    )
    cfg.add_argument(
        "--no-project-index",
        action="store_true",
        help="analyse only the given paths, not the rest of the project",
    )
    return p


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _flatten(groups: list[list[str]]) -> list[str]:
    return [x for g in groups for x in g]


def _selection(args: argparse.Namespace, o: dict[str, Any]) -> None:
    """--select / --extend-select / --ignore / --per-file-ignores, each code validated (the rule
    registry is imported only when there is a code to validate: a plain run never needs it)."""
    if args.select or args.extend_select or args.ignore or args.per_file_ignores:
        from tclint.rules.registry import validate_selector
    if args.select:
        o["select"] = args.select
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


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The configuration overrides the parsed options stand for (``ConfigResolver`` keys)."""
    o: dict[str, Any] = {}
    _selection(args, o)
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
        namespace = check_parser().parse_args(list(args))
    except SystemExit:  # --help / --version print and exit: not an override
        raise UsageError("--help and --version are not configuration options") from None
    return overrides(namespace)
