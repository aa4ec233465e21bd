"""Shared pytest configuration.  Tests import tclint as installed (editable) with --import-mode=importlib;
their helpers come from the ``tests.helpers`` package (the repository root is on ``sys.path`` through
``pythonpath = ["."]`` in pyproject.toml) and every file they read lives under tests/fixtures/."""

from __future__ import annotations

# Fixture programs (probe targets, a pytest project, the corpus) are inputs, never tests of this suite;
# the helper scripts are run by tests, not collected.
collect_ignore = ["fixtures", "helpers"]
