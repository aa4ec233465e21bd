"""Configuration errors: bad TOML, unknown keys, wrong types, conflicting options, a config that is a
folder or cannot be read, a BOM.  Each gives exit code 2 and one clear message on stderr that names
the file and (where there is one) the key -- never a traceback, never a silently ignored setting."""

from __future__ import annotations

import os

import pytest
from tclint.rules.cli import main

from tests.helpers.relutil import tclint

CODE = "import torch\n\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "m.py").write_text(CODE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check_error(capsys, argv: list[str], file: str | None, key: str | None) -> str:
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 2, (rc, out, err)
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("Run `tclint --help`")]
    assert len(lines) == 1, err  # one message (usage errors add the `--help` hint)
    assert lines[0].startswith("tclint: "), err
    assert "Traceback" not in err
    if file:
        assert file in err, err
    if key:
        assert key in err, err
    return lines[0]


BAD_TOML = {
    "unclosed string": "select = ['TC1\n",
    "duplicate key": "preview = true\npreview = false\n",
    "table redefined": "[severity]\nTC1 = 'error'\n[severity]\nTC2 = 'error'\n",
    "bare word value": "select = [TC1]\n",
    "trailing garbage": "preview = true true\n",
    "NUL byte": "preview = true\x00\n",
    "not UTF-8": b"# caf\xe9\npreview = true\n",
}


@pytest.mark.parametrize("name", sorted(BAD_TOML))
@pytest.mark.parametrize("config", ["tclint.toml", "pyproject.toml"])
def test_bad_toml(project, capsys, name, config):
    body = BAD_TOML[name]
    if isinstance(body, str):
        body = body.encode("utf-8")
    if config == "pyproject.toml":
        body = b"[tool.tclint]\n" + body.replace(b"[severity]", b"[tool.tclint.severity]")
    (project / config).write_bytes(body)
    check_error(capsys, ["m.py"], config, None)


UNKNOWN = {
    "selct = ['TC1']\n": "selct",
    "extend_select = ['TC1']\n": "extend_select",  # underscores: a hint names the dashed key
    "[lint]\nselect = ['TC1']\n": "lint",  # ruff's layout
    "[dynamo]\ncapture_scalar_output = true\n": "capture_scalar_output",
    "[probe]\ntimeuot = 3\n": "timeuot",
}


@pytest.mark.parametrize("body", sorted(UNKNOWN))
def test_unknown_keys(project, capsys, body):
    (project / "tclint.toml").write_text(body)
    message = check_error(capsys, ["m.py"], "tclint.toml", UNKNOWN[body])
    if body.startswith("extend_select"):
        assert "extend-select" in message


WRONG_TYPES = {
    "select": "1",
    "extend-select": "true",
    "ignore": "{ a = 1 }",
    "per-file-ignores": "['a']",
    "severity": "'error'",
    "exclude": "1",
    "extend-exclude": "[1, 2]",
    "force-exclude": "'yes'",
    "respect-gitignore": "0",
    "assume-compiled": "1.5",
    "assume-compiled-forward": "'true'",
    "compiling-predicates": "false",
    "target-torch-version": "2.13",
    "preview": "'no'",
    "min-confidence": "'certain'",
    "unsafe-fixes": "[]",
    "output-format": "'xml'",
    "cache-dir": "[]",
    "max-file-size": "-1",
    "dynamo": "1",
    "probe": "'x'",
}


@pytest.mark.parametrize("key", sorted(WRONG_TYPES))
def test_wrong_types(project, capsys, key):
    (project / "pyproject.toml").write_text(f"[tool.tclint]\n{key} = {WRONG_TYPES[key]}\n")
    check_error(capsys, ["m.py"], "pyproject.toml", key)


NESTED_WRONG = {
    "[severity]\nTC104 = 'loud'\n": "TC104",
    "[severity]\nTC104 = 1\n": "TC104",
    "[severity]\nXY1 = 'error'\n": "XY1",
    "[per-file-ignores]\n'tests/*' = 'TC999'\n": "TC999",
    "[per-file-ignores]\n'tests/*' = [1]\n": "tests/*",
    "[dynamo]\nrecompile_limit = true\n": "recompile_limit",
    "[dynamo]\ncapture_scalar_outputs = 'yes'\n": "capture_scalar_outputs",
    "[probe]\ntimeout = 'soon'\n": "timeout",
    "select = ['TC1', 'E501']\n": "E501",
    "select = ['tc1']\n": "tc1",
}


@pytest.mark.parametrize("body", sorted(NESTED_WRONG))
def test_wrong_values_in_tables_and_lists(project, capsys, body):
    (project / "tclint.toml").write_text(body)
    check_error(capsys, ["m.py"], "tclint.toml", NESTED_WRONG[body])


def test_select_and_ignore_the_same_code(project, capsys):
    (project / "tclint.toml").write_text("select = ['TC104']\nignore = ['TC104']\n")
    check_error(capsys, ["m.py"], "tclint.toml", "TC104")


