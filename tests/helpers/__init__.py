"""The test suite's helpers, one package: ``from tests.helpers.lintutil import lint_code``.

The repository root is on ``sys.path`` while pytest runs (``pythonpath = ["."]`` in pyproject.toml), so
no test edits ``sys.path``.  Every file a test reads lives under ``FIXTURES`` (tests/fixtures/).
"""

from __future__ import annotations

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTS = os.path.join(ROOT, "tests")
FIXTURES = os.path.join(TESTS, "fixtures")
