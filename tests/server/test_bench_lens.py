"""The "Benchmark" code lens: on compiled entry points with declared inputs, and only for a client
that runs ``tclint bench`` itself (``initializationOptions.clientCommands``).  Nothing runs."""

from __future__ import annotations

import textwrap

from lsprotocol import types

from tests.helpers.lsputil import diagnostics, open_doc, write_project

OPS = textwrap.dedent(
    """\
    import torch


    @torch.compile
    def run(x: torch.Tensor) -> torch.Tensor:
        return x.sin() + 1


    @torch.compile
    def undeclared(x: torch.Tensor) -> torch.Tensor:
        return x.cos()
    """
)
INPUTS = "import torch\n\n\ndef inputs_run():\n    yield {'args': (torch.randn(4),), 'label': 'b4'}\n"


async def _lenses(client, uri):
    return await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


async def test_benchmark_lens_on_entry_points_with_declared_inputs_for_a_client_that_runs_it(start, tmp_path):
    root = write_project(
        tmp_path / "proj",
        {"ops.py": OPS, "ops_probe_inputs.py": INPUTS, "pyproject.toml": '[project]\nname = "proj"\n'},
    )
    client = await start(
        "vscode",
        root,
        init_options={"settings": {}, "workspaceTrusted": True, "clientCommands": ["tclint.benchmark"]},
    )
    uri = open_doc(client, root / "ops.py")
    await diagnostics(client, uri, lambda d: True)
    bench = [lens for lens in await _lenses(client, uri) if lens.command.title == "Benchmark"]
    assert [
        (lens.range.start.line, lens.command.command, list(lens.command.arguments)) for lens in bench
    ] == [(4, "tclint.benchmark", [{"uri": uri, "target": "run"}])]  # `undeclared` has no inputs_undeclared

    other = await start("vscode", root, init_options={"settings": {}, "workspaceTrusted": True})
    uri = open_doc(other, root / "ops.py")
    await diagnostics(other, uri, lambda d: True)
    lenses = await _lenses(other, uri)
    assert any(lens.command.title.startswith("Probe") for lens in lenses)
    assert not any(lens.command.command == "tclint.benchmark" for lens in lenses)  # it could not run it
