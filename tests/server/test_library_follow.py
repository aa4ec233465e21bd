"""With follow-libraries on, the editor shows TC312 at the user's compile site, its library sites as
related locations (clickable into the installed source)."""

from __future__ import annotations

import os
import textwrap

import pytest
from lsprotocol import types

from tests.helpers.lsputil import PYPROJECT, codes, diagnostics, open_doc, write_project

pytestmark = pytest.mark.timeout(180)

USER = """\
import torch
import fakelib

model = torch.compile(fakelib.Layer())
"""

LAYER = textwrap.dedent("""\
    from torch import nn


    class Layer(nn.Module):
        def forward(self, x):
            return x * x.sum().item()
    """)


async def test_the_library_summary_is_shown_at_the_compile_site(start, tmp_path):
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    (site / "fakelib").mkdir(parents=True)
    (site / "fakelib" / "__init__.py").write_text("from .layers import Layer\n")
    (site / "fakelib" / "layers.py").write_text(LAYER)
    python = tmp_path / "env" / "bin" / "python"
    pyproject = PYPROJECT + f'follow-libraries = true\n\n[tool.tclint.probe]\npython = "{python}"\n'
    root = write_project(tmp_path / "proj", {"train.py": USER, "pyproject.toml": pyproject})
    client = await start("vscode", root)
    uri = open_doc(client, root / "train.py")
    diags = await diagnostics(client, uri, lambda d: len(d) == 1)
    assert codes(diags) == [("TC312", 4)]
    [related] = diags[0].related_information
    assert related.location.uri.endswith("fakelib/layers.py") and related.location.range.start.line == 5
    assert os.path.isfile(str(site / "fakelib" / "layers.py"))

    # hover on the summary: the library part of the chain, each site clickable into the installed file
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=diags[0].range.start)
    )
    assert hover is not None
    text = hover.contents.value
    assert "**In the installed library**" in text
    assert "[layers.py:6](" in text and "fakelib/layers.py#L6)" in text and "Layer.forward" in text
