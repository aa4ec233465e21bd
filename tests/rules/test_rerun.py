"""A re-run after edits that keep every changed file's interface (``tclint.rules.rerun``) derives
only those files' diagnostics again, and gives exactly what a from-scratch run gives: random
edits of real trees (some keep the interface, some do not), every output format, configuration
and tool changes, damaged or missing state."""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys

import pytest
from tclint.rules import reading, rerun
from tclint.rules.cache import Cache
from tclint.rules.config import ConfigResolver
from tclint.rules.engine import Linter
from tclint.rules.report.json_ import to_dict

from tests.helpers.lintutil import write_tree

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def hits(monkeypatch):
    """How many runs the re-run path answered (a list: one bool per run that tried it)."""
    seen: list[bool] = []
    original = rerun.rerun

    def counting(*args, **kwargs):
        found = original(*args, **kwargs)
        seen.append(found is not None)
        return found

    monkeypatch.setattr(rerun, "rerun", counting)
    monkeypatch.setattr(reading, "RACY_MARGIN_NS", 0)  # trust the stat table as on a real tree
    return seen


def lint(tree: str, cache_dir: str | None, overrides=None, paths=(".",)) -> list[dict]:
    cwd = os.getcwd()
    os.chdir(tree)
    try:
        cache = Cache(cache_dir) if cache_dir else None
        result = Linter(ConfigResolver(None, overrides), cache, jobs=1).lint_paths(list(paths))
        if cache is not None:
            cache.flush()
        return [to_dict(d) for d in result.diagnostics]
    finally:
        os.chdir(cwd)


# a tree where candidates reach other files: a break in a block called from a loop drops the
# caller's frame (engine.caller_drops), a fullgraph site over a helper (TC307), an int attribute
# bumped inside a compiled region (the variant analysis)
CROSS = {
    "pkg/__init__.py": "",
    "pkg/blocks.py": """\
import torch


class Block(torch.nn.Module):
    def forward(self, x):
        s = x.sum()
        if s > 0:
            return x
        return -x
""",
    "pkg/model.py": """\
import torch
from pkg.blocks import Block
from pkg.util import helper


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block() for _ in range(4)])
        self.calls = 0

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        self.calls += 1
        print(x)
        return helper(x)


model = torch.compile(Model())
fast = torch.compile(helper, fullgraph=True)
""",
    "pkg/util.py": """\
import torch


def helper(x):
    y = x * 2
    return y
""",
}

# edits that keep the line count: (pattern, replacement) tried on a random line
SWAPS = [
    (r"\.sum\(\)", ".abs()"),
    (r"\.abs\(\)", ".sum()"),
    (r"s > 0", "s < 1"),
    (r"x \* 2", "x.item()"),
    (r"x\.item\(\)", "x * 2"),
    (r"\.item\(\)", ".tolist()"),
    (r"\.tolist\(\)", ".item()"),
    (r"print\(x\)", "str(x) "),
    (r"str\(x\) ", "print(x)"),
    (r"< 0\.05", "> 0.25"),
    (r"\.any\(\)", ".all()"),
    (r"logger\.warning", "logger.debug"),
]


