"""Checks of the repository as a whole: the docs, the wheel, the install paths, the pre-commit hooks."""

from __future__ import annotations

from tests.helpers.editorutil import project, tools_bin  # noqa: F401  (pytest fixtures)
