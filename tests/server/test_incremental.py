"""The incremental analysis equals a full analysis, edit after edit (hypothesis, fixed seed)."""

from __future__ import annotations

import ast
import dataclasses
import glob
import os
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tclint.rules import engine
from tclint.rules import types as T
from tclint.rules.discovery import module_for
from tclint.rules.engine import SourceText, analyze_source
from tclint.rules.model import Span
from tclint.rules.registry import all_rules
from tclint.rules.types import Ty
from tclint.server import fixcheck
from tclint.server.incremental import IncrementalAnalyzer, diff_lines, split_lines

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

GENERATED = (
    "import torch\nimport torch.nn as nn\n\n"
    + "".join(
        textwrap.dedent(
            f"""
        class Block{i}(nn.Module):
            def __init__(self, dim: int = 8):
                super().__init__()
                self.lin = nn.Linear(dim, dim)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                h = self.lin(x)
                if h.sum() > 0:
                    h = h * 2
                print("block {i}", h.shape)
                f = lambda t: t.item()
                return h + f(h)

        """
        )
        for i in range(6)
    )
    + "\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.blocks = nn.Sequential(Block0(), Block1())\n\n    def forward(self, x):\n        return self.blocks(x)\n\n\nmodel = torch.compile(Model())\n"
)


# a package module re-exporting (star imports, a literal ``__all__``: transformers' modeling files)
EXPORTING = (
    GENERATED.replace("import torch.nn as nn\n", "import torch.nn as nn\nfrom .layers import *\n", 1)
    + '\n__all__ = ["Block0", "Model"]\n'
)


def corpus() -> dict[str, str]:
    files = {"/virtual/proj/gen_model.py": GENERATED, "/virtual/proj/gen_exports.py": EXPORTING}
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.py"), recursive=True)):
        with open(path, encoding="utf-8") as fh:
            files[path] = fh.read()
    for rule in all_rules():
        for i, ex in enumerate((*rule.invalid, *rule.valid)):
            files[f"/virtual/proj/ex_{rule.code}_{i}.py"] = ex.code
    return files


CORPUS = corpus()
NAMES = sorted(CORPUS)
SNIPPETS = [
    "y = x.item()", "print(x)", "if x.sum() > 0:\n{i}    x = x + 1", "return x", "z = helper(x)",
    "for i in range(3):\n{i}    x = x * 2", "self.extra = nn.Linear(2, 2)", "x = torch.relu(x)", "pass",
    "f = lambda t: t.item()", "@torch.compile\n{i}def g(t):\n{i}    return t.sin()", "import math",
    "torch._dynamo.config.capture_scalar_outputs = True", "x = (", '"""', "    ", "\t", "é = 1  # ünïcode",
    "with torch.no_grad():\n{i}    y = model(x)", "model.eval()", "y = f(x) if flag else f(x.half())",  # call contexts
    "from math import *", '__all__ = ["Model"]',  # a module's star imports and exports
]  # fmt: skip


@st.composite
def edits(draw: st.DrawFn) -> list[tuple[int, int, int, str]]:
    """Edit operations: (kind, line fraction, size, snippet)."""
    n = draw(st.integers(1, 6))
    return [
        (
            draw(st.integers(0, 6)),
            draw(st.integers(0, 999)),
            draw(st.integers(1, 6)),
            draw(st.sampled_from(SNIPPETS)),
        )
        for _ in range(n)
    ]


def apply_op(text: str, op: tuple[int, int, int, str]) -> str:
    kind, where, size, snippet = op
    lines = text.splitlines(keepends=True) or ["\n"]
    i = where * len(lines) // 1000
    cur = lines[i]
    indent = cur[: len(cur) - len(cur.lstrip())].rstrip("\r\n")
    snippet = snippet.replace("{i}", indent)
    if kind == 0:
        lines.insert(i, indent + snippet + "\n")
    elif kind == 1:
        del lines[i : i + size]
    elif kind == 2:
        j = min(len(cur.rstrip("\n")), size * 3)
        lines[i] = cur[:j] + snippet.split("\n")[0] + cur[j:]
    elif kind == 3:
        lines.insert(i, "\n")
    elif kind == 4:
        lines[i:i] = lines[i : i + size]
    elif kind == 5:
        lines.insert(i, indent + snippet[: size * 2] + "\n")  # a half-typed line
    else:
        lines[i] = lines[i].replace("\n", "\r\n") if size % 2 else lines[i]
    return "".join(lines)


def assert_same(full, inc, where: str) -> None:
    if full == inc:
        return
    for f in dataclasses.fields(full):
        a, b = getattr(full, f.name), getattr(inc, f.name)
        if a != b:
            raise AssertionError(f"{where}: field {f.name} differs\nfull: {a!r}\ninc:  {b!r}"[:3000])
    raise AssertionError(f"{where}: facts differ")  # pragma: no cover


