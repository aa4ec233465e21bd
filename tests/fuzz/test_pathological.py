"""Deterministic extremes the random generators rarely reach: recursion (nesting in every
expression and block form, at depths the interpreter accepts and far beyond), 100k-line files,
1 MB lines, Python 2 syntax, and files on which ``ast`` and libcst disagree.  Properties: no crash
(no internal error either), every range inside the file, valid output, at most one TC000/TC011, and
none at all for a file the interpreter compiles (below the documented nesting limits)."""

from __future__ import annotations

import time

import libcst
import pytest

from tests.helpers.fuzzutil import compiles, format_problems, lint_bytes, parse_errors, range_problems, tried

NESTED = {
    "parentheses": lambda d: "(" * d + "x" + ")" * d,
    "lists": lambda d: "[" * d + "x" + "]" * d,
    "dicts": lambda d: "{1: " * d + "x" + "}" * d,
    "calls": lambda d: "g(" * d + "x" + ")" * d,
    "sum": lambda d: "+".join(["x"] * d),
    "item-sum": lambda d: "+".join(["x.item()"] * d),
    "attributes": lambda d: "x" + ".a" * d,
    "subscripts": lambda d: "x" + "[0]" * d,
    "method-chain": lambda d: "x" + ".relu()" * d,
    "unary": lambda d: "-" * d + "x",
    "not": lambda d: "not " * d + "x",
    "ternary": lambda d: "x if x else " * d + "x",
    "lambda": lambda d: "lambda: " * d + "x",
    "walrus": lambda d: "(y := " * d + "x" + ")" * d,
    "and": lambda d: " and ".join(["x"] * d),
    "compare": lambda d: " < ".join(["x"] * d),
    "string-concat": lambda d: " ".join(["'a'"] * d),
}


def _module(expr: str) -> str:
    return f"import torch\nx = 1\ny = {expr}\n"


def _compiled(expr: str) -> str:
    return f"import torch\n\n\n@torch.compile\ndef f(x):\n    y = {expr}\n    print(y)\n    return y\n"


def _blocks(kind: str, depth: int) -> str:
    head = {
        "if": "if x.sum() > 0:",
        "with": "with torch.no_grad():",
        "for": "for i in range(3):",
        "while": "while x:",
        "try": "try:",
    }[kind]
    src = "import torch\n\n\n@torch.compile\ndef f(x):\n"
    for i in range(depth):
        src += "    " * (i + 1) + head + "\n"
    src += "    " * (depth + 1) + "print(x)\n"
    if kind == "try":
        for i in reversed(range(depth)):
            src += "    " * (i + 1) + "finally:\n" + "    " * (i + 2) + "pass\n"
    return src


def check(data: bytes, clean: bool | None = None) -> None:
    """``clean``: True -- no TC000/TC011 allowed; None -- whatever the interpreter says decides."""
    result = lint_bytes(data)
    assert range_problems(result) == []
    assert len(parse_errors(result)) <= 1
    if clean or (clean is None and compiles(data)):
        assert parse_errors(result) == [], [d.message for d in parse_errors(result)]
    if len(result.diagnostics) <= 2000:
        assert format_problems(result) == []


@pytest.mark.parametrize("where", ["module", "compiled"])
@pytest.mark.parametrize("kind", sorted(NESTED))
@pytest.mark.parametrize("depth", [100, 1000, 5000])
def test_nested_expressions(kind, depth, where):
    """Depth 100 is ordinary code and must be analysed; 1,000 and 5,000 exceed the interpreter's
    own limits for most forms (TC000, as CPython reports) or tclint's walk (TC011 "nested too
    deeply"): one diagnostic at line 1, never a crash."""
    tried("pathological: nested expressions (17 forms x 3 depths x 2 places)")
    src = (_module if where == "module" else _compiled)(NESTED[kind](depth))
    check(src.encode(), clean=depth <= 100)


@pytest.mark.parametrize("kind", ["if", "with", "for", "while", "try"])
@pytest.mark.parametrize("depth", [20, 97, 120])
def test_nested_blocks(kind, depth):
    """Indentation up to the interpreter's limit (100 levels) is analysed; beyond, TC000."""
    tried("pathological: nested blocks")
    src = _blocks(kind, depth)
    check(src.encode(), clean=depth < 97 or None)


@pytest.mark.parametrize("case", ["parentheses-5000", "sum-100k", "lists-5000"])
def test_the_classic_recursion_bombs(case):
    """5,000 nested parentheses, `1+1+...` with 100,000 terms, 5,000 nested lists."""
    tried("pathological: recursion bombs")
    src = {
        "parentheses-5000": "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n",
        "sum-100k": "x = " + "+".join(["1"] * 100_000) + "\n",
        "lists-5000": "x = " + "[" * 5000 + "]" * 5000 + "\n",
    }[case]
    result = lint_bytes(src.encode())
    assert [d.code for d in result.diagnostics] == ["TC000"]
    assert range_problems(result) == []


