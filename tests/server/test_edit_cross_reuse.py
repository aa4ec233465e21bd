"""An edit of an open buffer that keeps its interface (the project is kept, its facts swapped in) and
its exports (what other files' results read of its candidates, ``rerun.export_digest``) keeps the
cross-file findings: the cross-file rules are not run again -- with follow-libraries, that is TC312
over the whole library side.  An edit that changes the exports (a break in a ``fullgraph`` region)
runs them again.  Either way the diagnostics equal those of a fresh workspace on the same text."""

from __future__ import annotations

import os
import textwrap

from tclint.rules import reading
from tclint.rules.engine import SourceText
from tclint.server import entries as entries_mod
from tclint.server import workspace as workspace_mod
from tclint.server.workspace import Workspace

from tests.helpers.lintutil import write_tree
from tests.server.test_warm_open import LIB, USER, _age

FULLGRAPH = textwrap.dedent("""
    import torch


    def step(x):
        y = x * 2
        scale = 1.0
        return y


    compiled = torch.compile(step, fullgraph=True)
    compiled(torch.ones(3))
    """)


def _diagnostics(ws: Workspace, path: str, text: str) -> list[tuple]:
    root = ws.docs[path].root
    diags = root.diagnostics(path, SourceText(path, text))[0]
    return [
        (d.code, d.line, d.message, tuple((r.path, r.span.start.line, r.message) for r in d.related))
        for d in diags
    ]


def _entries(ws: Workspace, path: str) -> list:
    """The code lenses and hovers of the file (their variant summaries read ``variants``)."""
    root = ws.docs[path].root
    project, _cross = root.project()
    return entries_mod.compute(path, root.current_facts(path), project)


def _fresh(proj: str, path: str, text: str) -> tuple[list[tuple], list]:
    ws = Workspace()
    ws.set_folders([proj])
    ws.lint(path, text, 1)
    return _diagnostics(ws, path, text), _entries(ws, path)


def _counting(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = workspace_mod.project_diagnostics

    def counting(project):
        calls.append(1)
        return real(project)

    monkeypatch.setattr(workspace_mod, "project_diagnostics", counting)
    return calls


def test_an_edit_keeping_the_exports_keeps_the_cross_file_findings(tmp_path, monkeypatch):
    site = os.path.join(str(tmp_path), "env", "lib", "python3.11", "site-packages")
    write_tree(site, LIB)
    python = os.path.join(str(tmp_path), "env", "bin", "python")
    proj = os.path.join(str(tmp_path), "proj")
    pyproject = f'[tool.tclint]\nfollow-libraries = true\n\n[tool.tclint.probe]\npython = "{python}"\n'
    write_tree(
        proj,
        {"train.py": USER, "helpers.py": "def scale(x):\n    return x * 2\n", "pyproject.toml": pyproject},
    )
    _age(site)
    monkeypatch.setenv("XDG_CACHE_HOME", os.path.join(str(tmp_path), "xdg"))
    monkeypatch.setattr(reading, "RACY_MARGIN_NS", 0)
    path = os.path.join(proj, "train.py")
    ws = Workspace()
    ws.set_folders([proj])
    ws.lint(path, USER, 1)
    assert [d[0] for d in _diagnostics(ws, path, USER)] == ["TC312"]
    root = ws.docs[path].root
    before = root._project
    calls = _counting(monkeypatch)
    edited = USER + "print(model)\n"  # a statement appended: interface and exports kept
    ws.lint(path, edited, 2)
    got = _diagnostics(ws, path, edited), _entries(ws, path)
    assert root._project is before and calls == []  # swapped in; TC312 and the others not run again
    monkeypatch.undo()
    monkeypatch.setattr(reading, "RACY_MARGIN_NS", 0)
    monkeypatch.setenv("XDG_CACHE_HOME", os.path.join(str(tmp_path), "xdg"))
    assert got == _fresh(proj, path, edited)


def test_an_edit_changing_the_exports_runs_the_cross_file_rules_again(tmp_path, monkeypatch):
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(proj, {"train.py": FULLGRAPH, "pyproject.toml": "[tool.tclint]\n"})
    path = os.path.join(proj, "train.py")
    ws = Workspace()
    ws.set_folders([proj])
    # same line, same return type (``step`` is typed from ``compiled(torch.ones(3))``, so an edit
    # that made it return something else would change the interface): a break in the region
    broken = FULLGRAPH.replace("scale = 1.0", "print(x)  ")
    ws.lint(path, FULLGRAPH, 1)
    root = ws.docs[path].root
    for n, text in enumerate([broken, FULLGRAPH, broken], start=2):
        before = root._project
        calls = _counting(monkeypatch)
        ws.lint(path, text, n)
        got = _diagnostics(ws, path, text), _entries(ws, path)
        monkeypatch.undo()
        assert root._project is before and calls == [1]  # swapped in, cross-file rules run again
        assert got == _fresh(proj, path, text)
        assert ("TC307" in [d[0] for d in got[0]]) == (text == broken)
