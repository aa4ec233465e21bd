"""The probe from the editor: ``tclint.probe`` with work-done progress, findings published as
diagnostics (source ``tclint-probe``), confirmed static findings, stale marks after edits, code
lens summaries, program mode, cancellation, refusal in an untrusted workspace, inputs stubs.
Runs the real probe (torch 2.13, CPU): one server, so the worker is cold only once."""

from __future__ import annotations

import asyncio
import textwrap

import pytest
from lsprotocol import types

from tests.helpers.lsputil import change_doc, diagnostics, open_doc, replace_range, write_project
from tests.helpers.rawlsp import RawClient

pytestmark = [pytest.mark.timeout(400), pytest.mark.dynamo]

OPS = textwrap.dedent(
    """\
    import torch

    def helper(t):
        return t * t.sum().item()

    OPS = {"h": helper}


    @torch.compile
    def run(x: torch.Tensor) -> torch.Tensor:
        fn = OPS["h"]
        return fn(x) + 1


    @torch.compile
    def needs_inputs(a, b):
        return a + b
    """
)


def _cmd(command: str, uri: str, line: int | None = None) -> types.ExecuteCommandParams:
    arg: dict = {"uri": uri}
    if line is not None:
        arg["position"] = {"line": line, "character": 8}
    return types.ExecuteCommandParams(command=command, arguments=[arg])


async def test_probe_command_end_to_end(start, tmp_path):
    root = write_project(tmp_path / "proj")
    (root / "ops.py").write_text(OPS)
    client = await start("vscode", root)
    uri = open_doc(client, root / "ops.py")
    assert await diagnostics(client, uri, lambda d: True) == []  # tclint cannot see through OPS["h"]

    # 1. probe the function under the cursor: progress, the report, an unpredicted break
    result = await asyncio.wait_for(
        client.workspace_execute_command_async(_cmd("tclint.probe", uri, 11)), 300
    )
    assert result["status"] == "ok" and result["target"].endswith("ops.py::run"), result.get("message")
    assert "graph" in result["summary"] and "break" in result["summary"]
    assert any(b["gb_id"] == "GB0124" and b["line"] == 4 for b in result["graph_breaks"]), result[
        "graph_breaks"
    ]
    progress = [v for values in client.progress_reports.values() for v in values]
    assert progress[0].kind == "begin" and progress[0].cancellable and progress[-1].kind == "end"
    assert any(v.kind == "report" for v in progress)
    diags = await diagnostics(client, uri, lambda d: any(x.source == "tclint-probe" for x in d))
    found = next(d for d in diags if d.source == "tclint-probe")
    assert found.code == "TC901" and found.range.start.line == 3 and "GB0124" in found.message
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    titles = [lens.command.title for lens in lenses]
    assert any(t.startswith("Probe: ") and "compile" in t for t in titles), titles

    # 2. editing the line the finding points to marks it stale
    change_doc(client, uri, 2, [replace_range(3, 13, 3, 14, "+")])  # `t * t.sum()` -> `t + t.sum()`
    diags = await diagnostics(
        client, uri, lambda d: any("stale" in x.message for x in d if x.source == "tclint-probe")
    )
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert any("(stale)" in lens.command.title for lens in lenses)

    # 3. a static finding the probe sees is marked confirmed (warm worker now)
    model = root / "pkg" / "model.py"
    model_uri = open_doc(client, model)
    await diagnostics(client, model_uri, lambda d: len(d) == 2)
    result = await asyncio.wait_for(
        client.workspace_execute_command_async(_cmd("tclint.probe", model_uri, 10)), 120
    )
    assert result["target"].endswith("model.py::Block.forward")
    diags = await diagnostics(
        client, model_uri, lambda d: sum("confirmed by the probe" in x.message for x in d) == 2
    )
    assert {d.code for d in diags} == {"TC101", "TC104"}

    # 4. program mode on the training script, and on a position at module level
    result = await asyncio.wait_for(
        client.workspace_execute_command_async(_cmd("tclint.probeFile", (root / "train.py").as_uri())), 120
    )
    assert result["mode"] == "program" and result["status"] == "ok", result.get("message")

    # 5. a function without inputs: the stub writer, and the document shown
    shown = len(client.shown_documents)
    res = await client.workspace_execute_command_async(_cmd("tclint.createProbeInputs", uri, 15))
    assert res["written"] and res["target"].endswith("ops.py::needs_inputs")
    assert "def " in (tmp_path / "proj" / res["path"].split("/proj/", 1)[1]).read_text()
    assert len(client.shown_documents) == shown + 1
    # ... and the code action that offers it
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=15, character=8), end=types.Position(line=15, character=8)
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert any(a.title == "Create probe inputs for needs_inputs" for a in actions), [a.title for a in actions]


