"""Issue 21 in a real VS Code (code-server + headless Chromium, as tests/editors/test_vscode.py
drives it) against the real tclint server: with ``follow-libraries = true`` the user script of
tests/editors/test_neovim_related.py (DETR trained with labels) gets TC312 at its compile site;
VS Code holds the diagnostic with its related locations (file URIs into the installed
transformers source, read through vscode.languages.getDiagnostics by the extension's marker
dump), the Problems view lists them under the summary, and clicking one opens the installed
library file with the cursor at the site."""

from __future__ import annotations

import json
import os

import pytest

from tests.editors.test_neovim_related import SITE_LINE, USER
from tests.editors.test_vscode import code_server, run_e2e, server_required, vsix  # noqa: F401 (fixtures)
from tests.helpers.editorutil import PYTHON, server_env, tclint

pytestmark = [pytest.mark.editor, pytest.mark.slow]


def test_library_sites_are_related_locations_that_open_the_installed_file(
    server_required,  # noqa: F811
    code_server,  # noqa: F811
    vsix,  # noqa: F811
    tmp_path,
):
    pytest.importorskip("transformers")
    ws = tmp_path / "relws"  # run_e2e copies examples/ into tmp_path / "ws"
    ws.mkdir()
    (ws / "pyproject.toml").write_text("[tool.tclint]\nfollow-libraries = true\n")
    (ws / "train.py").write_text(USER)
    cache = str(tmp_path / "cache")
    env = server_env()
    env.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=cache)
    # the CLI's view of the same file (it also fills the user-level library cache the server reads)
    cli = tclint("check", "train.py", "--output-format", "json", cwd=str(ws), env=env)
    [summary] = [d for d in json.loads(cli.stdout) if d["code"] == "TC312"]
    assert summary["location"]["row"] == SITE_LINE
    expected = [(r["filename"], r["location"]["row"], r["location"]["column"]) for r in summary["related"]]
    assert len(expected) >= 5 and all("/site-packages/transformers/" in f for f, _, _ in expected), expected
    jump = next(i for i, r in enumerate(summary["related"], 1) if ".item()" in r["message"])

    result = run_e2e(
        tmp_path,
        CS_DIR=code_server,
        VSIX=vsix,
        PYTHON=PYTHON,
        WS=str(ws),
        FILE="train.py",
        XDG_CACHE_HOME=cache,
        RELATED_CODE="TC312",
        RELATED_JUMP=str(jump),
        RELATED_TIMEOUT_MS="240000",
    )
    marker = result["relatedMarker"]
    assert (marker["line"], marker["column"]) == (SITE_LINE, summary["location"]["column"]), marker
    assert marker["message"].split("\n")[0] == summary["message"], marker["message"]
    assert marker["severity"] == {"error": 0, "warning": 1, "info": 2}[summary["severity"]], marker
    # every library site, in the CLI's order, as a file URI at the site's line and column
    delivered = [(r["uri"], r["line"], r["column"]) for r in marker["related"]]
    assert delivered == [("file://" + f, row, col) for f, row, col in expected], delivered
    assert [r["message"].split("\n")[0] for r in marker["related"]] == [
        r["message"].split("\n")[0] for r in summary["related"]
    ]
    # the Problems view lists them under the summary, "file [Ln N, Col M]"
    rows = [(r["file"], r["at"]) for r in result["relatedRows"]]
    assert rows == [(os.path.basename(f), f"[Ln {row}, Col {col}]") for f, row, col in expected], rows
    # clicking the `.item()` site opened the installed file with the site selected (active editor)
    file, row, col = expected[jump - 1]
    assert file.endswith("transformers/loss/loss_for_object_detection.py")
    jumped = result["jumped"]
    assert (jumped["uri"], jumped["line"], jumped["column"]) == ("file://" + file, row, col), jumped
    assert jumped["text"][col - 1 : jumped["endColumn"] - 1].endswith(".item()"), jumped  # the site's range
    assert any(os.path.basename(file) in t for t in result["tabs"]), result["tabs"]