def _edit(rng: random.Random, path: str) -> str:
    """One random edit of ``path``; returns its kind."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    lines = text.splitlines(keepends=True)
    kind = rng.choice(["append", "swap", "swap", "noqa", "insert", "rename"])
    if kind == "swap":
        order = list(range(len(lines)))
        rng.shuffle(order)
        for i in order:
            for pattern, replacement in rng.sample(SWAPS, len(SWAPS)):
                if re.search(pattern, lines[i]):
                    lines[i] = re.sub(pattern, replacement, lines[i], count=1)
                    break
            else:
                continue
            break
        else:
            kind = "append"
    if kind == "noqa":
        code = [
            i for i, line in enumerate(lines) if line.strip() and not line.rstrip().endswith(("\\", ",", "("))
        ]
        if code:
            i = rng.choice(code)
            lines[i] = lines[i].rstrip("\n") + "  # noqa\n"
        else:
            kind = "append"
    if kind == "insert":  # moves the lines below: positions change, the full pass runs
        lines.insert(rng.randrange(len(lines) + 1), "\n")
    if kind == "rename":
        defs = [i for i, line in enumerate(lines) if re.match(r"\s*def \w+\(", line)]
        if defs:
            i = rng.choice(defs)
            lines[i] = re.sub(r"def (\w+)\(", r"def \1_r(", lines[i], count=1)
        else:
            kind = "append"
    if kind == "append":
        lines.append(f"# edited {rng.random():.6f}\n")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(lines))
    return kind


def _linted_tree(tmp_path, tree_name: str) -> tuple[str, str, list[str]]:
    """The examples or the CROSS project copied to ``tmp_path/proj`` and linted once with a cache
    (which fills the cache and the re-run state; checked against a run without one): the tree,
    the cache folder and its Python files."""
    tree = tmp_path / "proj"
    if tree_name == "examples":
        shutil.copytree(os.path.join(ROOT, "examples"), tree)
    else:
        write_tree(str(tree), CROSS)
    cache = str(tmp_path / "cache")
    assert lint(str(tree), cache) == lint(str(tree), None)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(tree) for f in fs if f.endswith(".py"))
    return str(tree), cache, files


@pytest.mark.parametrize("tree_name", ["examples", "cross"])
def test_random_edits_rerun_equals_a_fresh_run(tmp_path, hits, tree_name):
    tree, cache, files = _linted_tree(tmp_path, tree_name)
    rng = random.Random(20)
    steps: list[tuple[str, bool | None]] = []  # (edit, answered by the re-run; None: a whole-run hit)
    for _step in range(24):
        kind = _edit(rng, rng.choice(files))
        before = len(hits)
        got = lint(str(tree), cache)
        assert got == lint(str(tree), None), (steps, kind)
        steps.append((kind, hits[before] if len(hits) > before else None))
    assert sum(1 for _kind, hit in steps if hit) >= 6, steps  # the re-run answered many of the edits
    # a renamed function is a new interface (a blank line inserted below a file's code is not)
    assert not any(hit for kind, hit in steps if kind == "rename"), steps
    assert any(hit is False for _kind, hit in steps), steps


def _move_lines(rng: random.Random, path: str) -> str:
    """One random edit of ``path`` that moves the lines below it (blank lines, comments and
    statements inserted or deleted above definitions, calls and compile sites); returns its kind."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines(keepends=True)
    kind = rng.choice(["blank", "comment", "statement", "delete", "top"])
    if kind == "statement":  # a statement of the def's own block, above it (never below a decorator)
        defs = [
            i
            for i, line in enumerate(lines)
            if re.match(r"\s*(def|class) \w+", line) and (i == 0 or not lines[i - 1].lstrip().startswith("@"))
        ]
        if defs:
            i = rng.choice(defs)
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            lines.insert(i, f"{indent}pass\n")
        else:
            kind = "blank"
    if kind == "delete":  # a blank or comment-only line
        spare = [i for i, line in enumerate(lines) if not line.strip() or line.lstrip().startswith("#")]
        if spare:
            del lines[rng.choice(spare)]
        else:
            kind = "comment"
    if kind in ("blank", "comment", "top"):
        at = 0 if kind == "top" else rng.randrange(len(lines) + 1)
        lines.insert(at, "\n" if kind == "blank" else f"# moved {rng.random():.6f}\n")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(lines))
    return kind


@pytest.mark.parametrize("tree_name", ["examples", "cross"])
def test_line_moving_edits_rerun_equals_a_fresh_run(tmp_path, hits, tree_name):
    """Edits that move lines (in files other files import from, in files with compile sites, in
    callees whose regions' chains name their callers' lines) are answered by the re-run, which
    carries the moved positions into every stored finding and context that names them."""
    tree, cache, files = _linted_tree(tmp_path, tree_name)
    rng = random.Random(2020)
    steps: list[tuple[str, str, bool | None]] = []
    for _step in range(24):
        path = rng.choice(files)
        kind = _move_lines(rng, path) if rng.random() < 0.75 else _edit(rng, path)
        before = len(hits)
        got = lint(str(tree), cache)
        assert got == lint(str(tree), None), (steps, kind, path)
        steps.append((kind, os.path.basename(path), hits[before] if len(hits) > before else None))
    moves = [hit for kind, _path, hit in steps if kind in ("blank", "comment", "top", "delete")]
    assert moves and sum(1 for hit in moves if hit) >= len(moves) * 2 // 3, steps


