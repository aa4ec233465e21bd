"""The rule framework: what a rule declares, how it sees code, and the examples that prove it.

A rule is a class in ``tclint.rules.catalog`` (one per file).  Its docstring is its documentation
(fixed sections, rendered by ``tclint rule CODE``, hover and the generated reference); its VALID and
INVALID examples are run by the test suite twice: statically (tclint must flag exactly the lines
marked ``# expect: CODE``) and under the real TorchDynamo (the break must land on those lines with
one of the rule's GB ids; VALID code must compile without one).

Rules see each file once, during the single walk in ``tclint.rules.analysis`` (its rule API: ``analysis.api``): they implement
``visit_<NodeClass>(node, ctx)`` for generic nodes, or list call targets in ``CALLS`` (qualified
names) / ``METHODS`` (method names) and implement ``check_call``.  They report *candidates*; the
project pass keeps those in compiled regions and calls ``finalize`` with the project's settings.
Cross-file rules implement ``project_check(project)`` and yield ``self.report(...)`` for each
finding: the one place that fills in the rule's code, name, reference link, ``noqa`` line, the
region's call chain and the hot-path note.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from tclint.rules.model import (
    Applicability,
    Diagnostic,
    Fix,
    RelatedLocation,
    Severity,
    Span,
    gb_url,
    rule_doc_url,
)
from tclint.rules.ruletypes import Family as Family  # re-exported: rules import it from here
from tclint.rules.ruletypes import Lifecycle as Lifecycle

if TYPE_CHECKING:
    from tclint.rules.engine import FinalizeEnv
    from tclint.rules.facts import Candidate, Loc
    from tclint.rules.project import Project, Region

DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "References")
EXPECT_MARK = re.compile(r"#\s*expect:\s*((?:TC\d{3}[,\s]*)+)")


@dataclass(frozen=True)
class Example:
    """A code sample for docs and proof.

    ``run`` holds statements executed after the code (calls into the compiled functions) by the
    Dynamo proof.  ``settings`` are tclint settings for the static check (e.g.
    ``{"dynamo": {"capture_scalar_outputs": True}}``); the same dynamo settings are applied to
    ``torch._dynamo.config`` for the proof.  ``gb`` overrides the GB id expected at the marked lines;
    ``compiles`` bounds the frame compiles (INVALID: at least, VALID: at most) for recompile rules;
    ``raises`` names the exception a hard-error example must raise under compile; ``wrappers`` is how
    many ``torch.compile(...)`` calls the run of an INVALID example makes at least (a wrapper re-made
    per iteration; its fixed code makes one); ``guard`` is text
    that one of the measured recompile reasons must contain (the guard an INVALID example fails).  ``fixed`` is
    the source after the rule's fix on an INVALID example (applied with unsafe fixes allowed): the
    suite checks the fix produces exactly it, and runs it under Dynamo (the hazard is gone) and
    eagerly next to the original (same values); a rule with a non-display-only fix needs one.
    """

    code: str
    run: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    gb: tuple[str, ...] = ()
    compiles: int | None = None
    raises: str | None = None
    title: str = ""
    proof: bool = True  # False: a static-only example (e.g. needs CUDA); say why in title
    guard: str | None = (
        None  # INVALID recompile examples: text of the guard that must fail (a recompile reason)
    )
    fixed: str | None = None
    wrappers: int | None = None  # INVALID: at least this many torch.compile(...) calls in the run

    def expected(self) -> list[tuple[int, str]]:
        """(line, code) pairs marked with ``# expect: CODE`` in the example source."""
        out = []
        for lineno, line in enumerate(self.code.splitlines(), start=1):
            match = EXPECT_MARK.search(line)
            if match:
                for code in re.findall(r"TC\d{3}", match.group(1)):
                    out.append((lineno, code))
        return out


