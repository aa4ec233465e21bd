"""tclint's own codes the server treats specially, looked up by rule name (codes get renumbered;
names do not): parse/read failures (never suppressible, not carried across a broken edit) and
unused suppressions (shown faded)."""

from __future__ import annotations

from functools import cache

from tclint.rules import registry

FILE_ERROR_NAMES = frozenset({"syntax-error", "unreadable-file"})
UNUSED_SUPPRESSION_NAMES = frozenset({"unused-suppression"})


@cache
def _codes(names: frozenset[str]) -> frozenset[str]:
    return frozenset(r.code for r in registry.all_rules() if r.name in names)


def file_error_codes() -> frozenset[str]:
    return _codes(FILE_ERROR_NAMES)


def unused_suppression_codes() -> frozenset[str]:
    return _codes(UNUSED_SUPPRESSION_NAMES)


def no_noqa_codes() -> frozenset[str]:
    """Codes a "disable for this line" action makes no sense for."""
    return file_error_codes() | unused_suppression_codes()
