"""The cache never changes results: a warm run equals a cold run on the same tree, also after
edits, renames, deletions and configuration changes."""

from __future__ import annotations

import os
import shutil
import time

import pytest
from tclint.rules import reading
from tclint.rules.cache import STATS, Cache
from tclint.rules.config import ConfigResolver
from tclint.rules.engine import Linter
from tclint.rules.report.json_ import to_dict

from tests.helpers.lintutil import write_tree

pytestmark = pytest.mark.integration  # runs tclint as a subprocess (make test-fast leaves it out)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def lint(tree: str, cache_dir: str | None, overrides=None):
    cwd = os.getcwd()
    os.chdir(tree)
    try:
        cache = Cache(cache_dir) if cache_dir else None
        result = Linter(ConfigResolver(None, overrides), cache, jobs=1).lint_paths(["."])
        if cache is not None:
            cache.flush()
        return result
    finally:
        os.chdir(cwd)


def run(tree: str, cache_dir: str | None, overrides=None) -> list[dict]:
    return [to_dict(d) for d in lint(tree, cache_dir, overrides).diagnostics]


@pytest.fixture(params=["hash-every-file", "trust-stat"])
def stat_trust(request, monkeypatch):
    """Files written by a test are seconds old, so the stat table would never trust them (they are
    "racily clean"); the second variant trusts any file modified before it was hashed, so that the
    same runs also go through the path that skips reading unchanged files."""
    if request.param == "trust-stat":
        monkeypatch.setattr(reading, "RACY_MARGIN_NS", 0)
    return request.param == "trust-stat"


def settle() -> None:
    time.sleep(0.02)  # past the file system's timestamp tick: what was written is now older than a hash


