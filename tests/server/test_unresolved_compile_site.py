"""An unresolved compile site is visible in the editor, not only in `tclint regions` (TC311)."""

from __future__ import annotations

import pytest

from tests.helpers.lsputil import PYPROJECT, codes, diagnostics, open_doc, write_project

pytestmark = pytest.mark.timeout(180)

SOURCE = """\
import torch


def compile_any(factory):
    model = factory()
    return torch.compile(model)
"""


async def test_unresolved_compile_site_is_an_info_diagnostic(start, tmp_path):
    root = write_project(
        tmp_path / "proj", {"pkg/__init__.py": "", "pkg/build.py": SOURCE, "pyproject.toml": PYPROJECT}
    )
    client = await start("vscode", root)
    uri = open_doc(client, root / "pkg" / "build.py")
    diags = await diagnostics(client, uri, lambda d: len(d) == 1)
    assert codes(diags) == [("TC311", 6)]
    assert diags[0].severity == 3  # Information
    assert "cannot tell what `torch.compile(model)` compiles" in diags[0].message
