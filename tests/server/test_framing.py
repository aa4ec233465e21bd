"""Framing errors on the server's stdin are logged and skipped (``server/framing.py``), and the
exit status follows the protocol (``exit`` without ``shutdown``: 1).

pygls 2.1.1's own reader went deaf for good after any of these frames; the raw stdio tests below
send each kind followed by a valid request and check the request is answered and the drop logged.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from tclint.server.framing import Deframer, FramedStdin

from tests.helpers.lsputil import write_project
from tests.helpers.rawlsp import ROOT, RawClient

pytestmark = pytest.mark.timeout(120)


def _frame(obj: object, length: int | None = None, header: bytes | None = None) -> bytes:
    body = json.dumps(obj).encode()
    if header is None:
        header = b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length)
    return header + body


BAD_BODY = {"jsonrpc": "2.0", "id": "lost", "method": "textDocument/hover", "params": {}}
_N = len(json.dumps(BAD_BODY).encode())
MALFORMED = {
    "no Content-Length": _frame(
        BAD_BODY, header=b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
    ),
    "non-numeric": _frame(BAD_BODY, header=b"Content-Length: twelve\r\n\r\n"),
    "negative": _frame(BAD_BODY, header=b"Content-Length: -12\r\n\r\n"),
    "too many digits": _frame(BAD_BODY, header=b"Content-Length: " + b"9" * 30 + b"\r\n\r\n"),
    "zero": _frame(BAD_BODY, 0),
    "short": _frame(BAD_BODY, _N - 9),
    "long by 1": _frame(BAD_BODY, _N + 1),
    "long by 20": _frame(BAD_BODY, _N + 20),
    "long by 500": _frame(BAD_BODY, _N + 500),
    "not a header": b"hello" + json.dumps(BAD_BODY).encode(),
    "header line without colon": b"Content-Length 12\r\n\r\n" + json.dumps(BAD_BODY).encode(),
}
GOOD = {"jsonrpc": "2.0", "id": 7, "method": "shutdown"}


def _bodies(data: bytes, step: int | None) -> tuple[list[bytes], Deframer]:
    deframer = Deframer(logger=logging.getLogger("test.framing"))
    out = []
    chunks = [data] if step is None else [data[i : i + step] for i in range(0, len(data), step)]
    for chunk in chunks:
        deframer.feed(chunk)
        while (body := deframer.next_body()) is not None:
            out.append(body)
    deframer.end()
    return out, deframer


def _json(bodies: list[bytes]) -> list[object]:
    out = []
    for body in bodies:
        try:
            out.append(json.loads(body))
        except ValueError:
            pass
    return out


@pytest.mark.parametrize("kind", sorted(MALFORMED))
@pytest.mark.parametrize("step", [None, 1, 5, 64])
def test_each_malformed_frame_is_dropped_and_the_next_one_read(kind, step, caplog):
    caplog.set_level(logging.WARNING, "test.framing")
    bodies, deframer = _bodies(MALFORMED[kind] + _frame(GOOD), step)
    assert _json(bodies) == [GOOD], bodies
    assert deframer.errors >= 1 and "framing error from the client" in caplog.text


@pytest.mark.parametrize("step", [None, 1, 3])
def test_well_formed_streams_pass_unchanged(step, caplog):
    caplog.set_level(logging.DEBUG, "test.framing")
    messages = [
        GOOD,
        {"jsonrpc": "2.0", "method": "x", "params": {"text": "Content-Length: 5\r\n\r\n{}" * 3}},
    ]
    data = b"".join(_frame(m) for m in messages)
    data += b"content-length:10\nContent-Type: x\n\n" + b'{"a": "b"}'  # case and bare line feeds
    data += b"\r\n" + b"Content-Type: a\r\nContent-Length: 2\r\n\r\n[]"  # blank line, header order
    pretty = json.dumps(GOOD, indent=2).replace("\n", "\r\n").encode()  # raw line breaks in the body
    data += b"Content-Length: %d\r\n\r\n" % len(pretty) + pretty
    bodies, deframer = _bodies(data, step)
    assert [json.loads(b) for b in bodies] == [*messages, {"a": "b"}, [], GOOD]
    assert deframer.errors == 0 and deframer.dropped == 0 and not caplog.text


def test_a_long_frame_does_not_wait_for_bytes_that_never_come():
    """The announced length runs past everything the client sent (it now waits for a reply):
    the next header is found inside the announced body, not after it."""
    deframer = Deframer(logger=logging.getLogger("test.framing"))
    deframer.feed(_frame(BAD_BODY, 10_000) + _frame(GOOD))
    assert json.loads(deframer.next_body() or b"null") == GOOD


def test_garbage_is_not_kept_in_memory():
    deframer = Deframer(logger=logging.getLogger("test.framing"))
    deframer.feed(b"Content-Type: x\r\n\r\n")
    for _ in range(200):
        deframer.feed(b"x" * 65536)
        assert deframer.next_body() is None
    assert len(deframer._buf) - deframer._pos < 1024
    deframer.feed(_frame(GOOD))
    assert json.loads(deframer.next_body() or b"null") == GOOD
    assert deframer.dropped > 200 * 65536


def test_framed_stdin_presents_what_pygls_reads():
    import io

    raw = io.BytesIO(MALFORMED["non-numeric"] + _frame(GOOD))
    stdin = FramedStdin(raw, Deframer(logger=logging.getLogger("test.framing")))
    body = json.dumps(GOOD).encode()
    assert stdin.readline() == b"Content-Length: %d\r\n" % len(body)
    assert stdin.readline() == b"\r\n"
    assert stdin.read(len(body)) == body
    assert stdin.readline() == b""


# ---------------------------------------------------------------------------------------------
# a real server process


async def _server(root: Path) -> tuple[RawClient, asyncio.subprocess.Process]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tclint.server", cwd=ROOT,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    client = RawClient(proc)
    await client.initialize(str(root), {"textDocument": {"publishDiagnostics": {}}})
    return client, proc


def _logged(client: RawClient, since: int) -> str:
    return "\n".join(
        m["params"]["message"] for _t, m in client.received[since:] if m.get("method") == "window/logMessage"
    )  # fmt: skip


async def test_the_server_answers_after_each_malformed_frame(tmp_path):
    client, proc = await _server(write_project(tmp_path / "p"))
    hover = {
        "textDocument": {"uri": (tmp_path / "nowhere.py").as_uri()},
        "position": {"line": 0, "character": 0},
    }
    try:
        await client.request("textDocument/hover", hover)  # the log handler is installed
        for kind, data in MALFORMED.items():
            since = len(client.received)
            client.send_bytes(data)
            reply = await asyncio.wait_for(client.request("textDocument/hover", hover), 15)
            assert "result" in reply, (kind, reply)
            for _ in range(50):
                if "framing error from the client" in _logged(client, since):
                    break
                await asyncio.sleep(0.05)
            assert "framing error from the client" in _logged(client, since), kind
        assert proc.returncode is None
    finally:
        await client.shutdown()
    assert proc.stderr is not None
    stderr = (await proc.stderr.read()).decode()
    assert stderr.count("framing error from the client") >= len(MALFORMED), stderr


# ---------------------------------------------------------------------------------------------
# exit status


def _run(messages: list[dict]) -> int:
    data = b"".join(_frame(m) for m in messages)
    proc = subprocess.run(
        [sys.executable, "-m", "tclint.server"],
        input=data,
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        check=False,
    )
    return proc.returncode


def _session(tmp_path: Path) -> list[dict]:
    root = write_project(tmp_path / "p")
    uri = (root / "pkg" / "model.py").as_uri()
    text = (root / "pkg" / "model.py").read_text()
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen",
         "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}},
    ]  # fmt: skip


def test_exit_without_shutdown_exits_1(tmp_path):
    assert _run([*_session(tmp_path), {"jsonrpc": "2.0", "method": "exit"}]) == 1


def test_shutdown_then_exit_exits_0(tmp_path):
    messages = [
        *_session(tmp_path),
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    assert _run(messages) == 0


def test_a_large_body_is_handed_over_without_a_copy_and_emptied_after_use():
    """pygls keeps its last body in a local variable until the next message arrives; the body
    it got is emptied when it asks for the next one (a 50 MB didChange held 55 MB before)."""
    import io

    large = {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"text": "x" * (2 << 20)}}
    raw = io.BytesIO(_frame(large) + _frame(GOOD))
    stdin = FramedStdin(raw, Deframer(logger=logging.getLogger("test.framing")), chunk=100_000)
    length = int(stdin.readline().split(b":")[1])
    assert stdin.readline() == b"\r\n"
    body = stdin.read(length)
    assert isinstance(body, bytearray) and json.loads(body) == large
    assert stdin.readline().startswith(b"Content-Length:") and len(body) == 0
    stdin.readline()
    assert json.loads(stdin.read(len(json.dumps(GOOD)))) == GOOD


async def test_the_tcp_transport_resynchronises_too():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tclint.server",
        "--tcp",
        f"127.0.0.1:{port}",
        cwd=ROOT,
        stderr=asyncio.subprocess.PIPE,
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
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": None, "capabilities": {}},
        }
        writer.write(MALFORMED["no Content-Length"] + MALFORMED["long by 20"] + _frame(init))
        await writer.drain()
        header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        reply = json.loads(await reader.readexactly(length))
        assert reply["id"] == 1 and "capabilities" in reply["result"]
        writer.write(_frame({"jsonrpc": "2.0", "method": "exit"}))  # without shutdown
        await writer.drain()
        assert await asyncio.wait_for(proc.wait(), 30) == 1
        assert proc.stderr is not None
        assert (await proc.stderr.read()).count(b"framing error from the client") == 2
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