def test_moved_lines_reach_the_findings_of_other_files(tmp_path, hits):
    """A line inserted above the compile sites of model.py moves the chain text of every region it
    compiles (in blocks.py and util.py: 'compiled via `torch.compile(Model())` at pkg/model.py:20'),
    a line inserted above Block.forward moves the loop-call positions in its callers' findings:
    the re-run answers both, as a fresh run would."""
    write_tree(str(tmp_path), CROSS)
    cache = str(tmp_path / "c")
    lint(str(tmp_path), cache)
    hits.clear()
    model = tmp_path / "pkg" / "model.py"
    model.write_text("# a new first line\n\n" + model.read_text())
    fresh = lint(str(tmp_path), None)
    assert any("pkg/model.py:22" in d.get("region", "") for d in fresh if d["filename"].endswith("blocks.py"))
    assert lint(str(tmp_path), cache) == fresh
    blocks = tmp_path / "pkg" / "blocks.py"
    blocks.write_text(blocks.read_text().replace("class Block", "\n# moved\nclass Block"))
    assert lint(str(tmp_path), cache) == lint(str(tmp_path), None)
    model.write_text(model.read_text().replace("# a new first line\n", ""))  # lines deleted
    assert lint(str(tmp_path), cache) == lint(str(tmp_path), None)
    util = tmp_path / "pkg" / "util.py"
    for path in (model, util, blocks):  # three files moved in one run, each naming the others' lines
        path.write_text("\n\n" + path.read_text())
    assert lint(str(tmp_path), cache) == lint(str(tmp_path), None)
    assert hits == [True, True, True, True]
    model.write_text("def added():\n    pass\n" + model.read_text())  # a new definition: the full pass
    assert lint(str(tmp_path), cache) == lint(str(tmp_path), None)
    assert hits == [True, True, True, True, False]


def test_an_edit_that_keeps_the_interface_is_answered_from_the_state(tmp_path, hits):
    """Appending to a file and changing a break inside a line re-derive that file only; a break
    that now drops its loop caller's frame changes the file's exports: the full pass."""
    write_tree(str(tmp_path), CROSS)
    cache = str(tmp_path / "c")
    lint(str(tmp_path), cache)
    hits.clear()
    blocks = tmp_path / "pkg" / "blocks.py"
    blocks.write_text(blocks.read_text() + "# a comment at the end\n")
    assert lint(str(tmp_path), cache) == lint(str(tmp_path), None)
    assert hits == [True]
    util = tmp_path / "pkg" / "util.py"
    util.write_text(util.read_text().replace("x * 2", "print(x)"))  # a break under fullgraph=True
    fresh = lint(str(tmp_path), None)
    assert any(d["code"] == "TC307" for d in fresh)
    assert lint(str(tmp_path), cache) == fresh
    assert hits == [True, False]  # TC307 in model.py reads util.py's candidates: its exports changed
    util.write_text(util.read_text() + "\n# appended\n")
    assert lint(str(tmp_path), cache) == lint(str(tmp_path), None)
    assert hits == [True, False, True]


