"""``tclint bench``, parent side: run the bench worker in fresh processes and build the report.

Never imports torch.  Each run is one fresh interpreter (``bench_worker.py SPEC RESULT``) in a
session of its own, marked with the probe runner's token so that :func:`runner.kill_tree` removes
everything it started when it ends or overruns its deadline.  For each compile mode:

1. a **cold** run with an empty per-run Inductor/FX cache folder (``TORCHINDUCTOR_CACHE_DIR``);
2. (unless ``cache_run`` is off) a second cold run with that folder as the first run left it, so
   the report shows what a populated compile cache buys;
3. program mode only: an eager run of the same program (``set_stance("force_eager")``) for the
   baseline; function mode measures eager in the same process on the same inputs.

The report (a plain dict, ``bench_schema.json`` documents it) is what every renderer and the
contract check read.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tclint.runtime_probe import guards
from tclint.runtime_probe.inputs import candidate_files
from tclint.runtime_probe.runner import TOKEN_VAR, kill_tree
from tclint.runtime_probe.targets import Target

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_worker.py")
SCHEMA_VERSION = 1
# marks a per-mode compile cache folder as the bench's own (a standard Cache Directory Tag): only such a
# folder is emptied before a cold run, so ``--cache-dir DIR`` never deletes a folder the user made
CACHE_TAG = "CACHEDIR.TAG"
CACHE_TAG_TEXT = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# A torch compile cache made by `tclint bench` (emptied before each cold run).\n"
)


@dataclass
class BenchOptions:
    python: str | None = None
    backend: str = "inductor"
    modes: list[str] = field(default_factory=lambda: ["default"])
    iterations: int = 50
    seconds: float | None = None
    warmup_calls: int = 3  # program mode: the first N calls after the first are the warm-up
    train_steps: int = 2
    timeout: float = 600.0
    cache_run: bool = True
    device: str = "auto"
    inputs: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    fullgraph: bool | None = None
    dynamo: dict[str, Any] = field(default_factory=dict)
    cwd: str | None = None


class BenchError(Exception):
    """A run that could not produce a result (the message says why)."""


class BenchInputsError(BenchError):
    """The target has no usable inputs (declare them in a probe-inputs file): a usage error."""


class BenchCacheDirError(BenchError):
    """``--cache-dir`` names a folder the bench did not create (it would have to empty it): a usage error."""


def fresh_cache(folder: str, own: bool) -> None:
    """Make ``folder`` an empty compile cache for a cold run.

    The bench's own temporary root is emptied freely; in a user's ``--cache-dir`` only a folder that
    carries the bench's tag (or an empty or missing one) is emptied, anything else is refused."""
    if not own and os.path.lexists(folder):
        tag = os.path.join(folder, CACHE_TAG)
        try:
            with open(tag, encoding="utf-8") as fh:
                mine = fh.read() == CACHE_TAG_TEXT
        except OSError:
            mine = False
        if os.path.islink(folder) or not os.path.isdir(folder) or (not mine and os.listdir(folder)):
            raise BenchCacheDirError(
                f"{folder} exists and was not made by tclint bench: it would be emptied "
                "before the cold run; give --cache-dir a new or empty folder"
            )
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, CACHE_TAG), "w", encoding="utf-8") as fh:
        fh.write(CACHE_TAG_TEXT)


# ---------------------------------------------------------------------------------------------
# one process


def run_worker(
    args: list[str], env: dict[str, str], timeout: float, cwd: str | None = None
) -> tuple[int, str, float]:
    """Run the bench worker; (returncode, stderr tail, wall seconds).  Kills its whole tree at the
    deadline and after it ends."""
    token = secrets.token_hex(12)
    full_env = {**os.environ, **env, TOKEN_VAR: token, "PYTHONUNBUFFERED": "1", "PYTHONBREAKPOINT": "0"}
    full_env.pop("PYTHONSTARTUP", None)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=full_env,
        cwd=cwd,
        start_new_session=True,
    )
    try:
        _, err = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        _, err = proc.communicate()
        code = -signal.SIGKILL
    finally:
        kill_tree(token, proc.pid)
    return code, (err or b"").decode("utf-8", "replace")[-4000:], time.perf_counter() - t0