@settings(
    max_examples=int(os.environ.get("TCLINT_INCREMENTAL_EXAMPLES", "150")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(name=st.sampled_from(NAMES), ops=edits())
def test_incremental_equals_full(name: str, ops: list[tuple[int, int, int, str]]) -> None:
    text = CORPUS[name]
    module, is_package, root = module_for(name)
    inc = IncrementalAnalyzer(name, module, is_package, root)
    inc.analyze(text)
    for step, op in enumerate(ops):
        text = apply_op(text, op)
        out = inc.analyze(text)
        full = analyze_source(SourceText(name, text), module, is_package, root)
        assert_same(full, out.facts, f"{name} after edit {step} ({out.mode}, {out.fallback})")


def test_typing_inside_a_function_is_incremental_and_cheap():
    name = "/virtual/proj/gen_model.py"
    inc = IncrementalAnalyzer(name, *module_for(name))
    text = GENERATED
    assert inc.analyze(text).mode == "full"
    target = text.index('print("block 3"')
    for n, ch in enumerate("x = h.item()\n        "):
        text = text[: target + n] + ch + text[target + n :]
        out = inc.analyze(text)
        assert out.mode in ("incremental", "error"), (out.mode, out.fallback)
        if out.mode == "incremental":
            assert out.reanalysed_lines < 40  # the edited class and the module level, not the file
    assert out.mode == "incremental"
    assert out.facts == analyze_source(SourceText(name, text), *module_for(name))


def test_typing_in_a_module_with_exports_is_incremental():
    """A module with star imports and a literal ``__all__`` (module-level facts, taken from the
    synthetic walk) is analysed incrementally, as any other module, and equals a full walk."""
    name = "/virtual/proj/gen_exports.py"
    inc = IncrementalAnalyzer(name, *module_for(name))
    text = EXPORTING
    assert inc.analyze(text).facts.exports == ("Block0", "Model")
    target = text.index('print("block 3"')
    line = text.rindex("\n", 0, target) + 1
    for edited in (
        text[:target] + "y = h.item()\n        " + text[target:],  # a statement typed
        text[:line] + "\n" + text[line:],  # Enter: the lines below move
    ):
        out = inc.analyze(edited)
        assert out.mode == "incremental", out.fallback
        full = analyze_source(SourceText(name, edited), *module_for(name))
        assert full.star_imports and full.exports
        assert_same(full, out.facts, out.mode)


def test_a_message_naming_a_line_below_the_edit_names_it_moved():
    """A reused definition's candidate whose message names a line (TC127: "its constructor
    breaks at line 10") says the line the full walk says after lines above it move."""
    name = next(
        n
        for n in NAMES
        if "ex_TC127_" in n
        and "breaks at line" in str(analyze_source(SourceText(n, CORPUS[n]), *module_for(n)).candidates)
    )
    inc = IncrementalAnalyzer(name, *module_for(name))
    inc.analyze(CORPUS[name])
    text = "\n\n" + CORPUS[name]  # two lines above everything
    out = inc.analyze(text)
    assert out.mode == "incremental", out.fallback
    assert_same(analyze_source(SourceText(name, text), *module_for(name)), out.facts, out.mode)


def test_module_level_change_falls_back_to_full():
    name = "/virtual/proj/gen_model.py"
    inc = IncrementalAnalyzer(name, *module_for(name))
    inc.analyze(GENERATED)
    out = inc.analyze(GENERATED.replace("import torch.nn as nn", "import torch.nn as nn2"))
    assert out.mode == "full" and out.fallback == "module-level code changed"


def test_split_and_diff_lines_follow_pythons_line_ends():
    assert split_lines("a\r\nb\rc\nd\x0ce\u2028f") == ["a\r\n", "b\r", "c\n", "d\x0ce\u2028f"]
    assert split_lines("") == [""] and split_lines("x\n") == ["x\n"]
    assert diff_lines(["a", "b", "c"], ["a", "x", "c"]) == (1, 1)
    assert diff_lines(["a", "a"], ["a", "a", "a"]) == (2, 0)


# ---------------------------------------------------------------------------------------------
# fix verification limited to the edited statement


def test_fixcheck_is_installed_through_the_engine_hook(tmp_path):
    """fixcheck.install() makes the engine choose every reported finding's fix through
    fixcheck.choose_fix (engine.set_fix_chooser), and None puts the default back."""
    from tests.helpers.lintutil import lint_code

    code = "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n"
    seen = []
    try:
        fixcheck.install()
        assert engine.choose_fix.__doc__ and engine._fix_chooser is fixcheck.choose_fix
        engine.set_fix_chooser(lambda fix, text: seen.append(fix) or None)
        result = lint_code(tmp_path, code)
        (d,) = [d for d in result.diagnostics if d.code == "TC104"]
        assert seen and d.fix is None  # the installed chooser decided
    finally:
        engine.set_fix_chooser(None)
    assert engine._fix_chooser is engine.offered_fixes
    (d,) = [d for d in lint_code(tmp_path, code).diagnostics if d.code == "TC104"]
    assert d.fix is not None


@pytest.mark.parametrize(
    "name", [n for n in NAMES if "TC104" in n or "TC102" in n or "TC012" in n or n.endswith("gen_model.py")]
)
def test_statement_local_fix_check_agrees_with_the_engine(name):
    text = CORPUS[name]
    try:
        tree = ast.parse(text)
    except SyntaxError:
        pytest.skip("not Python")
    lines = split_lines(text)
    ranges = [
        (min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", []))]), s.end_lineno)
        for s in tree.body
    ]
    facts = analyze_source(SourceText(name, text), *module_for(name))
    fixes = [c.fix for c in facts.candidates if c.fix is not None]
    fixcheck.register(text, lines, ranges)
    try:
        for fix in fixes:
            assert fixcheck.choose_fix(fix, text) == fixcheck._original(fix, text)
    finally:
        fixcheck.clear()


# ---------------------------------------------------------------------------------------------
# codemod fixes (Fix.codemod) name their places as Spans, moved like every other position


CODEMOD_SOURCE = textwrap.dedent("""\
    import torch


    def helper(x):
        return x


    @torch.compile
    def f(x):
        torch._dynamo.mark_dynamic(x, 0)
        y = x.sum().item()
        return x * y
""")


def _codemods(facts) -> list[tuple[str, int, tuple]]:
    """(code, line, codemod) of the candidates with a codemod fix (the line copied: Locs move in place)."""
    fixes = [
        (c, f)
        for c in facts.candidates
        if c.fix is not None
        for f in (c.fix if isinstance(c.fix, tuple) else (c.fix,))
    ]
    return [(c.code, c.loc.line, f.codemod) for c, f in fixes if f.codemod]


def test_codemod_fix_positions_move_with_an_edit_above_them():
    """An edit in ``helper`` moves ``f``'s statements down: the memoized candidates of ``f`` (TC101's
    item-as-tensor and TC301's mark-before-call codemod fixes) carry their codemod's places moved
    too, so the incremental facts equal a full analysis (they kept the old lines before)."""
    name = "/virtual/proj/codemod_shift.py"
    inc = IncrementalAnalyzer(name, *module_for(name))
    before = _codemods(inc.analyze(CODEMOD_SOURCE).facts)
    assert {code for code, _loc, _cm in before} == {"TC101", "TC301"}
    text = CODEMOD_SOURCE.replace("    return x\n", "    print(x)\n    x = x + 1\n    return x\n", 1)
    out = inc.analyze(text)
    assert out.mode == "incremental", (out.mode, out.fallback)
    assert_same(
        analyze_source(SourceText(name, text), *module_for(name)), out.facts, "after the edit in helper"
    )
    after = [c for c in _codemods(out.facts) if c[0] in ("TC101", "TC301")]  # not the new print's own codemod
    for (_c, old_line, old_cm), (_c2, new_line, new_cm) in zip(before, after, strict=True):
        assert new_line == old_line + 2
        spans = [a for a in new_cm if isinstance(a, Span)]
        assert spans and all(s.start.line == new_line for s in spans), new_cm
        assert [a for a in old_cm if not isinstance(a, Span)] == [
            a for a in new_cm if not isinstance(a, Span)
        ]


def test_shift_diagnostic_moves_a_codemod_fix_and_keeps_it():
    """``shift_diagnostic`` (probe results merged after an edit) moves a codemod fix's places and keeps
    the codemod (it rebuilt the fix from its message, edits and safety only, dropping it)."""
    from tclint.rules.model import Applicability, Confidence, Diagnostic, Fix, Severity
    from tclint.server.workspace import shift_diagnostic

    fix = Fix(
        "Keep the value a 0-d tensor",
        (),
        Applicability.UNSAFE,
        codemod=("item-as-tensor", Span.of(7, 8, 7, 22)),
    )
    d = Diagnostic(
        "TC101",
        "tensor-to-scalar",
        "msg",
        "/p/a.py",
        Span.of(7, 8, 7, 22),
        Severity.WARNING,
        Confidence.HIGH,
        fix=fix,
    )
    moved = shift_diagnostic(d, 3, 2)
    assert moved.fix.codemod == ("item-as-tensor", Span.of(10, 8, 10, 22))
    assert moved.span == Span.of(10, 8, 10, 22)
    assert shift_diagnostic(d, 3, 9).fix.codemod == fix.codemod  # below the edit: unchanged


def test_codemod_arguments_name_places_as_spans_only(tmp_path):
    """A place written as a plain string cannot be found by what moves positions after an edit (the
    incremental merge, shift_diagnostic): every codemod fix of the rules' examples names its places
    as Spans and no argument is a number in a string.  Fails on the old encoding ('12', '8', ...)."""
    from tests.helpers.lintutil import lint_code

    seen = 0
    for rule in all_rules():
        for ex in rule.invalid:
            if not ex.fixed:
                continue
            for d in lint_code(tmp_path, ex.code).diagnostics:
                fix = d.fix
                if fix is None or not fix.codemod:
                    continue
                seen += 1
                assert isinstance(fix.codemod[0], str)
                bad = [a for a in fix.codemod[1:] if isinstance(a, str) and a.strip().lstrip("-").isdigit()]
                assert not bad, (rule.code, fix.codemod)
    assert seen >= 3


# -- the type refinement's re-walks of an open buffer (``rewalk=True``) -----------------------------
SEEDED = GENERATED + textwrap.dedent(
    """

        def gate(h):
            y = h.mean(-1)
            if h.sum() > 0:
                y = y * 2
            return y


        class Head(nn.Module):
            def forward(self, x):
                z = helper(x)
                if z.sum() > 0:
                    x = x * 2
                return gate(x)
        """
)
SEEDS = {"gate": {"h": Ty(T.TENSOR, T.MEDIUM)}, "Head.forward": {"x": Ty(T.TENSOR, T.MEDIUM)}}


def _returns(tensor_helpers: bool):
    """A project pass's answers about callees' return types: ``helper`` (and ``gate``) return a
    tensor, or (``tensor_helpers`` False) nothing is known to."""

    def returns_of(ref: str) -> Ty | None:
        if tensor_helpers and ("helper" in ref or "gate" in ref):
            return Ty(T.TENSOR, T.MEDIUM)
        return None

    return returns_of


def _asking(returns_of, asked: set[str]):
    def recording(ref: str):
        asked.add(ref)
        return returns_of(ref)

    return recording


@settings(
    max_examples=int(os.environ.get("TCLINT_INCREMENTAL_EXAMPLES", "150")) // 3,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(ops=edits(), answers=st.lists(st.booleans(), min_size=6, max_size=6))
def test_incremental_rewalk_equals_a_full_rewalk(ops, answers) -> None:
    """Each re-walk equals a full walk with the same seeds and answers, asks (at least) every
    question that walk asks, and leaves the results it gave before as they were (they are kept
    for the texts they are of: an undo gets them back)."""
    name = "/virtual/proj/gen_model.py"
    module, is_package, root = module_for(name)
    inc = IncrementalAnalyzer(name, module, is_package, root, seeds=SEEDS, rewalk=True)
    text = SEEDED
    inc.analyze(text, returns_of=_returns(True))
    given_before = []
    for step, op in enumerate(ops):
        text = apply_op(text, op)
        returns_of = _returns(answers[step])
        asked: set[str] = set()
        out = inc.analyze(text, returns_of=_asking(returns_of, asked))
        full_asked: set[str] = set()
        full = analyze_source(
            SourceText(name, text), module, is_package, root, (), SEEDS, _asking(returns_of, full_asked)
        )
        assert_same(full, out.facts, f"after edit {step} ({out.mode}, {out.fallback})")
        assert full_asked <= asked, f"after edit {step}: not asked {full_asked - asked}"
        given_before.append((text, returns_of, out.facts))
    for text, returns_of, facts in given_before:
        full = analyze_source(SourceText(name, text), module, is_package, root, (), SEEDS, returns_of)
        assert_same(full, facts, "an earlier result, after the later edits")


def test_a_rewalk_reuses_the_definitions_an_edit_left_alone_while_the_answers_hold():
    name = "/virtual/proj/gen_model.py"
    module, is_package, root = module_for(name)
    inc = IncrementalAnalyzer(name, module, is_package, root, seeds=SEEDS, rewalk=True)
    assert inc.analyze(SEEDED, returns_of=_returns(True)).mode == "full"
    # Enter and a new statement in Head.forward: lines move below it, the rest is reused
    text = SEEDED.replace("        return gate(x)\n", "        w = x.item()\n        return gate(x)\n")
    out = inc.analyze(text, returns_of=_returns(True))
    assert (out.mode, out.fallback) == ("incremental", None)
    assert out.reanalysed_lines < 40
    assert out.facts == analyze_source(
        SourceText(name, text), module, is_package, root, (), SEEDS, _returns(True)
    )
    # a callee's return type changed: any definition may read it, the file is walked again
    again = inc.analyze(text.replace("w = x.item()", "w = x.item() + 1"), returns_of=_returns(False))
    assert again.mode == "full"