def test_a_function_added_where_nothing_reaches_is_answered_from_the_state(tmp_path, hits):
    """A module-level function appended that nothing names, no root, calling nothing of the
    project, changes the file's interface but no region (``project_delta.added_functions``): the
    re-run derives that file alone.  One another file names (even in a comment), one calling a
    project function, one an ``assume-compiled`` pattern makes a root run the full pass."""
    write_tree(
        str(tmp_path), {**CROSS, "pyproject.toml": '[tool.tclint]\nassume-compiled = ["*:*_compiled"]\n'}
    )
    cache = str(tmp_path / "c")
    lint(str(tmp_path), cache)
    hits.clear()
    util = tmp_path / "pkg" / "util.py"
    model = tmp_path / "pkg" / "model.py"
    edits = [
        (util, "\n\ndef added_one(x):\n    n = x.sum().item()\n    return n\n", True),
        (
            model,
            "\n\ndef added_two(x):\n    def inner(y):\n        return y * 2\n\n    return inner(x)\n",
            True,
        ),
        (util, "\n\ndef added_three(x):\n    return helper(x)\n", False),  # calls the project
        (model, "# added_four is mentioned\n", True),  # a comment: the interface is kept
        (util, "\n\ndef added_four(x):\n    return x\n", False),  # named in model.py's text
        (util, "\n\ndef added_compiled(x):\n    return x.item()\n", False),  # a root
        (util, "\n\n@torch.no_grad()\ndef added_five(x):\n    return x\n", False),  # decorated
    ]
    for path, text, hit in edits:
        path.write_text(path.read_text() + text)
        fresh = lint(str(tmp_path), None)
        assert lint(str(tmp_path), cache) == fresh, text
        assert hits[-1] is hit, text
    # the root added_compiled: its x.item() is reported (an addition a region reaches is no quick path)
    assert any(d["code"] == "TC101" and d["filename"].endswith("util.py") for d in fresh)


_ADDED = [
    "def {name}(x):\n    y = x + 1\n    return y\n",
    "def {name}(x):\n    n = x.sum().item()\n    print(n)\n    return x * n\n",
    "def {name}(x):\n    def inner(y):\n        return y + 1\n\n    return inner(x)\n",
    "def {name}(x):\n    return helper(x)\n",
    "def {name}(x):  # tclint: compiled\n    if x.sum() > 0:\n        return x\n    return -x\n",
]


@pytest.mark.parametrize("tree_name", ["examples", "cross"])
def test_random_added_functions_rerun_equals_a_fresh_run(tmp_path, hits, tree_name):
    """Functions appended to random files (most reach nothing; some call the project, are roots
    or take a name other files hold), between edits that keep or change interfaces: every re-run
    gives what a fresh run gives, and the additions nothing reaches are answered from the state."""
    tree, cache, files = _linted_tree(tmp_path, tree_name)
    rng = random.Random(2026)
    steps: list[tuple[str, bool | None]] = []
    for step in range(16):
        path = rng.choice(files)
        if rng.random() < 0.7:
            name = rng.choice([f"added_{step}", f"added_{step}", "helper", "forward", "main"])
            with open(path, "a", encoding="utf-8") as fh:
                fh.write("\n\n" + rng.choice(_ADDED).format(name=name))
            kind = "add"
        else:
            kind = _edit(rng, path)
        before = len(hits)
        got = lint(str(tree), cache)
        assert got == lint(str(tree), None), (steps, kind, path)
        steps.append((kind, hits[before] if len(hits) > before else None))
    added = [hit for kind, hit in steps if kind == "add"]
    assert sum(1 for hit in added if hit) >= 3, steps
    assert not all(added), steps


def test_a_break_that_stops_dropping_its_loop_callers_frame_runs_the_full_pass(tmp_path, hits):
    """Block.forward's branch on a tensor, called from Model.forward's loop, drops Model.forward's
    frame, which shadows its later print (engine.caller_drops); without the branch the print is
    reported as it is.  The edit keeps blocks.py's interface, but not its exports."""
    write_tree(str(tmp_path), CROSS)
    cache = str(tmp_path / "c")
    before = lint(str(tmp_path), cache)
    hits.clear()
    blocks = tmp_path / "pkg" / "blocks.py"
    blocks.write_text(blocks.read_text().replace("if s > 0:", "if True: "))
    fresh = lint(str(tmp_path), None)
    assert not any(d["code"] == "TC104" for d in before)  # shadowed: low confidence, not shown
    assert any(d["code"] == "TC104" for d in fresh)
    assert lint(str(tmp_path), cache) == fresh
    assert hits == [False]


ROOT_DROP = {
    "pkg/__init__.py": "",
    "pkg/model.py": """\
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(2)])
        self.calls = 0

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        self.calls += 1
        return x
""",
    "main.py": """\
import torch
from pkg.model import Model

model = torch.compile(Model())


def run(x):
    model(x)
    with torch.no_grad():
        return model(x)
""",
}


