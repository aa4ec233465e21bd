"""The command line as users run it: formats (golden files), exit codes, options, fixes, stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from tclint.rules.cli import main
from tclint.rules.report.json_ import from_dict, to_dict

pytestmark = pytest.mark.integration  # runs tclint as a subprocess (make test-fast leaves it out)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "fixtures", "golden")
FORMATS = ["concise", "full", "json", "json-lines", "sarif", "github"]
UPDATE = os.environ.get("TCLINT_UPDATE_GOLDEN") == "1"


def run(args: list[str], cwd: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tclint.rules", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=stdin,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=120,
    )


def normalize(text: str) -> str:
    return text.replace(GOLDEN, "<GOLDEN>").replace(ROOT, "<ROOT>")


@pytest.mark.parametrize("fmt", FORMATS)
def test_golden_output(fmt):
    """Each format on a file with a non-ASCII line, a multi-line statement and an unused noqa."""
    proc = run(["model.py", "--no-cache", "--output-format", fmt], GOLDEN)
    assert proc.returncode == 1, proc.stderr
    expected_path = os.path.join(GOLDEN, f"expected.{fmt}")
    got = normalize(proc.stdout)
    if UPDATE or not os.path.exists(expected_path):
        with open(expected_path, "w", encoding="utf-8") as fh:
            fh.write(got)
    with open(expected_path, encoding="utf-8") as fh:
        assert got == fh.read()


def test_sarif_fingerprints_do_not_depend_on_the_checkout(tmp_path):
    """Code scanning matches alerts across runs by partialFingerprints; CI runners check out to
    different folders, so the same file must fingerprint the same from any clone."""
    prints = []
    for clone in ("a", "b/deeper"):
        folder = tmp_path / clone
        folder.mkdir(parents=True)
        (folder / "model.py").write_bytes(open(os.path.join(GOLDEN, "model.py"), "rb").read())
        data = json.loads(run(["model.py", "--no-cache", "--output-format", "sarif"], str(folder)).stdout)
        prints.append([r["partialFingerprints"]["tclint/v1"] for r in data["runs"][0]["results"]])
    assert prints[0] and prints[0] == prints[1]
    assert len(set(prints[0])) == len(prints[0])  # and still tell results apart


def test_json_round_trips():
    proc = run(["model.py", "--no-cache", "--output-format", "json"], GOLDEN)
    data = json.loads(proc.stdout)
    assert {"filename", "code", "message", "location", "end_location", "fix", "noqa_row", "url"} <= set(
        data[0]
    )
    for obj in data:
        assert to_dict(from_dict(obj)) == obj
    multi = next(o for o in data if o["code"] == "TC102")
    assert (multi["location"]["row"], multi["end_location"]["row"]) == (8, 9)
    printed = next(o for o in data if o["code"] == "TC104")
    assert printed["end_location"]["column"] - printed["location"]["column"] == len(
        'print("données:", x.shape)'
    )


def test_exit_codes(tmp_path):
    (tmp_path / "clean.py").write_text("import torch\n\n@torch.compile\ndef f(x):\n    return x * 2\n")
    (tmp_path / "bad.py").write_text(
        "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n"
    )
    assert run(["clean.py"], str(tmp_path)).returncode == 0
    assert run(["bad.py"], str(tmp_path)).returncode == 1
    assert run(["bad.py", "--exit-zero"], str(tmp_path)).returncode == 0
    bad_option = run(["bad.py", "--no-such-option"], str(tmp_path))
    assert bad_option.returncode == 2 and "--no-such-option" in bad_option.stderr
    bad_code = run(["bad.py", "--select", "TC999"], str(tmp_path))
    assert bad_code.returncode == 2 and "TC999" in bad_code.stderr
    missing = run(["nope.py"], str(tmp_path))
    assert missing.returncode == 2 and "nope.py" in missing.stderr


@pytest.mark.parametrize(
    "config,key",
    [
        ("[tool.tclint]\nselct = ['TC1']\n", "selct"),
        ("[tool.tclint]\nselect = 'TC1\n", None),
        ("[tool.tclint]\npreview = 'yes'\n", "preview"),
        ("[tool.tclint]\nselect = ['TC1']\nignore = ['TC1']\n", "select"),
        ("[tool.tclint.dynamo]\ncapture_scalar_outputs = 1\n", "dynamo.capture_scalar_outputs"),
        ("[tool.tclint.severity]\nTC101 = 'loud'\n", "severity.TC101"),
    ],
)
def test_config_errors_name_file_and_key(tmp_path, config, key):
    (tmp_path / "pyproject.toml").write_text(config)
    (tmp_path / "m.py").write_text("x = 1\n")
    proc = run(["m.py"], str(tmp_path))
    assert proc.returncode == 2
    assert "pyproject.toml" in proc.stderr
    assert "Traceback" not in proc.stderr
    if key:
        assert key.split(".")[-1] in proc.stderr


def test_selection_options(tmp_path):
    code = "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x.sum().item()\n"
    (tmp_path / "m.py").write_text(code)
    codes = lambda args: {  # noqa: E731
        d["code"] for d in json.loads(run(["m.py", "--output-format", "json", *args], str(tmp_path)).stdout)
    }
    assert codes([]) == {"TC101", "TC104"}
    assert codes(["--select", "TC104"]) == {"TC104"}
    assert codes(["--ignore", "TC10"]) == set()
    assert codes(["--select", "TC1", "--ignore", "TC104"]) == {"TC101"}
    assert codes(["--ignore", "TC1", "--extend-select", "TC104"]) == {"TC101", "TC104"} - {"TC101"} | {
        "TC104"
    }
    assert codes(["--per-file-ignores", "m.py:TC101"]) == {"TC104"}


def test_statistics_and_config_file(tmp_path):
    (tmp_path / "tclint.toml").write_text("ignore = ['TC101']\n[severity]\nTC104 = 'error'\n")
    (tmp_path / "m.py").write_text(
        "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    print(x)\n    return x.sum().item()\n"
    )
    stats = run(["m.py", "--statistics"], str(tmp_path))
    assert stats.stdout.split() == ["2", "TC104", "print-in-compiled-code"] or "2\tTC104" in stats.stdout
    data = json.loads(run(["m.py", "--output-format", "json"], str(tmp_path)).stdout)
    assert {d["severity"] for d in data} == {"error"}
    isolated = json.loads(run(["m.py", "--output-format", "json", "--isolated"], str(tmp_path)).stdout)
    assert {d["code"] for d in isolated} == {"TC101", "TC104"}


def test_fix_diff_and_unsafe(tmp_path):
    code = "import torch\n\n@torch.compile\ndef f(x):\n    y = x * 2  # noqa: TC101\n    print(y)\n    return y\n"
    path = tmp_path / "m.py"
    path.write_text(code)
    diff = run(["m.py", "--diff"], str(tmp_path))
    assert (
        diff.returncode == 1 and "-    y = x * 2  # noqa: TC101" in diff.stdout and path.read_text() == code
    )
    fixed = run(["m.py", "--fix"], str(tmp_path))
    assert "# noqa" not in path.read_text() and "print(y)" in path.read_text()
    assert fixed.returncode == 1  # the print remains: its fix is unsafe
    unsafe = run(["m.py", "--fix", "--unsafe-fixes"], str(tmp_path))
    assert unsafe.returncode == 0, unsafe.stdout
    # the print's preferred fix (of three alternatives): registered as reorderable, kept in place
    assert path.read_text() == code.replace("  # noqa: TC101", "").replace(
        "import torch\n", "import torch\ntorch._dynamo.config.reorderable_logging_functions.add(print)\n"
    )
    compile(path.read_text(), "m.py", "exec")


def test_add_noqa_then_clean(tmp_path):
    code = "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x.sum().item()  # existing comment\n"
    path = tmp_path / "m.py"
    path.write_text(code)
    proc = run(["m.py", "--add-noqa"], str(tmp_path))
    assert proc.returncode == 0
    text = path.read_text()
    assert "print(x)  # noqa: TC104" in text and "# noqa: TC101" in text
    assert run(["m.py"], str(tmp_path)).returncode == 0


def test_stdin(tmp_path):
    code = "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n"
    proc = run(
        ["-", "--stdin-filename", "pkg/model.py", "--output-format", "concise"], str(tmp_path), stdin=code
    )
    assert proc.returncode == 1
    assert proc.stdout.startswith("pkg/model.py:5:5: TC104")


def test_rule_command_and_version(capsys):
    assert main(["rule", "TC101"]) == 0
    out = capsys.readouterr().out
    assert (
        out.startswith("# TC101 tensor-to-python-scalar") and "## Why is this bad?" in out and "gb0124" in out
    )
    assert main(["rule", "--all"]) == 0
    assert capsys.readouterr().out.count("\n# TC") >= 20
    assert main(["rule", "TC999"]) == 2
    assert main(["--version"]) == 0
    assert "targets torch 2.13" in capsys.readouterr().out


def test_bad_files_never_stop_a_run(tmp_path):
    (tmp_path / "syntax.py").write_text("def f(:\n    pass\n")
    (tmp_path / "latin1.py").write_bytes("# caf\xe9\nx = 1\n".encode("latin-1"))
    (tmp_path / "binary.py").write_bytes(b"\x00\x01\x02garbage\x00")
    (tmp_path / "empty.py").write_text("")
    (tmp_path / "bom_crlf.py").write_bytes(
        b"\xef\xbb\xbfimport torch\r\n\r\n@torch.compile\r\ndef f(x):\r\n    print(x)\r\n    return x\r\n"
    )
    big = "import torch\n" + "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(10_000))
    (tmp_path / "big.py").write_text(big)
    proc = run([".", "--output-format", "json", "--no-cache"], str(tmp_path))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    data = json.loads(proc.stdout)
    by_file = {}
    for d in data:
        by_file.setdefault(os.path.basename(d["filename"]), []).append(d["code"])
    assert by_file == {
        "syntax.py": ["TC000"],
        "latin1.py": ["TC011"],
        "binary.py": ["TC000"],
        "bom_crlf.py": ["TC104"],
    }
    crlf = next(d for d in data if d["code"] == "TC104")
    assert (crlf["location"]["row"], crlf["location"]["column"]) == (5, 5)


def test_target_torch_version_turns_rules_off(tmp_path):
    from tclint.rules.rule import version_in

    assert version_in("2.13", ">=2.1") and not version_in("2.0", ">=2.1") and version_in("2.8.1", ">=2.6,<3")
    (tmp_path / "m.py").write_text("import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n")
    assert run(["m.py"], str(tmp_path)).returncode == 1
    assert run(["m.py", "--target-torch-version", "2.0"], str(tmp_path)).returncode == 0
    bad = run(["m.py", "--target-torch-version", "banana"], str(tmp_path))
    assert bad.returncode == 2 and "target-torch-version" in bad.stderr


def test_unused_noqa_in_a_file_without_findings(tmp_path):
    """Files with no findings skip suppression parsing unless a directive could be there; every
    spelling the parser accepts must still reach it."""
    (tmp_path / "a.py").write_text("x = 1  # noqa: TC101\ny = 2  # NOQA:TC104\nz = 3  # noqa: E501\n")
    proc = run(["a.py", "--no-cache", "--output-format", "json"], str(tmp_path))
    found = sorted((d["code"], d["location"]["row"]) for d in json.loads(proc.stdout))
    assert found == [("TC012", 1), ("TC012", 2)], proc.stdout