CONFLICTS = {
    "config: extend-select and ignore": (
        ["m.py"],
        "extend-select = ['TC104']\nignore = ['TC104']\n",
        "TC104",
    ),
    "cli: --select and --ignore": (["m.py", "--select", "TC104", "--ignore", "TC104"], None, "TC104"),
    "cli: --extend-select and --ignore": (
        ["m.py", "--extend-select", "TC104", "--ignore", "TC104"],
        None,
        "TC104",
    ),
    "cli: --per-file-ignores unknown code": (["m.py", "--per-file-ignores", "m.py:TC999"], None, "TC999"),
    "cli: --target-torch-version not a version": (
        ["m.py", "--target-torch-version", "banana"],
        None,
        "banana",
    ),
}


@pytest.mark.parametrize("case", sorted(CONFLICTS))
def test_conflicting_or_invalid_options(project, capsys, case):
    """The command line and the other config keys get the same checks as `select` in a config."""
    argv, body, key = CONFLICTS[case]
    if body:
        (project / "tclint.toml").write_text(body)
    check_error(capsys, argv, "tclint.toml" if body else None, key)


def test_config_file_is_a_folder(project, capsys):
    (project / "conf").mkdir()
    check_error(capsys, ["m.py", "--config", "conf"], "conf", None)


def test_discovered_config_that_is_a_folder_is_skipped(project, capsys):
    (project / "tclint.toml").mkdir()
    assert main(["m.py", "--select", "TC104"]) == 1
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["missing", "dangling symlink", "symlink loop", "under a file"])
def test_unreadable_config(project, capsys, kind):
    if kind == "dangling symlink":
        os.symlink("nowhere.toml", project / "conf.toml")
        path = "conf.toml"
    elif kind == "symlink loop":
        os.symlink("conf.toml", project / "conf.toml")
        path = "conf.toml"
    elif kind == "under a file":
        path = "m.py/conf.toml"
    else:
        path = "nope.toml"
    check_error(capsys, ["m.py", "--config", path], path, None)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_config_without_read_permission(project, capsys):
    conf = project / "tclint.toml"
    conf.write_text("preview = true\n")
    conf.chmod(0)
    check_error(capsys, ["m.py"], "tclint.toml", None)


def test_config_in_a_subfolder(project, capsys):
    """A bad config deep in the tree, found during discovery, still stops the run cleanly."""
    (project / "pkg" / "sub").mkdir(parents=True)
    (project / "pkg" / "sub" / "x.py").write_text("x = 1\n")
    (project / "pkg" / "sub" / "pyproject.toml").write_text("[tool.tclint]\nignore = 'TC1'\nselct = 1\n")
    check_error(capsys, ["."], os.path.join("pkg", "sub", "pyproject.toml"), "selct")


def test_bom_in_toml(project, capsys):
    """Notepad writes a UTF-8 BOM.  Either it is accepted, or the message says what is wrong."""
    (project / "tclint.toml").write_bytes(b"\xef\xbb\xbfselect = ['TC104']\n")
    rc = main(["m.py"])
    err = capsys.readouterr().err
    assert rc == 1 or ("BOM" in err or "byte-order mark" in err), err


def test_every_subcommand_reports_config_errors(project):
    """check, regions and clean (real processes: a traceback would show on stderr)."""
    (project / "pyproject.toml").write_text("[tool.tclint]\nselect = 1\n")
    for args in (["check", "m.py"], ["regions", "."], ["m.py", "--output-format", "json"]):
        proc = tclint(*args, cwd=str(project))
        err = proc.stderr.decode()
        assert proc.returncode == 2 and "Traceback" not in err and "select" in err, (args, err)


def test_clean_reports_config_errors(project):
    (project / "pyproject.toml").write_text("[tool.tclint]\nselect = 1\n")
    proc = tclint("clean", cwd=str(project))
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in err and "select" in err, err


def test_unwritable_output_file(project):
    proc = tclint("m.py", "-o", str(project / "no" / "such" / "folder" / "out.txt"), cwd=str(project))
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in err and "out.txt" in err, err


@pytest.mark.parametrize("value", ["", ".", ".."])
def test_cache_dir_must_not_be_the_project(project, capsys, value):
    """`cache-dir = ""` makes tclint write `.gitignore` (containing `*`), `facts/` and `runs/` into
    the project root itself: refuse it, naming the key."""
    (project / "tclint.toml").write_text(f"cache-dir = {value!r}\n")
    try:
        check_error(capsys, ["m.py"], "tclint.toml", "cache-dir")
    finally:
        assert not (project / ".gitignore").exists() and not (project / "runs").exists()


def test_huge_integer_in_config(project, capsys):
    """tomllib raises ValueError (not TOMLDecodeError) for integers over 4,300 digits."""
    (project / "tclint.toml").write_text("max-file-size = 1" + "0" * 5000 + "\n")
    check_error(capsys, ["m.py"], "tclint.toml", None)
