"""tclint's own codes the server treats specially (named once, in ``tclint.rules.model``):
parse/read failures (never suppressible, not carried across a broken edit) and unused
suppressions (shown faded)."""

from __future__ import annotations

from tclint.rules.model import FILE_ERRORS, UNUSED_SUPPRESSION

_FILE_ERRORS = frozenset(FILE_ERRORS)
_UNUSED = frozenset({UNUSED_SUPPRESSION})


def file_error_codes() -> frozenset[str]:
    return _FILE_ERRORS


def unused_suppression_codes() -> frozenset[str]:
    return _UNUSED


def no_noqa_codes() -> frozenset[str]:
    """Codes a "disable for this line" action makes no sense for."""
    return _FILE_ERRORS | _UNUSED
