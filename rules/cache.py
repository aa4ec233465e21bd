"""The content-hash cache: per-file facts keyed by the file's bytes.

ruff's cache skips files whose diagnostics it cannot store; tclint's caches the *facts* of every
file (including those with findings), so an unchanged tree re-lints without parsing anything and
an edit re-parses only the edited file: the project pass that decides regions and diagnostics
runs on the cached facts.  Entries are written atomically (temp file + rename), so concurrent runs
and interrupted runs leave a valid cache.

Reading the cache runs no code: entries are plain data (``plaindata``) in ``marshal`` form,
authenticated with a per-user key kept outside the project (``sealed``); anything that does not
verify or decode is a miss.  The cache is only used in a folder tclint made (``cachedir``):
``Cache.refused`` says why a configured folder is not used.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tclint.rules import cachedir, sealed
from tclint.rules.reading import StatTable
from tclint.rules.version import FACTS_SCHEMA, __version__

if TYPE_CHECKING:
    from tclint.rules.facts import FileFacts


def _stamp_code(h: Any, folder: str) -> None:
    """Feed the name, size and mtime of every module in ``folder`` to the hash ``h``."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
    except OSError:
        return
    for name in names:
        st = os.stat(os.path.join(folder, name))
        h.update(f"{name}:{st.st_size}:{st.st_mtime_ns}".encode())


def _tool_fingerprint() -> str:
    """Changes whenever tclint's own code changes, so a development edit invalidates the cache."""
    here = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.blake2b(digest_size=8)
    h.update(f"{__version__}|{FACTS_SCHEMA}".encode())
    for folder in (here, os.path.join(here, "catalog"), os.path.join(here, "analysis")):
        _stamp_code(h, folder)
    return h.hexdigest()


def _key_bytes(text: str) -> bytes:
    """Text holding paths as bytes to hash: a file name that is not UTF-8 (lone surrogates from
    the file system) hashes as itself instead of failing the run."""
    return text.encode("utf-8", "surrogatepass")


SUFFIX = ".entry"
STATS = "stats" + SUFFIX
_STATS_KIND = "stats-1"  # the MAC covers the kind: a table of another layout never verifies
_DEPS_KIND = "run-dependencies-1"


