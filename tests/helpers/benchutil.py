"""Helpers for the bench tests: run the real CLI in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(os.path.dirname(HERE), "fixtures", "bench")


def tclint(*args: str, cwd: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PRE_COMMIT"}
    return subprocess.run(
        [sys.executable, "-m", "tclint.rules", "bench", *args],
        cwd=cwd or FIX,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
