"""Notebooks (.ipynb): broken JSON, JSON that is not a notebook, odd cells (sources as strings,
lists, numbers, null; unknown cell types; magics; every line ending) and byte mutations of a real
notebook.  A notebook's diagnostics must name a code cell and lie inside that cell."""

from __future__ import annotations

import json

from hypothesis import assume, given

from tests.helpers import fuzz_known as known
from tests.helpers.fuzzutil import (
    budget,
    compiled_notebooks,
    format_problems,
    lint_bytes,
    mutated_files,
    notebook_seeds,
    notebooks,
    range_problems,
    tried,
)

NB = "fuzz.ipynb"


def _lint_notebook(data: bytes, prop: str):
    assume(not known.notebook_open(data))  # open findings, if any: see tests/helpers/fuzz_known.py
    tried(prop)
    result = lint_bytes(data, name=NB)
    assert range_problems(result, {NB: data}) == []
    assert format_problems(result) == []
    return result


@budget(400)
@given(notebooks)
def test_odd_notebooks(nb):
    _lint_notebook(
        json.dumps(nb).encode("utf-8"), "library: generated notebooks (odd cells, metadata, JSON shapes)"
    )


@budget(200)
@given(mutated_files(notebook_seeds(), max_ops=3))
def test_mutated_notebook_bytes(data):
    """Broken JSON, invalid UTF-8, truncations of a real notebook."""
    _lint_notebook(data, "library: mutated notebook bytes")


@budget(300)
@given(compiled_notebooks())
def test_findings_in_cells(nb):
    """A compiled function across cells, with hazards, magics, markdown, CRLF and split sources:
    real findings, mapped to (cell, line) inside the cell."""
    _lint_notebook(json.dumps(nb).encode("utf-8"), "library: notebooks with findings across cells")
