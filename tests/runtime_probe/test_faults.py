"""User code that misbehaves: every fault yields a clear report within the timeout, leaves no
process behind, and the warm worker (the editor's) keeps serving probes afterwards."""

from __future__ import annotations

import os
import tempfile
import time

import pytest
from tclint.runtime_probe.api import probe_program

from tests.helpers.probeutil import fixture, pids_alive, session_processes

pytestmark = pytest.mark.dynamo

FAULT = fixture("faults", "fault.py")
TIMEOUT = 5.0
SOURCE = open(FAULT).read().splitlines()


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(SOURCE, 1) if text in line)


def run_fault(pool, options, kind, tmp_path, **changes):
    pids = tmp_path / "pids.txt"
    opts = options.with_(
        timeout=TIMEOUT, memory_limit=512 * 1024**2, env={"TCLINT_FIXTURE_PIDS": str(pids)}, **changes
    )
    events = []
    start = time.monotonic()
    report = probe_program(FAULT, [kind], options=opts, pool=pool, progress=lambda p: events.append(p.event))
    elapsed = time.monotonic() - start
    child = next(e["pid"] for e in events if e.get("t") == "start")
    recorded = [int(x) for x in pids.read_text().split()] if pids.exists() else []
    return report, elapsed, child, recorded


def check_clean(pool, child, recorded):
    """Nothing of the probe survives it, and the warm worker still answers."""
    assert pids_alive([child, *recorded]) == []
    worker = pool.worker()
    assert worker.alive
    assert session_processes(worker.proc.pid) == [worker.proc.pid]


def check_partial(report, hits=2):
    """What ran before the fault is still reported, with exact hit counts."""
    (site,) = report.graph_breaks
    assert site["gb_id"] == "GB0059" and site["line"] == line_of('print("before the fault")')
    assert site["hits"] == hits


def test_raise(pool, options, tmp_path):
    report, elapsed, child, recorded = run_fault(pool, options, "raise", tmp_path)
    assert report.status == "exception"
    assert "ValueError" in report.message and "the user's own bug" in report.message
    assert f"fault.py:{line_of('raise ValueError')}" in report.message
    check_partial(report)
    tc906 = [d for d in report.diagnostics() if d.code == "TC906"]
    assert tc906 and tc906[0].line == line_of("raise ValueError")
    check_clean(pool, child, recorded)


def test_sys_exit(pool, options, tmp_path):
    report, _, child, recorded = run_fault(pool, options, "sys_exit", tmp_path)
    assert report.status == "exit" and report.run["exit_code"] == 3
    assert "status 3" in report.message
    check_partial(report)
    check_clean(pool, child, recorded)


def test_os_exit(pool, options, tmp_path):
    report, _, child, recorded = run_fault(pool, options, "os_exit", tmp_path)
    assert report.status == "exit" and report.run["exit_code"] == 4
    assert "os._exit" in report.message
    check_partial(report)
    check_clean(pool, child, recorded)


@pytest.mark.parametrize(
    "kind, where",
    [
        ("hang_python", "while True:"),
        ("hang_c", "time.sleep(3600)"),
        ("hang_c_gil", "ctypes.PyDLL(None).sleep(3600)"),
    ],
)
def test_hang_is_killed_at_the_timeout(pool, options, tmp_path, kind, where):
    report, elapsed, child, recorded = run_fault(pool, options, kind, tmp_path)
    assert report.status == "timeout"
    assert TIMEOUT <= elapsed < TIMEOUT + 3
    loc = report.run["fault_location"]
    assert loc["line"] in (line_of(where), line_of(where) + 1)  # `while True: pass` reports either line
    assert f"fault.py:{loc['line']}" in report.message
    check_partial(report)
    check_clean(pool, child, recorded)


def test_segfault(pool, options, tmp_path):
    report, elapsed, child, recorded = run_fault(pool, options, "segfault", tmp_path)
    assert report.status == "crashed" and "SIGSEGV" in report.message
    assert report.run["fault_location"]["line"] == line_of("ctypes.string_at(0)")
    assert elapsed < TIMEOUT
    check_partial(report)
    check_clean(pool, child, recorded)


def test_allocation_until_the_memory_cap(pool, options, tmp_path):
    report, elapsed, child, recorded = run_fault(pool, options, "oom", tmp_path)
    assert report.status == "memory"
    assert "512 MiB" in report.message and f"fault.py:{line_of('hoard.append')}" in report.message
    assert elapsed < TIMEOUT
    check_partial(report)
    check_clean(pool, child, recorded)


