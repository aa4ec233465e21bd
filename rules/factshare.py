"""Re-walked facts sharing what did not change with the facts they were walked from.

The type refinement (``tclint.rules.argflow``) walks a file again with seeded parameter types; most
of what that walk records (functions, classes, candidates, compile sites) comes out equal to the
first walk's, yet as new objects with their own strings.  The project pass keeps the first walk's
facts, each round's re-walk and the final one (the refinement's trace), so on a large tree those
copies were most of the main process's memory (transformers package: 133 MiB of refined facts plus
127 MiB of intermediate ones beside 155 MiB of first-walk facts).

``share(old, new)`` puts, in ``new``'s own containers, ``old``'s object in place of each element
equal to it.  Facts are never changed in place once walked (code that needs another function
object copies it first, as ``libfollow`` does), so an equal element is the same value however it is
reached; containers are never shared, so assigning into one file's dict or list cannot change the
other's.
"""

from __future__ import annotations

from typing import Any

from tclint.rules.facts import FileFacts

# FileFacts fields holding dicts whose values are shared one by one, and lists shared element-wise
_DICT_FIELDS = ("functions", "classes", "aliases", "module_vars", "compile_functions", "dynamo_config")
_LIST_FIELDS = ("compile_sites", "disable_sites", "module_calls", "allow_in_graph")


def share(old: FileFacts, new: FileFacts) -> FileFacts:
    """``new`` (changed in place, and returned) with ``old``'s objects for its equal elements."""
    if old is new or old.error is not None or new.error is not None:
        return new
    for name in _DICT_FIELDS:
        _share_values(getattr(old, name), getattr(new, name))
    for name in _LIST_FIELDS:
        _share_items(getattr(old, name), getattr(new, name))
    _share_candidates(old.candidates, new.candidates)
    if old.variant_facts is not None and old.variant_facts == new.variant_facts:
        new.variant_facts = old.variant_facts
    return new


def _share_values(old: dict[str, Any], new: dict[str, Any]) -> None:
    for key, value in new.items():
        before = old.get(key)
        if before is not None and before is not value and _equal(before, value):
            new[key] = before


def _share_items(old: list[Any], new: list[Any]) -> None:
    for i, value in enumerate(new[: len(old)]):
        before = old[i]
        if before is not value and _equal(before, value):
            new[i] = before


def _share_candidates(old: list[Any], new: list[Any]) -> None:
    """Candidates matched by rule and position (a seeded walk may add or drop some in between)."""
    by_place: dict[tuple[Any, ...], list[Any]] = {}
    for cand in old:
        loc = cand.loc
        by_place.setdefault((cand.code, loc.line, loc.col, loc.end_line, loc.end_col), []).append(cand)
    for i, cand in enumerate(new):
        loc = cand.loc
        for before in by_place.get((cand.code, loc.line, loc.col, loc.end_line, loc.end_col), ()):
            if _equal(before, cand):
                new[i] = before
                break


def _equal(a: Any, b: Any) -> bool:
    """Equal values of the same type (``1 == True`` and ``1 == 1.0`` are not the same value)."""
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # a value whose comparison fails is not shared
        return False
