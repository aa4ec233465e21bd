"""tests/ mirrors the code (issue 16): one folder per part of the code, one helpers package
(``tests.helpers``), one fixtures root (tests/fixtures/), and no test that edits ``sys.path``."""

from __future__ import annotations

import os
import re

from tests.helpers import ROOT, TESTS

MIRRORED = {"rules", "server", "runtime_probe", "editors", "fuzz", "reliability", "bench", "repo"}
SUPPORT = {"helpers", "fixtures", "__pycache__"}
SYS_PATH_EDIT = re.compile(r"sys\.path\.(insert|append)\(")


def _python_files(top: str) -> list[str]:
    out = []
    for base, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "fixtures")]
        out.extend(os.path.join(base, f) for f in files if f.endswith(".py"))
    return out


def test_every_test_folder_mirrors_a_part_of_the_code():
    folders = {e.name for e in os.scandir(TESTS) if e.is_dir()}
    assert folders - SUPPORT <= MIRRORED, folders - SUPPORT - MIRRORED
    for name in MIRRORED - {"fuzz", "reliability", "repo"}:
        assert os.path.isdir(os.path.join(ROOT, name)), f"tests/{name}/ mirrors nothing"
    loose = [e.name for e in os.scandir(TESTS) if e.is_file() and e.name.startswith("test_")]
    assert loose == [], "test modules belong in the folder of the code they test"


def test_helpers_come_from_the_helpers_package_not_from_sys_path():
    edits = []
    for path in _python_files(TESTS):
        rel = os.path.relpath(path, ROOT)
        if rel.startswith(os.path.join("tests", "helpers")) or path == os.path.abspath(__file__):
            continue  # bench_scripts gives bench/'s own scripts their view, the reference scripts theirs
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if SYS_PATH_EDIT.search(line) and not line.lstrip().startswith(("#", "sys.path.insert(0, {")):
                    edits.append(f"{rel}:{lineno}")
    assert edits == []


def test_helper_modules_live_only_in_the_helpers_package():
    stray = [
        os.path.relpath(p, ROOT)
        for p in _python_files(TESTS)
        if not os.path.basename(p).startswith(("test_", "conftest", "__init__"))
        and os.sep + "helpers" + os.sep not in p
    ]
    assert stray == []