def ask_modes(python: str | None, timeout: float = 300.0) -> dict[str, Any]:
    """``torch._inductor.list_mode_options()`` of the user's torch, and whether it sees CUDA."""
    with tempfile.TemporaryDirectory(prefix="tclint-bench-") as tmp:
        out = os.path.join(tmp, "modes.json")
        code, err, _ = run_worker([python or sys.executable, WORKER, "--list-modes", out], {}, timeout)
        if not os.path.isfile(out):
            raise BenchError(f"could not ask torch for its compile modes (exit {code}): {err.strip()[-600:]}")
        with open(out, encoding="utf-8") as fh:
            return json.load(fh)


def mode_support(name: str, listed: dict[str, Any], backend: str) -> str | None:
    """Why ``name`` cannot run here (None: it can), from what torch itself reports."""
    modes = listed.get("modes") or {}
    if name not in modes:
        known = ", ".join(sorted(modes)) or "none"
        return f"torch {listed.get('torch', '?')} does not list this mode (list_mode_options(): {known})"
    if name != "default" and backend != "inductor":
        return f"modes are Inductor options; backend {backend!r} ignores them"
    needs_cuda = [k for k, v in (modes[name] or {}).items() if "cudagraphs" in k and v]
    if needs_cuda and not listed.get("cuda"):
        return f"its options ({', '.join(needs_cuda)}) need a CUDA device and torch sees none"
    return None


def _spec(
    target: Target | None,
    program: dict[str, Any] | None,
    options: BenchOptions,
    mode: str,
    side: str = "compiled",
) -> dict[str, Any]:
    compile_options: dict[str, Any] = {
        "mode": None if mode == "default" else mode,
        "fullgraph": options.fullgraph,
    }
    spec: dict[str, Any] = {
        "backend": options.backend,
        "compile_options": compile_options,
        "iterations": options.iterations,
        "seconds": options.seconds,
        "warmup_calls": options.warmup_calls,
        "train_steps": options.train_steps,
        "device": options.device,
        "dynamo_config": dict(options.dynamo),
        "side": side,
        "cwd": os.path.abspath(options.cwd) if options.cwd else None,
    }
    if target is not None:
        spec["kind"] = "function"
        spec["function"] = {
            "file": target.file,
            "module": target.module,
            "import_root": target.import_root,
            "qualname": target.qualname,
            "inputs_files": candidate_files(target.file, options.inputs),
        }
    else:
        spec["kind"] = "program"
        spec["program"] = program
        spec["backend_override"] = True
        spec["cwd"] = spec["cwd"] or os.getcwd()
    return spec


def run_once(spec: dict[str, Any], options: BenchOptions, cache_dir: str) -> dict[str, Any]:
    """One fresh process: the worker's result plus the parent's wall clock of it."""
    with tempfile.TemporaryDirectory(prefix="tclint-bench-") as tmp:
        spec_path, out_path = os.path.join(tmp, "spec.json"), os.path.join(tmp, "result.json")
        with open(spec_path, "w", encoding="utf-8") as fh:
            json.dump(spec, fh)
        env = {
            **options.env,
            "TORCHINDUCTOR_CACHE_DIR": cache_dir,
            "TRITON_CACHE_DIR": os.path.join(cache_dir, "triton"),
            "TORCHINDUCTOR_FX_GRAPH_CACHE": "1",
            "TORCHINDUCTOR_AUTOGRAD_CACHE": "1",
        }
        spawn_wall = time.time()
        code, err, wall = run_worker(
            [options.python or sys.executable, WORKER, spec_path, out_path],
            env,
            options.timeout,
            cwd=spec.get("cwd"),
        )
        if not os.path.isfile(out_path):
            why = "timed out" if code == -signal.SIGKILL else f"exit status {code}"
            raise BenchError(f"the bench process ended without a result ({why}): {err.strip()[-1500:]}")
        with open(out_path, encoding="utf-8") as fh:
            result = json.load(fh)
    result["spawn_wall"] = spawn_wall
    result["process_wall_s"] = wall
    result["stderr_tail"] = err[-2000:]
    return result


# ---------------------------------------------------------------------------------------------
# the report


