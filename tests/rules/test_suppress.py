"""Suppression comments are comment tokens (issue 18, items 6 and 12): text inside a string or a
docstring never suppresses; a ``# noqa`` on the last line of a multi-line string or of a
backslash-continued statement speaks for all of its lines (as in ruff), and ``--add-noqa`` writes
its comment there, so that the result parses and a second run adds nothing."""

from __future__ import annotations

import tempfile

from tclint.rules import suppress
from tclint.rules.fixes import add_noqa

from tests.helpers.lintutil import lint_code

HEAD = "import torch\n\n@torch.compile\ndef f(x):\n"


def lint_text(text: str) -> list:
    with tempfile.TemporaryDirectory() as folder:
        return lint_code(folder, text).diagnostics


def codes(text: str) -> list[tuple[int, str]]:
    return sorted((d.line, d.code) for d in lint_text(text))


def test_noqa_text_in_a_docstring_does_not_suppress():
    text = (
        HEAD + '    """Doc.\n\n    # tclint: noqa: TC101\n    # noqa: TC101\n    """\n    return x.item()\n'
    )
    assert codes(text) == [(10, "TC101")]


def test_disable_text_in_a_string_opens_no_range():
    text = 'HELP = """\n# tclint: disable[TC101]\n"""\n' + HEAD + "    return x.item()\n"
    assert codes(text) == [(8, "TC101")]
    # ... while a real comment does (and is not reported unused)
    real = "# tclint: disable[TC101]\n" + HEAD + "    return x.item()\n"
    assert codes(real) == []


def test_file_level_noqa_in_a_string_is_text():
    text = 'DOC = """\n# tclint: noqa\n"""\n' + HEAD + "    return x.item()\n"
    assert codes(text) == [(8, "TC101")]


def test_noqa_on_the_closing_line_of_a_multiline_string_applies_to_the_statement():
    text = HEAD + '    y = x.item() + len("""\n    ab\n    """)  # noqa: TC101\n    return y\n'
    assert codes(text) == []


def test_noqa_after_a_backslash_continuation_applies_to_the_statement():
    text = HEAD + "    y = x.item() + \\\n        1  # noqa: TC101\n    return y\n"
    assert codes(text) == []


def test_noqa_on_a_closing_line_is_not_a_string_to_the_comment_finder():
    """`\"\"\") + x.item()  # noqa` used to be read as the start of a string, so the comment was
    ignored and `--add-noqa` appended another one on every run."""
    text = HEAD + '    w = len("""\nab\n""") + x.item()  # noqa: TC101\n    return w\n'
    assert codes(text) == []


def test_add_noqa_goes_to_the_last_line_and_is_idempotent():
    for body in (
        "    y = x.item() + \\\n        1\n    return y\n",
        '    y = x.item() + len("""\n    ab\n    """)\n    return y\n',
        '    y = len("""\n    ab\n    """) + x.item()\n    return y\n',
        "    y = x.item() + \\\n        len('''\n    a''') + \\\n        2\n    return y\n",
    ):
        text = HEAD + body
        diags = lint_text(text)
        assert [d.code for d in diags] == ["TC101"], body
        new, n = add_noqa(text, diags)
        assert n == 1
        compile(new, "m.py", "exec")
        assert lint_text(new) == [], new
        assert add_noqa(new, lint_text(new)) == (new, 0)
        again, more = add_noqa(new, diags)  # the same findings again: the comment is already there
        assert (again, more) == (new, 0), again


def test_scan_groups_and_columns():
    text = "a = 1  # one\nb = '''\nx\n''' + \\\n  c  # two\nd = (1,  # three\n  2)\n"
    comments = suppress.scan(text)
    assert comments.columns == {1: 7, 5: 5, 6: 9}
    assert comments.groups == [(2, 5)]
    assert [comments.last_line(n) for n in range(1, 8)] == [1, 5, 5, 5, 5, 6, 7]
    assert comments.first_line(5) == 2 and comments.first_line(3) == 3 and comments.first_line(6) == 6


def test_scan_is_total_on_source_that_does_not_tokenize():
    text = 'x = 1  # ok\ny = (\n# noqa: TC101\ns = """\n'
    comments = suppress.scan(text)
    assert comments.column(1, "x = 1  # ok") == 7 and comments.column(3, "# noqa: TC101") == 0
    assert suppress.scan(text, until=1).column(3, "# noqa: TC101") == 0  # not scanned: the line heuristic


def test_parse_scans_only_files_with_a_marker_after_a_hash(monkeypatch):
    calls = []
    real = suppress.scan
    monkeypatch.setattr(suppress, "scan", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert suppress.parse('NOQA = "noqa"\ns = "tclint: off"\n') == []
    assert calls == []
    assert [d.kind for d in suppress.parse("x = 1  # noqa: TC101\n" + "y = 2\n" * 50)] == ["line"]
    assert calls and calls[-1][0].startswith("x = 1")


def test_a_noqa_before_a_disable_range_on_the_same_line_suppresses():
    """``# noqa  # tclint: disable[TC104]``: the noqa comes first in the comment; it is read as
    ruff reads a noqa anywhere in a comment, and ``--add-noqa`` (which sees it) adds nothing
    (found by the add-noqa fuzz test: the finding stayed, so --add-noqa was not idempotent)."""
    text = HEAD + "    y = x.item()  # noqa  # tclint: disable[TC104]\n    return y\n"
    assert (5, "TC101") not in codes(text)
    text = HEAD + "    y = x.item()  # noqa: TC101  # tclint: disable[TC104]\n    return y\n"
    assert (5, "TC101") not in codes(text)
    assert add_noqa(text, lint_text(text))[0] == text
