"""With follow-libraries on, an edit of the user's script that keeps its interface reuses the
language server's project (the library side is not followed, refined and built again), and the
diagnostics equal those of a fresh workspace on the same text."""

from __future__ import annotations

import os
import textwrap

from tclint.rules import libfollow
from tclint.rules.engine import SourceText
from tclint.server.workspace import Workspace

from tests.helpers.lintutil import write_tree

LIB = {
    "editlib/__init__.py": "raise SystemExit('imported: linting must never run library code')\nfrom .layers import Layer\n",
    "editlib/layers.py": textwrap.dedent("""
        from torch import nn


        class Layer(nn.Module):
            def forward(self, x, labels=None):
                if labels is not None:
                    print("loss")
                return x * x.sum().item()
        """),
}

USER = textwrap.dedent("""
    import torch
    import editlib

    model = torch.compile(editlib.Layer())
    model(torch.ones(3))
    """)


def _workspace(proj: str) -> Workspace:
    ws = Workspace()
    ws.set_folders([proj])
    return ws


def _diagnostics(ws: Workspace, path: str, text: str) -> list[tuple]:
    root = ws.docs[path].root
    diags = root.diagnostics(path, SourceText(path, text))[0]
    return [
        (d.code, d.line, d.message, tuple((r.path, r.span.start.line, r.message) for r in d.related))
        for d in diags
    ]


def test_an_edit_keeping_the_interface_reuses_the_project_with_libraries(tmp_path, monkeypatch):
    site = os.path.join(str(tmp_path), "env", "lib", "python3.11", "site-packages")
    write_tree(site, LIB)
    python = os.path.join(str(tmp_path), "env", "bin", "python")
    proj = os.path.join(str(tmp_path), "proj")
    pyproject = f'[tool.tclint]\nfollow-libraries = true\n\n[tool.tclint.probe]\npython = "{python}"\n'
    write_tree(proj, {"train.py": USER, "pyproject.toml": pyproject})
    monkeypatch.setenv("XDG_CACHE_HOME", os.path.join(str(tmp_path), "xdg"))
    path = os.path.join(proj, "train.py")
    ws = _workspace(proj)
    ws.lint(path, USER, 1)
    first = _diagnostics(ws, path, USER)
    assert [d[0] for d in first] == ["TC312"]
    root = ws.docs[path].root
    before = root._project
    follows: list[int] = []
    real = libfollow.follow

    def counting(*args, **kwargs):
        follows.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(libfollow, "follow", counting)
    edited = USER + "print('done')\n"  # a statement appended: no line moves, the interface is kept
    ws.lint(path, edited, 2)
    got = _diagnostics(ws, path, edited)
    assert root._project is before and follows == []  # swapped in, not followed again
    assert got == first
    fresh = _workspace(proj)
    fresh.lint(path, edited, 1)
    assert _diagnostics(fresh, path, edited) == got
