"""The warm worker the editor keeps: fork safety, concurrent requests, recovery, isolation."""

from __future__ import annotations

import os
import signal
import threading

import pytest
from tclint.runtime_probe.api import ProbePool, probe_program

pytestmark = pytest.mark.dynamo


def test_forked_children_use_intra_op_threads_and_compile(pool, options, tmp_path):
    """Forking after `import torch` is safe here: the server never runs a parallel op before it
    forks, so each child starts OpenMP afresh and can use every thread."""
    script = tmp_path / "threads.py"
    script.write_text(
        "import torch\nprint('threads', torch.get_num_threads())\na = torch.randn(800, 800)\n"
        "for _ in range(3):\n    a = (a @ a).tanh()\n"
        "@torch.compile\ndef f(x):\n    return (x @ x).relu().sum()\nprint('sum', float(f(a)))\n"
    )
    for _ in range(2):  # twice: the second fork comes from the same server
        report = probe_program(str(script), options=options, pool=pool)
        assert report.status == "ok", report.message
        threads = int(report.run["output"]["head"].split("threads ", 1)[1].split()[0])
        assert threads == (os.cpu_count() or 1) or threads >= 1  # whatever OpenMP picked, it did not hang
        assert [c["kind"] for c in report.compiles] == ["first"]


def test_probes_do_not_leak_state_into_each_other(pool, options, tmp_path):
    script = tmp_path / "state.py"
    script.write_text(
        "import sys, torch\nprint('seen before:', hasattr(sys, 'tclint_marker'))\nsys.tclint_marker = 1\n"
        "torch._dynamo.config.capture_scalar_outputs = True\n@torch.compile\ndef f(x):\n    return x.sum().item()\nf(torch.ones(2))\n"
    )
    first = probe_program(str(script), options=options, pool=pool)
    second = probe_program(str(script), options=options, pool=pool)
    assert "seen before: False" in first.run["output"]["head"]
    assert "seen before: False" in second.run["output"]["head"]
    assert [c["compile_id"] for c in second.compiles] == ["0/0"]  # a fresh Dynamo every time


def test_concurrent_requests_wait_their_turn(pool, options, tmp_path):
    script = tmp_path / "brief.py"
    script.write_text(
        "import torch\n@torch.compile\ndef f(x):\n    print('x')\n    return x + 1\nf(torch.ones(2))\n"
    )
    results = []
    threads = [
        threading.Thread(
            target=lambda: results.append(probe_program(str(script), options=options, pool=pool))
        )
        for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert [r.status for r in results] == ["ok"] * 3
    assert all(r.graph_breaks[0]["hits"] == 1 for r in results)


@pytest.mark.slow
def test_a_dead_worker_is_replaced(options, tmp_path):
    script = tmp_path / "ok.py"
    script.write_text("import torch\nprint(torch.compile(lambda x: x + 1)(torch.ones(1)))\n")
    with ProbePool() as own:
        assert probe_program(str(script), options=options, pool=own).status == "ok"
        worker = own.worker()
        old_pid = worker.proc.pid
        os.killpg(old_pid, signal.SIGKILL)
        worker.proc.wait(10)
        assert not worker.alive
        report = probe_program(str(script), options=options, pool=own)
        assert report.status == "ok", report.message
        assert own.worker().proc.pid != old_pid
