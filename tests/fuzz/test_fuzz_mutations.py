"""Mutations of real files (the bundled examples, every rule's VALID/INVALID example, the golden
fixture).  Harsh mutations (truncations, insertions, deletions, byte garbage, re-encodings, BOMs and
coding cookies, lines spliced from other files) mostly end in a syntax error and test the edges of
decoding and parsing; gentle ones (line-level edits: hazards and blocks inserted at the right
indentation, suppression comments, lines deleted, duplicated, swapped, re-ended) keep most files
parseable, so the rules, the region pass, suppressions and fixes run on odd code."""

from __future__ import annotations

from hypothesis import given

from tests.helpers.fuzzutil import (
    budget,
    compiles,
    format_problems,
    gently_mutated_files,
    lint_bytes,
    mutated_files,
    parse_errors,
    python_seeds,
    range_problems,
    tried,
)

SEEDS = python_seeds()


@budget(500)
@given(mutated_files(SEEDS))
def test_harsh_mutations(data):
    tried("library: harsh mutations of real files (ranges, parse agreement)")
    result = lint_bytes(data)
    assert range_problems(result) == []
    if compiles(data):
        assert parse_errors(result) == [], "the interpreter accepts this file"


@budget(500)
@given(gently_mutated_files(SEEDS))
def test_gentle_mutations(data):
    tried("library: gentle mutations of real files (ranges, parse agreement)")
    result = lint_bytes(data)
    assert range_problems(result) == []
    if compiles(data):
        assert parse_errors(result) == [], "the interpreter accepts this file"


@budget(250)
@given(gently_mutated_files(SEEDS))
def test_output_formats_stay_valid(data):
    """JSON parses and round-trips, JSON lines match it, SARIF validates against the 2.1.0 schema,
    concise and GitHub output keep one line per finding."""
    tried("library: output formats (json, json-lines, sarif schema, github, concise, full)")
    assert format_problems(lint_bytes(data)) == []


@budget(100)
@given(mutated_files(SEEDS, max_ops=2), gently_mutated_files(SEEDS, max_ops=2))
def test_two_file_projects(a, b):
    """Two files linted together: the project pass sees a broken neighbour."""
    tried("library: two-file projects")
    result = lint_bytes({"a.py": a, "b.py": b})
    assert range_problems(result) == []
    assert format_problems(result) == []
