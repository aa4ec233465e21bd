"""Shared pytest configuration.  Tests import tclint as installed (editable) with --import-mode=importlib;
their helpers come from the ``tests.helpers`` package (the repository root is on ``sys.path`` through
``pythonpath = ["."]`` in pyproject.toml) and every file they read lives under tests/fixtures/."""

from __future__ import annotations

# Fixture programs (probe targets, a pytest project, the corpus) are inputs, never tests of this suite;
# the helper scripts are run by tests, not collected.
collect_ignore = ["fixtures", "helpers"]

# `make test-fast` (the inner loop) deselects `integration` tests: they start whole processes (the
# language server, the probe's workers, editors, installs, the CLI as a subprocess) or run fuzz and
# reliability volumes.  Everything below these folders is integration; a module elsewhere says so
# itself with ``pytestmark = pytest.mark.integration``.
INTEGRATION_DIRS = ("server", "runtime_probe", "editors", "repo", "bench", "reliability", "fuzz")


def pytest_collection_modifyitems(config, items):
    import pytest

    tests = config.rootpath / "tests"
    marker = pytest.mark.integration
    for item in items:
        try:
            part = item.path.relative_to(tests).parts[0]
        except ValueError:
            continue
        if part in INTEGRATION_DIRS:
            item.add_marker(marker)
