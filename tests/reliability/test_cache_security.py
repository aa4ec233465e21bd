"""A linted repository cannot run code through tclint's cache, nor make tclint write into, hide
or delete folders it did not create (issue 18 items 1, 3 and 10).

Every test here uses a cache key of its own (``TCLINT_CACHE_KEY_FILE``), as another user would.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import pickle
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tclint.rules import cachedir, sealed
from tclint.rules.cache import STATS, Cache

from tests.helpers.fuzzutil import budget, gently_mutated_files, python_seeds, tried
from tests.helpers.relutil import tclint


@pytest.fixture(autouse=True)
def own_key(tmp_path, monkeypatch):
    monkeypatch.setenv(sealed.KEY_ENV, str(tmp_path / "key" / "cache-key"))
    return tmp_path / "key" / "cache-key"


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "r"
    (r / ".tclint_cache").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=r, check=True)
    (r / "m.py").write_text("x = 1\n")
    return r


class _Pwn:
    def __reduce__(self):
        return (os.system, ("id > pwned.txt",))


def test_the_reported_pickle_in_stats_runs_nothing(repo):
    """The issue's reproduction, verbatim: a repository shipping `.tclint_cache/stats.pkl`."""
    (repo / ".tclint_cache" / "stats.pkl").write_bytes(pickle.dumps(_Pwn()))
    proc = tclint(".", cwd=str(repo))
    assert not (repo / "pwned.txt").exists()
    # tclint did not make that folder (it writes its .gitignore first): it refuses to use it
    assert proc.returncode == 2 and "stats.pkl" in proc.stderr.decode(), proc.stderr.decode()
    assert tclint(".", "--no-cache", cwd=str(repo)).returncode == 0
    # the same file in a cache folder tclint made is never read either
    (repo / ".tclint_cache" / "stats.pkl").unlink()
    assert tclint(".", cwd=str(repo)).returncode == 0
    (repo / ".tclint_cache" / "stats.pkl").write_bytes(pickle.dumps(_Pwn()))
    proc = tclint(".", cwd=str(repo))
    assert proc.returncode == 0 and b"All checks passed!" in proc.stdout, proc.stderr.decode()
    assert not (repo / "pwned.txt").exists()


def _pickled_entries(cache: str) -> list[str]:
    """Every entry tclint would read, replaced by a pickle that runs code, in both the old entry
    format (magic, key, blake2b, pickle: its checksum was no defence) and the new one's place."""
    import hashlib

    payload = pickle.dumps(_Pwn())
    written = []
    for base, _dirs, names in os.walk(cache):
        for name in names:
            if not name.endswith((".entry", ".pkl")):
                continue
            path = os.path.join(base, name)
            key = name.rsplit(".", 1)[0]
            old = (
                b"TCLINT-CACHE-1\n"
                + key.encode()
                + b"\n"
                + hashlib.blake2b(payload, digest_size=16).digest()
                + payload
            )
            with open(path, "wb") as fh:
                fh.write(old)
            written.append(path)
    return written


def test_pickled_entries_of_every_kind_run_nothing(repo):
    """Facts, whole-run results, saved reports and the stat table replaced by code-running pickles
    with valid old-format checksums: the run is a cold one, with the uncached output."""
    (repo / "m.py").write_text("import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n")
    expected = tclint(".", "--no-cache", "--output-format", "json", cwd=str(repo)).stdout
    tclint(".", "--output-format", "json", cwd=str(repo))
    assert _pickled_entries(str(repo / ".tclint_cache"))
    (repo / ".tclint_cache" / "stats.pkl").write_bytes(pickle.dumps(_Pwn()))
    proc = tclint(".", "--output-format", "json", cwd=str(repo))
    assert proc.stdout == expected and not (repo / "pwned.txt").exists()


SOURCE = b"import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"


def _lint(folder: str):
    """(the cache, the result) of linting a one-file tree beside ``folder`` with it."""
    from tclint.rules import reading
    from tclint.rules.config import ConfigResolver
    from tclint.rules.engine import Linter

    tree = os.path.join(os.path.dirname(folder), "tree")
    os.makedirs(tree, exist_ok=True)
    with open(os.path.join(tree, "a.py"), "wb") as fh:
        fh.write(SOURCE)
    cache = Cache(folder)
    margin, reading.RACY_MARGIN_NS = reading.RACY_MARGIN_NS, 0  # trust the just-written file
    cwd = os.getcwd()
    os.chdir(tree)
    try:
        result = Linter(ConfigResolver(None, None), cache, jobs=1).lint_paths(["."])
    finally:
        os.chdir(cwd)
        reading.RACY_MARGIN_NS = margin
    return cache, result


