"""Function mode (`tclint probe file.py::target`): declared inputs, synthesised inputs, the
missing-inputs error, the eager-vs-compiled comparison and hard errors."""

from __future__ import annotations

import os
import shutil
import textwrap

import pytest
from tclint.runtime_probe.api import ProbeUsageError, probe_function, write_inputs_stub

from tests.helpers.probeutil import fixture, probe_sites, reference, reference_sites

pytestmark = pytest.mark.dynamo

BLOCKS = fixture("funcs", "blocks.py")
SOURCE = open(BLOCKS).read().splitlines()


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(SOURCE, 1) if text in line)


def test_declared_inputs_build_the_module_and_run_the_matrix(pool, options, tmp_path):
    report = probe_function(f"{BLOCKS}::Scorer", options=options, pool=pool)
    assert report.status == "ok", report.message
    assert report.inputs["source"] == "declared"
    assert report.inputs["file"].endswith("blocks_probe_inputs.py")
    assert [c["label"] for c in report.correctness] == ["#0", "#1", "eval b=4"]
    assert {c["status"] for c in report.correctness} == {"match"}  # BatchNorm state is not shared
    assert report.run["compiled_calls"] == 3  # the eager reference runs are not counted

    # the same calls, made by a plain script under torch's own tools
    driver = tmp_path / "drive_scorer.py"
    driver.write_text(
        textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.dirname(BLOCKS)!r})
        import torch
        import blocks_probe_inputs as inputs
        model = inputs.make_Scorer()
        compiled = torch.compile(model)
        for item in inputs.inputs_Scorer(model):
            args = item["args"] if isinstance(item, dict) else item
            if isinstance(item, dict) and item.get("mode") == "eval":
                model.eval()
            compiled(*args)
    """)
    )
    ref = reference(str(driver), tmp_path=tmp_path)
    assert probe_sites(report) == reference_sites(ref)
    (site,) = report.graph_breaks
    assert (site["line"], site["gb_id"], site["hits"]) == (
        line_of("if score.item() > self.threshold:"),
        "GB0124",
        3,
    )
    assert sorted(c["recompile_reason"] or "" for c in ref["compiles"]) == sorted(
        (c["guard"] or {}).get("text") or "" for c in report.compiles
    )
    triggers = {c["trigger"] for c in report.compiles if c["kind"] == "recompile"}
    assert any("size mismatch" in t for t in triggers)
    assert any("training == True" in t for t in triggers)
    training = next(c for c in report.compiles if "training" in c["trigger"])
    assert training["guard_location"]["line"] == line_of("h = self.norm(x)")


def test_declared_inputs_for_a_method(pool, options):
    report = probe_function(f"{BLOCKS}::Scorer.calibrate", options=options, pool=pool)
    assert report.status == "ok"
    assert [c["label"] for c in report.correctness] == ["k=1", "k=2"]
    (recompile,) = [c for c in report.compiles if c["kind"] == "recompile"]
    assert recompile["trigger"] == "guard failed: k == 1"
    assert recompile["cause"]["text"] == "`k` changed (compiled for k == 1)"
    assert recompile["guard_location"]["line"] == line_of("return self.proj(x)[:k]")


def test_synthesised_bool_matrix(pool, options):
    report = probe_function(f"{BLOCKS}::gated", options=options, pool=pool)
    assert report.status == "ok"
    assert report.inputs["source"] == "synthesised"
    assert [c["label"] for c in report.correctness] == ["training=False", "training=True"]
    assert all(c["status"] == "match" for c in report.correctness)
    assert [c["kind"] for c in report.compiles] == ["first", "recompile"]
    assert report.compiles[1]["trigger"] == "guard failed: training == False"
    (diag,) = [d for d in report.diagnostics() if d.code == "TC902"]
    assert diag.line == line_of("if training:")


def test_synthesised_jaxtyping_shapes_and_literals(pool, options):
    report = probe_function(f"{BLOCKS}::project", options=options, pool=pool)
    assert report.status == "ok", report.message
    assert [c["label"] for c in report.correctness] == ["act='relu'", "act='tanh'"]
    assert all(c["status"] == "match" for c in report.correctness)
    assert report.compiles[1]["trigger"] == "guard failed: act == 'relu'"


def test_missing_inputs_say_what_to_write(pool, options):
    report = probe_function(f"{BLOCKS}::needs_config", options=options, pool=pool)
    assert report.status == "need-inputs"
    assert "x (no annotation, no default); cfg (no annotation, no default)" in report.message
    assert "def inputs_needs_config():" in report.message
    assert "blocks_probe_inputs.py" in report.message
    assert "--init-inputs" in report.message


def test_unknown_target_lists_what_exists():
    with pytest.raises(ProbeUsageError, match="has no top-level `nope`.*gated"):
        probe_function(f"{BLOCKS}::nope")
    with pytest.raises(ProbeUsageError, match="has no `nope`.*calibrate, forward"):
        probe_function(f"{BLOCKS}::Scorer.nope")


def test_init_inputs_writes_a_stub_that_the_worker_loads(pool, options, tmp_path):
    shutil.copy(BLOCKS, tmp_path / "blocks.py")
    path, written = write_inputs_stub(f"{tmp_path / 'blocks.py'}::needs_config")
    assert written and path == str(tmp_path / "blocks_probe_inputs.py")
    text = open(path).read()
    compile(text, path, "exec")
    assert "def inputs_needs_config():" in text and "tclint" not in text.split('"""', 2)[2]
    assert write_inputs_stub(f"{tmp_path / 'blocks.py'}::needs_config") == (path, False)  # never overwrites
    # filled in, it drives the probe
    filled = text.replace("None,  # x: TODO: a real value", "torch.ones(batch, 3),").replace(
        "None,  # cfg: TODO: a real value", "__import__('types').SimpleNamespace(scale=2.0),"
    )
    open(path, "w").write(filled)
    report = probe_function(f"{tmp_path / 'blocks.py'}::needs_config", options=options, pool=pool)
    assert report.status == "ok", report.message
    assert [c["label"] for c in report.correctness] == ["batch=2", "batch=4"]
    # a second target is appended to the same file, keeping the first
    _, written = write_inputs_stub(f"{tmp_path / 'blocks.py'}::Scorer")
    text = open(path).read()
    assert written and "def make_Scorer():" in text and "def inputs_Scorer(model):" in text
    assert "def inputs_needs_config():" in text


