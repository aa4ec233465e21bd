"""Paths the file system allows and a linter must survive: names that are not UTF-8, names and
source holding control characters, special files (named pipes, devices), and files or folders
the user may not read.  Each test runs the real console script, as users do.

* A name that is not UTF-8 is linted in every mode and format; machine formats keep its bytes
  (SARIF percent-encodes them in the URI, JSON escapes them as ``\\udcXX``), text formats show
  them as ``\\xNN``, and every output is valid UTF-8.
* Control characters from names and source never reach the terminal: an ESC sequence is shown
  as ``\\x1b``, a newline in a name as ``\\n`` (it cannot forge a finding line).
* Only regular files are read: a named pipe or a device named on the command line is refused
  (exit 2) without hanging or reading forever; one met by the walk is skipped.
* A path named on the command line that cannot be read says "permission denied" (exit 2); a
  folder the walk cannot list, or a file it cannot read, is one TC011 each (never a silent pass).
  The tests run as root, which no mode bits stop: they drop to ``nobody`` with ``setpriv``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import tempfile

import pytest

from tests.helpers.relutil import TCLINT, env, tclint

BAD = b"bad\xffname.py"
SOURCE = b"import torch\n\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x.item()\n"
FINDING = re.compile(r"^.+:\d+:\d+: TC\d{3} ")


def _write(folder: str, name: bytes, data: bytes) -> None:
    with open(os.path.join(os.fsencode(folder), name), "wb") as fh:
        fh.write(data)


def _ok(proc: subprocess.CompletedProcess, *codes: int) -> str:
    """The run's stdout as text; it exited with one of ``codes`` and printed valid UTF-8."""
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode in (codes or (0, 1)), (proc.returncode, stderr[-3000:])
    assert "Traceback" not in stderr, stderr[-3000:]
    return proc.stdout.decode("utf-8")  # strict: a raw undecodable byte fails here


@pytest.fixture
def bad_name(tmp_path) -> str:
    root = str(tmp_path / "repo")
    os.makedirs(os.path.join(root, ".git"))
    _write(root, BAD, SOURCE)
    os.makedirs(os.path.join(os.fsencode(root), b"dir\xfe"))
    _write(os.path.join(root, os.fsdecode(b"dir\xfe")), b"m.py", SOURCE)
    return root


def test_non_utf8_name_default_run_cold_and_warm(bad_name):
    cold = _ok(tclint(".", cwd=bad_name))
    warm = _ok(tclint(".", cwd=bad_name))
    assert cold == warm
    assert "bad\\xffname.py:6:5: TC104" in cold and "dir\\xfe/m.py:6:5: TC104" in cold


@pytest.mark.parametrize("fmt", ["concise", "full", "github", "json", "json-lines", "sarif"])
def test_non_utf8_name_every_format(bad_name, fmt):
    out = _ok(tclint(".", "--no-cache", "--output-format", fmt, cwd=bad_name))
    bad_path = os.path.join(bad_name, os.fsdecode(BAD))
    if fmt == "json":
        names = {d["filename"] for d in json.loads(out)}
        assert os.fsencode(bad_path) in {os.fsencode(n) for n in names}  # the exact bytes back
    elif fmt == "json-lines":
        assert bad_path in {json.loads(line)["filename"] for line in out.splitlines()}
    elif fmt == "sarif":
        uris = {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(out)["runs"][0]["results"]
        }
        assert any(uri.endswith("/bad%FFname.py") for uri in uris), uris
        assert any(uri.endswith("/dir%FE/m.py") for uri in uris), uris
    else:
        assert "bad\\xffname.py" in out


def test_non_utf8_name_fix_and_add_noqa(bad_name):
    _ok(tclint(".", "--output-format", "json", "-o", "out.json", cwd=bad_name))
    with open(os.path.join(bad_name, "out.json"), encoding="utf-8") as fh:  # strict UTF-8
        assert len(json.load(fh)) >= 2
    _ok(tclint(".", "--add-noqa", "--no-cache", cwd=bad_name), 0)
    with open(os.path.join(os.fsencode(bad_name), BAD), "rb") as fh:
        assert b"# noqa: TC104" in fh.read()
    _ok(tclint(".", "--fix", "--unsafe-fixes", cwd=bad_name))
    _ok(tclint(".", "--diff", "--unsafe-fixes", cwd=bad_name))
    _ok(tclint(".", "--statistics", cwd=bad_name))
    assert "bad\\xffname.py:5: f" in _ok(tclint("regions", ".", cwd=bad_name), 0)


def test_control_characters_in_names_and_source_are_escaped(tmp_path):
    root = str(tmp_path / "repo")
    os.makedirs(os.path.join(root, ".git"))
    forged = b"x\x1b[31mred\nforged.py:1:1: TC999 fake.py"
    _write(root, forged, SOURCE)
    _write(
        root,
        b"esc.py",
        'import torch\n\n\n@torch.compile\ndef f(x):\n    print("\x1b[2J\x9b1m")\n    return x\n'.encode(),
    )
    for fmt in ("concise", "full", "github"):
        out = _ok(tclint(".", "--no-cache", "--output-format", fmt, cwd=root))
        assert "\x1b" not in out and "\x9b" not in out, (fmt, out)
        assert not any(
            line.startswith(("forged.py", "::error file=forged.py")) for line in out.splitlines()
        ), out
        if fmt == "concise":
            findings = [line for line in out.splitlines() if FINDING.match(line)]
            assert len(findings) == 3, out  # two in the forged-name file, one in esc.py
            assert any(
                line.startswith("x\\x1b[31mred\\nforged.py:1:1: TC999 fake.py:6:5: TC104")
                for line in findings
            )
        if fmt == "full":
            lines = out.splitlines()
            shown = lines.index('6 |     print("\\x1b[2J\\x9b1m")')
            # the caret line still underlines the whole call in the escaped text
            assert lines[shown + 1] == "  |     " + "^" * len('print("\\x1b[2J\\x9b1m")') + " TC104"


