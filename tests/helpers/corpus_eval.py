"""Measure tclint against the real TorchDynamo on a corpus: precision and recall of sites.

Graph breaks (issue 3): a *site* is (file, line).  The truth is what Dynamo reports when the
corpus's ``run()`` executes: every break event, attributed to the innermost frame in the corpus
file.  tclint's prediction is the set of lines with a graph-break-family (TC1xx) diagnostic.

Recompiles (issue 4): a *function* of the corpus is hazardous when running its scenario (10 or
more calls with distinct values) makes it compile 4 times or more: bounded changes settle within
3 compiles under the default dynamic policy (static, then dynamic, then a guard on a branch
outcome), unbounded ones recompile per value up to the limit (8); tclint's prediction is a TC2xx diagnostic (warning or
error; hints and info about bounded variants are not a hazard claim) inside that function or at a
call site of it.

``python -m tests.helpers.corpus_eval`` prints the tables; the test suite asserts the targets.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))

from tclint.rules import registry  # noqa: E402

from tests.helpers.lintutil import lint_tree  # noqa: E402

BREAKS_DIR = os.path.join(os.path.dirname(HERE), "fixtures", "corpus", "breaks")
RECOMPILES_DIR = os.path.join(os.path.dirname(HERE), "fixtures", "corpus", "recompiles")


@dataclass
class Score:
    predicted: set = field(default_factory=set)
    actual: set = field(default_factory=set)

    @property
    def tp(self) -> set:
        return self.predicted & self.actual

    @property
    def precision(self) -> float:
        return len(self.tp) / len(self.predicted) if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return len(self.tp) / len(self.actual) if self.actual else 1.0


def corpus_files(directory: str) -> list[str]:
    return sorted(f for f in os.listdir(directory) if f.endswith(".py") and not f.startswith("_"))


def static_break_sites(directory: str) -> set[tuple[str, int]]:
    result = lint_tree(directory)
    out = set()
    for d in result.diagnostics:
        rule = registry.get(d.code)
        if rule is not None and rule.family == "graph-break":
            out.add((os.path.basename(d.path), d.span.start.line))
    return out


def dynamic_break_sites(directory: str) -> set[tuple[str, int]]:
    from tests.helpers.dynamo_harness import run_example

    out = set()
    for name in corpus_files(directory):
        path = os.path.join(directory, name)
        with open(path) as fh:
            code = fh.read()
        result = run_example(path, code, "run()")
        if result.error is not None:
            raise RuntimeError(f"{name}: run() failed: {result.error_text}")
        for b in result.breaks:
            if b.line is not None:
                out.add((name, b.line))
    return out


def break_score(directory: str = BREAKS_DIR) -> Score:
    return Score(static_break_sites(directory), dynamic_break_sites(directory))


def _def_lines(path: str) -> dict[int, int]:
    """co_firstlineno (first decorator line) -> the `def` line, for every function in a file."""
    import ast

    with open(path) as fh:
        tree = ast.parse(fh.read())
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            out[first] = node.lineno
    return out


def dynamic_recompile_functions(directory: str) -> set[tuple[str, int]]:
    """(file, def line) of functions compiled more than twice by their scenario."""
    from tests.helpers.dynamo_harness import run_example

    out = set()
    for name in corpus_files(directory):
        path = os.path.join(directory, name)
        with open(path) as fh:
            code = fh.read()
        result = run_example(path, code, "run()")
        if result.error is not None:
            raise RuntimeError(f"{name}: run() failed: {result.error_text}")
        lines = _def_lines(path)
        for (co_name, first), count in result.frames.items():
            if co_name.startswith("torch_dynamo_resume"):
                continue
            if count >= 4:
                out.add((name, lines.get(first, first)))
    return out


def static_recompile_functions(directory: str) -> set[tuple[str, int]]:
    """(file, def line) of functions tclint flags with a TC2xx warning (or error)."""
    result = lint_tree(directory)
    project = result.project
    out = set()
    for d in result.diagnostics:
        rule = registry.get(d.code)
        if rule is None or rule.family != "recompile" or d.severity.value not in ("warning", "error"):
            continue
        target = d.extra.get("target")
        if target is not None and target in project.functions:
            ff, fn = project.functions[target]
        else:
            fn = _enclosing(project, d.path, d.span.start.line)
            if fn is None:
                continue
        out.add((os.path.basename(d.path), fn.loc.line))
    return out


def _enclosing(project, path: str, line: int):
    best = None
    for _key, (ff, fn) in project.functions.items():
        if ff.path == path and fn.loc.line <= line <= fn.loc.end_line:
            if best is None or fn.loc.line > best.loc.line:
                best = fn
    return best


def recompile_score(directory: str = RECOMPILES_DIR) -> Score:
    return Score(static_recompile_functions(directory), dynamic_recompile_functions(directory))


def dynamic_frame_compiles(directory: str) -> dict[tuple[str, int], int]:
    """(file, def line) -> frame compiles of every function compiled by its file's ``run()``."""
    from tests.helpers.dynamo_harness import run_example

    out: dict[tuple[str, int], int] = {}
    for name in corpus_files(directory):
        path = os.path.join(directory, name)
        with open(path) as fh:
            code = fh.read()
        result = run_example(path, code, "run()")
        if result.error is not None:
            raise RuntimeError(f"{name}: run() failed: {result.error_text}")
        lines = _def_lines(path)
        for (co_name, first), count in result.frames.items():
            if not co_name.startswith("torch_dynamo_resume"):
                key = (name, lines.get(first, first))
                out[key] = max(out.get(key, 0), count)
    return out


