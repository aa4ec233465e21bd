"""A minimal LSP client over a subprocess's stdio, for tests that need raw access (malformed
messages, thousands of edits, latency measurements).  pytest-lsp is used for everything else.

Messages are plain dicts; every message the server sends is recorded in ``received`` with the
time it arrived (``time.perf_counter()``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def frame(payload: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(payload) + payload


async def _header_length(reader: asyncio.StreamReader) -> int | None:
    """The Content-Length of the next header block: None at the end of the stream, -1 for a
    block without one."""
    length = -1
    while True:
        line = await reader.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            return length
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])


class RawClient:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.received: list[tuple[float, dict[str, Any]]] = []
        self._ids = itertools.count(1)
        self._waiters: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._notify: list[tuple[Any, asyncio.Future[dict[str, Any]]]] = []
        self._reader = asyncio.get_running_loop().create_task(self._read())
        self.closed = asyncio.Event()

    @classmethod
    async def start(
        cls, cwd: str | None = None, args: list[str] | None = None, env: dict[str, str] | None = None
    ) -> RawClient:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tclint.server", *(args or []),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            cwd=cwd or ROOT, env={**os.environ, **(env or {})},
        )  # fmt: skip
        return cls(proc)

    async def _read(self) -> None:
        """Read the server's messages until it closes the stream; pending requests then fail."""
        reader = self.proc.stdout
        assert reader is not None
        try:
            while True:
                length = await _header_length(reader)
                if length is None:
                    return
                if length < 0:
                    continue  # a header block without Content-Length
                msg = json.loads(await reader.readexactly(length))
                self.received.append((time.perf_counter(), msg))
                await self._dispatch(msg)
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            self.closed.set()
            for fut in self._waiters.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("server closed the connection"))

    async def _dispatch(self, msg: dict[str, Any]) -> None:
        """A response wakes its request; a server request is answered; notifications (and server
        requests) wake whoever waits for one like them."""
        if "id" in msg and ("result" in msg or "error" in msg) and "method" not in msg:
            fut = self._waiters.pop(msg["id"], None)
            if fut is not None and not fut.done():
                fut.set_result(msg)
        elif "method" in msg and "id" in msg:
            await self._answer_server_request(msg)
        if "method" in msg:
            for pred, fut in list(self._notify):
                if not fut.done() and pred(msg):
                    fut.set_result(msg)
            self._notify = [(p, f) for p, f in self._notify if not f.done()]

    async def _answer_server_request(self, msg: dict[str, Any]) -> None:
        method = msg["method"]
        result: Any = None
        if method == "workspace/configuration":
            result = [None for _ in msg.get("params", {}).get("items", [])]
        self.send_raw({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    # -- sending
    def send_raw(self, obj: Any) -> None:
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame(data))

    def send_bytes(self, data: bytes) -> None:
        """Bytes as they are (framing included by the caller)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)

    def notify(self, method: str, params: Any) -> None:
        self.send_raw({"jsonrpc": "2.0", "method": method, "params": params})

    def request_nowait(
        self, method: str, params: Any, msg_id: Any = None
    ) -> tuple[Any, asyncio.Future[dict[str, Any]]]:
        msg_id = next(self._ids) if msg_id is None else msg_id
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters[msg_id] = fut
        self.send_raw({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id, fut

    async def request(self, method: str, params: Any, timeout: float = 30.0) -> dict[str, Any]:
        _id, fut = self.request_nowait(method, params)
        return await asyncio.wait_for(fut, timeout)

    def expect(self, pred: Any) -> asyncio.Future[dict[str, Any]]:
        """A future for the next notification or server request matching ``pred``."""
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._notify.append((pred, fut))
        return fut

    # -- sessions
    async def initialize(
        self, root: str, capabilities: dict[str, Any] | None = None, options: Any = None
    ) -> dict[str, Any]:
        from pathlib import Path

        params = {
            "processId": os.getpid(),
            "rootUri": Path(root).as_uri(),
            "workspaceFolders": [{"uri": Path(root).as_uri(), "name": "root"}],
            "capabilities": capabilities
            or {"textDocument": {"publishDiagnostics": {"relatedInformation": True}}},
            "initializationOptions": options,
        }
        result = await self.request("initialize", params, timeout=60)
        self.notify("initialized", {})
        return result

    async def shutdown(self) -> None:
        try:
            await self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            await asyncio.wait_for(self.proc.wait(), 10)
        except Exception:
            pass
        finally:
            await self.kill()

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except Exception:
                pass
        self._reader.cancel()

    def publications(self, uri: str | None = None) -> list[tuple[float, dict[str, Any]]]:
        return [
            (t, m["params"]) for t, m in self.received
            if m.get("method") == "textDocument/publishDiagnostics" and (uri is None or m["params"]["uri"] == uri)
        ]  # fmt: skip
