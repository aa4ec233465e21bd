"""Server logs to the client (``window/logMessage``), from any thread.

Only the ``tclint.server`` logger is forwarded: pygls logs every message it sends, so forwarding
its logger would loop forever.  Records are handed to the event loop (pygls' writer is not
thread-safe) and dropped once the loop is gone.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types

LEVELS = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
    logging.DEBUG: types.MessageType.Log,
}


class ClientLogHandler(logging.Handler):
    def __init__(self, server: Any, loop: asyncio.AbstractEventLoop, level: int = logging.INFO) -> None:
        super().__init__(level)
        self.server = server
        self.loop = loop
        self.setFormatter(logging.Formatter("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = self.format(record)
        except Exception:
            return
        kind = LEVELS.get(
            record.levelno,
            types.MessageType.Log if record.levelno < logging.INFO else types.MessageType.Error,
        )

        def send() -> None:
            try:
                self.server.window_log_message(types.LogMessageParams(type=kind, message=message))
            except Exception:
                pass

        try:
            if self.loop.is_closed():
                return
            self.loop.call_soon_threadsafe(send)
        except RuntimeError:
            pass


def install(server: Any, loop: asyncio.AbstractEventLoop, level: int = logging.INFO) -> ClientLogHandler:
    logger = logging.getLogger("tclint.server")
    for handler in list(logger.handlers):
        if isinstance(handler, ClientLogHandler):
            logger.removeHandler(handler)
    handler = ClientLogHandler(server, loop, level)
    logger.addHandler(handler)
    logger.setLevel(min(level, logger.level or level) if logger.level else level)
    logger.propagate = True
    return handler
