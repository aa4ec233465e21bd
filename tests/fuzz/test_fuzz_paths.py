"""Odd file and folder names through the real command line (run in-process, stdout as a terminal
would take it: UTF-8 with surrogateescape).  Names are drawn from bytes that have broken linters:
invalid UTF-8, ESC and other C0/C1 controls, newlines and carriage returns, bidi overrides, and
the characters the output formats give meaning to (``%``, ``:``, ``,``, ``\\``, spaces).

Properties, for every tree: the run never raises and exits 0 or 1; every format's output is valid
UTF-8; the text formats hold no control character but the line breaks they write themselves, and
exactly one finding line per finding (a name cannot forge or swallow one); JSON file names and
SARIF URIs give back the exact bytes of the files that exist; a warm (cached) run prints what the
cold run printed."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import tempfile
from urllib.parse import unquote_to_bytes, urlsplit

from hypothesis import given
from hypothesis import strategies as st
from tclint.rules import cli

from tests.helpers.fuzzutil import budget, tried

SOURCE = b"import torch\n\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n"
PIECES = [
    b"\x1b[31m",
    b"\x1b]0;t\x07",
    b"\n",
    b"\r",
    b"\t",
    b" ",
    b"\xff",
    b"\xfe\xfd",
    b"\xc3\xa9",
    b"\xe2\x80\xae",
    b"\xc2\x9b",
    b"\xe2\x80\xa8",
    b"%",
    b"%0A",
    b"\\",
    b":",
    b",",
    b"::error",
    b"[",
    b"#",
    b"-",
    b"~",
    b"a",
    b"Z9",
]
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
FINDING = re.compile(r"^.*:\d+:\d+: TC\d{3} ")


def _names(extension: bytes) -> st.SearchStrategy[bytes]:
    piece = st.one_of(st.sampled_from(PIECES), st.binary(min_size=1, max_size=2))
    return st.lists(piece, min_size=1, max_size=5).map(
        lambda parts: b"".join(parts).replace(b"/", b"_").replace(b"\x00", b"_")[:60] + extension
    )


def _run(*args: str) -> tuple[int, bytes]:
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", write_through=True)
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(args))
    out.flush()
    assert code in (0, 1), (args, code, err.getvalue()[-2000:])
    assert "Traceback" not in err.getvalue(), err.getvalue()[-2000:]
    return code, raw.getvalue()


@budget(25)
@given(files=st.lists(_names(b".py"), min_size=1, max_size=3, unique=True), folder=_names(b""))
def test_odd_names_in_every_format(files, folder):
    tried("cli: trees of oddly named files, every format")
    top = tempfile.mkdtemp(prefix="tclint-names-")
    cwd = os.getcwd()
    try:
        root = os.path.join(os.fsencode(top), b"repo")
        os.makedirs(os.path.join(root, b".git"))
        created = set()
        for i, name in enumerate(files):
            where = root if i % 2 == 0 else os.path.join(root, folder)
            os.makedirs(where, exist_ok=True)
            with open(os.path.join(where, name), "wb") as fh:
                fh.write(SOURCE)
            created.add(os.path.realpath(os.path.join(where, name)))
        os.chdir(root)

        _code, data = _run(".", "--no-cache", "--output-format", "json")
        found = json.loads(data.decode("utf-8"))  # strict: a raw undecodable byte fails here
        names = {os.path.realpath(os.fsencode(d["filename"])) for d in found}
        assert names <= created, (names, created)
        n = len(found)

        _code, data = _run(".", "--no-cache", "--output-format", "sarif")
        results = json.loads(data.decode("utf-8"))["runs"][0]["results"]
        uris = {
            os.path.realpath(
                unquote_to_bytes(
                    urlsplit(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]).path
                )
            )
            for r in results
        }
        assert uris == names and len(results) == n

        for fmt in ("concise", "full", "github"):
            _code, data = _run(".", "--no-cache", "--output-format", fmt)
            text = data.decode("utf-8")
            assert CONTROL.search(text) is None, (fmt, text)
            lines = text.splitlines()
            if fmt == "github":
                assert len(lines) == n and all(line.startswith("::") for line in lines), text
            else:
                assert sum(1 for line in lines if FINDING.match(line)) == n, (fmt, text)

        cold = _run(".")
        assert _run(".") == cold  # the warm run answers from the cache
    finally:
        os.chdir(cwd)
        shutil.rmtree(top, ignore_errors=True)


@budget(300)
@given(st.text(alphabet=st.characters(codec=None), max_size=40))
def test_printable_escapes_exactly_the_unsafe_characters(text):
    """``printable``: the result holds no control, bidi, separator or lone surrogate character;
    text without them comes back unchanged; a surrogate-escaped byte shows as ``\\xNN``."""
    from tclint.rules.printable import printable

    tried("library: printable() on arbitrary text")
    shown = printable(text)
    assert CONTROL.search(shown) is None and not re.search("[\n\ud800-\udfff]", shown)
    shown.encode("utf-8")  # always encodable
    if CONTROL.search(text) is None and not re.search("[\n\ud800-\udfff]", text):
        assert shown == text
    assert printable(text + "\udcff") == shown + "\\xff"
