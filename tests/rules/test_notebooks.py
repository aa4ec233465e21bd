"""Jupyter notebooks end to end through the CLI: every output format keeps the cell, and the
positions point at the right text inside that cell (magics blanked, markdown cells counted)."""

from __future__ import annotations

import json
import os

import nbformat
import pytest

from tests.helpers.editorutil import tclint

pytestmark = pytest.mark.integration  # runs tclint as a subprocess (make test-fast leaves it out)

NB = "explore.ipynb"


def cell_line(project: str, cell: int, line: int) -> str:
    nb = nbformat.read(os.path.join(project, NB), as_version=4)
    nbformat.validate(nb)
    return nb.cells[cell - 1].source.split("\n")[line - 1]


@pytest.fixture
def findings(project):
    """{code: (cell, line, column 1-based)} from the JSON output, checked against the cell text."""
    out = json.loads(tclint(NB, "--output-format", "json", cwd=project, check_rc=1).stdout)
    got = {d["code"]: (d["cell"], d["location"]["row"], d["location"]["column"]) for d in out}
    assert set(got) == {"TC101", "TC104"}
    return got


def test_json_has_cell_index_and_cell_relative_positions(project, findings):
    cell, line, col = findings["TC104"]
    assert (cell, line) == (3, 4)  # markdown cell 1 is counted, as Jupyter and ruff number cells
    assert cell_line(project, cell, line)[col - 1 :].startswith("print(")
    cell, line, col = findings["TC101"]
    assert cell_line(project, cell, line)[col - 1 :].startswith("y.sum().item()")


def test_text_formats_show_cell(project, findings):
    concise = tclint(NB, cwd=project, check_rc=1).stdout
    cell, line, col = findings["TC104"]
    assert f"{NB}:cell {cell}:{line}:{col}: TC104" in concise
    full = tclint(NB, "--output-format", "full", cwd=project, check_rc=1).stdout
    assert f"{NB}:cell {cell}:{line}:{col}: TC104" in full


def test_json_lines_sarif_github_keep_the_cell(project, findings):
    lines = [
        json.loads(x)
        for x in tclint(NB, "--output-format", "json-lines", cwd=project, check_rc=1).stdout.splitlines()
    ]
    assert {(d["code"], d["cell"]) for d in lines} == {("TC101", 3), ("TC104", 3)}
    sarif = json.loads(tclint(NB, "--output-format", "sarif", cwd=project, check_rc=1).stdout)
    for r in sarif["runs"][0]["results"]:
        cell, line, col = findings[r["ruleId"]]
        region = r["locations"][0]["physicalLocation"]["region"]
        assert (r["properties"]["cell"], region["startLine"], region["startColumn"]) == (cell, line, col)
        assert r["locations"][0]["logicalLocations"] == [{"name": f"cell {cell}", "kind": "module"}]
    github = tclint(NB, "--output-format", "github", cwd=project, check_rc=1).stdout
    cell, line, col = findings["TC104"]
    assert f"::cell {cell}:{line}:{col}: TC104" in github


def test_magics_and_non_python_cells_do_not_break_analysis(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell("%%bash\necho $((1 + 2))"),
        nbformat.v4.new_code_cell("%load_ext autoreload\nimport torch\nx = !ls\nfiles = %sx ls"),
        nbformat.v4.new_code_cell("%%time\n@torch.compile\ndef f(t):\n    return t.item()"),
        nbformat.v4.new_raw_cell("print(1)"),
    ]
    nbformat.write(nb, str(tmp_path / "m.ipynb"))
    out = json.loads(tclint("m.ipynb", "--output-format", "json", cwd=str(tmp_path), check_rc=1).stdout)
    assert [(d["code"], d["cell"], d["location"]["row"]) for d in out] == [("TC101", 3, 4)]


def test_suppression_inside_a_cell(project):
    nb = nbformat.read(os.path.join(project, NB), as_version=4)
    nb.cells[2].source = nb.cells[2].source.replace("print(y.shape)", "print(y.shape)  # noqa: TC104")
    nbformat.write(nb, os.path.join(project, NB))
    out = json.loads(tclint(NB, "--output-format", "json", cwd=project, check_rc=1).stdout)
    assert [d["code"] for d in out] == ["TC101"]
