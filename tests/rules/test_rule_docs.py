"""The rule reference in rules/docs/ is generated from the rules' own docstrings and examples
(`python -m tclint.rules.ruledoc`, or `make docs`).  This test regenerates it into a temporary folder
and compares, so a rule change without a docs refresh fails here."""

from __future__ import annotations

import os
import subprocess

from tests.helpers.editorutil import PYTHON, ROOT

DOCS = os.path.join(ROOT, "rules", "docs")

REGENERATE = "import sys, tclint.rules.ruledoc as d; raise SystemExit(d.main(['--docs-dir', sys.argv[1], '--no-readme']))"


def read_tree(folder: str) -> dict[str, str]:
    if not os.path.isdir(folder):
        return {}
    out = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".md"):
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                out[name] = fh.read()
    return out


def test_rule_reference_is_in_sync(tmp_path):
    fresh = tmp_path / "docs"
    proc = subprocess.run([PYTHON, "-c", REGENERATE, str(fresh)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    generated = read_tree(str(fresh))
    committed = read_tree(DOCS)
    hint = (
        "rules/docs/ is out of date: run `make docs` (python -m tclint.rules.ruledoc) and commit the result"
    )
    assert sorted(committed) == sorted(generated), hint
    stale = [name for name in generated if committed[name] != generated[name]]
    assert stale == [], f"{hint}; differing pages: {stale}"


def test_every_rule_has_a_complete_page(tmp_path):
    from tclint.rules import registry
    from tclint.rules.model import gb_url
    from tclint.rules.ruledoc import generate

    pages = generate()
    index = pages["README.md"]
    for rule in registry.all_rules():
        page = pages[f"{rule.code}.md"]
        assert page.startswith(f"# {rule.code} {rule.name}\n")
        assert f"[{rule.code}]({rule.code}.md)" in index
        for section in ("## What it does", "## Why is this bad?", "## Example"):
            assert section in page, f"{rule.code}: no {section!r} section"
        for gb in rule.gb_ids:
            assert f"[{gb}]({gb_url(gb)})" in page, f"{rule.code}: no link for {gb}"
        if rule.invalid:
            assert "## Examples checked by the test suite" in page
