"""Linting the same input twice gives the same result: in one process, and through the cache
(cold: computed and stored; warm: read back from the pickles; none).  A difference means state
leaking between runs (a rule instance, a module-level cache, a set's order) or facts that do not
survive pickling."""

from __future__ import annotations

import os
import shutil
import tempfile

from hypothesis import assume, given
from hypothesis import strategies as st
from tclint.rules.cache import Cache

from tests.helpers import fuzz_known as known
from tests.helpers.fuzzutil import (
    as_dicts,
    budget,
    gently_mutated_files,
    lint_bytes,
    mutated_files,
    notebook_seeds,
    python_seeds,
    tried,
)

SEEDS = python_seeds()
inputs = st.one_of(
    gently_mutated_files(SEEDS),
    mutated_files(SEEDS, max_ops=2),
    mutated_files(notebook_seeds(), max_ops=2).map(lambda b: ("nb.ipynb", b)),
)


def _named(item):
    return item if isinstance(item, tuple) else ("m.py", item)


@budget(200)
@given(inputs, inputs)
def test_same_input_same_result(item, other):
    """Linting `item`, then something else, then `item` again gives identical diagnostics."""
    (name, data), (other_name, other_data) = _named(item), _named(other)
    assume(not (name.endswith(".ipynb") and known.notebook_open(data)))
    assume(not (other_name.endswith(".ipynb") and known.notebook_open(other_data)))
    tried("library: determinism (same input twice, another input between)")
    first = as_dicts(lint_bytes(data, name=name).diagnostics)
    lint_bytes(other_data, name=other_name)
    assert as_dicts(lint_bytes(data, name=name).diagnostics) == first


def _lint_cached(folder: str, name: str, data: bytes, drop_runs: bool = False) -> tuple[list, Cache]:
    if drop_runs:  # force the per-file facts path instead of the whole-run result cache
        shutil.rmtree(os.path.join(folder, "runs"), ignore_errors=True)
    cache = Cache(folder)
    result = as_dicts(lint_bytes(data, name=name, cache=cache).diagnostics)
    cache.flush()
    return result, cache


@budget(150)
@given(inputs)
def test_cache_cold_warm_and_none_agree(item):
    """No cache, a cold cache, the whole-run cache and the per-file facts cache give the same
    diagnostics, and the facts cache serves every file after one run (finding #10)."""
    name, data = _named(item)
    assume(not (name.endswith(".ipynb") and known.notebook_open(data)))
    tried("library: cache cold = warm (run cache) = warm (facts cache) = none")
    folder = tempfile.mkdtemp(prefix="tclint-fuzz-cache-")
    try:
        none = as_dicts(lint_bytes(data, name=name).diagnostics)
        cold, _ = _lint_cached(folder, name, data)
        warm_run, _ = _lint_cached(folder, name, data)
        warm_facts, cache = _lint_cached(folder, name, data, drop_runs=True)
        assert cold == none
        assert warm_run == none
        assert warm_facts == none
        assert cache.misses == 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)
