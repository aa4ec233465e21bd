"""Facts held for the project pass share their strings (issue 20): the main process holds every
file's facts, and the same names (qualified names, modules, source texts) recur across files.  Facts
loaded from the cache and facts sent by worker processes come through ``marshal`` with interned
strings, so a string that recurs is one object, and the facts are equal to the ones analysed."""

from __future__ import annotations

import os

from tclint.rules.cache import Cache
from tclint.rules.config import ConfigResolver
from tclint.rules.engine import Linter, analyze_source
from tclint.rules.parallel import from_transport, to_transport
from tclint.rules.reading import read_source

MODEL = """import torch


class Net(torch.nn.Module):
    def forward(self, x):
        print("step done")
        return x.sum().item()


compiled = torch.compile(Net())
"""


def _facts(path):
    return analyze_source(read_source(str(path), None, 10_000_000), path.stem, False, str(path.parent))


def _shared(a, b) -> dict[str, bool]:
    fa, fb = a.functions["Net.forward"], b.functions["Net.forward"]
    return {
        "qualname": fa.qualname is fb.qualname,
        "site": a.compile_sites[0].text is b.compile_sites[0].text,
    }


def test_worker_facts_round_trip_equal_and_share_strings(tmp_path):
    (tmp_path / "a.py").write_text(MODEL)
    (tmp_path / "b.py").write_text(MODEL)
    a, b = _facts(tmp_path / "a.py"), _facts(tmp_path / "b.py")
    assert a.compile_sites[0].text == b.compile_sites[0].text == "torch.compile(Net())"
    assert not any(_shared(a, b).values())  # analysed separately: separate objects
    sent_a, sent_b = to_transport(a), to_transport(b)
    assert isinstance(sent_a, bytes)
    got_a, got_b = from_transport(sent_a), from_transport(sent_b)
    assert got_a == a and got_b == b
    assert _shared(got_a, got_b) == {"qualname": True, "site": True}