def percentiles(values: list[float]) -> dict[str, Any]:
    """Nearest-rank p50/p95/p99 (each a latency that was really measured), mean, min, max."""
    if not values:
        return {
            "n": 0,
            "p50_s": None,
            "p95_s": None,
            "p99_s": None,
            "mean_s": None,
            "min_s": None,
            "max_s": None,
        }
    s = sorted(values)

    def q(p: float) -> float:
        import math

        return s[max(0, min(len(s) - 1, math.ceil(p / 100.0 * len(s)) - 1))]

    return {
        "n": len(s),
        "p50_s": q(50),
        "p95_s": q(95),
        "p99_s": q(99),
        "mean_s": sum(s) / len(s),
        "min_s": s[0],
        "max_s": s[-1],
    }


def _trigger(rec: dict[str, Any]) -> dict[str, Any]:
    """What made this compile happen, as the probe explains a recompile."""
    recompile = rec.get("recompile")
    if not recompile:
        return {"kind": "first", "text": "first compile of this code", "guard": None}
    try:
        explained = guards.explain(recompile, rec.get("co_filename"))
    except Exception:  # the explanation is a courtesy: Dynamo's own words are kept regardless
        explained = None
    guard = recompile.get("guard") or recompile.get("text")
    return {
        "kind": (explained or {}).get("kind", "other"),
        "text": (explained or {}).get("text") or guard,
        "guard": guard,
    }


def _compile_entry(rec: dict[str, Any]) -> dict[str, Any]:
    return {
        "compile_id": rec.get("compile_id"),
        "phase": rec.get("phase"),
        "call": rec.get("call"),
        "bucket": rec.get("bucket"),
        "function": rec.get("co_name"),
        "file": rec.get("co_filename"),
        "line": rec.get("co_firstlineno"),
        "graphs": rec.get("graphs") or 0,
        "produced_code": bool(rec.get("has_guarded_code")),
        "seconds": rec.get("entire_frame_compile_time_s"),
        "failed": rec.get("fail_type"),
        "trigger": _trigger(rec),
        "cudagraph_skip_reason": rec.get("cudagraph_skip_reason"),
    }


