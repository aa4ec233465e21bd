"""Shared pieces of the fuzz suite: budgets and seeds, the corpus, mutators, an in-memory lint, and
the property checks every fuzz test applies.

Budgets: every property runs a fixed number of examples with hypothesis' ``derandomize`` (the seed is
derived from the test itself, so CI runs the same inputs every time and a failure reproduces).  Set
``TCLINT_FUZZ=long`` for the local mode: 25x the examples and fresh random seeds on every run (add
``--hypothesis-seed=N`` to pin one); ``TCLINT_FUZZ_SCALE=<float>`` sets the multiplier directly.

Counting: each property calls ``tried(name)`` once per input, so the figures in the README's
"Reliability" section come from the suite itself (printed at the end of the run; also written as
JSON to ``$TCLINT_FUZZ_REPORT`` when set).
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import os
import re
import tempfile
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from tclint.rules.config import ConfigResolver, Settings, parse_table
from tclint.rules.engine import Linter, LintResult
from tclint.rules.model import Diagnostic, Position
from tclint.rules.report import github, json_, sarif, text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "fixtures")
SARIF_SCHEMA = os.path.join(DATA, "sarif-2.1.0.schema.json")

LONG = os.environ.get("TCLINT_FUZZ") == "long"
SCALE = float(os.environ.get("TCLINT_FUZZ_SCALE") or (25 if LONG else 1))

COUNTS: collections.Counter[str] = collections.Counter()


def tried(prop: str, n: int = 1) -> None:
    COUNTS[prop] += n


_REPORTED = []


def report(terminalreporter: Any) -> None:
    """Print the counts once per session (both test folders' conftests call this)."""
    if not COUNTS or _REPORTED:
        return
    _REPORTED.append(True)
    terminalreporter.write_sep("-", f"tclint fuzz: inputs tried per property (scale {SCALE:g})")
    for prop, n in sorted(COUNTS.items()):
        terminalreporter.write_line(f"{n:>8}  {prop}")
    out = os.environ.get("TCLINT_FUZZ_REPORT")
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            json.dump(dict(sorted(COUNTS.items())), fh, indent=2)


def budget(examples: int, **overrides: Any) -> settings:
    """Hypothesis settings for one property: ``examples`` inputs in CI, fixed seed; more and random
    in the long mode.  No example database: CI must not depend on what a previous run found."""
    options: dict[str, Any] = dict(
        max_examples=max(1, int(examples * SCALE)),
        derandomize=not LONG,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=list(HealthCheck),
    )
    options.update(overrides)
    return settings(**options)


# ---------------------------------------------------------------------------------------------
# the corpus


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def python_seeds() -> list[bytes]:
    """Real files: the bundled examples, every rule's VALID/INVALID example, the golden fixture."""
    from tclint.rules.registry import all_rules

    out = []
    for base, _dirs, files in sorted(os.walk(os.path.join(ROOT, "examples"))):
        out.extend(_read(os.path.join(base, f)) for f in sorted(files) if f.endswith(".py"))
    for rule in all_rules():
        out.extend(ex.code.encode("utf-8") for ex in (*rule.valid, *rule.invalid))
    out.append(_read(os.path.join(ROOT, "tests", "fixtures", "golden", "model.py")))
    out.append(_read(os.path.join(DATA, "editors", "project", "model.py")))
    return out


def notebook_seeds() -> list[bytes]:
    return [_read(os.path.join(DATA, "editors", "project", "explore.ipynb"))]


# Pieces that make inputs interesting for this linter: suppressions, compile markers, hazards,
# Python 2 and IPython syntax, every kind of line ending and whitespace, bytes that are not UTF-8.
FRAGMENTS: tuple[bytes, ...] = tuple(
    s if isinstance(s, bytes) else s.encode("utf-8")
    for s in (
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ":",
        ",",
        ";",
        ".",
        "=",
        "+",
        "*",
        "**",
        "\\",
        "\\\n",
        "@",
        "\n",
        "\r",
        "\r\n",
        "\t",
        "    ",
        " ",
        "\x0c",
        "\x0b",
        "\x00",
        b"\xff",
        b"\xc3",
        b"\xed\xa0\x80",
        b"\xef\xbb\xbf",
        "\u2028",
        "\u00e9",
        "\U0001d518",
        "\u200b",
        "'",
        '"',
        '"""',
        "'''",
        "f'",
        'f"{',
        '}"',
        "b'",
        "r'",
        "u'",
        "ur'",
        "'\\",
        "#",
        "# noqa",
        "# noqa: TC101",
        "# noqa:TC104,TC101",
        "  # NOQA",
        "# noqa: E501",
        "# tclint: noqa",
        "# tclint: noqa: TC104",
        "# tclint: disable[TC104]",
        "# tclint: enable",
        "# tclint: disable",
        "# tclint: enable[TC101]",
        "# tclint: compiled",
        "# -*- coding: latin-1 -*-\n",
        "# coding: bogus\n",
        "# type: ignore",
        "import torch\n",
        "import torch as T\n",
        "from torch import nn\n",
        "import logging\n",
        "@torch.compile\n",
        "@torch.compile(fullgraph=True)\n",
        "@torch.compiler.disable\n",
        "def f(x):\n",
        "def forward(self, x):\n",
        "async def g(x):\n",
        "class M(torch.nn.Module):\n",
        "class M(nn.Module):\n",
        "lambda x: ",
        "yield x",
        "await x",
        "return ",
        "return x\n",
        "print(x)",
        "x.item()",
        "x.tolist()",
        "x.sum() > 0",
        "if x.sum() > 0:\n",
        "for i in range(3):\n",
        "while x:\n",
        "with torch.no_grad():\n",
        "try:\n",
        "except RuntimeError:\n",
        "else:\n",
        "torch._dynamo.graph_break()",
        "logging.info(x)",
        "self.n += 1",
        "torch.compile(f)(x)",
        "torch.compile(M())",
        "torch._dynamo.config.capture_scalar_outputs = True\n",
        "x.data_ptr()",
        "copy.deepcopy(x)",
        "x.nonzero()",
        "str(x)",
        "x.requires_grad_()",
        "print 'x'\n",
        "exec 'x'\n",
        "except Exception, e:\n",
        "`x`",
        "1 <> 2",
        "0777",
        "raise E, 'm'\n",
        "def f((a, b)):\n",
        "%matplotlib inline\n",
        "!ls\n",
        "x?\n",
        "%%bash\n",
        "match x:\n    case [1, *r]:\n        pass\n",
        "type X = int\n",
        "def f[T](x: T): ...\n",
        "del f()\n",
        "f(**k, *a)\n",
        "x = yield = 1\n",
        "nonlocal q\n",
        "global x\n",
        "(x := 1)",
        "*a, b = c\n",
        "print(*x, sep='')",
        "...",
        "pass\n",
        "\n\n\n",
    )  # fmt: skip
)


class Chooser:
    """The random decisions a mutator makes, from hypothesis (``draw``) or a seeded ``random``."""

    def __init__(self, draw: Callable[[Any], Any] | None = None, rng: Any = None) -> None:
        self._draw = draw
        self._rng = rng

    def integer(self, lo: int, hi: int) -> int:
        if self._draw is not None:
            return self._draw(st.integers(lo, hi))
        return self._rng.randint(lo, hi)

    def choice(self, items: Sequence[Any]) -> Any:
        if self._draw is not None:
            return self._draw(st.sampled_from(items))
        return self._rng.choice(items)

    def blob(self, max_size: int) -> bytes:
        if self._draw is not None:
            return self._draw(st.binary(max_size=max_size))
        return bytes(self._rng.randrange(256) for _ in range(self._rng.randint(0, max_size)))


def _line_spans(data: bytes) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in re.finditer(rb"\r\n|\r|\n", data):
        spans.append((start, m.end()))
        start = m.end()
    spans.append((start, len(data)))
    return spans


def _op_truncate(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    return data[: c.integer(0, len(data))]


def _op_delete(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    a = c.integer(0, len(data))
    b = c.integer(a, min(len(data), a + 80))
    return data[:a] + data[b:]


def _op_insert(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    at = c.integer(0, len(data))
    piece = c.choice(FRAGMENTS) if c.integer(0, 3) else c.blob(12)
    return data[:at] + piece + data[at:]


def _op_garbage(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    at = c.integer(0, len(data))
    n = c.integer(1, 8)
    return data[:at] + c.blob(n) + data[at + n :]


def _op_duplicate(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    a = c.integer(0, len(data))
    b = c.integer(a, min(len(data), a + 200))
    return data[:b] + data[a:b] + data[b:]


def _op_line_endings(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    """Re-end some lines with \\r\\n, \\r or \\n (a file edited on three systems)."""
    out = []
    for start, end in _line_spans(data):
        line = data[start:end]
        body = line.rstrip(b"\r\n")
        if body != line and c.integer(0, 2) == 0:
            line = body + c.choice((b"\n", b"\r\n", b"\r"))
        out.append(line)
    return b"".join(out)


def _op_tabs(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    """Swap indentation of some lines between spaces and tabs, or shift it by one column."""
    out = []
    for start, end in _line_spans(data):
        line = data[start:end]
        if c.integer(0, 3) == 0:
            stripped = line.lstrip(b" \t")
            indent = line[: len(line) - len(stripped)]
            kind = c.integer(0, 3)
            if kind == 0:
                indent = indent.replace(b"    ", b"\t")
            elif kind == 1:
                indent = indent.replace(b"\t", b"        ")
            elif kind == 2:
                indent = indent + b" "
            else:
                indent = b"\t" + indent
            line = indent + stripped
        out.append(line)
    return b"".join(out)


def _op_swap_lines(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    spans = _line_spans(data)
    i, j = c.integer(0, len(spans) - 1), c.integer(0, len(spans) - 1)
    lines = [data[s:e] for s, e in spans]
    lines[i], lines[j] = lines[j], lines[i]
    return b"".join(lines)


def _op_splice(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    other = c.choice(seeds)
    a = c.integer(0, len(other))
    b = c.integer(a, min(len(other), a + 300))
    at = c.integer(0, len(data))
    return data[:at] + other[a:b] + data[at:]


def _op_prefix(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    """A BOM, a coding cookie, or both (conflicting ones too)."""
    return c.choice((
        b"\xef\xbb\xbf", b"# -*- coding: latin-1 -*-\n", b"# coding: utf-8\n", b"# vim: set fileencoding=cp1252 :\n",
        b"\xef\xbb\xbf# coding: latin-1\n", b"# coding: utf-16\n", b"#!/usr/bin/env python\n# coding: ascii\n",
    )) + data  # fmt: skip


def _op_encode(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    """Re-encode the text: latin-1 (invalid UTF-8 where non-ASCII), UTF-16 (NULs everywhere)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    return text.encode(c.choice(("latin-1", "utf-16", "utf-8-sig", "cp1252")), "replace")


STATEMENTS: tuple[bytes, ...] = tuple(
    s.encode("utf-8")
    for s in (
        "print(x)",
        "print('données', x.shape)",
        "y = x.item()",
        "y = x.tolist()",
        "n = int(x.sum())",
        "if x.sum() > 0:\n{i}    x = x + 1",
        "for i in range(x.size(0)):\n{i}    print(i)",
        "torch._dynamo.graph_break()",
        "logging.info('%s', x)",
        "warnings.warn('w')",
        "self.count += 1",
        "self.cache.append(x)",
        "x = torch.nonzero(x)",
        "s = str(x)",
        "p = x.data_ptr()",
        "x.requires_grad_(True)",
        "with open('f') as fh:\n{i}    fh.read()",
        "import copy; y = copy.deepcopy(x)",
        "x = torch.compile(lambda t: t * 2)(x)",
        "torch._dynamo.config.recompile_limit = 64",
        "@torch.compile\n{i}def h(x):\n{i}    return x.item()",
        "try:\n{i}    x = x.cuda()\n{i}except RuntimeError:\n{i}    pass",
        "return x",
        "yield x",
        "pass",
        "del x",
        "global x",
        "x = yield",
        "raise ValueError(x)",
        "def inner(y):\n{i}    return y.numpy()",
        "class Local:\n{i}    pass",
        "x: torch.Tensor = x * 2",
        "print 'py2'",
        "exec 'x = 1'",
        "x = `y`",
        "async with a:\n{i}    pass",
        "match x:\n{i}    case 1:\n{i}        pass",
        "# noqa: TC104",
        "# tclint: disable[TC101]",
        "# tclint: enable",
        "# tclint: noqa: TC104",
        "# tclint: compiled",
    )  # fmt: skip
)


def _op_line_delete(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    spans = _line_spans(data)
    s, e = spans[c.integer(0, len(spans) - 1)]
    return data[:s] + data[e:]


def _op_line_dup(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    spans = _line_spans(data)
    s, e = spans[c.integer(0, len(spans) - 1)]
    return data[:e] + data[s:e] + data[e:]


def _op_statement(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    """A hazard or a block, at the indentation of the line it is put before."""
    spans = _line_spans(data)
    s, e = spans[c.integer(0, len(spans) - 1)]
    line = data[s:e]
    indent = line[: len(line) - len(line.lstrip(b" \t"))]
    stmt = c.choice(STATEMENTS).replace(b"{i}", indent)
    return data[:s] + indent + stmt + b"\n" + data[s:]


def _op_comment(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    """A suppression or marker comment at the end of a line."""
    spans = _line_spans(data)
    s, e = spans[c.integer(0, len(spans) - 1)]
    line = data[s:e]
    body = line.rstrip(b"\r\n")
    comment = c.choice(
        (
            b"  # noqa",
            b"  # noqa: TC101",
            b"  # noqa: TC104, TC999",
            b"  # NOQA:TC105",
            b"  # tclint: disable[TC104]",
            b"  # tclint: compiled",
            b"  # noqa: E501",
        )
    )
    return data[:s] + body + comment + line[len(body) :] + data[e:]


def _op_swap_adjacent(c: Chooser, data: bytes, seeds: Sequence[bytes]) -> bytes:
    spans = _line_spans(data)
    if len(spans) < 2:
        return data
    i = c.integer(0, len(spans) - 2)
    (s1, e1), (s2, e2) = spans[i], spans[i + 1]
    return data[:s1] + data[s2:e2] + data[s1:e1] + data[e2:]


GENTLE = (
    _op_line_delete, _op_line_dup, _op_statement, _op_statement, _op_statement, _op_comment, _op_comment,
    _op_swap_adjacent, _op_line_endings,
)  # fmt: skip


def mutate_gently(c: Chooser, data: bytes, max_ops: int = 3) -> bytes:
    """Line-level edits that usually keep the file parseable, so that rules, regions, suppressions
    and fixes run on the result (byte-level mutations mostly end in a syntax error)."""
    for _ in range(c.integer(1, max_ops)):
        data = c.choice(GENTLE)(c, data, ())
    return data


@st.composite
def gently_mutated_files(draw: Any, seeds: Sequence[bytes], max_ops: int = 3) -> bytes:
    c = Chooser(draw=draw)
    return mutate_gently(c, c.choice(seeds), max_ops)


MUTATIONS = (
    _op_truncate, _op_delete, _op_insert, _op_insert, _op_insert, _op_garbage, _op_duplicate,
    _op_line_endings, _op_tabs, _op_swap_lines, _op_splice, _op_prefix, _op_encode,
)  # fmt: skip


def mutate(c: Chooser, data: bytes, seeds: Sequence[bytes], max_ops: int = 6) -> bytes:
    for _ in range(c.integer(1, max_ops)):
        op = c.choice(MUTATIONS)
        data = op(c, data, seeds)
    return data


@st.composite
def mutated_files(draw: Any, seeds: Sequence[bytes], max_ops: int = 6) -> bytes:
    c = Chooser(draw=draw)
    return mutate(c, c.choice(seeds), seeds, max_ops)


@st.composite
def token_soup(draw: Any) -> bytes:
    """Files built from the fragments (and a few identifiers and raw bytes), in any order."""
    parts = draw(
        st.lists(
            st.one_of(
                st.sampled_from(FRAGMENTS),
                st.sampled_from([b"x", b"y", b"self", b"torch", b"1"]),
                st.binary(max_size=4),
            ),
            max_size=60,
        )
    )
    return b"".join(parts)


# notebooks: any JSON, and notebook-shaped JSON with odd cells

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)

_piece = st.one_of(
    st.sampled_from(STATEMENTS).map(lambda b: b.replace(b"{i}", b"").decode("utf-8")),
    st.sampled_from(FRAGMENTS).map(lambda b: b.decode("utf-8", "replace")),
    st.sampled_from(
        [
            "import torch\n",
            "@torch.compile\ndef f(x):\n",
            "    print(x)\n",
            "    return x.item()\n",
            "f(torch.ones(3))\n",
            "%time f(x)\n",
            "!pip list\n",
            "x = !ls\n",
            "%%time\n",
            "%%bash\necho\n",
            "f?\n",
            "    %debug\n",
            "    %time f(x)  # noqa: TC101\n",
            "x = !ls  # noqa: TC104\n",
            "%time x  # tclint: disable[TC104]\n",
            "\r",
            "\r\n",
            "\n",
        ]
    ),
)
_source_text = st.lists(_piece, max_size=8).map("".join)
_source = st.one_of(
    _source_text,
    _source_text.map(lambda s: s.splitlines(keepends=True)),  # nbformat's list of lines
    st.lists(_source_text, max_size=3),
    json_values,
)
_cell = st.one_of(
    st.fixed_dictionaries(
        {"cell_type": st.sampled_from(["code", "code", "code", "markdown", "raw"]), "source": _source},
        optional={"metadata": json_values, "outputs": json_values, "id": st.text(max_size=5)},
    ),
    json_values,
)
_metadata = st.one_of(
    st.just({"kernelspec": {"language": "python"}}),
    st.fixed_dictionaries(
        {"kernelspec": st.fixed_dictionaries({"language": json_values | st.sampled_from(["Python", "R"])})}
    ),
    json_values,
)
notebooks = st.one_of(
    st.fixed_dictionaries(
        {
            "cells": st.lists(_cell, max_size=6),
            "metadata": _metadata,
            "nbformat": st.just(4),
            "nbformat_minor": st.just(5),
        }
    ),
    st.fixed_dictionaries({"cells": json_values}),
    json_values,
)


@st.composite
def _cell_source(draw: Any, text: str) -> Any:
    """One cell's text as nbformat may store it: a string, a list of lines, or a list split anywhere."""
    form = draw(st.integers(0, 2))
    if form == 0:
        return text
    if form == 1:
        lines: list[Any] = text.splitlines(keepends=True)
    else:
        cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=4)))
        lines = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    if draw(st.integers(0, 9)) == 0:  # not a string: nbformat would reject it, Jupyter may still load it
        lines.append(draw(st.sampled_from([1, None, 2.5, True])))
    return lines


@st.composite
def compiled_notebooks(draw: Any) -> dict[str, Any]:
    """Notebooks with a compiled function spread over cells, hazards in it, magics and markdown
    between: the cell mapping of real findings gets exercised."""
    body = draw(
        st.lists(st.sampled_from(STATEMENTS).map(lambda b: b.decode("utf-8")), min_size=1, max_size=5)
    )
    lines = [line.replace("{i}", "    ") for line in body]
    texts = [
        "import torch\n",
        "@torch.compile\ndef f(x):\n" + "".join("    " + line + "\n" for line in lines) + "    return x\n",
        "f(torch.ones(3))\n",
    ]
    if draw(st.booleans()):
        texts.insert(
            1,
            draw(
                st.sampled_from(
                    [
                        "%matplotlib inline\n",
                        "!nvidia-smi\nx = 1\n",
                        "%%time\ny = 2\n",
                        "%%bash\necho hi\n",
                        "x?\n",
                    ]
                )
            ),
        )
    if draw(st.booleans()):  # a loop cell re-making a compiled wrapper: TC313's codemod, in its cell
        texts.append("for _ in range(2):\n    g = torch.compile(f)\n    g(torch.ones(3))\n")
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    cells: list[Any] = []
    for cell_text in texts:
        if draw(st.integers(0, 3)) == 0:
            cells.append({"cell_type": "markdown", "source": "# notes" + eol, "metadata": {}})
        cells.append(
            {
                "cell_type": "code",
                "source": draw(_cell_source(cell_text.replace("\n", eol))),
                "metadata": {},
                "outputs": [],
                "execution_count": None,
            }
        )
    return {
        "cells": cells,
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


# ---------------------------------------------------------------------------------------------
# linting in memory


WIDE = {"select": ["ALL"], "min-confidence": "low", "preview": True, "assume-compiled-forward": True}


class FixedResolver(ConfigResolver):
    """Every file gets the same settings; no configuration discovery on disk."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(None, None, isolated=True)
        self._settings = settings

    def for_dir(self, directory: str) -> Settings:
        return self._settings

    def default(self) -> Settings:
        return self._settings


_SETTINGS: dict[str, Settings] = {}


def settings_for(table: dict[str, Any] | None) -> Settings:
    key = json.dumps(table, sort_keys=True)
    if key not in _SETTINGS:
        _SETTINGS[key] = parse_table(dict(table or {}), None)
    return _SETTINGS[key]


FUZZ_DIR = os.path.join(tempfile.gettempdir(), "tclint-fuzz-inputs")  # never written: files come as bytes


def lint_bytes(
    data: bytes | dict[str, bytes],
    name: str = "fuzz.py",
    table: dict[str, Any] | None = None,
    cache: Any = None,
) -> LintResult:
    """Lint ``data`` as if it were the file ``name`` (or several files), without touching the disk:
    the same path through the engine as the CLI's stdin mode."""
    files = data if isinstance(data, dict) else {name: data}
    paths = [os.path.join(FUZZ_DIR, n) for n in files]
    overrides = {os.path.abspath(p): files[n] for p, n in zip(paths, files, strict=True)}
    linter = Linter(
        FixedResolver(settings_for(WIDE if table is None else table)), cache, jobs=1, index_project=False
    )
    err = io.StringIO()
    with contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # the linted code's own warnings: see test_quiet_cli
        result = linter.lint_files(paths, paths, overrides=overrides)
    problems = internal_errors(result, err.getvalue())
    if problems:
        raise InternalError("; ".join(problems))
    return result


class InternalError(AssertionError):
    """The engine contained a crash (a rule or the walk raised) instead of letting it through."""


def internal_errors(result: LintResult, stderr: str) -> list[str]:
    """The engine turns a crash in the walk into a TC011 "internal error" and a crash in a rule into
    a line on stderr, so that one bad file cannot stop a run; for the fuzz suite both are crashes."""
    out = [
        f"{d.path}:{d.line}: {d.code} {d.message}"
        for d in result.diagnostics
        if "internal error" in d.message
    ]
    if stderr.strip():
        out.append(f"stderr: {stderr.strip()[:2000]}")
    return out


# ---------------------------------------------------------------------------------------------
# properties


LINE_BREAK = re.compile(r"\r\n|\r|\n")


def file_lines(text: str) -> list[str]:
    """The file's lines as the interpreter counts them (\\n, \\r\\n, \\r); a final line break does not
    open another line."""
    lines = LINE_BREAK.split(text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def _position_ok(lines: list[str], pos: Position, eof_line: bool = False) -> str | None:
    last = len(lines) + (1 if eof_line else 0)
    if not 1 <= pos.line <= last:
        return f"line {pos.line} outside 1..{len(lines)}"
    width = len(lines[pos.line - 1]) if pos.line <= len(lines) else 0
    if not 0 <= pos.column <= width:
        return f"column {pos.column} outside 0..{width} on line {pos.line}"
    return None


def cell_sources(notebook: bytes) -> list[str | None]:
    """Each cell's source as a string, None for cells that are not code cells (numbered from 1 over
    all cells, as tclint reports them)."""
    nb = json.loads(notebook.decode("utf-8"))
    out: list[str | None] = []
    for cell in nb["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            out.append(None)
            continue
        source = cell.get("source", "")
        out.append("".join(str(s) for s in source) if isinstance(source, list) else str(source))
    return out


def range_problems(result: LintResult, raw: dict[str, bytes] | None = None) -> list[str]:
    """Every diagnostic, fix edit and same-file related location must lie inside its file (inside
    its cell for notebooks), and start at or before where it ends."""
    problems = []
    for d in result.diagnostics:
        src = result.sources.get(d.path)
        text = src.text if src is not None else None
        where = f"{d.code} at {d.span.start.line}:{d.span.start.column}-{d.span.end.line}:{d.span.end.column}"
        if d.cell is not None:
            cells = cell_sources(raw[os.path.basename(d.path)]) if raw else []
            if not 1 <= d.cell <= len(cells) or cells[d.cell - 1] is None:
                problems.append(f"{where}: cell {d.cell} is not a code cell of {len(cells)}")
                continue
            lines = file_lines(cells[d.cell - 1] or "")
        else:
            lines = file_lines(text) if text is not None else [""]
        for pos in (d.span.start, d.span.end):
            p = _position_ok(lines, pos)
            if p:
                problems.append(f"{where}: {p}")
        if d.span.end < d.span.start:
            problems.append(f"{where}: ends before it starts")
        if d.fix is not None:
            for e in d.fix.edits:
                for pos in (e.span.start, e.span.end):
                    p = _position_ok(lines, pos, eof_line=True)
                    if p:
                        problems.append(f"{where}: fix edit {p}")
        for r in d.related:
            if r.path == d.path and d.cell is None:
                for pos in (r.span.start, r.span.end):
                    p = _position_ok(lines, pos)
                    if p:
                        problems.append(f"{where}: related location {p}")
    return problems


def as_dicts(diags: list[Diagnostic]) -> list[dict[str, Any]]:
    return [json_.to_dict(d) for d in diags]


_VALIDATOR: Any = None


def sarif_validator() -> Any:
    global _VALIDATOR
    if _VALIDATOR is None:
        import jsonschema

        with open(SARIF_SCHEMA, encoding="utf-8") as fh:
            schema = json.load(fh)
        _VALIDATOR = jsonschema.validators.validator_for(schema)(schema)
    return _VALIDATOR


def format_problems(result: LintResult) -> list[str]:
    """Every output format renders; JSON and JSON lines parse and round-trip; SARIF validates
    against the SARIF 2.1.0 schema; one line per finding in concise and GitHub output."""
    diags = result.diagnostics
    sources = {p: s.text for p, s in result.sources.items()}
    problems = []
    doc = json.loads(json_.render(diags))
    if len(doc) != len(diags):
        problems.append("json: wrong number of objects")
    for obj in doc:
        if json_.to_dict(json_.from_dict(obj)) != obj:
            problems.append(f"json: {obj['code']} does not round-trip")
    lines = json_.render_lines(diags).splitlines()
    if [json.loads(line) for line in lines] != doc:
        problems.append("json-lines differ from json")
    errors = [
        f"sarif: {'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in sarif_validator().iter_errors(json.loads(sarif.render(diags)))
    ]
    problems.extend(errors[:5])
    annotations = github.render(diags).splitlines()
    if len(annotations) != len(diags) or not all(a.startswith("::") for a in annotations):
        problems.append("github: not one annotation line per finding")
    if len(text.concise(diags).splitlines()) != len(diags):
        problems.append("concise: not one line per finding")
    text.full(diags, sources)
    return problems


def compiles(data: bytes) -> bool:
    """Whether the interpreter would run the file: decoded as ``import`` decodes it (BOM, coding
    cookie, strict UTF-8 -- ``compile(bytes)`` alone lets invalid UTF-8 in comments through), then
    compiled."""
    import importlib.util

    try:
        source = importlib.util.decode_source(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<fuzz>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError, LookupError):
        return False
    return True


PARSE_ERROR_CODES = ("TC000", "TC011")  # syntax error, unreadable file


def parse_errors(result: LintResult) -> list[Diagnostic]:
    return [d for d in result.diagnostics if d.code in PARSE_ERROR_CODES]
