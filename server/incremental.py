"""Re-analyse only the top-level statements an edit touched, and reuse the facts of the rest.

Why: the per-file walk (``tclint.rules.analysis``) costs several times an ``ast.parse`` of the whole
file, far over the lint-as-you-type budget on a 2,000-line model file.  But the walk is a sequence of
independent passes over top-level statements: what one ``def``/``class`` contributes to the file's
facts depends on the module-level statements (imports, assignments) and on the *names* bound by the
other definitions, not on their bodies.  So after an edit we analyse a *synthetic* text: the new
text in which every untouched top-level ``def``/``class`` is replaced by a one-line stub that binds
the same name (``def forward(): pass``), padded with blank lines so that every line keeps its number.
Module-level statements stay verbatim (they are cheap and they build the module's scope).  The
facts of the stubbed definitions are taken from the previous analysis, shifted by the number of
lines the edit added or removed, and merged back in walk order; compile-site ids (a per-file
counter) are renumbered as a full walk would number them.

Exactness is tested against a full analysis (``tests/server/test_incremental.py``).  Anything the
merge does not understand -- a field of ``FileFacts`` added later, facts that cannot be attributed
to one statement (``fake_registrations``, ``compile_functions``), config assignments inside
functions, a name defined twice at top level -- falls back to a full analysis, so the result is
never wrong, only slower.  Nothing here imports or executes the linted code.
"""

from __future__ import annotations

import ast
import bisect
import copy
import dataclasses
import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from tclint.rules.analysis.callctx import file_variant_facts, worth_a_look
from tclint.rules.engine import SourceText, analyze_source
from tclint.rules.facts import Candidate, FileFacts, Loc, VariantFacts
from tclint.rules.model import Edit, Position, Span
from tclint.rules.source import LineIndex

# FileFacts fields the merge knows how to combine.  Any other field (one added to the facts later,
# or one that cannot be attributed to a statement: `compile_functions`, `fake_registrations`,
# `api_calls`) must be empty in both the old and the synthetic facts, else: full analysis.
HANDLED_FIELDS = frozenset(
    {
        "path", "module", "is_package", "root",  # identity
        "functions", "classes", "candidates", "compile_sites", "disable_sites", "allow_in_graph",
        "module_calls", "custom_ops",  # attributed to a statement by their line
        "aliases", "module_vars", "int_globals",  # module level only: from the synthetic walk
        "star_imports", "exports",  # (`from m import *` is module level; `__all__`: the module body's)
        "dynamo_config",  # module level only, checked
        "line_count", "error", "error_code", "error_loc",
        "variant_facts",  # a whole-file pass: re-run on the new text (_variant_facts)
    }
)  # fmt: skip
_LAMBDA = re.compile(r"<lambda@(\d+)>")
_LINES = re.compile(r"\b(lines? )(\d+(?:, \d+)*)\b")  # "line 9", "lines 4, 7" in a message
_NUMBER = re.compile(r"\d+")
_HEAVY = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One top-level statement: lines ``start``..``end`` (1-based, decorators included)."""

    start: int
    end: int
    stub: str | None  # the one-line stand-in for a reusable def/class; None: always re-analysed
    name: str | None = None


@dataclass(slots=True)
class Snapshot:
    """The last good analysis of one document."""

    text: str
    lines: list[str]
    chunks: list[Chunk]
    facts: FileFacts
    context: tuple[str, ...] = ()  # module-level statements' text and the defined names, in order
    answers: dict[str, Any] | None = None  # a re-walk's: the return types it was told (ref -> answer)


@dataclass(slots=True)
class Outcome:
    facts: FileFacts
    snapshot: Snapshot | None  # None when the text does not parse (keep the previous one)
    mode: str  # "full" | "incremental" | "error"
    reanalysed_lines: int = 0
    fallback: str | None = None  # why an incremental attempt fell back to a full analysis
    changed: tuple[int, int, int] | None = None  # (first changed line, last old line, line delta)


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split where Python's tokenizer ends lines (\\n, \\r\\n, \\r)."""
    starts = LineIndex(text).starts
    ends = [*starts[1:], len(text)]
    out = [text[s:e] for s, e in zip(starts, ends, strict=True)]
    if out and out[-1] == "" and len(out) > 1:
        out.pop()
    return out


