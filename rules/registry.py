"""Every rule by its stable code, and what ``--select`` / ``--ignore`` selectors mean.

Codes never change meaning: TC0xx are tclint's own (unreadable files, unused suppressions; they
skip TC001-TC010, which ruff uses for flake8-type-checking, so `# noqa` codes never clash), TC1xx
graph breaks, TC2xx recompilation and guards, TC3xx compile-API misuse and hard errors, TC9xx
findings of the runtime probe.  A selector is ``ALL``, ``TC`` or a prefix of a code (``TC1``,
``TC10``, ``TC104``), as in ruff.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache

from tclint.rules.rule import Rule
from tclint.rules.ruletypes import Lifecycle

_SELECTOR = re.compile(r"^(ALL|TC\d{0,3})$")


@cache
def all_rules() -> tuple[type[Rule], ...]:
    import tclint.rules.catalog as catalog

    found: dict[str, type[Rule]] = {}
    for info in sorted(pkgutil.iter_modules(catalog.__path__), key=lambda i: i.name):
        if not info.name.startswith("tc"):
            continue
        module = importlib.import_module(f"tclint.rules.catalog.{info.name}")
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and issubclass(obj, Rule)
                and obj is not Rule
                and getattr(obj, "code", None)
            ):
                if obj.__module__ != module.__name__:
                    continue
                if obj.code in found and found[obj.code] is not obj:
                    raise RuntimeError(f"duplicate rule code {obj.code}")
                found[obj.code] = obj
    return tuple(found[c] for c in sorted(found))


@cache
def by_code() -> dict[str, type[Rule]]:
    return {r.code: r for r in all_rules()}


def get(code: str) -> type[Rule] | None:
    return by_code().get(code)


def validate_selector(selector: str) -> str | None:
    """A problem with a selector (unknown code, bad syntax), or None."""
    if not _SELECTOR.match(selector):
        return f"invalid rule selector {selector!r} (expected ALL, TC or a code prefix such as TC1 or TC104)"
    if selector in ("ALL", "TC"):
        return None
    if not any(code.startswith(selector) for code in by_code()):
        return f"unknown rule code or prefix {selector!r}"
    return None


def matches(selector: str, code: str) -> bool:
    return selector in ("ALL", "TC") or code.startswith(selector)


def _specificity(selector: str) -> int:
    return 0 if selector in ("ALL", "TC") else len(selector)


def enabled_codes(
    select: list[str], extend_select: list[str], ignore: list[str], preview: bool, target: str | None = None
) -> frozenset[str]:
    """Codes on for these settings.  As in ruff, the most specific selector wins between select
    and ignore; preview rules are only on with ``preview`` (or when selected by exact code); rules
    whose ``torch_versions`` exclude the target torch release are off."""
    return _enabled_codes(tuple(select), tuple(extend_select), tuple(ignore), preview, target)


@cache
def _enabled_codes(
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    preview: bool,
    target: str | None,
) -> frozenset[str]:
    out = set()
    for rule in all_rules():
        code = rule.code
        if target is not None and not rule.applies_to(target):
            continue
        best_on = max((_specificity(s) for s in [*select, *extend_select] if matches(s, code)), default=-1)
        best_off = max((_specificity(s) for s in ignore if matches(s, code)), default=-1)
        if best_on < 0 or best_off >= best_on:
            continue
        if rule.lifecycle is Lifecycle.PREVIEW and not preview and code not in [*select, *extend_select]:
            continue
        out.add(code)
    return frozenset(out)
