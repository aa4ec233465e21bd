"""The language server's incremental project pass equals a from-scratch pass, edit after edit.

A copy of part of a real tree (``torch/nn/modules`` of the installed torch, every ``forward``
assumed compiled, plus a script compiling a Transformer) is the workspace.  Random edits of random
files -- a statement inserted or deleted (lines move), a function renamed, a compile site added,
a call broken, a finding added without moving a line (the interface kept: the project is reused)
-- go to the server's ``Workspace`` as open buffers; after each one, every file's diagnostics and
the project's regions are compared with a pass computed from scratch over the same texts (fresh
``Project``, ``argflow.refine`` walking files without reuse, ``project_diagnostics``,
``diagnose_file``).  Edits that do not parse are skipped (the server keeps the last text that
parsed, which the from-scratch pass does not model).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import random
import re
import shutil
from typing import Any

import pytest
from tclint.rules import argflow, relocate
from tclint.rules.discovery import module_for
from tclint.rules.engine import SourceText, analyze_source, diagnose_file, project_diagnostics
from tclint.rules.project import Project
from tclint.server import entries as entries_mod
from tclint.server.workspace import Workspace

MODULES = (
    "container.py",
    "linear.py",
    "normalization.py",
    "dropout.py",
    "transformer.py",
    "flatten.py",
    "distance.py",
    "pixelshuffle.py",
    "utils.py",
)
TRAIN = """import torch
from torch.nn.modules.transformer import Transformer, TransformerEncoderLayer
from torch.nn.modules.linear import Linear

model = torch.compile(Transformer(d_model=16, nhead=2))
layer = TransformerEncoderLayer(16, 2)
"""
# A user's model on top of it, where the cross-file parts matter: helpers in another file whose
# parameter types flow in from the compiled code (argflow seeds) and whose return types decide a
# branch, blocks called from a loop (a break there drops the caller's frame), fullgraph=True.
MODEL = """import torch
from torch.nn.modules.linear import Linear
from helpers import gate, scale_of