def test_a_root_whose_own_frame_starts_dropping_runs_the_full_pass(tmp_path, hits):
    """A print in the compiled root's loop drops its frame, so its counter guards nothing and
    nothing below it is traced again: the TC208 in main.py (another file) disappears
    (variants.dropped_roots): the edit keeps model.py's interface but changes its exports."""
    write_tree(str(tmp_path), ROOT_DROP)
    cache = str(tmp_path / "c")
    before = lint(str(tmp_path), cache)
    hits.clear()
    model = tmp_path / "pkg" / "model.py"
    model.write_text(model.read_text().replace("x = blk(x)\n", "x = blk(x); print(x)\n"))
    fresh = lint(str(tmp_path), None)
    (was,) = [d["message"] for d in before if d["code"] == "TC208"]
    # Dynamo 2.13 compiles nothing there any more (measured: 0 frames over a grad-mode flip, the
    # blocks are torch's own Linear), so the variants vanish (b3186d3, variants._nothing_retraced).
    assert "unbounded" in was and not [d for d in fresh if d["code"] == "TC208"]
    assert lint(str(tmp_path), cache) == fresh
    assert hits == [False]


def test_configuration_and_tool_changes_never_reuse_the_state(tmp_path, hits, monkeypatch):
    tree = tmp_path / "proj"
    shutil.copytree(os.path.join(ROOT, "examples"), tree)
    cache = str(tmp_path / "cache")
    lint(str(tree), cache)
    hits.clear()
    model = tree / "tinylm" / "model.py"
    model.write_text(model.read_text() + "# one\n")
    (tree / "tclint.toml").write_text("ignore = ['TC105']\nmin-confidence = 'low'\n")
    assert lint(str(tree), cache) == lint(str(tree), None)
    assert hits == [False]  # other settings: another state (none yet)
    model.write_text(model.read_text() + "# two\n")
    assert lint(str(tree), cache) == lint(str(tree), None)
    assert hits == [False, True]
    assert lint(str(tree), cache, {"select": ["TC1"]}) == lint(str(tree), None, {"select": ["TC1"]})
    assert hits == [False, True, False]
    monkeypatch.setattr("tclint.rules.cache._tool_fingerprint", lambda: "0123456789abcdef")  # another tclint
    model.write_text(model.read_text() + "# three\n")
    assert lint(str(tree), cache) == lint(str(tree), None)
    assert hits == [False, True, False, False]


def test_a_damaged_or_missing_state_runs_the_full_pass(tmp_path, hits):
    tree = tmp_path / "proj"
    shutil.copytree(os.path.join(ROOT, "examples"), tree)
    cache = tmp_path / "cache"
    lint(str(tree), str(cache))
    model = tree / "tinylm" / "model.py"
    for step in range(3):
        model.write_text(model.read_text() + f"# {step}\n")
        folder = next((cache / "rerun").iterdir())
        if step == 0:  # a context flipped on disk: it no longer verifies
            entry = next(p for p in folder.rglob("*") if p.is_file() and p.parent != folder)
            entry.write_bytes(entry.read_bytes()[:-1] + b"\0")
        elif step == 1:
            shutil.rmtree(folder)
        assert lint(str(tree), str(cache)) == lint(str(tree), None)
    assert hits[-1] is True  # the last full pass stored a state again


def test_changed_files_passed_alone_use_the_state(tmp_path, hits):
    """The pre-commit case: only the changed files are named, the project is indexed around them."""
    write_tree(str(tmp_path), {**CROSS, "pyproject.toml": "[tool.tclint]\n"})
    cache = str(tmp_path / "c")
    named = ["pkg/blocks.py", "pkg/model.py"]
    assert lint(str(tmp_path), cache, paths=named) == lint(str(tmp_path), None, paths=named)
    blocks = tmp_path / "pkg" / "blocks.py"
    blocks.write_text(blocks.read_text() + "# edited\n")
    assert lint(str(tmp_path), cache, paths=named) == lint(str(tmp_path), None, paths=named)
    assert hits[-1] is True
    # another set of named files, the same index: unchanged files' diagnostics come from the state
    assert lint(str(tmp_path), cache, paths=["pkg/model.py"]) == lint(
        str(tmp_path), None, paths=["pkg/model.py"]
    )


