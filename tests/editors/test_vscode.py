"""The VS Code extension (editors/vscode): type-checks, unit tests (node:test with a mocked
`vscode`), the .vsix package, and an end-to-end run in a real VS Code (code-server + headless
Chromium via playwright-core) on a copy of examples/ against the real tclint server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile

import pytest

from tests.helpers.editorutil import EDITORS, PROJECT, PYTHON, ROOT, require_server, server_env, tool

pytestmark = [pytest.mark.editor, pytest.mark.slow]

EXT = os.path.join(EDITORS, "vscode")


def npm(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, TCLINT_TEST_PYTHON=PYTHON, npm_config_update_notifier="false")
    proc = subprocess.run(["npm", *args], cwd=EXT, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"npm {' '.join(args)}: rc={proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    )
    return proc


@pytest.fixture(scope="module")
def vsix() -> str:
    """node_modules (npm ci), type-check, unit tests, then the .vsix as `make dist` builds it
    (carrying the wheel that its Install prompt installs)."""
    tool("ensure-vscode-node-modules.sh")
    npm("run", "typecheck")
    tests = npm("test")
    assert "# fail 0" in tests.stdout, tests.stdout[-3000:]
    venv = os.path.dirname(os.path.dirname(PYTHON))
    proc = subprocess.run(
        ["make", "dist", f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    path = os.path.join(ROOT, "dist", "tclint.vsix")
    assert os.path.exists(path)
    return path


def test_unit_tests_and_package_contents(vsix):
    with zipfile.ZipFile(vsix) as zf:
        names = set(zf.namelist())
        manifest = json.loads(zf.read("extension/package.json"))
    lower = {n.lower() for n in names}
    assert {
        "extension/dist/extension.js",
        "extension/package.json",
        "extension/readme.md",
        "extension/license.txt",
    } <= lower, names
    assert not any(
        "/node_modules/" in n or n.startswith("extension/src/") or n.startswith("extension/test/")
        for n in names
    ), names
    assert not any(n.endswith(".map") for n in names)
    assert manifest["main"] == "./dist/extension.js"
    assert manifest["capabilities"]["untrustedWorkspaces"]["supported"] == "limited"


@pytest.fixture(scope="module")
def code_server() -> str:
    return tool("setup-code-server.sh", timeout=1500)


@pytest.fixture
def server_required() -> None:
    require_server()  # listed before code_server: no minutes-long install for a skipped test


def run_e2e(tmp_path, **settings: str) -> dict:
    ws = tmp_path / "ws"
    shutil.copytree(
        os.path.join(ROOT, "examples"), ws, ignore=shutil.ignore_patterns(".tclint_cache", "__pycache__")
    )
    out = tmp_path / "out"
    env = server_env()
    env.update(
        {
            "WS": str(ws),
            "FILE": "serve.py",
            "OUT": str(out),
            "HOME": str(tmp_path / "home"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            **settings,  # WS / FILE given: another workspace or file
        }
    )
    proc = subprocess.run(
        ["node", os.path.join(EXT, "e2e", "code-server-e2e.js")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    result_path = out / "result.json"
    assert result_path.exists(), proc.stdout + proc.stderr
    result = json.loads(result_path.read_text())
    assert proc.returncode == 0 and result["ok"], json.dumps(result, indent=2)[:6000]
    assert result["installed"], "the .vsix was not installed"
    return result


def test_install_prompt_in_code_server(code_server, vsix, tmp_path):
    """An interpreter without tclint: VS Code shows the prompt with a one-click Install, and the
    status bar item points at the install command."""
    bare = tmp_path / "bare"
    subprocess.run(["python3", "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    result = run_e2e(
        tmp_path, CS_DIR=code_server, VSIX=vsix, PYTHON=str(bare / "bin" / "python"), EXPECT_MISSING="1"
    )
    assert "tclint is not installed in" in result["notification"], result["notification"]
    assert "tclint-torch[server] from the wheel bundled with the extension" in result["notification"], result[
        "notification"
    ]
    assert result["notificationButtons"][:1] == ["Install"]
    assert any("not available" in item for item in result["statusBar"]), result["statusBar"]


def test_end_to_end_in_code_server(server_required, code_server, vsix, tmp_path):
    """Squiggles and Problems rows from tclint on examples/serve.py, a quick fix applied, and the
    probe command's view.  Screenshots are left in the test's tmp folder."""
    result = run_e2e(
        tmp_path,
        CS_DIR=code_server,
        VSIX=vsix,
        PYTHON=PYTHON,
        FIX_LINE="34",
        FIX_COL="12",
        FIX_CODE="TC101",
        FIX_TITLE="Disable TC101 for this line",
        PROBE_COMMAND="tclint: Probe current file as a program",
    )
    assert result["squiggles"] >= 1
    assert any("tclint" in item for item in result["statusBar"])
    # the markers VS Code holds for serve.py (read through the extension API, not the Problems rows)
    found = {(m["code"], m["line"], m["column"]) for m in result["markers"]}
    assert {("TC101", 34, 12), ("TC204", 12, 59)} <= found, found
    assert all(m["source"] == "tclint" for m in result["markers"])
    # the quick fix changed the file in the editor and the TC101 marker went away
    assert result["appliedFix"] == "Disable TC101 for this line"
    assert not any(m["code"] == "TC101" and m["line"] == 34 for m in result["afterFixMarkers"])
    assert "best = ranked.mean().item()  # noqa: TC101" in result["editorText"], result["editorText"]
    # the probe view on serve.py run as a program: compilations with their trigger and failed
    # guard, graph breaks with GB ids and hits
    view = result["probeView"]
    assert "tclint probe: serve.py" in view and "Compilations" in view and "Graph breaks" in view, view
    assert "guard failed" in view and "GB0124" in view, view


def test_the_last_finding_of_a_file_is_found(server_required, code_server, vsix, tmp_path):
    """examples/tinylm/model.py has three findings at the default confidence (its TC201 at line 46
    is shadowed behind the loop-body break at line 43); the last, TC102 at line 43, is one whose
    Problems row a waiting test need not see rendered (issue 19 item 6).  Read through the
    extension API, it is found and its quick fix applied."""
    result = run_e2e(
        tmp_path,
        CS_DIR=code_server,
        VSIX=vsix,
        PYTHON=PYTHON,
        FILE="tinylm/model.py",
        FIX_LINE="43",
        FIX_COL="16",
        FIX_CODE="TC102",
        FIX_TITLE="Disable TC102 for this line",
    )
    assert [m["code"] for m in result["markers"]] == ["TC102", "TC105", "TC102"], result["markers"]
    assert result["appliedFix"] == "Disable TC102 for this line"
    assert [m["code"] for m in result["afterFixMarkers"]] == ["TC102", "TC105"], result["afterFixMarkers"]
    assert "< self.layerdrop:  # noqa: TC102" in result["editorText"], result["editorText"]


def test_notebook_findings_show_on_their_cell(server_required, code_server, vsix, tmp_path):
    """A notebook opened in VS Code: the server's TC101 reaches the cell (a diagnostic on the
    cell's document, and a squiggle in the notebook editor: see notebook.png)."""
    ws = tmp_path / "nbws"
    shutil.copytree(PROJECT, ws)
    result = run_e2e(
        tmp_path,
        CS_DIR=code_server,
        VSIX=vsix,
        PYTHON=PYTHON,
        WS=str(ws),
        FILE="explore.ipynb",
        NOTEBOOK_CODE="TC101",
    )
    codes = {(m["code"], m["line"]) for m in result["notebookMarkers"]}
    assert ("TC101", 5) in codes and ("TC104", 4) in codes, result["notebookMarkers"]
    assert result["notebookSquiggles"] >= 1
    assert "item()" in result["squiggledCellText"] or "print(" in result["squiggledCellText"], result[
        "squiggledCellText"
    ]


