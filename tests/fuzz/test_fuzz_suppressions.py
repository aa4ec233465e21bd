"""Suppressions come from comments, and what `--fix` / `--add-noqa` write keeps the file's bytes
(issue 18).  Properties:

* the suppression scanner (one regex pass) finds the same comments and the same joined lines
  (multi-line strings, backslash continuations) as Python's tokenizer, wherever that tokenizes;
* directive text inside a string literal changes no finding: a file with a string holding
  ``# noqa``, ``# tclint: noqa`` and ``# tclint: disable`` lines lints exactly like the same file
  with neutral text of the same shape there;
* through the CLI, on files with a PEP 263 coding cookie or a BOM, odd names and any mode, `--fix`
  and `--add-noqa` keep the encoding and the mode, change no byte of the lines they do not edit,
  keep a file that compiled compiling, and a second `--add-noqa` writes nothing.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import re
import stat
import tempfile
import tokenize

from hypothesis import assume, given
from hypothesis import strategies as st
from tclint.rules.cli import main
from tclint.rules.source import decode_source
from tclint.rules.suppress import scan

from tests.helpers.fuzzutil import (
    budget,
    compiles,
    gently_mutated_files,
    lint_bytes,
    python_seeds,
    token_soup,
    tried,
)

SEEDS = python_seeds()
_LOGICAL_ENDS = (tokenize.NEWLINE, tokenize.NL)


def tokenizer_view(text: str) -> tuple[dict[int, int], list[tuple[int, int]]] | None:
    """Comment columns by line and merged joined-line groups, from ``tokenize`` (None when the text
    does not tokenize cleanly, or holds a string literal inside an f-string's braces, which Python 3.12+
    allows and the scanner does not model): the reference the scanner must agree with."""
    columns: dict[int, int] = {}
    joins: list[tuple[int, int]] = []
    fstrings: list[int] = []
    fs_start, fs_end = getattr(tokenize, "FSTRING_START", None), getattr(tokenize, "FSTRING_END", None)
    prev_type, prev_end = tokenize.NEWLINE, 0
    try:
        # universal newlines: lines end at \r too, as for the interpreter (and LineIndex)
        for tok in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            kind, first, last = tok.type, tok.start[0], tok.end[0]
            if kind == tokenize.ERRORTOKEN:
                return None  # (an unterminated string, a stray character: not Python)
            if kind == tokenize.COMMENT:
                columns.setdefault(first, tok.start[1])
            elif kind in (tokenize.STRING, fs_start) and fstrings:
                return None  # a string inside an f-string's braces (3.12+): the scanner's known limit
            elif kind == tokenize.STRING and last > first:
                joins.append((first, last))
            elif kind == fs_start:
                fstrings.append(first)
            elif kind == fs_end and fstrings:
                begin = fstrings.pop()
                if last > begin:
                    joins.append((begin, last))
            if kind != tokenize.ENDMARKER:
                if first > prev_end and prev_type not in _LOGICAL_ENDS:
                    joins.append((prev_end, first))  # a backslash continuation after a token
                elif first > prev_end + 1 and prev_type in _LOGICAL_ENDS:
                    # lines with no token and no NL (blank and comment lines have one): lines
                    # holding only a backslash, continued into the token's line
                    joins.append((prev_end + 1, first))
            prev_type, prev_end = kind, last
    except (tokenize.TokenError, SyntaxError):
        return None
    groups: list[tuple[int, int]] = []
    for first, last in sorted(joins):
        if groups and first <= groups[-1][1]:
            groups[-1] = (groups[-1][0], max(last, groups[-1][1]))
        else:
            groups.append((first, last))
    return columns, groups


@budget(400)
@given(st.one_of(gently_mutated_files(SEEDS), token_soup()))
def test_scanner_agrees_with_the_tokenizer(data):
    decoded = decode_source(data)
    assume(decoded.text is not None)
    reference = tokenizer_view(decoded.text)
    assume(reference is not None)
    tried("library: the suppression scanner finds the tokenizer's comments and joined lines")
    found = scan(decoded.text)
    assert (found.columns, found.groups) == reference


_DIRECTIVES = (
    "# noqa",
    "# noqa: TC101, TC104",
    "# tclint: noqa",
    "# tclint: noqa: TC101",
    "# tclint: disable",
    "# tclint: disable[TC101]",
    "# tclint: enable",
)


@st.composite
def files_with_directives_in_strings(draw):
    """(file, the same file with the directive text neutralised): a string literal holding
    directive lines, inserted before some line at that line's indentation."""
    data = draw(gently_mutated_files(SEEDS))
    text = decode_source(data).text
    assume(text is not None and compiles(data))
    lines = text.splitlines(keepends=True)
    at = draw(st.integers(0, len(lines)))
    following = lines[at] if at < len(lines) else ""
    indent = following[: len(following) - len(following.lstrip(" \t"))]
    picked = draw(st.lists(st.sampled_from(_DIRECTIVES), min_size=1, max_size=3))
    quote = draw(st.sampled_from(['"""', "'''"]))
    form = draw(st.sampled_from(["assign", "expression", "call"]))
    body = "".join(f"{indent}{d}\n" for d in picked)

    def block(content: str) -> str:
        head = {"assign": "_S = ", "expression": "", "call": "print("}[form]
        tail = ")" if form == "call" else ""
        return f"{indent}{head}{quote}\n{content}{indent}{quote}{tail}\n"

    neutral = re.sub(r"[^\s]", "x", body)  # same shape, no '#'
    with_directives = "".join(lines[:at]) + block(body) + "".join(lines[at:])
    without = "".join(lines[:at]) + block(neutral) + "".join(lines[at:])
    assume(compiles(with_directives.encode("utf-8")))
    return with_directives, without


