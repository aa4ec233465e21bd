"""The scripts of bench/ as modules, for the tests that reuse them.

bench/ is a folder of scripts, not a package: each imports its siblings by plain name, as
``python bench/lib_eval.py`` has bench/ first on ``sys.path``.  ``load`` gives a test the same view
(bench/ on ``sys.path``, once) so that the import works the way the script's own run does."""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

from tests.helpers import ROOT

BENCH = os.path.join(ROOT, "bench")


def load(name: str) -> ModuleType:
    """``bench/<name>.py`` imported as the top-level module ``name``."""
    if BENCH not in sys.path:
        sys.path.insert(0, BENCH)
    return importlib.import_module(name)
