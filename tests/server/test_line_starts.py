"""``Lines.of``: the line starts of a text, every LSP line ending (``\\n``, ``\\r\\n``, ``\\r``)
ending a line; texts with only ``\\n`` take a faster path (``str.split``) than the regex, which
must give the same starts and positions."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from tclint.server.positions import _LINE_END, Lines

PIECES = st.sampled_from(["a", "é", "\U0001f600", " ", "\n", "\r\n", "\r", "x = 1", ""])


def _regex_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in _LINE_END.finditer(text))]


@given(st.lists(PIECES, max_size=30).map("".join))
def test_line_starts_are_those_of_every_line_ending(text):
    lines = Lines.of(text)
    assert lines.starts == _regex_starts(text)
    assert lines.ascii == text.isascii()
    for index in range(len(lines.starts)):
        assert lines.line_length(index) >= 0


def test_lf_only_text_as_the_regex_splits_it():
    for text in ["", "\n", "a", "a\n", "a\nb", "a\n\nb\n", "\n\n", "é\n\U0001f600x\n"]:
        assert Lines.of(text).starts == _regex_starts(text), text