async def test_probe_is_refused_in_an_untrusted_workspace(start, tmp_path):
    root = write_project(tmp_path / "proj")
    client = await start("vscode", root, init_options={"settings": {}, "workspaceTrusted": False})
    uri = open_doc(client, root / "pkg" / "model.py")
    await diagnostics(client, uri, lambda d: len(d) == 2)
    with pytest.raises(Exception, match="trust the workspace"):
        await client.workspace_execute_command_async(_cmd("tclint.probe", uri, 10))
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert list(lenses) == []


async def test_a_running_probe_can_be_cancelled(tmp_path):
    root = write_project(tmp_path / "proj")
    (root / "slow.py").write_text(
        "import time\nimport torch\n\n\ndef slow(x: torch.Tensor) -> torch.Tensor:\n    time.sleep(120)\n    return x\n"
    )
    client = await RawClient.start()
    try:
        await client.initialize(str(root), {"window": {"workDoneProgress": True}})
        uri = (root / "slow.py").as_uri()
        running = client.expect(
            lambda m: m.get("method") == "$/progress" and "call 1" in str(m["params"]["value"].get("message"))
        )
        msg_id, reply = client.request_nowait(
            "workspace/executeCommand",
            {"command": "tclint.probe", "arguments": [{"uri": uri, "position": {"line": 5, "character": 4}}]},
        )
        await asyncio.wait_for(running, 300)
        ended = client.expect(
            lambda m: m.get("method") == "$/progress" and m["params"]["value"].get("kind") == "end"
        )
        client.notify("$/cancelRequest", {"id": msg_id})
        answer = await asyncio.wait_for(reply, 30)
        assert answer.get("error", {}).get("code") == -32800, answer
        end = await asyncio.wait_for(ended, 30)  # the probe itself stopped (its worker was killed)
        assert end["params"]["value"]["message"] == "cancelled"
        hover = await client.request(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
        )
        assert "result" in hover
    finally:
        await client.shutdown()


GRAD_LOOP = textwrap.dedent(
    """\
    import torch


    @torch.compile(backend="eager")
    def step(x):
        return x.sin() + 1


    for _ in range(3):
        x = torch.randn(4)
        step(x)
        with torch.no_grad():
            step(x)
    """
)


async def test_probe_confirms_a_predicted_variant_in_the_editor(start, tmp_path):
    """Issue 13 point 4 in the editor: the static TC208 variant (grad / no_grad) on the `with`
    line is marked confirmed once the probe has run the file as a program and seen the recompile
    whose failed guard is the grad mode."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "w"\n')
    (root / "loop.py").write_text(GRAD_LOOP)
    client = await start("vscode", root)
    uri = open_doc(client, root / "loop.py")
    diags = await diagnostics(client, uri, lambda d: any(x.code == "TC208" for x in d))
    tc208 = [d for d in diags if d.code == "TC208"]
    assert tc208[0].range.start.line == 11 and "confirmed" not in tc208[0].message, tc208
    result = await asyncio.wait_for(
        client.workspace_execute_command_async(_cmd("tclint.probeFile", uri)), 200
    )
    assert result["mode"] == "program" and result["status"] == "ok", result.get("message")
    diags = await diagnostics(
        client, uri, lambda d: any(x.code == "TC208" and "confirmed by the probe" in x.message for x in d)
    )
    assert [d.range.start.line for d in diags if d.code == "TC208"] == [11], diags
