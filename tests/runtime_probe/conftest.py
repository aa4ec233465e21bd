"""Fixtures for the runtime-probe tests (helpers live in tests/helpers/probeutil.py, fixture programs in
tests/fixtures/runtime_probe/).

One warm ``ProbePool`` serves the whole session (torch is imported once, every probe is a fresh
fork), which keeps the suite to a few minutes on 2 cores; a few tests use cold workers and the
CLI on purpose.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def pool():
    from tclint.runtime_probe.api import ProbePool

    p = ProbePool()
    p.start(wait=True)
    yield p
    p.stop()


@pytest.fixture
def options():
    from tclint.runtime_probe.options import ProbeOptions

    return ProbeOptions(timeout=60, memory_limit=2 * 1024**3)
