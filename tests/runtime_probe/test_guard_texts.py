"""Every recompile cause of torch 2.13's truth table, from the guard texts torch really printed
(``tests/fixtures/runtime_probe/guard_texts_torch-2.13.0.json``, captured by ``tests/helpers/capture_guard_texts.py`` from
``tests/fixtures/runtime_probe/guards/causes.py``): each is said in the user's terms and mapped to a line of the
user's file.  No worker runs here: the captured records go through the parent's own code."""

from __future__ import annotations

import copy
import json
import os

import pytest
from tclint.rules.model import Severity
from tclint.runtime_probe import guards
from tclint.runtime_probe.diagnostics import recompile_diagnostics
from tclint.runtime_probe.report import ProbeReport, build_compiles

from tests.helpers.probeutil import FIX

DATA = os.path.join(FIX, "guard_texts_torch-2.13.0.json")
CAUSES = os.path.join(FIX, "guards", "causes.py")
SOURCE = open(CAUSES).read().splitlines()
CAPTURED = json.load(open(DATA))


def line_of(text: str, after: str | None = None) -> int:
    start = next(i for i, line in enumerate(SOURCE) if after in line) if after else 0
    return next(i for i, line in enumerate(SOURCE[start:], start + 1) if text in line)


def records(case: str) -> list[dict]:
    """The captured compile records of one case, with paths made absolute again."""
    out = copy.deepcopy(CAPTURED["cases"][case])
    for rec in out:
        if not os.path.isabs(rec["co_filename"]):
            rec["co_filename"] = os.path.join(FIX, "guards", rec["co_filename"])
        for frame in (rec.get("recompile") or {}).get("stack") or []:
            if not os.path.isabs(frame["file"]):
                frame["file"] = os.path.join(FIX, "guards", frame["file"])
        rec.setdefault("graphs", 1)
    return out


# case -> (compile id, kind, what the user reads, the line it points at, the function's qualified name)
TABLE = {
    "case_train_eval": (
        "0/1",
        "train-eval",
        "train/eval mode changed (compiled in train mode",
        "return self.drop(self.lin(x))",
        "Dropper.forward",
    ),
    "case_train_eval_after_break": (
        "0/1",
        "train-eval",
        "train/eval mode changed (compiled in train mode",
        "noise = torch.randn_like(h) if self.training else None",
        "Branchy.forward",
    ),
    "case_grad_mode": ("0/1", "grad-mode", "grad mode changed", "def grad_sensitive(x):", "grad_sensitive"),
    "case_autocast": (
        "0/1",
        "autocast",
        "autocast (cpu) was switched on or off",
        "def autocast_sensitive(x):",
        "autocast_sensitive",
    ),
    "case_requires_grad": (
        "0/1",
        "requires-grad",
        "`x` now requires grad (compiled with requires_grad=False)",
        "def plain(x):",
        "plain",
    ),
    "case_dtype": ("0/1", "dtype", "`x` changed dtype: float32 -> float64", "def plain(x):", "plain"),
    "case_batch_size": (
        "0/1",
        "size",
        "`x` changed size in dim 0: 8 -> 16 (Dynamo then compiles that dimension as dynamic",
        "def plain(x):",
        "plain",
    ),
    "case_rank": ("0/1", "rank", "`x` changed its number of dimensions: 2 -> 3", "def plain(x):", "plain"),
    "case_stride": ("0/1", "stride", "`x` changed strides in dim 0: 4 -> 1", "def plain(x):", "plain"),
    "case_int_arg": ("0/1", "value", "`n` changed (compiled for n == 1)", "return x * n", "with_int"),
    "case_int_in_range": (
        "0/1",
        "value",
        "`n` changed (compiled for n == 1) (`range()` makes each value compile anew)",
        "for _ in range(n):",
        "unrolled",
    ),
    "case_str_arg": (
        "0/1",
        "value",
        "`mode` changed (compiled for mode == 'a')",
        'if mode == "a":',
        "with_str",
    ),
    "case_bool_arg": ("0/1", "value", "`flag` changed (compiled for flag == True)", "if flag:", "with_bool"),
    "case_float_arg": ("0/1", "value", "`s` changed (compiled for s == 0.5)", "return x * s", "with_float"),
    "case_module_int_attr": (
        "0/1",
        "attribute",
        "module attribute `self.k` changed (compiled for 1) (int module attributes are static",
        "return x * self.k",
        "Counter.forward",
    ),
    "case_module_float_attr": (
        "0/1",
        "attribute",
        "module attribute `self.scale` changed (compiled for 1.0)",
        "return x * self.scale",
        "Scaled.forward",
    ),
    "case_int_global": (
        "0/1",
        "global",
        "global `ISCALE` changed (compiled for 1)",
        "return x * ISCALE",
        "uses_int_global",
    ),
    "case_float_global": (
        "0/1",
        "global",
        "global `SCALE` changed (compiled for 1.0)",
        "return x * SCALE",
        "uses_float_global",
    ),
    "case_global_list": (
        "0/1",
        "emptiness",
        "global `HISTORY` was empty when compiled and is not now",
        "HISTORY.append(1)",
        "appends_global",
    ),
    "case_item_across_break": (
        "1/1",
        "carried-value",
        "the `.item()` value computed at the graph break on line "
        f"{line_of('s = x.sum().item()')} changed (compiled for 4.0)",
        "s = x.sum().item()",
        "item_across_break",
    ),
    "case_batch_after_break": (
        "0/1",
        "size",
        "`x` changed size in dim 0: 8 -> 16",
        "def batch_after_break(x):",
        "batch_after_break",
    ),
}
SWITCHES = {
    "case_train_eval": "m.eval()",
    "case_train_eval_after_break": "m.eval()",
    "case_grad_mode": "with torch.no_grad():",
    "case_autocast": "with torch.autocast(",
}


