"""Issue 13 point 4: the probe's recompiles confirm the static variant findings (TC208/TC209) whose
dimension the failed guard is an instance of, wherever the finding's line is (the eager line that
flips the guard, not the guard's line inside the compiled code); a recompile no dimension predicts
is "not predicted".  Real Dynamo on CPU, through `tclint probe` as a user runs it."""

from __future__ import annotations

import pytest
from tclint.runtime_probe import guards

from tests.helpers.probeutil import probe_program_json

GUARDS = [
    ("GLOBAL_STATE changed: grad_mode", "grad_mode"),
    ("GLOBAL_STATE changed: autocast(cpu)_enabled", "autocast"),
    ("self._modules['drop'].training == True", "training"),
    ("tensor 'x' dtype mismatch. expected Float, actual Double", "dtype"),
    ("tensor 'x' requires_grad mismatch. expected requires_grad=0", "requires_grad"),
    ("tensor 'self._buffers['keys']' requires_grad mismatch. expected requires_grad=0", "requires_grad"),
    ("tensor 'x' size mismatch at index 0. expected 8, actual 4", "batch"),
    ("G['SCALE'] == 1.0", "global"),
    ("n == 1", "arg"),
]


@pytest.mark.parametrize(("guard", "dimension"), GUARDS)
def test_failed_guard_maps_to_its_static_dimension(guard, dimension):
    assert dimension in guards.dimensions(guard)


def test_an_identity_guard_maps_to_no_dimension():
    assert guards.dimensions("___check_obj_id(L['self'], 140)") == ()


@pytest.mark.dynamo
@pytest.mark.slow
def test_probe_confirms_the_variant_findings_and_flags_the_unpredicted_recompile(tmp_path):
    proc, diags = probe_program_json("variants", "evaluate.py", str(tmp_path / "report.json"))
    assert proc.returncode == 1, proc.stderr[-2000:]
    tc208 = {d["location"]["row"]: d for d in diags if d["code"] == "TC208"}
    assert sorted(tc208) == [31, 33]  # net.eval(), with torch.no_grad()
    assert all(d["confirmed"] for d in tc208.values())
    tc902 = {d["message"].split(" recompiled", 1)[0]: d for d in diags if d["code"] == "TC902"}
    forward = [d for d in diags if d["code"] == "TC902" and d["message"].startswith("`Net.forward`")]
    assert len(forward) == 2 and all(d["predicted_by"] == ["TC208"] and not d["unpredicted"] for d in forward)
    assert tc902["`normalise`"]["unpredicted"] is True  # x.to(dtype) through a variable: not predicted


@pytest.mark.dynamo
@pytest.mark.slow
def test_a_dropped_roots_variants_are_confirmed_by_its_callees_recompiles(tmp_path):
    """`Net.forward` runs eagerly (a break in a block called from its loop): its blocks are
    compiled on their own, and the `no_grad` call recompiles `Block.forward`.  TC208 names
    `Net.forward` and says its callees get the variants, so the callee's recompile is predicted
    by it (old code: "probe only: no static rule predicted this")."""
    proc, diags = probe_program_json("dropped_variants", "evaluate.py", str(tmp_path / "report.json"))
    assert proc.returncode == 1, proc.stderr[-2000:]
    tc208 = [d for d in diags if d["code"] == "TC208" and "no_grad" in d["message"]]
    assert len(tc208) == 1 and tc208[0]["confirmed"], tc208
    grad = [
        d
        for d in diags
        if d["code"] == "TC902" and d["message"].startswith("`Block.forward`") and "grad mode" in d["message"]
    ]
    assert grad and all(d["predicted_by"] == ["TC208"] and not d["unpredicted"] for d in grad), grad


@pytest.mark.dynamo
@pytest.mark.slow
def test_static_shapes_on_a_dropped_root_predict_its_callees_size_recompiles(tmp_path):
    """TC207 (`dynamic=False`, called in a loop) on `Net`, whose frame Dynamo drops: the size
    recompiles land on `Block.forward`, and TC207 predicts them (old code: probe only)."""
    proc, diags = probe_program_json("dropped_variants", "static_shapes.py", str(tmp_path / "report.json"))
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert [d["code"] for d in diags].count("TC207") == 1
    sizes = [
        d
        for d in diags
        if d["code"] == "TC902"
        and d["message"].startswith("`Block.forward`")
        and "changed size" in d["message"]
    ]
    assert sizes and all(d["predicted_by"] == ["TC207"] and not d["unpredicted"] for d in sizes), sizes
    # the run's config has automatic dynamic shapes on, but `dynamic=False` turns it off for
    # these frames: each new size compiles again, not "expected once per dimension"
    assert all("compiled with static shapes" in d["message"] for d in sizes), sizes
    assert not any("expected once per dimension" in d["message"] for d in sizes), sizes
