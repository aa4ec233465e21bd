"""The bench worker: one fresh process per run, standard library and torch only.

Started by file path (``python .../runtime_probe/bench_worker.py SPEC.json RESULT.json``) so it runs
where tclint is not installed, exactly as ``worker.py`` does; it loads the probe's worker-side
siblings (``worker_inputs``, ``worker_exec``, ``worker_compare``, ``worker_capture``) under the same
private package name and reuses them: the same targets, the same declared inputs and ``mode``, the
same compile capture (every compile with its recompile reason), the same eager/compiled comparison.

``bench_run.py`` (the parent) documents the spec and the result.  The phases of one run:

* **cold**: the first compiled call of this fresh process, end to end (wall time from process start is
  measured by the parent), with the compile time split as torch reports it in
  ``get_compilation_metrics()`` (Dynamo, AOT autograd, Inductor) and ``compile_times()``;
* **warm-up**: every declared bucket once (function mode), or the program's first N calls of
  compiled code (program mode): each compile with the bucket that triggered it and its guard;
* **steady**: per-call latency, inputs made before the timed region, device synchronised at both
  boundaries, every compile after warm-up recorded with the call that triggered it;
* the eager baseline on the same inputs (same protocol), eager/compiled agreement (the probe's
  comparison; training: gradients and parameters after optimizer steps), and, for buckets in
  ``mode="train"`` with a declared ``loss_<target>``, forward / backward / optimizer step timed apart.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
import json
import os
import resource
import runpy
import statistics
import sys
import time
import traceback
import types
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
T_PROCESS = time.time()  # as early as this script can see: the parent adds interpreter start-up


def _load_siblings() -> dict[str, Any]:
    pkg = types.ModuleType("_tclint_probe")
    pkg.__path__ = [HERE]  # type: ignore[attr-defined]
    sys.modules.setdefault("_tclint_probe", pkg)
    return {
        name: importlib.import_module(f"_tclint_probe.{name}")
        for name in ("worker_capture", "worker_inputs", "worker_compare", "worker_exec")
    }


def peak_rss() -> int:
    """This process's peak resident set size in bytes (``getrusage``; Linux reports KiB)."""
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(kib) * (1 if sys.platform == "darwin" else 1024)


