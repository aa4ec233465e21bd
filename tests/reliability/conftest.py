"""Reliability tests: helpers importable as ``relutil``; the fuzz helpers (``fuzzutil``) too, and
their counts of inputs tried are printed at the end of the run."""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FUZZ = os.path.join(os.path.dirname(HERE), "fuzz")
for folder in (HERE, FUZZ):
    if folder not in sys.path:
        sys.path.insert(0, folder)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    import fuzzutil

    fuzzutil.report(terminalreporter)