class Cache:
    def __init__(self, directory: str) -> None:
        self.directory = directory
        try:
            cachedir.check(directory)
            self.refused: str | None = None
        except cachedir.CacheDirError as exc:
            self.refused = str(exc)  # never read from nor written to
        self._key: bytes | None = None if self.refused else sealed.user_key()
        self.fingerprint = _tool_fingerprint()
        self.facts_dir = os.path.join(directory, "facts", self.fingerprint)
        self._pending: dict[str, FileFacts] = {}
        self._pending_runs: dict[str, list[Any]] = {}
        self._pending_outputs: dict[str, tuple[str, int]] = {}
        self._pending_dependencies: dict[str, Any] = {}
        self._pending_writers: list[Callable[[bytes], None]] = []  # other stores' entries (``put_writer``)
        self._stats: StatTable | None = None
        self._reporters_stamp: str | None = None
        self.hits = 0
        self.misses = 0

    def facts_key(
        self, digest: str, module: str, is_package: bool, root: str, predicates: Any, path: str = ""
    ) -> str:
        h = hashlib.blake2b(digest_size=16)
        h.update(_key_bytes(f"{digest}|{module}|{is_package}|{root}|{sorted(predicates or ())}"))
        return h.hexdigest()

    def _path(self, key: str) -> str:
        return os.path.join(self.facts_dir, key[:2], key + SUFFIX)

    def get_facts(self, key: str) -> FileFacts | None:
        from tclint.rules.plaindata import decode_facts

        pending = self._pending.get(key)
        if pending is not None:  # computed by this run, not written yet (a re-run that fell back)
            self.hits += 1
            return pending
        facts = self._load("facts", key, self._path(key), decode_facts)
        if facts is None:
            self.misses += 1
            return None
        self.hits += 1
        return facts

    def put_facts(self, key: str, facts: FileFacts) -> None:
        self._pending[key] = facts

    def put_writer(self, write: Callable[[bytes], None]) -> None:
        """Have ``write(key)`` called by ``flush`` with this user's key, once the folder is ready
        (entries kept beside the cache, ``rerun``'s); never called when nothing may be written."""
        self._pending_writers.append(write)

    def stat_table(self) -> StatTable:
        """Which files are unchanged since they were last hashed (see ``reading.StatTable``)."""
        if self._stats is None:
            self._stats = StatTable(self._load(_STATS_KIND, STATS, os.path.join(self.directory, STATS), None))
        return self._stats

    # -- whole-run results ------------------------------------------------------------------------
    def run_key(self, files: list[tuple[str, str]], report: list[str], settings: list[str]) -> str:
        h = hashlib.blake2b(digest_size=16)
        h.update(self.fingerprint.encode())
        for path, digest in sorted(files):
            h.update(_key_bytes(f"{path}\0{digest}\n"))
        h.update(_key_bytes("\0".join(report)))
        h.update(_key_bytes("\0".join(settings)))
        return h.hexdigest()

    def get_run(self, key: str) -> list[Any] | None:
        from tclint.rules.plaindata import decode_diagnostics

        return self._load(
            "runs",
            key,
            os.path.join(self.directory, "runs", self.fingerprint, key + SUFFIX),
            decode_diagnostics,
        )

    def put_run(self, key: str, diagnostics: list[Any]) -> None:
        self._pending_runs[key] = diagnostics

    def _dependencies_path(self, key: str) -> str:
        return os.path.join(self.directory, "runs", self.fingerprint, key + ".deps" + SUFFIX)

    def get_run_dependencies(self, key: str) -> Any:
        """What a run following installed packages read outside the project (plain data, see
        ``libfollow.dependencies``), stored beside its result; None for a miss."""
        return self._load(_DEPS_KIND, key, self._dependencies_path(key), None)

    def put_run_dependencies(self, key: str, record: Any) -> None:
        self._pending_dependencies[key] = record

    # -- rendered reports ---------------------------------------------------------------------------
    def output_key(self, run_key: str, fmt: str, unsafe: bool, quiet: bool) -> str:
        """What a printed report depends on besides the run: the format and its options, the
        working folder (paths are printed relative to it) and the reporters' own code."""
        if self._reporters_stamp is None:
            h = hashlib.blake2b(digest_size=8)
            _stamp_code(h, os.path.join(os.path.dirname(os.path.abspath(__file__)), "report"))
            self._reporters_stamp = h.hexdigest()
        h = hashlib.blake2b(digest_size=16)
        h.update(_key_bytes(f"{run_key}|{fmt}|{unsafe}|{quiet}|{os.getcwd()}|{self._reporters_stamp}"))
        return h.hexdigest()

    def get_output(self, key: str) -> tuple[str, int] | None:
        """A report as printed before for the same run and the same way of printing it, with its
        number of findings (keyed by ``output_key``)."""
        value = self._load(
            "outputs", key, os.path.join(self.directory, "outputs", self.fingerprint, key + SUFFIX), None
        )
        if not (type(value) is tuple and len(value) == 2 and type(value[0]) is str and type(value[1]) is int):
            return None
        return value

    def put_output(self, key: str, text: str, count: int) -> None:
        self._pending_outputs[key] = (text, count)

    def _load(self, kind: str, name: str, path: str, decode: Any) -> Any:
        """An entry's value (``decode``d), or None for a miss: no key, no entry, an entry that
        does not verify under this user's key, or one that does not decode."""
        if self._key is None:
            return None
        value = sealed.read(path, self._key, kind, name)
        if value is None or decode is None:
            return value
        try:
            return decode(value)
        except Exception:  # authentic but of another layout: a miss
            return None

    def flush(self) -> None:
        """Write what this run computed: per-file facts, the whole-run result, the stat table.
        Nothing is written into a refused folder or without this user's key."""
        key = None if self.refused else sealed.user_key(create=True)
        try:
            if key is None:
                raise OSError("no cache key")
            cachedir.prepare(self.directory)
        except (OSError, cachedir.CacheDirError):
            self._pending.clear()
            self._pending_runs.clear()
            self._pending_outputs.clear()
            self._pending_dependencies.clear()
            self._pending_writers.clear()
            return
        self._key = key
        self._flush_facts()
        for write in self._pending_writers:
            write(key)
        self._pending_writers.clear()
        for run_key, record in self._pending_dependencies.items():  # before the run: pruned with it
            try:
                os.makedirs(os.path.dirname(self._dependencies_path(run_key)), exist_ok=True)
                sealed.write(self._dependencies_path(run_key), key, _DEPS_KIND, run_key, record)
            except (OSError, ValueError):
                continue
        self._pending_dependencies.clear()
        self._flush_results(self._pending_runs, "runs")
        self._flush_results(self._pending_outputs, "outputs")
        table = self._stats.changed() if self._stats is not None else None
        if table is not None:
            try:
                sealed.write(os.path.join(self.directory, STATS), key, _STATS_KIND, STATS, table)
                self._stats.saved()  # type: ignore[union-attr]
            except (OSError, ValueError):
                pass

    def _flush_facts(self) -> None:
        if not self._pending:
            return  # (before the import: a warm run writes no facts and never needs plaindata)
        from tclint.rules.plaindata import encode_facts

        assert self._key is not None
        for key, facts in self._pending.items():
            target = self._path(key)
            try:
                value = encode_facts(facts)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                sealed.write(target, self._key, "facts", key, value)
            except (OSError, ValueError, TypeError):
                continue  # a full disk, or facts holding a value the cache cannot store: a miss next time
        self._pending.clear()

    def _flush_results(self, pending: dict[str, Any], kind: str, keep: int = 16) -> None:
        if not pending:
            return  # (before the import: a warm run writes no results and never needs plaindata)
        from tclint.rules.plaindata import encode_diagnostics

        assert self._key is not None
        folder = os.path.join(self.directory, kind, self.fingerprint)
        try:
            os.makedirs(folder, exist_ok=True)
            for key, value in pending.items():
                try:
                    plain = encode_diagnostics(value) if kind == "runs" else value
                    sealed.write(os.path.join(folder, key + SUFFIX), self._key, kind, key, plain)
                except (ValueError, TypeError):
                    continue
            # keep the most recent results only: one per tree state is all a re-run needs
            entries = sorted(
                (e for e in os.scandir(folder) if e.name.endswith(SUFFIX)),
                key=lambda e: e.stat().st_mtime,
                reverse=True,
            )
            for stale in entries[keep:]:
                os.unlink(stale.path)
        except OSError:
            pass
        pending.clear()
