"""`tclint --add-noqa`: adopting tclint on an existing codebase.  After it, tclint reports nothing,
every file still parses, the code itself is unchanged, and a second run adds nothing."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil

import pytest

from tests.helpers.editorutil import ROOT, UNUSED_NOQA, tclint

pytestmark = pytest.mark.integration  # runs tclint as a subprocess (make test-fast leaves it out)

EXAMPLES = os.path.join(ROOT, "examples")


def python_files(root: str) -> list[str]:
    return sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files if f.endswith(".py"))


def strip_noqa(text: str) -> str:
    return re.sub(r"\s*# noqa(: [A-Z0-9, ]+)?$", "", text, flags=re.M)


def adopt(tree: str) -> None:
    before = {p: open(p, encoding="utf-8").read() for p in python_files(tree)}
    first = tclint(".", "--add-noqa", cwd=tree, check_rc=0)
    added = int(re.search(r"Added (\d+) noqa", first.stderr).group(1))
    assert added > 0, first.stderr
    # add-noqa never suppresses the unused-suppression rule (an unused suppression is removed, not suppressed):
    # stale ones that were there before are cleared by its safe fix
    left = json.loads(tclint(".", "--output-format", "json", "--exit-zero", cwd=tree).stdout)
    if any(d["code"] == UNUSED_NOQA for d in left):
        tclint(".", "--fix", "--exit-zero", cwd=tree, check_rc=0)
    # nothing left in Python files
    left = json.loads(tclint(".", "--output-format", "json", "--exit-zero", cwd=tree).stdout)
    assert [d for d in left if d["filename"].endswith(".py")] == []
    for path, old in before.items():
        new = open(path, encoding="utf-8").read()
        ast.parse(new, path)  # still parses
        assert strip_noqa(new) == strip_noqa(old), f"{path}: more than noqa comments changed"
    again = tclint(".", "--add-noqa", cwd=tree, check_rc=0)
    assert "Added 0 noqa directives" in again.stderr


def test_add_noqa_on_the_sample_project(project):
    adopt(project)


def test_add_noqa_on_a_copy_of_examples(tmp_path):
    if not python_files(EXAMPLES):
        pytest.fail("examples/ has no Python files")
    tree = str(tmp_path / "examples")
    shutil.copytree(EXAMPLES, tree)
    adopt(tree)


def test_add_noqa_also_covers_notebooks(project):
    import nbformat

    tclint(".", "--add-noqa", cwd=project, check_rc=0)
    left = json.loads(tclint(".", "--output-format", "json", "--exit-zero", cwd=project).stdout)
    assert [d for d in left if d["code"] != UNUSED_NOQA] == []
    nb = nbformat.read(os.path.join(project, "explore.ipynb"), as_version=4)
    nbformat.validate(nb)  # still a valid notebook
    source = nb.cells[2].source
    assert "print(y.shape)  # noqa: TC104" in source and "# noqa: TC101" in source
    assert nb.cells[1].source.startswith("%matplotlib inline")  # magics untouched