@budget(200)
@given(files_with_directives_in_strings())
def test_directive_text_inside_strings_changes_nothing(pair):
    with_directives, without = pair
    tried("library: directive text inside a string suppresses nothing and opens no range")

    def findings(text: str) -> list[tuple[str, int, int]]:
        return sorted(
            (d.code, d.line, d.span.start.column)
            for d in lint_bytes(text.encode("utf-8"), table={}).diagnostics
        )

    assert findings(with_directives) == findings(without)


# ---------------------------------------------------------------------------------------------
# the CLI writing files with cookies and odd names

_ENCODINGS = (
    ("latin-1", "# -*- coding: latin-1 -*-\n", "café ± µ"),
    ("cp1252", "# coding: cp1252\n", "€ “quoted” — dash"),
    ("iso-8859-15", "# vim: set fileencoding=iso-8859-15 :\n", "€ œ Ÿ"),
    ("utf-8", "\ufeff", "naïve 中文 ✓"),  # a BOM, no cookie
    ("utf-8", "# coding: utf-8\n", "naïve 中文 ✓"),
)
_NAMES = (
    "m.py",
    "with space.py",
    "ünï cödé.py",
    "-dash.py",
    "semi;colon.py",
    "quote'name.py",
    "x.y.z.py",
    "UPPER.PY.py",
)
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_TEXT_BREAK = re.compile(r"\r\n|\r|\n")


def _split(data: bytes) -> list[bytes]:
    out, pos = [], 0
    for m in _LINE_BREAK.finditer(data):
        out.append(data[pos : m.end()])
        pos = m.end()
    if pos < len(data):
        out.append(data[pos:])
    return out


def _split_text(text: str) -> list[str]:
    out, pos = [], 0
    for m in _TEXT_BREAK.finditer(text):
        out.append(text[pos : m.end()])
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return out


def _cli(folder: str, *args: str) -> tuple[int, str]:
    err = io.StringIO()
    old = os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            rc = main(["--no-cache", "--isolated", *args])
    finally:
        os.chdir(old)
    return rc, err.getvalue()


def _assert_untouched_lines_are_byte_identical(before: bytes, after: bytes, encoding: str) -> None:
    """Every line the edit did not change (by a line diff of the decoded texts) has the same bytes."""
    old_text, new_text = decode_source(before).text, decode_source(after).text
    assert old_text is not None and new_text is not None
    old_lines, new_lines = _split_text(old_text), _split_text(new_text)
    bom = b"\xef\xbb\xbf"
    assert after.startswith(bom) == before.startswith(bom)
    old_bytes, new_bytes = _split(before.removeprefix(bom)), _split(after.removeprefix(bom))
    assert len(old_bytes) == len(old_lines) and len(new_bytes) == len(new_lines), encoding
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            assert old_bytes[i1:i2] == new_bytes[j1:j2], (encoding, i1)


