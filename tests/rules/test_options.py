"""``tclint.rules.options``: one option table for ``tclint check`` and the editors' ``tclint.args``."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tclint.rules import cli, options


def test_the_server_parses_options_without_the_cli():
    code = (
        "import sys; from tclint.server.settings import args_overrides; "
        "print(args_overrides(['--select', 'TC1', '--ignore', 'TC104', '--output-format', 'json', 'x.py'])); "
        "print('tclint.rules.cli' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "{'select': ['TC1'], 'extend:ignore': ['TC104']}"
    assert out[1] == "False"


def test_cli_and_options_share_the_table():
    assert cli.overrides_from_args is options.overrides_from_args and cli.UsageError is options.UsageError
    assert cli.FORMATS is options.FORMATS
    with pytest.raises(options.UsageError, match="GLOB:CODES"):
        options.overrides_from_args(["--per-file-ignores", "nocolon"])
    with pytest.raises(options.UsageError, match="--per-file-ignores: invalid rule selector"):
        options.overrides_from_args(["--per-file-ignores", "a/*.py:XYZ"])
    assert options.overrides_from_args(
        ["--extend-select", "TC2,TC3", "--extend-select", "TC9", "--preview"]
    ) == {
        "extend:extend_select": ["TC2", "TC3", "TC9"],
        "preview": True,
    }