def test_facts_loaded_from_the_cache_share_strings(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.py").write_text(MODEL)
    (tree / "b.py").write_text(MODEL)
    cwd = os.getcwd()
    os.chdir(tree)
    try:
        cold = Cache(str(tmp_path / "cache"))
        Linter(ConfigResolver(), cold, jobs=1).lint_paths(["."])
        cold.flush()
        warm = Cache(str(tmp_path / "cache"))
        project = Linter(ConfigResolver(), warm, jobs=1).lint_paths(["."], need_project=True).project
    finally:
        os.chdir(cwd)
    assert warm.hits == 2 and warm.misses == 0
    files = {os.path.basename(p): ff for p, ff in project.files.items()}
    assert _shared(files["a.py"], files["b.py"]) == {"qualname": True, "site": True}


def test_facts_from_worker_processes_equal_facts_analysed_here(tmp_path, monkeypatch):
    """The pool (large trees, ``jobs`` > 1) gives the same facts and findings as one process."""
    from tclint.rules import parallel
    from tclint.rules.report.json_ import to_dict

    padding = "".join(
        f"# {i:06d} {'-' * 90}\n" for i in range(6_000)
    )  # ~600 kB each: over PARALLEL_MIN_BYTES together
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.py").write_text(MODEL + padding)
    received = []

    def counted(sent):
        received.append(type(sent))
        return from_transport(sent)

    monkeypatch.setattr(parallel, "from_transport", counted)
    monkeypatch.chdir(tmp_path)
    pooled = Linter(ConfigResolver(), None, jobs=2).lint_paths(["."], need_project=True)
    here = Linter(ConfigResolver(), None, jobs=1).lint_paths(["."], need_project=True)
    assert received == [bytes, bytes, bytes]  # all three came from workers, as marshal bytes
    assert [to_dict(d) for d in pooled.diagnostics] == [to_dict(d) for d in here.diagnostics]
    assert pooled.diagnostics
    for path, ff in here.project.files.items():
        assert pooled.project.files[path] == ff


def test_equal_positions_share_their_numbers(tmp_path):
    """Line numbers past the interpreter's small-integer cache are one object per value in an
    entry (each position would otherwise hold its own)."""
    from tclint.rules.facts import Loc

    (tmp_path / "a.py").write_text(MODEL)
    a = _facts(tmp_path / "a.py")
    a.error_loc = Loc(int("305"), 0, int("305"), 1)  # two equal numbers, two objects
    a.custom_ops = {"op": Loc(int("305"), 0, int("306"), 0)}
    assert a.error_loc.line is not a.error_loc.end_line
    got = from_transport(to_transport(a))
    assert got.error_loc == a.error_loc and got.custom_ops == a.custom_ops
    assert got.error_loc.line is got.error_loc.end_line is got.custom_ops["op"].line


def test_equal_immutable_values_are_one_object_across_files(tmp_path):
    """Tuples of strings and types recur across files (``("load",)``, ``Ty("tensor")``; on the
    transformers package 556,000 tuples held 74,000 values): facts decoded from two entries hold
    one object for each, but each file its own positions (an edit moves them in place)."""
    (tmp_path / "a.py").write_text(MODEL)
    (tmp_path / "b.py").write_text(MODEL)
    a, b = _facts(tmp_path / "a.py"), _facts(tmp_path / "b.py")
    got_a, got_b = from_transport(to_transport(a)), from_transport(to_transport(b))
    assert got_a == a and got_b == b
    pa, pb = (ff.functions["Net.forward"].params[0] for ff in (got_a, got_b))
    assert pa.uses == ("load",) and pa.ty.kind == "tensor"
    assert pa.uses is pb.uses and pa.ty is pb.ty
    assert pa.loc == pb.loc and pa.loc is not pb.loc


REFINED = """import torch


def helper(x):
    if x.sum() > 0:
        return x * 2
    return x


def unrelated(n: int) -> int:
    return n + 1


@torch.compile
def step(x: torch.Tensor):
    return helper(x)
"""


def _run(exits_after_run):
    linter = Linter(ConfigResolver(), None, jobs=1, exits_after_run=exits_after_run)
    return linter.lint_paths(["."], need_project=True)


def test_a_rewalked_file_shares_what_its_seeds_left_unchanged(tmp_path, monkeypatch):
    """The type refinement walks ``model.py`` again with ``helper``'s ``x`` seeded as a tensor:
    the new facts hold the first walk's objects for everything equal (``unrelated``, the compile
    site), new ones only for what the seeds changed (issue 20: the transformers tree held 260 MiB
    of such copies in the main process)."""
    (tmp_path / "pyproject.toml").write_text("[tool.tclint]\n")
    (tmp_path / "model.py").write_text(REFINED)
    monkeypatch.chdir(tmp_path)
    result = _run(exits_after_run=False)
    assert "TC102" in {d.code for d in result.diagnostics}  # found through the seeded helper
    walks = result.project.memo["argflow_trace"]["model.py"]
    before, seeds, _answers, after = walks[0]
    assert list(seeds) == ["helper"]
    assert after.functions["unrelated"] is before.functions["unrelated"]
    assert after.compile_sites[0] is before.compile_sites[0]
    assert after.functions["helper"] is not before.functions["helper"]  # its parameter's type changed
    assert after.functions["helper"] != before.functions["helper"]
    assert after.functions is not before.functions  # containers are never shared
    assert result.project.files["model.py"] is walks[-1][3]
    for _before, _seeds, _answers, later in walks[1:]:  # the next rounds' walks share them too
        assert later.functions["unrelated"] is before.functions["unrelated"]


def test_each_refinement_round_lets_the_projects_before_it_go(tmp_path, monkeypatch):
    """The type refinement builds a project per round: when one builds, nothing holds the earlier
    ones any more, the unrefined project included (the transformers package's peak held three
    projects' indexes, ~35 MiB each; the facts they index are shared)."""
    import gc
    import weakref

    from tclint.rules import project as project_module

    (tmp_path / "pyproject.toml").write_text("[tool.tclint]\n")
    (tmp_path / "model.py").write_text(REFINED)
    monkeypatch.chdir(tmp_path)
    built: list[weakref.ref] = []
    held_when_built: list[list[bool]] = []
    real = project_module.Project.build

    def build(self):
        gc.collect()  # the walks' cyclic garbage may still point at a round's project
        held_when_built.append([r() is not None for r in built])
        built.append(weakref.ref(self))
        return real(self)

    monkeypatch.setattr(project_module.Project, "build", build)
    result = _run(exits_after_run=True)
    assert "TC102" in {d.code for d in result.diagnostics}
    assert len(built) >= 3  # the unrefined project and two rounds
    assert held_when_built == [[False] * i for i in range(len(built))]
    assert built[-1]() is result.project


def test_a_command_line_run_keeps_no_file_text(tmp_path, monkeypatch):
    """A command-line run (``exits_after_run``) neither keeps the bytes it hashed nor the texts it
    decoded for the walks and the diagnostics (transformers: 135 MiB of text held to the end of
    the run); the text is read again when asked, and the findings are the language server's
    (which keeps its texts)."""
    from tclint.rules.report.json_ import to_dict

    (tmp_path / "pyproject.toml").write_text("[tool.tclint]\n")
    (tmp_path / "model.py").write_text(REFINED)
    monkeypatch.chdir(tmp_path)
    cli = _run(exits_after_run=True)
    kept = _run(exits_after_run=False)
    assert [to_dict(d) for d in cli.diagnostics] == [to_dict(d) for d in kept.diagnostics]
    src = cli.sources["model.py"]
    assert src._data is None and src._text is None  # nothing of the file held after the run
    assert src.text == REFINED  # read again when asked
    assert kept.sources["model.py"]._text == REFINED
    buffer = read_source("model.py", REFINED.encode())  # an editor's unsaved buffer
    assert buffer.text == REFINED
    buffer.release()
    assert buffer._text == REFINED  # never dropped: it is not the file on disk


def test_a_command_line_run_with_a_cache_keeps_no_file_text(tmp_path, monkeypatch):
    """The re-run state stored after the project pass (``rerun.store_full``) reads every file's
    text for its line hashes: a command-line run drops it again (torch: 180 -> 243 MiB there)."""
    from tclint.rules import rerun

    (tmp_path / "pyproject.toml").write_text("[tool.tclint]\n")
    (tmp_path / "model.py").write_text(REFINED)
    monkeypatch.chdir(tmp_path)
    stored = []
    real = rerun.store_full
    monkeypatch.setattr(rerun, "store_full", lambda *a, **k: stored.append(real(*a, **k)))
    cache = Cache(str(tmp_path / "cache"))
    result = Linter(ConfigResolver(), cache, jobs=1, exits_after_run=True).lint_paths(["."])
    assert stored  # the state was stored
    src = result.sources["model.py"]
    assert src._text is None and src.text == REFINED


def test_the_stored_rerun_state_waits_for_the_flush_as_bytes(tmp_path, monkeypatch):
    """``rerun.store_full`` builds every indexed file's context after the project pass, and they
    wait for the cache's flush: held as plain dicts and lists they were the peak of a cold run
    (transformers: ~100 MiB); held as the marshal bytes they are written as, the memory they keep
    is about what the flush writes."""
    import tracemalloc

    from tclint.rules import rerun

    (tmp_path / "pyproject.toml").write_text("[tool.tclint]\n")
    for i in range(40):
        (tmp_path / f"m{i}.py").write_text(
            REFINED
            + "".join(
                f"\n\ndef helper_{i}_{j}(x, y=1):\n    z = x + y\n    return z * {j}\n" for j in range(30)
            )
        )
    monkeypatch.chdir(tmp_path)
    held = []
    real = rerun.store_full

    def measured(*a, **k):
        real(*a, **k)  # once first: what it builds for the project (codecs, chains) stays with it
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        real(*a, **k)  # the state again: what the second writer waiting for the flush holds
        held.append(tracemalloc.get_traced_memory()[0] - before)
        tracemalloc.stop()

    monkeypatch.setattr(rerun, "store_full", measured)
    cache = Cache(str(tmp_path / "cache"))
    Linter(ConfigResolver(), cache, jobs=1, exits_after_run=True).lint_paths(["."])
    cache.flush()
    folder = os.path.join(str(tmp_path / "cache"), rerun.FOLDER)
    written = sum(
        os.path.getsize(os.path.join(d, f))
        for d, _, names in os.walk(folder)
        for f in names
        if not f.endswith(".state")
    )
    assert held and written > 40 * 1000
    assert held[0] < 1.5 * written, (held[0], written)


LOOP_COMPILE = """import torch


def step(x):
    return x * 2


def run(xs):
    for x in xs:
        fast = torch.compile(step)
        fast(x)
"""


def test_reporting_holds_one_files_text_and_parsed_trees_at_a_time(tmp_path, monkeypatch):
    """A command-line run reports (and, for JSON/SARIF, computes codemod fixes) file after file:
    it held the decoded text of every file with findings and the last four files' libcst trees
    with their metadata (transformers cold, JSON output: 384 MiB after the project pass, 505 MiB
    in the report), though findings come sorted by path."""
    from tclint.rules import codemods
    from tclint.rules.fixes import resolve_fixes
    from tclint.rules.reading import Texts

    (tmp_path / "pyproject.toml").write_text("[tool.tclint]\n")
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.py").write_text(LOOP_COMPILE)
    monkeypatch.chdir(tmp_path)
    result = Linter(ConfigResolver(), None, jobs=1, exits_after_run=True).lint_paths(["."])
    with_codemods = {
        d.path for d in result.diagnostics if any(f.codemod for f in (d.fix, *d.alternatives) if f)
    }
    assert with_codemods == {"a.py", "b.py", "c.py"}
    codemods.forget_parses()
    texts = Texts(result.sources, release=True)
    resolved = resolve_fixes(result.diagnostics, texts.get)
    assert codemods._parsed.cache_info().currsize == 1  # c.py's only
    assert [src._text is None for _, src in sorted(result.sources.items())] == [True, True, False]
    assert any(d.fix is not None and d.fix.edits for d in resolved if d.path == "a.py")


def test_a_command_line_report_holds_no_project(tmp_path, monkeypatch):
    """``tclint check`` lets the project pass go before it reports: the JSON/SARIF report parses
    files with libcst for codemod fixes, and with the project (indexes, regions, refined facts)
    still held that parse came on top of the project pass's peak (transformers cold, JSON output:
    383 MiB after the project pass, 455 MiB and more in the report)."""
    import gc
    import weakref

    from tclint.rules import cli, engine, fixes

    (tmp_path / "pyproject.toml").write_text("[tool.tclint]\n")
    (tmp_path / "a.py").write_text(LOOP_COMPILE)
    monkeypatch.chdir(tmp_path)
    built: list[weakref.ref] = []
    real_pass = engine.Linter._project_pass

    def project_pass(self, *a, **k):
        out = real_pass(self, *a, **k)
        built.append(weakref.ref(out[1]))
        return out

    held: list[bool] = []
    real_resolve = fixes.resolve_fixes

    def resolve(*a, **k):
        gc.collect()
        held.append(any(r() is not None for r in built))
        return real_resolve(*a, **k)

    monkeypatch.setattr(engine.Linter, "_project_pass", project_pass)
    monkeypatch.setattr(fixes, "resolve_fixes", resolve)
    assert cli.main(["check", ".", "--exit-zero", "--no-cache", "--output-format", "json"]) == 0
    assert built and held == [False]
