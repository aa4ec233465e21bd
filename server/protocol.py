"""pygls' LanguageServerProtocol, made to answer every request and survive any input.

pygls 2.1.1 sends *no reply* to a request whose params fail to deserialize (it logs
``JsonRpcInvalidParams`` and pops up "Error in server"; the client then waits until it times
out -- Neovim 0.7 hit this with code actions).  Here such a request gets a JSON-RPC
``InvalidParams`` error naming what was wrong.  A body that is not JSON gets a ``ParseError`` reply.

Document synchronisation is handled by our own store (``documents``): pygls' built-in
didOpen/didChange/didClose handlers would update its workspace first and raise on an edit whose
range lies outside the document, never reaching ours.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import logging
from collections.abc import Generator
from typing import Any

from cattrs.errors import ClassValidationError
from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol, lsp_method

log = logging.getLogger("tclint.server")

# the ExecuteCommandParams of the command being run (its workDoneToken), for the command handler
current_command: contextvars.ContextVar[types.ExecuteCommandParams | None] = contextvars.ContextVar(
    "tclint_current_command", default=None
)
# the future pygls answers the executeCommand request from: pygls cancels *it* on $/cancelRequest
# (answering at once) but not the command handler's own task, which watches it to stop its work
current_request: contextvars.ContextVar[Any] = contextvars.ContextVar("tclint_current_request", default=None)


class _Answered:
    """Stands in for a request that was already answered with an error."""

    jsonrpc = "answered"


INVALID_PARAMS = -32602
PARSE_ERROR = -32700


def _describe(exc: BaseException) -> str:
    """The leaf problems of a cattrs validation error, with where they are ("$.params...")."""
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, ClassValidationError):
        try:
            from cattrs.v import transform_error

            problems = transform_error(cause, path="$")
            return "; ".join(problems[:5])[:500]
        except Exception:
            return str(cause)[:500]
    if cause is not None:
        return f"{type(cause).__name__}: {cause}"[:500]
    return str(exc)[:500]


class TclintProtocol(LanguageServerProtocol):
    exit_code = 0  # the process's exit status once the client sent ``exit`` (see ``lsp_exit``)

    def _execute_handler(
        self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None
    ) -> None:
        """pygls 2.1.1 files the future of every notification handled by a built-in generator
        (didOpen, didChange, didClose, ...) and of every step a generator yields to in
        ``_request_futures`` under a fresh id, and never removes it: a few hundred bytes per
        keystroke, forever.  Remove each one when it completes."""

        def done(future: Any, _id: Any = msg_id, _callback: Any = callback) -> None:
            if self._request_futures.get(_id) is future:
                del self._request_futures[_id]
            _callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except (JsonRpcInvalidParams, JsonRpcInternalError) as exc:
            if isinstance(data, dict) and "id" in data and "method" in data and "error" not in data:
                method = data.get("method")
                detail = _describe(exc)
                log.warning("invalid params for %s (id %r): %s", method, data.get("id"), detail)
                self._send_raw_error(data["id"], INVALID_PARAMS, f"Invalid params for {method}: {detail}")
                return _Answered()
            if isinstance(data, dict) and "method" in data:
                log.warning("ignoring %s with invalid params: %s", data.get("method"), _describe(exc))
                return _Answered()
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Answered):
            return
        if not hasattr(message, "jsonrpc"):  # a JSON value that is not a JSON-RPC message
            log.warning("ignoring a message that is not JSON-RPC: %.200r", message)
            return
        super().handle_message(message)

    def _send_raw_error(self, msg_id: Any, code: int, message: str) -> None:
        payload = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
        self._send_data(_RawMessage(payload))

    def _serialize_message(self, data: Any) -> Any:
        if isinstance(data, _RawMessage):
            return data.payload
        return super()._serialize_message(data)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is None and isinstance(result, RawResult):
            self.send_json_text(
                '{"jsonrpc":"2.0","id":' + json.dumps(msg_id) + ',"result":' + result.text + "}"
            )
            return
        super()._send_response(msg_id, result, error)

    def send_json_text(self, body: str) -> None:
        """Send one message given as JSON text (framed here; pygls' writer does the rest)."""
        if self.writer is None:
            return
        data = body.encode(self.CHARSET)
        header = f"Content-Length: {len(data)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        try:
            res = self.writer.write(header.encode(self.CHARSET) + data)
            if inspect.isawaitable(res):
                asyncio.ensure_future(res)
        except BrokenPipeError:
            log.error("the client went away")
            raise
        except Exception:
            log.exception("cannot send a message")

    def send_raw(self, payload: dict[str, Any]) -> None:
        """Send a message that is already JSON-ready (skips the lsprotocol/cattrs round trip)."""
        self._send_data(_RawMessage(payload))

    def parse_error(self, detail: str) -> None:
        self._send_raw_error(None, PARSE_ERROR, f"Parse error: {detail}"[:500])

    # -- document sync goes straight to our handlers (see module docstring)
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(
        self, params: types.DidOpenTextDocumentParams
    ) -> Generator[Any, Any, None]:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, None]:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(
        self, params: types.DidCloseTextDocumentParams
    ) -> Generator[Any, Any, None]:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls' own, iterating over a copy: cancelling a future now removes it from
        ``_request_futures`` (see ``_execute_handler``) while pygls' loop walks that dict."""
        if (handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True
        return None

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls' own, with its exit status kept: pygls ends the loop with ``sys.exit(0 if
        shutdown else 1)`` but ``start_io`` swallows that ``SystemExit``, so the process always
        exited 0.  ``__main__`` returns ``exit_code``: 1 for an ``exit`` without a prior
        ``shutdown``, as the protocol asks."""
        self.exit_code = 0 if self._shutdown else 1
        return (yield from super().lsp_exit(*args))

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(self, params: types.ExecuteCommandParams) -> Generator[Any, Any, Any]:
        current_command.set(params)
        current_request.set(self._request_futures.get(self.msg_id) if self.msg_id is not None else None)
        return (yield from super().lsp_workspace__execute_command(params))


class RawResult:
    """A request's result given as JSON text (large diagnostic reports skip cattrs)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _RawMessage:
    """A pre-built JSON-RPC payload (sent as is)."""

    __slots__ = ("payload",)

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload

    def __bool__(self) -> bool:
        return True


def is_parse_error(exc: BaseException) -> bool:
    return isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError))