def diff_lines(old: list[str], new: list[str]) -> tuple[int, int]:
    """(common prefix, common suffix) line counts, not overlapping."""
    limit = min(len(old), len(new))
    p = 0
    while p < limit and old[p] == new[p]:
        p += 1
    s = 0
    while s < limit - p and old[len(old) - 1 - s] == new[len(new) - 1 - s]:
        s += 1
    return p, s


class IncrementalAnalyzer:
    """Analyses successive versions of one file; thread-confined (one per document)."""

    def __init__(
        self,
        path: str,
        module: str,
        is_package: bool,
        root: str,
        compiling_predicates: Iterable[str] = (),
        seeds: Any = None,
        rewalk: bool = False,
        copy: bool = False,
    ) -> None:
        """``rewalk``: this analyzer makes the type refinement's re-walks of the file with
        ``seeds`` (``tclint.rules.argflow``); ``analyze`` is then given the refinement's
        ``returns_of``, and a snapshot's definitions are reused only when every return type their
        walk was told is still the same (the walk is deterministic: same text, seeds and answers,
        same facts).  The merge then copies what it moves instead of moving the old facts in
        place: earlier re-walk results stay valid (they are kept for the text they are of).
        ``copy``: copy in the merge too (an open buffer's facts that a kept project holds: a
        line-moving edit must not move their positions, ``Root.set_open``)."""
        self.path = path
        self.module = module
        self.is_package = is_package
        self.root = root
        self.predicates = tuple(compiling_predicates)
        self.seeds = seeds
        self.rewalk = rewalk
        self.copy = copy or rewalk
        self.snapshot: Snapshot | None = None
        self.enabled = True
        self._returns_of: Callable[[str], Any] | None = None
        self._asked: dict[str, Any] | None = None
        self.unattributed = tuple(
            f.name for f in dataclasses.fields(FileFacts) if f.name not in HANDLED_FIELDS
        )

    # ------------------------------------------------------------------ entry
    def analyze(
        self, text: str, full: bool = False, returns_of: Callable[[str], Any] | None = None
    ) -> Outcome:
        """The facts of ``text``; ``returns_of``: a re-walk's answers about callees' return types
        (``rewalk`` analyzers only)."""
        lines = split_lines(text)
        snap = self.snapshot
        if self.rewalk:
            self._returns_of = returns_of
            self._asked = {}
            if snap is not None and not self._same_answers(snap):
                snap = None  # a callee's return type changed: any definition may read it
        try:
            if full or snap is None or not self.enabled:
                return self._full(text, lines, None)
            p, s = diff_lines(snap.lines, lines)
            delta = len(lines) - len(snap.lines)
            if p == len(snap.lines) and p == len(lines):
                return Outcome(snap.facts, snap, "incremental", 0, changed=None)
            try:
                return self._incremental(text, lines, snap, p, s, delta)
            except _Fallback as why:
                return self._full(text, lines, str(why))
        finally:
            self._returns_of = self._asked = None

    def adopt(self, text: str, facts: FileFacts, answers: dict[str, Any], donor: Snapshot | None) -> bool:
        """Take ``facts`` as the last analysis: a re-walk of ``text`` with this analyzer's seeds
        that was told ``answers`` (every reference it asked about, and maybe more), kept from an
        earlier edit (``tclint.rules.rewalks``) -- so that the next edit is diffed against
        ``text``, not against an older text this analyzer walked (an edit and its undo would
        otherwise make the next re-walk span both).  ``donor``: an analysis of the same text
        (the buffer's plain one) giving its statements; without it nothing is taken.  True when
        taken."""
        if not self.rewalk or donor is None or donor.text != text or facts.error is not None:
            return False
        snap = self.snapshot
        if snap is not None and snap.text == text and snap.facts is facts:
            return False
        self.snapshot = Snapshot(text, donor.lines, donor.chunks, facts, donor.context, dict(answers))
        return True

    def _same_answers(self, snap: Snapshot) -> bool:
        """Does ``returns_of`` still give every answer the snapshot's walk was given?  (Each is
        asked again: the caller records what this walk depends on.)"""
        returns_of = self._returns_of
        answers = snap.answers or {}
        if returns_of is None:
            return not answers
        same = True
        for ref, answer in answers.items():
            if returns_of(ref) != answer:
                same = False
        return same

    def _walk(self, text: str) -> FileFacts:
        """``analyze_source`` of ``text`` (with this re-walk's seeds and recorded answers)."""
        src = SourceText(self.path, text)
        if not self.rewalk:
            return analyze_source(src, self.module, self.is_package, self.root, self.predicates)
        returns_of, asked = self._returns_of, self._asked
        recording = None
        if returns_of is not None and asked is not None:

            def recording(ref: str) -> Any:
                found = asked[ref] = returns_of(ref)
                return found

        return analyze_source(
            src, self.module, self.is_package, self.root, self.predicates, self.seeds, recording
        )

    def _full(self, text: str, lines: list[str], why: str | None) -> Outcome:
        if self._asked is not None:
            self._asked.clear()  # only what this walk asks
        facts = self._walk(text)
        if facts.error is not None:
            return Outcome(facts, None, "error", len(lines), why)
        try:
            tree = _parse(text, self.path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):  # pragma: no cover - parsed above
            return Outcome(facts, None, "full", len(lines), why)
        chunks = [_chunk_of(stmt) for stmt in tree.body]
        answers = dict(self._asked) if self._asked is not None else None
        self.snapshot = Snapshot(text, lines, chunks, facts, _context(chunks, lines), answers)
        return Outcome(facts, self.snapshot, "full", len(lines), why)

    # ------------------------------------------------------------------ incremental
    def _dirty(self, chunks: list[Chunk], a: int, b: int) -> list[int]:
        """Indexes of the old chunks to re-analyse for a change of old lines ``a..b`` (``b = a - 1``:
        an insertion before line ``a``).  A change in the gap after a definition may extend its body,
        one in the gap before it may be its decorator or ``# tclint: compiled`` marker: the
        neighbours across a gap are re-analysed too.  Anything subtler (a line indented into the
        previous definition...) makes the synthetic text fail to parse, and we fall back."""
        starts = [c.start for c in chunks]

        def containing(line: int) -> int | None:
            i = bisect.bisect_right(starts, line) - 1
            return i if i >= 0 and chunks[i].start <= line <= chunks[i].end else None

        def prev_of(line: int) -> int | None:  # the last chunk ending before `line`
            i = bisect.bisect_left([c.end for c in chunks], line) - 1
            return i if i >= 0 else None

        def next_of(line: int) -> int | None:  # the first chunk starting after `line`
            i = bisect.bisect_right(starts, line)
            return i if i < len(chunks) else None

        dirty: set[int] = set()
        if b < a:  # pure insertion between old lines a-1 and a
            c = containing(a - 1)
            if c is not None and c == containing(a):
                return [c]
            for i in (prev_of(a), next_of(a - 1)):
                if i is not None:
                    dirty.add(i)
            return sorted(dirty)
        lo = bisect.bisect_left([c.end for c in chunks], a)
        hi = bisect.bisect_right(starts, b)
        dirty.update(range(lo, hi))
        if containing(a) is None and (i := prev_of(a)) is not None:
            dirty.add(i)
        if containing(b) is None and (i := next_of(b)) is not None:
            dirty.add(i)
        return sorted(dirty)

    def _incremental(
        self, text: str, lines: list[str], snap: Snapshot, p: int, s: int, delta: int
    ) -> Outcome:
        old_chunks = snap.chunks
        a = p + 1  # first changed old line
        b = len(snap.lines) - s  # last changed old line (a - 1: a pure insertion)
        dirty = self._dirty(old_chunks, a, b)
        dirty_start = min([old_chunks[i].start for i in dirty] + [a])
        dirty_end = max([old_chunks[i].end for i in dirty] + [b])
        dirty_set = set(range(dirty[0], dirty[-1] + 1)) if dirty else set()
        # the synthetic text: untouched defs/classes stubbed, every line keeps its number
        out = list(lines)
        stubbed: dict[int, int] = {}  # stub line (new numbering) -> old chunk index
        for i, c in enumerate(old_chunks):
            if i in dirty_set or c.stub is None:
                continue
            if c.end < dirty_start:
                start = c.start
            elif c.start > dirty_end:
                start = c.start + delta
            else:
                raise _Fallback("a reusable definition overlaps the edit")
            length = c.end - c.start + 1
            if start < 1 or start - 1 + length > len(out):
                raise _Fallback("a definition moved out of the text")
            out[start - 1] = c.stub + _ending(out[start - 1])
            for j in range(start, start - 1 + length):
                out[j] = _ending(out[j])
            stubbed[start] = i
        synthetic = "".join(out)
        try:
            tree = _parse(synthetic, self.path)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            # the edit does not parse: let a plain analysis say where (and agree with the CLI)
            return self._full(text, lines, None)
        stub_lines = sorted(stubbed)
        new_chunks: list[Chunk] = []
        for stmt in tree.body:
            start = _first_line(stmt)
            end = stmt.end_lineno or stmt.lineno
            k = bisect.bisect_left(stub_lines, start)
            if k < len(stub_lines) and stub_lines[k] <= end:
                if stub_lines[k] != start or end != start:
                    raise _Fallback("a stub merged with its neighbours")
                c = old_chunks[stubbed[start]]
                new_chunks.append(Chunk(start, start + c.end - c.start, c.stub, c.name))
            else:
                new_chunks.append(_chunk_of(stmt))
        _check_unique_names(tree)
        context = _context(new_chunks, out)
        if context != snap.context:
            # an import, a module-level assignment or a top-level name changed: every definition may
            # read it (aliases and the module scope are what the walk of a body sees of the rest)
            raise _Fallback("module-level code changed")
        syn = self._walk(synthetic)
        if syn.error is not None:
            raise _Fallback(f"the synthetic walk failed: {syn.error}")
        facts = self._merge(snap, syn, new_chunks, stubbed, dirty_end, delta, text, lines)
        answers = None
        if self._asked is not None:
            # the stubbed definitions' facts came from walks told ``snap.answers`` (asked again
            # above, unchanged); the re-analysed statements were told ``_asked``
            answers = {**(snap.answers or {}), **self._asked}
            self._asked.update(answers)
        self.snapshot = Snapshot(text, lines, new_chunks, facts, context, answers)
        reanalysed = sum(c.end - c.start + 1 for c in new_chunks if c.start not in stubbed)
        return Outcome(facts, self.snapshot, "incremental", reanalysed, changed=(a, b, delta))

    # ------------------------------------------------------------------ merge
    def _merge(  # noqa: C901 - long, not split yet (issue 16)
        self,
        snap: Snapshot,
        syn: FileFacts,
        new_chunks: list[Chunk],
        stubbed: dict[int, int],
        dirty_end: int,
        delta: int,
        text: str,
        snap_lines_new: list[str],
    ) -> FileFacts:
        """The facts of the new text: stubbed definitions' from ``snap`` (moved by ``delta`` when
        they lie below the edit), everything else from the synthetic walk ``syn``; in walk order."""
        old = snap.facts
        old_chunks = snap.chunks
        old_starts = [c.start for c in old_chunks]
        new_starts = [c.start for c in new_chunks]
        old_to_new = {old_i: bisect.bisect_right(new_starts, line) - 1 for line, old_i in stubbed.items()}

        def old_chunk_of(line: int) -> int | None:
            i = bisect.bisect_right(old_starts, line) - 1
            return i if i >= 0 and line <= old_chunks[i].end else None

        def new_index_of_old(line: int) -> int | None:
            i = old_chunk_of(line)
            return None if i is None else old_to_new.get(i)

        def new_index_of_syn(line: int) -> int | None:
            if line in stubbed:
                return None  # the stub's own (empty) facts
            return max(bisect.bisect_right(new_starts, line) - 1, 0)

        # facts that cannot be attributed to one statement: merge only when there are none
        for name in self.unattributed:
            if getattr(old, name) or getattr(syn, name):
                raise _Fallback(f"the file has {name}")
        for _value, loc in old.dynamo_config.values():
            i = old_chunk_of(loc.line)
            if i is not None and old_chunks[i].stub is not None:
                raise _Fallback("dynamo config assigned inside a definition")
        for _value, loc in syn.dynamo_config.values():
            i = new_index_of_syn(loc.line)
            if i is not None and new_chunks[i].stub is not None:
                raise _Fallback("dynamo config assigned inside a definition")

        def pick(
            old_items: Iterable[Any], syn_items: Iterable[Any], line_of: Callable[[Any], int]
        ) -> list[tuple[int, bool, Any]]:
            picked: list[tuple[int, bool, Any]] = []
            for item in old_items:
                idx = new_index_of_old(line_of(item))
                if idx is not None:
                    picked.append((idx, True, item))
            for item in syn_items:
                idx = new_index_of_syn(line_of(item))
                if idx is not None:
                    picked.append((idx, False, item))
            picked.sort(key=lambda t: t[0])  # stable: the walk order inside one statement is kept
            return picked

        # compile-site ids count sites in walk order over the whole file: renumber
        sites = pick(old.compile_sites, syn.compile_sites, lambda site: site.loc.line)
        old_ids: dict[str, str] = {}
        syn_ids: dict[str, str] = {}
        for n, (_idx, from_old, site) in enumerate(sites, start=1):
            new_id = f"{self.module}#{n}"
            if site.id != new_id:
                (old_ids if from_old else syn_ids)[site.id] = new_id

        def shift(line: int) -> int:
            return line + delta if line > dirty_end else line

        # strings naming lines below the edit: lambda qualnames, and messages or fix titles saying
        # ``line N`` (a candidate's message may name another line of its definition)
        lambdas = delta != 0 and (
            any("<lambda@" in k for k in old.functions) or any(_names_a_line(c) for c in old.candidates)
        )
        old_tr = _Transformer(
            shift if delta else None,
            _string_fn(self.module, old_ids, dirty_end, delta if lambdas else 0),
            copy=self.copy,
        )
        syn_tr = _Transformer(None, _string_fn(self.module, syn_ids, None, 0))

        def moved(from_old: bool, item: Any) -> Any:
            tr = old_tr if from_old else syn_tr
            return tr(item) if tr.active else item

        facts = FileFacts(path=self.path, module=self.module, is_package=self.is_package, root=self.root)
        facts.compile_sites = [moved(o, x) for _i, o, x in sites]
        for name in ("candidates", "disable_sites", "allow_in_graph", "module_calls"):
            items = pick(getattr(old, name), getattr(syn, name), lambda x: x.loc.line)
            setattr(facts, name, [moved(o, x) for _i, o, x in items])
        for name in ("functions", "classes"):
            items = pick(getattr(old, name).items(), getattr(syn, name).items(), lambda kv: kv[1].loc.line)
            setattr(facts, name, dict(moved(o, kv) for _i, o, kv in items))
        ops = pick(old.custom_ops.items(), syn.custom_ops.items(), lambda kv: kv[1].line)
        facts.custom_ops = dict(moved(o, kv) for _i, o, kv in ops)
        facts.aliases = moved(False, dict(syn.aliases))
        facts.module_vars = moved(False, dict(syn.module_vars))
        facts.int_globals = dict(syn.int_globals)
        facts.star_imports, facts.exports = syn.star_imports, syn.exports  # (strings only)
        facts.dynamo_config = moved(False, dict(syn.dynamo_config))
        for name in self.unattributed:
            setattr(facts, name, copy.copy(getattr(syn, name)))
        facts.line_count = max(len(snap_lines_new), 1)
        facts.variant_facts = _variant_facts(text, self.path, self.module)
        return facts


