"""File discovery: .gitignore semantics, exclude patterns and explicitly named paths.

Each case builds a small git-like tree (a ``.git`` folder marks the repository root) and compares
the files ``discover`` yields with what git and ruff would lint.
"""

from __future__ import annotations

import os

import pytest
from tclint.rules.config import ConfigResolver
from tclint.rules.discovery import discover


def _tree(root, files: dict[str, str]) -> None:
    (root / ".git").mkdir()
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _found(root, paths: list[str], force_exclude: bool | None = None, **overrides) -> list[str]:
    resolver = ConfigResolver(overrides=overrides, isolated=True)
    found = discover([str(root / p) for p in paths], resolver, force_exclude)
    return sorted(os.path.relpath(os.path.abspath(d.path), root).replace(os.sep, "/") for d in found)


@pytest.fixture
def repo(tmp_path):
    _tree(
        tmp_path,
        {
            ".gitignore": "generated/\n*.gen.py\nlogs\n!keep.gen.py\n",
            "src/model.py": "",
            "src/model.gen.py": "",
            "src/keep.gen.py": "",
            "src/generated/out.py": "",
            "generated/lib/copy.py": "",
            "logs/run.py": "",
            "src/sub/.gitignore": "local_*.py\n",
            "src/sub/local_a.py": "",
            "src/sub/b.py": "",
            "src/notebook.ipynb": "{}",
        },
    )
    return tmp_path


def test_walk_respects_gitignore(repo):
    assert _found(repo, ["."]) == [
        "src/keep.gen.py",  # re-included by the negation
        "src/model.py",
        "src/notebook.ipynb",
        "src/sub/b.py",  # local_a.py is ignored by the nested .gitignore
    ]


def test_respect_gitignore_off_lints_everything(repo):
    found = _found(repo, ["."], respect_gitignore=False)
    assert "generated/lib/copy.py" in found and "src/sub/local_a.py" in found and "logs/run.py" in found


def test_a_named_folder_is_linted_even_when_a_gitignore_above_lists_it(repo):
    # ruff does the same: naming the folder is the user's explicit request
    assert _found(repo, ["generated"]) == ["generated/lib/copy.py"]
    assert _found(repo, ["generated/lib"]) == ["generated/lib/copy.py"]
    # patterns still apply inside the named folder
    assert _found(repo, ["src"]) == ["src/keep.gen.py", "src/model.py", "src/notebook.ipynb", "src/sub/b.py"]


def test_a_named_file_is_linted_unless_force_exclude(repo):
    assert _found(repo, ["generated/lib/copy.py"]) == ["generated/lib/copy.py"]
    assert _found(repo, ["src/model.gen.py"]) == ["src/model.gen.py"]
    # pre-commit passes every changed file: force-exclude drops the ignored ones, including files
    # inside an ignored folder (a folder-only pattern such as ``generated/``)
    assert _found(repo, ["generated/lib/copy.py"], force_exclude=True) == []
    assert _found(repo, ["src/generated/out.py"], force_exclude=True) == []
    assert _found(repo, ["logs/run.py"], force_exclude=True) == []
    assert _found(repo, ["src/model.gen.py"], force_exclude=True) == []
    assert _found(repo, ["src/sub/local_a.py"], force_exclude=True) == []
    assert _found(repo, ["src/keep.gen.py", "src/model.py"], force_exclude=True) == [
        "src/keep.gen.py",
        "src/model.py",
    ]


def test_exclude_and_extend_exclude(repo):
    assert _found(repo, ["src"], extend_exclude=["sub"]) == [
        "src/keep.gen.py",
        "src/model.py",
        "src/notebook.ipynb",
    ]
    assert _found(repo, ["src/sub/b.py"], force_exclude=True, extend_exclude=["sub"]) == []
    assert _found(repo, ["src/sub/b.py"], extend_exclude=["sub"]) == ["src/sub/b.py"]


def test_each_file_once_in_a_stable_order(repo):
    resolver = ConfigResolver(isolated=True)
    once = [
        d.path for d in discover([str(repo / "src"), str(repo / "src/model.py"), str(repo / "src")], resolver)
    ]
    assert len(once) == len(set(once)) == 4
    again = [d.path for d in discover([str(repo / "src")], resolver)]
    assert again == once


def test_a_folder_the_walk_cannot_list_is_yielded_when_asked(tmp_path, monkeypatch):
    """Permission errors (simulated: the tests run as root) while walking: the folder itself comes
    out with ``unlistable=True`` (the run reports it as TC011) and is skipped silently otherwise;
    a folder removed while the walk runs is skipped either way."""
    import tclint.rules.discovery as discovery

    _tree(tmp_path, {"ok.py": "", "locked/inner.py": "", "gone/x.py": ""})
    real_scandir = os.scandir

    def scandir(path):
        name = os.path.basename(path)
        if name == "locked":
            raise PermissionError(13, "Permission denied", path)
        if name == "gone":
            raise FileNotFoundError(2, "No such file or directory", path)
        return real_scandir(path)

    monkeypatch.setattr(discovery.os, "scandir", scandir)
    resolver = ConfigResolver(isolated=True)
    asked = sorted(
        os.path.relpath(d.path, tmp_path) for d in discover([str(tmp_path)], resolver, unlistable=True)
    )
    assert asked == ["locked", "ok.py"]
    assert [os.path.relpath(d.path, tmp_path) for d in discover([str(tmp_path)], resolver)] == ["ok.py"]


def test_named_path_problems(tmp_path, monkeypatch):
    from tclint.rules.discovery import named_path_problem

    (tmp_path / "m.py").write_text("")
    os.mkfifo(tmp_path / "fifo.py")
    assert named_path_problem(str(tmp_path / "m.py")) is None
    assert named_path_problem(str(tmp_path)) is None
    assert named_path_problem(str(tmp_path / "missing.py")) == "no such file or folder"
    assert named_path_problem(str(tmp_path / "m.py" / "x.py")) == "no such file or folder"
    assert named_path_problem(str(tmp_path / "fifo.py")).startswith("not a regular file (a named pipe)")
    assert named_path_problem("/dev/null").startswith("not a regular file (a character device)")
    real_stat = os.stat

    def denied(path, *a, **k):
        if str(path).endswith("secret.py"):
            raise PermissionError(13, "Permission denied", path)
        return real_stat(path, *a, **k)

    monkeypatch.setattr(os, "stat", denied)
    assert named_path_problem(str(tmp_path / "secret.py")) == "permission denied"
