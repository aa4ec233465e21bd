"""The content-hash cache: per-file facts keyed by the file's bytes.

ruff's cache skips files whose diagnostics it cannot store; tclint's caches the *facts* of every
file (including those with findings), so an unchanged tree re-lints without parsing anything and
an edit re-parses only the edited file: the project pass that decides regions and diagnostics
runs on the cached facts.  Entries are written atomically (temp file + rename), so concurrent runs
and interrupted runs leave a valid cache.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from typing import TYPE_CHECKING, Any

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
    for folder in (here, os.path.join(here, "catalog")):
        _stamp_code(h, folder)
    return h.hexdigest()


class Cache:
    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.fingerprint = _tool_fingerprint()
        self.facts_dir = os.path.join(directory, "facts", self.fingerprint)
        self._pending: dict[str, FileFacts] = {}
        self._pending_runs: dict[str, list[Any]] = {}
        self._pending_outputs: dict[str, tuple[str, int]] = {}
        self._stats: StatTable | None = None
        self._reporters_stamp: str | None = None
        self.hits = 0
        self.misses = 0

    def facts_key(self, digest: str, module: str, is_package: bool, root: str, predicates: Any, path: str = "") -> str:
        h = hashlib.blake2b(digest_size=16)
        h.update(_key_bytes(f"{digest}|{module}|{is_package}|{root}|{sorted(predicates or ())}"))
        return h.hexdigest()

    def _path(self, key: str) -> str:
        return os.path.join(self.facts_dir, key[:2], key + ".pkl")

    def get_facts(self, key: str) -> FileFacts | None:
        from tclint.rules.facts import FileFacts

        facts = _load(self._path(key), key)
        if not isinstance(facts, FileFacts):
            self.misses += 1
            return None
        self.hits += 1
        return facts

    def put_facts(self, key: str, facts: FileFacts) -> None:
        self._pending[key] = facts

    def stat_table(self) -> StatTable:
        """Which files are unchanged since they were last hashed (see ``reading.StatTable``)."""
        if self._stats is None:
            self._stats = StatTable(os.path.join(self.directory, "stats.pkl"))
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
        from tclint.rules.model import Diagnostic

        value = _load(os.path.join(self.directory, "runs", self.fingerprint, key + ".pkl"), key)
        if not isinstance(value, list) or not all(isinstance(d, Diagnostic) for d in value):
            return None
        return value

    def put_run(self, key: str, diagnostics: list[Any]) -> None:
        self._pending_runs[key] = diagnostics

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
        value = _load(os.path.join(self.directory, "outputs", self.fingerprint, key + ".pkl"), key)
        if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], int)):
            return None
        return value

    def put_output(self, key: str, text: str, count: int) -> None:
        self._pending_outputs[key] = (text, count)

    def flush(self) -> None:
        """Write what this run computed: per-file facts and the whole-run result."""
        try:
            os.makedirs(self.directory, exist_ok=True)
            self._ensure_gitignore()
        except OSError:
            self._pending.clear()
            self._pending_runs.clear()
            self._pending_outputs.clear()
            return
        self._flush_facts()
        self._flush_results(self._pending_runs, "runs")
        self._flush_results(self._pending_outputs, "outputs")
        if self._stats is not None:
            self._stats.save()

    def _flush_facts(self) -> None:
        for key, facts in self._pending.items():
            target = self._path(key)
            try:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                _store(target, key, facts)
            except OSError:
                continue
        self._pending.clear()

    def _flush_results(self, pending: dict[str, Any], kind: str, keep: int = 16) -> None:
        if not pending:
            return
        folder = os.path.join(self.directory, kind, self.fingerprint)
        try:
            os.makedirs(folder, exist_ok=True)
            for key, value in pending.items():
                _store(os.path.join(folder, key + ".pkl"), key, value)
            # keep the most recent results only: one per tree state is all a re-run needs
            entries = sorted(
                (e for e in os.scandir(folder) if e.name.endswith(".pkl")), key=lambda e: e.stat().st_mtime, reverse=True
            )
            for stale in entries[keep:]:
                os.unlink(stale.path)
        except OSError:
            pass
        pending.clear()

    def _ensure_gitignore(self) -> None:
        gitignore = os.path.join(self.directory, ".gitignore")
        if not os.path.exists(gitignore):
            with open(gitignore, "w") as fh:
                fh.write("# Automatically created by tclint.\n*\n")


_MAGIC = b"TCLINT-CACHE-1\n"


def _key_bytes(text: str) -> bytes:
    """Text holding paths as bytes to hash: a file name that is not UTF-8 (lone surrogates from
    the file system) hashes as itself instead of failing the run."""
    return text.encode("utf-8", "surrogatepass")


def _store(target: str, key: str, value: Any) -> None:
    """Entry = magic, key, blake2b of the payload, payload; written atomically (temp + rename)."""
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    digest = hashlib.blake2b(payload, digest_size=16).digest()
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(_MAGIC + key.encode() + b"\n" + digest + payload)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _load(path: str, key: str) -> Any:
    """The payload of a cache entry, or None for anything damaged, foreign or unreadable: a bad
    entry is a cache miss, never a crash and never someone else's results."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    header = _MAGIC + key.encode() + b"\n"
    if not data.startswith(header) or len(data) < len(header) + 16:
        return None
    digest = data[len(header) : len(header) + 16]
    payload = data[len(header) + 16 :]
    if hashlib.blake2b(payload, digest_size=16).digest() != digest:
        return None
    try:
        return pickle.loads(payload)
    except Exception:  # noqa: BLE001 - any unpickling failure is a miss
        return None
