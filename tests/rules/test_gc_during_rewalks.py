"""A command-line run pauses the cyclic garbage collector while it loads facts and runs the
project pass (``Linter.gc_paused``), but not during the argflow re-walks inside that pass: each
walk leaves cyclic garbage holding the file's syntax tree, which a paused collector kept to the
end of the run (issue 20: a cold run of the transformers tree peaked at 1.7 GB in the main
process)."""

from __future__ import annotations

import ast
import subprocess
import sys

SOURCE = """import torch


def helper(x):
    if x.sum() > 0:
        return x * 2
    return x


@torch.compile
def step(x: torch.Tensor):
    return helper(x)
"""

PROBE = """
import gc
from tclint.rules import engine
from tclint.rules.config import ConfigResolver

seen = []
original = engine.analyze_source

def recording(src, module, is_package, root, predicates=(), seeds=None, returns_of=None):
    if seeds is not None or returns_of is not None:  # a re-walk with what the project pass learnt
        seen.append(gc.isenabled())
    return original(src, module, is_package, root, predicates, seeds, returns_of)

engine.analyze_source = recording
result = engine.Linter(ConfigResolver(), None, jobs=1, exits_after_run=True).lint_paths(["."])
print(repr((seen, gc.isenabled(), sorted({d.code for d in result.diagnostics}))))
"""


def test_the_collector_runs_during_rewalks_of_a_command_line_run(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.tclint]\n")
    (tmp_path / "model.py").write_text(SOURCE)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    seen, enabled_after, codes = ast.literal_eval(proc.stdout.strip().splitlines()[-1])
    assert seen and all(seen), seen  # re-walks happened, each with the collector on
    assert enabled_after is True  # and the run leaves it as it found it
    assert "TC102" in codes
