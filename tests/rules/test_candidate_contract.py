"""The typed contract between rules and the engine (issue 16): what a candidate says about its frame,
its severity and the facts it needs are typed ``Candidate`` fields, severity and heat are decided in
one place (``engine.severity_and_heat``), and ``Candidate.data`` is private to the rule that made it."""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from tclint.rules import plaindata
from tclint.rules import types as T
from tclint.rules.engine import severity_and_heat
from tclint.rules.facts import Candidate, FileFacts, FrameEffect, Loc, Need, Requirement
from tclint.rules.model import Severity
from tclint.rules.ruletypes import Family

from tests.helpers import ROOT
from tests.helpers.lintutil import lint_code

LOC = Loc(3, 4, 3, 9)


@dataclass
class _Region:
    """The parts of ``project.Region`` the heat reads."""

    multiplier: str | None = None
    loop_caller: tuple[str, str, int] | None = None


def _rule(family: str = "graph-break", default: Severity = Severity.WARNING) -> SimpleNamespace:
    return SimpleNamespace(family=Family(family), default_severity=default)


def _cand(**kw) -> Candidate:
    return Candidate(
        code="TC999", func="m.step", loc=LOC, message="breaks", confidence=kw.pop("confidence", T.HIGH), **kw
    )


def test_typed_fields_survive_the_cache_codec():
    cand = _cand(
        requires=(
            Requirement(Need.NOT_COMPILING_PREDICATE, "m.eager_only"),
            Requirement(Need.RETURNS_TENSOR, "m.make"),
        ),
        frame=FrameEffect.WHOLE_FRAME,
        severity=Severity.WARNING,
        user_ctx=2,
        data={"method": "debug"},
    )
    ff = FileFacts(path="m.py", module="m", is_package=False, root=".")
    ff.candidates.append(cand)
    back = plaindata.decode_facts(plaindata.encode_facts(ff)).candidates[0]
    assert back == cand
    assert back.frame is FrameEffect.WHOLE_FRAME and back.requires[1].need is Need.RETURNS_TENSOR


ROWS = [
    # (id, candidate fields, rule family, region, expected severity, expected notes, frame dropped)
    ("plain break", {}, "graph-break", _Region(), Severity.WARNING, [], False),
    ("outside any region", {"loop_line": 7}, "graph-break", None, Severity.WARNING, [], True),
    (
        "loop body",
        {"loop_line": 7},
        "graph-break",
        _Region(),
        Severity.ERROR,
        ["inside the loop at line 7: Dynamo cannot resume in a loop body, so all of `step` runs eagerly"],
        True,
    ),
    (
        "user context manager first",
        {"loop_line": 7, "user_ctx": 5},
        "graph-break",
        _Region(),
        Severity.ERROR,
        ["inside the user context manager at line 5: Dynamo gives up on all of `step`, which runs eagerly"],
        True,
    ),
    (
        "called from a loop",
        {},
        "graph-break",
        _Region(loop_caller=("train", "t.py", 9)),
        Severity.ERROR,
        ["called from a loop in train (line 9): that whole frame runs eagerly"],
        False,
    ),
    (
        "hot and cold",
        {"cold": "only on the error path"},
        "graph-break",
        _Region(multiplier="each of 12 blocks"),
        Severity.INFO,
        ["hot: runs in each of 12 blocks", "only on the error path"],
        False,
    ),
    (
        "whole frame anywhere",
        {"frame": FrameEffect.WHOLE_FRAME},
        "graph-break",
        None,
        Severity.ERROR,
        [],
        True,
    ),
    (
        "whole frame is a break notion",
        {"frame": FrameEffect.WHOLE_FRAME},
        "recompile",
        _Region(),
        Severity.WARNING,
        [],
        False,
    ),
    (
        "the rule's own severity wins",
        {"severity": Severity.HINT, "loop_line": 7},
        "graph-break",
        _Region(),
        Severity.HINT,
        ["inside the loop at line 7: Dynamo cannot resume in a loop body, so all of `step` runs eagerly"],
        True,
    ),
    (
        "low confidence is at most info",
        {"confidence": T.LOW, "frame": FrameEffect.WHOLE_FRAME},
        "graph-break",
        None,
        Severity.INFO,
        [],
        True,
    ),
    (
        "no heat for other families",
        {"loop_line": 7},
        "recompile",
        _Region(multiplier="each of 2"),
        Severity.WARNING,
        [],
        False,
    ),
]


@pytest.mark.parametrize(
    ("fields", "family", "region", "severity", "notes", "dropped"),
    [r[1:] for r in ROWS],
    ids=[r[0] for r in ROWS],
)
def test_severity_and_heat(fields, family, region, severity, notes, dropped):
    assert severity_and_heat(_cand(**fields), _rule(family), region) == (severity, notes, dropped)


def test_a_whole_frame_break_is_an_error_through_the_linter(tmp_path):
    result = lint_code(
        tmp_path,
        """
import torch

@torch.compile
def f(x: torch.Tensor):
    y = not x
    return y
""",
    )
    (d,) = [d for d in result.diagnostics if d.code == "TC102"]
    assert d.severity is Severity.ERROR and d.extra.get("frame_drop") is True


ENGINE_KEYS = {"whole_frame", "severity", "user_ctx", "related", "no_frame_drop", "frame_drop_via_caller"}


def _data_keys(tree: ast.AST) -> set[str]:
    keys: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "data" and isinstance(node.value, ast.Dict):
            keys |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "data"
        ):
            if isinstance(node.slice, ast.Constant):
                keys.add(node.slice.value)
    return keys


def test_no_rule_talks_to_the_engine_through_data():
    """What the engine reads is a typed field; a rule's ``data`` holds only its own notes."""
    catalog = os.path.join(ROOT, "rules", "catalog")
    used = {}
    for name in sorted(os.listdir(catalog)):
        if name.endswith(".py"):
            with open(os.path.join(catalog, name), encoding="utf-8") as fh:
                keys = _data_keys(ast.parse(fh.read())) & ENGINE_KEYS
            if keys:
                used[name] = keys
    assert used == {}
    engine = os.path.join(ROOT, "rules", "engine.py")
    with open(engine, encoding="utf-8") as fh:
        assert ".data" not in fh.read()
