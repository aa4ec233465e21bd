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


def _opened_and_indexed(tree, path: str, text: str):
    """A workspace on ``tree`` with ``path`` open as ``text`` (version 1), its project indexed."""
    ws = Workspace()
    ws.set_folders([str(tree)])
    ws.lint(path, text, 1)
    root = ws.docs[path].root
    while root.index_step(5.0):
        pass
    return ws, root


def _server(tree, walked: list[str]) -> list:
    path = str(tree / "model.py")
    ws, root = _opened_and_indexed(tree, path, MODEL)
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


def _key(d) -> tuple:
    return (d.code, d.span, d.message, d.severity)


def test_a_rewalk_kept_from_an_earlier_edit_is_what_the_next_edit_is_diffed_against(tmp_path, monkeypatch):
    """An edit, a line added, both undone (the undone text's re-walk is the one kept from the
    first lint), then an edit elsewhere: the buffer's re-walk analyzer takes the kept re-walk as
    its last analysis, so that re-walk covers only the last edit's statement (before: it was
    diffed against the text with the line added, spanning both places, every fact below moved),
    and the diagnostics are those of a fresh server on the same text."""
    from tclint.server.incremental import IncrementalAnalyzer

    tree = tmp_path / "proj"
    tree.mkdir()
    (tree / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.tclint]\n')
    (tree / "model.py").write_text(MODEL)
    middle = "".join(f"\n\ndef unused{i}(v):\n    w = v + {i}\n    return w\n" for i in range(6))
    helpers = HELPERS.replace("\n\ndef scale_of", middle + "\n\ndef scale_of")
    (tree / "helpers.py").write_text(helpers)
    changes: list[tuple[bool, object]] = []
    real = IncrementalAnalyzer.analyze

    def recording(self, text, full=False, returns_of=None):
        out = real(self, text, full, returns_of)
        changes.append((self.rewalk, out.changed))
        return out

    monkeypatch.setattr(IncrementalAnalyzer, "analyze", recording)
    path = str(tree / "helpers.py")
    ws, root = _opened_and_indexed(tree, path, helpers)
    ws.lint(path, helpers, 2)
    typed = helpers.replace("    y = y * 2\n", "    y = y * 3\n")
    added = helpers.replace("    y = y * 2\n", "    y = y * 3\n    z = 1\n")
    for version, text in enumerate((typed, added, helpers), start=3):
        ws.lint(path, text, version)
    assert any(rewalk and c is not None for rewalk, c in changes)  # the buffer is re-walked
    changes.clear()
    last = helpers.replace("    m = h * 2\n", "    m = h * 4\n")
    got = ws.lint(path, last, 6).diagnostics
    plain = [c for rewalk, c in changes if not rewalk]
    rewalks = [c for rewalk, c in changes if rewalk]
    assert plain and rewalks, changes
    assert all(c == plain[0] for c in rewalks), changes  # diffed against the undone text
    fresh = Workspace()
    fresh.set_folders([str(tree)])
    fresh.lint(path, last, 1)
    while fresh.docs[path].root.index_step(5.0):
        pass
    assert sorted(map(_key, got)) == sorted(map(_key, fresh.lint(path, last, 2).diagnostics))
