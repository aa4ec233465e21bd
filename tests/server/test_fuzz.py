"""Fuzzing the language server: random edit sequences (incremental ranges, out-of-range ones
included), saves, closes, malformed requests, requests for unknown documents, cancellations.

Properties: the server stays up; every request gets an answer (an error reply is fine, silence is
not); every published range lies inside the document as it was at the published version; once
things settle, what is published for a document is for its latest version.

Hypothesis runs with a fixed seed (``derandomize``) and a bounded number of examples, against one
server process.  ``TCLINT_FUZZ_EXAMPLES=500 pytest tests/server/test_fuzz.py`` runs longer.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.lsputil import MODEL, write_project
from tests.helpers.rawlsp import RawClient

pytestmark = pytest.mark.timeout(600)
EXAMPLES = int(os.environ.get("TCLINT_FUZZ_EXAMPLES", "40"))
_LINE_END = re.compile(r"\r\n|\r|\n")
TEXT = MODEL + "\n\nfast = torch.compile(Model())\n"  # compiled in the document itself: findings to check


# ---------------------------------------------------------------------------------------------
# an independent model of the client's document (LSP rules: lines end at \n, \r\n, \r; columns
# in UTF-16 code units; positions past a line's or the document's end are clamped)


def _lines(text: str) -> list[tuple[int, int]]:
    """(start, end-without-ending) offsets of each line."""
    out, start = [], 0
    for m in _LINE_END.finditer(text):
        out.append((start, m.start()))
        start = m.end()
    out.append((start, len(text)))
    return out


def _utf16(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _offset(text: str, line: int, character: int) -> int:
    lines = _lines(text)
    if line >= len(lines):
        return len(text)
    start, end = lines[line]
    units = 0
    for i in range(start, end):
        if units >= character:
            return i
        units += 2 if ord(text[i]) > 0xFFFF else 1
    return end


def apply_change(text: str, change: dict) -> str:
    if "range" not in change:
        return change["text"]
    r = change["range"]
    a = _offset(text, r["start"]["line"], r["start"]["character"])
    b = _offset(text, r["end"]["line"], r["end"]["character"])
    if b < a:
        a, b = b, a
    return text[:a] + change["text"] + text[b:]


def covered(text: str, rng: dict) -> str:
    a = _offset(text, rng["start"]["line"], rng["start"]["character"])
    b = _offset(text, rng["end"]["line"], rng["end"]["character"])
    return text[a:b]


# what the text under a finding must look like (catches findings kept at the wrong place)
SHAPE = {"TC104": re.compile(r"^print\("), "TC101": re.compile(r"item\(\)$")}


def inside(text: str, rng: dict) -> bool:
    lines = _lines(text)
    for pos in (rng["start"], rng["end"]):
        if pos["line"] < 0 or pos["line"] >= len(lines) or pos["character"] < 0:
            return False
        start, end = lines[pos["line"]]
        if pos["character"] > _utf16(text[start:end]):
            return False
    s, e = rng["start"], rng["end"]
    return (s["line"], s["character"]) <= (e["line"], e["character"])


# ---------------------------------------------------------------------------------------------
# operations

SNIPPETS = st.sampled_from(
    ["", "x", "\n", "\r\n", "\r", "    ", "\t", "(", ")", "'''", '"', "#", ".item()", "print(h)", "if h.sum() > 0:\n",
     "import torch\n", "é", "🙂", "\x00", "\x0c", "\u2028", "def f(:\n", "return", "@torch.compile\n", "# noqa: TC101"]
)  # fmt: skip
POS = st.fixed_dictionaries({"line": st.integers(0, 60), "character": st.integers(0, 120)})
CHANGE = st.one_of(
    st.fixed_dictionaries(
        {
            "range": st.fixed_dictionaries({"start": POS, "end": POS}),
            "text": st.lists(SNIPPETS, max_size=3).map("".join),
        }
    ),
    st.fixed_dictionaries(
        {"text": st.sampled_from([TEXT, "", "import torch\n", TEXT.replace("\n", "\r\n")])}
    ),
)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("change"), st.lists(CHANGE, min_size=1, max_size=3)),
        st.tuples(st.just("save"), st.none()),
        st.tuples(st.just("close_reopen"), st.none()),
        st.tuples(st.just("hover"), POS),
        st.tuples(st.just("actions"), POS),
        st.tuples(st.just("lens"), st.none()),
        st.tuples(st.just("pull"), st.none()),
        st.tuples(
            st.just("malformed"), st.sampled_from(["codeAction", "hover", "command", "unknown", "garbage"])
        ),
        st.tuples(st.just("cancel"), st.none()),
        st.tuples(st.just("unknown_doc"), POS),
        st.tuples(st.just("shift_and_break"), st.integers(0, 4)),
    ),
    min_size=5,
    max_size=40,
)


class Session:
    def __init__(self, client: RawClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.texts: dict[str, dict[int, str]] = {}  # uri -> version -> text
        self.version: dict[str, int] = {}
        self.pending: list[asyncio.Future] = []
        self.n = 0
        self.checked = 0  # published diagnostics whose ranges were checked

    def request(self, method: str, params: object) -> None:
        _id, fut = self.client.request_nowait(method, params)
        self.pending.append(fut)

    async def run(self, ops: list) -> None:  # noqa: C901 - long, not split yet (issue 16)
        self.n += 1
        uri = (self.root / "pkg" / f"fuzz{self.n}.py").as_uri()
        text = TEXT
        self.texts[uri] = {1: text}
        self.version[uri] = 1
        self.client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        for kind, arg in ops:
            v = self.version[uri]
            if kind == "change":
                for change in arg:
                    text = apply_change(text, change)
                v += 1
                self.version[uri] = v
                self.texts[uri][v] = text
                self.client.notify(
                    "textDocument/didChange",
                    {"textDocument": {"uri": uri, "version": v}, "contentChanges": arg},
                )
                await asyncio.sleep(0.02)  # let some versions be published, not all coalesced
            elif kind == "shift_and_break":
                # lines above the findings go, a broken statement goes in: the findings kept from
                # the last good version must move with their lines
                end = {"line": arg, "character": 0}
                change = {
                    "range": {"start": {"line": 0, "character": 0}, "end": end},
                    "text": "x = (\n" * (arg % 3),
                }
                text = apply_change(text, change)
                v += 1
                self.version[uri] = v
                self.texts[uri][v] = text
                self.client.notify(
                    "textDocument/didChange",
                    {"textDocument": {"uri": uri, "version": v}, "contentChanges": [change]},
                )
                await asyncio.sleep(0.05)
            elif kind == "save":
                self.client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
            elif kind == "close_reopen":
                self.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
                v += 1
                self.version[uri] = v
                self.texts[uri][v] = text
                self.client.notify(
                    "textDocument/didOpen",
                    {"textDocument": {"uri": uri, "languageId": "python", "version": v, "text": text}},
                )
            elif kind == "hover":
                self.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": arg})
            elif kind == "actions":
                rng = {"start": arg, "end": arg}
                self.request(
                    "textDocument/codeAction",
                    {"textDocument": {"uri": uri}, "range": rng, "context": {"diagnostics": []}},
                )
            elif kind == "lens":
                self.request("textDocument/codeLens", {"textDocument": {"uri": uri}})
            elif kind == "pull":
                self.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            elif kind == "malformed":
                if arg == "codeAction":
                    self.request(
                        "textDocument/codeAction",
                        {
                            "textDocument": {"uri": uri},
                            "range": {},
                            "context": {"diagnostics": [{"code": 1}]},
                        },
                    )
                elif arg == "hover":
                    self.request(
                        "textDocument/hover",
                        {"textDocument": {"uri": None}, "position": {"line": -5, "character": "x"}},
                    )
                elif arg == "command":
                    self.request(
                        "workspace/executeCommand",
                        {"command": "tclint.probe", "arguments": [{"uri": uri, "position": {"line": -1}}]},
                    )
                elif arg == "unknown":
                    self.request("tclint/doesNotExist", {"a": 1})
                else:
                    self.client.send_raw(b'{"jsonrpc": "2.0", "id": "x", "method": ')
            elif kind == "cancel":
                msg_id, fut = self.client.request_nowait(
                    "textDocument/diagnostic", {"textDocument": {"uri": uri}}
                )
                self.pending.append(fut)
                self.client.notify("$/cancelRequest", {"id": msg_id})
            elif kind == "unknown_doc":
                other = (self.root / "nope" / f"missing{self.n}.py").as_uri()
                self.request("textDocument/hover", {"textDocument": {"uri": other}, "position": arg})
                self.client.notify(
                    "textDocument/didChange",
                    {"textDocument": {"uri": other, "version": 3}, "contentChanges": [{"text": "x"}]},
                )
            await asyncio.sleep(0)
        # every request is answered
        replies = await asyncio.wait_for(asyncio.gather(*self.pending), 60)
        for reply in replies:
            assert "result" in reply or "error" in reply, reply
        self.pending.clear()
        assert self.client.proc.returncode is None, "the server exited"
        # settle: the last publication for this document is for its latest version
        final = self.version[uri]
        for _ in range(300):
            pubs = self.client.publications(uri)
            if pubs and pubs[-1][1].get("version") == final:
                break
            await asyncio.sleep(0.05)
        pubs = self.client.publications(uri)
        assert pubs and pubs[-1][1].get("version") == final, (
            final,
            [p.get("version") for _t, p in pubs][-5:],
        )
        # every published range lies inside the document at its version
        for _t, params in pubs:
            version = params.get("version")
            if version is None:
                continue  # a clear on close
            body = self.texts[uri][version]
            for d in params["diagnostics"]:
                assert inside(body, d["range"]), (version, d["range"], d["code"])
                shape = SHAPE.get(d["code"])
                if shape is not None:
                    assert shape.search(covered(body, d["range"])), (
                        version,
                        d["code"],
                        covered(body, d["range"]),
                    )
                for rel in d.get("relatedInformation", []):
                    if rel["location"]["uri"] == uri:
                        assert inside(body, rel["location"]["range"]), rel
                for edit in (d.get("data", {}).get("fix") or {}).get("edits", []):
                    assert inside(body, edit["range"]), edit
        self.checked += sum(len(p["diagnostics"]) for _t, p in pubs)
        self.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        self.client.received.clear()


@pytest.fixture(scope="module")
def fuzz_session(tmp_path_factory):
    root = write_project(tmp_path_factory.mktemp("fuzz") / "proj")
    loop = asyncio.new_event_loop()
    client = loop.run_until_complete(RawClient.start())
    loop.run_until_complete(
        client.initialize(
            str(root),
            {
                "textDocument": {"publishDiagnostics": {"relatedInformation": True}, "diagnostic": {}},
                "general": {"positionEncodings": ["utf-16"]},
            },
            {"settings": {"lintDebounce": 5, "diagnosticMode": "push"}},
        )
    )
    session = Session(client, root)
    yield loop, session
    assert session.n == 0 or session.checked > 0, "the fuzz checked no published diagnostic"
    print(f"fuzz: {session.n} sessions, {session.checked} published diagnostics checked")
    loop.run_until_complete(client.shutdown())
    loop.close()


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(ops=OPS)
def test_fuzzed_sessions_keep_the_server_up_and_ranges_inside(fuzz_session, ops):
    loop, session = fuzz_session
    loop.run_until_complete(session.run(ops))


def test_the_document_model_of_this_test():
    assert (
        apply_change(
            "ab\ncd",
            {
                "range": {"start": {"line": 0, "character": 9}, "end": {"line": 7, "character": 0}},
                "text": "X",
            },
        )
        == "abX"
    )
    assert (
        apply_change(
            "a🙂b",
            {"range": {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 4}}, "text": ""},
        )
        == "a🙂"
    )
    assert inside("a\r\nb", {"start": {"line": 1, "character": 1}, "end": {"line": 1, "character": 1}})
    assert not inside("a\nb", {"start": {"line": 0, "character": 2}, "end": {"line": 0, "character": 2}})


# ---------------------------------------------------------------------------------------------
# framing errors (server/framing.py): well-formed frames interleaved with malformed ones


def _framed(body: bytes, kind: str, k: int) -> bytes:
    """``body`` framed well (``kind`` "ok") or with one framing error."""
    n = len(body)
    header = {
        "ok": b"Content-Length: %d\r\n\r\n" % n,
        "ok-lf-type": b"content-length: %d\nContent-Type: application/vscode-jsonrpc; charset=utf-8\n\n" % n,
        "no-length": b"Content-Type: application/vscode-jsonrpc\r\n\r\n",
        "non-numeric": b"Content-Length: 1%s2\r\n\r\n" % (b"x" * (k % 3 + 1)),
        "negative": b"Content-Length: -%d\r\n\r\n" % n,
        "huge": b"Content-Length: %s\r\n\r\n" % (b"9" * (21 + k % 10)),
        "zero": b"Content-Length: 0\r\n\r\n",
        "short": b"Content-Length: %d\r\n\r\n" % max(1, n - 1 - k % n),
        "long": b"Content-Length: %d\r\n\r\n" % (n + 1 + k),
        "garbage": b"\x00not a header " + bytes([33 + k % 90]) * (k % 40),
    }[kind]
    return header + body


FRAME_KINDS = [
    "ok",
    "ok-lf-type",
    "no-length",
    "non-numeric",
    "negative",
    "huge",
    "zero",
    "short",
    "long",
    "garbage",
]
_JSON_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
FRAMES = st.lists(
    st.tuples(
        st.sampled_from(FRAME_KINDS),
        st.integers(0, 3000),
        st.dictionaries(
            st.sampled_from(["a", "text", "id"]), st.one_of(_JSON_TEXT, st.integers()), max_size=3
        ),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=EXAMPLES * 10, deadline=None, derandomize=True)
@given(frames=FRAMES, step=st.one_of(st.none(), st.integers(1, 97)))
def test_fuzzed_framing_errors_lose_only_the_bad_frames(frames, step):
    """Whatever the framing errors and however the bytes arrive, every well-formed frame comes
    out, in order, and nothing else that decodes as JSON; a stream with no error logs nothing."""
    import json
    import logging

    from tclint.server.framing import Deframer

    good, data = [], b""
    for i, (kind, k, payload) in enumerate(frames):
        message = {"jsonrpc": "2.0", "n": i, **payload}
        data += _framed(json.dumps(message).encode(), kind, k)
        if kind.startswith("ok"):
            good.append(message)
    deframer = Deframer(logger=logging.getLogger("test.fuzz.framing"))
    got = []
    chunks = [data] if step is None else [data[i : i + step] for i in range(0, len(data), step)]
    for chunk in chunks:
        deframer.feed(chunk)
        while (body := deframer.next_body()) is not None:
            try:
                got.append(json.loads(body))
            except ValueError:
                pass  # a body announced too short: the server answers it with a ParseError
    deframer.end()
    assert got == good
    assert (deframer.errors == 0) == all(kind.startswith("ok") for kind, _k, _p in frames)


@pytest.fixture(scope="module")
def framing_session(tmp_path_factory):
    root = write_project(tmp_path_factory.mktemp("framing") / "proj")
    loop = asyncio.new_event_loop()
    client = loop.run_until_complete(RawClient.start())
    loop.run_until_complete(client.initialize(str(root), {"textDocument": {"publishDiagnostics": {}}}))
    yield loop, client
    loop.run_until_complete(client.shutdown())
    loop.close()


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(
    frames=st.lists(st.tuples(st.sampled_from(FRAME_KINDS[2:]), st.integers(0, 3000)), min_size=1, max_size=4)
)
def test_fuzzed_framing_errors_never_silence_the_server(framing_session, frames):
    """After any run of malformed frames the next well-formed request is answered."""
    import json

    loop, client = framing_session
    lost = json.dumps({"jsonrpc": "2.0", "id": "lost", "method": "textDocument/hover", "params": {}}).encode()

    async def run() -> None:
        for kind, k in frames:
            client.send_bytes(_framed(lost, kind, k))
        hover = {"textDocument": {"uri": "file:///nowhere.py"}, "position": {"line": 0, "character": 0}}
        reply = await client.request("textDocument/hover", hover, timeout=15)
        assert "result" in reply and client.proc.returncode is None

    loop.run_until_complete(run())