def test_warm_equals_cold_through_edits_renames_and_config(tmp_path, stat_trust):
    tree = tmp_path / "proj"
    shutil.copytree(os.path.join(ROOT, "examples"), tree)
    cache = str(tmp_path / "cache")
    settle()
    cold = run(str(tree), None)
    assert cold, "the examples have findings"
    assert run(str(tree), cache) == cold  # fills the cache
    warm = lint(str(tree), cache)
    assert [to_dict(d) for d in warm.diagnostics] == cold  # whole-run hit
    assert all(src.from_stat == stat_trust for src in warm.sources.values())
    # an edit in one file changes findings in another (regions cross files)
    layers = tree / "tinylm" / "layers.py"
    layers.write_text(layers.read_text().replace("if entropy(probs) < 0.05:", "if False:"))
    assert run(str(tree), cache) == run(str(tree), None)
    # an edit that keeps the size and puts the old modification time back (ctime still moves)
    before = os.stat(layers)
    layers.write_text(layers.read_text().replace("if False:", "if x < 0:"))
    os.utime(layers, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(layers).st_size == before.st_size
    settle()
    assert run(str(tree), cache) == run(str(tree), None)
    # a rename changes module names and paths
    os.rename(tree / "serve.py", tree / "serving.py")
    settle()
    assert run(str(tree), cache) == run(str(tree), None)
    # a deletion removes a compile site: regions shrink
    os.remove(tree / "train.py")
    warm = run(str(tree), cache)
    assert warm == run(str(tree), None)
    assert not any(d["code"] == "TC310" for d in warm)
    # configuration files and command-line settings
    (tree / "tclint.toml").write_text("ignore = ['TC101']\n[dynamo]\ncapture_scalar_outputs = true\n")
    assert run(str(tree), cache) == run(str(tree), None)
    assert run(str(tree), cache, {"select": ["TC1"]}) == run(str(tree), None, {"select": ["TC1"]})
    (tree / "tclint.toml").unlink()
    assert run(str(tree), cache) == run(str(tree), None)


def test_project_wide_facts_are_reused_after_an_edit(tmp_path):
    write_tree(
        str(tmp_path),
        {
            "m.py": "import torch\n\n@torch.compile\ndef f(x):\n    return g(x)\n\ndef g(x):\n    return x\n",
            "other.py": "def h(x):\n    return x\n",
        },
    )
    cache_dir = str(tmp_path / "c")
    run(str(tmp_path), cache_dir)
    (tmp_path / "m.py").write_text(
        "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return g(x)\n\ndef g(x):\n    return x\n"
    )
    cache = Cache(cache_dir)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = Linter(ConfigResolver(), cache, jobs=1).lint_paths(["."])
    finally:
        os.chdir(cwd)
    assert [d.code for d in result.diagnostics] == ["TC104"]
    assert cache.hits >= 1 and cache.misses == 1  # other.py came from the cache, m.py was re-analysed


def test_another_output_format_reads_the_cached_result(tmp_path, monkeypatch):
    """The output format is how the report is printed, not what it finds: a run in another format
    of an unchanged tree takes the whole result from the cache (it was part of the key, so a text
    run after a JSON run ran the project pass again: transformers package, over 100 s CPU)."""
    write_tree(
        str(tmp_path),
        {"m.py": "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n"},
    )
    cache_dir = str(tmp_path / "c")
    passes = []
    real = Linter._project_pass
    monkeypatch.setattr(
        Linter, "_project_pass", lambda self, *a, **k: passes.append(1) or real(self, *a, **k)
    )
    found = [run(str(tmp_path), cache_dir, {"output_format": fmt}) for fmt in ("json", "concise", "sarif")]
    assert found[0] == found[1] == found[2] and [d["code"] for d in found[0]] == ["TC104"]
    assert len(passes) == 1


def test_stat_table_trusts_only_files_older_than_their_hash(tmp_path):
    """A file hashed within the racy margin of its last change is hashed again next time; a
    damaged table is an empty one."""
    write_tree(
        str(tmp_path / "proj"), {"m.py": "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"}
    )
    cache = str(tmp_path / "cache")
    tree = str(tmp_path / "proj")
    first = run(tree, cache)
    assert [d["code"] for d in first] == ["TC101"]
    again = lint(tree, cache)
    assert not any(src.from_stat for src in again.sources.values())  # just written: racy
    with open(os.path.join(cache, STATS), "wb") as fh:
        fh.write(b"\x80\x05not a pickle")
    assert run(tree, cache) == first


class _RunsCode:
    def __reduce__(self):
        return (os.system, ("id > pwned.txt",))


def test_a_cache_shipped_with_the_tree_runs_no_code(tmp_path, monkeypatch):
    """Issue 18: a repository shipping `.tclint_cache/stats.pkl` (a pickle whose loading runs
    `id > pwned.txt`) ran it on `tclint .`.  Every file in the cache folder, under the old names
    and the new ones, in the old entry format with valid checksums: the run is an uncached one."""
    import hashlib
    import pickle

    tree = tmp_path / "r"
    write_tree(str(tree), {"m.py": "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"})
    cache = str(tree / ".tclint_cache")
    monkeypatch.chdir(tree)
    expected = run(str(tree), None)
    run(str(tree), cache)
    payload = pickle.dumps(_RunsCode())
    paths = [os.path.join(cache, "stats.pkl"), os.path.join(cache, STATS)]
    for base, _dirs, names in os.walk(cache):
        paths += [os.path.join(base, n) for n in names if n.endswith(".entry")]
    for path in paths:
        key = os.path.basename(path).rsplit(".", 1)[0]
        with open(path, "wb") as fh:
            fh.write(
                b"TCLINT-CACHE-1\n"
                + key.encode()
                + b"\n"
                + hashlib.blake2b(payload, digest_size=16).digest()
                + payload
            )
        with open(path[: -len(".entry")] + ".pkl" if path.endswith(".entry") else path, "wb") as fh:
            fh.write(payload)
    assert run(str(tree), cache) == expected
    assert not (tree / "pwned.txt").exists()


@pytest.mark.parametrize("fmt", ["concise", "full", "json", "sarif", "github"])
def test_a_cached_report_prints_what_a_fresh_one_would(tmp_path, fmt):
    """A warm run prints the report saved for the same run and options; any change in the format,
    the options, the files or the working folder prints a fresh one."""
    import subprocess
    import sys

    tree = tmp_path / "proj"
    shutil.copytree(os.path.join(ROOT, "examples"), tree)
    cache = str(tmp_path / "cache")

    def cli(*args: str, cwd=tree, cached=True):
        extra = ["--cache-dir", cache] if cached else ["--no-cache"]
        proc = subprocess.run(
            [sys.executable, "-m", "tclint.rules", *args, *extra],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return proc.returncode, proc.stdout

    fresh = cli(".", "--output-format", fmt, cached=False)
    assert fresh[0] == 1 and fresh[1]
    assert cli(".", "--output-format", fmt) == fresh  # fills the caches
    assert os.listdir(os.path.join(cache, "outputs"))
    assert cli(".", "--output-format", fmt) == fresh  # printed from the saved report
    assert cli(".", "--output-format", fmt, "--exit-zero") == (0, fresh[1])
    assert cli(".", "--output-format", fmt, "--unsafe-fixes") == cli(
        ".", "--output-format", fmt, "--unsafe-fixes", cached=False
    )
    assert cli(".", "--output-format", fmt, "-q") == cli(".", "--output-format", fmt, "-q", cached=False)
    assert cli("proj", "--output-format", fmt, cwd=tmp_path) == cli(
        "proj", "--output-format", fmt, cwd=tmp_path, cached=False
    )
    for elsewhere in ("a", "b/c"):  # the same absolute paths from other folders (SARIF fingerprints differ)
        (tmp_path / elsewhere).mkdir(parents=True)
        args = (str(tree), "--output-format", fmt)
        assert cli(*args, cwd=tmp_path / elsewhere) == cli(*args, cwd=tmp_path / elsewhere, cached=False)
    (tree / "serve.py").write_text((tree / "serve.py").read_text() + "\nprint('edited')\n")
    assert cli(".", "--output-format", fmt) == cli(".", "--output-format", fmt, cached=False)
