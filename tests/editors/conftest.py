"""The real-editor tests (Neovim, Emacs, VS Code); their helpers and fixtures are in tests/helpers/editorutil.py."""

from __future__ import annotations

from tests.helpers.editorutil import project, tools_bin  # noqa: F401  (pytest fixtures)
