"""``tclint bench`` options as a user runs them: a scratch project outside the repository, the real CLI.

Each test fails when the option it is about is ignored.  Backend ``eager`` keeps every run to one
``import torch`` plus a Dynamo trace; no test asserts an absolute time."""

from __future__ import annotations

import json
import os
import statistics

import pytest
from tclint.runtime_probe import bench_contract, bench_render, bench_run

from tests.helpers.benchutil import tclint

SCHEMA = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "runtime_probe",
    "bench_schema.json",
)

MODEL = """
import torch

def mlp(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ w).sum(-1)

def leaky(x: torch.Tensor) -> torch.Tensor:
    if x.sum() > 0:  # data-dependent branch: a graph break, an error under fullgraph=True
        x = x + 1
    return x * 2
"""

INPUTS = """
import torch

def inputs_mlp():
    for b in (4, 16, 64):
        yield {"args": (torch.randn(b, 32), torch.randn(32, 32)), "label": f"b{b}"}

def inputs_leaky():
    yield {"args": (torch.ones(3),), "label": "pos"}
"""

# a program that times its own calls of the compiled function with a plain perf_counter loop and records,
# from inside the same process, torch's compile count and getrusage: independent of tclint's code
SERVE = """
import json, resource, sys, time
import torch
from torch._dynamo.utils import get_compilation_metrics

def work(x):
    return torch.tanh(x @ x).sum()

f = torch.compile(work)
out, n = sys.argv[1], int(sys.argv[2])
x = torch.randn(192, 192)
own = []
for _ in range(n):
    t0 = time.perf_counter()
    f(x)
    own.append(time.perf_counter() - t0)
with open(out, "a") as fh:
    fh.write(json.dumps({"own": own, "compiles": len(get_compilation_metrics()),
                         "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}) + "\\n")
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("scratch")
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text(MODEL)
    (pkg / "model_probe_inputs.py").write_text(INPUTS)
    (pkg / "serve.py").write_text(SERVE)
    (root / "pyproject.toml").write_text("[project]\nname = 'scratch'\n")
    return root


def _json(path) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _validate(report: dict) -> None:
    import jsonschema

    jsonschema.validate(report, _json(SCHEMA))


@pytest.mark.dynamo
@pytest.mark.slow
def test_seconds_ends_the_steady_state_and_modes_are_those_torch_lists(project):
    """--seconds stops a steady state that --iterations alone would make last for hours; every declared
    bucket of a function target is warmed and measured; --modes runs what torch lists and reports the rest."""
    import torch._inductor

    out = project / "seconds.json"
    proc = tclint(
        "--backend",
        "eager",
        "--no-cache-run",
        "--iterations",
        "10000000",
        "--seconds",
        "0.3",
        "--modes",
        "default,lite,no-such-mode",
        "--output-format",
        "json",
        "-o",
        str(out),
        "pkg/model.py::mlp",
        cwd=str(project),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    report = _json(out)
    _validate(report)
    run = next(r for r in report["runs"] if r["mode"] == "default")
    assert report["protocol"]["seconds"] == 0.3
    assert 0 < run["steady"]["n"] < 10_000_000 and 0.3 <= run["steady"]["seconds"] < 3
    assert run["warmup"]["buckets"] == ["b4", "b16", "b64"] and set(run["steady"]["buckets"]) == {
        "b4",
        "b16",
        "b64",
    }
    assert report["modes_listed"] == sorted(torch._inductor.list_mode_options())
    table = bench_render.render_text(report).splitlines()
    head = next(i for i, line in enumerate(table) if line.startswith("mode ") and "cold start" in line)
    rows = table[head : head + 4]
    assert len({line.index(line.split()[1]) for line in rows}) == 1, (
        rows
    )  # the table's second column lines up
    reasons = {r["mode"]: r.get("reason") for r in report["runs"] if r["status"] != "ok"}
    assert "backend 'eager'" in reasons["lite"]
    assert "does not list this mode" in reasons["no-such-mode"] and "max-autotune" in reasons["no-such-mode"]


@pytest.mark.dynamo
@pytest.mark.slow
def test_fullgraph_is_passed_to_torch_compile(project):
    proc = tclint(
        "--backend",
        "eager",
        "--no-cache-run",
        "--iterations",
        "3",
        "--fullgraph",
        "--check",
        "pkg/model.py::leaky",
        cwd=str(project),
        timeout=300,
    )
    assert proc.returncode == 1
    assert "mode default: error: Unsupported: Data-dependent branching" in proc.stdout
    assert "contract: not checked (no mode was measured)" in proc.stdout  # not "every budget holds"
    assert "torch 2." in proc.stdout.splitlines()[0]  # the failed run still says which torch it ran


@pytest.mark.dynamo
@pytest.mark.slow
def test_cache_dir_is_used_and_a_folder_tclint_did_not_make_is_never_emptied(project):
    cache = project / "bench-cache"
    out = project / "cache.json"
    proc = tclint(
        "--backend",
        "eager",
        "--iterations",
        "3",
        "--cache-dir",
        str(cache),
        "--output-format",
        "json",
        "-o",
        str(out),
        "pkg/model.py::mlp",
        cwd=str(project),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    report = _json(out)
    _validate(report)
    assert report["protocol"]["cache_dir"] == str(cache)
    assert (cache / "default" / bench_run.CACHE_TAG).read_text() == bench_run.CACHE_TAG_TEXT
    assert next(r for r in report["runs"] if r["mode"] == "default")["cold_cached"]["compiles"] >= 1
    mine = project / "mine" / "default"
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("precious")
    proc = tclint(
        "--backend",
        "eager",
        "--iterations",
        "3",
        "--cache-dir",
        str(project / "mine"),
        "pkg/model.py::mlp",
        cwd=str(project),
        timeout=300,
    )
    assert proc.returncode == 2 and "was not made by tclint bench" in proc.stderr
    assert (mine / "notes.txt").read_text() == "precious"


def test_fresh_cache_empties_only_its_own_folders(tmp_path):
    own = tmp_path / "own"
    bench_run.fresh_cache(str(own), own=False)  # missing: made and tagged
    (own / "fxgraph").mkdir()
    bench_run.fresh_cache(str(own), own=False)  # tagged: emptied
    assert sorted(os.listdir(own)) == [bench_run.CACHE_TAG]
    (tmp_path / "empty").mkdir()
    bench_run.fresh_cache(str(tmp_path / "empty"), own=False)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "x").write_text("1")
    with pytest.raises(bench_run.BenchCacheDirError):
        bench_run.fresh_cache(str(foreign), own=False)
    link = tmp_path / "link"
    link.symlink_to(own)
    with pytest.raises(bench_run.BenchCacheDirError):
        bench_run.fresh_cache(str(link), own=False)
    assert (foreign / "x").read_text() == "1" and (own / bench_run.CACHE_TAG).exists()


def test_a_contract_with_no_measured_mode_is_not_reported_as_holding():
    report = {
        "target": "t",
        "backend": "eager",
        "runs": [{"mode": "default", "status": "error", "reason": "boom"}],
    }
    bench_contract.attach(report, bench_contract.Budgets(), [])
    assert report["contract"]["passed"] is False and report["contract"]["checked"] == []
    assert "contract: not checked" in bench_render.render_text(report)
    assert "**Contract: not checked**" in bench_render.render_markdown(report)
    assert "every budget holds" not in bench_render.render_html(report)


@pytest.mark.dynamo
@pytest.mark.slow
def test_project_budgets_gate_the_run_and_the_markdown_summary_says_why(project, tmp_path):
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'scratch'\n\n[tool.tclint.bench]\n"
        "iterations = 5\nmax-variants = 1\ncache-run = false\n"
    )
    try:
        out = tmp_path / "budget.json"
        proc = tclint(
            "--backend",
            "eager",
            "--check",
            "--output-format",
            "json",
            "-o",
            str(out),
            "pkg/model.py::mlp",
            cwd=str(project),
            timeout=300,
        )
    finally:
        (project / "pyproject.toml").write_text("[project]\nname = 'scratch'\n")
    assert proc.returncode == 1
    assert (
        "max-variants (default): 2 against a budget of 1 (1 over)" in proc.stderr and "'b16'" in proc.stderr
    )
    report = _json(out)
    _validate(report)
    assert report["protocol"]["iterations"] == 5 and report["protocol"]["cache_run"] is False
    md = tclint("--report", str(out), "--output-format", "markdown", cwd=str(tmp_path)).stdout
    assert "| mode | cold start |" in md and "| default |" in md
    assert "**Contract: 1 budget(s) broken**" in md and "max-variants (default)" in md


@pytest.mark.dynamo
@pytest.mark.slow
def test_a_module_target_times_the_calls_the_program_itself_times(project, tmp_path):
    """-m MODULE ARGS: the program's own perf_counter around each call of its compiled function encloses
    the bench's timing of that call (same process, same calls); torch's compile count and getrusage
    read by the program agree with the report."""
    own_file = tmp_path / "own.jsonl"
    out = tmp_path / "serve.json"
    proc = tclint(
        "--backend",
        "eager",
        "--no-cache-run",
        "--seconds",
        "5",
        "--output-format",
        "json",
        "-o",
        str(out),
        "-m",
        "pkg.serve",
        str(own_file),
        "40",
        cwd=str(project),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "--seconds applies to FILE.py::TARGET benchmarks" in proc.stderr  # not silently dropped
    report = _json(out)
    _validate(report)
    assert report["target"] == f"-m pkg.serve {own_file} 40" and report["kind"] == "program"
    compiled, eager = [json.loads(line) for line in own_file.read_text().splitlines()]
    run = report["runs"][0]
    bench = [t["latency_s"] for t in run["timeline"]]
    assert len(bench) == len(compiled["own"]) == 40
    assert all(
        b <= o for b, o in zip(bench, compiled["own"], strict=True)
    )  # nested inside the program's timing
    steady = [
        (b, o)
        for b, o, t in zip(bench, compiled["own"], run["timeline"], strict=True)
        if t["phase"] == "steady"
    ]
    ratio = statistics.median(b for b, _ in steady) / statistics.median(o for _, o in steady)
    assert 0.7 < ratio <= 1.0, ratio  # what the program saw, less the bench's own bookkeeping per call
    # that bookkeeping is reported: the program's clock sees at least it on every call (so the
    # median gap is at least its median), and not much more (measured 1.16x: the wrapper's own frame)
    gaps = [o - b for b, o in zip(bench, compiled["own"], strict=True)]
    assert 1.0 <= statistics.median(gaps) / run["call_overhead_s"] < 2.0, (
        statistics.median(gaps),
        run["call_overhead_s"],
    )
    assert run["compile_count"] == run["torch_compilation_metrics"] == compiled["compiles"] >= 1
    assert (
        eager["compiles"] == 0 and run["eager"]["n"] == run["steady"]["n"]
    )  # the baseline ran the program eagerly
    assert 0.9 < run["peak_rss_bytes"] / compiled["rss"] < 1.1