def test_eager_compiled_mismatch(pool, options):
    report = probe_function(f"{BLOCKS}::numpy_noise", options=options, pool=pool)
    assert report.status == "ok"
    (call,) = report.correctness
    assert call["status"] == "mismatch" and call["dtype"] == "float64"
    (diag,) = [d for d in report.diagnostics() if d.code == "TC905"]
    assert diag.line == line_of("def numpy_noise")
    assert report.has_problems


def test_forbidden_callable_is_a_hard_error(pool, options):
    report = probe_function(f"{BLOCKS}::marks_dynamic", options=options, pool=pool)
    (err,) = report.errors
    assert err["kind"] == "hard-error" and "forbidden callable" in err["message"]
    assert err["line"] == line_of("torch._dynamo.mark_dynamic(x, 0)")
    assert [d.code for d in report.diagnostics()] == ["TC904"]
    assert not report.graph_breaks


def test_custom_op_without_fake_is_a_hard_error(pool, options):
    report = probe_function(f"{BLOCKS}::calls_custom_op", options=options, pool=pool)
    (err,) = report.errors
    assert err["gb_id"] == "GB4315" and "no fake impl registered" in err["message"]
    assert err["line"] == line_of("return no_fake(x) + 1")
    (diag,) = report.diagnostics()
    assert diag.code == "TC904" and diag.gb_ids == ("GB4315",)


def test_cuda_code_on_a_cpu_machine(pool, options):
    report = probe_function(f"{BLOCKS}::moves_to_cuda", options=options, pool=pool)
    (err,) = report.errors
    assert err["kind"] == "device" and err["line"] == line_of('y = x.to("cuda") * 2')
    tc904 = next(d for d in report.diagnostics() if d.code == "TC904")
    assert "needs a device this machine lacks" in tc904.message and "--map-cuda-to-cpu" in tc904.message
    mapped = probe_function(
        f"{BLOCKS}::moves_to_cuda", options=options.with_(map_cuda_to_cpu=True), pool=pool
    )
    assert mapped.errors == [] and [c["status"] for c in mapped.correctness] == ["match"]
    assert mapped.environment["map_cuda_to_cpu"] is True
    assert [c["kind"] for c in mapped.compiles] == ["first"] and not mapped.graph_breaks
