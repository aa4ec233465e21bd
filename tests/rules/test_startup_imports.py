"""A warm run imports only what it uses (issue 20): answered from the whole-run cache, ``tclint
check`` reads the tree and the cache and prints the saved report; the analysis, the project
pass, the rule catalog, the facts and diagnostics records, the cache's plain-data codecs, the
suppression scanner, libcst and pygls stay unimported, and the report is the one the cold run
printed."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tclint.rules import registry

pytestmark = pytest.mark.integration  # runs tclint as a subprocess (make test-fast leaves it out)

# runs the CLI, then prints (on stderr) the tclint modules and heavy dependencies it imported
PROBE = (
    "import sys; from tclint.rules.cli import main; status = main(sys.argv[1:]); "
    "print(sorted(m for m in sys.modules if m.startswith(('tclint', 'libcst', 'pygls', 'json'))), file=sys.stderr); "
    "sys.exit(status)"
)
NOT_ON_A_WARM_RUN = (
    "tclint.rules.analysis",
    "tclint.rules.project",
    "tclint.rules.catalog",
    "tclint.rules.registry",
    "tclint.rules.facts",
    "tclint.rules.model",
    "tclint.rules.plaindata",
    "tclint.rules.suppress",
    "tclint.rules.types",
    "tclint.rules.report",
    "libcst",
    "pygls",
    "json",
)


def _run(tree, *args: str) -> tuple[int, str, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "check", *args], capture_output=True, text=True, cwd=tree, timeout=120
    )
    modules = eval(proc.stderr.strip().splitlines()[-1])  # the probe's own last line: a list of names
    return proc.returncode, proc.stdout, modules


@pytest.mark.parametrize("fmt", ["concise", "full"])
def test_a_warm_run_imports_only_what_it_uses(tmp_path, fmt):
    (tmp_path / "pyproject.toml").write_text("[tool.tclint]\n")
    (tmp_path / "model.py").write_text(registry.get("TC101").invalid[0].code)
    (tmp_path / "clean.py").write_text("def f(x):\n    return x + 1\n")
    cold = _run(tmp_path, ".", "--output-format", fmt)
    assert cold[0] == 1 and "TC101" in cold[1], cold
    assert "tclint.rules.analysis" in cold[2]  # the cold run analysed (the probe sees imports)
    warm = _run(tmp_path, ".", "--output-format", fmt)
    if any(m.startswith(NOT_ON_A_WARM_RUN) for m in warm[2]):
        # tclint's own code changed between the runs (the cache is keyed by it: shared trees)
        warm = _run(tmp_path, ".", "--output-format", fmt)
    assert warm[:2] == cold[:2]
    imported = sorted(m for m in warm[2] if m.startswith(NOT_ON_A_WARM_RUN))
    assert imported == [], imported


def test_an_edit_still_imports_the_analysis(tmp_path):
    """The other side of the same check: after an edit the run analyses again (so the probe
    above would see a warm run that is not one)."""
    (tmp_path / "pyproject.toml").write_text("[tool.tclint]\n")
    (tmp_path / "model.py").write_text(registry.get("TC101").invalid[0].code)
    _run(tmp_path, ".")
    (tmp_path / "clean.py").write_text("def f(x):\n    return x + 2\n")
    status, out, modules = _run(tmp_path, ".")
    assert status == 1 and "TC101" in out
    assert "tclint.rules.analysis" in modules and "tclint.rules.project" in modules
