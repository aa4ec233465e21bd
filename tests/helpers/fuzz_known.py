"""Inputs that hit an open finding in /work/notes/fuzz_findings.md.

The fuzz properties skip exactly these inputs (``assume(not known.notebook_open(data))``) or leave
out exactly these fixes (``known.fix_open(diag)``), so that one open bug does not hide the others;
each finding also has its own strict-xfail test in test_findings.py.  When a finding is fixed its
xfail test XPASSes (strict: the suite fails), and both that xfail and its predicate here go.

History: findings #1-#3 (notebook shapes, lone CR, magic columns), #11 (unused range fixes) and #12
(notebook --add-noqa) had predicates here, fixed in 651d4c8; #20 (noqa after a range directive)
fixed in a210208.  None is open now.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

NOTEBOOK_FINDINGS: tuple[Callable[[bytes], bool], ...] = ()
FIX_FINDINGS: tuple[Callable[[Any], bool], ...] = ()
ADD_NOQA_FINDINGS: tuple[Callable[[str], bool], ...] = ()


def notebook_open(data: bytes) -> bool:
    """The notebook ``data`` hits an open finding."""
    return any(f(data) for f in NOTEBOOK_FINDINGS)


def fix_open(diag: Any) -> bool:
    """The fix of ``diag`` is one an open finding gets wrong."""
    return any(f(diag) for f in FIX_FINDINGS)


def add_noqa_open(text: str) -> bool:
    """``--add-noqa`` on ``text`` hits an open finding."""
    return any(f(text) for f in ADD_NOQA_FINDINGS)