def test_shared_memory_escaping_the_rlimit_is_caught_by_the_watchdog(pool, options, tmp_path):
    report, elapsed, child, recorded = run_fault(pool, options, "oom_shared", tmp_path)
    assert report.status == "memory" and "exceeded the memory cap (512 MiB)" in report.message
    assert report.run["fault_location"]["line"] == line_of("area[offset] = 1")
    assert elapsed < TIMEOUT
    check_clean(pool, child, recorded)


def test_megabytes_of_output(pool, options, tmp_path):
    report, elapsed, child, recorded = run_fault(pool, options, "big_output", tmp_path)
    assert report.status == "ok"
    out = report.run["output"]
    assert out["bytes"] > 8 * 1024**2 and out["truncated"]
    assert len(out["head"]) + len(out["tail"]) < 200 * 1024  # bounded, whatever the program prints
    assert out["tail"].rstrip().endswith("END-OF-OUTPUT\nthe fault returned")
    assert out["head"].startswith("before the fault")
    check_partial(report)
    check_clean(pool, child, recorded)


def test_stdin_is_empty(pool, options, tmp_path):
    report, elapsed, child, recorded = run_fault(pool, options, "stdin", tmp_path)
    assert report.status == "exception" and "EOFError" in report.message
    assert "read 0 bytes from stdin" in report.run["output"]["tail"]
    assert elapsed < TIMEOUT
    check_clean(pool, child, recorded)


def test_chdir_does_not_disturb_the_probe(pool, options, tmp_path):
    report, _, child, recorded = run_fault(pool, options, "chdir", tmp_path)
    assert report.status == "ok"
    check_partial(report, hits=3)  # the call after the chdir recompiled for float64 and hit the break
    assert any("dtype mismatch" in c["trigger"] for c in report.compiles)
    assert os.getcwd() != "/"
    check_clean(pool, child, recorded)


def test_children_that_outlive_the_program_are_killed(pool, options, tmp_path):
    report, _, child, recorded = run_fault(pool, options, "orphans", tmp_path)
    assert report.status == "ok"
    assert len(recorded) == 3  # a subprocess, a fork, a double-forked setsid daemon
    assert report.run["orphans_killed"] >= 3
    check_clean(pool, child, recorded)


def test_forked_children_do_not_pollute_the_report(pool, options, tmp_path):
    report, _, child, recorded = run_fault(pool, options, "fork_compiles", tmp_path)
    assert report.status == "ok"
    assert not any("Half" in c["trigger"] for c in report.compiles)  # the fork's float16 compile
    check_partial(report)
    check_clean(pool, child, recorded)


def test_cancel(pool, options, tmp_path):
    import threading

    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    start = time.monotonic()
    report = probe_program(FAULT, ["hang_c"], options=options.with_(timeout=60), pool=pool, cancel=cancel)
    assert report.status == "cancelled"
    assert time.monotonic() - start < 5
    assert report.run["fault_location"]["line"] == line_of("time.sleep(3600)")
    assert pool.worker().alive


def test_a_worker_killed_by_the_probed_code_leaves_nothing_behind(options, tmp_path):
    """Issue 18 item 15: the probed program starts a `start_new_session=True` daemon (no longer in
    the worker's session or process group) and SIGKILLs the probe worker, which can then neither
    sweep nor remove its scratch folder: the parent does both."""
    from tclint.runtime_probe.protocol import program_spec
    from tclint.runtime_probe.runner import run_cold

    pids = tmp_path / "pids.txt"
    opts = options.with_(timeout=30, env={"TCLINT_FIXTURE_PIDS": str(pids)})
    spec = program_spec("script", FAULT, ["kill_worker"], opts)
    start = time.monotonic()
    outcome = run_cold(spec, env=opts.env)
    assert time.monotonic() - start < 30
    assert outcome.parent_status == "worker-died"
    (daemon,) = [int(x) for x in pids.read_text().split()]
    deadline = time.monotonic() + 5
    while pids_alive([daemon]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids_alive([daemon]) == []
    assert outcome.scratch and outcome.scratch.startswith(
        os.path.join(tempfile.gettempdir(), "tclint-probe-")
    )
    assert not os.path.exists(outcome.scratch)
    from tclint.runtime_probe.report import build_report

    report = build_report(outcome, spec, "fault.py kill_worker")
    assert report.status == "worker-died" and report.headline() == "the probe worker died"
