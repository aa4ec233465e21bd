"""A rule's family and lifecycle are enums (``tclint.rules.ruletypes``), never free strings: a typo
in a rule class or a comparison fails loudly instead of silently never matching."""

from __future__ import annotations

import json

from tclint.rules import registry
from tclint.rules.ruletypes import Family, Lifecycle


def test_every_rule_declares_enum_members():
    for rule in registry.all_rules():
        assert isinstance(rule.family, Family), rule.code
        assert isinstance(rule.lifecycle, Lifecycle), rule.code


def test_they_read_as_their_values():
    assert str(Family.GRAPH_BREAK) == f"{Family.GRAPH_BREAK}" == "graph-break"
    assert json.dumps([Family.COMPILE_API, Lifecycle.PREVIEW]) == '["compile-api", "preview"]'
    assert Family("recompile") is Family.RECOMPILE


def test_rule_classes_are_named_by_what_they_find():
    """Like every other rule class (``DataDependentBranch``, ``TensorToList``), never ``...Rule``."""
    assert [r.__name__ for r in registry.all_rules() if r.__name__.endswith("Rule")] == []