def hot_note(region: Region) -> str | None:
    """The note a finding in ``region`` carries when the region runs many times (a loop, a
    training step): the same words for candidates (``engine.severity_and_heat``) and for
    cross-file findings (``Rule.report(hot=True)``)."""
    return f"hot: runs in {region.multiplier}" if region.multiplier else None


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    family: ClassVar[Family]
    gb_ids: ClassVar[tuple[str, ...]] = ()
    lifecycle: ClassVar[Lifecycle] = Lifecycle.STABLE
    default_severity: ClassVar[Severity] = Severity.WARNING
    region_only: ClassVar[bool] = True  # only reported inside compiled regions
    # the torch releases whose behaviour the rule describes (measured on 2.13; Dynamo's handling of
    # these constructs is long-standing, GB ids exist from 2.8); `target-torch-version` outside this
    # range turns the rule off
    torch_versions: ClassVar[str] = ">=2.1"
    fix_applicability: ClassVar[Applicability | None] = None
    valid: ClassVar[tuple[Example, ...]] = ()
    invalid: ClassVar[tuple[Example, ...]] = ()
    CALLS: ClassVar[frozenset[str]] = frozenset()
    METHODS: ClassVar[frozenset[str]] = frozenset()

    def check_call(self, node: Any, ctx: Any, qualified: str | None, method: str | None) -> None:
        """Called for calls whose qualified name is in CALLS or whose method name is in METHODS."""

    def finalize(self, cand: Candidate, env: FinalizeEnv) -> Candidate | None:
        """Adjust a candidate for the project's settings; return None to drop it."""
        return cand

    def project_check(self, project: Project) -> Iterable[Diagnostic]:
        """Cross-file checks that need the whole project (call sites, disabled callees, ...):
        yield ``self.report(...)`` for each finding."""
        return ()

    def report(
        self,
        path: str,
        loc: Loc,
        message: str,
        *,
        project: Project | None = None,
        region: Region | None = None,
        hot: bool = False,
        severity: Severity | None = None,
        gb_ids: tuple[str, ...] = (),
        url: str | None = None,
        related: Iterable[RelatedLocation] = (),
        help: str | None = None,
        fix: Fix | tuple[Fix, ...] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Diagnostic:
        """A finding of this rule at ``loc`` in ``path`` (a cross-file rule's ``project_check``).

        ``region`` (with ``project``): the compiled region the finding is in; its call chain comes
        first in ``related`` and its text in ``extra["region"]``, and ``hot=True`` adds the
        "(hot: runs in ...)" note when the region runs many times.  ``severity`` defaults to the
        rule's ``default_severity`` (the user's per-code settings apply later, in the engine);
        ``url`` to the first GB id's page, else the rule's own page.  The ``noqa`` line is the
        first line of ``loc``.  ``fix``: one fix, or alternatives with the preferred one first."""
        chain: tuple[RelatedLocation, ...] = ()
        fields: dict[str, Any] = {}
        if region is not None:
            if project is None:
                raise TypeError("report(region=...) needs project=")
            chain = project.chain_related(region)
            fields["region"] = project.chain_text(region)
            note = hot_note(region) if hot else None
            if note is not None:
                message = f"{message} ({note})"
        if extra:
            fields.update(extra)
        fixes = fix if isinstance(fix, tuple) else () if fix is None else (fix,)
        return Diagnostic(
            code=self.code,
            name=self.name,
            message=message,
            path=path,
            span=Span.of(loc.line, loc.col, loc.end_line, loc.end_col),
            severity=self.default_severity if severity is None else severity,
            gb_ids=gb_ids,
            fix=fixes[0] if fixes else None,
            alternatives=fixes[1:],
            related=(*chain, *related),
            noqa_line=loc.line,
            url=url if url is not None else gb_url(gb_ids[0]) if gb_ids else self.doc_url(),
            help=help,
            extra=fields,
        )

    # -- documentation -------------------------------------------------------------------------

    @classmethod
    def doc_url(cls) -> str:
        """The rule's reference page (shipped in the package)."""
        return rule_doc_url(cls.code)

    @classmethod
    def doc(cls) -> str:
        import inspect

        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        sections: dict[str, str] = {}
        current = None
        lines: list[str] = []
        for line in cls.doc().splitlines():
            if line.startswith("## "):
                if current is not None:
                    sections[current] = "\n".join(lines).strip()
                current = line[3:].strip()
                lines = []
            elif current is not None:
                lines.append(line)
        if current is not None:
            sections[current] = "\n".join(lines).strip()
        return sections

    @classmethod
    def applies_to(cls, version: str) -> bool:
        """Whether `target-torch-version` falls in ``torch_versions`` (">=2.1,<3" style)."""
        return version_in(version, cls.torch_versions)

    @classmethod
    def preview(cls) -> bool:
        return cls.lifecycle is Lifecycle.PREVIEW


def _vtuple(text: str) -> tuple[int, ...]:
    out = []
    for part in text.strip().split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits) if digits else 0)
    while len(out) < 3:
        out.append(0)
    return tuple(out[:3])


def version_in(version: str, spec: str) -> bool:
    """A minimal PEP 440-style check for clauses like ">=2.6", "<3", "==2.13" joined by commas
    (anything after a space is a comment)."""
    target = _vtuple(version)
    for clause in spec.split(" ", 1)[0].split(","):
        clause = clause.strip()
        if not clause:
            continue
        for op in (">=", "<=", "==", "!=", ">", "<"):
            if clause.startswith(op):
                bound = _vtuple(clause[len(op) :])
                ok = {
                    ">=": target >= bound,
                    "<=": target <= bound,
                    "==": target == bound,
                    "!=": target != bound,
                    ">": target > bound,
                    "<": target < bound,
                }[op]
                if not ok:
                    return False
                break
    return True