class Block(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = Linear(dim, dim)

    def forward(self, x):
        h = self.lin(x)
        g = gate(torch.relu(h))
        out = h * g
        return out


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block(8)

    def forward(self, x):
        for _ in range(4):
            x = self.block(x)
        n = x.sum().item()
        return x * n


class Head(torch.nn.Module):
    def forward(self, x):
        s = scale_of(torch.ones(4))
        if s > 0:
            x = x * 2
        return x


net = torch.compile(Net())
head = torch.compile(Head(), fullgraph=True)
"""
HELPERS = """import torch


def gate(h):
    y = h.mean(-1)
    if h.sum() > 0:
        y = y * 2
    return y


def scale_of(h):
    m = h * 2
    return m
"""
# Each invalidation path taken once, in order, before the random edits (file, old, new):
SCRIPTED = (
    # only candidates change (the project is kept): a break in a block called from Net's loop drops
    # Net.forward's frame, which shadows its TC101 (per-project results must be recomputed)
    (
        "model.py",
        "        g = gate(torch.relu(h))\n",
        "        g = gate(torch.relu(h)); v = h.sum().item()\n",
    ),
    # only candidates change in a file walked again with its parameters' types (gate's h): the
    # project is kept, the file's re-walk is replayed (its first walk has no TC102 on `h.sum() > 0`)
    ("helpers.py", "    y = h.mean(-1)\n", "    y = h.mean(-1); print('edited')\n"),
    # a return type changes: model.py, unchanged, is walked with another answer about scale_of
    ("helpers.py", "    return m\n", "    return 0\n"),
    ("helpers.py", "    return 0\n", "    return m\n"),
    # an argument changes: helpers.py, unchanged, is walked with other parameter types
    ("model.py", "        s = scale_of(torch.ones(4))\n", "        s = scale_of(0)\n"),
    (
        "model.py",
        "        g = gate(torch.relu(h)); v = h.sum().item()\n",
        "        g = gate(torch.relu(h))\n",
    ),
)
STEPS = 40


def _torch_nn_modules() -> str | None:
    spec = importlib.util.find_spec("torch")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = os.path.join(list(spec.submodule_search_locations)[0], "nn", "modules")
    return folder if all(os.path.isfile(os.path.join(folder, m)) for m in MODULES) else None


@pytest.fixture
def tree(tmp_path):
    source = _torch_nn_modules()
    if source is None:
        pytest.skip("torch's sources are not installed")
    pkg = tmp_path / "torch" / "nn" / "modules"
    pkg.mkdir(parents=True)
    (tmp_path / "torch" / "__init__.py").write_text("")
    (tmp_path / "torch" / "nn" / "__init__.py").write_text("")
    shutil.copy(os.path.join(source, "__init__.py"), pkg / "__init__.py")
    for name in MODULES:
        shutil.copy(os.path.join(source, name), pkg / name)
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "t"\n\n[tool.tclint]\nassume-compiled = ["torch.nn.modules.*:*.forward"]\n'
    )
    return tmp_path


def _files(root) -> dict[str, str]:
    out = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as fh:
                    out[path] = fh.read()
    return dict(sorted(out.items()))


_FIRST: dict[tuple[str, str], object] = {}


def _first_walk(path: str, text: str, predicates):
    """A file's own facts (a pure function of its text: computed once per text)."""
    key = (path, text)
    if key not in _FIRST:
        module, is_package, root = module_for(path)
        _FIRST[key] = analyze_source(SourceText(path, text), module, is_package, root, predicates)
    return _FIRST[key]


def from_scratch(
    texts: dict[str, str], ws_root, entries_of: dict[str, list] | None = None
) -> tuple[dict[str, list], dict[str, tuple]]:
    """Every file's diagnostics and the regions, by a project pass that reuses nothing;
    ``entries_of``: filled with the code-lens entries of the files it names (its keys)."""
    settings = ws_root.root_settings()
    facts = [_first_walk(p, t, ws_root.settings_for(p).compiling_predicates) for p, t in texts.items()]
    project = Project(facts, settings)
    project.build()

    def reanalyze(ff, seeds, returns_of):
        predicates = ws_root.settings_for(ff.path).compiling_predicates
        return analyze_source(
            SourceText(ff.path, texts[ff.path]),
            ff.module,
            ff.is_package,
            ff.root,
            predicates,
            seeds,
            returns_of,
        )

    project = argflow.refine(project, reanalyze)
    cross = project_diagnostics(project)
    rewalked = project.memo.get(argflow.REWALKED, ())
    out = {}
    for ff in facts:
        mine = project.files[ff.path] if ff.path in rewalked else ff
        out[ff.path] = diagnose_file(
            mine, project, cross, ws_root.settings_for(ff.path), SourceText(ff.path, texts[ff.path])
        )
        if entries_of is not None and ff.path in entries_of:
            entries_of[ff.path] = entries_mod.compute(ff.path, ff, project)
    return out, _regions(project)


def _regions(project: Project) -> dict[str, tuple]:
    return {
        key: (
            project.chain_text(r),
            r.site.id if r.site else None,
            r.multiplier,
            r.loop_caller,
            r.fullgraph,
            r.depth,
        )
        for key, r in project.regions.items()
    }


def incremental(
    ws: Workspace, texts: dict[str, str], root_path: str
) -> tuple[dict[str, list], dict[str, tuple]]:
    root = ws.roots[root_path]
    out = {path: root.diagnostics(path, SourceText(path, text))[0] for path, text in texts.items()}
    return out, _moved_regions(
        _regions(root.project()[0]), {p: m[2] for p, m in getattr(root, "_moved", {}).items()}
    )


def _moved_regions(regions: dict[str, tuple], maps: dict[str, dict[int, int]]) -> dict[str, tuple]:
    """Regions of a project kept across line-moving edits (``Root.set_open``: it holds the lines
    of the texts it was built on) carried to the buffers' lines (``maps``: old line -> new)."""
    out = {}
    for key, (text, site, multiplier, caller, fullgraph, depth) in regions.items():
        if caller is not None and caller[1] in maps:
            caller = (caller[0], caller[1], maps[caller[1]][caller[2]], *caller[3:])
        out[key] = (relocate.move(text, maps), site, multiplier, caller, fullgraph, depth)
    return out


# -- the edits -----------------------------------------------------------------------------------
_DEF = re.compile(r"^(\s*)def (\w+)\(")
_SIMPLE = re.compile(r"^(\s+)([\w.]+) = [^\n]*[\w)\]]$")  # `    name = value` on one line


def _body_lines(lines: list[str]) -> list[int]:
    """Lines holding a one-line assignment inside a function body, followed by a line of the same
    indentation (safe to duplicate, delete or extend)."""
    out = []
    for i, line in enumerate(lines[:-1]):
        m = _SIMPLE.match(line)
        if (
            m
            and len(m.group(1)) >= 8
            and lines[i + 1].startswith(m.group(1))
            and not lines[i + 1][len(m.group(1))].isspace()
        ):
            if not line.rstrip().endswith(("(", ",", "\\")) and line.count("(") == line.count(")"):
                out.append(i)
    return out


def edit(texts: dict[str, str], paths: list[str], rng: random.Random) -> tuple[str, str, str]:
    """(path, kind, new text) of one random edit of a random file."""
    kind = rng.choice(
        [
            "insert",
            "delete",
            "rename",
            "compile",
            "break-call",
            "same-line",
            "same-line",
            "constant-argument",
            "constant-return",
        ]
    )
    if kind in ("insert", "delete", "same-line"):
        paths = [p for p in paths if _body_lines(texts[p].split("\n"))] or paths
    user = [p for p in paths if os.path.basename(p) in ("model.py", "helpers.py")]
    path = rng.choice(user if user and rng.random() < 0.5 else paths)
    return (path, *_edit(texts[path], kind, rng))


_CALL_ARG = re.compile(r"\b(\w+)\((\w+)\)")  # f(x): a call with one name argument
_RETURN = re.compile(r"^(\s+)return \S.*$")


def _edit(text: str, kind: str, rng: random.Random) -> tuple[str, str]:
    lines = text.split("\n")
    body = _body_lines(lines)
    if kind in ("insert", "delete", "same-line") and body:
        i = rng.choice(body)
        indent = _SIMPLE.match(lines[i]).group(1)
        if kind == "insert":
            lines.insert(i + 1, f"{indent}print('edited', {_SIMPLE.match(lines[i]).group(2)})")
        elif kind == "delete":
            del lines[i + 1 if _SIMPLE.match(lines[i + 1] or "") else i]
        else:  # a finding on the same line: nothing moves, only candidates change
            lines[i] = f"{lines[i]}; print('edited')"
        return kind, "\n".join(lines)
    defs = [i for i, line in enumerate(lines) if _DEF.match(line)]
    if kind == "rename" and defs:
        i = rng.choice(defs)
        lines[i] = _DEF.sub(lambda m: f"{m.group(1)}def {m.group(2)}_renamed(", lines[i], count=1)
        return kind, "\n".join(lines)
    if kind == "constant-argument":  # same line, another kind of argument: the callee's seeds change
        found = [i for i, line in enumerate(lines) if _CALL_ARG.search(line) and not _DEF.match(line)]
        if found:
            i = rng.choice(found)
            lines[i] = _CALL_ARG.sub(lambda m: f"{m.group(1)}(0)", lines[i], count=1)
            return kind, "\n".join(lines)
    if kind == "constant-return":  # same line, another return type: the callers' walks change
        found = [i for i, line in enumerate(lines) if _RETURN.match(line)]
        if found:
            i = rng.choice(found)
            lines[i] = f"{_RETURN.match(lines[i]).group(1)}return 0"
            return kind, "\n".join(lines)
    if kind == "add-function":  # a module-level function appended (nothing reaches it, or something)
        return kind, text.rstrip("\n") + "\n\n\n" + _added_function(text, rng) + "\n"
    calls = [i for i, line in enumerate(lines) if re.search(r"self\.\w+\(", line) and not _DEF.match(line)]
    if kind == "break-call" and calls:
        i = rng.choice(calls)
        lines[i] = re.sub(r"self\.(\w+)\(", r"self.\1_broken(", lines[i], count=1)
        return kind, "\n".join(lines)
    classes = re.findall(r"^class (\w+)\(", text, re.M)
    target = rng.choice(classes) if classes else "object"
    return "compile", text.rstrip("\n") + f"\n\nimport torch\n_compiled = torch.compile({target}())\n"


def _added_function(text: str, rng: random.Random) -> str:
    """A new module-level function: most reach nothing (a body with findings, a nested helper),
    some are reached or reach into the project (called by a later edit's name, a call of a
    function of the file, a decorator, a compile marker, a name given to `forward`, which
    assume-compiled patterns match)."""
    name = f"added_{rng.randrange(10**6)}"
    defs = re.findall(r"^def (\w+)\(", text, re.M)
    shape = rng.choice(["plain", "plain", "finding", "nested", "calls", "decorated", "marker", "known-name"])
    if shape == "known-name":  # a name other files call or import (gate, scale_of) or a root's
        name = rng.choice(["gate", "scale_of", "forward"])
    if shape == "calls" and defs:
        return f"def {name}(x):\n    return {rng.choice(defs)}(x)"
    if shape == "decorated":
        return f"@staticmethod\ndef {name}(x):\n    return x"
    if shape == "marker":
        return f"def {name}(x):  # tclint: compiled\n    if x.sum() > 0:\n        return x\n    return -x"
    if shape == "finding":
        return f"def {name}(x):\n    n = x.sum().item()\n    print(n)\n    return x * n"
    if shape == "nested":
        return f"def {name}(x):\n    def inner(y):\n        return y + 1\n\n    return inner(x)"
    return f"def {name}(x):\n    y = x + 1\n    return y"


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def _indexed(tree) -> tuple[Workspace, dict[str, str], list[str], Any]:
    """A workspace on ``tree`` with its first non-package file open and the folder indexed: the
    workspace, every file's text, the paths edits pick from, and the open file's root."""
    ws = Workspace()
    ws.set_folders([str(tree)])
    texts = _files(tree)
    paths = [p for p in texts if not p.endswith("__init__.py")]
    ws.lint(paths[0], texts[paths[0]], 1)
    root = ws.docs[paths[0]].root
    while root.index_step(5.0):
        pass
    return ws, texts, paths, root


def _counting_builds(monkeypatch) -> list[int]:
    """``Project.build`` counted from now on: ``[builds so far]``."""
    builds = [0]
    build = Project.build

    def counted(self, *args, **kwargs):
        builds[0] += 1
        return build(self, *args, **kwargs)

    monkeypatch.setattr(Project, "build", counted)
    return builds


def run_session(tree, seed: int, steps: int = STEPS) -> dict[str, int]:
    """Edit, compare, repeat; how many edits of each kind were compared, and how many of them the
    workspace answered from the project it already had (the ``project_delta`` path)."""
    rng = random.Random(seed)
    ws, texts, paths, root = _indexed(tree)
    counts: dict[str, int] = {}
    version = 2
    by_name = {os.path.basename(p): p for p in paths}
    for n in range(len(SCRIPTED) + steps):
        if n < len(SCRIPTED):
            name, old, replacement = SCRIPTED[n]
            path = by_name[name]
            assert old in texts[path], old
            kind, new = "scripted", texts[path].replace(old, replacement, 1)
        else:
            path, kind, new = edit(texts, paths, rng)
        if not _parses(new):
            continue
        texts[path] = new
        before = root._project
        ws.lint(path, new, version)
        version += 1
        reused = root._project is before and before is not None
        counts[kind] = counts.get(kind, 0) + 1
        if reused:
            counts["reused"] = counts.get("reused", 0) + 1
        want, want_regions = from_scratch(texts, root)
        got, got_regions = incremental(ws, texts, root.path)
        assert got_regions == want_regions, f"regions differ after {kind} in {os.path.basename(path)}"
        for p in texts:
            assert got[p] == want[p], (
                f"{os.path.basename(p)}: diagnostics differ after {kind} in {os.path.basename(path)}"
            )
    return counts


def test_incremental_project_equals_from_scratch(tree):
    counts = run_session(tree, seed=20)
    # the session compared both paths: projects reused (interface kept) and rebuilt
    assert counts.get("reused", 0) >= 2, counts
    assert sum(v for k, v in counts.items() if k != "reused") - counts.get("reused", 0) >= 4, counts


def run_additions(tree, seed: int, steps: int, monkeypatch) -> dict[str, int]:
    """Functions appended to random files (most reach nothing; some are named elsewhere, call the
    project, are decorated or roots), with edits that keep the interface or change it between
    them, each compared with a from-scratch pass like ``run_session``; how many functions were
    added, and how many of those the workspace answered without building a project."""
    rng = random.Random(seed)
    ws, texts, paths, root = _indexed(tree)
    builds = _counting_builds(monkeypatch)
    counts = {"added": 0, "kept": 0}
    version = 2
    for _n in range(steps):
        path = rng.choice(paths)
        kind = rng.choices(["add-function", "same-line", "rename", "constant-return"], [6, 2, 1, 1])[0]
        kind, new = _edit(texts[path], kind, rng)
        if not _parses(new) or new == texts[path]:
            continue
        texts[path] = new
        root.diagnostics(path, SourceText(path, new))  # the project of the edit before, built
        before = builds[0]
        ws.lint(path, new, version)
        version += 1
        if kind == "add-function":
            counts["added"] += 1
            counts["kept"] += builds[0] == before
        want, want_regions = from_scratch(texts, root)
        got, got_regions = incremental(ws, texts, root.path)
        assert got_regions == want_regions, f"regions differ after {kind} in {os.path.basename(path)}"
        for p in texts:
            assert got[p] == want[p], f"{os.path.basename(p)}: diagnostics differ after {kind}"
    return counts


def test_functions_added_where_nothing_reaches_keep_the_project_and_equal_from_scratch(tree, monkeypatch):
    """A module-level function appended that no other text names, that is no root and calls
    nothing of the project (``project_delta.added_functions``) keeps the project (its facts
    swapped in, no ``Project.build``); one that is named elsewhere, calls the project, is
    decorated or compiled builds it again; every file's diagnostics and the regions equal a
    from-scratch pass after each edit."""
    counts = run_additions(tree, seed=2020, steps=30, monkeypatch=monkeypatch)
    assert counts["added"] >= 12, counts
    assert counts["kept"] >= counts["added"] // 3, counts
    assert counts["kept"] < counts["added"], counts  # (some additions are reached: rebuilt)


def _plain_insert(text: str, rng: random.Random) -> str:
    """A line that holds no facts (a comment, a constant assignment, a blank line) inserted in a
    body: the lines below move, nothing else changes (as Enter and ``t = 1`` in an editor)."""
    lines = text.split("\n")
    i = rng.choice(_body_lines(lines))
    indent = _SIMPLE.match(lines[i]).group(1)
    lines.insert(i + 1, rng.choice([f"{indent}# moved", f"{indent}moved_flag = 1", ""]))
    return "\n".join(lines)


def run_moves(tree, seed: int, steps: int) -> dict[str, int]:
    """Line-moving edits (a line holding no facts inserted in a body of one of four open files,
    often undone, and edits that keep lines between them), each compared with a from-scratch
    pass like ``run_session``; how many moved lines, and how many of those the workspace answered
    from the project it already had."""
    rng = random.Random(seed)
    ws = Workspace()
    ws.set_folders([str(tree)])
    texts = _files(tree)
    names = ("model.py", "helpers.py", "linear.py", "container.py")
    paths = [p for p in texts if os.path.basename(p) in names and _body_lines(texts[p].split("\n"))]
    for version, path in enumerate(paths, start=1):  # open: the buffers' first texts are known
        ws.lint(path, texts[path], version)
        root = ws.docs[path].root
        while root.index_step(5.0):
            pass
    counts = {"moved": 0, "kept": 0, "undone": 0}
    version = 10
    undo: list[tuple[str, str]] = []
    for _n in range(steps):
        if undo and rng.random() < 0.35:
            path, new = undo.pop()
            counts["undone"] += 1
        else:
            path = rng.choice(paths)
            if rng.random() < 0.25:
                _kind, new = _edit(texts[path], "same-line", rng)
            else:
                undo.append((path, texts[path]))
                new = _plain_insert(texts[path], rng)
        if not _parses(new):
            continue
        moved = texts[path].count("\n") != new.count("\n")
        texts[path] = new
        before = root._project
        ws.lint(path, new, version)
        version += 1
        if moved:
            counts["moved"] += 1
            counts["kept"] += root._project is before and before is not None
        want_entries: dict[str, list] = dict.fromkeys(paths)
        want, want_regions = from_scratch(texts, root, want_entries)
        got, got_regions = incremental(ws, texts, root.path)
        assert got_regions == want_regions, f"regions differ after an edit of {os.path.basename(path)}"
        for p in paths:  # code lenses and hovers (``Root.entries``) at the buffers' lines too
            assert root.entries(p, root.current_facts(p)) == want_entries[p], os.path.basename(p)
        for p in texts:
            assert got[p] == want[p], (
                f"{os.path.basename(p)}: diagnostics differ after {os.path.basename(path)}"
            )
    return counts


def test_line_moving_edits_keep_the_project_and_equal_from_scratch(tree, monkeypatch):
    """An edit that moves lines keeps the project (its positions carried through line maps,
    ``Root.set_open``) and gives every file the diagnostics of a from-scratch pass.  The cost
    gate is forced open (in a tree this small a rebuild may cost less than the moves)."""
    from tclint.server import workspace as ws_mod

    monkeypatch.setattr(ws_mod.Root, "_carry_pays", lambda self, path, count=False: True)
    counts = run_moves(tree, seed=26, steps=30)
    assert counts["moved"] >= 10 and counts["undone"] >= 3, counts
    assert counts["kept"] >= 0.8 * counts["moved"], counts


def _enter_in_helpers(tree, monkeypatch, carry: bool | None, build_s: float | None = None):
    """``helpers.py`` (walked again with its parameters' types) open with the rest of ``tree``,
    then a blank line inserted in ``gate`` (Enter): the workspace's root, the number of
    ``Project.build`` calls and of whole-file moves (``relocate.move`` of a ``FileFacts``) that
    edit made, and its diagnostics with a from-scratch pass's.  ``carry``: the cost gate
    (``Root._carry_pays``) forced either way, None to leave it to the measures; ``build_s``:
    the last build's measured seconds, as the gate reads them."""
    from tclint.rules.facts import FileFacts
    from tclint.server import workspace as ws_mod

    ws = Workspace()
    ws.set_folders([str(tree)])
    texts = _files(tree)
    path = next(p for p in texts if os.path.basename(p) == "helpers.py")
    ws.lint(path, texts[path], 1)
    root = ws.docs[path].root
    while root.index_step(5.0):
        pass
    root.diagnostics(path, SourceText(path, texts[path]))
    if carry is not None:
        monkeypatch.setattr(ws_mod.Root, "_carry_pays", lambda self, path, count=False: carry, raising=False)
    if build_s is not None:
        root._build_s = build_s
    counts = {"build": 0, "move": 0}
    build, move = Project.build, relocate.move

    def counted_build(self, *args, **kwargs):
        counts["build"] += 1
        return build(self, *args, **kwargs)

    def counted_move(value, *args, **kwargs):
        counts["move"] += isinstance(value, FileFacts)
        return move(value, *args, **kwargs)

    monkeypatch.setattr(Project, "build", counted_build)
    monkeypatch.setattr(relocate, "move", counted_move)
    texts[path] = texts[path].replace("    y = h.mean(-1)\n", "    y = h.mean(-1)\n\n")
    ws.lint(path, texts[path], 2)
    got = {p: root.diagnostics(p, SourceText(p, t))[0] for p, t in texts.items()}
    monkeypatch.setattr(Project, "build", build)
    monkeypatch.setattr(relocate, "move", move)
    want, _regions = from_scratch(texts, root)
    return root, counts, got, want


def test_a_carried_line_moving_edit_moves_the_file_once_each_way(tree, monkeypatch):
    """Carried, an Enter moves the buffer's facts back and its re-walk back (``CARRIED_MOVES``),
    and the file's diagnostics read that re-walk as it was walked, on the buffer's lines
    (``Root._walked``), instead of moving the project's copy forward again (4 moves before)."""
    from tclint.server import workspace as ws_mod

    root, counts, got, want = _enter_in_helpers(tree, monkeypatch, carry=True)
    assert root._moved and counts["build"] == 0, counts  # carried: the project kept
    assert counts["move"] == 2 == getattr(ws_mod, "CARRIED_MOVES", 2), counts
    assert got == want


def test_a_line_moving_edit_is_rebuilt_when_the_build_is_cheaper(tree, monkeypatch):
    """The gate (``Root._carry_pays``): an Enter whose moves would cost more than the project's
    last ``Project.build`` builds the project again; a cheaper one is carried.  Both equal a
    from-scratch pass."""
    # the last build measured as free: any move costs more, the project is built again
    root, counts, got, want = _enter_in_helpers(tree, monkeypatch, carry=None, build_s=0.0)
    assert counts["build"] >= 1 and not root._moved, counts  # (the refinement builds its rounds too)
    assert counts["move"] == 1, counts  # (the move that measured it)
    assert got == want
    # measured as slow: carried
    root, counts, got, want = _enter_in_helpers(tree, monkeypatch, carry=None, build_s=1e9)
    assert counts["build"] == 0 and root._moved, counts
    assert got == want


def run_undos(tree, seed: int, steps: int, monkeypatch) -> dict[str, int]:
    """Edits that change a file's interface (a return type, a renamed function, a broken call, a
    compile site added, a constant argument) in random files, each undone at once or after an
    edit keeping the interface (sometimes redone), every edit compared with a from-scratch pass
    like ``run_session``; how many edits went back to an interface the project before had, and
    how many of those the workspace answered without building a project (``Root._change``)."""
    rng = random.Random(seed)
    ws, texts, paths, root = _indexed(tree)
    builds = _counting_builds(monkeypatch)
    counts = {"back": 0, "taken back": 0}
    version = 2
    kinds = ["constant-return", "rename", "break-call", "compile", "constant-argument"]
    for _n in range(steps):
        path = rng.choice(paths)
        kind = rng.choice(kinds)
        _kind, changed = _edit(texts[path], kind, rng)
        original = texts[path]
        sequence = [(changed, False)]
        if rng.random() < 0.4:  # then an edit that keeps the interface (a finding on the same line)
            sequence.append((_edit(changed, "same-line", rng)[1], False))
        sequence.append((original, True))  # undone
        if rng.random() < 0.3:
            sequence += [(changed, True), (original, True)]  # redone, undone again
        for new, back in sequence:
            if not _parses(new) or new == texts[path]:
                continue
            texts[path] = new
            before = builds[0]
            ws.lint(path, new, version)  # (its diagnostics: the project built or taken back)
            version += 1
            if back:
                counts["back"] += 1
                counts["taken back"] += builds[0] == before
            want, want_regions = from_scratch(texts, root)
            got, got_regions = incremental(ws, texts, root.path)
            assert got_regions == want_regions, f"regions differ after {kind} in {os.path.basename(path)}"
            for p in texts:
                assert got[p] == want[p], f"{os.path.basename(p)}: diagnostics differ after {kind}"
    return counts


def test_undoing_an_interface_change_takes_the_project_back_and_equals_from_scratch(tree, monkeypatch):
    """An edit that changes a file's interface builds the project again; undoing it (or redoing
    it) goes back to the interface of the project it left, which is taken back without a build
    (``Root._change``: the buffers' facts swapped in), and every file's diagnostics and the
    regions equal a from-scratch pass after each edit."""
    counts = run_undos(tree, seed=27, steps=12, monkeypatch=monkeypatch)
    assert counts["back"] >= 10, counts
    assert counts["taken back"] >= 0.8 * counts["back"], counts
