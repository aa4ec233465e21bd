"""``tclint bench``: phases, honest numbers against independent references, the contract, the reports.

Each real bench run is made once per module (module-scoped fixtures) with the cheap ``eager`` /
``aot_eager`` backends and few iterations; no test asserts an absolute time, only ratios against a
reference measured on the same machine in the same session."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from tclint.runtime_probe import bench_contract, bench_render, bench_run

from tests.helpers.benchutil import HERE, tclint

ROOT = os.path.dirname(os.path.dirname(HERE))
SCHEMA = os.path.join(ROOT, "runtime_probe", "bench_schema.json")
ITER = 40


def _json(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("bench")


@pytest.fixture(scope="module")
def mix(out_dir):
    path = str(out_dir / "mix.json")
    proc = tclint(
        "--backend",
        "eager",
        "--iterations",
        str(ITER),
        "--output-format",
        "json",
        "-o",
        path,
        "buckets.py::mix",
    )
    assert proc.returncode == 0, proc.stderr
    return _json(path)


@pytest.fixture(scope="module")
def drift(out_dir):
    path = str(out_dir / "drift.json")
    proc = tclint(
        "--backend",
        "eager",
        "--iterations",
        "6",
        "--no-cache-run",
        "--modes",
        "default,reduce-overhead",
        "--check",
        "--output-format",
        "json",
        "-o",
        path,
        "buckets.py::drifting",
    )
    return proc, _json(path)


@pytest.fixture(scope="module")
def tiny(out_dir):
    path = str(out_dir / "tiny.json")
    proc = tclint(
        "--backend",
        "aot_eager",
        "--iterations",
        "6",
        "--no-cache-run",
        "--output-format",
        "json",
        "-o",
        path,
        "buckets.py::Tiny",
    )
    assert proc.returncode == 0, proc.stderr
    return _json(path)


@pytest.fixture(scope="module")
def reference(out_dir):
    path = str(out_dir / "reference.json")
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tests", "helpers", "bench_reference.py"), path, str(ITER)],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    return _json(path)


def _run(report: dict, mode: str = "default") -> dict:
    return next(r for r in report["runs"] if r["mode"] == mode)


# -- phases --------------------------------------------------------------------------------------


@pytest.mark.dynamo
@pytest.mark.slow
def test_every_declared_bucket_is_warmed_and_each_compile_has_its_trigger(mix):
    run = _run(mix)
    assert run["warmup"]["buckets"] == ["batch=8", "batch=32"]
    assert [
        (c["compile_id"], c["phase"], c["bucket"], c["trigger"]["kind"]) for c in run["warmup"]["compiles"]
    ] == [("0/0", "cold", "batch=8", "first"), ("0/1", "warmup", "batch=32", "size")]
    assert run["steady"]["recompiles"] == []
    assert [t["phase"] for t in run["timeline"]] == ["cold"] + ["warmup"] * 2 + ["steady"] * ITER
    assert run["timeline"][0]["compiles"] == ["0/0"] and run["timeline"][2]["compiles"] == ["0/1"]
    assert {a["status"] for a in run["agreement"]} == {"match"}
    assert set(run["steady"]["buckets"]) == {"batch=8", "batch=32"}
    cold = run["cold"]
    assert cold["start_to_first_result_s"] > cold["import_torch_s"] > 0
    assert cold["first_call_s"] >= cold["compile"]["total_s"] > 0
    # the second cold run reused the per-run cache folder and is reported apart
    assert run["cold_cached"]["compiles"] == 1 and run["cache_saves_s"] is not None


@pytest.mark.dynamo
@pytest.mark.slow
def test_compile_counts_match_torch_and_an_independent_run(mix, reference):
    run = _run(mix)
    assert run["compile_count"] == run["torch_compilation_metrics"] == reference["compiles"] == 2


@pytest.mark.dynamo
@pytest.mark.slow
def test_steady_latency_agrees_with_a_plain_perf_counter_loop(mix):
    run = _run(mix)
    # in the bench's process, interleaved call by call: a steady-harness call, then the same bucket in
    # a bare perf_counter pair, compared round by round (load that changes between rounds cancels out;
    # two processes minutes apart swung ~3x on this shared 2-core machine, so that comparison is gone)
    plain = run["plain_loop_cross_check"]
    assert plain["rounds"] == len(plain["harness_p50_s"]) == len(plain["plain_p50_s"]) == 5
    assert 1 / 1.25 < plain["ratio"] < 1.25, plain  # measured 1.07-1.08 at load average 7
    # (program targets are checked against the program's own perf_counter loop, call by call, in
    # test_bench_options.py::test_a_module_target_times_the_calls_the_program_itself_times)
    # torch.utils.benchmark.Timer ran (last: it resets the thread pool) without recompiling: its
    # default of one thread is global state Dynamo guards, so it is given the process's own count
    assert {e["bucket"] for e in run["timer_cross_check"] if e.get("median_s")} == {"batch=8", "batch=32"}
    assert all(c["phase"] != "cross-check" for c in run["compiles"])


@pytest.mark.dynamo
@pytest.mark.slow
def test_peak_memory_agrees_with_getrusage_of_an_independent_run(mix, reference):
    ratio = _run(mix)["peak_rss_bytes"] / reference["peak_rss_bytes"]
    assert 0.75 < ratio < 1.33, ratio


@pytest.mark.dynamo
@pytest.mark.slow
def test_harness_overhead_is_measured_and_below_the_latencies_it_times(mix):
    run = _run(mix)
    assert 0 < run["harness_overhead_s"] < run["steady"]["min_s"]


@pytest.mark.dynamo
@pytest.mark.slow
def test_training_times_forward_backward_and_optimizer_apart_and_compares_parameters(tiny):
    run = _run(tiny)
    assert set(run["training"]) == {"forward", "loss", "backward", "optimizer"}
    assert run["training"]["forward"]["n"] == 3  # 6 steady calls round-robin over train, eval
    train = next(a for a in run["agreement"] if a["bucket"] == "train")
    assert train["status"] == "match" and train["training_steps"] == 2
    triggers = [c["trigger"]["kind"] for c in run["warmup"]["compiles"] if c["phase"] == "warmup"]
    assert "train-eval" in triggers


# -- the contract --------------------------------------------------------------------------------


@pytest.mark.dynamo
@pytest.mark.slow
def test_check_fails_on_a_recompile_after_warmup_and_names_its_guard(drift):
    proc, report = drift
    assert proc.returncode == 1, proc.stderr
    recompiles = _run(report)["steady"]["recompiles"]
    assert recompiles and all("CALLS" in (c["trigger"]["guard"] or "") for c in recompiles)
    assert "recompiles-after-warmup (default)" in proc.stderr and "CALLS" in proc.stderr
    assert report["contract"]["passed"] is False


@pytest.mark.dynamo
@pytest.mark.slow
def test_modes_that_cannot_run_are_listed_with_the_reason_torch_gives(drift):
    _proc, report = drift
    assert "max-autotune" in report["modes_listed"]  # asked of torch._inductor.list_mode_options()
    ro = _run(report, "reduce-overhead")
    assert ro["status"] == "unsupported" and "backend 'eager'" in ro["reason"]


@pytest.mark.dynamo
@pytest.mark.slow
def test_check_fails_on_a_blown_budget_and_passes_otherwise(mix, out_dir):
    saved = str(out_dir / "mix.json")
    (out_dir / "tight").mkdir()
    tight = out_dir / "tight" / "pyproject.toml"
    tight.write_text("[tool.tclint.bench]\nmax-variants = 1\n")
    proc = tclint("--report", saved, "--check", "--config", str(tight))
    assert proc.returncode == 1
    assert "max-variants (default): 2 against a budget of 1 (1 over)" in proc.stderr
    assert "batch=32" in proc.stderr  # why: the variant the second bucket compiled
    (out_dir / "loose").mkdir()
    loose = out_dir / "loose" / "pyproject.toml"
    loose.write_text(
        "[tool.tclint.bench]\nmax-variants = 2\nrecompiles-after-warmup = 0\ncold-start-s = 3600\n"
    )
    proc = tclint("--report", saved, "--check", "--config", str(loose))
    assert proc.returncode == 0, proc.stderr
    assert "contract: every budget holds" in proc.stdout


def test_every_budget_names_what_broke_by_how_much_and_why():
    steady_call = {"i": 9, "phase": "steady", "bucket": "b", "latency_s": 0.5, "compiles": []}
    run = {
        "mode": "default",
        "status": "ok",
        "variants": 3,
        "peak_rss_bytes": 3 * 2**30,
        "cold": {
            "start_to_first_result_s": 90.0,
            "import_torch_s": 5.0,
            "first_call_s": 80.0,
            "compile": {"total_s": 70.0},
            "peak_rss_bytes": 2**30,
        },
        "warmup": {"peak_rss_bytes": 3 * 2**30},
        "steady": {
            "p50_s": 0.1,
            "p99_over_p50": 5.0,
            "peak_rss_bytes": 3 * 2**30,
            "recompiles": [
                {
                    "call": 4,
                    "bucket": "b",
                    "function": "f",
                    "trigger": {"text": "`x` changed", "guard": "x == 1"},
                }
            ],
        },
        "eager": {"p50_s": 0.05, "speedup": 0.5},
        "compiles": [],
        "timeline": [steady_call],
    }
    budgets = bench_contract.Budgets(
        cold_start_s=60, peak_memory=2**31, max_variants=2, p99_p50_ratio=3, min_speedup=1.0
    )
    found = {v.budget: v for v in bench_contract.check({"runs": [run]}, budgets)}
    assert set(found) == set(bench_contract.BUDGET_KEYS)
    assert "guard: x == 1" in found["recompiles-after-warmup"].why
    assert found["cold-start-s"].by == "+30 s" and "compiling 70 s" in found["cold-start-s"].why
    assert "warm-up phase" in found["peak-memory"].why and found["peak-memory"].by == "+1024 MiB"
    assert "#9" in found["p99-p50-ratio"].why
    assert found["min-speedup"].by == "-0.5"
    assert bench_contract.check({"runs": [run]}, bench_contract.Budgets(recompiles_after_warmup=1)) == []


def test_unknown_bench_keys_are_configuration_errors(tmp_path):
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text("[tool.tclint.bench]\nmax-variant = 2\n")
    proc = tclint("--config", str(cfg), "buckets.py::mix")
    assert proc.returncode == 2 and "did you mean `bench.max-variants`" in proc.stderr


def test_mode_support_is_read_from_what_torch_lists():
    listed = {
        "torch": "9.9",
        "cuda": False,
        "modes": {
            "default": {},
            "reduce-overhead": {"triton.cudagraphs": True},
            "max-autotune-no-cudagraphs": {"max_autotune": True},
        },
    }
    assert bench_run.mode_support("default", listed, "inductor") is None
    assert bench_run.mode_support("max-autotune-no-cudagraphs", listed, "inductor") is None
    assert "triton.cudagraphs" in bench_run.mode_support("reduce-overhead", listed, "inductor")
    assert "does not list" in bench_run.mode_support("max-autotune", listed, "inductor")
    assert bench_run.mode_support("reduce-overhead", {**listed, "cuda": True}, "inductor") is None


# -- reports -------------------------------------------------------------------------------------


@pytest.mark.dynamo
@pytest.mark.slow
def test_json_reports_validate_against_the_documented_schema(mix, drift, tiny):
    import jsonschema

    schema = _json(SCHEMA)
    jsonschema.Draft202012Validator.check_schema(schema)
    for report in (mix, drift[1], tiny):
        jsonschema.validate(report, schema)
    broken = json.loads(json.dumps(mix))
    del broken["runs"][0]["steady"]["recompiles"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


@pytest.mark.dynamo
@pytest.mark.slow
def test_markdown_summary_has_the_mode_table_and_the_recompiles(drift):
    text = bench_render.render_markdown(drift[1])
    assert "| mode | cold start |" in text and "| reduce-overhead | unsupported:" in text
    assert "**recompile after warm-up** (default)" in text and "**Contract: 1 budget(s) broken**" in text


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.dynamo
@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="needs a headless Chromium (editors/scripts install one)")
def test_the_html_report_renders_in_a_real_browser(drift, mix, out_dir):
    for name, report in (("drift", drift[1]), ("mix", mix)):
        page = out_dir / f"{name}.html"
        page.write_text(bench_render.render_html(report), encoding="utf-8")
        assert "http://" not in page.read_text().replace('xmlns="http://www.w3.org/2000/svg"', "")
        args = [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={out_dir / 'profile'}",
        ]
        dom = subprocess.run(
            [*args, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
        ).stdout
        run = _run(report)
        assert dom.count('<circle class="call') == len(run["timeline"]), dom[:2000]
        assert '<table id="modes">' in dom and '<svg class="timeline"' in dom
        assert dom.count('class="mark recompile"') == sum(
            1 for t in run["timeline"] if t["phase"] == "steady" and t["compiles"]
        )
        assert dom.count('<figure class="dist"') == 3
        shot = out_dir / f"{name}.png"  # kept beside the reports (BENCH_SCREENSHOTS=DIR copies them out)
        subprocess.run(
            [*args, f"--screenshot={shot}", "--window-size=1000,900", page.as_uri()],
            capture_output=True,
            timeout=120,
        )
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 5000
        if os.environ.get("BENCH_SCREENSHOTS"):
            shutil.copy(shot, os.environ["BENCH_SCREENSHOTS"])
    assert 'class="mark recompile"' in (out_dir / "drift.html").read_text()


@pytest.mark.dynamo
@pytest.mark.slow
def test_bench_runs_on_the_examples_program(out_dir):
    path = str(out_dir / "serve.json")
    proc = tclint(
        "--backend",
        "eager",
        "--no-cache-run",
        "--output-format",
        "json",
        "-o",
        path,
        "serve.py",
        cwd=os.path.join(ROOT, "examples"),
    )
    assert proc.returncode == 0, proc.stderr
    report = _json(path)
    run = _run(report)
    assert report["target"] == "serve.py" and report["kind"] == "program"
    assert run["compile_count"] == run["torch_compilation_metrics"] > 0  # torch's own count
    assert {t["bucket"] for t in run["timeline"]} == {"decode_step", "score"}
    assert [t["phase"] for t in run["timeline"][:5]] == ["cold", "warmup", "warmup", "warmup", "steady"]
    # the eager run of the program made the same calls: 11 and 11 in every run here but one, which
    # made 10 at load average ~9 (serve.py samples tokens and stops at eos: a float difference between
    # two processes can flip one sample; not reproduced in 5 runs; the cause is not proven)
    assert abs(run["eager"]["n"] - run["steady"]["n"]) <= 1 and run["eager"]["n"] > 0
    out = bench_render.render_text(report)
    assert "cold    start to first result" in out and "warm-up 3 call(s) over 1 compiled callable(s)" in out
    assert "compile(s) after warm-up" in out and "`sampling` changed" in out
    assert "speedup" in out


@pytest.mark.dynamo
@pytest.mark.slow
def test_a_target_without_usable_inputs_is_a_usage_error():
    proc = tclint("--backend", "eager", "--no-cache-run", "buckets.py::undeclared")
    assert proc.returncode == 2, proc.stderr
    assert (
        "tclint bench: error: cannot synthesise inputs for undeclared: x (no annotation, no default)"
        in proc.stderr
    )


def test_a_compile_refused_at_the_recompile_limit_is_named_after_its_frame():
    """Dynamo's metrics carry no code object for the compile refused at the recompile limit; the
    report names it after the other compiles of its frame (it said `None`) and says it did not compile."""
    from tclint.runtime_probe.bench_run import _name_unnamed_frames

    named = {"compile_id": "2/7", "function": "resume_in_forward", "file": "m.py", "line": 25, "failed": None}
    refused = {"compile_id": "2/8", "function": None, "file": None, "line": None, "failed": "Unsupported"}
    other = {"compile_id": "3/0", "function": None, "file": None, "line": None, "failed": "Unsupported"}
    out = _name_unnamed_frames([named, refused, other])
    assert (
        out[1]["function"] == "resume_in_forward"
        and out[1]["line"] == 25
        and out[1]["failed"] == "Unsupported"
    )
    assert out[2]["function"] is None  # no other compile of frame 3 to name it after