def _fill(folder: str) -> Cache:
    """A cache with entries of every kind: facts, a run, a saved report, the stat table."""
    cache, result = _lint(folder)
    cache.put_output(cache.output_key(result.run_key, "concise", False, False), "a.py:5:11: TC101\n", 1)
    cache.flush()
    return cache


def _entries(folder: str) -> list[tuple[str, str, str]]:
    """(path, kind, name) of every entry in a cache folder."""
    out = []
    for base, _dirs, names in os.walk(folder):
        for n in names:
            if n.endswith(".entry"):
                rel = os.path.relpath(base, folder).split(os.sep)
                if n == STATS:
                    out.append((os.path.join(base, n), "stats-1", STATS))
                else:
                    out.append((os.path.join(base, n), rel[0], n[: -len(".entry")]))
    return sorted(out)


def test_entries_forged_without_the_users_key_are_misses(tmp_path, own_key, monkeypatch):
    """Entries in the right format, for the right names, holding the right values, but sealed
    with another key (another user's, a repository author's) or with no MAC at all."""
    folder = str(tmp_path / "cache")
    _fill(folder)
    mine = sealed.user_key()
    entries = _entries(folder)
    assert {k for _p, k, _n in entries} == {"facts", "runs", "outputs", "stats-1"}
    values = {p: sealed.read(p, mine, k, n) for p, k, n in entries}
    assert all(v is not None for v in values.values())
    other = os.urandom(sealed.MAC_SIZE)
    for forge in ("other key", "no MAC", "zero MAC", "moved"):
        for path, kind, name in entries:
            if forge == "other key":
                data = sealed.seal(other, kind, name, values[path])
            elif forge == "moved":  # a genuine entry under another name: the MAC covers the name
                data = sealed.seal(mine, kind, name[::-1], values[path])
            else:
                payload = sealed.seal(mine, kind, name, values[path])[len(sealed.MAGIC) + sealed.MAC_SIZE :]
                data = sealed.MAGIC + (b"" if forge == "no MAC" else bytes(sealed.MAC_SIZE)) + payload
            with open(path, "wb") as fh:
                fh.write(data)
        cache = Cache(folder)
        assert cache.stat_table().changed() is None and not cache.stat_table()._entries, forge
        for _path, kind, name in entries:
            if kind == "facts":
                assert cache.get_facts(name) is None, forge
            elif kind == "runs":
                assert cache.get_run(name) is None, forge
            elif kind == "outputs":
                assert cache.get_output(name) is None, forge


def test_genuine_entries_are_hits(tmp_path):
    """The check above is not vacuous: the same entries, untouched, are read back."""
    folder = str(tmp_path / "cache")
    _fill(folder)
    cache = Cache(folder)
    found = _entries(folder)
    assert any(cache.get_facts(n) is not None for _p, k, n in found if k == "facts")
    assert any(cache.get_run(n) is not None for _p, k, n in found if k == "runs")
    assert any(cache.get_output(n) is not None for _p, k, n in found if k == "outputs")
    assert cache.stat_table()._entries


def test_key_file_is_private_and_outside_the_project(tmp_path, own_key):
    _fill(str(tmp_path / "cache"))
    st = os.stat(own_key)
    assert st.st_mode & 0o777 == 0o600 and os.stat(own_key.parent).st_mode & 0o077 == 0
    # a key others can read is not trusted: a fresh one replaces it (and old entries are misses)
    before = own_key.read_bytes()
    os.chmod(own_key, 0o644)
    sealed._key = None
    assert sealed.user_key() is None
    assert sealed.user_key(create=True) is not None and own_key.read_bytes() != before
    assert os.stat(own_key).st_mode & 0o777 == 0o600


def test_default_key_location_is_per_user_config(monkeypatch, tmp_path):
    monkeypatch.delenv(sealed.KEY_ENV)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert sealed.key_path() == str(tmp_path / "cfg" / "tclint" / "cache-key")


# -- item 3: the cache folder must be tclint's ------------------------------------------------------
@pytest.fixture
def project(tmp_path):
    p = tmp_path / "p"
    p.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=p, check=True)
    (p / "src").mkdir()
    (p / "src" / "m.py").write_text("import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n")
    subprocess.run(["git", "add", "-A"], cwd=p, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], cwd=p, check=True
    )
    return p


