"""Program mode (`tclint probe script.py ARGS`, `-m module ARGS`) against torch's own trace.

For each run, the reference (``reference_trace.py``, torch's tools only) and the probe must agree
on the break sites, their GB ids and lines, hit counts, the number of frame compiles and the guard
failure behind every recompile.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from tclint.runtime_probe.api import probe_program

from tests.helpers.probeutil import fixture, probe_sites, reference, reference_sites

pytestmark = pytest.mark.dynamo

TRAIN = fixture("train", "train.py")


def _compile_summary(records):
    """(function, recompile reason first line) for each compile: comparable across both sides."""
    out = Counter()
    for r in records:
        out[(r["co_name"], r["recompile_reason"], r["fail_type"])] += 1
    return out


def _probe_compile_summary(report):
    out = Counter()
    for c in report.compiles:
        reason = (c["guard"] or {}).get("text")
        name = None if c["kind"] == "limit-refused" else c["frame"]["code_name"]  # torch records no frame
        out[(name, reason, c["fail_type"])] += 1
    return out


def test_training_script_matches_the_structured_trace(pool, options, tmp_path):
    report = probe_program(TRAIN, ["--steps", "6"], options=options, pool=pool, cwd=os.path.dirname(TRAIN))
    assert report.status == "ok", report.message
    ref = reference(TRAIN, ["--steps", "6"], tmp_path=tmp_path)

    # breaks: same sites, GB ids, lines and hit counts
    assert probe_sites(report) == reference_sites(ref)
    lines = {line for (_f, line, _gb) in probe_sites(report)}
    source = open(TRAIN).read().splitlines()
    assert {source[line - 1].strip() for line in lines} == {'print("tick")', "if logits.abs().max() > 30:"}
    # the print's hits are also visible in the program's own output: one "tick" per forward call
    print_site = next(b for b in report.graph_breaks if b["gb_id"] == "GB0059")
    assert print_site["hits"] == report.run["output"]["head"].count("tick\n") == 6
    branch = next(b for b in report.graph_breaks if b["gb_id"] == "GB0170")
    assert branch["hits"] == 6 and branch["function"] == "forward"

    # compiles: same records, same recompile reasons (the short last batch)
    assert _probe_compile_summary(report) == _compile_summary(ref["compiles"])
    recompiles = [c for c in report.compiles if c["kind"] == "recompile"]
    assert recompiles, "the short last batch must recompile"
    assert all("size mismatch" in c["trigger"] for c in recompiles)
    # the guard on the `tokens` argument maps back to the parameter line of forward()
    first = next(c for c in recompiles if c["frame"]["code_name"] == "forward")
    assert (
        first["guard_location"]["line"]
        == source.index("    def forward(self, tokens: torch.Tensor) -> torch.Tensor:") + 1
    )
    assert report.run["compiled_calls"] == 6


def test_pytest_run_under_the_probe(pool, options, tmp_path):
    project = fixture("pytest_project")
    args = ["check_model.py", "-q"]
    report = probe_program("pytest", args, module=True, options=options, pool=pool, cwd=project)
    assert report.status == "ok", report.message + report.run["output"]["tail"]
    assert "2 passed" in report.run["output"]["tail"]
    ref = reference("pytest", args, module=True, cwd=project, tmp_path=tmp_path)
    assert probe_sites(report) == reference_sites(ref)
    (site,) = report.graph_breaks
    assert site["gb_id"] == "GB0124" and site["function"] == "normalize"
    assert site["hits"] == 4  # three sizes in one test, one call in the other
    assert _probe_compile_summary(report) == _compile_summary(ref["compiles"])


def test_max_calls_stops_the_program(pool, options):
    report = probe_program(
        TRAIN, ["--steps", "50"], options=options.with_(max_calls=3), pool=pool, cwd=os.path.dirname(TRAIN)
    )
    assert report.status == "stopped"
    assert report.run["compiled_calls"] == 3
    print_site = next(b for b in report.graph_breaks if b["gb_id"] == "GB0059")
    assert print_site["hits"] == 3


def test_program_exit_status_and_exception(pool, options, tmp_path):
    script = tmp_path / "fails.py"
    script.write_text(
        "import torch\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n\nf(torch.ones(3))\n"
        "raise RuntimeError('boom after compiling')\n"
    )
    report = probe_program(str(script), options=options, pool=pool)
    assert report.status == "exception"
    assert "boom after compiling" in report.message and f"{script}:8" in report.message
    assert [b["gb_id"] for b in report.graph_breaks] == ["GB0124"]
    codes = {d.code for d in report.diagnostics()}
    assert codes == {"TC901", "TC906"}


def test_a_script_importing_its_own_package_from_above_says_to_run_it_as_a_module(pool, options, tmp_path):
    """``tclint probe app/run.py`` where run.py does ``from app.model import ...``: Python puts
    app/ first on the import path, so the import fails (as with ``python app/run.py``); the TC906
    says to run ``-m app.run`` from the folder holding ``app``.  An import of a module that is
    nowhere gets no such hint."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "model.py").write_text("import torch\n")
    run = tmp_path / "app" / "run.py"
    run.write_text("from app.model import torch\n")
    report = probe_program(str(run), options=options, pool=pool)
    (stopped,) = [d for d in report.diagnostics() if d.code == "TC906"]
    assert stopped.help is not None and "tclint probe -m app.run" in stopped.help
    run.write_text("import no_such_module_anywhere\n")
    report = probe_program(str(run), options=options, pool=pool)
    (stopped,) = [d for d in report.diagnostics() if d.code == "TC906"]
    assert stopped.help is None


