"""End to end: the real server over stdio, driven by pytest-lsp with the capability snapshots of
real clients (VS Code 1.65, Neovim 0.7 push-only, Neovim 0.11 pull, Emacs 29 with UTF-32).
pytest-lsp checks every reply against the client's capabilities."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from tests.helpers.lsputil import (
    apply_edits,
    change_doc,
    codes,
    diagnostics,
    edits_of,
    is_pull,
    open_doc,
    replace_range,
)

pytestmark = pytest.mark.timeout(180)

CLIENTS = ["vscode", "neovim-0.7", "neovim-0.11", "emacs"]


def _action_params(uri: str, diag: types.Diagnostic, only: list[str] | None = None) -> types.CodeActionParams:
    return types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=diag.range,
        context=types.CodeActionContext(diagnostics=[diag], only=only),
    )


@pytest.mark.parametrize("profile", CLIENTS)
async def test_open_edit_fix_hover_lens(start, project, profile):
    """The everyday loop in every client: findings on open, as you type, quick fixes, hover, lens."""
    client = await start(profile, project, init_options={"settings": {"unsafeFixes": True}})
    model = project / "pkg" / "model.py"
    text = model.read_text()
    uri = open_doc(client, model)
    diags = await diagnostics(client, uri, lambda d: len(d) >= 2)
    assert codes(diags) == [("TC101", 13), ("TC104", 12)]
    item = next(d for d in diags if d.code == "TC101")
    # the exact range, and a compiled-region chain pointing into train.py where the client shows it
    assert (item.range.start.line, item.range.start.character, item.range.end.character) == (12, 12, 27)
    assert item.source == "tclint" and item.severity == types.DiagnosticSeverity.Warning
    caps = client.capabilities.text_document.publish_diagnostics
    if caps is not None and caps.related_information:
        assert item.related_information and item.related_information[0].location.uri.endswith("train.py")
    if caps is not None and caps.code_description_support:
        assert item.code_description.href.endswith("gb0124.html")

    # quick fixes: the unsafe `print` removal (unsafeFixes is on) and "disable for this line"
    printed = next(d for d in diags if d.code == "TC104")
    actions = await client.text_document_code_action_async(_action_params(uri, printed))
    titles = [a.title for a in actions]
    assert "Disable TC104 for this line" in titles and any("Remove the `print` call" in t for t in titles), (
        titles
    )
    remove = next(
        a for a in actions if "Remove the `print` call" in a.title and a.kind == types.CodeActionKind.QuickFix
    )
    fixed = apply_edits(text, edits_of(remove, uri))
    assert "print(" not in fixed and "s = h.mean().item()" in fixed

    # the client applies it: the finding goes, the other one moves up a line
    change_doc(client, uri, 2, [types.TextDocumentContentChangeWholeDocument(text=fixed)])
    diags = await diagnostics(client, uri, lambda d: codes(d) == [("TC101", 12)])

    # hover on the finding: the rule's documentation and why the code is compiled
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=diags[0].range.start)
    )
    assert hover is not None and "# TC101" in hover.contents.value and "train.py" in hover.contents.value

    # code lenses on the compiled functions
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    lines = sorted(lens.range.start.line + 1 for lens in lenses)
    assert lines == [10, 21], lines  # Block.forward, Model.forward (the print line is gone)
    assert all(lens.command.command == "tclint.probe" and lens.command.title == "Probe" for lens in lenses)
    arg = lenses[0].command.arguments[0]
    assert arg["uri"] == uri and arg["position"]["line"] in (9, 20)


@pytest.mark.parametrize("profile", CLIENTS)
async def test_syntax_error_while_typing_keeps_other_findings(start, project, profile):
    client = await start(profile, project)
    model = project / "pkg" / "model.py"
    uri = open_doc(client, model)
    await diagnostics(client, uri, lambda d: len(d) >= 2)
    # type an unfinished statement at the end of Model.__init__ (blank line 21), keystroke by keystroke
    version = 2
    change_doc(client, uri, version, [replace_range(20, 0, 20, 0, "        ")])
    typed = ""
    for ch in "self.x = (":
        typed += ch
        version += 1
        change_doc(client, uri, version, [replace_range(20, 8, 20, 8 + len(typed) - 1, typed)])
    diags = await diagnostics(client, uri, lambda d: any(x.code == "TC000" for x in d))
    assert [c for c, _ in codes(diags)].count("TC000") == 1, codes(diags)
    # the last good findings elsewhere in the file are still shown, at their lines
    assert ("TC101", 13) in codes(diags) and ("TC104", 12) in codes(diags), codes(diags)
    # finish the line: back to the real findings only
    version += 1
    change_doc(client, uri, version, [replace_range(20, 8 + len(typed), 20, 8 + len(typed), "1)\n        ")])
    diags = await diagnostics(client, uri, lambda d: not any(x.code == "TC000" for x in d))
    assert codes(diags) == [("TC101", 13), ("TC104", 12)]


@pytest.mark.parametrize("profile", ["vscode", "neovim-0.11"])
async def test_fix_all_and_unsafe_fixes_off(start, project, profile):
    """source.fixAll.tclint applies safe fixes only; without unsafeFixes no unsafe quick fix."""
    model = project / "pkg" / "model.py"
    model.write_text(model.read_text().replace("h = self.lin(x)", "h = self.lin(x)  # noqa: TC101"))
    client = await start(profile, project)
    uri = open_doc(client, model)
    diags = await diagnostics(client, uri, lambda d: any(x.code == "TC012" for x in d))
    unused = next(d for d in diags if d.code == "TC012")
    if client.capabilities.text_document.publish_diagnostics.tag_support is not None:
        assert types.DiagnosticTag.Unnecessary in (unused.tags or [])
    printed = next(d for d in diags if d.code == "TC104")
    actions = await client.text_document_code_action_async(_action_params(uri, printed))
    assert [a.title for a in actions if a.kind == types.CodeActionKind.QuickFix] == [
        "Disable TC104 for this line"
    ]
    fix_all = await client.text_document_code_action_async(
        _action_params(uri, unused, only=["source.fixAll"])
    )
    assert [a.kind for a in fix_all] == ["source.fixAll.tclint"]
    new_text = apply_edits(model.read_text(), edits_of(fix_all[0], uri))
    assert "# noqa" not in new_text and "print(" in new_text  # the unsafe print fix is not applied


@pytest.mark.parametrize("profile", CLIENTS)
async def test_settings_change_and_severity(start, project, profile):
    """Editor settings: select, severity; pulled again on didChangeConfiguration."""
    config = {"": {"tclint": {"severity": {"TC104": "Error"}}}}
    client = await start(
        profile, project, configuration=config, init_options={"settings": {"severity": {"TC104": "Error"}}}
    )
    model = project / "pkg" / "model.py"
    uri = open_doc(client, model)
    diags = await diagnostics(client, uri, lambda d: len(d) >= 2)
    assert next(d for d in diags if d.code == "TC104").severity == types.DiagnosticSeverity.Error
    client.set_configuration({"select": ["TC101"]}, section="tclint")
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tclint": {"select": ["TC101"]}})
    )
    diags = await diagnostics(client, uri, lambda d: codes(d) == [("TC101", 13)])
    assert codes(diags) == [("TC101", 13)]


async def test_pull_diagnostics_result_ids(start, project):
    client = await start("neovim-0.11", project)
    assert is_pull(client)
    uri = open_doc(client, project / "pkg" / "model.py")
    ident = types.TextDocumentIdentifier(uri=uri)
    first = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=ident))
    assert first.kind == "full" and len(first.items) == 2 and first.result_id
    again = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=ident, previous_result_id=first.result_id)
    )
    assert again.kind == "unchanged" and again.result_id == first.result_id
    # a file that is not open is linted from disk
    train = (project / "train.py").as_uri()
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=train))
    )
    assert report.kind == "full" and list(report.items) == []
    # the workspace report holds the project's files with findings
    ws = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
    reported = {item.uri: item for item in ws.items}
    assert uri in reported and len(reported[uri].items) == 2


async def test_utf8_and_utf32_positions(start, project):
    """Columns follow the negotiated encoding (Neovim 0.11 offers utf-8 first, Emacs utf-32)."""
    model = project / "pkg" / "model.py"
    line = '        print("блок→🙂", h.shape); s2 = h.sum().item()'
    model.write_text(model.read_text().replace('        print("block", h.shape)', line))
    before = line[: line.index("h.sum()")]
    expected = {
        "neovim-0.11": len(before.encode("utf-8")),
        "emacs": len(before),
        "vscode": len(before.encode("utf-16-le")) // 2,
    }
    assert len(set(expected.values())) == 3
    for profile, col in expected.items():
        client = await start(profile, project)
        uri = open_doc(client, model)
        diags = await diagnostics(client, uri, lambda d: len(d) >= 3)
        second = [d for d in diags if d.code == "TC101" and d.range.start.line == 11]
        assert second and second[0].range.start.character == col, (
            profile,
            [(d.code, d.range) for d in diags],
        )


async def test_stale_versions_are_dropped(start, project):
    """A burst of edits publishes for the last version only (after the debounce)."""
    client = await start("neovim-0.7", project)
    model = project / "pkg" / "model.py"
    uri = open_doc(client, model)
    await diagnostics(client, uri, lambda d: len(d) == 2)
    seen: list[int | None] = []
    original = client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params: types.PublishDiagnosticsParams) -> None:
        seen.append(params.version)
        original(params)

    client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    for version in range(2, 12):
        change_doc(client, uri, version, [replace_range(12, 12, 12, 12, "1 + " if version % 2 else "")])
    await asyncio.sleep(1.5)
    assert seen and seen[-1] == 11 and len(seen) <= 3, seen


async def test_entry_point_hover_lens_and_restart(start, project):
    """On a compile site: what it compiles (cross-file), a "Probe file" lens; then tclint.restart."""
    client = await start("vscode", project)
    train = project / "train.py"
    uri = open_doc(client, train)
    await diagnostics(client, uri, lambda d: True)
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=4, character=12)
        )
    )
    assert hover is not None
    text = hover.contents.value
    assert (
        "torch.compile(Model())" in text
        and "`Model.forward` (model.py:22)" in text
        and "Block.forward" in text
    ), text
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert "**Variants:** 1 variant" in text, text  # the one call passes a tensor only: one variant
    assert [(lens.range.start.line, lens.command.command, lens.command.title) for lens in lenses] == [
        (4, "", "1 variant"),
        (4, "tclint.probeFile", "Probe file"),
    ]
    # hover on a code inside a suppression comment
    model = project / "pkg" / "model.py"
    model_uri = open_doc(
        client, model, model.read_text().replace("h = self.lin(x)", "h = self.lin(x)  # noqa: TC101")
    )
    await diagnostics(client, model_uri, lambda d: len(d) == 3)
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=model_uri),
            position=types.Position(line=10, character=35),
        )
    )
    assert hover is not None and hover.contents.value.startswith("# TC101")
    # restart: everything is recomputed, the diagnostics come back
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="tclint.restart", arguments=[])
    )
    assert result == {"restarted": True}
    await diagnostics(client, model_uri, lambda d: len(d) == 3)


def test_cli_entry_points():
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "tclint.rules.cli", "server", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and "--tcp" in out.stdout
    out = subprocess.run(
        [sys.executable, "-m", "tclint.server", "--version"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0 and out.stdout.startswith("tclint-server ")
    out = subprocess.run(
        [sys.executable, "-m", "tclint.server", "--tcp", "nonsense"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "HOST:PORT" in out.stderr


async def test_disabled_and_lint_on_save_only(start, project):
    """`enable: false` publishes nothing; `lintOnChange: false` lints on open and save only."""
    model = project / "pkg" / "model.py"
    client = await start("neovim-0.7", project, init_options={"enable": False})
    uri = open_doc(client, model)
    assert await diagnostics(client, uri, lambda d: True) == []
    other = await start("neovim-0.7", project, init_options={"lintOnChange": False})
    uri = open_doc(other, model)
    await diagnostics(other, uri, lambda d: len(d) == 2)
    change_doc(other, uri, 2, [replace_range(11, 0, 12, 0, "")])  # delete the print line
    await asyncio.sleep(1.0)
    assert len(other.diagnostics[uri]) == 2  # not re-linted while typing
    other.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert codes(await diagnostics(other, uri, lambda d: len(d) == 1)) == [("TC101", 12)]