def _snapshot(folder) -> dict[str, bytes]:
    out = {}
    for base, _dirs, names in os.walk(folder):
        for n in names:
            path = os.path.join(base, n)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, folder)] = fh.read()
    return out


@pytest.mark.parametrize(
    "how", ["cache-dir = '.git'", "cache-dir = 'src'", "absolute", "--cache-dir .", "--cache-dir src"]
)
def test_a_cache_folder_holding_other_files_is_refused(project, tmp_path, how):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "notes.txt").write_text("mine\n")
    args = ["."]
    if how.startswith("--"):
        args += how.split()
    elif how == "absolute":
        (project / "tclint.toml").write_text(f"cache-dir = {str(outside)!r}\n")
    else:
        (project / "tclint.toml").write_text(how + "\n")
    before = {name: _snapshot(project / name) for name in (".git", "src")} | {"outside": _snapshot(outside)}
    proc = tclint(*args, cwd=str(project))
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "did not create" in err and "Traceback" not in err, err
    assert {name: _snapshot(project / name) for name in (".git", "src")} | {
        "outside": _snapshot(outside)
    } == before
    assert not (project / ".gitignore").exists()
    clean = tclint("clean", cwd=str(project))
    if not how.startswith("--"):  # clean reads the configured folder
        assert clean.returncode == 2 and "nothing removed" in clean.stderr.decode(), clean.stderr.decode()
    assert {name: _snapshot(project / name) for name in (".git", "src")} | {
        "outside": _snapshot(outside)
    } == before
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=project, capture_output=True, text=True
    )
    assert "src/m.py" not in status.stdout and status.returncode == 0


def test_a_new_folder_is_created_marked_and_ignored(project):
    proc = tclint(".", cwd=str(project))
    assert proc.returncode == 1, proc.stderr.decode()
    cache = project / ".tclint_cache"
    assert cachedir.is_marked(str(cache))
    assert (cache / "CACHEDIR.TAG").read_bytes().startswith(b"Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache / ".gitignore").read_bytes() == cachedir.GITIGNORE_TEXT
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=project, capture_output=True, text=True
    )
    assert status.stdout == "", status.stdout
    assert tclint(".", cwd=str(project)).returncode == 1  # and it is used again
    clean = tclint("clean", cwd=str(project))
    assert clean.returncode == 0 and not cache.exists(), clean.stderr.decode()


def test_clean_keeps_what_tclint_did_not_create(project):
    tclint(".", cwd=str(project))
    cache = project / ".tclint_cache"
    (cache / "mine.txt").write_text("do not delete\n")
    proc = tclint("clean", cwd=str(project))
    assert proc.returncode == 2 and "mine.txt" in proc.stderr.decode()
    assert sorted(os.listdir(cache)) == ["CACHEDIR.TAG", "mine.txt"]


def test_clean_refuses_an_unmarked_folder(project):
    (project / "tclint.toml").write_text("cache-dir = 'src'\n")
    proc = tclint("clean", cwd=str(project))
    assert proc.returncode == 2 and (project / "src" / "m.py").exists()


@pytest.mark.parametrize("content", ["empty", "legacy"])
def test_an_empty_or_older_tclint_folder_is_adopted(project, content):
    cache = project / ".tclint_cache"
    cache.mkdir()
    if content == "legacy":  # what tclint wrote before it had a marker
        (cache / "facts").mkdir()
        (cache / "stats.pkl").write_bytes(pickle.dumps(_Pwn()))
        (cache / ".gitignore").write_text("# Automatically created by tclint.\n*\n")
        (cache / "tmpab12cd.tmp").write_bytes(b"")
    proc = tclint(".", cwd=str(project))
    assert proc.returncode == 1 and not (project / "pwned.txt").exists(), proc.stderr.decode()
    assert cachedir.is_marked(str(cache))


# -- item 10: atomic .gitignore and marker, nothing left on a full disk ----------------------------
@pytest.mark.parametrize("damage", ["empty", "truncated", "missing"])
def test_a_damaged_gitignore_is_rewritten(project, damage):
    tclint(".", cwd=str(project))
    gitignore = project / ".tclint_cache" / ".gitignore"
    if damage == "missing":
        gitignore.unlink()
    else:
        gitignore.write_bytes(b"" if damage == "empty" else cachedir.GITIGNORE_TEXT[:20])
    (project / "src" / "m.py").write_text("x = 2\n")  # a run that writes entries
    tclint(".", cwd=str(project))
    assert gitignore.read_bytes() == cachedir.GITIGNORE_TEXT
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=project, capture_output=True, text=True
    )
    assert ".tclint_cache" not in status.stdout, status.stdout


