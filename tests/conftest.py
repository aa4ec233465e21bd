"""Shared fixtures.  Tests import tclint as installed (editable) with --import-mode=importlib."""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)  # so tests can `import dynamo_harness`, `import lintutil`
