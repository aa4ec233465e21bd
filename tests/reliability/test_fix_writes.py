"""What `--fix` and `--add-noqa` write into a user's files (issue 18, items 4-9): the file's own
encoding, byte for byte outside the edits; a comment only where it still parses; mode, symbolic and
hard links kept; an edit made during the run never overwritten; unique temporary files; a full
disk or a read-only file system is one clean error (exit 2), with nothing left behind."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import subprocess

import pytest
from tclint.rules import writeback
from tclint.rules.cli import main

from tests.helpers.relutil import TCLINT, env, tclint

HEAD = "import torch\n\n@torch.compile\ndef f(x):\n"
# one safe fix (the unused noqa on line 5 goes) and one TC101 finding for --add-noqa
FIXABLE = HEAD + "    y = x * 2  # noqa: TC101\n    return y\n"
NOQA_ME = HEAD + "    return x.item()\n"


def cli(*args: str, cwd: str) -> tuple[int, str, str]:
    """The CLI in this process (so that tests can inject faults), as ``tclint ARGS`` in ``cwd``."""
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(["--no-cache", *args])
    finally:
        os.chdir(old)
    return rc, out.getvalue(), err.getvalue()


def leftovers(folder) -> list[str]:
    return sorted(
        n for n in os.listdir(folder) if n.endswith((writeback.TEMP_SUFFIX, writeback.BACKUP_SUFFIX))
    )


# ---------------------------------------------------------------------------------------------
# item 4: encoding


@pytest.mark.parametrize("option", ["--fix", "--add-noqa"])
def test_latin1_file_stays_latin1_byte_for_byte(tmp_path, option):
    code = "# -*- coding: latin-1 -*-\n" + (FIXABLE if option == "--fix" else NOQA_ME) + 's = "café"\n'
    data = code.encode("latin-1")
    (tmp_path / "m.py").write_bytes(data)
    rc, _, err = cli("m.py", option, cwd=str(tmp_path))
    assert "Traceback" not in err
    after = (tmp_path / "m.py").read_bytes()
    if option == "--fix":
        expected = data.replace(b"    y = x * 2  # noqa: TC101\n", b"    y = x * 2\n")
    else:
        expected = data.replace(b"    return x.item()\n", b"    return x.item()  # noqa: TC101\n")
    assert after == expected
    assert b'"caf\xe9"' in after


def test_bom_and_crlf_are_kept(tmp_path):
    data = b"\xef\xbb\xbf" + FIXABLE.replace("\n", "\r\n").encode("utf-8") + 's = "\xe2\x82\xac"\r\n'.encode()
    (tmp_path / "m.py").write_bytes(data)
    cli("m.py", "--fix", cwd=str(tmp_path))
    assert (tmp_path / "m.py").read_bytes() == data.replace(b"  # noqa: TC101", b"")


def test_encode_like_copies_untouched_bytes_and_refuses_what_cannot_round_trip():
    old = "# coding: cp1252\nx = 1\ns = '\u20ac'\n"
    data = old.encode("cp1252")
    assert writeback.encode_like(data, old, old.replace("x = 1", "x = 2")) == data.replace(b"x = 1", b"x = 2")
    with pytest.raises(ValueError, match="cannot be written"):
        writeback.encode_like(data, old, old + "t = '\u4e2d'\n")  # not in cp1252
    with pytest.raises(ValueError, match="would not decode"):
        writeback.encode_like(data, old, "import torch\n\n" + old)  # pushes the cookie below line 2
    # replacements get the file's CRLF endings
    crlf = b"a = 1\r\nb = 2\r\n"
    assert (
        writeback.encode_like(crlf, crlf.decode(), "a = 1\r\nz = 0\nb = 2\r\n")
        == b"a = 1\r\nz = 0\r\nb = 2\r\n"
    )


# ---------------------------------------------------------------------------------------------
# item 5: concurrent edits


def test_an_edit_made_during_the_run_is_not_overwritten(tmp_path, monkeypatch):
    from tclint.rules.engine import Linter

    path = tmp_path / "m.py"
    path.write_text(FIXABLE)
    theirs = FIXABLE + "# saved by the editor while tclint ran\n"
    lint_paths = Linter.lint_paths

    def lint_then_edit(self, *args, **kwargs):
        result = lint_paths(self, *args, **kwargs)
        if path.read_text() == FIXABLE:
            path.write_text(theirs)
        return result

    monkeypatch.setattr(Linter, "lint_paths", lint_then_edit)
    rc, _, err = cli("m.py", "--fix", cwd=str(tmp_path))
    assert path.read_text() == theirs
    assert "m.py changed while it was being linted" in err and "Skipped 1 file" in err
    assert rc == 1
    assert leftovers(tmp_path) == []


def test_a_skipped_file_is_reported_as_it_is_now(tmp_path, monkeypatch):
    """Another run (or the user) fixed the file meanwhile: nothing is left to report for it."""
    from tclint.rules.engine import Linter

    path = tmp_path / "m.py"
    path.write_text(FIXABLE)
    theirs = FIXABLE.replace("  # noqa: TC101", "") + "# fixed by the other run\n"
    lint_paths = Linter.lint_paths

    def lint_then_edit(self, *args, **kwargs):
        result = lint_paths(self, *args, **kwargs)
        if path.read_text() == FIXABLE:
            path.write_text(theirs)
        return result

    monkeypatch.setattr(Linter, "lint_paths", lint_then_edit)
    rc, out, err = cli("m.py", "--fix", cwd=str(tmp_path))
    assert path.read_text() == theirs and "Skipped 1 file" in err
    assert "TC012" not in out and rc == 0


def test_an_edit_between_reading_and_replacing_is_seen(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n")
    digest = writeback.content_digest(b"x = 1\n")

    def edit_while_we_edit(data: bytes) -> bytes:
        path.write_bytes(b"x = 1\ny = 2\n")  # someone else saves now
        return b"x = 3\n"

    with pytest.raises(writeback.FileChanged):
        writeback.rewrite(str(path), digest, edit_while_we_edit)
    assert path.read_bytes() == b"x = 1\ny = 2\n"
    assert leftovers(tmp_path) == []


def test_digest_is_the_readers(tmp_path):
    from tclint.rules.reading import read_source

    (tmp_path / "m.py").write_bytes(b"x = '\xc3\xa9'\n")
    assert read_source(str(tmp_path / "m.py")).digest == writeback.content_digest(b"x = '\xc3\xa9'\n")


# ---------------------------------------------------------------------------------------------
# item 6: --add-noqa on continued lines


def test_add_noqa_after_a_backslash_continuation_still_parses(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(HEAD + "    y = x.item() + \\\n        1\n    return y\n")
    assert cli("m.py", "--add-noqa", cwd=str(tmp_path))[0] == 0
    text = path.read_text()
    compile(text, "m.py", "exec")
    assert "        1  # noqa: TC101\n" in text
    assert cli("m.py", cwd=str(tmp_path))[0] == 0  # and it silences the finding
    before = path.read_bytes()
    assert cli("m.py", "--add-noqa", cwd=str(tmp_path))[0] == 0
    assert path.read_bytes() == before


# ---------------------------------------------------------------------------------------------
# item 7: mode, owner, symbolic and hard links


@pytest.mark.parametrize("mode", [0o600, 0o755, 0o640])
def test_mode_is_kept(tmp_path, mode):
    path = tmp_path / "m.py"
    path.write_text(FIXABLE)
    os.chmod(path, mode)
    cli("m.py", "--fix", cwd=str(tmp_path))
    assert "# noqa" not in path.read_text()
    assert stat.S_IMODE(os.stat(path).st_mode) == mode


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_owner_is_kept(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(FIXABLE)
    os.chown(path, 4321, 4322)
    cli("m.py", "--fix", cwd=str(tmp_path))
    st = os.stat(path)
    assert "# noqa" not in path.read_text() and (st.st_uid, st.st_gid) == (4321, 4322)


def test_symlink_is_written_through(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "m.py").write_text(FIXABLE)
    (tmp_path / "link.py").symlink_to(real / "m.py")
    cli("link.py", "--fix", cwd=str(tmp_path))
    assert (tmp_path / "link.py").is_symlink()
    assert "# noqa" not in (real / "m.py").read_text()
    assert leftovers(tmp_path) == [] and leftovers(real) == []


def test_hard_links_are_kept(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(FIXABLE)
    os.link(path, tmp_path / "other-name.txt")
    inode = os.stat(path).st_ino
    cli("m.py", "--fix", cwd=str(tmp_path))
    assert os.stat(path).st_ino == inode and os.stat(path).st_nlink == 2
    assert "# noqa" not in (tmp_path / "other-name.txt").read_text()
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_foreign_owner_without_permission_is_written_in_place(tmp_path, monkeypatch):
    """A new file that cannot be given the original's owner (a user fixing a group-writable file of
    someone else's) is not swapped in: the file is rewritten in place, owner and inode kept."""
    path = tmp_path / "m.py"
    path.write_text(FIXABLE)
    os.chown(path, 4321, 4322)
    inode = os.stat(path).st_ino

    def refuse(*_args):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(writeback.os, "fchown", refuse)
    cli("m.py", "--fix", cwd=str(tmp_path))
    st = os.stat(path)
    assert "# noqa" not in path.read_text() and st.st_ino == inode and (st.st_uid, st.st_gid) == (4321, 4322)
    assert leftovers(tmp_path) == []


