"""The linted code's problems are findings, not noise on tclint's stderr, and the environment's
warning filters do not change the results (fuzz finding #9, fixed)."""

from __future__ import annotations

import json

import pytest

from tests.helpers.relutil import tclint

# Valid Python 3.11 that makes `ast.parse` warn: "invalid decimal literal" (SyntaxWarning),
# "invalid escape sequence" (DeprecationWarning in 3.11, SyntaxWarning from 3.12).
WARNS = 'import re\n\nx = 1if True else 2\npattern = re.compile("\\d+")\n'


@pytest.fixture
def project(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "warns.py").write_text(WARNS)
    (tmp_path / "model.py").write_text(
        "import torch\n\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n"
    )
    return str(tmp_path)


def test_no_warnings_about_the_linted_code_on_stderr(project):
    proc = tclint(".", "--no-cache", cwd=project)
    assert proc.returncode == 1
    assert proc.stderr.decode() == ""


@pytest.mark.parametrize("filters", ["error", "error::SyntaxWarning", "error::DeprecationWarning"])
def test_warnings_as_errors_do_not_change_the_results(project, filters):
    """PYTHONWARNINGS=error is common in CI; valid files must not become syntax errors."""
    expected = json.loads(tclint(".", "--no-cache", "--output-format", "json", cwd=project).stdout)
    proc = tclint(".", "--no-cache", "--output-format", "json", cwd=project, PYTHONWARNINGS=filters)
    assert json.loads(proc.stdout) == expected
    assert [d["code"] for d in expected] == ["TC104"]