def test_the_data_is_torch_2_13_and_covers_every_case():
    assert CAPTURED["torch"].startswith("2.13.")
    assert set(TABLE) == set(CAPTURED["cases"])


@pytest.mark.parametrize("case", sorted(TABLE))
def test_each_guard_is_said_in_the_users_terms_at_the_users_line(case):
    cid, kind, text, line_text, qualname = TABLE[case]
    compiles = build_compiles(records(case), search=[CAUSES])
    c = next(c for c in compiles if c["compile_id"] == cid)
    assert c["kind"] == "recompile"
    assert c["cause"]["kind"] == kind
    assert text in c["cause"]["text"], c["cause"]["text"]
    for internal in ("___", "L['", "G['", "_modules["):
        assert internal not in c["cause"]["text"]
    assert c["guard_location"]["file"] == CAUSES
    assert SOURCE[c["guard_location"]["line"] - 1].strip().startswith(line_text), c["guard_location"]
    assert c["frame"]["qualname"] == qualname
    if case in SWITCHES:
        at = c["cause"]["switched_at"]
        assert SOURCE[at["line"] - 1].strip().startswith(SWITCHES[case])


def _report(case: str) -> ProbeReport:
    report = ProbeReport(mode="program", target="causes.py", status="ok", message="completed")
    report.compiles = build_compiles(records(case), search=[CAUSES])
    return report


def test_tc902_names_the_class_and_the_change_and_points_at_the_switch():
    (diag,) = recompile_diagnostics(_report("case_train_eval"))
    assert diag.message.startswith("`Dropper.forward` recompiled 1 time: train/eval mode changed")
    assert "_modules" not in diag.message and diag.line == line_of("return self.drop(self.lin(x))")
    assert [r.message for r in diag.related] == ["the mode is switched here"]
    assert diag.related[0].span.start.line == line_of("m.eval()")
    assert diag.extra["guards"] == ["self._modules['drop'].training == True"]  # Dynamo's words kept aside


