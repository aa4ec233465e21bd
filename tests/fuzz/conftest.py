"""The fuzz suite's helpers are importable as ``fuzzutil``; the inputs tried per property are
printed at the end of the run (and written to ``$TCLINT_FUZZ_REPORT`` as JSON when set)."""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    import fuzzutil

    if not fuzzutil.COUNTS:
        return
    terminalreporter.write_sep("-", f"tclint fuzz: inputs tried per property (scale {fuzzutil.SCALE:g})")
    for prop, n in sorted(fuzzutil.COUNTS.items()):
        terminalreporter.write_line(f"{n:>8}  {prop}")
    out = os.environ.get("TCLINT_FUZZ_REPORT")
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            json.dump(dict(sorted(fuzzutil.COUNTS.items())), fh, indent=2)
