"""The indented JSON writer behind the json and sarif formats equals ``json.dumps(indent=2)``."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from tclint.rules.report.indented_json import dumps

_leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text()
_keys = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
_values = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(_keys, inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(_values, st.integers(min_value=0, max_value=4))
def test_equals_json_dumps(value, indent):
    assert dumps(value, indent) == json.dumps(value, indent=indent, ensure_ascii=False)


def test_what_the_reporters_write():
    value = {"é": ["line\nbreak", "\u2028", "\x00", 1, -0.0, 1e300, None, True, {}, [], {"a": {"b": [()]}}]}
    assert dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)