def test_a_continuation_recompiling_with_its_function_is_folded_into_it():
    """train -> eval: `forward` recompiles on `self.training`, then its continuation after the
    break recompiles because `noise` is now None.  One finding, the second counted in it."""
    report = _report("case_train_eval_after_break")
    secondary = next(c for c in report.compiles if c["compile_id"] == "1/1")
    assert secondary["secondary_of"] == "0/1"
    assert secondary["cause"]["text"] == "`noise` is now None (it was a tensor when compiled)"
    (diag,) = recompile_diagnostics(report)
    assert diag.line == line_of("noise = torch.randn_like(h) if self.training else None")
    assert "1 continuation after graph breaks recompiled with it" in diag.message
    assert diag.extra["secondary_recompiles"] == 1


def test_dynamic_shape_generalisation_is_one_info_finding():
    report = _report("case_batch_after_break")
    (diag,) = recompile_diagnostics(report)
    assert diag.severity is Severity.INFO and diag.extra["ordinary"]
    assert "1 continuation after graph breaks recompiled with it" in diag.message
    (diag,) = recompile_diagnostics(_report("case_dtype"))
    assert diag.severity is Severity.WARNING  # a dtype change is a real recompile


def test_a_value_carried_across_a_break_points_at_the_break():
    (diag,) = recompile_diagnostics(_report("case_item_across_break"))
    assert diag.line == line_of("s = x.sum().item()")
    assert "___stack" not in diag.message and ".item" in diag.message


@pytest.mark.parametrize(
    "guard, kind, text",
    [
        # texts Dynamo 2.13 prints for less common causes (from torch/_dynamo/guards.py)
        ("'NoneType' object has no attribute 'size'", "guard-error", "usually a tensor that is now None"),
        ("___check_obj_id(L['fn'], 140230)", "identity", "`fn` is another object"),
        ("len(L['xs']) == 2", "length", "`xs` changed length (compiled for 2 items)"),
        ("KeyError on L['cfg']['scale']", "missing-key", "`cfg['scale']` is missing now"),
        (
            "BACKEND_MATCH failure: torch.compile detected different backend callables.",
            "backend",
            "another backend",
        ),
        ("tensor 'x' device mismatch. expected cpu, actual cuda:0", "device", "`x` moved to another device"),
        ("expected type of 'y' to be a tensor type, ' but found <class 'int'>", "type", "`y` changed type"),
    ],
)
def test_rarer_guard_texts(guard, kind, text):
    from tclint.runtime_probe.guards import explain

    cause = explain({"guard": guard, "source": None})
    assert cause["kind"] == kind and text in cause["text"], cause
    assert "L['" not in cause["text"]


def test_readable_sources():
    assert guards.readable("L['x']") == "x"
    assert guards.readable("self._modules['drop'].training") == "self.drop.training"
    assert guards.readable("G['SCALE']") == "SCALE"


def test_a_guard_error_when_the_calls_switch_mode_is_said_as_a_mode_change():
    """Issue 15 point 5: "'NoneType' object has no attribute 'size'" is what Dynamo printed when
    the module switched from train to eval; with declared calls switching mode, say so."""
    recs = records("case_train_eval_after_break")
    (resume,) = [r for r in recs if r["compile_id"] == "1/1"]
    resume["recompile"] = {
        **resume["recompile"],
        "guard": "'NoneType' object has no attribute 'size'",
        "source": None,
    }
    plain = next(c for c in build_compiles(copy.deepcopy(recs), search=[CAUSES]) if c["compile_id"] == "1/1")
    assert plain["cause"]["kind"] == "guard-error"
    c = next(c for c in build_compiles(recs, search=[CAUSES], mode_switched=True) if c["compile_id"] == "1/1")
    assert c["cause"]["kind"] == "train-eval"
    assert c["cause"]["text"].startswith("train/eval mode changed between the calls: ")
    assert SOURCE[c["cause"]["switched_at"]["line"] - 1].strip().startswith(("m.train()", "m.eval()"))
