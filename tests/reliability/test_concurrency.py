"""Two tclint runs on the same tree at once, sharing the cache, give the same results as one run
without a cache; a run killed at any moment (SIGKILL: no cleanup at all), including while it writes
the cache, leaves a cache that later runs use correctly."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time

import pytest

from tests.helpers.fuzzutil import Chooser, mutate_gently, python_seeds
from tests.helpers.relutil import ROOT, TCLINT, env, tclint

pytestmark = pytest.mark.slow


def make_tree(root: str, packages: int = 40) -> None:
    """A project of `packages` copies of the example package and scripts, plus gently mutated
    files (fixed seed): ~400 files with findings, cross-file regions and suppressions."""
    os.makedirs(os.path.join(root, ".git"))
    rng = random.Random(42)
    seeds = python_seeds()
    for i in range(packages):
        pkg = os.path.join(root, f"app{i}")
        shutil.copytree(os.path.join(ROOT, "examples"), pkg)
        for j in range(3):
            with open(os.path.join(pkg, f"mutant{j}.py"), "wb") as fh:
                fh.write(mutate_gently(Chooser(rng=rng), rng.choice(seeds)))


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> str:
    root = str(tmp_path_factory.mktemp("concurrency") / "tree")
    make_tree(root)
    return root


@pytest.fixture(scope="module")
def reference(tree) -> dict[str, bytes]:
    """What an uncached run prints, per format."""
    out = {}
    for fmt in ("json", "concise"):
        proc = tclint(".", "--output-format", fmt, "--no-cache", cwd=tree)
        assert proc.returncode == 1, proc.stderr
        out[fmt] = proc.stdout
    return out


def _start(cwd: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [TCLINT, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env()
    )


def _finish(proc: subprocess.Popen) -> bytes:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1 and not err.strip(), err.decode()[-2000:]
    return out


def _clear_cache(tree: str) -> None:
    shutil.rmtree(os.path.join(tree, ".tclint_cache"), ignore_errors=True)


@pytest.mark.parametrize("state", ["cold", "warm"])
def test_two_runs_at_once(tree, reference, state):
    """Cold: both compute and write the same entries at the same time.  Warm: both read while a
    third writes."""
    _clear_cache(tree)
    if state == "warm":
        tclint(".", cwd=tree)
    for _ in range(3):
        a, b = _start(tree, ".", "--output-format", "json"), _start(tree, ".", "--output-format", "json")
        assert _finish(a) == reference["json"]
        assert _finish(b) == reference["json"]
    assert tclint(".", "--output-format", "json", cwd=tree).stdout == reference["json"]


def test_runs_with_different_settings_and_paths_at_once(tree, reference):
    """Four runs on one cache: two formats, the whole tree and one package, with and without a
    selection: each prints what it prints alone without a cache."""
    _clear_cache(tree)
    alone = {
        ("app3", "--select", "TC1", "--output-format", "json"): tclint(
            "app3", "--select", "TC1", "--output-format", "json", "--no-cache", cwd=tree
        ).stdout,
        (".", "--output-format", "concise"): reference["concise"],
        (".", "--output-format", "json"): reference["json"],
        ("app3", "--output-format", "json"): tclint(
            "app3", "--output-format", "json", "--no-cache", cwd=tree
        ).stdout,
    }
    procs = {args: _start(tree, *args) for args in alone}
    for args, proc in procs.items():
        assert _finish(proc) == alone[args], args


def _cache_entries(tree: str) -> list[str]:
    out = []
    for base, _dirs, names in os.walk(os.path.join(tree, ".tclint_cache")):
        out.extend(os.path.join(base, n) for n in names)
    return out


def _kill_when(tree: str, ready, max_wait: float = 60) -> bool:
    """Start a run and SIGKILL it as soon as ``ready()``; False if it finished first."""
    proc = _start(tree, ".", "--output-format", "json")
    deadline = time.monotonic() + max_wait
    while proc.poll() is None and not ready() and time.monotonic() < deadline:
        time.sleep(0.002)
    killed = proc.poll() is None
    if killed:
        proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    return killed


@pytest.mark.parametrize(
    "moment",
    ["at start", "after 0.3 s", "after 0.8 s", "first cache file", "10 cache files", "100 cache files"],
)
def test_killed_run_leaves_a_valid_cache(tree, reference, moment):
    """SIGKILL while parsing, or in the middle of writing the cache: the next run (cache on)
    prints exactly what an uncached run prints, and so does the one after it (warm)."""
    _clear_cache(tree)
    start = time.monotonic()
    if moment.startswith("after"):
        delay = float(moment.split()[1])
        killed = _kill_when(tree, lambda: time.monotonic() - start > delay)
    elif moment == "at start":
        killed = _kill_when(tree, lambda: True)
    else:
        n = int(moment.split()[0]) if moment[0].isdigit() else 1
        killed = _kill_when(tree, lambda: len(_cache_entries(tree)) >= n)
    assert killed, "the run finished before it could be killed: make the tree bigger"
    for _ in range(2):
        proc = tclint(".", "--output-format", "json", cwd=tree)
        assert proc.returncode == 1 and not proc.stderr.strip(), proc.stderr.decode()[-2000:]
        assert proc.stdout == reference["json"]


def test_cache_written_by_a_killed_run_is_complete_or_absent(tree):
    """Entries are written to a temporary file and renamed: after a kill mid-flush, every entry
    left behind under its real name is complete and verifies."""
    from tclint.rules.cache import Cache

    for n in (1, 25, 150):
        _clear_cache(tree)
        _kill_when(tree, lambda n=n: len(_cache_entries(tree)) >= n)
        cache = Cache(os.path.join(tree, ".tclint_cache"))
        for path in _cache_entries(tree):
            if path.endswith(".entry") and os.path.basename(path) != "stats.entry":
                key = os.path.basename(path)[: -len(".entry")]
                kind = os.path.basename(os.path.dirname(os.path.dirname(path)))
                get = {"runs": cache.get_run, "outputs": cache.get_output}.get(kind, cache.get_facts)
                entry = get(key)
                assert entry is not None, path


def test_interrupted_with_ctrl_c(tree, reference):
    """SIGINT (Ctrl-C in a terminal, pre-commit's cancel): exit code 130, one line, no traceback,
    and the cache stays valid."""
    _clear_cache(tree)
    proc = _start(tree, ".", "--output-format", "json")
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    if proc.returncode != 1:  # it may have finished first
        assert proc.returncode == 130, err.decode()
        assert b"Traceback" not in err and len(err.decode().strip().splitlines()) == 1, err.decode()
    assert tclint(".", "--output-format", "json", cwd=tree).stdout == reference["json"]