class Clock:
    """perf_counter timing with device synchronisation at both boundaries.

    On CUDA (when the run uses it) ``torch.cuda.synchronize()`` is called before the start and
    before the stop, so queued kernels of earlier calls are not billed to this one and this call's
    kernels are.  Unverified on a GPU in this repository's CI (no device there)."""

    def __init__(self, torch: Any, cuda: bool | None) -> None:
        self.torch = torch
        self.cuda = cuda  # None: decide per call (a program initialises CUDA whenever it likes)

    def sync(self) -> None:
        if self.cuda or (self.cuda is None and self.torch.cuda.is_initialized()):
            self.torch.cuda.synchronize()

    def time(self, fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
        self.sync()
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        self.sync()
        return out, time.perf_counter() - t0


EXTRA_FIELDS = (
    "dynamo_cumulative_compile_time_us", "aot_autograd_cumulative_compile_time_us",
    "inductor_cumulative_compile_time_us", "inductor_fx_local_cache_hit_count",
    "inductor_fx_local_cache_miss_count", "aotautograd_local_cache_hit_count", "cudagraph_skip_reason",
)  # fmt: skip


class Recorder:
    """Compiles as the probe's capture sees them, tagged with the phase and call that triggered them."""

    def __init__(self, cap: Any) -> None:
        self.cap = cap
        self.events: list[dict[str, Any]] = []
        self.capture = cap.Capture(self.events.append)
        self.tagged: dict[str, dict[str, Any]] = {}

    def known(self) -> int:
        """How many compiles the capture holds (it only adds, in the order they happen): O(1) per
        timed call, where a set of every id cost ~25 us per call on examples/serve.py."""
        return len(self.capture.compiles)

    def tag_new(self, before: int, phase: str, call: int, bucket: str) -> list[str]:
        if len(self.capture.compiles) <= before:
            return []
        new = sorted(list(self.capture.compiles)[before:], key=self.cap._compile_sort_key)
        for cid in new:
            self.tagged.setdefault(cid, {"phase": phase, "call": call, "bucket": bucket})
        return new

    def compiles(self) -> list[dict[str, Any]]:
        """Every compile: the authoritative ``get_compilation_metrics()`` records, phase-tagged."""
        import torch._dynamo.utils as du

        summary = self.capture.summary()
        by_id = {str(r["compile_id"]): r for r in summary["compiles"]}
        extra = {str(m.compile_id): m for m in du.get_compilation_metrics()}
        out = []
        for cid, rec in by_id.items():
            m = extra.get(cid)
            for key in EXTRA_FIELDS:
                rec[key] = getattr(m, key, None) if m is not None else None
            rec.update(self.tagged.get(cid, {"phase": "unknown", "call": None, "bucket": None}))
            out.append(rec)
        return out

    def breaks(self) -> list[dict[str, Any]]:
        return list(self.capture.breaks)


def harness_overhead(clock: Clock, n: int = 200) -> float:
    """Median seconds the timing harness itself adds per call (an empty callable, same loop)."""
    samples = [clock.time(lambda: None)[1] for _ in range(n)]
    return statistics.median(samples)


# ---------------------------------------------------------------------------------------------
# function mode


def _train_hooks(inp: Any, paths: list[str], qualname: str) -> tuple[Any, Any]:
    """``loss_<target>(output, *args, **kwargs)`` and ``optimizer_<target>(model)`` from the inputs file."""
    key = inp.function_key(qualname)
    cls = qualname.split(".")[0]
    for path in inp.existing(paths):
        module = inp.load_inputs_module(path)
        loss = getattr(module, f"loss_{key}", None) or getattr(module, f"loss_{cls}", None)
        if loss is not None:
            opt = getattr(module, f"optimizer_{key}", None) or getattr(module, f"optimizer_{cls}", None)
            return loss, opt
    return None, None


class Side:
    """One side (compiled or eager) of a function target: how to call it, train it, time it."""

    def __init__(self, torch: Any, fn: Any, module: Any, loss_fn: Any, opt_fn: Any, clock: Clock) -> None:
        self.torch = torch
        self.fn = fn
        self.module = module
        self.loss_fn = loss_fn
        self.opt = opt_fn(module) if (opt_fn is not None and module is not None) else None
        if loss_fn is not None and self.opt is None and module is not None:
            self.opt = torch.optim.SGD(module.parameters(), lr=1e-3)
        self.clock = clock

    def set_mode(self, mode: str | None) -> None:
        if mode is not None and self.module is not None and hasattr(self.module, "train"):
            self.module.train(mode == "train")

    def trains(self, call: Any) -> bool:
        return self.loss_fn is not None and self.module is not None and call.mode == "train"

    def step(self, call: Any, args: tuple, kwargs: dict) -> dict[str, float]:
        """One call, timed: ``total`` (and ``forward`` / ``backward`` / ``optimizer`` when training)."""
        self.set_mode(call.mode)
        if not self.trains(call):
            _, dt = self.clock.time(self.fn, *args, **kwargs)
            return {"total": dt}
        assert self.opt is not None
        self.opt.zero_grad(set_to_none=True)  # outside the timed region
        out, t_fwd = self.clock.time(self.fn, *args, **kwargs)
        loss, t_loss = self.clock.time(self.loss_fn, out, *args, **kwargs)
        _, t_bwd = self.clock.time(loss.backward)
        _, t_opt = self.clock.time(self.opt.step)
        return {
            "total": t_fwd + t_loss + t_bwd + t_opt,
            "forward": t_fwd,
            "loss": t_loss,
            "backward": t_bwd,
            "optimizer": t_opt,
        }


def _fresh_args(cmp: Any, call: Any) -> tuple[tuple, dict]:
    return cmp.clone_tree(call.args), cmp.clone_tree(call.kwargs)


def run_function(spec: dict[str, Any], mods: dict[str, Any], torch: Any) -> dict[str, Any]:
    exe, inp, cmp = mods["worker_exec"], mods["worker_inputs"], mods["worker_compare"]
    fspec = spec["function"]
    qual = fspec["qualname"]
    rec = Recorder(mods["worker_capture"])
    rec.capture.install()
    module = exe.import_target(fspec)
    target, cls, method = exe.resolve(module, qual)
    paths = inp.existing(fspec.get("inputs_files") or [])
    declared = inp.find_declared(paths, qual)
    make_fn, inputs_fn, source = declared if declared else (None, None, None)
    instance = None
    if cls is not None:
        instance = exe._unwrap_compiled(inp.instance_for(cls, make_fn, source or qual))
    callee = (
        instance
        if (cls is not None and method is None)
        else (getattr(instance, method) if cls is not None else target)
    )
    if inputs_fn is not None:
        calls = inp.declared_calls(inputs_fn, instance, source)
        inputs_info = {"source": "declared", "file": source, "function": inputs_fn.__name__}
    else:
        sig = (
            callee.forward
            if callee is not None and cls is not None and method is None and hasattr(callee, "forward")
            else callee
        )
        calls = inp.synthesize(sig, inp.default_device(spec.get("device")), qual)
        inputs_info = {"source": "synthesised", "file": None, "function": None}
    inputs_info["buckets"] = [c.label for c in calls]
    loss_fn, opt_fn = _train_hooks(inp, paths, qual)
    cuda = any(isinstance(t, torch.Tensor) and t.is_cuda for c in calls for t in _tensors(c.args, c.kwargs))
    clock = Clock(torch, cuda)
    twin = copy.deepcopy(instance) if instance is not None else None
    eager_callee = callee if instance is None else (twin if method is None else getattr(twin, method))
    opts = {k: v for k, v in (spec.get("compile_options") or {}).items() if v is not None}
    backend = spec.get("backend") or "inductor"
    compiled_fn = torch.compile(callee, backend=backend, **opts)
    comp = Side(torch, compiled_fn, instance, loss_fn, opt_fn, clock)
    eager = Side(torch, eager_callee, twin, loss_fn, opt_fn, clock)
    timeline: list[dict[str, Any]] = []
    result: dict[str, Any] = {"inputs": inputs_info, "training_declared": loss_fn is not None}

    def timed_call(phase: str, i: int, call: Any, side: Side, record: bool = True) -> dict[str, float]:
        args, kwargs = _fresh_args(cmp, call)  # input creation outside the timed region
        before = rec.known()
        t_wall = time.time()
        parts = side.step(call, args, kwargs)
        new = rec.tag_new(before, phase, i, call.label) if side is comp else []
        if record:
            timeline.append(
                {
                    "i": len(timeline),
                    "phase": phase,
                    "bucket": call.label,
                    "latency_s": parts["total"],
                    "parts": {k: v for k, v in parts.items() if k != "total"},
                    "compiles": new,
                    "t_wall": t_wall,
                }
            )
        return parts

    # cold: the first compiled call of this process
    first = timed_call("cold", 0, calls[0], comp)
    result["cold"] = {
        "first_call_s": first["total"],
        "first_call_end_wall": time.time(),
        "peak_rss_bytes": peak_rss(),
        "peak_device_bytes": _device_peak(torch, cuda),
    }
    # warm-up: every bucket once (bucket 0 again: a second call of the same input must not compile)
    # plus the agreement check on each bucket, then a few training steps on both sides
    t0 = time.perf_counter()
    for i, call in enumerate(calls):
        timed_call("warmup", i, call, comp)
    agreement = []
    for i, call in enumerate(calls):
        agreement.append(
            _agree(torch, cmp, exe, rec, comp, eager, call, i, int(spec.get("train_steps") or 2))
        )
    result["warmup"] = {"seconds": time.perf_counter() - t0, "peak_rss_bytes": peak_rss()}
    result["agreement"] = agreement
    # steady: round-robin over the buckets
    iterations = int(spec.get("iterations") or 50)
    budget_s = spec.get("seconds")
    t0 = time.perf_counter()
    n = 0
    while n < iterations and (budget_s is None or time.perf_counter() - t0 < budget_s):
        call = calls[n % len(calls)]
        timed_call("steady", n, call, comp)
        n += 1
    result["steady_meta"] = {
        "iterations": n,
        "seconds": time.perf_counter() - t0,
        "peak_rss_bytes": peak_rss(),
        "peak_device_bytes": _device_peak(torch, cuda),
    }
    result["plain_loop"] = _plain_loop_rounds(
        comp, calls, clock, lambda k, call: timed_call("cross-check", k, call, comp, record=False)
    )
    # the eager baseline: the same protocol on the eager twin, nothing compiled
    eager_lat: list[dict[str, Any]] = []
    stance = (
        torch.compiler.set_stance("force_eager")
        if hasattr(torch.compiler, "set_stance")
        else contextlib.nullcontext()
    )
    with stance:
        for call in calls:
            eager.step(call, *_fresh_args(cmp, call))  # its own warm-up (lazy init, allocator)
        for k in range(n):
            call = calls[k % len(calls)]
            parts = eager.step(call, *_fresh_args(cmp, call))
            eager_lat.append(
                {
                    "bucket": call.label,
                    "latency_s": parts["total"],
                    "parts": {a: b for a, b in parts.items() if a != "total"},
                }
            )
    result["eager"] = eager_lat
    result["harness_overhead_s"] = harness_overhead(clock)
    before = rec.known()
    result["timer"] = _benchmark_timer(torch, cmp, comp, calls, clock)  # last: it resets the thread pool
    rec.tag_new(before, "cross-check", -1, "torch.utils.benchmark.Timer")
    result["timeline"] = timeline
    result["compiles"] = rec.compiles()
    result["breaks"] = rec.breaks()
    result["peak_rss_bytes"] = peak_rss()
    result["cuda"] = cuda
    rec.capture.uninstall()
    return result


def _plain_loop_rounds(
    comp: Side, calls: list[Any], clock: Clock, harness: Any, rounds: int = 5, per_round: int = 20
) -> dict[str, Any] | None:
    """The steady harness against the loop a user would write, interleaved call by call in this process.

    ``rounds`` rounds of ``per_round`` pairs: one call through the steady harness (``harness(k,
    call)``: fresh inputs, compile tagging, the timer), then the same bucket timed by a bare
    ``time.perf_counter()`` pair on the bucket's own inputs (no copy, no bookkeeping).  Alternating
    per call puts both in the same load and cache state (a plain loop's back-to-back calls run
    ~1.3x faster on a ~35 us call than calls with any work in between: measured, docs/bench.md);
    each round's medians are compared and ``ratio`` is the median of the per-round ratios (harness /
    plain).  Inference buckets only (a training step is more than one call)."""
    plain_calls = [c for c in calls if not comp.trains(c)]
    if not plain_calls:
        return None
    harness_p50: list[float] = []
    plain_p50: list[float] = []
    for _ in range(rounds):
        h: list[float] = []
        p: list[float] = []
        for k in range(per_round):
            call = plain_calls[k % len(plain_calls)]
            comp.set_mode(call.mode)
            h.append(harness(k, call)["total"])
            clock.sync()
            t0 = time.perf_counter()
            comp.fn(*call.args, **call.kwargs)
            clock.sync()
            p.append(time.perf_counter() - t0)
        harness_p50.append(statistics.median(h))
        plain_p50.append(statistics.median(p))
    ratios = [a / b for a, b in zip(harness_p50, plain_p50, strict=True) if b > 0]
    return {
        "rounds": rounds,
        "calls_per_round": per_round,
        "harness_p50_s": harness_p50,
        "plain_p50_s": plain_p50,
        "ratio": statistics.median(ratios) if ratios else None,
    }


def _tensors(args: Any, kwargs: Any) -> list[Any]:
    import torch.utils._pytree as pytree

    return [t for t in pytree.tree_leaves((args, kwargs)) if type(t).__name__ in ("Tensor", "Parameter")]


def _device_peak(torch: Any, cuda: bool) -> int | None:
    return int(torch.cuda.max_memory_allocated()) if cuda else None


def _agree(
    torch: Any, cmp: Any, exe: Any, rec: Recorder, comp: Side, eager: Side, call: Any, i: int, steps: int
) -> dict[str, Any]:
    """The probe's comparison of one bucket; training buckets: ``steps`` optimizer steps on both sides
    from the same parameters, then gradients and parameters compared (dtype-aware tolerances)."""
    comp.set_mode(call.mode)
    eager.set_mode(call.mode)
    before = rec.known()
    if not comp.trains(call):
        entry = cmp.compare_call(eager.fn, comp.fn, call.args, call.kwargs, seed=i, describe=exe.describe)
        rec.tag_new(before, "warmup", i, call.label)
        return {"bucket": call.label, "status": entry.get("status"), "detail": entry.get("detail")}
    eager.module.load_state_dict(comp.module.state_dict())
    checks: list[dict[str, Any]] = []
    for k in range(steps):
        grads = {}
        for side in (eager, comp):
            args, kwargs = _fresh_args(cmp, call)
            cmp.seed_all(1000 + i * 31 + k)
            side.opt.zero_grad(set_to_none=True)  # type: ignore[union-attr]  # comp.trains(call): both sides have one
            out = side.fn(*args, **kwargs)
            side.loss_fn(out, *args, **kwargs).backward()
            grads[side is comp] = {n: p.grad for n, p in side.module.named_parameters() if p.grad is not None}
            side.opt.step()  # type: ignore[union-attr]
        checks.append(cmp.compare_values(grads[False], grads[True], path=f"gradients after step {k + 1}"))
    params_e = dict(eager.module.named_parameters())
    params_c = dict(comp.module.named_parameters())
    checks.append(
        cmp.compare_values(
            {k: v.detach() for k, v in params_e.items()},
            {k: v.detach() for k, v in params_c.items()},
            path=f"parameters after {steps} steps",
        )
    )
    rec.tag_new(before, "warmup", i, call.label)
    bad = [c for c in checks if not c.get("ok")]
    return {
        "bucket": call.label,
        "status": "mismatch" if bad else "match",
        "training_steps": steps,
        "detail": "; ".join(str(c.get("detail")) for c in bad) or None,
    }


def _benchmark_timer(
    torch: Any, cmp: Any, comp: Side, calls: list[Any], clock: Clock
) -> list[dict[str, Any]]:
    """``torch.utils.benchmark.Timer`` per inference bucket (the field's timer; it synchronises CUDA
    itself), run after every other measurement because it changes what it measures: it always calls
    ``torch.set_num_threads`` -- its default of one thread is torch global state that Dynamo guards
    (a recompile), and even the process's own count re-initialises the intra-op thread pool, after
    which small CPU ops measured 100-1000x slower on a loaded 2-core machine (docs/bench.md)."""
    from torch.utils.benchmark import Timer

    out = []
    for call in calls:
        if comp.trains(call):
            continue
        comp.set_mode(call.mode)
        args, kwargs = _fresh_args(cmp, call)
        try:
            m = Timer(
                stmt="fn(*args, **kwargs)",
                globals={"fn": comp.fn, "args": args, "kwargs": kwargs},
                num_threads=torch.get_num_threads(),
            ).timeit(20)
            out.append({"bucket": call.label, "median_s": m.median, "number": 20})
        except Exception as exc:  # the timer is a cross-check; its failure is reported, not fatal
            out.append({"bucket": call.label, "error": f"{type(exc).__name__}: {exc}"})
    return out


# ---------------------------------------------------------------------------------------------
# program mode


class ProgramTimer:
    """Times every outermost call of what ``torch.compile`` returned while a program runs.

    ``torch.compile`` is wrapped for the program (``@torch.compile``, ``@torch.compile(...)`` and
    ``torch.compile(model)`` alike); ``mode`` / ``backend`` overrides apply to every call of it.  Calls
    of compiled code from inside compiled code are part of the outer call."""

    def __init__(
        self, torch: Any, rec: Recorder, clock: Clock, warmup_calls: int, overrides: dict[str, Any]
    ) -> None:
        self.torch = torch
        self.rec = rec
        self.clock = clock
        self.warmup_calls = warmup_calls
        self.overrides = overrides
        self.depth = 0
        self.timeline: list[dict[str, Any]] = []
        self.cold_end_wall: float | None = None
        self.peaks: dict[str, int] = {}
        self.added: list[float] = []  # per timed call: what the wrapper spent outside the measured latency

    def phase(self, index: int) -> str:
        return "cold" if index == 0 else ("warmup" if index <= self.warmup_calls else "steady")

    def wrap_callable(self, fn: Any, name: str) -> Any:
        timer = self

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if timer.depth:
                return fn(*args, **kwargs)
            t_enter = time.perf_counter()
            timer.depth += 1
            try:
                index = len(timer.timeline)
                phase = timer.phase(index)
                before = timer.rec.known()
                t_wall = time.time()
                out, dt = timer.clock.time(fn, *args, **kwargs)
                new = timer.rec.tag_new(before, phase, index, name)
                timer.timeline.append(
                    {
                        "i": index,
                        "phase": phase,
                        "bucket": name,
                        "latency_s": dt,
                        "parts": {},
                        "compiles": new,
                        "t_wall": t_wall,
                    }
                )
                if index == 0:
                    timer.cold_end_wall = time.time()
                timer.peaks[phase] = peak_rss()
                timer.added.append(time.perf_counter() - t_enter - dt)
                return out
            finally:
                timer.depth -= 1

        return timed

    def install(self) -> None:
        torch = self.torch
        real = torch.compile
        timer = self
        from torch._dynamo.eval_frame import OptimizedModule

        real_call = OptimizedModule.__call__
        names: dict[int, str] = {}

        def module_call(mod: Any, *args: Any, **kwargs: Any) -> Any:
            name = names.get(id(mod)) or type(getattr(mod, "_orig_mod", mod)).__name__
            return timer.wrap_callable(functools.partial(real_call, mod), name)(*args, **kwargs)

        OptimizedModule.__call__ = module_call  # type: ignore[method-assign,assignment]

        def wrap_result(obj: Any, model: Any) -> Any:
            if isinstance(obj, OptimizedModule):
                names[id(obj)] = type(model).__name__
                return obj
            if callable(obj):
                return timer.wrap_callable(obj, getattr(model, "__qualname__", None) or repr(model))
            return obj

        @functools.wraps(real)
        def compile_(model: Any = None, *args: Any, **kwargs: Any) -> Any:
            kwargs.update(timer.overrides)
            if model is None:
                decorator = real(None, *args, **kwargs)
                return lambda fn: wrap_result(decorator(fn), fn)
            return wrap_result(real(model, *args, **kwargs), model)

        torch.compile = compile_


def run_program(spec: dict[str, Any], mods: dict[str, Any], torch: Any) -> dict[str, Any]:
    prog = spec["program"]
    rec = Recorder(mods["worker_capture"])
    rec.capture.install()
    clock = Clock(torch, None if torch.cuda.is_available() else False)
    overrides = {k: v for k, v in (spec.get("compile_options") or {}).items() if v is not None}
    if spec.get("backend_override"):
        overrides["backend"] = spec["backend"]
    timer = ProgramTimer(torch, rec, clock, int(spec.get("warmup_calls") or 3), overrides)
    timer.install()
    argv = list(prog.get("argv") or [])
    if prog["kind"] == "module":
        sys.argv = [prog["target"], *argv]
        sys.path.insert(0, os.getcwd())
        runner: Any = lambda: runpy.run_module(prog["target"], run_name="__main__", alter_sys=True)  # noqa: E731
    else:
        script = os.path.abspath(prog["target"])
        sys.argv = [script, *argv]
        sys.path.insert(0, os.path.dirname(script))
        runner = lambda: runpy.run_path(script, run_name="__main__")  # noqa: E731
    exit_code = 0
    stance = (
        torch.compiler.set_stance("force_eager")
        if spec.get("side") == "eager" and hasattr(torch.compiler, "set_stance")
        else contextlib.nullcontext()
    )
    try:
        with stance:
            runner()
    except SystemExit as exc:
        exit_code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    used_cuda = bool(torch.cuda.is_available() and torch.cuda.is_initialized())
    result: dict[str, Any] = {"exit_code": exit_code, "timeline": timer.timeline, "cuda": used_cuda}
    steady_n = sum(1 for t in timer.timeline if t["phase"] == "steady")
    result["cold"] = {
        "first_call_s": timer.timeline[0]["latency_s"] if timer.timeline else None,
        "first_call_end_wall": timer.cold_end_wall,
        "peak_rss_bytes": timer.peaks.get("cold"),
        "peak_device_bytes": _device_peak(torch, used_cuda),
    }
    result["warmup"] = {
        "seconds": sum(t["latency_s"] for t in timer.timeline if t["phase"] == "warmup"),
        "peak_rss_bytes": timer.peaks.get("warmup"),
    }
    result["steady_meta"] = {
        "iterations": steady_n,
        "seconds": sum(t["latency_s"] for t in timer.timeline if t["phase"] == "steady"),
        "peak_rss_bytes": timer.peaks.get("steady"),
        "peak_device_bytes": _device_peak(torch, used_cuda),
    }
    result["harness_overhead_s"] = harness_overhead(clock)
    # what the bench adds to each of the program's calls, outside the latency it reports (the
    # program's own clock around a call sees latency + this)
    result["call_overhead_s"] = statistics.median(timer.added) if timer.added else None
    result["compiles"] = rec.compiles()
    result["breaks"] = rec.breaks()
    result["peak_rss_bytes"] = peak_rss()
    rec.capture.uninstall()
    return result


# ---------------------------------------------------------------------------------------------


def list_modes() -> dict[str, Any]:
    """What the installed torch says about compile modes, and the device it could use."""
    import torch

    modes = {}
    try:
        import torch._inductor

        listed = torch._inductor.list_mode_options()
        modes = {name: {str(k): v for k, v in (opts or {}).items()} for name, opts in listed.items()}
    except Exception as exc:  # pragma: no cover - private API moved
        return {
            "error": f"torch._inductor.list_mode_options() failed: {type(exc).__name__}: {exc}",
            "modes": {},
        }
    return {"modes": modes, "cuda": bool(torch.cuda.is_available()), "torch": torch.__version__}


def main(argv: list[str]) -> int:
    if sys.path and os.path.realpath(sys.path[0] or ".") == os.path.realpath(HERE):
        sys.path.pop(0)  # our folder must not shadow the user's modules
    if len(argv) == 2 and argv[0] == "--list-modes":
        with open(argv[1], "w", encoding="utf-8") as fh:
            json.dump(list_modes(), fh, default=str)
        return 0
    if len(argv) != 2:
        print("usage: bench_worker.py SPEC.json RESULT.json | --list-modes OUT.json", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as fh:
        spec = json.load(fh)
    out: dict[str, Any] = {"process_start_wall": T_PROCESS}
    t0 = time.perf_counter()
    try:
        import torch
        import torch._dynamo

        out["import_torch_s"] = time.perf_counter() - t0
        out["torch"] = torch.__version__
        out["cuda_available"] = bool(torch.cuda.is_available())
        mods = _load_siblings()
        for k, v in (spec.get("env") or {}).items():
            os.environ[str(k)] = str(v)
        if spec.get("cwd"):
            os.chdir(spec["cwd"])
        with contextlib.ExitStack() as stack:
            config = dict(spec.get("dynamo_config") or {})
            if config:
                stack.enter_context(torch._dynamo.config.patch(**config))
            if spec.get("kind") == "function":
                out.update(run_function(spec, mods, torch))
            else:
                out.update(run_program(spec, mods, torch))
        from torch._dynamo.utils import get_compilation_metrics

        out["torch_compilation_metrics"] = len(get_compilation_metrics())  # torch's own count, for the report
        try:
            from torch._dynamo.utils import compile_times

            out["compile_times"] = compile_times(repr="str")
        except Exception:  # pragma: no cover
            out["compile_times"] = None
        out["status"] = "ok"
    except BaseException as exc:
        inp = sys.modules.get("_tclint_probe.worker_inputs")
        if inp is not None and isinstance(exc, (inp.NeedInputs, inp.InputsError)):
            out["status"] = "inputs-error"  # the user must declare (or fix) the inputs: a usage error
            out["error"] = str(exc)
        else:
            out["status"] = "error"
            out["error"] = f"{type(exc).__name__}: {exc}"
        out["traceback"] = traceback.format_exc()[-6000:]
    tmp = argv[1] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(out, fh, default=str)
    os.replace(tmp, argv[1])
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown (compile worker pools); the result is written


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
