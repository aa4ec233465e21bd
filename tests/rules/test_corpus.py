"""Precision and recall on the fixture corpus, measured against the real TorchDynamo.

The corpus (tests/fixtures/corpus/) is realistic code written for this purpose: a transformer block, an
MoE router, detection post-processing, a training step with logging, a serving path, audio
augmentation, generation loops and a clean CNN (breaks); a serving loop, a training loop with
counters and eval toggles, KV caches, variable batches and module globals (recompiles).  Its
truth comes from running it, never from annotations; ``python -m tests.helpers.corpus_eval`` prints the
figures quoted in README.md.
"""

from __future__ import annotations

import os

import pytest

from tests.helpers import corpus_eval

pytestmark = pytest.mark.dynamo


def test_graph_break_sites_precision_and_recall():
    score = corpus_eval.break_score()
    assert len(score.actual) >= 20, "the corpus must exercise enough real breaks"
    assert score.precision >= 0.95, sorted(score.predicted - score.actual)
    assert score.recall >= 0.9, sorted(score.actual - score.predicted)


def test_recompile_hazard_functions_precision_and_recall():
    score = corpus_eval.recompile_score()
    assert len(score.actual) >= 8
    assert score.precision >= 0.9, sorted(score.predicted - score.actual)
    assert score.recall >= 0.85, sorted(score.actual - score.predicted)


def test_recompiling_functions_and_their_variant_sets():
    """Issue 13: functions compiled twice or more by their scenario are predicted (a variant count
    other than 1 from ``tclint variants``, or a TC2xx warning/error); every function that hits the
    recompile limit is called unbounded; a program where everything compiles once (eval_harness.py,
    clean_inference.py, measured) gets no recompile finding at all, and no variant count but 1."""
    score = corpus_eval.variant_score()
    assert len(score.actual) >= 24 and len(score.unbounded_actual) >= 12
    assert score.precision >= 0.9, sorted(score.predicted - score.actual)
    assert score.recall >= 0.85, sorted(score.actual - score.predicted)
    assert not score.unbounded_missed, sorted(score.unbounded_missed)
    files = {f for f, _line in score.compiles}
    clean = {f for f in files if all(n == 1 for (g, _line), n in score.compiles.items() if g == f)}
    assert {"eval_harness.py", "clean_inference.py"} <= clean, score.compiles
    result = corpus_eval.lint_tree(corpus_eval.RECOMPILES_DIR)
    found = [d for d in result.diagnostics if os.path.basename(d.path) in clean and d.code.startswith("TC2")]
    assert not found, [(d.path, d.code, d.span.start.line) for d in found]
    assert not {k for k in score.predicted if k[0] in clean}
