"""An edit typed while a warm open's verification runs (issue 21, "Speed"): derived from the open
record (``server/warmedit.py``) as the full lint would give it, answered before the verification
is done, and the full lint that follows replaces it only where it differs (nothing stale after)."""

from __future__ import annotations

import asyncio
import os
import textwrap
import time

from tclint.server import entries as entries_mod
from tclint.server import warmedit
from tclint.server.workspace import Workspace

from tests.server.test_warm_open import _setup as _open_setup

USER = textwrap.dedent("""
    import torch
    import warmlib
    from helpers import scale

    layer = warmlib.Layer()


    @torch.compile
    def step(x):
        y = scale(x)
        print("step")
        return layer(y)


    model = torch.compile(warmlib.Layer())
    model(step(torch.ones(3)))
    """)

# the same interface (names, functions, calls, lines) and exports (the region's first break):
# only what is reported in the user's file differs
SAME_INTERFACE = [
    USER + "# a comment\n",
    USER.replace('print("step")', 'print("step")  # noqa: TC104'),
    USER.replace('print("step")', 'print("step"); print("again")'),
]
# lines moved: misses (TC312's judgement of the compile site reads the file on disk at the
# buffer's positions, so a fresh pass says another thing than the record's summary moved)
MOVED = ["# a first line\n" + USER, USER.replace("    y = scale(x)\n", "\n    y = scale(x)\n")]
NEW_NAME = USER + "extra = 1\n"  # a new module-level name: another interface
NO_BREAK = USER.replace('print("step")', '"step"')  # the region's first break gone: other exports


def _setup(tmp_path, monkeypatch) -> tuple[str, str, str]:
    return _open_setup(tmp_path, monkeypatch, USER)


def _workspace(proj: str) -> Workspace:
    ws = Workspace()
    ws.set_folders([proj])
    return ws


def _first_session(proj: str, path: str) -> list:
    ws = _workspace(proj)
    out = ws.lint(path, USER, 1)
    root = ws.docs[path].root
    facts = root.current_facts(path)
    project, _cross = root.project()
    ws.remember(out, entries_mod.compute(path, facts, project), entries_mod.targets(facts))
    return out.diagnostics


def _scratch(proj: str, path: str, text: str) -> tuple[list, list, list]:
    """A fresh server's full pass over the buffer ``text``: diagnostics, code lenses, targets."""
    ws = _workspace(proj)
    diags = ws.lint(path, text, 1).diagnostics
    root = ws.docs[path].root
    facts = root.current_facts(path)
    return diags, root.entries(path, facts), entries_mod.targets(facts)


def test_an_edit_is_derived_from_the_record_as_a_full_lint_gives_it(tmp_path, monkeypatch):
    _site, proj, path = _setup(tmp_path, monkeypatch)
    opened = _first_session(proj, path)
    assert {"TC312"} < {d.code for d in opened}  # the library's summary and the user's own findings

    found = _workspace(proj).warm_lint(path, USER, 1)
    assert found is not None
    edit = found[0].warm_edit
    assert isinstance(edit, warmedit.WarmEdit)
    same = warmedit.derive(edit, USER)
    assert same is not None and same.diagnostics == opened
    differ = 0
    for text in SAME_INTERFACE:
        derived = warmedit.derive(edit, text)
        assert derived is not None, text
        assert (derived.diagnostics, derived.entries, derived.targets) == _scratch(proj, path, text), text
        differ += derived.diagnostics != opened
    assert differ >= 2  # the edits changed what is reported: derived, not the record's copy
    assert warmedit.derive(edit, NEW_NAME) is None  # the full lint answers
    assert warmedit.derive(edit, NO_BREAK) is None
    assert all(warmedit.derive(edit, text) is None for text in MOVED)
    assert warmedit.derive(edit, USER + "def (:\n") is None  # does not parse


def test_a_record_without_its_edit_part_or_a_damaged_one_derives_nothing(tmp_path, monkeypatch):
    _site, proj, path = _setup(tmp_path, monkeypatch)
    _first_session(proj, path)
    found = _workspace(proj).warm_lint(path, USER, 1)
    assert found is not None
    out = found[0]
    for plain in (None, [], ["x", "y", "z", "w"], [{}, "a", "b", {}]):
        assert warmedit.from_record(plain, path, out.settings, [], [], {}) is None