class _FullDisk:
    """``open`` (and so ``os.fdopen``, which calls ``io.open``) on a disk that fills up after
    ``room`` more writes: every later ``write`` raises ENOSPC (a full tmpfs is not available
    here).  Installed only around a cache flush."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.real = io.open

    def install(self, monkeypatch) -> None:
        monkeypatch.setattr(builtins, "open", self)
        monkeypatch.setattr(io, "open", self)

    def __call__(self, file, mode="r", *args, **kwargs):
        fh = self.real(file, mode, *args, **kwargs)
        return fh if not any(c in mode for c in "wax+") else _FullFile(fh, self)


class _FullFile:
    def __init__(self, fh, disk: _FullDisk) -> None:
        self.fh, self.disk = fh, disk

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.fh.close()

    def __getattr__(self, name):
        return getattr(self.fh, name)

    def write(self, data):
        if self.disk.room <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.disk.room -= 1
        return self.fh.write(data)


def _untracked(repo) -> list[str]:
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo, capture_output=True, text=True
    )
    return status.stdout.splitlines()


@pytest.mark.parametrize("room", [0, 1, 2, 5])
def test_a_full_disk_during_the_first_write_leaves_nothing_behind(tmp_path, monkeypatch, room):
    """The disk fills up after ``room`` writes of the first run: no temporary file is left, no
    empty or partial .gitignore stays (git never offers the cache), and the next run, with space
    again, writes a complete .gitignore, the marker and the entries."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    folder = repo / ".tclint_cache"
    sealed.user_key(create=True)
    cache, _result = _lint(str(folder))
    _FullDisk(room).install(monkeypatch)
    cache.flush()
    monkeypatch.undo()
    left = _snapshot(folder) if folder.exists() else {}
    assert not [n for n in left if n.endswith(".tmp")], left
    assert left.get(".gitignore", cachedir.GITIGNORE_TEXT) == cachedir.GITIGNORE_TEXT
    assert not [line for line in _untracked(repo) if ".tclint_cache" in line]
    _fill(str(folder))
    assert (folder / ".gitignore").read_bytes() == cachedir.GITIGNORE_TEXT and cachedir.is_marked(str(folder))
    assert {k for _p, k, _n in _entries(str(folder))} == {"facts", "runs", "outputs", "stats-1"}
    assert not [n for n in _snapshot(folder) if n.endswith(".tmp")]
    assert not [line for line in _untracked(repo) if ".tclint_cache" in line]


def test_a_full_disk_while_creating_the_key_writes_nothing(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    cache, _result = _lint(str(folder))
    _FullDisk(0).install(monkeypatch)
    cache.flush()
    monkeypatch.undo()
    assert not folder.exists() and sorted(os.listdir(tmp_path / "key")) == []


def test_write_atomic_removes_its_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "t"
    target.write_bytes(b"old")
    _FullDisk(0).install(monkeypatch)
    with pytest.raises(OSError):
        sealed.write_atomic(str(target), b"new")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["t"] and target.read_bytes() == b"old"


def test_copying_a_cache_to_another_user_costs_only_time(tmp_path, monkeypatch):
    """A cache folder copied from someone else (a CI artefact, a shared volume) is a miss."""
    folder = str(tmp_path / "cache")
    _fill(folder)
    cache, mine = _lint(folder)
    assert cache.hits + (mine.project is None) > 0  # the owner's next run is served from the cache
    monkeypatch.setenv(sealed.KEY_ENV, str(tmp_path / "other-user" / "cache-key"))
    cache, theirs = _lint(folder)
    assert cache.hits == 0 and cache.misses == 1 and theirs.project is not None
    assert theirs.diagnostics == mine.diagnostics


def test_a_shipped_marked_folder_cannot_redirect_writes(project, tmp_path):
    """A repository may ship a marked `.tclint_cache` whose `facts` links elsewhere: tclint writes
    nothing through the link (and `clean` does not follow it)."""
    target = tmp_path / "victim"
    target.mkdir()
    cache = project / ".tclint_cache"
    cache.mkdir()
    (cache / "CACHEDIR.TAG").write_bytes(cachedir.MARKER_TEXT)
    os.symlink(target, cache / "facts")
    tclint(".", cwd=str(project))
    assert os.listdir(target) == []
    tclint("clean", cwd=str(project))
    assert target.is_dir() and os.listdir(target) == []


def test_a_read_only_config_folder_falls_back_to_the_cache_folder(monkeypatch, tmp_path):
    """No writable config folder (a read-only home, a container): the key goes to the user's cache
    folder, so the cache still works; never into the project."""
    monkeypatch.delenv(sealed.KEY_ENV)
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "not-a-folder" / "cfg"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))
    monkeypatch.setattr(sealed, "_key", None)
    key = sealed.user_key(create=True)
    assert key is not None and (tmp_path / "cache-home" / "tclint" / "cache-key").exists()
    monkeypatch.setattr(sealed, "_key", None)
    assert sealed.user_key() == key


