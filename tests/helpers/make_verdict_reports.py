"""Write the probe reports of the worst cases as the editors receive them (the server's
``tclint.probe`` payload: ``ProbeReport.to_json(merged)`` plus ``summary`` and ``target``).

``.venv/bin/python -m tests.helpers.make_verdict_reports`` runs real probes (torch needed) and
writes ``tests/fixtures/runtime_probe/verdicts/<case>.json``: a run that raised, timed out, crashed, produced no graph,
whose synthesised inputs were rejected, and one whose every compile failed with a hard error.
Paths under the repository are written as ``/project/...`` so the data does not depend on the
checkout.  The editor tests (tests/editors) and test_verdicts.py render these files.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(ROOT, "tests", "fixtures", "runtime_probe")
OUT = os.path.join(FIX, "verdicts")


def payload(report, target: str) -> dict:
    from tclint.runtime_probe.api import merge
    from tclint.server.probe import summary_text

    data = report.to_json(merge([], report))
    data["summary"] = summary_text(report)
    data["target"] = target
    return data


def scrub(value, roots: list[tuple[str, str]]):
    if isinstance(value, str):
        for old, new in roots:
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [scrub(v, roots) for v in value]
    if isinstance(value, dict):
        return {k: scrub(v, roots) for k, v in value.items()}
    return value


def main() -> None:
    from tclint.runtime_probe.api import ProbePool, probe_function, probe_program
    from tclint.runtime_probe.options import ProbeOptions

    opts = ProbeOptions(timeout=60, memory_limit=1024**3)
    scratch = tempfile.mkdtemp(prefix="tclint-verdicts-")
    vit = os.path.join(scratch, "vit")
    shutil.copytree(os.path.join(FIX, "vit"), vit)  # no inputs file: the probe synthesises
    fault = os.path.join(FIX, "faults", "fault.py")
    blocks = os.path.join(FIX, "funcs", "blocks.py")
    cases = {
        "raised": lambda pool: probe_program(fault, ["raise"], options=opts, pool=pool),
        "timeout": lambda pool: probe_program(fault, ["hang_c"], options=opts.with_(timeout=4), pool=pool),
        "crashed": lambda pool: probe_program(fault, ["segfault"], options=opts, pool=pool),
        "no_graph": lambda pool: probe_function(
            os.path.join(vit, "model.py") + "::frame_dropped", options=opts, pool=pool
        ),
        "inputs_rejected": lambda pool: probe_function(
            os.path.join(vit, "model.py") + "::MyModel", options=opts, pool=pool
        ),
        "hard_error": lambda pool: probe_function(blocks + "::marks_dynamic", options=opts, pool=pool),
    }
    os.makedirs(OUT, exist_ok=True)
    wanted = sys.argv[1:] or list(cases)
    with ProbePool() as pool:
        for name in wanted:
            report = cases[name](pool)
            data = scrub(
                payload(report, report.target),
                [(vit, "/project/vit"), (ROOT, "/project"), (scratch, "/project")],
            )
            with open(os.path.join(OUT, f"{name}.json"), "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=1, sort_keys=True, default=str)
                fh.write("\n")
            print(name, report.status, "|", data["summary"])
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
