"""Memory stays flat over 10,000 edits (slow: about two minutes).  The benchmark
(``bench/server_latency.py``) measures the same on the 2,000-line file."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.helpers.bench_scripts import load
from tests.helpers.rawlsp import RawClient

_latency = load("server_latency")
TRAIN, Editor, model_source, rss_kib = (
    _latency.TRAIN,
    _latency.Editor,
    _latency.model_source,
    _latency.rss_kib,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]
EDITS = int(os.environ.get("TCLINT_MEMORY_EDITS", "10000"))


async def test_memory_is_flat_over_many_edits(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "mem"\n\n[tool.tclint]\n')
    text = model_source(400)
    model = root / "model.py"
    model.write_text(text)
    (root / "train.py").write_text(TRAIN)
    client = await RawClient.start(cwd=str(root))
    try:
        await client.initialize(
            str(root),
            {"textDocument": {"publishDiagnostics": {"relatedInformation": True}}},
            {"settings": {"lintDebounce": 0}},
        )
        uri = model.as_uri()
        first = client.expect(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        assert (await asyncio.wait_for(first, 120))["params"]["diagnostics"]
        editor = Editor(client, uri, text)
        samples = []
        for n in range(EDITS):
            await editor.send(editor.edit(n))
            if n % 100 == 0:
                client.received.clear()
            if n % (EDITS // 20) == 0:
                samples.append(rss_kib(client.proc.pid))
        samples.append(rss_kib(client.proc.pid))
    finally:
        await client.shutdown()
    warm = samples[len(samples) // 5]  # after 20% of the edits
    end = samples[-1]
    growth = (end - warm) / warm
    print(f"RSS over {EDITS} edits: {[s // 1024 for s in samples]} MiB")
    assert growth < 0.10, f"RSS grew {growth:.1%} after warm-up: {[s // 1024 for s in samples]} MiB"
