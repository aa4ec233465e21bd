"""A document opened again in a fresh editor session gets its first diagnostics from the record the
last session left (``server/warmopen.py``), with no project built and no library followed: exactly
what ``tclint check --follow-libraries`` and a full lint say; a changed library file, another
project file or the settings make it a miss (the full lint answers)."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest
from tclint.rules import reading
from tclint.rules.config import ConfigResolver
from tclint.rules.engine import Linter
from tclint.server import entries as entries_mod
from tclint.server.workspace import Workspace

from tests.helpers.lintutil import write_tree

LIB = {
    "warmlib/__init__.py": "raise SystemExit('imported: linting must never run library code')\nfrom .layers import Layer\n",
    "warmlib/layers.py": textwrap.dedent("""
        from torch import nn


        class Layer(nn.Module):
            def forward(self, x, labels=None):
                if labels is not None:
                    print("loss")
                return x * x.sum().item()
        """),
}

USER = textwrap.dedent("""
    import torch
    import warmlib
    from helpers import scale

    model = torch.compile(warmlib.Layer())
    model(scale(torch.ones(3)))
    """)

HELPERS = "def scale(x):\n    return x * 2\n"


def _age(folder: str) -> None:
    """Files an hour old: not within the racy-timestamp margin (a real install is older)."""
    old = time.time() - 3600
    for base, _dirs, names in os.walk(folder):
        for name in names:
            os.utime(os.path.join(base, name), (old, old))


def _setup(tmp_path, monkeypatch, user: str = USER) -> tuple[str, str, str]:
    """A site-packages holding warmlib, a project whose ``train.py`` is ``user``, both aged."""
    site = os.path.join(str(tmp_path), "env", "lib", "python3.11", "site-packages")
    write_tree(site, LIB)
    python = os.path.join(str(tmp_path), "env", "bin", "python")
    proj = os.path.join(str(tmp_path), "proj")
    pyproject = f'[tool.tclint]\nfollow-libraries = true\n\n[tool.tclint.probe]\npython = "{python}"\n'
    write_tree(proj, {"train.py": user, "helpers.py": HELPERS, "pyproject.toml": pyproject})
    _age(site)
    _age(proj)
    monkeypatch.setenv("XDG_CACHE_HOME", os.path.join(str(tmp_path), "xdg"))
    # the files were just written (their ctime is now): trusted as a real install's would be
    monkeypatch.setattr(reading, "RACY_MARGIN_NS", 0)
    return site, proj, os.path.join(proj, "train.py")


def _workspace(proj: str) -> Workspace:
    ws = Workspace()
    ws.set_folders([proj])
    return ws


def _full_lint(proj: str, path: str, text: str) -> tuple[list, list, list]:
    """A first session: the full lint, and the record it leaves (as the server's publish does)."""
    ws = _workspace(proj)
    out = ws.lint(path, text, 1)
    root = ws.docs[path].root
    facts = root.current_facts(path)
    project, _cross = root.project()
    entries = entries_mod.compute(path, facts, project)
    targets = entries_mod.targets(facts)
    ws.remember(out, entries, targets)
    return out.diagnostics, entries, targets


def _shown(diags) -> list[tuple]:
    return [
        (
            os.path.basename(d.path),
            d.code,
            d.span.start.line,
            d.span.start.column,
            d.message,
            tuple((os.path.basename(r.path), r.span.start.line, r.message) for r in d.related),
        )
        for d in diags
    ]


def test_a_second_session_opens_from_the_record_as_the_cli_says(tmp_path, monkeypatch):
    _site, proj, path = _setup(tmp_path, monkeypatch)
    diags, entries, targets = _full_lint(proj, path, USER)
    assert [d.code for d in diags] == ["TC312"]

    ws = _workspace(proj)
    found = ws.warm_lint(path, USER, 1)
    assert found is not None
    out, warm_entries, warm_targets, _ranges = found
    root = ws.docs[path].root
    assert root._project is None and path not in root.open  # nothing built, the doc not analysed yet
    assert out.diagnostics == diags and warm_entries == entries and warm_targets == targets
    # the CLI on the same tree (no cache: computed from scratch)
    cli = Linter(ConfigResolver(), cache=None).lint_paths([path])
    assert _shown(out.diagnostics) == _shown(cli.diagnostics)
    # the full lint that follows gives the same, on the same (still fresh) state
    assert ws.lint(path, USER, 1).diagnostics == diags


def test_changes_outside_the_document_are_misses(tmp_path, monkeypatch):
    site, proj, path = _setup(tmp_path, monkeypatch)
    _full_lint(proj, path, USER)
    assert _workspace(proj).warm_lint(path, USER, 1) is not None

    # an edited buffer: another text than the one recorded
    assert _workspace(proj).warm_lint(path, USER + "x = 1\n", 1) is None

    # the installed library changed (the break removed): the record's dependencies fail
    layers = os.path.join(site, "warmlib", "layers.py")
    with open(layers, "a") as fh:
        fh.write("\n\ndef extra():\n    return 1\n")
    _age(site)
    assert _workspace(proj).warm_lint(path, USER, 1) is None
    _full_lint(proj, path, USER)
    assert _workspace(proj).warm_lint(path, USER, 1) is not None

    # another file of the project changed
    helpers = os.path.join(proj, "helpers.py")
    with open(helpers, "a") as fh:
        fh.write("\n\ndef other(x):\n    return x\n")
    _age(proj)
    assert _workspace(proj).warm_lint(path, USER, 1) is None
    _full_lint(proj, path, USER)
    assert _workspace(proj).warm_lint(path, USER, 1) is not None

    # the settings changed
    pyproject = os.path.join(proj, "pyproject.toml")
    with open(pyproject) as fh:
        text = fh.read()
    with open(pyproject, "w") as fh:
        fh.write(text.replace("[tool.tclint]\n", '[tool.tclint]\nignore = ["TC101"]\n'))
    _age(proj)
    assert _workspace(proj).warm_lint(path, USER, 1) is None


def test_a_slow_first_load_of_the_rules_does_not_cost_the_record(tmp_path, monkeypatch):
    """A fresh server imports the rule catalog at its first file's analysis (0.5-0.9 s on a loaded
    machine): that time must not count against the index budget, or the project's other file is
    still queued when the budget ends and the open misses its record (the stop-25 flakiness of
    the two-session LSP test, both profiles)."""
    from tclint.rules import engine, registry
    from tclint.server import workspace as workspace_mod

    _site, proj, path = _setup(tmp_path, monkeypatch)
    diags, _entries, _targets = _full_lint(proj, path, USER)
    rules = registry.all_rules()

    def slow_catalog():
        time.sleep(workspace_mod.FIRST_INDEX_BUDGET + 0.2)
        return rules

    monkeypatch.setattr(engine, "_RULESET", None)  # a fresh process: the catalog not loaded yet
    monkeypatch.setattr(registry, "all_rules", slow_catalog)
    found = _workspace(proj).warm_lint(path, USER, 1)
    assert found is not None and found[0].diagnostics == diags


def test_no_record_while_the_buffer_differs_from_the_file(tmp_path, monkeypatch):
    _site, proj, path = _setup(tmp_path, monkeypatch)
    edited = USER + "print('done')\n"
    _full_lint(proj, path, edited)  # an unsaved buffer: TC312 reads the file, so nothing is stored
    assert _workspace(proj).warm_lint(path, edited, 1) is None
    assert _workspace(proj).warm_lint(path, USER, 1) is None


async def _logged(client, part: str, timeout: float = 10.0) -> list[str]:
    """The client's log messages once one holds ``part`` (or at ``timeout``).  The server sends
    a log line one event-loop turn after it is written (``logbridge``), so a publication made
    right after it (the warm open's) can reach a push client first: reading the log at the
    publication was the cause of the vscode case's flakiness at stop 25."""
    import asyncio

    deadline = time.monotonic() + timeout
    while True:
        logs = [m.message for m in client.log_messages]
        if any(part in m for m in logs) or time.monotonic() > deadline:
            return logs
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("profile", ["vscode", "neovim-0.11"])  # push and pull diagnostics
async def test_a_fresh_server_session_publishes_the_last_sessions_result(
    start, tmp_path, monkeypatch, profile
):
    from tests.helpers.lsputil import diagnostics, open_doc

    _site, proj, path = _setup(tmp_path, monkeypatch)
    env = {"XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}
    time.sleep(3.2)  # the server trusts no file changed within the racy-timestamp margin (3 s)
    shown = []
    for _session in range(2):
        client = await start(profile, Path(proj), env=env)
        uri = open_doc(client, Path(path))
        shown.append(await diagnostics(client, uri, lambda d: len(d) == 1, timeout=120))
        logs = await _logged(client, "warm open", timeout=10.0 if _session else 0.0)
        await client.shutdown_session()
    assert [(d.code, d.range, d.message) for d in shown[1]] == [
        (d.code, d.range, d.message) for d in shown[0]
    ]
    assert [d.code for d in shown[0]] == ["TC312"]
    # the second session answered from the record (the one folder of tclint's code: an edit of
    # tclint's own modules between the sessions would make it a miss)
    records = os.path.join(os.environ["XDG_CACHE_HOME"], "tclint", "libraries", "opens")
    assert any("warm open" in m for m in logs), (os.listdir(records), logs)


def test_records_in_the_projects_cache_are_tclints_own(tmp_path, monkeypatch):
    from tclint.rules import cachedir
    from tclint.rules.cache import Cache

    _site, proj, path = _setup(tmp_path, monkeypatch)
    directory = os.path.join(proj, ".tclint_cache")
    Cache(directory).flush()  # the folder a `tclint check` makes: the server then keeps records there
    _full_lint(proj, path, USER)
    assert os.listdir(os.path.join(directory, "opens"))
    assert _workspace(proj).warm_lint(path, USER, 1) is not None
    assert cachedir.foreign_entries(directory) == []
    assert cachedir.clean(directory) == [] and not os.path.exists(directory)  # `tclint clean` removes them


def test_a_library_file_another_workspace_parsed_does_not_stop_records(tmp_path, monkeypatch):
    """One server process, two workspace folders with their own environments: a library file
    the first one's judgement parsed changes afterwards; the second folder's record is still
    written (its inputs do not include the first folder's files) and read back."""
    site_a, proj_a, path_a = _setup(tmp_path / "a", monkeypatch)
    _full_lint(proj_a, path_a, USER)
    layers = os.path.join(site_a, "warmlib", "layers.py")
    with open(layers, "a") as fh:
        fh.write("# edited\n")
    _age(site_a)
    _site_b, proj_b, path_b = _setup(tmp_path / "b", monkeypatch)
    _full_lint(proj_b, path_b, USER)
    assert _workspace(proj_b).warm_lint(path_b, USER, 1) is not None


def test_a_warm_open_builds_no_line_table_of_a_library_file(tmp_path, monkeypatch):
    """The record holds the LSP ranges (every encoding) of the related locations in the library
    files its dependencies pin: converting the warm open's diagnostics reads none of those files
    (``Lines.of`` of them was ~10 ms of a second-session open on hf_user.py), and gives the same
    JSON as converting them from the files."""
    from tclint.server import convert, positions
    from tclint.server.settings import EditorSettings

    site, proj, path = _setup(tmp_path, monkeypatch)
    ws = _workspace(proj)
    out = ws.lint(path, USER, 1)
    root = ws.docs[path].root
    facts = root.current_facts(path)
    project, _cross = root.project()
    ws.remember(
        out, entries_mod.compute(path, facts, project), entries_mod.targets(facts), convert.OtherFiles().lines
    )

    found = _workspace(proj).warm_lint(path, USER, 1)
    assert found is not None
    warm, _entries, _targets, ranges = found
    layers = os.path.join(site, "warmlib", "layers.py")
    assert {p for p, *_rest in ranges} == {layers}
    features = convert.ClientFeatures(related_information=True)

    def body(known, encoding):
        conv = convert.Converter(
            positions.Lines.of(USER),
            encoding,
            EditorSettings(),
            warm.settings,
            features,
            convert.OtherFiles(),
            {},
            known_ranges=known,
        )
        return conv.convert_all(warm.diagnostics, path)

    built: list[str] = []
    real = positions.Lines.of.__func__
    monkeypatch.setattr(
        positions.Lines, "of", classmethod(lambda cls, text: built.append(text) or real(cls, text))
    )
    for encoding in (positions.UTF8, positions.UTF16, positions.UTF32):
        built.clear()
        warm_body = body(ranges, encoding)
        assert built == [USER]  # the document's own table only
        assert '"relatedInformation"' in warm_body and "layers.py" in warm_body
        built.clear()
        assert body(None, encoding) == warm_body  # converted from the file: the same ranges
        assert len(built) == 2 and "class Layer" in built[1]  # ... reading layers.py


def test_the_settings_in_force_again_do_not_reindex_the_project(tmp_path, monkeypatch):
    """The client's answer to ``workspace/configuration`` repeating the settings the server
    already has (after a warm open, while the full lint runs) re-read every file of the project
    a second time; the same settings now change nothing, other settings still reset the root."""
    from tclint.server.settings import EditorSettings

    _site, proj, path = _setup(tmp_path, monkeypatch)
    ws = _workspace(proj)
    ws.set_editor({"": EditorSettings()})
    ws.lint(path, USER, 1)
    root = ws.docs[path].root
    assert root.discovered and root.disk
    assert ws.set_editor({"": EditorSettings()}) is False
    assert root.discovered and root.disk  # kept: not indexed again
    assert ws.set_editor({"": EditorSettings(unsafe_fixes=True)}) is True
    assert not root.discovered and not root.disk
