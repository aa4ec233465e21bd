"""The server answers every request and survives bad input (raw JSON-RPC, no client library)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from tests.helpers.lsputil import MODEL, write_project
from tests.helpers.rawlsp import RawClient

pytestmark = pytest.mark.timeout(120)

CAPS = {
    "textDocument": {
        "publishDiagnostics": {"relatedInformation": True},
        "diagnostic": {"dynamicRegistration": False},
        "hover": {"contentFormat": ["markdown"]},
        "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source"]}}},
    },
    "window": {"workDoneProgress": True},
}


async def _session(
    root: Path, caps: dict | None = None, options: object = None, args: list[str] | None = None
) -> RawClient:
    client = await RawClient.start(args=args)
    await client.initialize(str(root), caps or CAPS, options)
    return client


async def _alive(client: RawClient) -> None:
    reply = await client.request(
        "textDocument/hover",
        {"textDocument": {"uri": "file:///nowhere.py"}, "position": {"line": 0, "character": 0}},
    )
    assert "result" in reply and client.proc.returncode is None


async def test_invalid_params_get_an_error_reply(tmp_path):
    """pygls 2.1.1 would stay silent here (recipes README, finding C)."""
    client = await _session(write_project(tmp_path / "p"))
    try:
        bad = {
            "textDocument": {"uri": "file:///x.py"},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
            "context": {"diagnostics": [{"code": "TC101"}]},
        }  # no range, no message: what Neovim 0.7 sent
        reply = await client.request("textDocument/codeAction", bad, timeout=10)
        assert reply["error"]["code"] == -32602
        assert "diagnostics[0].range" in reply["error"]["message"]
        reply = await client.request(
            "textDocument/hover", {"textDocument": {"uri": 5}, "position": {"line": -1}}, timeout=10
        )
        assert reply["error"]["code"] == -32602
        reply = await client.request(
            "workspace/executeCommand", {"command": "tclint.probe", "arguments": [{"uri": 3}]}, timeout=10
        )
        assert reply["error"]["code"] == -32602 and "uri" in reply["error"]["message"]
        reply = await client.request(
            "workspace/executeCommand", {"command": "tclint.nope", "arguments": []}, timeout=10
        )
        assert "error" in reply
        reply = await client.request("no/suchMethod", {}, timeout=10)
        assert reply["error"]["code"] == -32601
        await _alive(client)
    finally:
        await client.shutdown()


async def test_garbage_on_the_wire(tmp_path):
    client = await _session(write_project(tmp_path / "p"))
    try:
        client.send_raw(b"{this is not json")
        client.send_raw(b"[1, 2, 3]")
        client.send_raw(b'"just a string"')
        client.send_raw(
            b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": 7}}'
        )
        client.send_raw(b'{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": null}')
        client.send_raw("\udcff".encode("utf-8", "surrogatepass"))
        await _alive(client)
        parse_errors = [m for _t, m in client.received if m.get("error", {}).get("code") == -32700]
        assert parse_errors and parse_errors[0]["id"] is None
    finally:
        await client.shutdown()


async def test_requests_for_unknown_documents_are_answered(tmp_path):
    client = await _session(write_project(tmp_path / "p"))
    uri = (tmp_path / "p" / "missing.py").as_uri()
    pos = {"line": 3, "character": 4}
    rng = {"start": pos, "end": pos}
    try:
        for method, params in [
            ("textDocument/hover", {"textDocument": {"uri": uri}, "position": pos}),
            (
                "textDocument/codeAction",
                {"textDocument": {"uri": uri}, "range": rng, "context": {"diagnostics": []}},
            ),
            ("textDocument/codeLens", {"textDocument": {"uri": uri}}),
            ("textDocument/diagnostic", {"textDocument": {"uri": uri}}),
            ("textDocument/diagnostic", {"textDocument": {"uri": "untitled:Untitled-1"}}),
            (
                "workspace/executeCommand",
                {"command": "tclint.probe", "arguments": [{"uri": uri, "position": pos}]},
            ),
            (
                "workspace/executeCommand",
                {"command": "tclint.createProbeInputs", "arguments": [{"uri": uri, "position": pos}]},
            ),
        ]:
            reply = await client.request(method, params, timeout=20)
            assert "result" in reply or "error" in reply, (method, reply)
        # a change and a close for a document that was never opened
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "x"}]},
        )
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        await _alive(client)
    finally:
        await client.shutdown()


async def test_out_of_range_edits_are_clamped(tmp_path):
    root = write_project(tmp_path / "p")
    client = await _session(root, {"textDocument": {"publishDiagnostics": {}}})
    uri = (root / "pkg" / "model.py").as_uri()
    try:
        first = client.expect(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": MODEL}},
        )
        await asyncio.wait_for(first, 30)
        changes = [
            {
                "range": {"start": {"line": 500, "character": 0}, "end": {"line": 900, "character": 3}},
                "text": "\nx = 1\n",
            },
            {
                "range": {"start": {"line": 12, "character": 400}, "end": {"line": 12, "character": 999}},
                "text": "  # end",
            },
            {
                "range": {"start": {"line": 5, "character": 9}, "end": {"line": 2, "character": 0}},
                "text": "",
            },  # reversed
        ]
        last = client.expect(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"].get("version") == 2
        )
        client.notify(
            "textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": changes}
        )
        params = (await asyncio.wait_for(last, 30))["params"]
        await _alive(client)
        assert params["diagnostics"], params
    finally:
        await client.shutdown()


async def test_cancelled_requests_are_answered(tmp_path):
    root = write_project(tmp_path / "p")
    client = await _session(root)
    uri = (root / "pkg" / "model.py").as_uri()
    try:
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": MODEL}},
        )
        ids = []
        futures = []
        for _ in range(5):
            msg_id, fut = client.request_nowait("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            ids.append(msg_id)
            futures.append(fut)
        for msg_id in ids:
            client.notify("$/cancelRequest", {"id": msg_id})
        client.notify("$/cancelRequest", {"id": 99999})  # unknown id
        replies = await asyncio.wait_for(asyncio.gather(*futures), 30)
        for reply in replies:
            assert "result" in reply or reply["error"]["code"] == -32800, reply
        await _alive(client)
    finally:
        await client.shutdown()


async def test_an_exception_in_a_rule_does_not_stop_the_server(tmp_path):
    """A rule that raises: the file reports an internal error, the server goes on."""
    root = write_project(tmp_path / "p")
    boom = (
        "import tclint.rules.catalog.tc101_tensor_to_scalar as m\n"
        "def check_call(self, *a, **k):\n    raise ZeroDivisionError('boom')\n"
        "m.TensorToScalar.check_call = check_call\n"
        "from tclint.server.__main__ import main\nraise SystemExit(main([]))\n"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        boom,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    client = RawClient(proc)
    await client.initialize(str(root), {"textDocument": {"publishDiagnostics": {}}})
    uri = (root / "pkg" / "model.py").as_uri()
    try:
        published = client.expect(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": MODEL}},
        )
        params = (await asyncio.wait_for(published, 30))["params"]
        messages = " ".join(d["message"] for d in params["diagnostics"])
        assert "internal error" in messages and "ZeroDivisionError" in messages
        await _alive(client)
    finally:
        await client.shutdown()


async def test_tcp_mode(tmp_path):
    """`--tcp HOST:PORT` serves the same protocol on a socket."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tclint.server", "--tcp", f"127.0.0.1:{port}", stderr=asyncio.subprocess.DEVNULL
    )
    try:
        for _ in range(100):
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.1)
        else:
            raise AssertionError("the server did not listen")
        body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}'
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        reply = await reader.readexactly(length)
        assert b'"capabilities"' in reply and b'"tclint"' in reply
        writer.close()
    finally:
        proc.kill()
        await proc.wait()
