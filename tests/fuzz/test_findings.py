"""One minimal reproducer per finding in /work/notes/fuzz_findings.md: a regression test once the
finding is fixed, a strict xfail while it is open (a fix makes it XPASS, strict turns that into a
failure, and the xfail -- with its predicate in tests/helpers/fuzz_known.py -- is removed).  Performance findings carry
a time bound far above what a linear algorithm needs (so they do not flake) and far below what the
quadratic one took; an open one costs its bound, not minutes."""

from __future__ import annotations

import json
import signal

import pytest

from tests.helpers.fuzzutil import lint_bytes, parse_errors, range_problems


def _nb(cells: list, metadata: object = None) -> bytes:
    return json.dumps(
        {"cells": cells, "metadata": {} if metadata is None else metadata, "nbformat": 4, "nbformat_minor": 5}
    ).encode("utf-8")


def _lint_nb(data: bytes):
    result = lint_bytes(data, name="nb.ipynb")
    assert range_problems(result, {"nb.ipynb": data}) == []
    return result


@pytest.mark.parametrize(
    "metadata",
    [
        [0],
        {"kernelspec": "python3"},
        {"kernelspec": {"language": True}},
        {"kernelspec": {"language": ["python"]}},
    ],
)
def test_finding_1_notebook_metadata_shapes(metadata):
    _lint_nb(_nb([{"cell_type": "code", "source": "import torch\n"}], metadata))


def test_finding_2_lone_cr_in_cell():
    _lint_nb(
        _nb(
            [
                {"cell_type": "code", "source": "x = 1\r# tclint: disable[TC104]\r"},
                {"cell_type": "code", "source": ""},
            ]
        )
    )


@pytest.mark.parametrize(
    "source",
    [
        "%time x  # tclint: disable[TC104]\n",
        "%%bash\necho  # noqa: TC101\n",
        "if x:\n    %time x  # noqa: TC104\n",
    ],
)
def test_finding_3_magic_line_columns(source):
    _lint_nb(_nb([{"cell_type": "code", "source": source}]))


def test_finding_4_long_elif_chain():
    """CPython compiles ~2,000 elifs; 1,000 must be analysed, not reported as too deep."""
    src = "def dispatch(op):\n    if op == 0:\n        return 0\n"
    src += "".join(f"    elif op == {i}:\n        return {i}\n" for i in range(1, 1000))
    compile(src, "dispatch.py", "exec")
    assert parse_errors(lint_bytes(src.encode())) == []


class Overtime(BaseException):
    """Not an Exception: the engine's per-file error handling must not swallow it."""


def lint_within(data: bytes, seconds: float) -> None:
    """Lint, failing after ``seconds`` (an open performance finding costs its bound, not minutes)."""

    def expire(signum, frame):
        raise Overtime(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        lint_bytes(data, table={})
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_finding_5_many_fixes_linear():
    """1,000 findings with fixes (currently ~30 s; linear is well under 1 s)."""
    src = "import torch\n@torch.compile\ndef f(x):\n" + "    print(x)\n" * 1000 + "    return x\n"
    lint_within(src.encode(), 5)


def test_finding_6_many_unused_noqa_linear():
    """4,000 unused suppressions (currently ~15 s)."""
    src = (
        "import torch\n@torch.compile\ndef f(x):\n"
        + "    x = x + 1  # noqa: TC101\n" * 4000
        + "    return x\n"
    )
    lint_within(src.encode(), 5)


def test_finding_7_long_call_chain():
    """A chain of 2,000 calls into a compiled region (currently ~25 s and quadratic memory)."""
    n = 2000
    src = "import torch\n" + "".join(
        f"def f{i}(x):\n    return f{i + 1}(x) if x else x.item()\n" for i in range(n)
    )
    src += f"def f{n}(x):\n    return x\ng = torch.compile(f0)\n"
    lint_within(src.encode(), 5)


def test_finding_8_many_columns_on_a_long_line():
    """12,000 findings on one non-ASCII line (currently ~20 s; the same line in ASCII: ~1.5 s)."""
    src = "import torch\n@torch.compile\ndef f(x):\n    \u00e9 = 1; " + "x.item(); " * 12000 + "return x\n"
    lint_within(src.encode(), 6)


def test_finding_10_first_run_stores_facts(tmp_path):
    """After one run, editing one file of two re-analyses only that file."""
    from tclint.rules.cache import Cache

    files = {"a.py": b"import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n", "b.py": b"x = 1\n"}
    folder = str(tmp_path / "cache")
    first = Cache(folder)
    lint_bytes(files, cache=first)
    first.flush()
    second = Cache(folder)
    lint_bytes({**files, "b.py": b"x = 2\n"}, cache=second)
    assert (second.hits, second.misses) == (1, 1)


@pytest.mark.parametrize(
    "code",
    [
        "def helper(x):  # tclint: disable[TC104]\n    return x + 1\n",
        "@torch.compile\ndef f(x):\n    # tclint: disable[TC101, TC104]\n    y = x.item()\n    # tclint: enable\n    return y\n",
        "# tclint: noqa: TC101, TC104\n@torch.compile\ndef f(x):\n    return x.item()\n",
    ],
)
def test_finding_11_unused_range_fix_keeps_code(code):
    """The safe fix for an unused range / file-level suppression must not delete code on its line,
    nor the codes of the directive that are still used."""
    from tclint.rules.fixes import apply_fixes, fix_allowed

    src = "import torch\n\n\n" + code
    result = lint_bytes(src.encode(), table={})
    fixed, n = apply_fixes(src, [d.fix for d in result.diagnostics if fix_allowed(d.fix, False)])
    assert n >= 1
    compile(fixed, "fixed.py", "exec")
    after = lint_bytes(fixed.encode(), table={})
    assert [d.code for d in after.diagnostics] == []


def test_finding_12_add_noqa_notebook_with_odd_source():
    from tclint.rules.notebook import add_noqa_to_notebook

    data = _nb(
        [
            {
                "cell_type": "code",
                "source": [
                    "import torch\n",
                    "@torch.compile\n",
                    "def f(x):\n",
                    "    print(x)\n",
                    "    return x\n",
                    1,
                ],
            }
        ]
    )
    result = lint_bytes(data, name="nb.ipynb", table={})
    assert [d.code for d in result.diagnostics] == ["TC104"]
    new, n = add_noqa_to_notebook(data, result.diagnostics)
    assert n == 1 and lint_bytes(new, name="nb.ipynb", table={}).diagnostics == []


def test_finding_19_huge_integer_in_notebook_json():
    """json.loads raises ValueError (not JSONDecodeError) for integers over 4,300 digits."""
    data = (
        b'{"cells": [{"cell_type": "code", "source": "print(1)\\n", "execution_count": 1'
        + b"0" * 5000
        + b"}]}"
    )
    result = lint_bytes(data, name="nb.ipynb")
    assert [d.code for d in result.diagnostics] in (["TC011"], [])


def test_finding_20_noqa_after_a_range_directive():
    """--add-noqa on a line that already ends in `# tclint: disable[...]`: the noqa it appends must
    silence the finding."""
    from tclint.rules.fixes import add_noqa

    src = "import torch\n\n@torch.compile\ndef scale(x):\n    s = x.sum().item()  # tclint: disable[TC104]\n    return s\n"
    result = lint_bytes(src.encode(), table={})
    assert "TC101" in [d.code for d in result.diagnostics]
    new, n = add_noqa(src, result.diagnostics)
    assert n == 1
    assert "TC101" not in [d.code for d in lint_bytes(new.encode(), table={}).diagnostics]