@pytest.mark.integration
@pytest.mark.parametrize("fmt", ["concise", "full", "json", "sarif", "github"])
def test_the_cli_prints_after_an_edit_what_a_fresh_run_prints(tmp_path, fmt):
    tree = tmp_path / "proj"
    shutil.copytree(os.path.join(ROOT, "examples"), tree)
    cache = str(tmp_path / "cache")

    def cli(*args: str, cached: bool = True):
        extra = ["--cache-dir", cache] if cached else ["--no-cache"]
        proc = subprocess.run(
            [sys.executable, "-m", "tclint.rules", "check", ".", "--output-format", fmt, *args, *extra],
            cwd=tree,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return proc.returncode, proc.stdout

    assert cli() == cli(cached=False)
    layers = tree / "tinylm" / "layers.py"
    train = tree / "train.py"
    edits = [
        (layers, lambda text: text + "# appended\n"),
        (layers, lambda text: text.replace("< 0.05", "> 0.25")),
        (layers, lambda text: "\n# moves every line below\n" + text),  # a file others import from
        (
            train,
            lambda text: text.replace(
                "    model = torch.compile(model)", "\n    model = torch.compile(model)"
            ),
        ),
    ]
    for path, edit in edits:
        path.write_text(edit(path.read_text()))
        assert cli() == cli(cached=False)
        assert cli("-q") == cli("-q", cached=False)
    assert os.listdir(os.path.join(cache, "rerun"))


# Every function outside the per-file analysis that reads ``FileFacts.candidates``, and why the
# re-run stays exact with it.  A re-run reuses every unchanged file's diagnostics when the changed
# files keep their interface and exports (``rerun.export_digest``): a new reader of another file's
# candidates must add what it reads to the exports, then its line here.
CANDIDATE_READERS = {
    ("rules/catalog/tc101_tensor_to_scalar.py", "_offer_item_fix"): "the walk of its own file",
    ("rules/catalog/tc102_data_dependent_branch.py", "visit_If"): "the walk of its own file",
    ("rules/catalog/tc201_int_attribute_mutation.py", "_after_break"): "the walk of its own file",
    (
        "rules/catalog/tc307_fullgraph_with_break.py",
        "project_check",
    ): "exports: candidates of fullgraph regions",
    ("rules/engine.py", "_medium_breaks"): "exports: loop-called functions' breaks, roots' frame drops",
    ("rules/engine.py", "file_diagnostics"): "its own file's candidates, derived again for a changed file",
    ("rules/factshare.py", "share"): "a re-walk's and its first walk's candidates, of one file (memory only)",
    ("rules/rerun.py", "export_digest"): "the exports",
    ("rules/rerun.py", "file_context"): "its own file's requirements and modes (a new one is a ContextMiss)",
    ("rules/variants.py", "_state_mutations"): "exports: TC201/TC202 candidates in regions",
    (
        "server/incremental.py",
        "_merge",
    ): "its own file's previous facts (the incremental re-walk of one file)",
}


def test_every_reader_of_candidates_across_files_is_covered_by_the_exports():
    import ast

    found = set()
    for base in ("rules", "server"):
        for folder, _dirs, names in os.walk(os.path.join(ROOT, base)):
            rel = os.path.relpath(folder, ROOT)
            if "analysis" in rel.split(os.sep) or "__pycache__" in rel:
                continue  # the per-file walk: reads the candidates of the file it walks
            for name in names:
                if not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as fh:
                    tree = ast.parse(fh.read())
                for node in ast.walk(tree):
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                        isinstance(sub, ast.Attribute)
                        and sub.attr == "candidates"
                        and isinstance(sub.ctx, ast.Load)
                        for sub in ast.walk(node)
                    ):
                        found.add((os.path.join(rel, name).replace(os.sep, "/"), node.name))
    assert found == set(CANDIDATE_READERS), (
        "a function reads candidates: if it reads another file's, add what it reads to "
        "rules/rerun.py's export_digest, then list it in CANDIDATE_READERS"
    )
