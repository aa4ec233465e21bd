"""The ``full`` text output of a TC312 summary names each library site (issue 21: the findings
belong to the user's compile site, and a terminal user must see where in the installed source they
are without the JSON output or an editor)."""

from __future__ import annotations

from tclint.rules.model import Diagnostic, RelatedLocation, Span
from tclint.rules.report.text import full

LIB = "/env/lib/python3.11/site-packages/lib/model.py"


def _summary(related: tuple[RelatedLocation, ...], library: bool) -> Diagnostic:
    return Diagnostic(
        code="TC312",
        name="compiled-library-code",
        message="compiled library code meets 1 likely graph break in 1 installed file",
        path="train.py",
        span=Span.of(2, 7, 2, 27),
        related=related,
        extra={"library_sites": [{"path": LIB, "line": 41}]} if library else {},
    )


def test_full_output_lists_the_library_sites_of_a_summary():
    site = RelatedLocation(LIB, Span.of(41, 8, 41, 20), "TC101 GB0124 (hot, high confidence): `x.item()`")
    text = full([_summary((site,), True)], {"train.py": "import torch\nm = torch.compile(Net())\n"})
    assert f"  = in library: {LIB}:41:9: TC101 GB0124 (hot, high confidence): `x.item()`" in text


def test_related_region_links_of_other_findings_are_not_repeated():
    link = RelatedLocation("train.py", Span.of(2, 4, 2, 27), "compiled via `torch.compile(Net())`")
    text = full([_summary((link,), False)], {"train.py": "import torch\nm = torch.compile(Net())\n"})
    assert "in library" not in text
