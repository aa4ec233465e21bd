"""Notebooks (.ipynb): broken JSON, JSON that is not a notebook, odd cells (sources as strings,
lists, numbers, null; unknown cell types; magics; every line ending) and byte mutations of a real
notebook.  A notebook's diagnostics must name a code cell and lie inside that cell."""

from __future__ import annotations

import json

import known
from fuzzutil import (
    FRAGMENTS,
    STATEMENTS,
    budget,
    format_problems,
    lint_bytes,
    mutated_files,
    notebook_seeds,
    range_problems,
    tried,
)
from hypothesis import assume, given
from hypothesis import strategies as st

NB = "fuzz.ipynb"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)

_piece = st.one_of(
    st.sampled_from(STATEMENTS).map(lambda b: b.replace(b"{i}", b"").decode("utf-8")),
    st.sampled_from(FRAGMENTS).map(lambda b: b.decode("utf-8", "replace")),
    st.sampled_from(["import torch\n", "@torch.compile\ndef f(x):\n", "    print(x)\n", "    return x.item()\n",
                     "f(torch.ones(3))\n", "%time f(x)\n", "!pip list\n", "x = !ls\n", "%%time\n", "%%bash\necho\n",
                     "f?\n", "    %debug\n",
                     "    %time f(x)  # noqa: TC101\n", "x = !ls  # noqa: TC104\n", "%time x  # tclint: disable[TC104]\n", "\r", "\r\n", "\n"]),
)
_source_text = st.lists(_piece, max_size=8).map("".join)
_source = st.one_of(
    _source_text,
    _source_text.map(lambda s: s.splitlines(keepends=True)),  # nbformat's list of lines
    st.lists(_source_text, max_size=3),
    json_values,
)
_cell = st.one_of(
    st.fixed_dictionaries({"cell_type": st.sampled_from(["code", "code", "code", "markdown", "raw"]), "source": _source},
                          optional={"metadata": json_values, "outputs": json_values, "id": st.text(max_size=5)}),
    json_values,
)
_metadata = st.one_of(
    st.just({"kernelspec": {"language": "python"}}),
    st.fixed_dictionaries({"kernelspec": st.fixed_dictionaries({"language": json_values | st.sampled_from(["Python", "R"])})}),
    json_values,
)
notebooks = st.one_of(
    st.fixed_dictionaries({"cells": st.lists(_cell, max_size=6), "metadata": _metadata, "nbformat": st.just(4),
                           "nbformat_minor": st.just(5)}),
    st.fixed_dictionaries({"cells": json_values}),
    json_values,
)


def _lint_notebook(data: bytes, prop: str):
    assume(not known.notebook_open(data))  # open findings #1-#3: see test_findings.py
    tried(prop)
    result = lint_bytes(data, name=NB)
    assert range_problems(result, {NB: data}) == []
    assert format_problems(result) == []
    return result


@budget(400)
@given(notebooks)
def test_odd_notebooks(nb):
    _lint_notebook(json.dumps(nb).encode("utf-8"), "library: generated notebooks (odd cells, metadata, JSON shapes)")


@budget(200)
@given(mutated_files(notebook_seeds(), max_ops=3))
def test_mutated_notebook_bytes(data):
    """Broken JSON, invalid UTF-8, truncations of a real notebook."""
    _lint_notebook(data, "library: mutated notebook bytes")
