"""The fuzz suite's helpers are importable as ``fuzzutil``; the inputs tried per property are
printed at the end of the run (and written to ``$TCLINT_FUZZ_REPORT`` as JSON when set)."""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    import fuzzutil

    fuzzutil.report(terminalreporter)
