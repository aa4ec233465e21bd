"""The real command line on a tree of fuzzed files (generated once from a fixed seed): every
format, --statistics, --diff, --fix, --add-noqa and stdin.  Properties: exit code 0 or 1, nothing
on stderr that looks like a crash, every format valid, every reported position inside its file
(cell), valid files still valid after --fix / --add-noqa, and a second --add-noqa adds nothing."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys

import pytest
from tclint.rules.source import decode_source

from tests.helpers import fuzz_known as known
from tests.helpers.fuzzutil import (
    LONG,
    SCALE,
    Chooser,
    compiles,
    file_lines,
    mutate,
    mutate_gently,
    notebook_seeds,
    python_seeds,
    sarif_validator,
    tried,
)

TCLINT = os.path.join(os.path.dirname(sys.executable), "tclint")
CRASH_MARKERS = ("Traceback", "internal error", "Error:", "Exception")


def tclint(*args: str, cwd: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [TCLINT, *args],
        cwd=cwd,
        capture_output=True,
        input=stdin,
        timeout=300,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode in (0, 1), (proc.returncode, stderr[-3000:])
    assert not any(m in stderr for m in CRASH_MARKERS), stderr[-3000:]
    return proc


def _tree_files(n: int) -> dict[str, bytes]:
    rng = random.Random(20261129 if not LONG else None)
    seeds, nb_seeds = python_seeds(), notebook_seeds()
    files: dict[str, bytes] = {}
    for i in range(n):
        c = Chooser(rng=rng)
        kind = rng.random()
        if kind < 0.1:
            data = mutate(c, rng.choice(nb_seeds), nb_seeds, max_ops=2)
            if known.notebook_open(data):
                continue
            files[f"pkg{i % 5}/nb{i}.ipynb"] = data
        elif kind < 0.45:
            files[f"pkg{i % 5}/harsh{i}.py"] = mutate(c, rng.choice(seeds), seeds)
        else:
            files[f"pkg{i % 5}/gentle{i}.py"] = mutate_gently(c, rng.choice(seeds))
    files["pkg0/__init__.py"] = b"from .gentle1 import *\n"
    files["pkg1/empty.py"] = b""
    files["pkg2/nul.py"] = b"x = 1\x00\n"
    files["pkg3/latin1.py"] = "# -*- coding: latin-1 -*-\nx = 'caf\u00e9'\n".encode("latin-1")
    files["pkg4/cr_only.py"] = b"import torch\r@torch.compile\rdef f(x):\r    print(x)\r    return x\r"
    return files


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> str:
    root = str(tmp_path_factory.mktemp("cli-fuzz") / "tree")
    files = _tree_files(int(150 * min(SCALE, 10)))
    tried("cli: fuzzed files in the tree (each run lints all)", len(files))
    for rel, data in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
    return root


def _lines_of(path: str, cell: int | None) -> list[str]:
    with open(path, "rb") as fh:
        data = fh.read()
    if cell is not None:
        from tests.helpers.fuzzutil import cell_sources

        return file_lines(cell_sources(data)[cell - 1] or "")
    text = decode_source(data).text
    return file_lines(text) if text is not None else [""]


def test_json_and_positions(tree):
    tried("cli: runs on a fuzzed tree")
    proc = tclint(".", "--output-format", "json", "--no-cache", cwd=tree)
    found = json.loads(proc.stdout)
    assert found, "the tree has findings"
    problems = []
    for d in found:
        lines = _lines_of(d["filename"], d["cell"])
        for key in ("location", "end_location"):
            row, col = d[key]["row"], d[key]["column"]
            if not (1 <= row <= len(lines) and 1 <= col <= len(lines[row - 1]) + 1):
                problems.append(f"{d['filename']}:{d['cell']}: {d['code']} {key} {row}:{col}")
    assert problems == []


def test_sarif_validates(tree):
    tried("cli: runs on a fuzzed tree")
    doc = json.loads(tclint(".", "--output-format", "sarif", "--no-cache", cwd=tree).stdout)
    assert [e.message for e in sarif_validator().iter_errors(doc)][:5] == []


@pytest.mark.parametrize("fmt", ["concise", "full", "json-lines", "github"])
def test_other_formats(tree, fmt):
    tried("cli: runs on a fuzzed tree")
    out = tclint(".", "--output-format", fmt, "--no-cache", "--unsafe-fixes", cwd=tree).stdout.decode("utf-8")
    if fmt == "json-lines":
        [json.loads(line) for line in out.splitlines()]
    if fmt == "github":
        assert all(line.startswith("::") for line in out.splitlines())


def test_statistics_diff_and_cache(tree):
    tried("cli: runs on a fuzzed tree", 4)
    tclint(".", "--statistics", "--no-cache", cwd=tree)
    tclint(".", "--diff", "--unsafe-fixes", "--no-cache", cwd=tree)
    cold = tclint(".", "--output-format", "json", cwd=tree).stdout
    warm = tclint(".", "--output-format", "json", cwd=tree).stdout
    assert cold == warm
    shutil.rmtree(os.path.join(tree, ".tclint_cache"))


def _copy(tree: str, tmp_path, name: str) -> str:
    dest = str(tmp_path / name)
    shutil.copytree(tree, dest)
    return dest


def _valid_files(root: str) -> dict[str, bytes]:
    out = {}
    for base, _dirs, names in os.walk(root):
        for n in names:
            if n.endswith(".py"):
                with open(os.path.join(base, n), "rb") as fh:
                    data = fh.read()
                if compiles(data):
                    out[os.path.relpath(os.path.join(base, n), root)] = data
    return out


def test_fix_keeps_valid_files_valid(tree, tmp_path):
    tried("cli: runs on a fuzzed tree", 2)
    work = _copy(tree, tmp_path, "fix")
    valid = _valid_files(work)
    tclint(".", "--fix", "--unsafe-fixes", "--no-cache", cwd=work)
    broken = [rel for rel in valid if not compiles(open(os.path.join(work, rel), "rb").read())]
    assert broken == []
    tclint(".", "--no-cache", cwd=work)


def test_add_noqa_keeps_valid_files_valid_and_is_idempotent(tree, tmp_path):
    tried("cli: runs on a fuzzed tree", 2)
    work = _copy(tree, tmp_path, "noqa")
    valid = _valid_files(work)
    first = tclint(".", "--add-noqa", "--no-cache", cwd=work)
    assert b"Added" in first.stderr
    broken = [rel for rel in valid if not compiles(open(os.path.join(work, rel), "rb").read())]
    assert broken == []
    second = tclint(".", "--add-noqa", "--no-cache", cwd=work)
    assert b"Added 0 noqa directives." in second.stderr, second.stderr


def test_stdin(tree):
    """Garbage on stdin, as an editor integration would send an unsaved buffer."""
    rng = random.Random(7)
    seeds = python_seeds()
    for i in range(int(4 * min(SCALE, 10))):
        tried("cli: runs on a fuzzed tree")
        data = mutate(Chooser(rng=rng), rng.choice(seeds), seeds)
        proc = tclint(
            "-", "--stdin-filename", f"buffer{i}.py", "--output-format", "json", cwd=tree, stdin=data
        )
        json.loads(proc.stdout)
