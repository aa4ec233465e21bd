"""``tclint server`` / ``python -m tclint.server``: start the language server.

stdio by default (what editors launch); ``--tcp HOST:PORT`` to attach a client by hand while
debugging.  Both read through ``framing`` (a malformed header is logged and skipped instead of
silencing the server).  The exit status is 0 after ``shutdown`` then ``exit``, 1 for an
``exit`` without ``shutdown`` (the protocol's rule).  stdout is the protocol channel, so
everything else that could print (warnings, user code never runs here, stray prints in
libraries) is pointed at stderr first.
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from collections.abc import Sequence


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tclint server", description="Start the tclint language server (stdio by default)."
    )
    p.add_argument("--stdio", action="store_true", help="talk LSP on stdin/stdout (the default)")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP port instead (for debugging)")
    p.add_argument("--log-file", help="also write the server's log to this file")
    p.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error"),
        help="what the log (window/logMessage and --log-file) shows (default: info)",
    )
    p.add_argument("--version", action="store_true", help="print the version and exit")
    return p


def _tune_gc() -> None:
    """Keep full garbage collections off the typing path.

    A full collection scans every object the server holds (the project's facts, the open files'
    analyses) and took up to ~90 ms on a 2,000-line model -- the p95 of lint-as-you-type.  The
    modules, rules and server objects that live forever are moved out of the collector's sight
    (``gc.freeze``), young collections run ~14x less often, and the server collects fully when the
    user pauses (``TclintServer.collect_when_idle``).  Reference counting frees everything else at
    once, so memory stays flat (tests/server/test_memory.py: 10,000 edits)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    from tclint.rules.version import __version__

    if args.version:
        print(f"tclint-server {__version__}")
        return 0
    host = port = None
    if args.tcp:
        host, _, port_text = args.tcp.rpartition(":")
        if not host or not port_text.isdigit():
            print(f"tclint server: --tcp expects HOST:PORT, got {args.tcp!r}", file=sys.stderr)
            return 2
        port = int(port_text)
    warnings.filterwarnings("ignore", category=SyntaxWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    level = getattr(logging, args.log_level.upper())
    logger = logging.getLogger("tclint.server")
    logger.setLevel(level)
    if args.log_file:
        handler = logging.FileHandler(args.log_file, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(message)s"))
        logger.addHandler(handler)
    logging.getLogger("pygls").setLevel(logging.WARNING if level > logging.DEBUG else logging.DEBUG)

    from tclint.server.server import create_server

    server = create_server()
    _tune_gc()
    if args.tcp:
        from tclint.server.framing import serve_tcp

        assert host is not None and port is not None
        serve_tcp(server, host, port)
        return server.protocol.exit_code  # type: ignore[attr-defined]
    from tclint.server.framing import FramedStdin

    stderr = logging.StreamHandler(sys.stderr)  # framing errors also reach the editor's server log
    stderr.setFormatter(logging.Formatter("tclint server: %(message)s"))
    logging.getLogger("tclint.server.framing").addHandler(stderr)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but the protocol may reach the real stdout
    server.start_io(FramedStdin(stdin), stdout)  # type: ignore[arg-type]  # readline/read, as pygls uses
    return server.protocol.exit_code  # type: ignore[attr-defined]


if __name__ == "__main__":
    raise SystemExit(main())
