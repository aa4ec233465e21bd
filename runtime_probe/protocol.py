"""The wire format between the parent (CLI, language server) and ``worker.py``.

Both directions are JSON lines on inherited pipes (never stdout/stderr: user code prints).

Parent -> worker (control pipe)::

    {"op": "probe", "id": ID, "spec": SPEC}    run one probe in a fresh fork
    {"op": "cancel", "id": ID}                  kill that probe (its ``end`` says "cancelled")
    {"op": "ping", "id": ID}                    -> {"t": "pong"}
    {"op": "shutdown"}                          exit (closing the pipe does the same)

``SPEC`` (built by :func:`program_spec` / :func:`function_spec`)::

    mode            "program" | "function"
    program         {"kind": "script" | "module", "target": path or dotted name, "argv": [...]}
    function        {"file", "module", "import_root", "qualname", "inputs_files": [...]}
    cwd             working directory (None: a scratch folder)
    backend         "eager" (default) | "aot_eager" | "inductor" | any registered backend
    compile_options {"mode": ..., "fullgraph": ..., "dynamic": ...}   (function mode)
    dynamo_config   torch._dynamo.config values to patch ([tool.tclint.dynamo])
    timeout         seconds (the worker kills the probe's process tree at the deadline)
    memory_limit    bytes above the worker's own footprint, or None
    max_calls       stop after this many calls of compiled code, or None
    map_cuda_to_cpu bool;   device: "auto" | "cpu" | "cuda" (synthesised inputs)
    env             extra environment variables;   stream_output: bool

Worker -> parent (event pipe), each with the probe's ``id``::

    ready     {protocol, pid, python, python_version, torch, import_s, warmup_s, subreaper}
    fatal     {error}                       torch could not be imported; the worker exits
    start     {pid}                         the probe child was forked
    compile   one CompilationMetrics record (see worker_capture.metrics_record)
    break     one graph-break event (gb_type, gb_id, reason, explanation, hints, url,
              reported_at, stack: [{file, line, function, user}], compile_id, attempt)
    progress  {calls, compiles, breaks, hits} or {call, of, label} or {phase}
    call      one eager-vs-compiled comparison (function mode)
    output    {data}                        user stdout/stderr (only with stream_output)
    result    {status, exit_code, exception, correctness, inputs, env, capture: {compiles,
              breaks, hits, hits_supported, calls, limit_refusals}, message, missing}
    end       {status: finished | exited | crashed | timeout | memory | cancelled | parent-gone,
               returncode, signal, signal_name, result_received, output: {head, tail, bytes,
               truncated}, orphans, peak_rss, fault, wall_s, timeout, memory_limit}
"""

from __future__ import annotations

import os
from typing import Any

PROTOCOL = 1
WORKER_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")
DEFAULT_TIMEOUT = 120.0
DEFAULT_BACKEND = "eager"


def _common(options: Any) -> dict[str, Any]:
    return {
        "backend": options.backend or DEFAULT_BACKEND,
        "compile_options": {
            "mode": options.compile_mode,
            "fullgraph": options.fullgraph,
            "dynamic": options.dynamic,
        },
        "dynamo_config": dict(options.dynamo or {}),
        "timeout": float(options.timeout or DEFAULT_TIMEOUT),
        "memory_limit": options.memory_limit,
        "max_calls": options.max_calls,
        "map_cuda_to_cpu": bool(options.map_cuda_to_cpu),
        "device": options.device or "auto",
        "env": dict(options.env or {}),
        "stream_output": bool(options.stream_output),
    }


def program_spec(
    kind: str, target: str, argv: list[str], options: Any, cwd: str | None = None
) -> dict[str, Any]:
    """A program-mode request: ``kind`` is "script" (a path) or "module" (``-m`` name)."""
    if kind not in ("script", "module"):
        raise ValueError(f"unknown program kind {kind!r}")
    spec = _common(options)
    spec.update(
        mode="program",
        program={
            "kind": kind,
            "target": os.path.abspath(target) if kind == "script" else target,
            "argv": list(argv),
        },
        cwd=os.path.abspath(cwd or options.cwd or os.getcwd()),
    )
    return spec


def function_spec(
    file: str,
    qualname: str,
    module: str | None,
    import_root: str | None,
    inputs_files: list[str],
    options: Any,
) -> dict[str, Any]:
    spec = _common(options)
    spec.update(
        mode="function",
        function={
            "file": os.path.abspath(file),
            "module": module,
            "import_root": import_root,
            "qualname": qualname,
            "inputs_files": [os.path.abspath(p) for p in inputs_files],
        },
        cwd=os.path.abspath(options.cwd) if options.cwd else None,
    )
    return spec
