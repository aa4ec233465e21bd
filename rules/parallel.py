"""Per-file analysis: from the cache, in this process, or in worker processes for large trees.

Workers receive (path, bytes-free description) and read the file themselves, so only the
resulting facts cross the process boundary, as the cache's plain form in ``marshal`` bytes with
every string interned (``plaindata.interned``): loading them interns the strings again, so the
names that recur across files are one object each in the main process, which holds every file's
facts for the project pass (pickled facts would hold one copy per occurrence).  Cached files
never reach a worker.
"""

from __future__ import annotations

import marshal
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from tclint.rules.facts import FileFacts

# Below about this much source (~25k lines), one process is faster than a pool: measured on
# the 2-core machines here, process start-up and result transfer outweigh the parallel parse.
PARALLEL_MIN_BYTES = 1_000_000


def _work(item: tuple[str, int, tuple[str, ...]]) -> bytes | FileFacts:
    from tclint.rules.discovery import module_for
    from tclint.rules.engine import analyze_source, read_source

    path, max_size, predicates = item
    src = read_source(path, None, max_size)
    module, is_package, root = module_for(path)
    return to_transport(analyze_source(src, module, is_package, root, predicates))


def to_transport(facts: FileFacts) -> bytes | FileFacts:
    """How a worker sends one file's facts: ``marshal`` bytes of their plain form with interned
    strings, or the facts themselves (pickled) when they hold a value the plain form cannot."""
    from tclint.rules.plaindata import encode_facts
    from tclint.rules.sealed import MARSHAL_VERSION

    try:
        return marshal.dumps(encode_facts(facts), MARSHAL_VERSION)  # encode_facts interns the strings
    except (TypeError, ValueError):
        return facts


def from_transport(sent: bytes | FileFacts) -> FileFacts:
    """The facts ``to_transport`` sent (the bytes come from this run's own worker processes)."""
    if isinstance(sent, FileFacts):
        return sent
    from tclint.rules.plaindata import decode_facts

    return decode_facts(marshal.loads(sent))


def analyze_many(linter: Any, todo: list[tuple[Any, Any]], jobs: int) -> list[FileFacts]:
    """Every file's facts, in ``todo``'s order: cached ones first, then the rest analysed here or,
    for large trees and ``jobs`` > 1, in a pool of worker processes."""
    results: list[FileFacts | None] = [None] * len(todo)
    pending: list[tuple[int, tuple[str, int, tuple[str, ...]]]] = []
    keys: dict[int, Any] = {}
    with linter.gc_paused():
        found = [linter.cached_facts(src, settings) for src, settings in todo]
    for i, (src, settings) in enumerate(todo):
        key, hit = found[i]
        if key is not None:
            keys[i] = key
        if hit is not None:
            results[i] = hit
            continue
        if (
            src.read_error is not None
            or src.cells is not None
            or os.path.abspath(src.path) in getattr(linter, "_overridden", set())
        ):
            results[i] = linter.compute_facts(src, settings, key)
            continue
        pending.append((i, (src.path, settings.max_file_size, tuple(settings.compiling_predicates))))
    if jobs <= 1 or len(pending) < 2 or sum(todo[i][0].size for i, _ in pending) < PARALLEL_MIN_BYTES:
        # One process asked for, or few files left to analyse (an edit in a cached tree): starting
        # and forking workers from a process that holds the project's facts costs more than
        # analysing them here.
        for i, _item in pending:
            results[i] = linter.compute_facts(todo[i][0], todo[i][1], keys.get(i))
        pending = []
    if pending:
        # big files first, so the pool does not wait on one straggler at the end
        pending.sort(key=lambda p: -todo[p[0]][0].size)
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for (i, _item), sent in zip(
                pending, pool.map(_work, [p[1] for p in pending], chunksize=8), strict=True
            ):
                facts = from_transport(sent)
                facts.path = todo[i][0].path
                results[i] = facts
                if i in keys:
                    linter.cache.put_facts(keys[i], facts)
    return [r for r in results if r is not None]