def _variant_facts(text: str, path: str, module: str) -> VariantFacts | None:
    """The call contexts of the whole new text, as a full walk records them: the pass is cheap
    (one parse and one tree walk, only for a file that mentions a context word), while
    attributing its keys to statements would need the merge to know every kind it records."""
    if not worth_a_look(text):
        return None
    return file_variant_facts(_parse(text, path), LineIndex(text).char_col, module, text)


def _parse(text: str, path: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings of the user's code are not ours to show
        return ast.parse(text, filename=path)


class _Fallback(Exception):
    """The incremental path cannot vouch for its result: analyse the whole file."""


def _ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith(("\n", "\r")):
        return line[-1]
    return ""


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None) or ()
    return min([stmt.lineno, *(d.lineno for d in decorators)])


def _binds_module_names(stmt: ast.ClassDef) -> bool:
    """A class body shares the module's alias table: an import there changes module-level names."""
    for sub in stmt.body:
        if isinstance(sub, (ast.Import, ast.ImportFrom)):
            return True
        if isinstance(sub, ast.ClassDef) and _binds_module_names(sub):
            return True
        if isinstance(sub, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            return True  # conservative: nested blocks of a class body may import
    return False


def _chunk_of(stmt: ast.stmt) -> Chunk:
    start = _first_line(stmt)
    end = stmt.end_lineno or stmt.lineno
    stub = None
    name = None
    if isinstance(stmt, ast.ClassDef):
        name = stmt.name
        if not _binds_module_names(stmt):
            stub = f"class {stmt.name}: pass"
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        name = stmt.name
        stub = f"def {stmt.name}(): pass"
    return Chunk(start, end, stub, name)


def _context(chunks: list[Chunk], lines: list[str]) -> tuple[str, ...]:
    """What the walk of one definition's body can see of the rest of the file: the text of the
    module-level statements (not their position) and the names of the definitions, in order."""
    out = []
    for c in chunks:
        if c.stub is not None:
            out.append(c.stub)
        else:
            out.append("".join(line.rstrip("\r\n") + "\n" for line in lines[c.start - 1 : c.end]))
    return tuple(out)


def _top_level_names(body: list[ast.stmt], out: list[str]) -> None:
    for stmt in body:
        if isinstance(stmt, _HEAVY):
            out.append(stmt.name)
        elif isinstance(stmt, (ast.If, ast.Try)):
            for sub in (stmt.body, getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])):
                _top_level_names(sub, out)
            for handler in getattr(stmt, "handlers", []):
                _top_level_names(handler.body, out)


