"""Fixtures for the bench tests (helpers live in benchutil.py)."""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)  # `import benchutil`

collect_ignore = ["fixtures", "reference.py", "benchutil.py"]
