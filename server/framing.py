"""Reading LSP messages off the client's byte stream, resynchronising after framing errors.

pygls 2.1.1 (``pygls.io_.run_async``) accepts only the exact line ``Content-Length: N\\r\\n`` and
skips any other header line.  After a header block without a valid ``Content-Length`` (missing,
not a number, negative), the body that follows -- which ends without a line break -- is read as
one "line" together with the next message's ``Content-Length`` header, which then no longer
matches; the same happens to every later message.  A length that is too short or too long
misaligns the stream the same way.  One framing error and the server is alive but deaf for good,
with nothing logged.

Here the frames are parsed by ``Deframer`` (no I/O, fed bytes) and pygls is given only
well-formed frames, through the reader ``start_io`` takes (``FramedStdin``: ``readline`` and
``read``; ``serve_tcp`` does the same for ``--tcp``).  The rules:

* A header block is lines ending in ``\\r\\n`` (a bare ``\\n`` is accepted) up to an empty line,
  at most ``HEADER_LIMIT`` bytes.  Each line is ``Name: value``; names are case-insensitive and
  unknown ones ignored.  ``Content-Length`` must appear (once, or repeated with the same value)
  as 1 to 20 decimal digits, between 1 and ``MAX_BODY``.  Blank lines before a header block are
  skipped.
* Anything else is a framing error: it is logged (warning, ``tclint.server.framing``, which
  reaches ``window/logMessage`` and stderr) and the bytes are dropped up to the next
  ``Content-Length: <digits>`` line, wherever it starts -- even inside the bad header block: after
  a bad frame the next header usually follows a body that ends without a line break.  A second
  line says how many bytes were skipped.
* A body that contains such a header line was announced too long (valid JSON cannot hold one: a
  raw line break is never inside a JSON string, ``Content-Length`` is never outside one).  The
  bytes before that header are dropped and logged, and reading resumes at the header -- without
  waiting for the announced number of bytes, which may never come.
* A body announced too short is passed on as read (pygls' JSON decoding fails and the protocol
  answers a ``ParseError``); what follows it is not a header and is dropped as above.

A dropped request gets no reply: its id is unknown.  The TCP transport (``--tcp``) reads the
same way (``serve_tcp``, ``FramedStream``).
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections import deque
from typing import Any, BinaryIO

log = logging.getLogger("tclint.server.framing")

HEADER_LIMIT = 8 * 1024  # bytes in one header block
MAX_BODY = 1 << 30  # the largest body accepted (1 GiB)
_TAIL = 128  # longer than any header line ``_HEADER_LINE`` matches
_SAMPLE = 80  # bytes of dropped data quoted in the log
_HEADER_LINE = re.compile(rb"content-length[ \t]{0,8}:[ \t]{0,8}[0-9]{1,20}[ \t]{0,8}\r?\n", re.IGNORECASE)
_HEADER_REST = re.compile(rb"[ \t]{0,8}(?::[ \t]{0,8}(?:[0-9]{1,20}(?:[ \t]{0,8}\r?)?)?)?")
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_NAME = b"content-length"
_LARGE = 1 << 20  # bodies from this size on are handed over without a copy


def _could_start_header(data: bytes) -> bool:
    """``data`` is a proper beginning of a ``Content-Length: N`` line (more bytes may finish it)."""
    low = data.lower()
    if len(low) <= len(_NAME):
        return _NAME.startswith(low)
    return low.startswith(_NAME) and _HEADER_REST.fullmatch(low, len(_NAME)) is not None


def _sample(data: bytes | bytearray) -> str:
    shown = bytes(data[:_SAMPLE])
    return repr(shown) + ("..." if len(data) > _SAMPLE else "")


class Deframer:
    """LSP frames out of a byte stream, dropping (and logging) what is not a well-formed frame.

    ``feed`` bytes as they arrive, take complete bodies from ``next_body`` until it returns None,
    call ``end`` at the end of the stream.  ``want`` is how many more bytes would help."""

    def __init__(self, max_body: int = MAX_BODY, logger: logging.Logger = log) -> None:
        self.max_body = max_body
        self.log = logger
        self._buf = bytearray()
        self._pos = 0  # bytes before this offset are consumed
        self._length: int | None = None  # the announced body length, once a header block is read
        self._scanned = 0  # body bytes already searched for a header line
        self._skipping = False  # dropping bytes up to the next header line
        self._skipped = 0
        self._skipped_sample = b""
        self.dropped = 0  # bytes dropped so far (all framing errors)
        self.errors = 0  # framing errors so far

    # ------------------------------------------------------------------ input
    def feed(self, data: bytes) -> None:
        if self._pos:
            self._buf = self._buf[self._pos :]  # a fresh buffer: a large body's memory goes
            self._pos = 0
        self._buf += data

    def want(self) -> int:
        if self._length is not None:
            return max(1, self._length - (len(self._buf) - self._pos))
        return 1

    def end(self) -> None:
        """The stream ended: log what was left unfinished."""
        left = len(self._buf) - self._pos
        if self._skipping:
            self._finish_skip(left, at_end=True)
        elif left and self._buf[self._pos :].strip():
            what = "a body" if self._length is not None else "a header"
            self._error(f"the stream ended inside {what}", self._pos, left)
        self._buf, self._pos, self._length = bytearray(), 0, None

    # ------------------------------------------------------------------ output
    def next_body(self) -> bytes | bytearray | None:
        """The next well-formed message body (a large one as a bytearray, which the caller may
        empty when done with it), or None until more bytes arrive."""
        while True:
            if self._skipping and not self._skip():
                return None
            if self._length is None:
                found = self._header()
                if found is None:
                    return None
                if found is False:
                    continue  # a framing error: now skipping
                self._length, self._scanned = found, 0
            body = self._body()
            if body is None:
                return None
            if isinstance(body, (bytes, bytearray)):
                return body

    # ------------------------------------------------------------------ steps
    def _header(self) -> int | bool | None:  # noqa: C901 - long, not split yet (issue 16)
        """Parse a header block at the read position: its Content-Length, False after a framing
        error (skipping starts), None when more bytes are needed."""
        buf, start = self._buf, self._pos
        while start < len(buf) and buf[start] in b"\r\n":  # blank lines between messages
            start += 1
        self._pos = start
        if start == len(buf):
            return None
        pos, length, problem = start, None, None
        while True:
            nl = buf.find(b"\n", pos, start + HEADER_LIMIT)
            if nl < 0:
                partial = bytes(buf[pos : start + HEADER_LIMIT]).rstrip(b"\r")
                cut = partial.find(b":")
                name = partial if cut < 0 else partial[:cut]
                if name and _TOKEN.fullmatch(name) is None:
                    # not a header line (say the rest of a body announced too short): no need
                    # to wait for its end; the next header may be inside it
                    return self._fail("bytes that are not a message header", start)
                if len(buf) - start >= HEADER_LIMIT:
                    return self._fail(f"no end of the header block within {HEADER_LIMIT} bytes", start)
                return None
            line = bytes(buf[pos:nl]).rstrip(b"\r")
            if not line:
                pos = nl + 1
                break
            name, colon, value = line.partition(b":")
            if not colon or _TOKEN.fullmatch(name) is None:
                return self._fail("bytes that are not a message header", start)
            pos = nl + 1
            if name.lower() != _NAME:
                continue
            text = value.strip(b" \t")
            if not text.isdigit() or len(text) > 20:
                problem = problem or f"Content-Length {_sample(text)} is not a non-negative whole number"
                continue
            number = int(text)
            if length is not None and number != length:
                problem = problem or f"two different Content-Length headers ({length} and {number})"
            length = number
        if problem is None and length is None:
            problem = "a header block without Content-Length"
        if problem is None and length == 0:
            problem = "Content-Length 0 (an empty message)"
        if problem is None and length is not None and length > self.max_body:
            problem = f"Content-Length {length:,} is over the limit of {self.max_body:,} bytes"
        if problem is not None:
            # only its first byte is dropped: a valid header line may be glued to the end of a
            # bad one (``X: ...Content-Length: 5``), and the search for it starts right here
            return self._fail(problem, start)
        self._pos = pos
        return length

    def _body(self) -> bytes | bytearray | bool | None:
        """The body at the read position: bytes, False when it was dropped (announced too long),
        None when more bytes are needed."""
        assert self._length is not None
        buf, start, length = self._buf, self._pos, self._length
        have = len(buf) - start
        # a header line starting inside the announced body: the length was too long
        lo = start + max(0, self._scanned - _TAIL)
        hi = min(len(buf), start + length + _TAIL)
        if buf.find(b"\n", lo, hi) >= 0:
            match = _HEADER_LINE.search(buf, lo, hi)
            if match is not None and match.start() < start + length:
                got = match.start() - start
                self._pos = match.start()
                self._length = None
                self._error(
                    f"Content-Length {length:,} is longer than the message: a header follows after {got:,} bytes",
                    start,
                    got,
                )
                return False
        self._scanned = min(have, length)
        if have < length:
            return None
        # the body's last bytes may be the beginning of the next header (announced a few bytes
        # too long, the header not all here yet): wait for the rest before deciding
        if have < length + _TAIL:
            for i in range(max(start, start + length - _TAIL), start + length):
                if buf[i] in b"cC" and _could_start_header(bytes(buf[i:])):
                    return None
        self._length = None
        if start == 0 and length >= _LARGE:
            # a large body is handed over as the buffer itself (no copy: copying 50 MB took
            # 0.1 s); what follows it starts a new buffer
            rest = bytes(buf[length:])
            del buf[length:]
            self._buf, self._pos = bytearray(rest), 0
            return buf
        with memoryview(buf) as view:
            body = bytes(view[start : start + length])
        self._pos = start + length
        if self._pos > _LARGE:
            self._buf, self._pos = self._buf[self._pos :], 0
        return body

    def _fail(self, problem: str, start: int) -> bool:
        """A framing error at ``start``: log it, drop its first byte (so the search moves on) and
        skip to the next header line."""
        self.errors += 1
        self.log.warning(
            "framing error from the client: %s, at %s; skipping to the next message header",
            problem, _sample(self._buf[start : start + _SAMPLE + 1]),
        )  # fmt: skip
        self._pos = start + 1
        self._skipping = True
        self._skipped = 1
        self._skipped_sample = bytes(self._buf[start : start + 1])
        self.dropped += 1
        return False

    def _skip(self) -> bool:
        """Drop bytes up to the next header line; True once there (or False: need more)."""
        buf, start = self._buf, self._pos
        match = _HEADER_LINE.search(buf, start)
        if match is not None:
            self._note_skipped(start, match.start())
            self._pos = match.start()
            self._finish_skip(0)
            return True
        keep = max(start, len(buf) - _TAIL)  # a header line may be arriving
        self._note_skipped(start, keep)
        self._pos = keep
        return False

    def _note_skipped(self, start: int, end: int) -> None:
        if end > start:
            if len(self._skipped_sample) <= _SAMPLE:
                self._skipped_sample += bytes(
                    self._buf[start : min(end, start + _SAMPLE + 1 - len(self._skipped_sample))]
                )
            self._skipped += end - start
            self.dropped += end - start

    def _finish_skip(self, left: int, at_end: bool = False) -> None:
        self._skipping = False
        total = self._skipped + left
        self.dropped += left
        if at_end:
            self.log.warning(
                "framing: the stream ended while skipping to a message header (%d more bytes dropped)", total
            )
        elif total:
            self.log.warning(
                "framing: resynchronised on the next message header after skipping %d bytes (they began %s)",
                total, _sample(self._skipped_sample),
            )  # fmt: skip
        else:
            self.log.warning("framing: resynchronised on the next message header")

    def _error(self, problem: str, start: int, size: int) -> None:
        """A framing error whose extent is known: ``size`` bytes at ``start`` are dropped."""
        self.errors += 1
        self.dropped += size
        self.log.warning(
            "framing error from the client: %s; dropped %d bytes %s",
            problem,
            size,
            _sample(self._buf[start : start + min(size, _SAMPLE + 1)]),
        )


class _Presenter:
    """Well-formed frames presented the way pygls' readers read them: ``Content-Length: N\\r\\n``,
    ``\\r\\n``, then the body, so pygls never sees a framing error.

    A large body is handed over as a bytearray and emptied in place when pygls asks for the next
    message (it has decoded and handled it by then): pygls' loop keeps its last body in a local
    variable until the next one arrives, which after a 50 MB ``didChange`` held 55 MB for as
    long as the user paused."""

    def __init__(self, deframer: Deframer | None, chunk: int) -> None:
        self.deframer = deframer or Deframer()
        self.chunk = chunk
        self._ahead: deque[bytes | bytearray] = deque()
        self._handed: bytearray | None = None
        self._eof = False

    def _queued_line(self) -> bytes | None:
        """The blank line of the frame being read, or None at the start of a frame."""
        if self._ahead:
            return bytes(self._ahead.popleft())
        if self._handed is not None:
            self._handed.clear()  # pygls is done with it (see the class docstring)
            self._handed = None
        return None

    def _want(self) -> int:
        return min(max(self.chunk, self.deframer.want()), 1 << 24)

    def _got(self, data: bytes) -> None:
        if data:
            self.deframer.feed(data)
        else:
            self._eof = True
            self.deframer.end()

    def _present(self, body: bytes | bytearray | None) -> bytes:
        if body is None:
            return b""  # the end of the stream
        self._ahead.extend((b"\r\n", body))
        return b"Content-Length: %d\r\n" % len(body)

    def _take_body(self) -> bytes | bytearray:
        if not self._ahead:
            return b""
        body = self._ahead.popleft()
        if isinstance(body, bytearray):
            self._handed = body
        return body


class FramedStdin(_Presenter):
    """The ``stdin`` given to pygls' ``start_io`` (which calls ``readline`` and ``read`` from its
    thread pool, one call at a time)."""

    def __init__(self, raw: BinaryIO, deframer: Deframer | None = None, chunk: int = 1 << 16) -> None:
        super().__init__(deframer, chunk)
        self.raw = raw

    def readline(self) -> bytes:
        line = self._queued_line()
        if line is not None:
            return line
        while (body := self.deframer.next_body()) is None and not self._eof:
            read1 = getattr(self.raw, "read1", None)  # what is there, without waiting for more
            self._got(read1(self._want()) if read1 is not None else self.raw.read(self._want()))
        return self._present(body)

    def read(self, size: int = -1) -> bytes | bytearray:
        return self._take_body()


class FramedStream(_Presenter):
    """The reader given to pygls' ``run_async`` for a TCP connection (``serve_tcp``)."""

    def __init__(
        self, reader: asyncio.StreamReader, deframer: Deframer | None = None, chunk: int = 1 << 16
    ) -> None:
        super().__init__(deframer, chunk)
        self.reader = reader

    async def readline(self) -> bytes:
        line = self._queued_line()
        if line is not None:
            return line
        while (body := self.deframer.next_body()) is None and not self._eof:
            self._got(await self.reader.read(self._want()))
        return self._present(body)

    async def readexactly(self, n: int) -> bytes | bytearray:
        return self._take_body()


def serve_tcp(server: Any, host: str, port: int) -> None:
    """pygls' ``start_tcp`` with ``FramedStream`` as the reader (pygls takes no reader there):
    serve one client connection on ``host:port``, then stop."""
    from pygls.io_ import run_async

    stop = threading.Event()
    listener: asyncio.Server | None = None

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server.protocol.set_writer(writer)
        try:
            await run_async(
                stop_event=stop, reader=FramedStream(reader),  # type: ignore[arg-type]  # its readexactly may give a bytearray: pygls only decodes it
                protocol=server.protocol,
                logger=logging.getLogger("pygls.server"), error_handler=server.report_server_error,
            )  # fmt: skip
        finally:
            if listener is not None:
                listener.close()

    async def main() -> None:
        nonlocal listener
        listener = await asyncio.start_server(connection, host, port)
        log.info("serving on %s", ", ".join(str(sock.getsockname()) for sock in listener.sockets))
        async with listener:
            try:
                await listener.serve_forever()
            except asyncio.CancelledError:
                pass

    try:
        asyncio.run(main())
    finally:
        stop.set()
        server.shutdown()
