"""Random configuration files: every known key (and unknown ones) with values of every TOML type,
in tclint.toml and pyproject.toml.  Loading either succeeds or raises ConfigError naming the file
(and the key, when there is one) -- never another exception; and settings that load can be used:
a lint and every output format run with them."""

from __future__ import annotations

import json
import math
import os
import tempfile

from hypothesis import given
from hypothesis import strategies as st
from tclint.rules.config import DYNAMO_KEYS, KEYS, PROBE_KEYS, ConfigError, load_file

from tests.helpers.fuzzutil import budget, format_problems, lint_bytes, tried

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
_codes = st.sampled_from(
    ["TC", "ALL", "TC1", "TC10", "TC104", "TC101", "TC2", "TC3", "TC012", "TC000", "TC999", "E501", "tc1", ""]
)
_scalars = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(),
    _text,
    _codes,
    st.sampled_from(
        [
            "error",
            "warning",
            "info",
            "hint",
            "high",
            "low",
            "json",
            "sarif",
            "2.13",
            "1.0.0.0",
            "*.py",
            "tests/",
            "[",
            "**",
            "pkg.*:*.forward",
            ".",
            "..",
            "/",
            "~",
        ]
    ),
)
values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.one_of(_codes, _text), children, max_size=3)
    ),
    max_leaves=8,
)
_keys = st.one_of(
    st.sampled_from(sorted(KEYS)), st.sampled_from(["selct", "extend_select", "lint", "line-length", ""])
)
_sub = {"dynamo": sorted(DYNAMO_KEYS), "probe": sorted(PROBE_KEYS)}
tables = st.dictionaries(_keys, values, max_size=5)


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{_string(k)} = {_value(x)}" for k, x in v.items()) + "}"


def _string(s: str) -> str:
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


@st.composite
def config_tables(draw):
    table = draw(tables)
    for name, keys in _sub.items():  # typed sub-tables with their own keys
        if draw(st.booleans()):
            table[name] = draw(st.dictionaries(st.one_of(st.sampled_from(keys), _text), values, max_size=3))
    return table


def _toml(table: dict, prefix: str) -> str:
    return "".join(f"{prefix}{_string(k)} = {_value(v)}\n" for k, v in table.items())


@budget(400)
@given(config_tables(), st.sampled_from(["tclint.toml", "pyproject.toml"]))
def test_random_configs_load_or_fail_cleanly(table, name):
    folder = tempfile.mkdtemp(prefix="tclint-cfg-")
    path = os.path.join(folder, name)
    text = ("[tool.tclint]\n" if name == "pyproject.toml" else "") + _toml(table, "")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    try:
        settings = load_file(path)
    except ConfigError as exc:
        tried("config: random tables rejected with a ConfigError naming file and key")
        assert path in str(exc)
        if exc.key:
            assert exc.key.split(".")[0] in str(exc)
        return
    finally:
        os.unlink(path)
        os.rmdir(folder)
    assert settings is not None
    tried("config: random tables accepted (then linted and rendered with)")
    # usable: lint a file with findings and render every format with these settings
    table_for_lint = {k: v for k, v in table.items() if k not in ("cache-dir",)}
    result = lint_bytes(
        b"import torch\n\n@torch.compile\ndef f(x):\n    print(x)  # noqa: TC101\n    return x.item()\n",
        table=table_for_lint,
    )
    assert format_problems(result) == []


def _typed_value(key: str):
    from tclint.rules.registry import by_code

    codes = st.sampled_from(sorted({c[:n] for c in by_code() for n in (2, 3, 4, 5)} | {"ALL"}))
    odd = st.sampled_from(
        ["*.py", "**", "[", "!tests/*", "", "m.py", "pkg/", "*", "~", "é/*", "a\\b", "pkg.*:*.forward"]
    )
    simple = {
        "select": st.lists(codes, max_size=3),
        "extend-select": st.lists(codes, max_size=3),
        "ignore": st.lists(codes, max_size=3),
        "per-file-ignores": st.dictionaries(odd, st.lists(codes, max_size=2), max_size=3),
        "severity": st.dictionaries(
            codes, st.sampled_from(["error", "warning", "info", "hint", "warn", "INFO"]), max_size=3
        ),
        "exclude": st.lists(odd, max_size=3),
        "extend-exclude": st.lists(odd, max_size=3),
        "assume-compiled": st.lists(odd, max_size=3),
        "compiling-predicates": st.lists(odd, max_size=3),
        "target-torch-version": st.sampled_from(["2.13", "2", "1.0.0", "99.99", "2.6"]),
        "min-confidence": st.sampled_from(["high", "medium", "low"]),
        "output-format": st.sampled_from(["concise", "full", "json", "json-lines", "sarif", "github"]),
        "max-file-size": st.integers(1, 2**40),
    }
    if key in simple:
        return simple[key]
    if key in ("dynamo", "probe"):
        schema = DYNAMO_KEYS if key == "dynamo" else PROBE_KEYS
        by_type = {
            bool: st.booleans(),
            int: st.integers(1, 10**6),
            float: st.floats(0.1, 100),
            str: _text,
            list: st.lists(_text, max_size=2),
            dict: st.dictionaries(_text, _text, max_size=2),
        }

        def typed(t):
            return st.one_of(*(by_type[x] for x in t)) if isinstance(t, tuple) else by_type[t]

        return st.fixed_dictionaries({}, optional={k: typed(t) for k, t in schema.items()})
    return st.booleans()


plausible = st.lists(st.sampled_from(sorted(set(KEYS) - {"cache-dir"})), max_size=8, unique=True).flatmap(
    lambda keys: st.fixed_dictionaries({k: _typed_value(k) for k in keys})
)


@budget(300)
@given(plausible)
def test_plausible_configs_lint(table):
    """Well-typed settings in odd combinations (select/ignore prefixes, severity overrides, globs
    with brackets, dynamo flags): linting and every output format work with them."""
    folder = tempfile.mkdtemp(prefix="tclint-cfg-")
    path = os.path.join(folder, "tclint.toml")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(_toml(table, ""))
    try:
        load_file(path)
    except ConfigError as exc:
        tried("config: plausible tables rejected with a ConfigError naming file and key")
        assert path in str(exc)
        return
    finally:
        os.unlink(path)
        os.rmdir(folder)
    tried("config: plausible tables accepted, then linted and rendered with")
    code = (
        b"import torch\n\n@torch.compile\ndef f(x):\n    print(x)  # noqa: TC101\n    if x.sum() > 0:\n"
        b"        x = x + 1\n    return x.item()\n"
    )
    assert format_problems(lint_bytes(code, table=table)) == []
