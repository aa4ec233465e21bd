"""Arbitrary bytes and token soup through the whole static pipeline (decode, parse, walk, project
pass, selection, suppression): nothing raises, every range lies inside the file, and the interpreter
and tclint agree on what parses."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.fuzzutil import (
    budget,
    compiles,
    lint_bytes,
    parse_errors,
    range_problems,
    token_soup,
    tried,
)


@budget(300)
@given(st.binary(max_size=400))
def test_random_bytes(data):
    """Byte garbage, invalid UTF-8, NUL bytes: at most one TC000/TC011, always in range."""
    tried("library: random bytes")
    result = lint_bytes(data)
    assert range_problems(result) == []
    assert len(parse_errors(result)) <= 1


@budget(400)
@given(token_soup())
def test_token_soup(data):
    """Python fragments in any order: suppressions, compile markers, Python 2 and IPython syntax,
    every line ending, stray quotes and brackets."""
    tried("library: token soup")
    result = lint_bytes(data)
    assert range_problems(result) == []
    if compiles(data):
        assert parse_errors(result) == [], "the interpreter accepts this file"