# -- the language server: an edit sent at once after the warm open, while the verification runs

BUILD_DELAY = 6.0  # seconds every project build of the server waits (a large library's build)
HOOK = textwrap.dedent("""
    import os
    import time

    delay = float(os.environ.get("TCLINT_TEST_BUILD_DELAY", "0"))
    if delay:
        from tclint.server import workspace

        built = workspace.Root.project

        def project(self):
            if self._project is None:
                time.sleep(delay)
            return built(self)

        workspace.Root.project = project
    """)


def _published(client, uri: str) -> list[tuple[float, int, list]]:
    return [
        (at, m["params"].get("version"), m["params"]["diagnostics"])
        for at, m in client.received
        if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
    ]


async def _verdicts(client, timeout: float) -> list[str]:
    """The server's log lines on a derived edit's full lint, once there is one (or at ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [
            m["params"]["message"]
            for _at, m in client.received
            if m.get("method") == "window/logMessage" and "the edit derived from" in m["params"]["message"]
        ]
        if found or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.1)


def _lsp_shown(diagnostics) -> list[tuple]:
    return sorted((d["code"], d["range"]["start"]["line"], d["message"].split("\n")[0]) for d in diagnostics)


async def test_an_edit_at_once_is_answered_before_the_verification_and_nothing_stale_follows(
    tmp_path, monkeypatch
):
    from tests.helpers.rawlsp import RawClient

    _site, proj, path = _setup(tmp_path, monkeypatch)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOOK)
    env = {
        "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
        "TCLINT_TEST_BUILD_DELAY": str(BUILD_DELAY),
        "PYTHONPATH": os.pathsep.join(p for p in (str(hook), os.environ.get("PYTHONPATH")) if p),
    }
    time.sleep(3.2)  # the server trusts no file changed within the racy-timestamp margin (3 s)
    uri = "file://" + path
    edited = SAME_INTERFACE[1]
    sessions = []
    for session in range(2):
        client = await RawClient.start(cwd=proj, env=env)
        try:
            await client.initialize(
                proj,
                {"textDocument": {"publishDiagnostics": {"relatedInformation": True}}},
                {"settings": {"lintDebounce": 0}},
            )
            first = client.expect(
                lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
            )
            client.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": USER}},
            )
            await asyncio.wait_for(first, 120)
            opened_at = time.perf_counter()
            if session == 1:
                answered = client.expect(
                    lambda m: (
                        m.get("method") == "textDocument/publishDiagnostics"
                        and m["params"].get("version") == 2
                    )
                )
                client.notify(
                    "textDocument/didChange",
                    {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": edited}]},
                )
                await asyncio.wait_for(answered, 120)
                edit_s = time.perf_counter() - opened_at
                # the verification and the edit's full lint behind it done, and what it said of the
                # derived answer (then a moment for anything published late)
                verdicts = await _verdicts(client, 120)
                await asyncio.sleep(1.0)
            sessions.append(_published(client, uri))
        finally:
            await client.shutdown()
    opened = sessions[0][-1][2]
    warm = sessions[1]
    assert _lsp_shown(warm[0][2]) == _lsp_shown(opened)  # the warm open's
    # the edit was answered well before the verification's build was done
    assert edit_s < BUILD_DELAY - 1.5, (edit_s, warm)
    # ... and the full lint behind the verification computed exactly that (nothing sent again)
    assert len(verdicts) == 1 and "confirms" in verdicts[0], verdicts
    # what the last publication says is the edited version's, as a full pass computes it
    scratch = _workspace(proj).lint(path, edited, 2)
    assert scratch.diagnostics != [] and _lsp_shown(warm[-1][2]) != _lsp_shown(opened)
    assert warm[-1][1] == 2
    assert _lsp_shown(warm[-1][2]) == sorted(
        (d.code, d.line - 1, d.message.split("\n")[0]) for d in scratch.diagnostics
    )
    # and nothing of version 1 came after the edit's answer
    first_v2 = next(i for i, (_at, v, _d) in enumerate(warm) if v == 2)
    assert all(v == 2 for _at, v, _d in warm[first_v2:])
