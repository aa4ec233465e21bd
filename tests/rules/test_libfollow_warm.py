"""A warm re-run while following installed packages (issue 21, "Speed"): the whole-run result is
reused when neither the project's files nor anything the run read outside them changed, and is
always the result of a cold run (the library side re-checked by stat and module lookups)."""

from __future__ import annotations

import json
import os
import sys
import textwrap

from tclint.rules import engine, libfollow
from tclint.rules.cache import Cache
from tclint.rules.config import parse_table
from tclint.rules.report.json_ import to_dict

from tests.helpers.lintutil import _FixedResolver, write_tree

# a package whose __init__ must never run (linting never runs code)
BOOBY_TRAP = "raise SystemExit('imported: linting must never run library code')\n"

LIB = {
    "warmlib/__init__.py": BOOBY_TRAP + "from .layers import *\n",
    "warmlib/layers.py": """
        import torch
        from torch import nn
        from warmlib.ops import scale

        __all__ = ["Layer"]


        class Layer(nn.Module):
            def __init__(self, config=None):
                super().__init__()
                self.use_scale = getattr(config, "use_scale", True)

            def forward(self, x, labels=None):
                y = scale(x)
                if labels is not None:
                    print("loss")
                return y * x.sum().item()
        """,
    "warmlib/ops.py": """
        import torch


        def scale(x):
            if x.sum() > 0:
                return x * 2
            return x
        """,
}
LIB = {name: textwrap.dedent(text) for name, text in LIB.items()}

USER = textwrap.dedent("""
    import torch
    import warmlib

    model = torch.compile(warmlib.Layer())
    model(torch.ones(3))
    """)

OLD = 1_000_000_000  # an mtime long ago: written by the test, not within the racy-timestamp margin


def _backdate(folder: str) -> None:
    for base, _dirs, names in os.walk(folder):
        for name in names:
            os.utime(os.path.join(base, name), (OLD, OLD))


def _setup(tmp_path, monkeypatch, racy_margin: int = 0) -> tuple[str, str, str]:
    """(python, site-packages, project) with ``warmlib`` installed.  The racy-timestamp margin is
    0 (a test cannot backdate a file's ctime) unless given."""
    from tclint.rules import reading

    monkeypatch.setattr(reading, "RACY_MARGIN_NS", racy_margin)
    site = os.path.join(str(tmp_path), "env", "lib", "python3.11", "site-packages")
    write_tree(site, LIB)
    _backdate(site)
    python = os.path.join(str(tmp_path), "env", "bin", "python")
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(proj, {"train.py": USER})
    monkeypatch.setenv("XDG_CACHE_HOME", os.path.join(str(tmp_path), "xdg"))
    monkeypatch.chdir(proj)
    return python, site, proj


def _lint(python: str, proj: str, cached: bool = True) -> list[dict]:
    """One `tclint check train.py` (a new process: the in-memory library facts are dropped)."""
    settings = parse_table({"follow-libraries": True, "probe": {"python": python}}, None)
    settings.root = proj
    libfollow._MEMO.clear()
    cache = Cache(os.path.join(proj, ".tclint_cache")) if cached else None
    result = engine.Linter(_FixedResolver(settings), cache=cache, jobs=1, index_project=False).lint_paths(
        ["train.py"]
    )
    if cache is not None:
        cache.flush()
    return json.loads(json.dumps([to_dict(d) for d in result.diagnostics]))


