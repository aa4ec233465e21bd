"""``Rule.report``: the one path by which cross-file rules make a diagnostic (code, name, link,
noqa line, region chain, hot-path note, default severity)."""

from __future__ import annotations

import textwrap

import pytest
from tclint.rules import registry
from tclint.rules.facts import Loc
from tclint.rules.model import Severity, gb_url

from tests.helpers.lintutil import lint_code

HOT_DISABLED_CALL = textwrap.dedent(
    """
    import torch
    import torch.nn as nn


    @torch.compiler.disable
    def log(x):
        print(x)


    class Block(nn.Module):
        def forward(self, x):
            log(x)
            return x


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block() for _ in range(4)])

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x


    model = torch.compile(Net())
    """
)


def _rule(code: str):
    return registry.get(code)()


def test_report_without_a_region_fills_in_the_rule():
    rule = _rule("TC304")
    d = rule.report("a.py", Loc(3, 4, 5, 6), "message", help="do this")
    assert (d.code, d.name, d.path, d.message, d.help) == ("TC304", rule.name, "a.py", "message", "do this")
    assert (d.span.start.line, d.span.start.column, d.span.end.line, d.span.end.column) == (3, 4, 5, 6)
    assert d.noqa_line == 3
    assert d.severity is rule.default_severity
    assert d.url == rule.doc_url() and d.url.endswith("/docs/TC304.md")
    assert d.related == () and d.extra == {}


def test_report_links_the_first_gb_id_unless_told_otherwise():
    rule = _rule("TC117")
    assert rule.report("a.py", Loc(1, 0, 1, 1), "m", gb_ids=("GB0003",)).url == gb_url("GB0003")
    d = rule.report(
        "a.py", Loc(1, 0, 1, 1), "m", gb_ids=("GB0003",), url=rule.doc_url(), severity=Severity.INFO
    )
    assert d.url == rule.doc_url() and d.gb_ids == ("GB0003",) and d.severity is Severity.INFO


def test_report_with_a_region_needs_the_project():
    with pytest.raises(TypeError):
        _rule("TC110").report("a.py", Loc(1, 0, 1, 1), "m", region=object())  # type: ignore[arg-type]


def test_cross_file_finding_carries_its_chain_and_one_hot_note(tmp_path):
    result = lint_code(tmp_path, HOT_DISABLED_CALL)
    (d,) = [d for d in result.diagnostics if d.code == "TC110"]
    assert d.message.endswith("the graph breaks here (hot: runs in each of 4 blocks)")
    assert d.message.count("hot:") == 1
    assert [r.message for r in d.related][0] == "compiled via `torch.compile(Net())`"
    assert "Block.forward" in d.extra["region"]
    assert d.url == gb_url("GB0098") and d.noqa_line == d.line
