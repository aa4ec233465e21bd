"""An independent reference for the probe's numbers: run a program with torch's own tools only.

    python reference_trace.py OUT.json SCRIPT.py [ARGS...]
    python reference_trace.py OUT.json -m MODULE [ARGS...]

It shares no code with tclint.  Break events come straight from the structured trace
(``dynamo_graph_break_reason`` artifacts; the GB id from the payload's doc link, not from the
Gb_type registry the probe uses), compiles from ``get_compilation_metrics()``, and hit counts from
``sys.setprofile``: every call of a resume function ``torch_dynamo_resume_in_<fn>_at_<line>`` is
one pass over the break at ``<line>`` of ``<fn>`` (the probe instead wraps the installed globals).
Every torch.compile is routed to the eager backend, as the probe does by default.
"""

import collections
import json
import logging
import os
import re
import runpy
import sys
import threading

import torch
import torch._dynamo
from torch._dynamo.utils import clear_compilation_metrics, counters, get_compilation_metrics

LINK = re.compile(r"compile-graph-break-site/gb/gb(\d+)\.html")
FRAME = re.compile(r'^\s*File "(.*)", line (\d+), in (.*)$')
RESUME = re.compile(r"^torch_dynamo_resume_in_(.+)_at_(\d+)$")


class Trace(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.breaks = []

    def emit(self, record):
        md = getattr(record, "metadata", None) or {}
        art = md.get("artifact") or {}
        if art.get("name") != "dynamo_graph_break_reason":
            return
        payload = record.payload or ""
        lines = payload.splitlines()
        frames = []
        if "User code traceback:" in lines:
            for line in lines[lines.index("User code traceback:") + 1 :]:
                m = FRAME.match(line)
                if m:
                    frames.append((os.path.realpath(m.group(1)), int(m.group(2)), m.group(3)))
                elif not line.startswith("    "):
                    break
        link = LINK.search(payload)
        self.breaks.append(
            {
                "compile_id": f"{md.get('frame_id')}/{md.get('frame_compile_id')}",
                "gb_id": f"GB{int(link.group(1)):04d}" if link else None,
                "frames": frames,
            }
        )


def main(argv):
    out_path, rest = argv[0], argv[1:]
    hits = collections.Counter()

    def profile(frame, event, arg):
        if event == "call":
            m = RESUME.match(frame.f_code.co_name)
            if m:
                hits[f"{os.path.realpath(frame.f_code.co_filename)}|{m.group(1)}|{m.group(2)}"] += 1

    trace = Trace()
    logger = logging.getLogger("torch.__trace")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(trace)
    torch._dynamo.reset()
    counters.clear()
    clear_compilation_metrics()
    status = 0
    if rest[0] == "-m":
        sys.argv = [rest[1], *rest[2:]]
        sys.path.insert(0, os.getcwd())
        run = lambda: runpy.run_module(rest[1], run_name="__main__", alter_sys=True)  # noqa: E731
    else:
        script = os.path.abspath(rest[0])
        sys.argv = [script, *rest[1:]]
        sys.path.insert(0, os.path.dirname(script))
        run = lambda: runpy.run_path(script, run_name="__main__")  # noqa: E731
    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        with torch.compiler.set_stance("default", force_backend="eager"):
            run()
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    compiles = [
        {
            "compile_id": str(m.compile_id),
            "co_name": m.co_name,
            "co_filename": os.path.realpath(m.co_filename) if m.co_filename else None,
            "recompile_reason": (m.recompile_reason or "").splitlines()[0] if m.recompile_reason else None,
            "fail_type": m.fail_type,
        }
        for m in get_compilation_metrics()
    ]
    limit = sum(
        n for k, n in counters["unimplemented"].items() if k.startswith("Dynamo recompile limit exceeded")
    )
    with open(out_path, "w") as fh:
        json.dump(
            {
                "breaks": trace.breaks,
                "compiles": compiles,
                "hits": dict(hits),
                "limit_refusals": limit,
                "status": status,
            },
            fh,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