def _lines_100k(kind: str) -> str:
    if kind == "statements":
        return "x = 1\n" * 100_000
    if kind == "functions":
        return "import torch\n" + "".join(
            f"def f{i}(x):\n    y = x + {i}\n    return y\n" for i in range(33_334)
        )
    return (
        "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        + "        x = x + 1\n" * 100_000
        + "        print(x)\n        return x\n\n\nm = torch.compile(M())\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["statements", "functions", "compiled-forward"])
def test_100k_line_files(kind):
    """Linear time: 100k lines in well under a minute (about 10 s here), findings at the end."""
    tried("pathological: 100k-line files")
    src = _lines_100k(kind)
    start = time.perf_counter()
    result = lint_bytes(src.encode(), table={})
    assert time.perf_counter() - start < 60
    assert range_problems(result) == []
    if kind == "compiled-forward":
        assert [(d.code, d.line) for d in result.diagnostics] == [("TC104", 100_006)]


LONG_LINES = {
    "string": "x = '" + "a" * 1_000_000 + "'\n",
    "non-ascii-string-then-findings": "import torch\n@torch.compile\ndef f(x):\n    s = '\u00e9"
    + "a" * 1_000_000
    + "'; print(x); return x.item()\n",
    "statements": "import torch\n@torch.compile\ndef f(x):\n    "
    + "x = x + 1; " * 90_000
    + "print(x); return x\n",
    "comment": "#" + "\u00e9" * 500_000 + "\nx = 1\n",
    "list": "x = [" + "1, " * 330_000 + "]\n",
    "noqa-codes": "import torch\n@torch.compile\ndef f(x):\n    print(x)  # noqa: "
    + ", ".join(["TC104"] * 100_000)
    + "\n",
    "unterminated-string": "x = '" + "a" * 1_000_000 + "\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(LONG_LINES))
def test_1mb_lines(kind):
    """1 MB on one line: columns of findings after it are right, nothing is quadratic."""
    tried("pathological: 1 MB lines")
    src = LONG_LINES[kind]
    start = time.perf_counter()
    check(src.encode())
    assert time.perf_counter() - start < 60
    if kind == "non-ascii-string-then-findings":
        result = lint_bytes(src.encode())
        line = src.splitlines()[3]
        assert sorted((d.code, d.span.start.column) for d in result.diagnostics) == [
            ("TC101", line.index("x.item()")),
            ("TC104", line.index("print(x)")),
        ]


PYTHON2 = {
    "print": "print 'hello'\n",
    "print-percent": 'print "%d" % 1\n',
    "exec": "exec 'x = 1'\n",
    "except-comma": "try:\n    pass\nexcept Exception, e:\n    pass\n",
    "raise-comma": "raise ValueError, 'm'\n",
    "backticks": "x = `1`\n",
    "not-equal": "if 1 <> 2:\n    pass\n",
    "octal": "x = 0777\n",
    "long": "x = 10L\n",
    "ur-string": "x = ur'a'\n",
    "tuple-parameters": "def f((a, b)):\n    return a\n",
    "mixed-tabs": "if x:\n\tif y:\n        pass\n",
    "torch-file": "import torch\n\n@torch.compile\ndef f(x):\n    print 'x', x\n    return x\n",
}


@pytest.mark.parametrize("kind", sorted(PYTHON2))
def test_python2_syntax(kind):
    """One TC000 at the place CPython points to, inside the file."""
    tried("pathological: Python 2 syntax")
    data = PYTHON2[kind].encode()
    result = lint_bytes(data)
    assert [d.code for d in result.diagnostics] == ["TC000"]
    assert range_problems(result) == []


# tclint parses with `ast` (libcst only rewrites fixes), so files libcst rejects are linted like any
# other, and files only libcst accepts are syntax errors, exactly as the interpreter says.
AST_ONLY = {
    "backslash-in-indentation": "import torch\n@torch.compile\ndef f(x):\n    \\\n    print(x)\n    return x\n",
    "5000-string-concatenation": "x = (" + " ".join(["'a'"] * 5000) + ")\n",
}
LIBCST_ONLY = {
    "fstring-backslash (3.12)": "x = f'{\"\\n\".join(y)}'\n",
    "fstring-same-quote (3.12)": "x = f'{y['a']}'\n",
    "type-alias (3.12)": "type X = int\n",
    "generic-def (3.12)": "def f[T](x: T):\n    return x\n",
    "dict-unpack-in-comprehension": "x = {**a for a in b}\n",
    "bytes-non-ascii": "x = b'\u00e9'\n",
    "except-comma (Python 2)": "try:\n    pass\nexcept E, e:\n    pass\n",
}


def _libcst_parses(src: str) -> bool:
    try:
        libcst.parse_module(src)
    except Exception:  # libcst's parser errors are not one class
        return False
    return True


@pytest.mark.parametrize("name", sorted(AST_ONLY))
def test_files_only_ast_parses(name):
    tried("pathological: ast/libcst disagreements")
    src = AST_ONLY[name]
    assert not _libcst_parses(src) and compiles(src.encode())
    check(src.encode(), clean=True)


@pytest.mark.parametrize("name", sorted(LIBCST_ONLY))
def test_files_only_libcst_parses(name):
    tried("pathological: ast/libcst disagreements")
    src = LIBCST_ONLY[name]
    assert _libcst_parses(src) and not compiles(src.encode())
    result = lint_bytes(src.encode())
    assert [d.code for d in result.diagnostics] == ["TC000"]
    assert range_problems(result) == []


def test_backslash_indentation_finding_is_reported():
    """The ast-only file still gets its finding (libcst would have failed on it)."""
    result = lint_bytes(AST_ONLY["backslash-in-indentation"].encode())
    assert [(d.code, d.line) for d in result.diagnostics] == [("TC104", 5)]