def test_in_place_write_that_fails_restores_the_original(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text(FIXABLE)
    os.link(path, tmp_path / "twin.py")
    real_write_all = writeback._write_all
    calls = []

    def full_disk_on_the_in_place_write(fd, data):
        calls.append(len(data))
        if len(calls) == 2:  # 1: the backup; 2: the new bytes into the file itself
            real_write_all(fd, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write_all(fd, data)

    monkeypatch.setattr(writeback, "_write_all", full_disk_on_the_in_place_write)
    rc, _, err = cli("m.py", "--fix", cwd=str(tmp_path))
    assert rc == 2 and "cannot write m.py: No space left on device" in err and "Traceback" not in err
    assert path.read_text() == FIXABLE
    assert leftovers(tmp_path) == []


def test_when_even_the_restore_fails_the_backup_keeps_the_original(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text(FIXABLE)
    os.link(path, tmp_path / "twin.py")
    real_write_all = writeback._write_all
    calls = []

    def disk_gone_after_the_backup(fd, data):
        calls.append(len(data))
        if len(calls) >= 2:
            real_write_all(fd, data[:5])
            raise OSError(errno.EIO, "Input/output error")
        real_write_all(fd, data)

    monkeypatch.setattr(writeback, "_write_all", disk_gone_after_the_backup)
    rc, _, err = cli("m.py", "--fix", cwd=str(tmp_path))
    assert rc == 2 and "Input/output error" in err and "its original bytes are in" in err
    backups = leftovers(tmp_path)
    assert len(backups) == 1 and backups[0].endswith(writeback.BACKUP_SUFFIX)
    assert (tmp_path / backups[0]).read_text() == FIXABLE
    assert backups[0] in err


# ---------------------------------------------------------------------------------------------
# item 8: two runs at once


@pytest.mark.slow
def test_two_concurrent_fix_runs_do_not_crash(tmp_path):
    """Both runs fix the same files at about the same time: each file is fixed once (the second
    writer sees it changed and skips it), nobody crashes, no temporary file is left."""
    count = 100
    for _round in range(2):
        for i in range(count):
            (tmp_path / f"m{i}.py").write_text(FIXABLE + f"z{i} = {i}\n")
        procs = [
            subprocess.Popen(
                [TCLINT, ".", "--fix", "--no-cache"],
                cwd=tmp_path,
                env=env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(2)
        ]
        for p in procs:
            _out, err = p.communicate(timeout=300)
            assert p.returncode in (0, 1), err.decode()
            assert b"Traceback" not in err and b"Error" not in err
        for i in range(count):
            assert (tmp_path / f"m{i}.py").read_text() == FIXABLE.replace(
                "  # noqa: TC101", ""
            ) + f"z{i} = {i}\n"
        assert leftovers(tmp_path) == []


def test_temporary_names_are_unique(tmp_path, monkeypatch):
    """Two writers of one file never share a temporary file (the old code used path + '.tclint.tmp')."""
    path = tmp_path / "m.py"
    path.write_bytes(b"a = 1\n")
    seen = []
    real_mkstemp = writeback.tempfile.mkstemp

    def spy(*args, **kwargs):
        fd, name = real_mkstemp(*args, **kwargs)
        seen.append(name)
        return fd, name

    monkeypatch.setattr(writeback.tempfile, "mkstemp", spy)
    for n in range(2, 4):
        data = path.read_bytes()
        writeback.rewrite(str(path), writeback.content_digest(data), lambda _d, n=n: f"a = {n}\n".encode())
    assert len(set(seen)) == 2 and all(os.path.dirname(s) == str(tmp_path) for s in seen)
    assert path.read_bytes() == b"a = 3\n"


# ---------------------------------------------------------------------------------------------
# item 9: full disk, read-only file system


@pytest.mark.parametrize("option", ["--fix", "--add-noqa"])
def test_full_disk_is_a_clean_error(tmp_path, monkeypatch, option):
    path = tmp_path / "m.py"
    code = FIXABLE if option == "--fix" else NOQA_ME
    path.write_text(code)
    real_write_all = writeback._write_all

    def full(fd, data):
        real_write_all(fd, data[:3])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writeback, "_write_all", full)
    rc, _, err = cli("m.py", option, cwd=str(tmp_path))
    assert rc == 2
    assert "tclint: error: cannot write m.py: No space left on device" in err and "Traceback" not in err
    assert path.read_text() == code
    assert sorted(os.listdir(tmp_path)) == ["m.py"]


def test_read_only_file_system_is_a_clean_error(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text(FIXABLE)

    def read_only(*_args, **_kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(writeback.tempfile, "mkstemp", read_only)
    rc, _, err = cli("m.py", "--fix", cwd=str(tmp_path))
    assert rc == 2 and "cannot write m.py: Read-only file system" in err and "Traceback" not in err
    assert path.read_text() == FIXABLE and sorted(os.listdir(tmp_path)) == ["m.py"]


@pytest.mark.parametrize("step", ["fsync", "fchmod", "replace"])
def test_a_failure_at_any_later_step_leaves_no_temporary_file(tmp_path, monkeypatch, step):
    path = tmp_path / "m.py"
    path.write_text(FIXABLE)

    def fail(*_args, **_kwargs):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(writeback.os, step, fail)
    rc, _, err = cli("m.py", "--fix", cwd=str(tmp_path))
    assert rc == 2 and "cannot write m.py: Input/output error" in err and "Traceback" not in err
    assert path.read_text() == FIXABLE and sorted(os.listdir(tmp_path)) == ["m.py"]


def test_odd_file_names_are_fixed_and_named_safely(tmp_path, monkeypatch):
    """A name that is not UTF-8 (and one with a newline) is written like any other, and the error
    message escapes it instead of crashing on it or forging a line."""
    names = [os.fsdecode(b"bad\xffname.py"), "new\nline.py"]
    for name in names:
        (tmp_path / name).write_text(FIXABLE)
        os.chmod(tmp_path / name, 0o640)
    cli("--fix", "--", *names, cwd=str(tmp_path))
    for name in names:
        assert (tmp_path / name).read_text() == FIXABLE.replace("  # noqa: TC101", "")
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o640
        (tmp_path / name).write_text(FIXABLE)

    def read_only(*_args, **_kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(writeback.tempfile, "mkstemp", read_only)
    rc, _, err = cli("--fix", "--", *names, cwd=str(tmp_path))
    assert (
        rc == 2 and "cannot write bad\\xffname.py: Read-only" in err and "cannot write new\\nline.py" in err
    )
    assert "Traceback" not in err


def test_notebook_add_noqa_goes_through_the_same_writer(tmp_path, monkeypatch):
    import json

    nb = {
        "cells": [
            {"cell_type": "code", "source": NOQA_ME, "metadata": {}, "outputs": [], "execution_count": None}
        ],
        "metadata": {"kernelspec": {"language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb))
    os.chmod(path, 0o600)
    cli("nb.ipynb", "--add-noqa", cwd=str(tmp_path))
    assert "# noqa: TC101" in path.read_text() and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    path.write_text(json.dumps(nb))

    def read_only(*_args, **_kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(writeback.tempfile, "mkstemp", read_only)
    rc, _, err = cli("nb.ipynb", "--add-noqa", cwd=str(tmp_path))
    assert rc == 2 and "Read-only file system" in err and sorted(os.listdir(tmp_path)) == ["nb.ipynb"]


def test_fix_still_reports_through_the_console_script(tmp_path):
    (tmp_path / "m.py").write_text(FIXABLE)
    proc = tclint("m.py", "--fix", "--no-cache", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "m.py").read_text() == FIXABLE.replace("  # noqa: TC101", "")
