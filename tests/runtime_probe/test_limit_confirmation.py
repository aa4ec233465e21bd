"""Issue 13 point 4: a function past the recompile limit (TC903) is predicted by the static findings
that say it recompiles without bound (TC201 inside it, here in the continuation after its `print`
break; TC205 at a call site), and those are confirmed when a failed guard checks what they name
(`self.calls == 2`, `n_steps == 3`).  Recompiles of the continuation in later calls are not folded
into the grad-mode flip that came first.  Real Dynamo on CPU, through `tclint probe`."""

from __future__ import annotations

import pytest
from tclint.runtime_probe import guards, merge
from tclint.runtime_probe.diagnostics import _diag

from tests.helpers.probeutil import fixture, probe_program_json

COUNTING = fixture("limit", "counting.py")
SOURCE = open(COUNTING).read().splitlines()


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(SOURCE, 1) if text in line)


@pytest.mark.parametrize(
    ("guard", "subject"),
    [
        ("self.calls == 2", "self.calls"),
        ("n_steps == 3", "n_steps"),
        ("L['n_steps'] == 3", "n_steps"),
        ("G['STEP'] == 1", "STEP"),
        ("GLOBAL_STATE changed: grad_mode", None),
    ],
)
def test_a_failed_guard_names_what_it_checks(guard, subject):
    assert guards.subject(guard) == subject


def test_the_mutated_name_of_an_assignment_line():
    assert guards.mutated_name(COUNTING, line_of("self.calls += 1")) == "self.calls"
    assert guards.mutated_name(COUNTING, line_of("h = self.fc(x)")) == "h"


def test_a_limit_nothing_predicts_stays_probe_only():
    limit = _diag(
        "TC903",
        "`Counter.forward` reached the recompile limit",
        COUNTING,
        line_of('print("step")'),
        extra={"function": "Counter.forward", "frame_file": COUNTING, "guards": ["self.calls == 2"]},
    )
    (only,) = merge.merge([], [limit])
    assert only.extra["unpredicted"] and not only.extra.get("predicted_by")


@pytest.mark.dynamo
@pytest.mark.slow
def test_probe_marks_the_limit_predicted_and_confirms_tc201_and_tc205(tmp_path):
    proc, diags = probe_program_json("limit", "counting.py", str(tmp_path / "report.json"))
    assert proc.returncode == 1, proc.stderr[-2000:]
    by = {(d["code"], d["location"]["row"]): d for d in diags}
    counter_limit = by[("TC903", line_of('print("step")'))]  # the continuation after the print hit the limit
    assert "TC201" in counter_limit["predicted_by"] and not counter_limit["unpredicted"]
    assert by[("TC201", line_of("self.calls += 1"))]["confirmed"]
    # the counter's recompiles (one per call) are their own finding, not folded into the grad-mode flip
    assert "`self.calls` changed" in by[("TC902", line_of("self.calls += 1"))]["message"]
    rollout_limit = by[("TC903", line_of("@torch.compile"))]  # the code object starts at its decorator
    assert "TC205" in rollout_limit["predicted_by"] and not rollout_limit["unpredicted"]
    assert by[("TC205", line_of("y = rollout(y, step)"))]["confirmed"]


def test_dynamic_false_called_in_a_loop_predicts_the_limit():
    """TC207 on a `dynamic=False` site whose function is called in a loop says the 9th size hits
    the recompile limit: the probe's TC903 for that function is predicted by it (seen on a scratch
    project: the limit was reported 'probe only' although TC207 said so)."""
    from tclint.rules.model import Diagnostic, Severity, Span

    def tc207(looped: bool) -> Diagnostic:
        return Diagnostic(
            "TC207",
            "dynamic-false",
            "`dynamic=False` on Counter.forward ...",
            COUNTING,
            Span.of(1, 0, 1, 5),
            Severity.ERROR,
            extra={"target": f"{COUNTING}::Counter.forward", "looped": looped},
        )

    limit = _diag(
        "TC903",
        "`Counter.forward` reached the recompile limit",
        COUNTING,
        line_of('print("step")'),
        extra={"function": "Counter.forward", "frame_file": COUNTING, "guards": ["x.size()[0] == 3"]},
    )
    merged = merge.merge([tc207(True)], [limit])
    (got,) = [d for d in merged if d.code == "TC903"]
    assert got.extra.get("predicted_by") == ["TC207"] and not got.extra.get("unpredicted")
    (got,) = [d for d in merge.merge([tc207(False)], [limit]) if d.code == "TC903"]
    assert got.extra.get("unpredicted")
