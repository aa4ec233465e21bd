"""Tests of tclint.rules (the linter, its CLI and its reporters).  ``project`` is a fresh copy of
tests/fixtures/editors/project (a model with findings and a notebook)."""

from __future__ import annotations

from tests.helpers.editorutil import project  # noqa: F401  (a pytest fixture)
