"""Running tclint as users do (the console script, `python -m`, the language server over stdio)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
TCLINT = os.path.join(BIN, "tclint")


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PRE_COMMIT", "PYTHONSAFEPATH")}
    out.update(PYTHONIOENCODING="utf-8", PATH=BIN + os.pathsep + os.environ.get("PATH", ""), **extra)
    return out


def run(
    cmd: list[str], cwd: str, stdin: bytes | None = None, timeout: float = 300, **extra_env: str
) -> subprocess.CompletedProcess:
    return subprocess.run(
        cmd, cwd=cwd, input=stdin, capture_output=True, timeout=timeout, env=env(**extra_env)
    )


def tclint(*args: str, cwd: str, stdin: bytes | None = None, **extra_env: str) -> subprocess.CompletedProcess:
    return run([TCLINT, *args], cwd, stdin, **extra_env)


class LspSession:
    """A language server over stdio, driven synchronously: enough to open a document, wait for its
    diagnostics and shut down cleanly."""

    def __init__(self, cmd: list[str], cwd: str) -> None:
        self.proc = subprocess.Popen(
            cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env()
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if not line.strip():
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if length is not None:
                self.messages.put(json.loads(out.read(length)))

    def send(self, method: str, params: Any, request: bool = False) -> int | None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        ident = None
        if request:
            self._next += 1
            ident = msg["id"] = self._next
        body = json.dumps(msg).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return ident

    def wait_for(self, pred: Any, timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no such message from the server")
            try:
                msg = self.messages.get(timeout=min(left, 0.2))
            except queue.Empty:
                if self.proc.poll() is not None and self.messages.empty():
                    raise ConnectionError(f"the server exited ({self.proc.returncode})") from None
                continue
            if (
                msg.get("method")
                in ("workspace/configuration", "client/registerCapability", "window/workDoneProgress/create")
                and "id" in msg
            ):
                self._reply(msg)
                continue
            if pred(msg):
                return msg

    def _reply(self, msg: dict[str, Any]) -> None:
        result: Any = None
        if msg["method"] == "workspace/configuration":
            result = [{} for _ in msg["params"].get("items", [])]
        body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def lint(self, root: str, path: str) -> list[dict[str, Any]]:
        """initialize, open ``path``, return its first published diagnostics, shut down."""
        root_uri = Path(root).as_uri()
        uri = Path(path).as_uri()
        ident = self.send(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root_uri,
                "capabilities": {},
                "workspaceFolders": [{"uri": root_uri, "name": "w"}],
            },
            request=True,
        )
        self.wait_for(lambda m: m.get("id") == ident)
        self.send("initialized", {})
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        self.send(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        msg = self.wait_for(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and m["params"]["diagnostics"]
            )
        )
        ident = self.send("shutdown", None, request=True)
        self.wait_for(lambda m: m.get("id") == ident)
        self.send("exit", None)
        self.proc.wait(timeout=30)
        return msg["params"]["diagnostics"]

    def close(self) -> str:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode("utf-8", "replace")
