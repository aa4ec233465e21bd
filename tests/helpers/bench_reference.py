"""An independent reference for the bench tests: plain torch, no tclint code.

``python reference.py OUT.json ITERATIONS`` calls ``buckets.mix`` compiled (backend eager) on the same
two buckets as the declared inputs, times a plain ``time.perf_counter`` loop after warm-up, and
records ``len(get_compilation_metrics())`` and ``getrusage`` peak memory."""

import json
import os
import resource
import statistics
import sys
import time

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "bench")
)

import buckets
import torch
from buckets_probe_inputs import inputs_mix
from torch._dynamo.utils import get_compilation_metrics

out, iterations = sys.argv[1], int(sys.argv[2])
calls = list(inputs_mix())
fn = torch.compile(buckets.mix, backend="eager")
for c in calls:
    fn(*c["args"])
samples = []
for i in range(iterations):
    args = calls[i % len(calls)]["args"]
    t0 = time.perf_counter()
    fn(*args)
    samples.append(time.perf_counter() - t0)
with open(out, "w") as fh:
    json.dump(
        {
            "p50_s": statistics.median(samples),
            "compiles": len(get_compilation_metrics()),
            "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        },
        fh,
    )