def _counting_follow(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = libfollow.follow

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(libfollow, "follow", counting)
    return calls


def test_an_unchanged_rerun_reuses_the_result_and_equals_a_cold_run(tmp_path, monkeypatch):
    python, _site, proj = _setup(tmp_path, monkeypatch)
    calls = _counting_follow(monkeypatch)
    first = _lint(python, proj)
    assert [d["code"] for d in first] == ["TC312"] and calls == [1]
    warm = _lint(python, proj)
    assert calls == [1]  # nothing followed again: the stored result, its dependencies re-checked
    assert warm == first == _lint(python, proj, cached=False)
    assert not {"warmlib", "warmlib.layers"} & set(sys.modules)


def test_an_edited_library_file_is_seen_and_equals_a_cold_run(tmp_path, monkeypatch):
    python, site, proj = _setup(tmp_path, monkeypatch)
    calls = _counting_follow(monkeypatch)
    first = _lint(python, proj)
    # the installed copy edited in place (same size would still differ by mtime): the branch goes
    write_tree(site, {"warmlib/ops.py": "def scale(x):\n    return x * 2\n"})
    os.utime(os.path.join(site, "warmlib", "ops.py"), (OLD + 10, OLD + 10))
    warm = _lint(python, proj)
    assert len(calls) == 2
    assert warm == _lint(python, proj, cached=False) != first
    assert "1 likely graph break " in warm[0]["message"]


def test_a_file_only_star_exports_read_is_a_dependency(tmp_path, monkeypatch):
    """`warmlib.Layer` resolves through `from .layers import *` and its `__all__`: the files read for
    that (not only the facts loaded) decide whether the stored result still holds."""
    python, site, proj = _setup(tmp_path, monkeypatch)
    first = _lint(python, proj)
    write_tree(site, {"warmlib/layers.py": LIB["warmlib/layers.py"].replace('["Layer"]', "[]")})
    os.utime(os.path.join(site, "warmlib", "layers.py"), (OLD + 10, OLD + 10))
    warm = _lint(python, proj)
    assert warm == _lint(python, proj, cached=False) != first


def test_a_module_installed_since_is_seen(tmp_path, monkeypatch):
    """A module the last run looked for and did not find is looked up again."""
    python, site, proj = _setup(tmp_path, monkeypatch)
    user = USER + "import extralib\nother = torch.compile(extralib.Net())\n"
    write_tree(proj, {"train.py": user})
    first = _lint(python, proj)
    assert sorted(d["code"] for d in first) == ["TC311", "TC312"]  # extralib's site: unresolved
    extra = "from torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return x.tolist()\n"
    write_tree(
        site, {"extralib/__init__.py": BOOBY_TRAP + "from .net import Net\n", "extralib/net.py": extra}
    )
    _backdate(os.path.join(site, "extralib"))
    warm = _lint(python, proj)
    assert warm == _lint(python, proj, cached=False)
    assert [d["code"] for d in warm] == ["TC312", "TC312"]


def test_a_damaged_dependency_record_is_a_miss(tmp_path, monkeypatch):
    python, _site, proj = _setup(tmp_path, monkeypatch)
    calls = _counting_follow(monkeypatch)
    first = _lint(python, proj)
    records = [
        os.path.join(base, name)
        for base, _dirs, names in os.walk(os.path.join(proj, ".tclint_cache"))
        for name in names
        if name.endswith(".deps.entry")
    ]
    assert len(records) == 1
    with open(records[0], "r+b") as fh:  # truncated: the MAC no longer verifies
        fh.truncate(os.path.getsize(records[0]) // 2)
    assert _lint(python, proj) == first and len(calls) == 2
    assert _lint(python, proj) == first and len(calls) == 2  # written again whole, used again


def test_dependencies_hold_refuses_malformed_records(tmp_path):
    assert not libfollow.dependencies_hold(None)
    assert not libfollow.dependencies_hold({"files": [["x"]], "envs": []})
    assert not libfollow.dependencies_hold({"files": [], "envs": [[["/nonexistent-root"], [], []]]})
    path = os.path.join(str(tmp_path), "a.py")
    write_tree(str(tmp_path), {"a.py": "X = 1\n"})
    stamp = list(libfollow._stat_stamp(path))
    assert libfollow.dependencies_hold({"files": [[path, *stamp]], "envs": []})
    write_tree(str(tmp_path), {"a.py": "X = 22\n"})
    assert not libfollow.dependencies_hold({"files": [[path, *stamp]], "envs": []})


def test_a_library_file_modified_just_before_the_run_is_not_trusted(tmp_path, monkeypatch):
    """Within the racy-timestamp margin a later change could keep the same stat: no result stored."""
    from tclint.rules.reading import RACY_MARGIN_NS

    python, site, proj = _setup(tmp_path, monkeypatch, RACY_MARGIN_NS)
    calls = _counting_follow(monkeypatch)
    write_tree(site, {"warmlib/ops.py": LIB["warmlib/ops.py"]})  # mtime: now
    _lint(python, proj)
    _lint(python, proj)
    assert len(calls) == 2


def test_an_edit_of_the_users_script_walks_no_library_file_and_judges_no_site(tmp_path, monkeypatch):
    """After an edit of the user's script the library side comes from the user-level cache: no
    library file is walked (their facts, the star exports read), no site judged again, and the
    cache folder stays tclint's (entries written before its first flush used to leave it
    unmarked, so the facts were never stored)."""
    from tclint.rules import libconfig

    python, site, proj = _setup(tmp_path, monkeypatch)
    walked: list[str] = []
    judged: list[int] = []
    real_walk, real_judge = engine.analyze_source, libconfig.judge

    def walking(src, *args, **kwargs):
        walked.append(src.path)
        return real_walk(src, *args, **kwargs)

    def judging(*args, **kwargs):
        judged.append(1)
        return real_judge(*args, **kwargs)

    monkeypatch.setattr(engine, "analyze_source", walking)
    monkeypatch.setattr(libconfig, "judge", judging)
    first = _lint(python, proj)
    assert any(p.startswith(site) for p in walked) and judged
    walked.clear()
    judged.clear()
    with open(os.path.join(proj, "train.py"), "a") as fh:
        fh.write("# an edit\n")
    assert _lint(python, proj) == first
    assert [p for p in walked if p.startswith(site)] == [] and judged == []
