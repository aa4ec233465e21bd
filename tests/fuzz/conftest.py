"""The fuzz suite (helpers: ``tests.helpers.fuzzutil``); the inputs tried per property are printed at the
end of the run (and written to ``$TCLINT_FUZZ_REPORT`` as JSON when set)."""

from __future__ import annotations


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    from tests.helpers import fuzzutil

    fuzzutil.report(terminalreporter)
