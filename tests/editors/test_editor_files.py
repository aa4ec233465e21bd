"""The editor snippets that cannot run here (Helix, Zed) at least parse, and every editor folder
documents itself."""

from __future__ import annotations

import json
import os
import re

from tests.helpers.editorutil import EDITORS

try:
    import tomllib
except ImportError:  # Python 3.10: tclint depends on tomli there
    import tomli as tomllib


def test_every_editor_has_a_readme():
    for name in ("vscode", "neovim", "emacs", "helix", "zed"):
        assert os.path.exists(os.path.join(EDITORS, name, "README.md")), name


def test_helix_snippet_is_valid_toml_for_the_server():
    with open(os.path.join(EDITORS, "helix", "languages.toml"), "rb") as fh:
        conf = tomllib.load(fh)
    server = conf["language-server"]["tclint"]
    assert [server["command"], *server["args"]] == [".venv/bin/tclint", "server"]
    assert "tclint" in conf["language"][0]["language-servers"]
    assert set(server["config"]) == {"settings", "tclint"}


def test_zed_extension_manifest_and_settings():
    with open(os.path.join(EDITORS, "zed", "extension.toml"), "rb") as fh:
        ext = tomllib.load(fh)
    assert ext["language_servers"]["tclint"]["languages"] == ["Python"]
    with open(os.path.join(EDITORS, "zed", "settings.json"), encoding="utf-8") as fh:
        jsonc = re.sub(r"^\s*//.*$", "", fh.read(), flags=re.M)
    settings = json.loads(jsonc)
    assert "tclint" in settings["languages"]["Python"]["language_servers"]
    with open(os.path.join(EDITORS, "zed", "src", "lib.rs"), encoding="utf-8") as fh:
        assert "tclint.server.__main__" in fh.read()  # the bootstrap (test_editor_launch.py runs it)