def test_named_pipe_and_device_named_on_the_command_line(tmp_path):
    root = str(tmp_path)
    os.mkfifo(os.path.join(root, "fifo.py"))
    proc = subprocess.run([TCLINT, "fifo.py"], cwd=root, capture_output=True, timeout=60, env=env())
    assert proc.returncode == 2
    assert b"fifo.py: not a regular file (a named pipe)" in proc.stderr
    proc = subprocess.run(
        [TCLINT, "--no-cache", "/dev/zero"], cwd=root, capture_output=True, timeout=60, env=env()
    )
    assert proc.returncode == 2
    assert b"/dev/zero: not a regular file (a character device)" in proc.stderr
    proc = subprocess.run(
        [TCLINT, "regions", "fifo.py"], cwd=root, capture_output=True, timeout=60, env=env()
    )
    assert proc.returncode == 2 and b"fifo.py: not a regular file (a named pipe)" in proc.stderr


def test_named_pipe_met_by_the_walk_is_skipped(tmp_path):
    root = str(tmp_path)
    os.makedirs(os.path.join(root, ".git"))
    os.mkfifo(os.path.join(root, "fifo.py"))
    _write(root, b"ok.py", SOURCE)
    proc = subprocess.run([TCLINT, "--no-cache", "."], cwd=root, capture_output=True, timeout=60, env=env())
    out = _ok(proc)
    assert "ok.py:6:5: TC104" in out and "fifo" not in out


def test_reader_refuses_a_pipe_swapped_in_after_discovery(tmp_path):
    """The library reads what discovery found; if the file became a pipe meanwhile, it is a TC011
    at once (opened without blocking), not a hang."""
    from tclint.rules.reading import read_source

    path = str(tmp_path / "m.py")
    os.mkfifo(path)
    src = read_source(path, max_size=1000)
    assert (
        src.text is None and src.error == "not a regular file (a named pipe): tclint reads regular files only"
    )


def test_reading_stops_one_byte_past_max_file_size(tmp_path, monkeypatch):
    """A file that grows while read (or a /proc-like file whose size says 0) is read only to one
    byte past max-file-size."""
    from tclint.rules import reading

    path = str(tmp_path / "m.py")
    with open(path, "wb") as fh:
        fh.write(b"x = 1\n" * 1000)
    real_stat = os.stat

    def small_stat(p, *a, **k):  # the size at stat time: before the file grew
        st = real_stat(p, *a, **k)
        return os.stat_result(
            (
                st.st_mode,
                st.st_ino,
                st.st_dev,
                st.st_nlink,
                st.st_uid,
                st.st_gid,
                10,
                st.st_atime,
                st.st_mtime,
                st.st_ctime,
            )
        )

    monkeypatch.setattr(reading.os, "stat", small_stat)
    src = reading.read_source(path, max_size=100)
    assert src.text is None and "more than 100 bytes" in (src.error or "")


# ---------------------------------------------------------------------------------------------
# permissions: as an unprivileged user


def _unprivileged() -> list[str]:
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: mode bits cannot deny access")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def locked_tree():
    """A tree the unprivileged user may enter, with one folder and one file it may not read."""
    root = tempfile.mkdtemp(prefix="tclint-perm-")
    os.chmod(root, 0o755)
    os.makedirs(os.path.join(root, ".git"))
    for rel in ("ok.py", "locked/inner.py", "secret.py"):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(SOURCE)
    os.chmod(os.path.join(root, "locked"), 0)
    os.chmod(os.path.join(root, "secret.py"), 0)
    yield root
    os.chmod(os.path.join(root, "locked"), stat.S_IRWXU)
    shutil.rmtree(root)


def _as_nobody(root: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*_unprivileged(), TCLINT, "--no-cache", *args], cwd=root, capture_output=True, timeout=120, env=env()
    )


def test_unreadable_folder_and_file_met_by_the_walk_are_reported(locked_tree):
    proc = _as_nobody(locked_tree, ".")
    out = _ok(proc, 1)
    assert "locked:1:1: TC011 cannot list folder: Permission denied" in out
    assert "secret.py:1:1: TC011 cannot read file: Permission denied" in out
    assert "ok.py:6:5: TC104" in out and "All checks passed!" not in out


@pytest.mark.parametrize("path", ["locked", "locked/inner.py", "secret.py"])
def test_unreadable_path_named_on_the_command_line(locked_tree, path):
    proc = _as_nobody(locked_tree, path)
    assert proc.returncode == 2, proc
    assert proc.stderr.decode().startswith(f"tclint: error: {path}: permission denied"), proc.stderr


def test_language_server_uris_keep_the_bytes_of_a_name():
    """The server's path <-> URI conversion: a name that is not UTF-8 percent-encodes its bytes
    (pygls' own quoting raised UnicodeEncodeError) and converts back to the same name."""
    pytest.importorskip("pygls")
    from tclint.server.convert import path_to_uri
    from tclint.server.documents import uri_to_path

    for name in (os.fsdecode(b"/ws/bad\xffname.py"), "/ws/caf\u00e9 x.py", "/ws/new\nline.py"):
        uri = path_to_uri(name)
        assert uri.isascii() and uri_to_path(uri) == name, (name, uri)
    assert path_to_uri(os.fsdecode(b"/ws/bad\xffname.py")) == "file:///ws/bad%FFname.py"