def _name_unnamed_frames(compiles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Dynamo's metrics leave the code object out of a compile that failed before tracing (the one
    refused at the recompile limit: ``Unsupported``, no code produced), so reports said ``None``.
    Such an entry takes the function, file and line of the other compiles of its frame (the
    ``F`` of compile id ``F/N``); ``failed`` still says that it did not compile."""
    named: dict[str, dict[str, Any]] = {}
    for c in compiles:
        frame = str(c.get("compile_id") or "").partition("/")[0]
        if c.get("function") and frame and frame not in named:
            named[frame] = c
    for c in compiles:
        frame = str(c.get("compile_id") or "").partition("/")[0]
        if c.get("function") is None and frame in named:
            for key in ("function", "file", "line"):
                c[key] = named[frame][key]
    return compiles


def _split(records: list[dict[str, Any]]) -> dict[str, Any]:
    def total(key: str, scale: float = 1.0) -> float | None:
        vals: list[float] = [r[key] for r in records if isinstance(r.get(key), (int, float))]
        return round(sum(vals) * scale, 6) if vals else None

    return {
        "total_s": total("entire_frame_compile_time_s"),
        "dynamo_s": total("dynamo_cumulative_compile_time_us", 1e-6),
        "aot_autograd_s": total("aot_autograd_cumulative_compile_time_us", 1e-6),
        "inductor_s": total("inductor_cumulative_compile_time_us", 1e-6),
        "backend_s": total("backend_compile_time_s"),
        "fx_graph_cache_hits": total("inductor_fx_local_cache_hit_count"),
        "fx_graph_cache_misses": total("inductor_fx_local_cache_miss_count"),
    }


def _cold(result: dict[str, Any]) -> dict[str, Any]:
    cold = result.get("cold") or {}
    records = [r for r in result.get("compiles", []) if r.get("phase") == "cold"]
    end = cold.get("first_call_end_wall")
    return {
        "start_to_first_result_s": (end - result["spawn_wall"]) if end else None,
        "import_torch_s": result.get("import_torch_s"),
        "first_call_s": cold.get("first_call_s"),
        "compile": _split(records),
        "compiles": len(records),
        "graphs": sum(r.get("graphs") or 0 for r in records),
        "breaks": len(result.get("breaks") or []),
        "peak_rss_bytes": cold.get("peak_rss_bytes"),
        "peak_device_bytes": cold.get("peak_device_bytes"),
        "process_wall_s": result.get("process_wall_s"),
    }


def _latencies(timeline: list[dict[str, Any]], phase: str) -> list[float]:
    return [t["latency_s"] for t in timeline if t["phase"] == phase]


def summarise(
    result: dict[str, Any], cached: dict[str, Any] | None, eager_prog: dict[str, Any] | None, mode: str
) -> dict[str, Any]:
    """One mode's section of the report from its worker results."""
    timeline = result.get("timeline") or []
    compiles = _name_unnamed_frames([_compile_entry(r) for r in result.get("compiles") or []])
    steady_lat = _latencies(timeline, "steady")
    steady = percentiles(steady_lat)
    meta = result.get("steady_meta") or {}
    steady["seconds"] = meta.get("seconds")
    steady["throughput_per_s"] = (
        (len(steady_lat) / sum(steady_lat)) if steady_lat and sum(steady_lat) > 0 else None
    )
    steady["p99_over_p50"] = (steady["p99_s"] / steady["p50_s"]) if steady["p50_s"] else None
    steady["peak_rss_bytes"] = meta.get("peak_rss_bytes")
    steady["peak_device_bytes"] = meta.get("peak_device_bytes")
    buckets: dict[str, list[float]] = {}
    for t in timeline:
        if t["phase"] == "steady":
            buckets.setdefault(t["bucket"], []).append(t["latency_s"])
    steady["buckets"] = {b: percentiles(v) for b, v in buckets.items()}
    # every compile after warm-up: recompiles, and first compiles of code the warm-up never reached
    steady["recompiles"] = sorted(
        (c for c in compiles if c["phase"] == "steady"), key=lambda c: c["call"] or 0
    )
    parts: dict[str, list[float]] = {}
    for t in timeline:
        if t["phase"] == "steady":
            for k, v in (t.get("parts") or {}).items():
                parts.setdefault(k, []).append(v)
    training = {k: percentiles(v) for k, v in parts.items()} if parts else None
    # eager baseline
    if eager_prog is not None:
        eager_lat = _latencies(eager_prog.get("timeline") or [], "steady")
    else:
        eager_lat = [e["latency_s"] for e in result.get("eager") or []]
    eager = percentiles(eager_lat)
    speedup = (eager["p50_s"] / steady["p50_s"]) if eager["p50_s"] and steady["p50_s"] else None
    warm_compiles = [c for c in compiles if c["phase"] in ("cold", "warmup")]
    warmup = {
        "buckets": (result.get("inputs") or {}).get("buckets")
        or sorted({t["bucket"] for t in timeline if t["phase"] == "warmup"}),
        "calls": sum(1 for t in timeline if t["phase"] == "warmup"),
        "seconds": (result.get("warmup") or {}).get("seconds"),
        "variants": sum(1 for c in warm_compiles if c["produced_code"]),
        "compiles": warm_compiles,
        "peak_rss_bytes": (result.get("warmup") or {}).get("peak_rss_bytes"),
    }
    section: dict[str, Any] = {
        "mode": mode,
        "status": "ok",
        "cold": _cold(result),
        "warmup": warmup,
        "steady": steady,
        "eager": {**eager, "speedup": speedup},
        "agreement": result.get("agreement"),
        "training": training,
        "timer_cross_check": result.get("timer"),
        "plain_loop_cross_check": result.get("plain_loop"),
        "harness_overhead_s": result.get("harness_overhead_s"),
        "call_overhead_s": result.get("call_overhead_s"),
        "peak_rss_bytes": result.get("peak_rss_bytes"),
        "compiles": compiles,
        "compile_count": len(compiles),
        "torch_compilation_metrics": result.get("torch_compilation_metrics"),
        "variants": sum(1 for c in compiles if c["produced_code"]),
        "breaks": [
            {
                "reason": b.get("reason"),
                "gb_type": b.get("gb_type"),
                "where": (b.get("stack") or [{}])[-1] if b.get("stack") else None,
            }
            for b in result.get("breaks") or []
        ],
        "timeline": [
            {
                "i": t["i"],
                "phase": t["phase"],
                "bucket": t["bucket"],
                "latency_s": t["latency_s"],
                "compiles": t.get("compiles") or [],
            }
            for t in timeline
        ],
        "compile_times": result.get("compile_times"),
        "cuda": bool(result.get("cuda")),
        "torch": result.get("torch"),
        "cuda_available": result.get("cuda_available"),
        "exit_code": result.get("exit_code"),
    }
    if cached is not None:
        c = _cold(cached)
        section["cold_cached"] = c
        a, b = section["cold"]["start_to_first_result_s"], c["start_to_first_result_s"]
        section["cache_saves_s"] = (a - b) if a is not None and b is not None else None
    return section


