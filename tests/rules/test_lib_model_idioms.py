"""Idioms found measuring tclint on library models compiled from small user scripts (issue 21,
bench/lib_models.py).  Each program is small and of our own; the truth in each docstring is what
Dynamo 2.13 (CPU, ``backend="eager"``) reported running it."""

from __future__ import annotations

from tests.helpers.lintutil import lint_main


def _lint(tmp_path, source: str):
    return lint_main(str(tmp_path), source)


DICT_INDEXED_BY_KEY = """
import torch
from torch import nn


class Criterion(nn.Module):
    def forward(self, logits, target):
        return {"ce": (logits - target).pow(2).mean(), "l1": (logits - target).abs().mean()}


criterion = Criterion()


@torch.compile(backend="eager")
def total(logits, target):
    losses = criterion(logits, target)
    weights = {"ce": 1.0, "l1": 0.5}
    scaled = {k: 2.0 for k in losses}
    return sum(losses[k] * weights[k] * scaled[k] for k in losses if k in weights)
"""


def test_a_dict_indexed_with_a_likely_tensor_is_a_lookup(tmp_path):
    """transformers' DETR loss: ``sum(loss_dict[k] * weight_dict[k] for k in loss_dict)``, the keys
    of a module call's result (typed a likely tensor) indexing a dict literal.  A dict hashes its key
    (a tensor key by identity), nothing converts it to an int: Dynamo 2.13 reports no graph break
    here (and none either with a real tensor key).  A list indexed the same way is still reported."""
    regions, found = _lint(tmp_path, DICT_INDEXED_BY_KEY)
    assert "total" in regions
    assert not [f for f in found if f[0] == "TC101"], found
    listed = DICT_INDEXED_BY_KEY.replace('weights = {"ce": 1.0, "l1": 0.5}', "weights = [1.0, 0.5]")
    _regions, found = _lint(tmp_path, listed)
    assert ("TC101", 19) in found, found
