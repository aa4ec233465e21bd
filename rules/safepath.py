"""Keep `python -m tclint...` from importing the linted workspace's own modules.

`python -m` puts the current folder first on sys.path.  Editors start the server from the
workspace folder, so a workspace holding `logging.py`, `json.py` or `argparse.py` would have that
code run inside tclint as soon as the editor opens it — linting must never execute user code.
Called at the top of the package `__init__` of every `-m` entry point, before anything else is
imported; a plain library import (`import tclint.rules`) leaves sys.path alone.
"""

from __future__ import annotations

import os
import sys


def drop_cwd_when_run_with_m() -> None:
    if getattr(sys.flags, "safe_path", False):
        return  # python -P / PYTHONSAFEPATH=1: nothing was added
    if not sys.argv or sys.argv[0] != "-m":
        return  # runpy sets argv[0] to "-m" while it imports the package of the -m module
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]
