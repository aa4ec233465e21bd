"""The editor's "add noqa" quick fix puts the comment where `--add-noqa` does (issue 18 items 6 and
12): on the last line of a backslash-continued statement or multi-line string, never inside the
string, and recognises a noqa already on a string's closing line."""

from __future__ import annotations

import json

from tclint.server.convert import noqa_json
from tclint.server.positions import UTF16, Lines

HEAD = "import torch\n\n@torch.compile\ndef f(x):\n"


def edit(text: str, line_no: int, code: str = "TC101") -> dict | None:
    out = noqa_json(code, line_no, Lines.of(text), UTF16)
    return None if out is None else json.loads(out)


def apply(text: str, e: dict) -> str:
    lines = text.splitlines(keepends=True)
    start, end = e["range"]["start"], e["range"]["end"]
    assert start["line"] == end["line"]
    line = lines[start["line"]]
    lines[start["line"]] = line[: start["character"]] + e["newText"] + line[end["character"] :]
    return "".join(lines)


def test_after_a_backslash_continuation_the_comment_goes_on_the_last_line():
    text = HEAD + "    y = x.item() + \\\n        1\n    return y\n"
    e = edit(text, 5)
    assert e is not None and e["range"]["start"]["line"] == 5
    fixed = apply(text, e)
    compile(fixed, "m.py", "exec")
    assert "        1  # noqa: TC101\n" in fixed


def test_a_finding_on_a_string_opening_line_is_not_annotated_inside_the_string():
    text = HEAD + '    y = x.item() + len("""\n    ab\n    """)\n    return y\n'
    e = edit(text, 5)
    assert e is not None and e["range"]["start"]["line"] == 6
    fixed = apply(text, e)
    assert '    """)  # noqa: TC101\n' in fixed and 'len("""\n    ab\n' in fixed
    assert edit(fixed, 5) is None  # already there: nothing more to offer


def test_a_noqa_after_a_string_closing_line_is_extended_not_repeated():
    text = HEAD + '    w = len("""\nab\n""") + x.item()  # noqa: TC104\n    return w\n'
    e = edit(text, 7)
    assert e is not None and e["newText"] == "# noqa: TC104, TC101"
    assert apply(text, e).count("# noqa") == 1


def test_plain_lines_are_unchanged():
    text = HEAD + "    return x.item()\n"
    e = edit(text, 5)
    assert e is not None and e["range"]["start"]["line"] == 4 and e["newText"] == "  # noqa: TC101"
