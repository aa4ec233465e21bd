"""Every rule's VALID / INVALID examples, checked twice.

1. Statically: tclint flags exactly the lines marked ``# expect: CODE`` in INVALID examples, and
   nothing in VALID examples.
2. Under the real TorchDynamo (torch 2.13, CPU, backend "eager"): each marked line of an INVALID
   example produces a graph break *on that line* with one of the rule's GB ids (or the example's),
   and VALID examples compile without any break in their own code.  Examples that cannot be
   proven on this machine say why (``proof=False`` with a title).
"""

from __future__ import annotations

import os
import tempfile

import pytest
from tclint.rules import registry
from tclint.rules.rule import Example

from tests.helpers.lintutil import found, lint_code

CASES = [
    pytest.param(rule, kind, i, ex, id=f"{rule.code}-{kind}{i}")
    for rule in registry.all_rules()
    for kind, examples in (("invalid", rule.invalid), ("valid", rule.valid))
    for i, ex in enumerate(examples)
]


def test_every_stable_graph_break_rule_has_examples_both_ways():
    for rule in registry.all_rules():
        if rule.family in ("graph-break", "recompile", "compile-api") and rule.lifecycle == "stable":
            assert rule.invalid, f"{rule.code} has no INVALID example"
            assert rule.valid, f"{rule.code} has no VALID example"
            proven = [ex for ex in rule.invalid if ex.proof]
            assert proven or rule.family != "graph-break" or all(ex.title for ex in rule.invalid), rule.code


def _settings(ex: Example, rule=None) -> dict:
    settings = dict(ex.settings)
    if rule is not None and rule.lifecycle == "preview":
        settings.setdefault("preview", True)
    return settings


@pytest.mark.parametrize(("rule", "kind", "i", "ex"), CASES)
def test_static(tmp_path, rule, kind, i, ex):
    result = lint_code(tmp_path, ex.code, _settings(ex, rule))
    got = found(result)
    if kind == "invalid":
        expected = set(ex.expected())
        assert expected, f"INVALID example without `# expect:` marks in {rule.code}"
        assert got == expected, _explain(result, expected)
    else:
        assert got == set(), _explain(result, set())


def _explain(result, expected) -> str:
    lines = [f"expected {sorted(expected)}"]
    lines += [f"  got {d.span.start.line}: {d.code} {d.message}" for d in result.diagnostics]
    return "\n".join(lines)


DYNAMO_CASES = [
    c
    for c in CASES
    if c.values[3].proof and c.values[0].family in ("graph-break", "recompile", "compile-api")
]


@pytest.mark.dynamo
@pytest.mark.parametrize(("rule", "kind", "i", "ex"), DYNAMO_CASES)
def test_dynamo_proof(tmp_path, rule, kind, i, ex):
    from tests.helpers.dynamo_harness import run_example

    path = os.path.join(str(tmp_path), "example.py")
    with open(path, "w") as fh:
        fh.write(ex.code)
    dyn = dict(ex.settings.get("dynamo", {}))
    result = run_example(path, ex.code, ex.run, dyn)
    if ex.raises is not None:
        if rule.code == "TC308":
            import torch

            if torch.cuda.is_available():
                pytest.skip("TC308's hard error only happens on machines without CUDA")
        if kind == "invalid":
            assert ex.raises in result.error_text, f"expected {ex.raises!r}, got {result.error_text[:300]!r}"
        else:
            assert result.error is None, result.error_text
        return
    if ex.compiles is not None:
        most = max(result.compiles.values(), default=0)
        if kind == "invalid" and ex.compiles == 0:
            assert most == 0, f"expected no frame compile at all, saw {result.compiles}"
        elif kind == "invalid":
            assert most >= ex.compiles, (
                f"expected at least {ex.compiles} frame compiles, saw {result.compiles}"
            )
            if ex.guard is not None:
                assert any(ex.guard in r for r in result.recompile_reasons), (
                    f"expected guard {ex.guard!r} to fail, saw {result.recompile_reasons}"
                )
            if ex.wrappers is not None:
                assert result.wrappers >= ex.wrappers, (
                    f"expected {ex.wrappers} torch.compile calls, saw {result.wrappers}"
                )
        else:
            assert most <= ex.compiles, (
                f"expected at most {ex.compiles} frame compiles, saw {result.compiles} {result.recompile_reasons}"
            )
        assert result.error is None, result.error_text
        if rule.family in ("recompile", "compile-api"):
            return
    if kind == "valid":
        mine = [b for b in result.breaks if b.line is not None]
        assert not mine, f"VALID example broke: {[(b.line, b.gb_id, b.gb_type) for b in mine]}"
        assert result.error is None, result.error_text
        return
    assert rule.family == "graph-break", f"{rule.code}: a {rule.family} example needs `compiles` or `raises`"
    for line, code in ex.expected():
        code_rule = registry.get(code)
        gb_ids = ex.gb if (ex.gb and code == rule.code) else code_rule.gb_ids
        assert line in result.lines_with(tuple(gb_ids)), (
            f"no break with {gb_ids} at line {line}; saw "
            f"{[(b.line, b.gb_id, b.gb_type) for b in result.breaks]} error={result.error_text[:300]}"
        )


# -- fixes: the fixed source each INVALID example pins, proven like the examples themselves ----------
FIXED_CASES = [c for c in CASES if c.values[1] == "invalid" and c.values[3].fixed is not None]


