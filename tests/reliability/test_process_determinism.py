"""The same tree linted by different processes gives byte-identical output: string hashing is
randomised per process (PYTHONHASHSEED), so any output that depends on set or dict-of-set order
would differ between two CI runs, or between the CLI and the language server."""

from __future__ import annotations

import os
import random
import shutil

import pytest

from tests.helpers.fuzzutil import Chooser, mutate_gently, python_seeds
from tests.helpers.relutil import ROOT, tclint


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> str:
    root = str(tmp_path_factory.mktemp("hashseed") / "tree")
    shutil.copytree(os.path.join(ROOT, "examples"), root)
    os.makedirs(os.path.join(root, ".git"))
    rng = random.Random(3)
    seeds = python_seeds()
    for i in range(40):
        with open(os.path.join(root, f"mutant{i}.py"), "wb") as fh:
            fh.write(mutate_gently(Chooser(rng=rng), rng.choice(seeds)))
    return root


@pytest.mark.parametrize("fmt", ["json", "sarif", "full"])
def test_output_does_not_depend_on_the_hash_seed(tree, fmt):
    outputs = {
        seed: tclint(
            ".", "--no-cache", "--output-format", fmt, "--unsafe-fixes", cwd=tree, PYTHONHASHSEED=seed
        ).stdout
        for seed in ("0", "1", "12345", "random")
    }
    assert len(set(outputs.values())) == 1, "output differs between hash seeds"
    assert outputs["0"]
