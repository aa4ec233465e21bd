"""Re-walks of the type refinement, kept across project passes: a file walked again with the same
inputs is not walked again.

The refinement (``tclint.rules.argflow``) walks a file again with what the project pass learnt:
the parameter types flowed into its functions (*seeds*) and, through ``returns_of``, the return
types of the project functions it calls.  That walk is a pure function of the file's bytes (plus
module, package, import root and compiling predicates: the facts cache key), the seeds and the
answers ``returns_of`` gave.  So its result is kept under the facts key and the seeds, with the
list of references the walk asked about and their answers; a later pass (the next edit in the
language server, the next ``tclint check`` when a cache is at hand) that gives the same seeds and
the same answers to the same questions gets the same facts without walking.  The walk is
deterministic, so equal answers to every question it asked mean it would ask nothing else and
produce the same result: reuse is exact, never an approximation.

In memory (one ``Rewalks`` per language-server root, or per command-line run) the last few
results per key are kept; with a ``Cache`` they are also stored beside the per-file facts, as the
same signed plain data (``plaindata``/``sealed``): the facts under a key that covers the answers,
and a sealed index per key and seeds listing the references asked (so the answers can be
recomputed before the lookup).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import Any

from tclint.rules.facts import FileFacts

ReturnsOf = Callable[[str], Any]
KEEP = 4  # results kept in memory per (file, seeds): the edit loop alternates between few states
KEEP_KEYS = 8  # (file text, seeds) keys kept in memory per path: an edited buffer makes a new one per edit
INDEX_KIND = "rewalk-index"


def _digest(*parts: str) -> str:
    return hashlib.blake2b("|".join(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _answers(refs: tuple[str, ...], returns_of: ReturnsOf) -> str:
    return repr([(ref, returns_of(ref)) for ref in refs])


class Rewalks:
    """Re-walk results by (facts key, seeds, answers); ``cache``: also stored there."""

    def __init__(self, cache: Any = None, store: bool = True) -> None:
        """``store``: new results are also written to ``cache`` (False: only read from it, as
        the language server does with the command line's)."""
        self.cache = cache
        self.store = store
        self._memory: dict[str, list[tuple[tuple[str, ...], str, FileFacts]]] = {}
        self._keys: dict[str, list[str]] = {}  # path -> its keys in ``_memory``, newest first
        self._pending_index: dict[str, list[str]] = {}
        self.hits = 0
        self.walks = 0

    def walk(
        self,
        key: str | None,
        path: str,
        seeds: Any,
        returns_of: ReturnsOf,
        compute: Callable[[ReturnsOf], FileFacts | None],
    ) -> FileFacts | None:
        """The facts of ``compute(returns_of)`` (the file walked with ``seeds``), reused when this
        file (``key``: its facts cache key; None: not kept) was walked before with the same seeds
        and the same answers.  ``path``: the file's path (a stored result gets it)."""
        if key is None:
            return compute(returns_of)
        base = _digest(key, repr(seeds))
        for refs, answers, facts in self._memory.get(base, ()):
            if _answers(refs, returns_of) == answers:
                self.hits += 1
                return facts
        stored = self._stored(base, path, returns_of)
        if stored is not None:
            self.hits += 1
            self._remember(base, *stored, path)
            return stored[2]
        asked: list[str] = []

        def recording(ref: str) -> Any:
            asked.append(ref)
            return returns_of(ref)

        self.walks += 1
        walked = compute(recording)
        if walked is None:
            return None
        facts = walked
        refs = tuple(sorted(set(asked)))
        answers = _answers(refs, returns_of)
        self._remember(base, refs, answers, facts, path)
        if self.store and self.cache is not None and getattr(self.cache, "_key", None) is not None:
            self.cache.put_facts(_digest(base, answers), facts)
            self._pending_index[base] = list(refs)
        return facts

    def _remember(self, base: str, refs: tuple[str, ...], answers: str, facts: FileFacts, path: str) -> None:
        entries = self._memory.setdefault(base, [])
        entries.insert(0, (refs, answers, facts))
        del entries[KEEP:]
        keys = self._keys.setdefault(path, [])
        if base in keys:
            keys.remove(base)
        keys.insert(0, base)
        for stale in keys[KEEP_KEYS:]:
            self._memory.pop(stale, None)
        del keys[KEEP_KEYS:]

    def _stored(
        self, base: str, path: str, returns_of: ReturnsOf
    ) -> tuple[tuple[str, ...], str, FileFacts] | None:
        cache = self.cache
        if cache is None or getattr(cache, "_key", None) is None:
            return None
        from tclint.rules import sealed

        asked = sealed.read(os.path.join(self._index_dir(), base), cache._key, INDEX_KIND, base)
        if not (isinstance(asked, list) and all(isinstance(r, str) for r in asked)):
            return None
        refs = tuple(asked)
        answers = _answers(refs, returns_of)
        facts = cache.get_facts(_digest(base, answers))
        if facts is None:
            return None
        facts.path = path
        return refs, answers, facts

    def _index_dir(self) -> str:
        return os.path.join(self.cache.directory, "rewalks", self.cache.fingerprint)

    def flush(self) -> None:
        """Write the new results' indexes (the facts go with the cache's own flush)."""
        cache = self.cache
        if cache is None or not self._pending_index:
            return
        from tclint.rules import cachedir, sealed

        key = getattr(cache, "_key", None)
        folder = self._index_dir()
        try:
            if key is None or getattr(cache, "refused", None):
                raise OSError("no cache key")
            cachedir.prepare(cache.directory)  # marked as tclint's before anything is written into it
            os.makedirs(folder, exist_ok=True)
        except (OSError, cachedir.CacheDirError):
            self._pending_index.clear()
            return
        for base, refs in self._pending_index.items():
            try:
                sealed.write(os.path.join(folder, base), key, INDEX_KIND, base, refs)
            except (OSError, ValueError):
                continue
        self._pending_index.clear()
