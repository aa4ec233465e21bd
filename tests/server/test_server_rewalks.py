"""The language server reads the type refinement's re-walks the command line stored beside its
cache (``tclint.rules.rewalks``), never writes them, and gets the same diagnostics as without."""

from __future__ import annotations

import os
import shutil

from tclint.rules.cache import Cache
from tclint.rules.config import ConfigResolver
from tclint.rules.engine import Linter
from tclint.server import workspace
from tclint.server.workspace import Workspace

MODEL = """import torch
from helpers import gate, scale_of


class Block(torch.nn.Module):
    def forward(self, x):
        h = x * 2
        g = gate(h)
        s = scale_of(torch.ones(4))
        if s > 0:
            g = g * 2
        return g


model = torch.compile(Block())
"""
HELPERS = """import torch


def gate(h):
    y = h.mean(-1)
    if h.sum() > 0:
        y = y * 2
    return y


def scale_of(h):
    m = h * 2
    return m
"""


def _cli(tree) -> None:
    cwd = os.getcwd()
    os.chdir(tree)
    try:
        cache = Cache(str(tree / ".tclint_cache"))
        Linter(ConfigResolver(), cache, jobs=1).lint_paths(["."])
        cache.flush()
    finally:
        os.chdir(cwd)


def _stored(tree) -> list[str]:
    out = []
    for dirpath, _dirs, names in os.walk(tree / ".tclint_cache"):
        out.extend(os.path.join(dirpath, n) for n in names)
    return sorted(out)


def _server(tree, walked: list[str]) -> list:
    ws = Workspace()
    ws.set_folders([str(tree)])
    path = str(tree / "model.py")
    ws.lint(path, MODEL, 1)
    root = ws.docs[path].root
    while root.index_step(5.0):
        pass
    out = ws.lint(path, MODEL + "\n", 2).diagnostics
    return [*out, *root.diagnostics(str(tree / "helpers.py"), workspace.SourceText("h", HELPERS))[0]]


def test_the_server_reads_the_clis_rewalks_and_writes_none(tmp_path, monkeypatch):
    tree = tmp_path / "proj"
    tree.mkdir()
    (tree / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.tclint]\n')
    (tree / "model.py").write_text(MODEL)
    (tree / "helpers.py").write_text(HELPERS)
    _cli(tree)  # (makes this user's cache key: what the next run computes is stored)
    (tree / "helpers.py").write_text(HELPERS + "\n")
    _cli(tree)
    bare = tmp_path / "bare"
    shutil.copytree(tree, bare, ignore=shutil.ignore_patterns(".tclint_cache"))
    walked: list[str] = []
    real = workspace.analyze_source

    def counting(src, *args, **kw):
        if len(args) >= 5 and args[4] is not None or kw.get("seeds") is not None:
            walked.append(os.path.basename(src.path))
        return real(src, *args, **kw)

    monkeypatch.setattr(workspace, "analyze_source", counting)
    without = _server(bare, walked)
    assert "helpers.py" in walked  # walked again with its parameters' types (gate's h)
    assert any(d.code == "TC102" for d in without)
    before = _stored(tree)
    walked.clear()
    with_cache = _server(tree, walked)
    assert "helpers.py" not in walked  # read back from the command line's re-walks
    assert [(d.code, d.span, d.message) for d in with_cache] == [
        (d.code, d.span, d.message.replace(str(bare), str(tree))) for d in without
    ]
    assert _stored(tree) == before  # nothing written