@budget(40)
@given(
    gently_mutated_files(SEEDS),
    st.sampled_from(_ENCODINGS),
    st.sampled_from(_NAMES),
    st.sampled_from([0o600, 0o644, 0o755]),
    st.booleans(),
)
def test_cli_writes_keep_encoding_bytes_and_mode(data, encoding, name, mode, crlf):
    codec, head, sample = encoding
    text = decode_source(data).text
    assume(text is not None and compiles(data) and not text.startswith("\ufeff"))
    assume(not re.match(r"[^\n]*\n?[^\n]*coding[:=]", text))  # the seed's own cookie would clash
    source = head + text + ("" if text.endswith("\n") or not text else "\n") + f"_SAMPLE = {sample!r}\n"
    if crlf:
        source = source.replace("\r\n", "\n").replace("\n", "\r\n")
    try:
        raw = (
            source.encode("utf-8-sig" if head == "\ufeff" else codec)
            if head != "\ufeff"
            else b"\xef\xbb\xbf" + source[1:].encode("utf-8")
        )
    except UnicodeEncodeError:
        assume(False)
    assume(compiles(raw))
    tried(
        "cli: --fix / --add-noqa on files with a coding cookie or BOM and odd names keep encoding, bytes, mode"
    )
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, name)
        with open(path, "wb") as fh:
            fh.write(raw)
        os.chmod(path, mode)
        for option in ("--fix", "--add-noqa"):
            with open(path, "rb") as fh:
                before = fh.read()
            rc, err = _cli(folder, option, "--", name)
            assert rc in (0, 1), err
            assert "Traceback" not in err and "cannot write" not in err, err
            with open(path, "rb") as fh:
                after = fh.read()
            if after != before:
                tried(f"cli: ... of which {option} rewrote the file")
            decoded = decode_source(after)
            assert decoded.text is not None, decoded.error
            assert decoded.encoding.replace("-sig", "") == decode_source(before).encoding.replace("-sig", "")
            assert after.startswith(b"\xef\xbb\xbf") == before.startswith(b"\xef\xbb\xbf")
            assert f"_SAMPLE = {sample!r}" in decoded.text
            _assert_untouched_lines_are_byte_identical(before, after, codec)
            assert compiles(after), option
            assert stat.S_IMODE(os.stat(path).st_mode) == mode
        _cli(folder, "--add-noqa", "--", name)
        with open(path, "rb") as fh:
            assert fh.read() == after, "a second --add-noqa changed the file"
        assert sorted(os.listdir(folder)) == [name]


_line = st.sampled_from(["x = 1\n", "\n", "y = 'é'\n", "# c\n", "z\r\n", "w\r", "    pass\n", "é"])


@budget(300)
@given(
    st.lists(_line, max_size=30),
    st.lists(st.tuples(st.integers(0, 30), st.integers(0, 2), _line), max_size=6),
)
def test_write_hunks_describe_the_edit(lines, edits):
    """The hunks the writer splices are a correct description of any edit (the writer copies
    everything outside them byte for byte)."""
    from tclint.rules.writeback import _hunks

    tried("library: the writer's hunks turn the old text into the new")
    new_lines = list(lines)
    for at, op, line in edits:
        at = min(at, len(new_lines))
        if op == 0:
            new_lines.insert(at, line)
        elif new_lines:
            new_lines[min(at, len(new_lines) - 1) : min(at, len(new_lines) - 1) + 1] = (
                [] if op == 1 else [line.rstrip("\n") + "  # noqa\n"]
            )
    old, new = "".join(lines), "".join(new_lines)
    out, pos = [], 0
    for start, end, repl in _hunks(old, new):
        assert pos <= start <= end
        out.append(old[pos:start] + repl)
        pos = end
    assert "".join(out) + old[pos:] == new