BENCH_OPS = (
    "import torch\n\n\n@torch.compile\ndef run(x: torch.Tensor) -> torch.Tensor:\n    return x.sin() + 1\n"
)
BENCH_INPUTS = (
    "import torch\n\n\ndef inputs_run():\n    for n in (4, 8):\n"
    "        yield {'args': (torch.randn(n),), 'label': f'n={n}'}\n"
)


def test_benchmark_lens_opens_the_bench_report_in_code_server(server_required, code_server, vsix, tmp_path):
    """The server's "Benchmark" lens on a compiled entry point with declared inputs, clicked in a
    real VS Code, runs tclint bench and shows its HTML report (timeline, mode table) in a panel."""
    ws = tmp_path / "benchws"
    ws.mkdir()
    (ws / "ops.py").write_text(BENCH_OPS)
    (ws / "ops_probe_inputs.py").write_text(BENCH_INPUTS)
    (ws / "pyproject.toml").write_text(
        '[project]\nname = "w"\n\n[tool.tclint.bench]\nbackend = "eager"\niterations = 6\ncache-run = false\n'
    )
    result = run_e2e(
        tmp_path,
        CS_DIR=code_server,
        VSIX=vsix,
        PYTHON=PYTHON,
        WS=str(ws),
        FILE="ops.py",
        BENCH_LENS="1",
        BENCH_PALETTE_LINE="6",
    )
    assert "Benchmark" in result["lenses"] and any(t.startswith("Probe") for t in result["lenses"]), result[
        "lenses"
    ]
    view = result["benchView"]
    assert view["timelines"] == 1 and view["calls"] == 1 + 2 + 6, (
        view
    )  # cold, warm-up over 2 buckets, 6 steady
    assert "ops.py::run" in view["text"] and "n=8" in view["text"], view["text"][:2000]
    assert any("tclint bench: ops.py::run" in t for t in result["tabs"]), result["tabs"]
    # from the palette, with the cursor in the function body: the lens above it names the target
    assert "benchmarking ops.py::run" in result["paletteToast"], result["paletteToast"]
    assert result["paletteErrors"] == [], result["paletteErrors"]


VARIANT_MODEL = (
    "import torch\n\n\n@torch.compile\ndef step(x):\n    return x.sin() + 1\n\n\n"
    "def run(xs):\n    for x in xs:\n        step(x)\n        with torch.no_grad():\n            step(x)\n"
)


def test_variant_lens_on_the_compile_site_in_code_server(server_required, code_server, vsix, tmp_path):
    """The static variant prediction (issue 13) in a real VS Code: the compile site of a function
    called with and without gradients carries the "variants: grad/no_grad" code lens."""
    ws = tmp_path / "variantws"
    ws.mkdir()
    (ws / "loop.py").write_text(VARIANT_MODEL)
    (ws / "pyproject.toml").write_text('[project]\nname = "w"\n')
    result = run_e2e(
        tmp_path, CS_DIR=code_server, VSIX=vsix, PYTHON=PYTHON, WS=str(ws), FILE="loop.py", VARIANT_LENS="1"
    )
    lens = [t for t in result["lenses"] if "variant" in t]
    assert lens and "grad" in lens[0] and "no_grad" in lens[0], result["lenses"]
