"""CI integrations: SARIF 2.1.0 (validated offline against the official schema) and GitHub
workflow annotations, on a project with a Python file, a safe and an unsafe fix, and a notebook."""

from __future__ import annotations

import json
import os
import re
from urllib.parse import unquote, urlparse

import jsonschema
import pytest

from tests.helpers.editorutil import DATA, UNUSED_NOQA, tclint

pytestmark = pytest.mark.integration  # runs tclint as a subprocess (make test-fast leaves it out)

SCHEMA_PATH = os.path.join(DATA, "sarif-2.1.0.schema.json")


@pytest.fixture(scope="module")
def sarif_validator():
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        schema = json.load(fh)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema_errors(validator, doc) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def test_vendored_schema_is_the_sarif_2_1_0_schema(sarif_validator):
    schema = sarif_validator.schema
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]
    # the validator is not vacuous: the mistakes tools make are caught
    bad = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "x"}},
                "results": [
                    {
                        "message": {"text": "m"},
                        "level": "bogus",
                        "locations": [
                            {
                                "physicalLocation": {
                                    "artifactLocation": {"uri": "a.py"},
                                    "region": {"startLine": 0},
                                }
                            }
                        ],
                    }
                ],
            }
        ],
    }
    errors = schema_errors(sarif_validator, bad)
    assert any("bogus" in e for e in errors), errors
    assert any("startLine" in e or "minimum" in e for e in errors), errors
    assert schema_errors(sarif_validator, {"version": "2.1.0", "runs": [{"tool": {}}]})


def test_sarif_output_validates_with_notebook_and_fixes(project, sarif_validator):
    proc = tclint(".", "--output-format", "sarif", "--unsafe-fixes", cwd=project, check_rc=1)
    doc = json.loads(proc.stdout)
    assert schema_errors(sarif_validator, doc) == []

    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert {r["ruleId"] for r in results} >= {"TC101", "TC104", UNUSED_NOQA}
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        loc = r["locations"][0]["physicalLocation"]
        parsed = urlparse(loc["artifactLocation"]["uri"])
        assert parsed.scheme == "file" and os.path.isabs(unquote(parsed.path))
        assert loc["region"]["startLine"] >= 1 and loc["region"]["startColumn"] >= 1
    for rule in rules:
        assert rule["shortDescription"]["text"]
        # helpUri only for public pages (PyTorch's GB pages); every rule carries its full docs
        assert rule.get("helpUri", "https://").startswith("https://")
        assert "## What it does" in rule["help"]["markdown"]
    assert any(r.get("helpUri", "").startswith("https://meta-pytorch.github.io/") for r in rules)

    by_code_file = {
        (r["ruleId"], os.path.basename(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])): r
        for r in results
    }
    # the notebook keeps its cell: a property, a logical location and the message
    nb = by_code_file[("TC104", "explore.ipynb")]
    assert nb["properties"]["cell"] == 3
    assert nb["locations"][0]["logicalLocations"][0]["name"] == "cell 3"
    assert nb["locations"][0]["physicalLocation"]["region"]["startLine"] == 4  # line within the cell
    assert "[cell 3]" in nb["message"]["text"]
    # fixes: the safe one (unused noqa) and the unsafe one (remove the print), with their edits
    safe = by_code_file[(UNUSED_NOQA, "model.py")]["fixes"][0]
    assert "(safe)" in safe["description"]["text"]
    replacement = safe["artifactChanges"][0]["replacements"][0]
    assert replacement["deletedRegion"]["startLine"] == 15
    unsafe = by_code_file[("TC104", "model.py")]["fixes"][0]
    assert "(unsafe)" in unsafe["description"]["text"]
    # fingerprints are stable across runs (code scanning tracks alerts by them)
    again = json.loads(tclint(".", "--output-format", "sarif", cwd=project).stdout)
    assert [r["partialFingerprints"] for r in again["runs"][0]["results"]] == [
        r["partialFingerprints"] for r in results
    ]


def test_sarif_with_no_findings_validates(tmp_path, sarif_validator):
    (tmp_path / "ok.py").write_text("import torch\n\n\n@torch.compile\ndef f(x):\n    return x * 2\n")
    doc = json.loads(tclint(".", "--output-format", "sarif", cwd=str(tmp_path), check_rc=0).stdout)
    assert schema_errors(sarif_validator, doc) == []
    assert doc["runs"][0]["results"] == []


ANNOTATION = re.compile(r"^::(error|warning|notice) (?P<props>[^:]*)::(?P<message>.*)$")


def parse_annotation(line: str) -> tuple[str, dict[str, str], str]:
    m = ANNOTATION.match(line)
    assert m, line
    props = dict(p.split("=", 1) for p in m.group("props").split(","))
    return m.group(1), props, m.group("message")


def test_github_annotations(project):
    proc = tclint(".", "--output-format", "github", cwd=project, check_rc=1)
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 5
    parsed = [parse_annotation(line) for line in lines]
    model = [(lvl, p, m) for lvl, p, m in parsed if p["file"] == "model.py"]
    level, props, message = next(x for x in model if "TC101" in x[2])
    assert level == "warning"
    assert props["title"] == "tclint (TC101)"
    assert (props["line"], props["col"], props["endLine"]) == ("10", "13", "10")
    assert message.startswith("10:13: TC101 ")
    nb = [x for x in parsed if x[1]["file"] == "explore.ipynb"]
    assert nb and all(m.startswith("cell 3:") for _, _, m in nb)


def test_github_annotations_escape_workflow_syntax(tmp_path):
    odd = tmp_path / "a,b:c%d.py"
    odd.write_text("import torch\n\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n")
    proc = tclint(".", "--output-format", "github", cwd=str(tmp_path), check_rc=1)
    (line,) = proc.stdout.strip().splitlines()
    _level, props, _message = parse_annotation(line)
    assert props["file"] == "a%2Cb%3Ac%25d.py"
