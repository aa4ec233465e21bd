"""The pre-commit hooks (.pre-commit-hooks.yaml) with the real `pre-commit try-repo`: pre-commit
builds the hook's own venv from this repository (pip, from PyPI), never pulling torch, and runs
`tclint` and `tclint-fix` on a user's repository."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess

import pytest
import yaml

from tests.helpers.editorutil import PROJECT, PYTHON, ROOT

pytestmark = [pytest.mark.editor, pytest.mark.slow]


def git(*args: str, cwd: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def user_repo(tmp_path) -> str:
    repo = tmp_path / "user"
    shutil.copytree(PROJECT, repo)
    (repo / "good.py").write_text("import torch\n\n\n@torch.compile\ndef f(x):\n    return x * 2\n")
    git("init", "-q", cwd=str(repo))
    git("add", ".", cwd=str(repo))
    return str(repo)


def hook_env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PRE_COMMIT")}
    env.update(
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),  # never the user's ~/.cache/pre-commit
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return env


def test_hooks_manifest():
    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml"), encoding="utf-8") as fh:
        hooks = {h["id"]: h for h in yaml.safe_load(fh)}
    assert set(hooks) == {"tclint", "tclint-fix"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["entry"].startswith("tclint check ")
        assert "--force-exclude" in hook["entry"]
        assert set(hook["types_or"]) == {"python", "jupyter"}
        assert not hook.get("additional_dependencies")
    assert (
        "--fix" in hooks["tclint-fix"]["entry"] and "--exit-non-zero-on-fix" in hooks["tclint-fix"]["entry"]
    )


def test_try_repo_runs_both_hooks_without_torch(tools_bin, user_repo, tmp_path):
    env = hook_env(tmp_path)
    proc = subprocess.run(
        [
            os.path.join(tools_bin, "pre-commit"),
            "try-repo",
            ROOT,
            "--all-files",
            "--verbose",
            "--color",
            "never",
        ],
        cwd=user_repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    # tclint reports, with cell-aware notebook locations, and leaves good.py alone
    assert "model.py:10:13: TC101" in out, out
    assert "explore.ipynb:cell 3:4:5: TC104" in out, out
    assert "good.py:" not in out
    # tclint-fix applied the safe fix (the unused noqa) and failed because it changed a file
    with open(os.path.join(user_repo, "model.py"), encoding="utf-8") as fh:
        fixed = fh.read()
    assert "return x + 1\n" in fixed and "# noqa: TC101" not in fixed
    assert "print(" in fixed, "the unsafe fix (removing print) is not applied by the hook"
    assert "tclint (fix)" in out and "files were modified by this hook" in out


def test_pinned_rev_installs_without_torch(tools_bin, user_repo, tmp_path):
    """The usual setup, `repo: URL, rev: TAG` in .pre-commit-config.yaml: the hook venv that
    pre-commit builds holds tclint and libcst, never torch (a multi-GB download from PyPI)."""
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    config = {"repos": [{"repo": ROOT, "rev": rev, "hooks": [{"id": "tclint"}]}]}
    with open(os.path.join(user_repo, ".pre-commit-config.yaml"), "w", encoding="utf-8") as fh:
        yaml.safe_dump(config, fh)
    git("add", ".pre-commit-config.yaml", cwd=user_repo)
    env = hook_env(tmp_path)
    pre_commit = os.path.join(tools_bin, "pre-commit")
    proc = subprocess.run(
        [pre_commit, "run", "--files", "model.py", "good.py", "--color", "never"],
        cwd=user_repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1 and "model.py:10:13: TC101" in proc.stdout, proc.stdout + proc.stderr
    envs = glob.glob(os.path.join(env["PRE_COMMIT_HOME"], "repo*", "py_env-*"))
    assert envs, os.listdir(env["PRE_COMMIT_HOME"])
    site = glob.glob(os.path.join(envs[0], "lib", "python*", "site-packages"))[0]
    installed = {name.lower() for name in os.listdir(site)}
    assert any(n.startswith("libcst") for n in installed)
    assert any(n.startswith("tclint_torch") for n in installed)
    assert not any(n == "torch" or n.startswith("torch-") or n.startswith("nvidia") for n in installed), (
        sorted(installed)
    )
    # a clean file passes (the installed hook is reused: no second install)
    proc = subprocess.run(
        [pre_commit, "run", "--files", "good.py", "--color", "never"],
        cwd=user_repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pre_commit_sets_single_process_mode(tools_bin, user_repo, tmp_path):
    """Under pre-commit (PRE_COMMIT=1 in the hook's environment) tclint analyses in one process:
    pre-commit already runs hooks on file batches in parallel, so no nested process pool."""
    probe = (
        "import os, sys; from tclint.rules.engine import default_jobs\n"
        "class S: size = 5_000_000  # bytes of source\n"
        "print('PRE_COMMIT=%s jobs=%d' % (os.environ.get('PRE_COMMIT'), default_jobs([(S, None)])))\n"
    )
    config = {
        "repos": [
            {
                "repo": "local",
                "hooks": [
                    {
                        "id": "jobs",
                        "name": "jobs",
                        "entry": PYTHON,
                        "args": ["-c", probe],
                        "language": "system",
                        "pass_filenames": False,
                        "always_run": True,
                        "verbose": True,
                    }
                ],
            }
        ]
    }
    with open(os.path.join(user_repo, ".pre-commit-config.yaml"), "w", encoding="utf-8") as fh:
        yaml.safe_dump(config, fh)
    git("add", ".pre-commit-config.yaml", cwd=user_repo)
    proc = subprocess.run(
        [os.path.join(tools_bin, "pre-commit"), "run", "jobs", "--all-files", "--color", "never"],
        cwd=user_repo,
        env=hook_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PRE_COMMIT=1 jobs=1" in proc.stdout, proc.stdout
    # the same tree size outside pre-commit would use a pool (on a machine with >1 core)
    outside = subprocess.run(
        [PYTHON, "-c", probe], capture_output=True, text=True, env=hook_env(tmp_path), timeout=60
    )
    expected = min(os.cpu_count() or 1, 8)
    assert f"PRE_COMMIT=None jobs={expected}" in outside.stdout, outside.stdout + outside.stderr
