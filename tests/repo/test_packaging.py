"""The wheel holds exactly the package folders (tclint.rules, tclint.runtime_probe, tclint.server
and their subpackages) plus the rule reference pages — no tests, editors, examples or bench."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE_DIRS = ("rules", "runtime_probe", "server")


def _package_folders() -> set[str]:
    """Dotted names of every folder under the package roots that holds Python modules."""
    out = set()
    for top in PACKAGE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = [d for d in dirnames if d not in ("__pycache__", "docs")]
            if any(f.endswith(".py") for f in filenames):
                rel = os.path.relpath(dirpath, ROOT).replace(os.sep, ".")
                out.add("tclint." + rel)
    return out


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory) -> list[str]:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            ROOT,
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = [f for f in os.listdir(out) if f.endswith(".whl")]
    with zipfile.ZipFile(out / wheel) as zf:
        return zf.namelist()


def test_every_package_folder_and_nothing_else(wheel_names):
    code = [n for n in wheel_names if not n.startswith("tclint_torch-") and ".dist-info/" not in n]
    assert all(n.startswith("tclint/") for n in code), [n for n in code if not n.startswith("tclint/")]
    in_wheel = {os.path.dirname(n).replace("/", ".") for n in code if n.endswith(".py")}
    assert in_wheel == _package_folders()
    for forbidden in ("tests/", "editors/", "examples/", "bench/", ".ci/"):
        assert not any(n.startswith("tclint/" + forbidden) or n.startswith(forbidden) for n in wheel_names)


def test_every_module_of_the_tree_is_shipped(wheel_names):
    for top in PACKAGE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for f in filenames:
                if f.endswith(".py"):
                    rel = os.path.relpath(os.path.join(dirpath, f), ROOT).replace(os.sep, "/")
                    assert "tclint/" + rel in wheel_names, rel


def test_rule_reference_and_entry_point(wheel_names):
    assert "tclint/rules/docs/TC101.md" in wheel_names
    entry = next(n for n in wheel_names if n.endswith("entry_points.txt"))
    assert entry


def test_pyproject_lists_every_package():
    import tomllib

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        listed = set(tomllib.load(fh)["tool"]["setuptools"]["packages"])
    assert listed == _package_folders()
