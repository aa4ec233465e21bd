"""Re-walks of the type refinement are reused only with the same text, seeds and answers, in
memory and beside the cache (``tclint.rules.rewalks``), and never change a result."""

from __future__ import annotations

import os

from tclint.rules import engine
from tclint.rules.cache import Cache
from tclint.rules.config import ConfigResolver
from tclint.rules.engine import Linter
from tclint.rules.facts import FileFacts
from tclint.rules.report.json_ import to_dict
from tclint.rules.rewalks import Rewalks
from tclint.rules.types import T_TENSOR

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
    return y


def scale_of(h):
    m = h * 2
    return m
"""


def _facts(tag: str) -> FileFacts:
    return FileFacts(path="p.py", module=tag, is_package=False, root="/")


def test_a_walk_is_reused_only_with_the_same_seeds_and_answers():
    memo = Rewalks()
    walks: list[str] = []

    def compute(tag: str, asks: tuple[str, ...]):
        def run(returns_of):
            walks.append(tag)
            for ref in asks:
                returns_of(ref)
            return _facts(tag)

        return run

    answers = {"m.f": T_TENSOR}
    first = memo.walk("k", "p.py", {"f": {"x": T_TENSOR}}, answers.get, compute("a", ("m.f",)))
    again = memo.walk("k", "p.py", {"f": {"x": T_TENSOR}}, answers.get, compute("b", ("m.f",)))
    assert again is first and walks == ["a"]
    other_seeds = memo.walk("k", "p.py", {"f": {}}, answers.get, compute("c", ("m.f",)))
    assert other_seeds.module == "c"
    other_answer = memo.walk("k", "p.py", {"f": {"x": T_TENSOR}}, {}.get, compute("d", ("m.f",)))
    assert other_answer.module == "d"
    other_text = memo.walk("k2", "p.py", {"f": {"x": T_TENSOR}}, answers.get, compute("e", ("m.f",)))
    assert other_text.module == "e"
    assert memo.walk(None, "p.py", None, answers.get, compute("f", ())).module == "f"  # no key: never kept
    assert walks == ["a", "c", "d", "e", "f"]


def _lint(tree, cache_dir):
    cwd = os.getcwd()
    os.chdir(tree)
    try:
        cache = Cache(str(cache_dir)) if cache_dir else None
        result = Linter(ConfigResolver(), cache, jobs=1).lint_paths(["."])
        if cache is not None:
            cache.flush()
        return [to_dict(d) for d in result.diagnostics]
    finally:
        os.chdir(cwd)


def test_the_cli_stores_rewalks_beside_the_cache(tmp_path, monkeypatch):
    tree = tmp_path / "proj"
    tree.mkdir()
    (tree / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.tclint]\n')
    (tree / "model.py").write_text(MODEL)
    (tree / "helpers.py").write_text(HELPERS)
    cache = tmp_path / "proj" / ".tclint_cache"
    walked: list[str] = []
    real = engine.analyze_source

    def counting(src, *args, **kw):
        if len(args) >= 5 and args[4] is not None or kw.get("seeds") is not None:
            walked.append(os.path.basename(src.path))
        return real(src, *args, **kw)

    monkeypatch.setattr(engine, "analyze_source", counting)
    _lint(
        tree, cache
    )  # (a first run makes this user's cache key: what it computed is stored from the next run on)
    (tree / "helpers.py").write_text(HELPERS + "\n")
    walked.clear()
    cold = _lint(tree, cache)
    assert "helpers.py" in walked  # the helpers are walked again with their parameters' types
    assert any(d["code"] == "TC102" for d in cold)  # `s > 0`: scale_of returns a tensor once seeded
    walked.clear()
    # an edit of model.py that keeps what helpers.py is walked with: helpers.py's re-walk is read back
    (tree / "model.py").write_text(MODEL.replace("        h = x * 2\n", "        h = x * 2  # edited\n"))
    warm = _lint(tree, cache)
    assert "helpers.py" not in walked
    assert warm == _lint(tree, None)
    # an edit that changes the helpers' seeds: walked again, and the result follows
    walked.clear()
    (tree / "model.py").write_text(MODEL.replace("scale_of(torch.ones(4))", "scale_of(0)"))
    changed = _lint(tree, cache)
    assert "helpers.py" in walked
    assert changed == _lint(tree, None)
    assert not any(d["code"] == "TC102" for d in changed)
    # a stored index that does not verify is a miss, never a wrong result
    for dirpath, _dirs, names in os.walk(cache / "rewalks"):
        for name in names:
            with open(os.path.join(dirpath, name), "r+b") as fh:
                fh.seek(-1, os.SEEK_END)
                last = fh.read(1)
                fh.seek(-1, os.SEEK_END)
                fh.write(bytes([last[0] ^ 1]))
    walked.clear()
    (tree / "model.py").write_text(MODEL.replace("        h = x * 2\n", "        h = x * 2  # again\n"))
    assert _lint(tree, cache) == warm
    assert "helpers.py" in walked
