"""A pinned slice of bench/lib_eval.py: tclint vs the real Dynamo on libraries nobody here wrote.

The libraries of the slice are pinned in the ``test`` extra (pyproject.toml), so nothing is fetched
at test time.  tests/fixtures/lib_eval_baseline.json holds what ``bench/lib_eval.py --slice --baseline``
measured: Dynamo's distinct break sites of each library's slice phases, and tclint's precision and
recall on them.  The test re-runs both sides: the truth must still find exactly those sites (so a
change of torch or of the library shows up here, not as a silent drift of the figures), and tclint's
figures must not fall below the baseline (precision, recall over all / own-statement / visible sites,
true positives; for a library where Dynamo finds nothing to break, the number of false positives
must not grow).
"""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers import FIXTURES
from tests.helpers.bench_scripts import load

BASELINE = os.path.join(FIXTURES, "lib_eval_baseline.json")
lib_eval = load("lib_eval")

with open(BASELINE) as _fh:
    _PINNED = json.load(_fh)

pytestmark = [pytest.mark.dynamo, pytest.mark.slow]


@pytest.mark.parametrize("lib", sorted(_PINNED))
def test_slice_does_not_regress(lib, tmp_path):
    pinned = _PINNED[lib]
    spec = lib_eval.LIBS[lib]
    result = lib_eval.measure(lib, phases=spec.slice_phases, cache_dir=str(tmp_path), fresh=True)
    assert result["version"] == pinned["version"], "the test extra pins the measured version"
    got = lib_eval.baseline({lib: result})[lib]
    assert got["sites"] == pinned["sites"], "Dynamo's break sites of the slice changed"
    for mode, figures in pinned["modes"].items():
        now = got["modes"][mode]
        if not pinned["sites"]:  # nothing to find: every finding is false, so their number is the figure
            assert now["fp"] <= figures["fp"], (
                f"{lib} {mode}: {now['fp']} false positives, {figures['fp']} pinned"
            )
        for name, floor in figures.items():
            if name == "fp" or floor is None:
                continue
            if name == "precision" and now[name] is None and now["tp"] + now["fp"] == 0 and floor == 0:
                continue  # the only findings were false and are gone: nothing left to be imprecise
            assert now[name] is not None and now[name] >= floor - 1e-9, (
                f"{lib} {mode} {name}: {now[name]} < {floor}"
            )