def _check_unique_names(tree: ast.Module) -> None:
    names: list[str] = []
    _top_level_names(tree.body, names)
    if len(names) != len(set(names)):
        raise _Fallback("a name is defined twice at top level")


def _string_fn(
    module: str, ids: dict[str, str], after: int | None, delta: int
) -> Callable[[str], str] | None:
    """Renumber compile-site ids, lambda qualnames (``<lambda@LINE>``) and the lines a message
    names (``line N``, ``lines N, M``) inside strings: a line below ``after`` moves by ``delta``."""
    site = re.compile(r"(?<![\w.])" + re.escape(module) + r"#\d+") if ids else None
    shift_lambdas = bool(delta) and after is not None
    last = after if after is not None else 0

    def moved(m: re.Match[str]) -> str:
        return str(int(m.group(0)) + delta if int(m.group(0)) > last else m.group(0))

    def fn(s: str) -> str:
        if site is not None and "#" in s:
            s = site.sub(lambda m: ids.get(m.group(0), m.group(0)), s)
        if shift_lambdas and "<lambda@" in s:
            s = _LAMBDA.sub(
                lambda m: f"<lambda@{int(m.group(1)) + delta if int(m.group(1)) > last else m.group(1)}>", s
            )
        if shift_lambdas and "line" in s:
            s = _LINES.sub(lambda m: m.group(1) + _NUMBER.sub(moved, m.group(2)), s)
        return s

    return fn if (site is not None or shift_lambdas) else None


