"""The user documentation stays true and complete: every rule, every `tclint check` option and every
configuration key is documented in README.md or in the docs/ pages it links; the README's rule table
is the one the rule registry generates; every relative link in those pages points at a file."""

from __future__ import annotations

import glob
import os
import re

from tclint.rules import registry
from tclint.rules.cli import _check_parser
from tclint.rules.config import DYNAMO_KEYS, KEYS, PROBE_KEYS
from tclint.rules.ruledoc import readme_rule_table, with_rule_table

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README_PATH = os.path.join(ROOT, "README.md")
DOC_PAGES = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def read(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


README = read(README_PATH)
# What a user can reach from the README: the README itself and the docs/ pages it links.
LINKED = [p for p in DOC_PAGES if f"docs/{os.path.basename(p)}" in README]
DOCS = "\n".join([README, *(read(p) for p in LINKED)])


def test_every_docs_page_is_linked_from_the_readme():
    assert DOC_PAGES, "docs/ holds the reference pages the README links"
    assert [os.path.basename(p) for p in LINKED] == [os.path.basename(p) for p in DOC_PAGES]


def test_the_readme_stays_a_first_page():
    assert len(README.splitlines()) <= 600, "move reference material into docs/ and link it"


def test_every_rule_is_in_the_rule_table():
    for rule in registry.all_rules():
        row = re.search(
            rf"^\| \[{rule.code}\]\(rules/docs/{rule.code}\.md\) \| {re.escape(rule.name)} \| {rule.lifecycle} \|",
            README,
            re.M,
        )
        assert row, f"{rule.code} {rule.name} ({rule.lifecycle}) missing from README's rule table"


def test_the_rule_table_is_generated_from_the_registry():
    rules = list(registry.all_rules())
    assert readme_rule_table(rules) in README
    hint = "README.md's rule table is out of date: run `make docs` (python -m tclint.rules.ruledoc) and commit it"
    assert with_rule_table(README, rules) == README, hint


def test_a_changed_rule_makes_the_table_stale():
    rules = list(registry.all_rules())
    stale = README.replace(f"| {rules[3].name} |", f"| {rules[3].name}-renamed |", 1)
    assert stale != README
    assert with_rule_table(stale, rules) == README


def test_every_check_option_is_documented():
    for action in _check_parser()._actions:
        for opt in action.option_strings:
            if opt in ("-h", "--help"):
                continue
            assert f"`{opt}" in DOCS or f"{opt}`" in DOCS or f" {opt} " in DOCS or f"/ `{opt}" in DOCS, opt


def test_every_configuration_key_is_documented():
    for key in KEYS:
        assert re.search(rf"^{re.escape(key)} =", DOCS, re.M) or f"[tool.tclint.{key}]" in DOCS, key
    for key in DYNAMO_KEYS:
        assert key in DOCS, key
    for key in PROBE_KEYS:
        assert key in DOCS, key


def test_relative_links_point_at_files():
    for path in [README_PATH, *DOC_PAGES]:
        folder = os.path.dirname(path)
        for target in re.findall(r"\]\(([^)\s]+)\)", read(path)):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            file = target.split("#", 1)[0]
            assert os.path.exists(os.path.normpath(os.path.join(folder, file))), (
                f"{os.path.relpath(path, ROOT)}: {target}"
            )


def _console_blocks() -> dict[str, str]:
    """{command: output} of the README's ```console blocks whose output is shown whole."""
    blocks = {}
    for body in re.findall(r"```console\n(.*?)```", README, re.S):
        command, _, output = body.partition("\n")
        if "\n...\n" not in "\n" + output:
            blocks[command.removeprefix("$ ")] = output
    return blocks


def test_the_quick_start_shows_the_real_output():
    import shlex
    import subprocess
    import sys

    blocks = _console_blocks()
    assert (
        "tclint examples/" in blocks and "tclint examples/ --output-format full --select TC110" in blocks
    ), list(blocks)
    env = {k: v for k, v in os.environ.items() if k != "PRE_COMMIT"}
    for command, expected in blocks.items():
        args = shlex.split(command)[1:]
        proc = subprocess.run(
            [sys.executable, "-m", "tclint.rules", *args, "--no-cache"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.stdout == expected, f"README's `{command}` output is stale:\n{proc.stdout}"
