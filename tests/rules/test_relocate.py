"""Line maps and the transport of positions through them (``tclint.rules.relocate``)."""

from __future__ import annotations

import pytest
from tclint.rules.facts import Candidate, FileFacts, Loc, VariantFacts
from tclint.rules.model import Diagnostic, RelatedLocation, Span
from tclint.rules.relocate import Unmapped, line_hashes, line_map, move

OLD = "import torch\n\n\ndef f(x):\n    return x\n\n\ndef g(x):\n    return f(x)\n"


def test_a_line_map_follows_inserted_and_deleted_lines():
    new = "import torch\n# new\n\n\ndef f(x):\n    return x\n\ndef g(x):\n    return f(x)\n"
    lines = line_map(line_hashes(OLD), new)
    assert lines[1] == 1 and lines[4] == 5 and lines[5] == 6  # below the inserted comment: one down
    assert lines[8] == 8 and lines[9] == 9  # below the deleted blank line too: back in place
    assert 2 not in lines.values()  # the new comment has no old line
    assert line_map(line_hashes(OLD), OLD.replace("\n", "\r\n")) == {i: i for i in range(1, 11)}


def test_facts_move_with_their_own_map_and_results_with_the_map_of_the_path_they_name():
    own = {4: 5, 5: 6, 9: 10}
    ff = FileFacts("pkg/a.py", "pkg.a", False, ".")
    ff.candidates.append(Candidate("TC101", "f", Loc(5, 4, 5, 12), "m", loop_line=4, user_ctx=None))
    ff.variant_facts = VariantFacts(contexts={"9:4": ("grad:off@4:0:4:20",)}, fresh_compiles=("5:1:5:9|M()",))
    moved = move(ff, {}, own)
    (cand,) = moved.candidates
    assert (cand.loc.line, cand.loc.end_line, cand.loop_line) == (6, 6, 5)
    assert moved.variant_facts.contexts == {"10:4": ("grad:off@5:0:5:20",)}
    assert moved.variant_facts.fresh_compiles == ("6:1:6:9|M()",)
    assert ff.candidates[0].loc.line == 5  # the input is not changed
    with pytest.raises(Unmapped):
        move(Loc(7, 0, 7, 1), {}, own)  # a line the map does not hold

    d = Diagnostic(
        "TC307",
        "n",
        "breaks at pkg/a.py:9 (TC101), see pkg/b.py:9",
        "pkg/b.py",
        Span.of(3, 0, 3, 4),
        related=(RelatedLocation("pkg/a.py", Span.of(4, 0, 4, 5), "`torch.compile(f)` at pkg/a.py:4"),),
        extra={"sites": [{"path": "pkg/a.py", "line": 5, "column": 1}, {"path": "pkg/b.py", "line": 5}]},
    )
    out = move(d, {"pkg/a.py": own})
    assert out.message == "breaks at pkg/a.py:10 (TC101), see pkg/b.py:9"
    assert out.span == d.span  # in another file
    assert out.related[0].span.start.line == 5 and out.related[0].message.endswith("pkg/a.py:5")
    assert out.extra["sites"] == [
        {"path": "pkg/a.py", "line": 6, "column": 1},
        {"path": "pkg/b.py", "line": 5},
    ]


@pytest.mark.parametrize(
    "message",
    [
        "wrap `f` (a.py:9) in `torch.compiler.disable`",  # the file's name without its folder
        "called from a loop in Model.forward (line 9)",  # a moved file's finding naming a line
    ],
)
def test_a_line_in_a_form_not_known_is_unmapped(message):
    d = Diagnostic("TC312", "n", message, "pkg/a.py", Span.of(4, 0, 4, 1))
    with pytest.raises(Unmapped):
        move(d, {"pkg/a.py": {4: 5, 9: 10}})
