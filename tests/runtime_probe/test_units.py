"""Pieces of the probe that need no worker: parsing Dynamo's texts, guard locations, the merge
with static findings, inputs discovery, targets, options; and the parent/worker boundary."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap

import pytest
from tclint.rules.model import Diagnostic, Origin, Severity, Span
from tclint.runtime_probe import guards, inputs, merge, options, targets
from tclint.runtime_probe.report import ProbeReport, collapse_resumes, fault_location

from tests.helpers.probeutil import FIX, fixture

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE_DIR = os.path.join(ROOT, "runtime_probe")


# ---------------------------------------------------------------------------------------------
# the boundary: the parent never imports torch; the worker needs nothing but stdlib + torch


def test_the_parent_side_never_imports_torch():
    code = (
        "import sys, tclint.runtime_probe.api, tclint.runtime_probe.cli, tclint.runtime_probe.render; "
        "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_worker_files_import_only_stdlib_torch_and_each_other():
    allowed_top = set(sys.stdlib_module_names) | {"torch", "numpy"}
    for name in sorted(os.listdir(PROBE_DIR)):
        if not (name == "worker.py" or name.startswith("worker_")):
            continue
        tree = ast.parse(open(os.path.join(PROBE_DIR, name)).read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # `from . import worker_capture`
                    assert all(a.name.startswith("worker_") for a in node.names), (name, ast.dump(node))
                    continue
                mods = [node.module or ""]
            else:
                continue
            for mod in mods:
                assert mod.split(".")[0] in allowed_top, f"{name} imports {mod}"


@pytest.mark.dynamo
@pytest.mark.slow
def test_worker_runs_where_tclint_is_not_installed(tmp_path):
    """The system interpreter with only torch on its path (no .pth, so no editable tclint)."""
    import sysconfig

    from tclint.runtime_probe.api import probe_program
    from tclint.runtime_probe.options import ProbeOptions

    system = "/usr/bin/python3"
    if not os.path.exists(system) or sys.version_info[:2] != (3, 11):
        pytest.skip("needs a plain CPython 3.11 next to the venv")
    site = sysconfig.get_paths()["purelib"]
    script = tmp_path / "where.py"
    script.write_text(
        "import importlib.util, torch\nprint('tclint importable:', importlib.util.find_spec('tclint') is not None)\n"
        "@torch.compile\ndef f(x):\n    print('break')\n    return x + 1\nf(torch.ones(2))\n"
    )
    report = probe_program(
        str(script), options=ProbeOptions(python=system, env={"PYTHONPATH": site}, timeout=120)
    )
    assert report.status == "ok", report.message
    assert "tclint importable: False" in report.run["output"]["head"]
    assert [b["gb_id"] for b in report.graph_breaks] == ["GB0059"]
    assert report.environment["executable"] == system


def test_an_interpreter_without_torch_is_a_clear_error(tmp_path):
    from tclint.runtime_probe.api import probe_program
    from tclint.runtime_probe.options import ProbeOptions

    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    report = probe_program(
        str(script), options=ProbeOptions(python="/usr/bin/python3", env={"PYTHONPATH": ""})
    )
    assert report.status == "worker-error"
    assert "cannot import torch in /usr/bin/python3" in report.message


# ---------------------------------------------------------------------------------------------
# Dynamo's texts (these helpers live in the worker module, which imports torch)


@pytest.fixture(scope="module")
def wc():
    from tclint.runtime_probe import worker_capture

    return worker_capture


PAYLOAD = textwrap.dedent("""\
    Graph break in user code at /proj/m.py:7
    Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

    Unsupported Tensor.item() call with capture_scalar_outputs=False
      Explanation: Dynamo does not support tracing `Tensor.item()` with config.capture_scalar_outputs=False.
      Hint: Set `torch._dynamo.config.capture_scalar_outputs = True` or `export TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` to include these operations in the captured graph.

      Developer debug context: call_method TensorVariable() item () {}

     For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html

    User code traceback:
      File "/proj/train.py", line 40, in <module>
        main()
      File "/proj/m.py", line 7, in forward
        s = x.sum().item()

    NoneType: None
    """)


def test_parse_break(wc):
    ev = wc.parse_break(PAYLOAD)
    assert ev["gb_type"] == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert ev["gb_id"] == "GB0124"
    assert ev["url"].endswith("/gb/gb0124.html")
    assert ev["explanation"].startswith("Dynamo does not support tracing")
    assert ev["hints"][0].startswith("Set `torch._dynamo.config.capture_scalar_outputs = True`")
    assert [(f["file"], f["line"], f["function"]) for f in ev["stack"]] == [
        ("/proj/train.py", 40, "<module>"),
        ("/proj/m.py", 7, "forward"),
    ]
    assert ev["reported_at"]["line"] == 7


def test_parse_break_without_registry_match_uses_the_link(wc):
    text = PAYLOAD.replace(
        "Unsupported Tensor.item() call with capture_scalar_outputs=False", "Some future Gb_type"
    )
    assert wc.parse_break(text)["gb_id"] == "GB0124"
    assert wc.parse_break(text.replace("gb0124", "nothing"))["gb_id"] is None


@pytest.mark.parametrize(
    "guard, source",
    [
        ("tensor 'x' size mismatch at index 0. expected 4, actual 8", "x"),
        ("n == 1", "n"),
        ("len(xs) == 2", "xs"),
        ("G['SCALE'] == 1.0", "G['SCALE']"),
        ("self._modules['drop'].training == True", "self._modules['drop'].training"),
        ("___check_obj_id(mode, 139930767619152), type=<class '__main__.Mode'>", "mode"),
        ("KeyError on kw['k0']", "kw['k0']"),
        ("mask is None", "mask"),
    ],
)
def test_guard_source(wc, guard, source):
    assert wc.guard_source(guard) == source


def test_parse_recompile_reason(wc):
    text = (
        "0/0: n == 1                                                   # y = x * n  # e.py:9 in fn\n"
        'User stack trace:\n  File "/proj/e.py", line 9, in fn\n    y = x * n'
    )
    r = wc.parse_recompile_reason(text)
    assert (r["failed_entry"], r["guard"], r["code"], r["source"]) == ("0/0", "n == 1", "y = x * n", "n")
    assert [(f["file"], f["line"]) for f in r["stack"]] == [("/proj/e.py", 9)]
    hint = wc.parse_recompile_reason(
        "1/0: s.k == 1  # for i in range(s.k):  # m.py:17 in forward (HINT: make it dynamic)"
    )
    assert hint["hint"] == "make it dynamic" and hint["guard"] == "s.k == 1"


def test_error_detail_and_from_user_code(wc):
    text = (
        "RuntimeError when making fake tensor call\n  Explanation: ...: got RuntimeError('There was no fake impl "
        'registered for <CustomOpDef(a::b)>.\')\n\nfrom user code:\n   File "/proj/ops.py", line 30, in f\n'
        "    return b(x)\n\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace"
    )
    assert wc.error_detail(text) == "RuntimeError: There was no fake impl registered for <CustomOpDef(a::b)>."
    assert [(f["file"], f["line"]) for f in wc.from_user_code(text)] == [("/proj/ops.py", 30)]


# ---------------------------------------------------------------------------------------------
# guard locations


def test_locate_guards(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(
        textwrap.dedent("""\
        import torch

        SCALE = 2

        @torch.compile
        def step(x,
                 n: int):
            y = x * n
            return y * SCALE

        class M(torch.nn.Module):
            def forward(self, x):
                h = x + 1
                return h * self.k
        """)
    )
    f = str(src)
    at = lambda g, line, name, resume=None: guards.locate({"source": g, "stack": []}, f, line, name, resume)  # noqa: E731
    assert at("x", 5, "step")["line"] == 6  # a decorated def: co_firstlineno is the decorator's line
    assert at("n", 5, "step") == {"file": f, "line": 7, "col": 9, "end_col": 15, "how": "parameter `n`"}
    assert guards.parameter(f, 5, "step", "n")["col"] == 9
    assert guards.parameter(f, 12, "forward", "self.k") is None  # `self` is not the subject
    assert at("G['SCALE']", 5, "step")["line"] == 3
    assert at("self.k", 12, "forward")["line"] == 14
    assert at("h", 12, "forward", resume=14)["line"] == 14
    stacked = guards.locate(
        {
            "source": "n",
            "stack": [{"file": "/lib/x.py", "line": 3, "user": False}, {"file": f, "line": 8, "user": True}],
        },
        f,
        5,
        "step",
    )
    assert stacked["line"] == 8 and "installed" in stacked["how"]


def test_collapse_resumes_and_fault_location():
    frames = [
        {"file": "a.py", "line": 1, "function": "<module>"},
        {"file": "a.py", "line": 8, "function": "fn"},
        {"file": "a.py", "line": 10, "function": "fn"},
        {"file": "a.py", "line": 3, "function": "helper"},
    ]
    assert [f["line"] for f in collapse_resumes(frames)] == [1, 10, 3]
    dump = (
        "Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call first):\n"
        '  File "/usr/lib/python3.11/ctypes/__init__.py", line 519 in string_at\n'
        '  File "/proj/fault.py", line 50 in fault\n  File "/proj/fault.py", line 90 in <module>\n'
    )
    assert fault_location(dump) == {"file": "/proj/fault.py", "line": 50, "function": "fault"}


# ---------------------------------------------------------------------------------------------
# merge


def _static(path, line, code, gb):
    return Diagnostic(
        code=code,
        name=code.lower(),
        message="static",
        path=path,
        span=Span.of(line, 4, line, 20),
        severity=Severity.WARNING,
        gb_ids=gb,
    )


def _report(path, breaks=(), recompiles=()):
    r = ProbeReport(mode="program", target="t.py", status="ok", message="completed")
    for line, gb, hits in breaks:
        r.graph_breaks.append(
            {
                "file": path,
                "line": line,
                "function": "f",
                "in_library": False,
                "gb_id": gb,
                "gb_type": "x",
                "reason": "",
                "explanation": "",
                "hints": [],
                "url": None,
                "user_stack": [],
                "reported_at": None,
                "events": 1,
                "compile_ids": ["0/0"],
                "frame_dropped": False,
                "dropped_frames": [],
                "hits": hits,
                "hits_counted": True,
            }
        )
    for line in recompiles:
        r.compiles.append(
            {
                "compile_id": "0/1",
                "frame": {"function": "f", "file": path, "line": 1, "code_name": "f"},
                "kind": "recompile",
                "trigger": "guard failed: n == 1",
                "guard": {"guard": "n == 1"},
                "guard_location": {"file": path, "line": line, "how": "parameter `n`"},
                "time_s": 0.1,
                "graphs": 1,
                "fail_type": None,
                "dropped": False,
            }
        )
    return r


def test_merge_confirms_predicted_breaks_and_flags_unpredicted(tmp_path):
    path = str(tmp_path / "m.py")
    (tmp_path / "m.py").write_text("\n".join(f"x{i} = {i}" for i in range(30)))
    static = [
        _static(path, 5, "TC101", ("GB0124", "GB0033")),  # confirmed
        _static(path, 9, "TC104", ("GB0059",)),  # probe saw another GB id here: stays
        _static(path, 20, "TC102", ("GB0170",)),
    ]  # not executed: stays unchanged
    report = _report(path, breaks=[(5, "GB0124", 7), (9, "GB0170", 1), (12, "GB0025", 3)], recompiles=[14])
    merged = merge.merge(static, report)
    by = {(d.code, d.line): d for d in merged}
    assert by[("TC101", 5)].extra == {"confirmed": True, "confirmed_by": "TC901", "hits": 7}
    assert ("TC901", 5) not in by  # said once, by the confirmed static finding
    assert by[("TC104", 9)].extra == {} and by[("TC102", 20)] == static[2]
    assert by[("TC901", 9)].extra["unpredicted"] and by[("TC901", 12)].extra["unpredicted"]
    assert by[("TC902", 14)].extra["unpredicted"]
    assert all(d.origin is Origin.PROBE for d in merged if d.code.startswith("TC9"))


def test_merge_confirms_recompile_rules_on_the_guard_line(tmp_path):
    path = str(tmp_path / "m.py")
    (tmp_path / "m.py").write_text("\n".join(f"x{i} = {i}" for i in range(30)))
    from tclint.rules import registry

    recompile_rule = next(r for r in registry.all_rules() if r.family == "recompile")
    static = [_static(path, 14, recompile_rule.code, ())]
    merged = merge.merge(static, _report(path, recompiles=[14]))
    s = next(d for d in merged if d.code == recompile_rule.code)
    p = next(d for d in merged if d.code == "TC902")
    assert s.extra["confirmed"] and p.extra["predicted_by"] == [recompile_rule.code]


def test_merge_tells_parameters_on_one_def_line_apart(tmp_path):
    from tclint.rules import registry
    from tclint.runtime_probe.diagnostics import recompile_diagnostics

    path = str(tmp_path / "m.py")
    (tmp_path / "m.py").write_text(
        "import torch\n\ndef step(tokens, temperature, sampling='greedy'):\n"
        "    if sampling == 'sample':\n        return tokens * temperature\n    return tokens\n"
    )
    code = next(r for r in registry.all_rules() if r.family == "recompile").code
    static = [Diagnostic(code=code, name="x", message="str argument", path=path, span=Span.of(3, 30, 3, 49))]
    report = _report(path)
    for cid, source, at in (
        ("0/1", "tokens", {"file": path, "line": 3, "col": 9, "end_col": 15, "how": "p"}),
        ("0/2", "sampling", {"file": path, "line": 4, "how": "installed"}),
    ):
        param = guards.parameter(path, 3, "step", source)
        report.compiles.append(
            {
                "compile_id": cid,
                "frame": {"function": "step", "file": path, "line": 3, "code_name": "step"},
                "kind": "recompile",
                "trigger": "t",
                "guard": {"guard": f"{source} guard", "source": source},
                "guard_location": at,
                "guard_parameter": param,
            }
        )
    assert [d.line for d in recompile_diagnostics(report)] == [3, 4]
    merged = merge.merge(static, report)
    tc902 = {d.line: d for d in merged if d.code == "TC902"}
    assert tc902[3].extra.get("unpredicted")  # `tokens`: the static finding is about `sampling`
    assert tc902[4].extra.get("predicted_by") == [code]  # `sampling`, guarded at its use on line 4
    assert next(d for d in merged if d.code == code).extra["confirmed"]


# ---------------------------------------------------------------------------------------------
# targets, inputs discovery, options


def test_targets():
    t = targets.parse_target(fixture("funcs", "blocks.py") + "::Scorer.calibrate")
    assert (t.kind, t.qualname, t.module) == ("method", "Scorer.calibrate", "blocks")
    assert [p[0] for p in t.params] == ["x", "k"]
    with pytest.raises(targets.TargetError, match="not a class"):
        targets.parse_target(fixture("funcs", "blocks.py") + "::gated.x")
    with pytest.raises(targets.TargetError, match="no such file"):
        targets.parse_target("nope.py::f")


def test_inputs_discovery_order(tmp_path):
    pkg = tmp_path / "proj" / "pkg"
    pkg.mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text("[project]\nname='x'\n")
    (pkg / "model.py").write_text("def f(x): return x\n")
    (pkg / "model_probe_inputs.py").write_text("")
    (tmp_path / "proj" / "probe_inputs.py").write_text("")
    (tmp_path / "probe_inputs.py").write_text("")  # above the project root: not searched
    configured = tmp_path / "proj" / "declared.py"
    configured.write_text("")
    found = inputs.candidate_files(str(pkg / "model.py"), [str(configured)])
    assert found == [
        str(configured),
        str(pkg / "model_probe_inputs.py"),
        str(tmp_path / "proj" / "probe_inputs.py"),
    ]


def test_memory_sizes():
    assert options.parse_memory("4G") == 4 * 1024**3
    assert options.parse_memory("512MiB") == 512 * 1024**2
    assert options.parse_memory(256) == 256 * 1024**2
    assert options.parse_memory("none") is None
    with pytest.raises(Exception, match="memory-limit"):
        options.parse_memory("lots")


def test_options_from_settings(tmp_path):
    from tclint.rules.config import ConfigResolver

    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent("""\
        [tool.tclint.probe]
        python = ".venv/bin/python"
        timeout = 30
        memory-limit = "1G"
        inputs = ["probe/inputs.py"]
        map-cuda-to-cpu = true
        env = { FOO = "1" }

        [tool.tclint.dynamo]
        recompile_limit = 4
        """)
    )
    opts = options.options_for(str(tmp_path / "x.py"), ConfigResolver(), backend="aot_eager")
    assert opts.python == str(tmp_path / ".venv" / "bin" / "python")
    assert (opts.timeout, opts.memory_limit, opts.backend) == (30.0, 1024**3, "aot_eager")
    assert opts.inputs == [str(tmp_path / "probe" / "inputs.py")] and opts.map_cuda_to_cpu
    assert opts.env == {"FOO": "1"} and opts.dynamo == {"recompile_limit": 4}


def test_report_json_round_trip(tmp_path):
    import json

    path = str(tmp_path / "m.py")
    (tmp_path / "m.py").write_text("\n".join(f"x{i} = {i}" for i in range(30)))
    report = _report(path, breaks=[(5, "GB0124", 7)], recompiles=[14])
    data = json.loads(json.dumps(report.to_json()))
    again = ProbeReport.from_json(data)
    assert again == report
    assert [d["code"] for d in data["diagnostics"]] == ["TC901", "TC902"]
    assert data["diagnostics"][0]["hits"] == 7


def test_fixture_dirs_are_not_packages():
    for dirpath, _dirs, files in os.walk(FIX):
        assert "__init__.py" not in files, dirpath


def test_out_of_memory_messages_never_cut_numbers_and_say_human_sizes():
    """Issue 18 item 16: the message was cut at 120 characters, in the middle of the number."""
    from tclint.runtime_probe.report import clip, human_bytes, run_status
    from tclint.runtime_probe.runner import Outcome

    msg = (
        "[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: not enough memory: "
        "you tried to allocate 26843545600 bytes."
    )
    result = {"status": "exception", "exception": {"kind": "memory", "type": "RuntimeError", "message": msg}}
    status, text = run_status(
        Outcome(end={"status": "finished"}), {"memory_limit": 3 * 1024**3}, result, {"status": "finished"}
    )
    assert status == "memory"
    assert "you tried to allocate 25 GiB." in text and "memory cap 3 GiB" in text
    assert "26843545" not in text
    assert [human_bytes(n) for n in (1, 1536, 512 * 1024**2, 3 * 1024**3 // 4 * 5, 26843545600)] == [
        "1 byte",
        "1.5 KiB",
        "512 MiB",
        "3.75 GiB",
        "25 GiB",
    ]
    long = "word " * 30 + "12345678901234567890"
    cut = clip(long, 160)
    assert cut.endswith("…") and "1234" not in cut and len(cut) <= 160
    assert clip("short", 160) == "short"


def test_a_frame_recompiled_twice_for_one_dimension_is_said_to_be_static():
    """Two size recompiles of the same frame, value and dimension cannot happen under automatic
    dynamic shapes (the first makes the dimension dynamic): the frame was compiled static
    (`dynamic=False`), and its causes say so; a single one keeps the automatic-dynamic note."""
    from tclint.runtime_probe import report

    def size_recompile(fn: str, old: int, new: int) -> dict:
        text = f"`x` changed size in dim 0: {old} -> {new}" + guards.AUTOMATIC_DYNAMIC_NOTE
        return {
            "kind": "recompile",
            "frame": {"file": "m.py", "line": 3, "function": fn},
            "cause": {"kind": "size", "subject": "x", "index": 0, "text": text},
        }

    compiles = [size_recompile("f", 4, 6), size_recompile("f", 6, 8), size_recompile("g", 4, 6)]
    report._static_frames(compiles)
    f1, f2, g = (c["cause"]["text"] for c in compiles)
    assert f1.endswith(guards.STATIC_NOTE) and f2.endswith(guards.STATIC_NOTE)
    assert g.endswith(guards.AUTOMATIC_DYNAMIC_NOTE)