@dataclass
class VariantScore(Score):
    """Recompiling functions (issue 13): actual = compiled twice or more by the scenario; predicted =
    a predicted variant count other than 1 (``tclint variants``) or a TC2xx warning/error on the
    function.  ``unbounded_missed``: functions that hit the recompile limit (8 compiles) without a
    prediction of unbounded variants (or a TC2xx warning/error)."""

    unbounded_actual: set = field(default_factory=set)
    unbounded_predicted: set = field(default_factory=set)
    compiles: dict = field(default_factory=dict)

    @property
    def unbounded_missed(self) -> set:
        return self.unbounded_actual - self.unbounded_predicted


def variant_score(directory: str = RECOMPILES_DIR) -> VariantScore:
    from tclint.rules.variants import variants

    result = lint_tree(directory)
    flagged = static_recompile_functions(directory)
    predicted, unbounded = set(flagged), set(flagged)
    for v in variants(result.project).values():
        _ff, fn = result.project.functions[v.key]
        key = (os.path.basename(v.path), fn.loc.line)
        if v.count != 1:
            predicted.add(key)
        if v.count is None:
            unbounded.add(key)
    compiles = dynamic_frame_compiles(directory)
    actual = {k for k, n in compiles.items() if n >= 2}
    limit = {k for k, n in compiles.items() if n >= 8}
    return VariantScore(predicted, actual, limit, unbounded, compiles)


def main() -> int:
    score = break_score()
    print(
        f"graph-break sites: predicted {len(score.predicted)}, actual {len(score.actual)}, "
        f"true positives {len(score.tp)}"
    )
    print(f"precision {score.precision:.3f}  recall {score.recall:.3f}")
    for site in sorted(score.predicted - score.actual):
        print("  false positive:", site)
    for site in sorted(score.actual - score.predicted):
        print("  missed:", site)
    rscore = recompile_score()
    print(
        f"recompile-hazard functions: predicted {len(rscore.predicted)}, actual {len(rscore.actual)}, "
        f"true positives {len(rscore.tp)}"
    )
    print(f"precision {rscore.precision:.3f}  recall {rscore.recall:.3f}")
    for site in sorted(rscore.predicted - rscore.actual):
        print("  false positive:", site)
    for site in sorted(rscore.actual - rscore.predicted):
        print("  missed:", site)
    vscore = variant_score()
    print(
        f"recompiling functions (2+ compiles): predicted {len(vscore.predicted)}, actual {len(vscore.actual)}, "
        f"true positives {len(vscore.tp)}, hit the limit {len(vscore.unbounded_actual)} "
        f"(called unbounded: {len(vscore.unbounded_actual - vscore.unbounded_missed)})"
    )
    print(f"precision {vscore.precision:.3f}  recall {vscore.recall:.3f}")
    for site in sorted(vscore.predicted - vscore.actual):
        print("  false positive:", site, vscore.compiles.get(site))
    for site in sorted(vscore.actual - vscore.predicted):
        print("  missed:", site, vscore.compiles.get(site))
    for site in sorted(vscore.unbounded_missed):
        print("  limit hit, not called unbounded:", site)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