def test_every_rule_with_a_fix_pins_its_output():
    """A rule that offers a fix that can be applied (a text edit or a codemod, not display-only)
    on one of its INVALID examples pins the fixed source on at least one (``Example.fixed``), which
    ``test_fix_output`` then checks byte for byte."""
    from tclint.rules.fixes import fix_allowed, offered

    missing = []
    for rule in registry.all_rules():
        if any(ex.fixed is not None for ex in rule.invalid):
            continue
        for ex in rule.invalid:
            with tempfile.TemporaryDirectory() as tmp:
                result = lint_code(tmp, ex.code, _settings(ex, rule))
            # the engine's own last-resort alternative for an in-loop break (the body moved into a
            # helper) is the same for every rule; its proof is in tests/rules/test_fix_alternatives.py
            own = [
                f
                for d in result.diagnostics
                if d.code == rule.code
                for f in offered(d)
                if f.codemod[:1] != ("extract-loop-body",)
            ]
            if any(fix_allowed(f, unsafe=True) for f in own):
                missing.append(rule.code)
                break
    assert missing == [], f"rules whose fix no INVALID example pins with fixed=: {missing}"


def _fixed_text(tmp_path, rule, ex) -> str:
    """The example after `--fix --unsafe-fixes`: each finding's first fix that applies (a codemod
    that does not fit the code is not offered, and the next alternative is the preferred one)."""
    from tclint.rules.fixes import apply_fixes, preferred, resolve_fixes

    result = lint_code(tmp_path, ex.code, _settings(ex, rule))
    diags = resolve_fixes([d for d in result.diagnostics if d.code == rule.code], lambda _path: ex.code)
    fixes = [f for f in (preferred(d, unsafe=True) for d in diags) if f is not None]
    assert fixes, f"{rule.code}: no fix offered on the example"
    new, n = apply_fixes(ex.code, fixes)
    assert n == len(fixes)
    return new


@pytest.mark.parametrize(("rule", "kind", "i", "ex"), FIXED_CASES)
def test_fix_output(tmp_path, rule, kind, i, ex):
    """The fix turns the example into exactly ``fixed``; once applied, the rule has nothing more to
    fix (applying fixes again is a no-op) and no longer reports the hazard."""
    from tclint.rules.fixes import apply_fixes, fix_allowed

    assert _fixed_text(tmp_path, rule, ex) == ex.fixed
    again = lint_code(tmp_path, ex.fixed, _settings(ex, rule))
    assert not [d for d in again.diagnostics if d.code == rule.code], _explain(again, set())
    # the fix creates nothing new to fix (another rule's finding the example already had, TC207
    # next to TC203's, keeps its own fix)
    had = {d.code for d in lint_code(tmp_path, ex.code, _settings(ex, rule)).diagnostics}
    more = [d.fix for d in again.diagnostics if d.code not in had and fix_allowed(d.fix, unsafe=True)]
    assert apply_fixes(ex.fixed, more)[0] == ex.fixed


@pytest.mark.dynamo
@pytest.mark.parametrize(("rule", "kind", "i", "ex"), [c for c in FIXED_CASES if c.values[3].proof])
def test_fix_dynamo_proof(tmp_path, rule, kind, i, ex):
    """Under torch 2.13 the fixed code no longer has the break / recompile / eager run the original
    had, and eagerly both compute the same values on the example's inputs."""
    from tests.helpers.dynamo_harness import eager_values, run_example, same_values

    orig_path = os.path.join(str(tmp_path), "example.py")
    fixed_path = os.path.join(str(tmp_path), "fixed.py")
    for path, text in ((orig_path, ex.code), (fixed_path, ex.fixed)):
        with open(path, "w") as fh:
            fh.write(text)
    dyn = dict(ex.settings.get("dynamo", {}))
    before = run_example(orig_path, ex.code, ex.run, dyn)
    after = run_example(fixed_path, ex.fixed, ex.run, dyn)
    assert after.error is None, after.error_text
    if ex.raises is not None:
        assert ex.raises in before.error_text
    elif ex.compiles == 0:
        assert max(before.compiles.values(), default=0) == 0
        assert max(after.compiles.values(), default=0) >= 1, (
            f"the fixed code compiles nothing: {after.compiles}"
        )
    elif ex.wrappers is not None:
        # a wrapper re-made per iteration (TC313): Dynamo compiles once either way
        assert before.wrappers >= ex.wrappers and after.wrappers == 1, (before.wrappers, after.wrappers)
        assert after.compiles == before.compiles, (before.compiles, after.compiles)
    elif ex.compiles is not None:
        assert before.recompile_reasons, "the original example does not recompile"
        assert not after.recompile_reasons, f"the fixed code still recompiles: {after.recompile_reasons}"
    else:
        gb_ids = ex.gb or rule.gb_ids
        assert before.lines_with(tuple(gb_ids)), "the original example does not break"
        assert not after.lines_with(tuple(gb_ids)), [(b.line, b.gb_id, b.gb_type) for b in after.breaks]
    want = eager_values(orig_path, ex.code, ex.run)
    got = eager_values(fixed_path, ex.fixed, ex.run)
    common = sorted(want.keys() & got.keys())
    assert common, "no value to compare: the example's `run` must leave a result in a variable"
    for name in common:
        assert same_values(want[name], got[name]), (
            f"`{name}` differs after the fix: {want[name]!r} vs {got[name]!r}"
        )
