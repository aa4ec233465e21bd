"""Helpers to lint snippets and small trees in tests."""

from __future__ import annotations

import os
import textwrap
from typing import Any

from tclint.rules.config import ConfigResolver, Settings, parse_table
from tclint.rules.engine import Linter, LintResult


def write_tree(root: str, files: dict[str, str]) -> None:
    for rel, content in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(textwrap.dedent(content) if not content.startswith("\n") else content)


class _FixedResolver(ConfigResolver):
    def __init__(self, settings: Settings) -> None:
        super().__init__(None, None, isolated=True)
        self._settings = settings

    def for_dir(self, directory: str) -> Settings:
        return self._settings

    def default(self) -> Settings:
        return self._settings


def lint_tree(
    root: str, paths: list[str] | None = None, settings: dict[str, Any] | None = None
) -> LintResult:
    """Lint files under ``root`` with settings given as a [tool.tclint] table (no config discovery)."""
    table = dict(settings or {})
    parsed = parse_table(table, None)
    parsed.root = root
    linter = Linter(_FixedResolver(parsed), cache=None, jobs=1, index_project=False)
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return linter.lint_paths(paths or ["."])
    finally:
        os.chdir(cwd)


def lint_code(
    tmp_path: Any, code: str, settings: dict[str, Any] | None = None, name: str = "example.py"
) -> LintResult:
    write_tree(str(tmp_path), {name: code})
    return lint_tree(str(tmp_path), [name], settings)


def found(result: LintResult) -> set[tuple[int, str]]:
    return {(d.span.start.line, d.code) for d in result.diagnostics}


def lint_main(root: str, source: str) -> tuple[set[str], set[tuple[str, int]]]:
    """Lint ``source`` as ``main.py`` alone under ``root``: the qualnames of the compiled regions
    and the (code, line) of the findings in ``main.py``."""
    write_tree(root, {"main.py": source})
    result = lint_tree(root)
    assert result.project is not None
    regions = {key.split("::", 1)[1] for key in result.project.regions}
    found = {(d.code, d.span.start.line) for d in result.diagnostics if d.path.endswith("main.py")}
    return regions, found