def _names_a_line(c: Candidate) -> bool:
    """Does a candidate's message, or the title of one of its fixes, say ``line N``?  (Only then
    are the strings of the reused facts rewritten: visiting every string costs.)"""
    fixes = c.fix if isinstance(c.fix, tuple) else () if c.fix is None else (c.fix,)
    return "line " in c.message or any("line " in fix.message for fix in fixes)


_NO_CHANGE = (type(None), bool, int, float, bytes)
_NO_CHANGE_OR_STR = (*_NO_CHANGE, str)
_TUPLES: dict[type, bool] = {tuple: False}  # tuple types met -> named (rebuilt with ``_make``)


class _Transformer:
    """Moves line numbers (in place: the old facts are discarded after the merge) and rewrites
    strings; frozen records (``Fix``, ``Position``, named tuples) are rebuilt only where they change.
    Each object is visited once, so a ``Loc`` reachable twice is moved once."""

    def __init__(
        self, line_fn: Callable[[int], int] | None, str_fn: Callable[[str], str] | None, copy: bool = False
    ) -> None:
        self.line_fn = line_fn
        self.str_fn = str_fn
        self.active = line_fn is not None or str_fn is not None
        self._moved: set[int] = set()  # ids of the Locs / records already moved (moved once only)
        self.copy = copy  # leave the old objects as they are: what changes is a new object
        self._copies: dict[int, Any] = {}  # copy mode: id of an old mutable object -> its result

    def _loc(self, loc: Loc) -> None:
        key = id(loc)
        if key in self._moved or self.line_fn is None:
            return
        self._moved.add(key)
        loc.line = self.line_fn(loc.line)
        loc.end_line = self.line_fn(loc.end_line)

    def __call__(self, obj: Any) -> Any:  # noqa: C901 - one dispatch over the shapes facts take
        t = type(obj)
        if self.copy and t not in _NO_CHANGE and t is not str:
            return self._copied(obj, t)
        if t in _NO_CHANGE:
            return obj
        if t is str:
            return self.str_fn(obj) if self.str_fn is not None else obj
        if t is Loc:
            self._loc(obj)
            return obj
        if t is Position:
            return obj if self.line_fn is None else Position(self.line_fn(obj.line), obj.column)
        if t is Span:
            if self.line_fn is None:
                return obj
            f = self.line_fn
            return Span(
                Position(f(obj.start.line), obj.start.column), Position(f(obj.end.line), obj.end.column)
            )
        if t is Edit:
            span = self(obj.span)
            return obj if span is obj.span else Edit(span, obj.content)
        if t is list:
            for i, x in enumerate(obj):
                tx = type(x)
                if tx is Loc:
                    self._loc(x)
                elif tx not in _NO_CHANGE:
                    y = self(x)
                    if y is not x:
                        obj[i] = y
            return obj
        if t is dict:
            changed_key = False
            items = []
            for k, v in obj.items():
                nk, nv = self(k), self(v)
                changed_key = changed_key or nk is not k
                items.append((k, nk, v, nv))
            if changed_key:
                return {nk: nv for _k, nk, _v, nv in items}
            for k, _nk, v, nv in items:
                if nv is not v:
                    obj[k] = nv
            return obj
        if isinstance(obj, tuple):
            changed: list[Any] | None = None
            for i, x in enumerate(obj):
                tx = type(x)
                if tx is Loc:
                    self._loc(x)  # in place: the tuple itself does not change
                    continue
                if tx in _NO_CHANGE or (tx is str and self.str_fn is None):
                    continue
                y = self(x)
                if y is not x:
                    if changed is None:
                        changed = list(obj)
                    changed[i] = y
            if changed is None:
                return obj
            return t._make(changed) if hasattr(t, "_make") else t(changed)
        if t is set or t is frozenset:
            new_set = [self(x) for x in obj]
            if any(a is not b for a, b in zip(new_set, obj, strict=True)):
                return t(new_set)
            return obj
        info = _dataclass_info(t)
        if info is None:
            return obj
        names, line_names, frozen = info
        return self._record(obj, names if self.str_fn is not None else line_names, frozen)

    def _copied(self, obj: Any, t: type) -> Any:  # noqa: C901 - the shapes of ``__call__``, copied
        """Copy mode: ``obj`` moved as ``__call__`` moves it, into new objects where anything
        changes; each old mutable object (a ``Loc`` reachable twice...) has one result.  (Only
        the old objects, all alive during the merge, are remembered by id; tuples are not.)"""
        copies = self._copies
        key = id(obj)
        found = copies.get(key)
        if found is not None:
            return found
        skip = _NO_CHANGE if self.str_fn is not None else _NO_CHANGE_OR_STR
        new: Any = obj
        if t is Loc:
            f = self.line_fn
            if f is not None:
                new = Loc(f(obj.line), obj.col, f(obj.end_line), obj.end_col)
        elif t is Position or t is Span or t is Edit:
            self.copy = False  # immutable records: ``__call__`` builds new ones already
            try:
                new = self(obj)
            finally:
                self.copy = True
            return new
        elif t is list or t is set or t is frozenset or t in _TUPLES:
            items = None
            for i, x in enumerate(obj):
                tx = type(x)
                if tx in skip:
                    continue
                y = self.str_fn(x) if tx is str else self._copied(x, tx)  # type: ignore[misc]
                if y is not x:
                    if items is None:
                        items = list(obj)
                    items[i] = y
            if items is not None:
                new = items if t is list else t._make(items) if _TUPLES.get(t) else t(items)  # type: ignore[attr-defined]
            if t in _TUPLES:
                return new
        elif t is dict:
            pairs = None
            for i, (k, v) in enumerate(obj.items()):
                tk, tv = type(k), type(v)
                nk = k if tk in skip else self.str_fn(k) if tk is str else self._copied(k, tk)  # type: ignore[misc]
                nv = v if tv in skip else self.str_fn(v) if tv is str else self._copied(v, tv)  # type: ignore[misc]
                if nk is not k or nv is not v:
                    if pairs is None:
                        pairs = list(obj.items())
                    pairs[i] = (nk, nv)
            if pairs is not None:
                new = dict(pairs)
        elif isinstance(obj, tuple):
            _TUPLES[t] = hasattr(t, "_make")
            return self._copied(obj, t)
        else:
            info = _dataclass_info(t)
            if info is not None:
                names, line_names, _frozen = info
                new = self._record(obj, names if self.str_fn is not None else line_names, True)
        copies[key] = new
        return new

    def _record(self, obj: Any, names: tuple[str, ...], frozen: bool) -> Any:
        changes = {}
        for name in names:
            value = getattr(obj, name)
            tv = type(value)
            if tv is Loc and not self.copy:
                self._loc(value)  # in place
                continue
            if tv in _NO_CHANGE:
                continue
            new = self(value)
            if new is not value:
                changes[name] = new
        if type(obj) is Candidate and self.line_fn is not None and id(obj) not in self._moved:
            self._moved.add(id(obj))
            if obj.loop_line is not None:
                changes["loop_line"] = self.line_fn(obj.loop_line)
            if obj.user_ctx is not None:
                changes["user_ctx"] = self.line_fn(obj.user_ctx)
        if not changes:
            return obj
        if frozen:  # rebuild without copy.copy (slow for slotted dataclasses)
            new = object.__new__(type(obj))
            for name in _dataclass_info(type(obj))[0]:  # type: ignore[index]
                object.__setattr__(new, name, changes[name] if name in changes else getattr(obj, name))
            return new
        for name, value in changes.items():
            setattr(obj, name, value)
        return obj