def _program_display(program: dict[str, Any] | None) -> str:
    """``-m pkg.mod`` or the script's path, relative to the current folder when it is below it."""
    if not program:
        return ""
    if program["kind"] == "module":
        return f"-m {program['target']}"
    rel = os.path.relpath(program["target"])
    return program["target"] if rel.startswith("..") else rel


def bench(
    target: Target | None,
    program: dict[str, Any] | None,
    options: BenchOptions,
    progress: Callable[[str], None] | None = None,
    cache_dir: str | None = None,
) -> dict[str, Any]:
    """Run every requested mode; the whole report."""
    say = progress or (lambda _m: None)
    if any(m != "default" for m in options.modes):
        say("asking torch which compile modes it supports")
        listed = ask_modes(options.python)
    else:  # the default mode always exists: no process spent asking
        listed = {"modes": {"default": {}}, "cuda": None, "torch": None, "not_asked": True}
    own_cache = cache_dir is None
    root = cache_dir or tempfile.mkdtemp(prefix="tclint-bench-cache-")
    runs = []
    try:
        for mode in options.modes:
            why = mode_support(mode, listed, options.backend)
            if why is not None:
                runs.append({"mode": mode, "status": "unsupported", "reason": why})
                continue
            cache = os.path.join(root, mode)
            fresh_cache(cache, own_cache)
            try:
                say(f"{mode}: cold run (fresh process, empty compile cache)")
                first = run_once(_spec(target, program, options, mode), options, cache)
                if first.get("status") == "inputs-error":
                    raise BenchInputsError(first.get("error") or "the target's inputs could not be built")
                if first.get("status") != "ok":
                    runs.append(
                        {
                            "mode": mode,
                            "status": "error",
                            "reason": first.get("error"),  # type: ignore[dict-item]  # JSON values
                            "traceback": first.get("traceback"),  # type: ignore[dict-item]
                            "torch": first.get("torch"),  # type: ignore[dict-item]
                            "cuda_available": first.get("cuda_available"),  # type: ignore[dict-item]
                        }
                    )
                    continue
                cached = None
                if options.cache_run:
                    say(f"{mode}: cold run with the compile cache the first run populated")
                    cached = run_once(_spec(target, program, options, mode), options, cache)
                    if cached.get("status") != "ok":
                        cached = None
                eager_prog = None
                if program is not None:
                    say(f"{mode}: eager run of the program (baseline)")
                    eager_prog = run_once(_spec(target, program, options, mode, side="eager"), options, cache)
                    if eager_prog.get("status") != "ok":
                        eager_prog = None
                runs.append(summarise(first, cached, eager_prog, mode))
            except (BenchInputsError, BenchCacheDirError):
                raise
            except BenchError as exc:
                runs.append({"mode": mode, "status": "error", "reason": str(exc)})
    finally:
        if own_cache:
            shutil.rmtree(root, ignore_errors=True)
    for run in runs:  # a run knows its torch when nothing asked (a failed one too)
        if run.get("torch") and listed.get("torch") is None:
            listed["torch"], listed["cuda"] = run.get("torch"), run.get("cuda_available")
    what = (
        target.display
        if target is not None
        else " ".join([_program_display(program), *(program or {}).get("argv", [])])
    )
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": "tclint bench",
        "target": what,
        "kind": "function" if target is not None else "program",
        "backend": options.backend,
        "torch": listed.get("torch"),
        "cuda_available": bool(listed.get("cuda")),
        "python": options.python or sys.executable,
        "created_unix": time.time(),
        "protocol": {
            "iterations": options.iterations,
            "seconds": options.seconds,
            "warmup_calls": options.warmup_calls if target is None else None,
            "train_steps": options.train_steps,
            "cache_run": options.cache_run,
            "cache_dir": None if own_cache else root,
        },
        "modes_listed": None if listed.get("not_asked") else sorted((listed.get("modes") or {}).keys()),
        "runs": runs,
    }
