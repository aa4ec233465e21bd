"""Capture the recompile reasons torch really prints for each cause in fixtures/guards/causes.py.

Run with the project's torch: ``.venv/bin/python -m tests.helpers.capture_guard_texts OUT.json``.
Uses torch's own API only (``torch._dynamo.utils.get_compilation_metrics()``, the record the
probe's worker reads) and writes, per case, every compile's ``recompile_reason`` with the frame
it belongs to (file relative to the fixture folder), plus the torch version.  The JSON is stored
as test data (``tests/fixtures/runtime_probe/guard_texts_torch-<version>.json``) for ``test_guard_texts.py``.
"""

from __future__ import annotations

import json
import os
import sys

import torch
import torch._dynamo

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(os.path.dirname(HERE), "fixtures", "runtime_probe", "guards")


def _worker_capture():
    """The probe worker's own parser, loaded by path (it needs only torch)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.dirname(HERE)), "runtime_probe", "worker_capture.py")
    spec = importlib.util.spec_from_file_location("_tclint_worker_capture", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _relative(parsed):
    """Stack paths relative to the fixture folder (the data must not depend on the checkout)."""
    for frame in (parsed or {}).get("stack") or []:
        path = os.path.realpath(frame.get("file") or "")
        if path.startswith(os.path.realpath(FIX)):
            frame["file"] = os.path.relpath(path, os.path.realpath(FIX))
    return parsed


def main(out: str) -> None:
    sys.path.insert(0, FIX)
    import causes

    cap = _worker_capture()

    results = {"torch": torch.__version__, "python": sys.version.split()[0], "cases": {}}
    for name in causes.CASES:
        torch._dynamo.reset()
        torch._dynamo.utils.clear_compilation_metrics()
        getattr(causes, name)(lambda f: torch.compile(f, backend="eager"))
        records = []
        for m in torch._dynamo.utils.get_compilation_metrics():
            path = m.co_filename or ""
            records.append(
                {
                    "compile_id": str(m.compile_id),
                    "co_name": m.co_name,
                    "co_filename": os.path.relpath(os.path.realpath(path), FIX)
                    if path.startswith(FIX)
                    else path,
                    "co_firstlineno": m.co_firstlineno,
                    "recompile_reason": m.recompile_reason,
                    "recompile": _relative(cap.parse_recompile_reason(m.recompile_reason)),
                }
            )
        results["cases"][name] = records
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
