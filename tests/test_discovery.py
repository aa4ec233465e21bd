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
    assert _found(repo, ["src/keep.gen.py", "src/model.py"], force_exclude=True) == ["src/keep.gen.py", "src/model.py"]


def test_exclude_and_extend_exclude(repo):
    assert _found(repo, ["src"], extend_exclude=["sub"]) == ["src/keep.gen.py", "src/model.py", "src/notebook.ipynb"]
    assert _found(repo, ["src/sub/b.py"], force_exclude=True, extend_exclude=["sub"]) == []
    assert _found(repo, ["src/sub/b.py"], extend_exclude=["sub"]) == ["src/sub/b.py"]


def test_each_file_once_in_a_stable_order(repo):
    resolver = ConfigResolver(isolated=True)
    once = [d.path for d in discover([str(repo / "src"), str(repo / "src/model.py"), str(repo / "src")], resolver)]
    assert len(once) == len(set(once)) == 4
    again = [d.path for d in discover([str(repo / "src")], resolver)]
    assert again == once
