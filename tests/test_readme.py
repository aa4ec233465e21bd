"""README.md stays true: every rule, every `tclint check` option and every configuration key is
documented there."""

from __future__ import annotations

import os
import re

from tclint.rules import registry
from tclint.rules.cli import _check_parser
from tclint.rules.config import DYNAMO_KEYS, KEYS, PROBE_KEYS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
    README = fh.read()


def test_every_rule_is_in_the_rule_table():
    for rule in registry.all_rules():
        row = re.search(rf"^\| {rule.code} \| {re.escape(rule.name)} \| {rule.lifecycle} \|", README, re.M)
        assert row, f"{rule.code} {rule.name} ({rule.lifecycle}) missing from README's rule table"


def test_every_check_option_is_documented():
    for action in _check_parser()._actions:
        for opt in action.option_strings:
            if opt in ("-h", "--help"):
                continue
            assert f"`{opt}" in README or f"{opt}`" in README or f" {opt} " in README or f"/ `{opt}" in README, opt


def test_every_configuration_key_is_documented():
    for key in KEYS:
        assert re.search(rf"^{re.escape(key)} =", README, re.M) or f"[tool.tclint.{key}]" in README, key
    for key in DYNAMO_KEYS:
        assert key in README, key
    for key in PROBE_KEYS:
        assert key in README, key