_DC_INFO: dict[type, tuple[tuple[str, ...], tuple[str, ...], bool] | None] = {}
# Field annotations made only of these names cannot hold a line number (``int`` fields that do, such
# as ``Candidate.loop_line``, are moved explicitly); fields with any other type are visited.
_LINE_FREE_NAMES = frozenset(
    {
        "str",
        "bool",
        "int",
        "float",
        "None",
        "Ty",
        "tuple",
        "set",
        "list",
        "dict",
        "frozenset",
        "Applicability",
        "Severity",
        "FrameEffect",
        "Requirement",
    }
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def _dataclass_info(t: type) -> tuple[tuple[str, ...], tuple[str, ...], bool] | None:
    """(all field names, fields that may hold a line, frozen) of a dataclass type; None for
    anything else (left untouched)."""
    try:
        return _DC_INFO[t]
    except KeyError:
        pass
    info = None
    if dataclasses.is_dataclass(t):
        params = getattr(t, "__dataclass_params__", None)
        fields = dataclasses.fields(t)
        names = tuple(f.name for f in fields)
        line_names = tuple(
            f.name
            for f in fields
            if not (isinstance(f.type, str) and set(_IDENT.findall(f.type)) <= _LINE_FREE_NAMES)
        )
        info = (names, line_names, bool(params is not None and params.frozen))
    _DC_INFO[t] = info
    return info


__all__ = ["Chunk", "IncrementalAnalyzer", "Outcome", "Snapshot", "diff_lines", "split_lines"]