# -- properties ---------------------------------------------------------------------------------
_plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)
_KEY = bytes(range(32))


@budget(300)
@given(
    _plain,
    st.sampled_from(["facts", "runs", "outputs", "stats-1"]),
    st.text(max_size=8),
    st.binary(max_size=64),
)
def test_sealed_values_open_only_under_their_key_kind_and_name(value, kind, name, noise):
    """Any plain value round-trips under its own key, kind and name; under another key, kind or
    name, with its MAC replaced by noise, or cut anywhere, it is a miss (None), never an error."""
    tried("cache: sealed entries open only under their key, kind and name")
    data = sealed.seal(_KEY, kind, name, value)
    assert sealed.unseal(_KEY, kind, name, data) == value
    assert sealed.unseal(bytes(32), kind, name, data) is None
    assert sealed.unseal(_KEY, kind + "x", name, data) is None
    assert sealed.unseal(_KEY, kind, name + "x", data) is None
    forged = sealed.MAGIC + (noise + bytes(32))[:32] + data[len(sealed.MAGIC) + 32 :]
    assert forged == data or sealed.unseal(_KEY, kind, name, forged) is None
    cut = len(noise) % (len(data) + 1)
    assert cut == len(data) or sealed.unseal(_KEY, kind, name, data[:cut]) is None


@budget(150)
@given(gently_mutated_files(python_seeds()))
def test_facts_and_findings_round_trip_through_plain_data(data):
    """The facts and findings of any (mutated) file survive the cache's plain-data form exactly:
    a field type the codec mishandles would show as a difference, not as a wrong finding."""
    import marshal

    from tclint.rules import plaindata
    from tclint.rules.engine import analyze_source
    from tclint.rules.reading import read_source

    from tests.helpers.fuzzutil import lint_bytes

    tried("cache: facts and findings round-trip through plain data")
    result = lint_bytes(data)
    plain = marshal.loads(marshal.dumps(plaindata.encode_diagnostics(result.diagnostics), 4))
    assert plaindata.decode_diagnostics(plain) == result.diagnostics
    src = read_source("m.py", data)
    facts = analyze_source(src, "m", False, ".", [])
    assert plaindata.decode_facts(marshal.loads(marshal.dumps(plaindata.encode_facts(facts), 4))) == facts


def test_a_folder_of_tensorboard_runs_is_not_a_cache(project):
    """`runs/` is a name tclint uses in its cache, and TensorBoard's default log folder: a
    `cache-dir` naming a folder of runs is refused (nothing hidden from git, nothing deleted), and
    `clean` on a marked cache keeps a `runs/` entry that is not tclint's."""
    logs = project / "experiments" / "runs" / "Dec01_12-00-00_host"
    logs.mkdir(parents=True)
    (logs / "events.out.tfevents").write_bytes(b"\x00" * 64)
    (project / "tclint.toml").write_text("cache-dir = 'experiments'\n")
    before = _snapshot(project / "experiments")
    for args in (["."], ["clean"]):
        proc = tclint(*args, cwd=str(project))
        assert proc.returncode == 2 and "did not create" in proc.stderr.decode(), proc.stderr.decode()
        assert _snapshot(project / "experiments") == before
    (project / "tclint.toml").unlink()
    tclint(".", cwd=str(project))
    cache = project / ".tclint_cache"
    (cache / "runs" / "tb").mkdir()
    (cache / "runs" / "tb" / "events").write_text("x")
    proc = tclint("clean", cwd=str(project))
    assert proc.returncode == 2 and "runs/tb" in proc.stderr.decode()
    assert (cache / "runs" / "tb" / "events").read_text() == "x"
    assert sorted(os.listdir(cache)) == ["CACHEDIR.TAG", "runs"] and os.listdir(cache / "runs") == ["tb"]
