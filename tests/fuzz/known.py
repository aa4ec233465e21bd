"""Inputs that hit an open finding in /work/notes/fuzz_findings.md.

The fuzz properties skip exactly these inputs (``assume(not known.any_open(data))``), so that one
open bug does not hide the others; each finding also has its own strict-xfail test in
test_findings.py.  When a finding is fixed, its xfail test XPASSes (strict: the suite fails), and
both that xfail and the predicate here are removed.
"""

from __future__ import annotations

import json
import re
from typing import Any

_MAGIC = re.compile(r"^\s*(%|!|\?)|^\s*\w[\w.]*\s*=\s*(%|!)|\?\s*$")


def _notebook(data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _code_sources(nb: Any) -> list[str]:
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return []
    out = []
    for cell in nb["cells"]:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            out.append("".join(str(s) for s in source) if isinstance(source, list) else str(source))
    return out


def finding_1(data: bytes) -> bool:
    """Notebook metadata / kernelspec not a table, or a language that is not a string."""
    nb = _notebook(data)
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return False
    meta = nb.get("metadata")
    if meta and not isinstance(meta, dict):
        return True
    spec = (meta or {}).get("kernelspec")
    if spec and not isinstance(spec, dict):
        return True
    language = (spec or {}).get("language")
    return bool(language) and not isinstance(language, str)


def finding_2(data: bytes) -> bool:
    """A code cell with a lone carriage return."""
    return any("\r" in s.replace("\r\n", "") for s in _code_sources(_notebook(data)))


def finding_3(data: bytes) -> bool:
    """A suppression comment on a line that magic blanking rewrites."""
    for source in _code_sources(_notebook(data)):
        low = source.lower()
        if "noqa" not in low and "tclint:" not in low:
            continue
        if source.lstrip().startswith("%%"):
            return True
        for line in source.split("\n"):
            lowered = line.lower()
            if _MAGIC.search(line) and ("noqa" in lowered or "tclint:" in lowered):
                return True
    return False


NOTEBOOK_FINDINGS = (finding_1, finding_2, finding_3)


def notebook_open(data: bytes) -> bool:
    return any(f(data) for f in NOTEBOOK_FINDINGS)


def finding_11_fix(diag: Any) -> bool:
    """The fix of an unused range / file-level suppression deletes its whole line (code included)."""
    return diag.code == "TC012" and ("range" in diag.message or "file-level" in diag.message)


def finding_12(data: bytes) -> bool:
    """A code cell whose source list holds something other than strings."""
    nb = _notebook(data)
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return False
    return any(isinstance(c, dict) and c.get("cell_type") == "code" and isinstance(c.get("source"), list)
               and not all(isinstance(s, str) for s in c["source"]) for c in nb["cells"])
