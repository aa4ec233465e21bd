"""Reliability tests (helpers: ``tests.helpers.relutil`` and the fuzz helpers ``tests.helpers.fuzzutil``,
whose counts of inputs tried are printed at the end of the run)."""

from __future__ import annotations


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    from tests.helpers import fuzzutil

    fuzzutil.report(terminalreporter)