SERVE = fixture("serve", "serve.py")


def test_recompile_limit_and_whole_frame_drop(pool, options, tmp_path):
    report = probe_program(SERVE, options=options, pool=pool)
    assert report.status == "ok", report.message
    ref = reference(SERVE, tmp_path=tmp_path)
    assert _probe_compile_summary(report) == _compile_summary(ref["compiles"])
    assert probe_sites(report) == reference_sites(ref)
    source = open(SERVE).read().splitlines()

    # forward(): one compile per `steps` value until the limit, then a refusal (GB0039)
    assert ref["limit_refusals"] == 1
    (hit,) = report.recompile_limit_hits
    assert hit["function"] == "forward" and hit["compiles"] == 8
    forward = [c for c in report.compiles if c["frame"]["function"] == "forward"]
    assert [c["kind"] for c in forward] == ["first"] + ["recompile"] * 7 + ["limit-refused"]
    assert [c["trigger"] for c in forward[1:8]] == [f"guard failed: steps == {n}" for n in range(1, 8)]
    guard_line = source.index("        for _ in range(steps):") + 1
    assert {c["guard_location"]["line"] for c in forward[1:8]} == {guard_line}
    diags = {d.code: d for d in report.diagnostics()}
    assert diags["TC903"].severity.value == "error" and diags["TC903"].gb_ids == ("GB0039",)
    assert diags["TC902"].line == guard_line and "recompiled 7 times" in diags["TC902"].message

    # keep_confident(): a data-dependent `if` in a loop body drops the whole frame
    (site,) = report.graph_breaks
    def_line = source.index("def keep_confident(scores: torch.Tensor) -> torch.Tensor:") + 1
    assert site["gb_id"] == "GB0170" and site["frame_dropped"]
    assert site["dropped_frames"] == [f"keep_confident ({os.path.relpath(SERVE)}:{def_line})"]
    assert site["hits"] is None  # it ran eagerly: nothing to count, never reported as 0
    assert diags["TC901"].severity.value == "error" and "dropped keep_confident (" in diags["TC901"].message


def test_user_code_that_resets_dynamo(pool, options, tmp_path):
    """After torch._dynamo.reset() compile ids start again at 0/0: nothing may be merged or lost."""
    script = tmp_path / "resets.py"
    script.write_text(
        "import torch\n\n\ndef f(x):\n    print('f')\n    return x + 1\n\n\ndef g(x):\n    print('g')\n    return x * 2\n\n\n"
        "torch.compile(f)(torch.ones(2))\ntorch._dynamo.reset()\ncg = torch.compile(g)\ncg(torch.ones(2))\ncg(torch.ones(2))\n"
    )
    report = probe_program(str(script), options=options, pool=pool)
    assert report.status == "ok", report.message
    hits = {b["function"]: b["hits"] for b in report.graph_breaks}
    assert hits == {"f": 1, "g": 2}
    assert len({c["compile_id"] for c in report.compiles}) == len(report.compiles) == 4
    assert {c["frame"]["function"] for c in report.compiles} == {"f", "g"}
